#include "expressions/aggregate_function.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/expressions/test_batch.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using namespace ::tessera::testing;  // NOLINT

AggregateFunction Make(AggregateFunctionKind kind, const Type& type) {
  absl::StatusOr<AggregateFunction> function = AggregateFunction::Create(kind, type);
  EXPECT_TRUE(function.ok()) << function.status();
  return *function;
}

// A state buffer placed at an address that is 8- but not 16-byte aligned, as a hash table row may place it.
class StateBuffer {
 public:
  explicit StateBuffer(const AggregateFunction& function, int states = 1) : function_(function) {
    stride_ = (function.state_size() + 7) / 8 * 8;
    bytes_.resize(stride_ * states + 24);
    base_ = bytes_.data() + (16 - reinterpret_cast<uintptr_t>(bytes_.data()) % 16) % 16 + 8;
    for (int i = 0; i < states; ++i) function.Initialize(state(i));
  }
  uint8_t* state(int i = 0) { return base_ + stride_ * i; }
  std::string Result(int i = 0) {
    absl::StatusOr<Value> value = function_.Finalize(state(i));
    return value.ok() ? value->ToString() : "error: " + std::string(value.status().message());
  }

 private:
  const AggregateFunction& function_;
  size_t stride_;
  std::vector<uint8_t> bytes_;
  uint8_t* base_;
};

// The scalar result of `kind` over `values`.
std::string Scalar(AggregateFunctionKind kind, const Type& type, const std::vector<Value>& values,
                   const SelectionVector* selection = nullptr) {
  AggregateFunction function = Make(kind, type);
  StateBuffer states(function);
  StringArena arena;
  ColumnVector input = MakeVector(type, values);
  absl::Status status = function.UpdateScalar(states.state(), input, selection, &arena);
  if (!status.ok()) return "error: " + std::string(status.message());
  return states.Result();
}

TEST(AggregateFunctionTest, ResultTypes) {
  EXPECT_EQ(Make(AggregateFunctionKind::kCountStar, Type::Null()).result_type(), Type::BigInt());
  EXPECT_EQ(Make(AggregateFunctionKind::kCount, Type::Varchar()).result_type(), Type::BigInt());
  EXPECT_EQ(Make(AggregateFunctionKind::kSum, Type::Integer()).result_type(), Type::BigInt());
  EXPECT_EQ(Make(AggregateFunctionKind::kSum, Type::BigInt()).result_type(), Type::Decimal(38, 0));
  EXPECT_EQ(Make(AggregateFunctionKind::kSum, Type::Decimal(15, 2)).result_type(), Type::Decimal(38, 2));
  EXPECT_EQ(Make(AggregateFunctionKind::kSum, Type::Double()).result_type(), Type::Double());
  EXPECT_EQ(Make(AggregateFunctionKind::kAvg, Type::Integer()).result_type(), Type::Double());
  EXPECT_EQ(Make(AggregateFunctionKind::kAvg, Type::Decimal(15, 2)).result_type(), Type::Decimal(38, 6));
  EXPECT_EQ(Make(AggregateFunctionKind::kAvg, Type::Decimal(20, 8)).result_type(), Type::Decimal(38, 8));
  EXPECT_EQ(Make(AggregateFunctionKind::kMin, Type::Date()).result_type(), Type::Date());
  EXPECT_EQ(Make(AggregateFunctionKind::kMax, Type::Varchar(25)).result_type(), Type::Varchar(25));
  EXPECT_EQ(Make(AggregateFunctionKind::kSum, Type::Decimal(15, 2)).ToString(), "SUM(DECIMAL(15,2))");
  EXPECT_EQ(Make(AggregateFunctionKind::kCountStar, Type::Null()).ToString(), "COUNT(*)");
  for (AggregateFunctionKind kind :
       {AggregateFunctionKind::kCountStar, AggregateFunctionKind::kCount, AggregateFunctionKind::kSum,
        AggregateFunctionKind::kAvg, AggregateFunctionKind::kMin, AggregateFunctionKind::kMax}) {
    for (Type type : {Type::Integer(), Type::Decimal(30, 2), Type::Double()}) {
      AggregateFunction function = Make(kind, type);
      EXPECT_LE(function.state_alignment(), 8u) << function.ToString();
      EXPECT_GE(function.state_size(), 8u);
    }
  }
  EXPECT_THAT(
      std::string(AggregateFunction::Create(AggregateFunctionKind::kSum, Type::Varchar()).status().message()),
      HasSubstr("SUM is not defined for VARCHAR"));
  EXPECT_FALSE(AggregateFunction::Create(AggregateFunctionKind::kAvg, Type::Date()).ok());
  EXPECT_FALSE(AggregateFunction::Create(AggregateFunctionKind::kMin, Type::IntervalType()).ok());
  EXPECT_TRUE(Make(AggregateFunctionKind::kMax, Type::Varchar()).needs_arena());
  EXPECT_FALSE(Make(AggregateFunctionKind::kSum, Type::Integer()).needs_arena());
}

TEST(AggregateFunctionTest, ScalarAggregatesSkipNulls) {
  const std::vector<Value> ints = {Int(3), Null(Type::Integer()), Int(-7), Int(10)};
  EXPECT_EQ(Scalar(AggregateFunctionKind::kCountStar, Type::Integer(), ints), "4");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kCount, Type::Integer(), ints), "3");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kSum, Type::Integer(), ints), "6");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kAvg, Type::Integer(), ints), "2");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMin, Type::Integer(), ints), "-7");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMax, Type::Integer(), ints), "10");
  // All NULL or empty: COUNT is 0, the others NULL.
  const std::vector<Value> nulls = {Null(Type::Integer()), Null(Type::Integer())};
  EXPECT_EQ(Scalar(AggregateFunctionKind::kCount, Type::Integer(), nulls), "0");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kSum, Type::Integer(), nulls), "NULL");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kAvg, Type::Integer(), {}), "NULL");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMax, Type::Integer(), nulls), "NULL");
  // With a selection: rows 1 and 2.
  SelectionVector selection = Selection({1, 2});
  EXPECT_EQ(Scalar(AggregateFunctionKind::kCountStar, Type::Integer(), ints, &selection), "2");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kSum, Type::Integer(), ints, &selection), "-7");
}

TEST(AggregateFunctionTest, ExactSumsAndAverages) {
  const std::vector<Value> bigints = {Big(std::numeric_limits<int64_t>::max()),
                                      Big(std::numeric_limits<int64_t>::max()), Big(1)};
  EXPECT_EQ(Scalar(AggregateFunctionKind::kSum, Type::BigInt(), bigints),
            "18446744073709551615");  // beyond BIGINT
  EXPECT_EQ(Scalar(AggregateFunctionKind::kAvg, Type::BigInt(), {Big(1), Big(2)}), "1.5");
  const Type money = Type::Decimal(15, 2);
  const std::vector<Value> prices = {Dec("0.10", 15, 2), Dec("0.20", 15, 2), Dec("0.04", 15, 2), Null(money)};
  EXPECT_EQ(Scalar(AggregateFunctionKind::kSum, money, prices), "0.34");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kAvg, money, prices), "0.113333");  // 0.34 / 3, exact to 6 digits
  EXPECT_EQ(
      Scalar(AggregateFunctionKind::kAvg, money, {Dec("-0.02", 15, 2), Dec("-0.01", 15, 2), Dec("0", 15, 2)}),
      "-0.010000");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kAvg, money, {Dec("2", 15, 2), Dec("1", 15, 2), Dec("0", 15, 2)}),
            "1.000000");
  EXPECT_EQ(
      Scalar(AggregateFunctionKind::kAvg, money, {Dec("0.02", 15, 2), Dec("0", 15, 2), Dec("0", 15, 2)}),
      "0.006667");
  const Type wide = Type::Decimal(38, 4);
  EXPECT_EQ(Scalar(AggregateFunctionKind::kSum, wide,
                   {Dec("1234567890123456789012345678.1234", 38, 4), Dec("-0.1234", 38, 4)}),
            "1234567890123456789012345678.0000");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kSum, Type::Decimal(38, 0),
                   {Dec("90000000000000000000000000000000000000", 38, 0),
                    Dec("90000000000000000000000000000000000000", 38, 0)}),
            "error: DECIMAL overflow");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kSum, Type::Double(), {Dbl(0.5), Dbl(0.25), Null(Type::Double())}),
            "0.75");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kAvg, Type::Double(), {Dbl(0.5), Dbl(0.25)}), "0.375");
}

TEST(AggregateFunctionTest, SumOverflowIsReportedAtFinalize) {
  // SUM(INTEGER) is BIGINT: double a state by merging it with itself until it leaves BIGINT.
  AggregateFunction sum_int = Make(AggregateFunctionKind::kSum, Type::Integer());
  StateBuffer states(sum_int, 2);
  ColumnVector input = MakeVector(Type::Integer(), {Int(std::numeric_limits<int32_t>::max())});
  ASSERT_TRUE(sum_int.UpdateScalar(states.state(0), input, nullptr).ok());
  for (int i = 0; i < 33; ++i) {
    std::memcpy(states.state(1), states.state(0), sum_int.state_size());
    ASSERT_TRUE(sum_int.Merge(states.state(0), states.state(1)).ok());
  }
  EXPECT_EQ(states.Result(0), "error: BIGINT out of range");
  // SUM(DECIMAL) beyond 38 digits fails at Finalize; beyond 128 bits already at Merge.
  AggregateFunction sum_decimal = Make(AggregateFunctionKind::kSum, Type::Decimal(38, 0));
  StateBuffer decimal_states(sum_decimal, 2);
  ColumnVector big = MakeVector(Type::Decimal(38, 0), {Dec("9000000000000000000000000000000000000", 38, 0)});
  ASSERT_TRUE(sum_decimal.UpdateScalar(decimal_states.state(0), big, nullptr).ok());
  auto double_state = [&] {
    std::memcpy(decimal_states.state(1), decimal_states.state(0), sum_decimal.state_size());
    return sum_decimal.Merge(decimal_states.state(0), decimal_states.state(1));
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(double_state().ok());
  EXPECT_EQ(decimal_states.Result(0), "72000000000000000000000000000000000000");
  ASSERT_TRUE(double_state().ok());
  EXPECT_EQ(decimal_states.Result(0), "error: DECIMAL overflow");
  EXPECT_EQ(Message(double_state()), "DECIMAL overflow");
}

TEST(AggregateFunctionTest, MinMaxOfEveryType) {
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMin, Type::Date(), {DateOf("1998-12-01"), DateOf("1992-01-02")}),
            "1992-01-02");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMax, Type::Decimal(15, 2), {Dec("1.5", 15, 2), Dec("-2", 15, 2)}),
            "1.50");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMin, Type::Decimal(30, 1),
                   {Dec("1.5", 30, 1), Dec("-99999999999999999999.5", 30, 1)}),
            "-99999999999999999999.5");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMax, Type::Double(), {Dbl(1), Dbl(std::nan("")), Dbl(2)}), "nan");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMin, Type::Double(), {Dbl(std::nan("")), Dbl(2), Dbl(-1)}), "-1");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMax, Type::Boolean(), {Bool(false), Bool(true)}), "true");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMax, Type::Timestamp(),
                   {*Str("2020-01-01 10:00").CastTo(Type::Timestamp())}),
            "2020-01-01 10:00:00");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMin, Type::Varchar(),
                   {Str("pear"), Null(Type::Varchar()), Str("apple"), Str("b")}),
            "apple");
  EXPECT_EQ(Scalar(AggregateFunctionKind::kMax, Type::Varchar(),
                   {Str("pear"), Str("a much longer string than fifteen bytes")}),
            "pear");
}

// Hash-aggregation style: each row points at its group's state; three aggregates share one row layout.
TEST(AggregateFunctionTest, GroupedUpdatesAndFinalizeBatch) {
  const Type money = Type::Decimal(15, 2);
  AggregateFunction count = Make(AggregateFunctionKind::kCountStar, Type::Null());
  AggregateFunction sum = Make(AggregateFunctionKind::kSum, money);
  AggregateFunction max_name = Make(AggregateFunctionKind::kMax, Type::Varchar());
  const size_t sum_offset = 8;
  const size_t name_offset = sum_offset + (sum.state_size() + 7) / 8 * 8;
  const size_t row_size = name_offset + max_name.state_size();
  std::vector<uint64_t> storage((row_size * 3 + 7) / 8);
  uint8_t* groups[3];
  for (int g = 0; g < 3; ++g) {
    groups[g] = reinterpret_cast<uint8_t*>(storage.data()) + row_size * g;
    count.Initialize(groups[g]);
    sum.Initialize(groups[g] + sum_offset);
    max_name.Initialize(groups[g] + name_offset);
  }
  StringArena arena;
  // Two batches; group of row i is i % 3 except row 4, which belongs to group 0.
  for (int batch_number = 0; batch_number < 2; ++batch_number) {
    std::vector<Value> prices, names;
    std::vector<uint8_t*> states;
    for (int i = 0; i < 6; ++i) {
      prices.push_back(i == 5 ? Null(money) : Dec(std::to_string(i + 10 * batch_number) + ".25", 15, 2));
      names.push_back(Str(std::string(10 + i * 3 + batch_number, static_cast<char>('a' + i))));
      states.push_back(groups[i == 4 ? 0 : i % 3]);
    }
    ColumnVector price_vector = MakeVector(money, prices);
    ColumnVector name_vector = MakeVector(Type::Varchar(), names);
    SelectionVector all = Selection({0, 1, 2, 3, 4, 5});
    ASSERT_TRUE(count.UpdateGrouped(states.data(), 0, price_vector, &all).ok());
    ASSERT_TRUE(sum.UpdateGrouped(states.data(), sum_offset, price_vector, nullptr).ok());
    ASSERT_TRUE(max_name.UpdateGrouped(states.data(), name_offset, name_vector, nullptr, &arena).ok());
  }
  // Group 0: rows 0, 3, 4; group 1: row 1; group 2: rows 2, 5 (price NULL).
  const uint8_t* const finals[3] = {groups[0], groups[1], groups[2]};
  ColumnVector out;
  ASSERT_TRUE(count.FinalizeBatch(finals, 0, 3, &out).ok());
  EXPECT_EQ(Texts(out, 3, nullptr), (std::vector<std::string>{"6", "2", "4"}));
  ASSERT_TRUE(sum.FinalizeBatch(finals, sum_offset, 3, &out).ok());
  // Group 0: (0 + 3 + 4) + (10 + 13 + 14) + 6 * 0.25 = 45.50; group 1: 1 + 11 + 0.5; group 2: 2 + 12 + 0.5.
  EXPECT_EQ(Texts(out, 3, nullptr), (std::vector<std::string>{"45.50", "12.50", "14.50"}));
  EXPECT_EQ(out.type(), Type::Decimal(38, 2));
  ASSERT_TRUE(max_name.FinalizeBatch(finals, name_offset, 3, &out).ok());
  EXPECT_EQ(Texts(out, 3, nullptr),
            (std::vector<std::string>{std::string(23, 'e'), std::string(14, 'b'), std::string(26, 'f')}));
}

TEST(AggregateFunctionTest, MergeCombinesPartialStates) {
  std::vector<Value> names;
  for (int i = 0; i < 100; ++i)
    names.push_back(i % 9 == 0 ? Null(Type::Varchar())
                               : Str("name-" + std::to_string(i * 37 % 101) + "-with-a-long-tail"));
  std::vector<Value> prices;
  for (int i = 0; i < 100; ++i)
    prices.push_back(i % 11 == 0 ? Null(Type::Decimal(12, 3)) : Dec(std::to_string(i) + ".125", 12, 3));
  struct Case {
    AggregateFunctionKind kind;
    Type type;
    const std::vector<Value>* values;
  };
  const std::vector<Case> cases = {{AggregateFunctionKind::kCountStar, Type::Decimal(12, 3), &prices},
                                   {AggregateFunctionKind::kCount, Type::Varchar(), &names},
                                   {AggregateFunctionKind::kSum, Type::Decimal(12, 3), &prices},
                                   {AggregateFunctionKind::kAvg, Type::Decimal(12, 3), &prices},
                                   {AggregateFunctionKind::kMin, Type::Varchar(), &names},
                                   {AggregateFunctionKind::kMax, Type::Varchar(), &names},
                                   {AggregateFunctionKind::kMax, Type::Decimal(12, 3), &prices}};
  for (const Case& c : cases) {
    AggregateFunction function = Make(c.kind, c.type);
    ColumnVector input = MakeVector(c.type, *c.values);
    // One state over everything vs. two partial states (even rows, odd rows), each with its own arena,
    // merged.
    StateBuffer whole(function), parts(function, 3);
    StringArena whole_arena, arena0, arena1, merged_arena;
    std::vector<uint32_t> even, odd;
    for (uint32_t i = 0; i < c.values->size(); ++i) (i % 2 == 0 ? even : odd).push_back(i);
    SelectionVector even_rows = Selection(even), odd_rows = Selection(odd);
    ASSERT_TRUE(function.UpdateScalar(whole.state(), input, nullptr, &whole_arena).ok());
    ASSERT_TRUE(function.UpdateScalar(parts.state(0), input, &even_rows, &arena0).ok());
    ASSERT_TRUE(function.UpdateScalar(parts.state(1), input, &odd_rows, &arena1).ok());
    ASSERT_TRUE(function.Merge(parts.state(2), parts.state(0), &merged_arena).ok());  // into an empty state
    ASSERT_TRUE(function.Merge(parts.state(2), parts.state(1), &merged_arena).ok());
    arena0.Reset();  // the merged state owns its bytes
    arena1.Reset();
    EXPECT_EQ(parts.Result(2), whole.Result()) << function.ToString();
  }
}

// TPC-H Q1's sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) over a few rows, exactly.
TEST(AggregateFunctionTest, TpchQ1SumOfChargeIsExact) {
  const Type money = Type::Decimal(15, 2);
  Batch batch = MakeBatch({{money, {Dec("17954.55", 15, 2), Dec("34850.16", 15, 2), Dec("7311.12", 15, 2)}},
                           {money, {Dec("0.04", 15, 2), Dec("0.09", 15, 2), Dec("0.10", 15, 2)}},
                           {money, {Dec("0.02", 15, 2), Dec("0.06", 15, 2), Dec("0.02", 15, 2)}}});
  auto charge =
      Arith(ArithmeticOp::kMultiply,
            Arith(ArithmeticOp::kMultiply, Col(0, money),
                  Arith(ArithmeticOp::kSubtract, Lit(Dec("1", 15, 2)), Col(1, money), Type::Decimal(16, 2)),
                  Type::Decimal(32, 4)),
            Arith(ArithmeticOp::kAdd, Lit(Dec("1", 15, 2)), Col(2, money), Type::Decimal(16, 2)),
            Type::Decimal(38, 6));
  ExpressionEvaluator evaluator(*charge);
  absl::StatusOr<const ColumnVector*> values = evaluator.Evaluate(batch, nullptr);
  ASSERT_TRUE(values.ok()) << values.status();
  AggregateFunction sum = Make(AggregateFunctionKind::kSum, Type::Decimal(38, 6));
  AggregateFunction avg = Make(AggregateFunctionKind::kAvg, Type::Decimal(38, 6));
  StateBuffer sum_state(sum), avg_state(avg);
  ASSERT_TRUE(sum.UpdateScalar(sum_state.state(), **values, nullptr).ok());
  ASSERT_TRUE(avg.UpdateScalar(avg_state.state(), **values, nullptr).ok());
  EXPECT_EQ(sum_state.Result(), "57909.167856");  // 17581.095360 + 33616.464336 + 6711.608160
  EXPECT_EQ(avg_state.Result(), "19303.055952");
}

}  // namespace
}  // namespace tessera
