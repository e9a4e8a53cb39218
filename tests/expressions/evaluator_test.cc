#include <string>
#include <vector>

#include "expressions/expression_evaluator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/expressions/test_batch.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::tessera::testing;  // NOLINT

using V = std::vector<std::string>;
using Rows = std::vector<uint32_t>;

Batch NumbersBatch() {
  // #0 INTEGER, #1 BIGINT, #2 VARCHAR, #3 DOUBLE, #4 BOOLEAN
  return MakeBatch({{Type::Integer(), {Int(1), Int(2), Null(Type::Integer()), Int(4), Int(5)}},
                    {Type::BigInt(), {Big(10), Big(-20), Big(30), Null(Type::BigInt()), Big(50)}},
                    {Type::Varchar(), {Str("apple"), Str("banana"), Null(Type::Varchar()), Str("cherry"), Str("")}},
                    {Type::Double(), {Dbl(1.5), Dbl(-2.5), Dbl(0), Dbl(4.25), Null(Type::Double())}},
                    {Type::Boolean(), {Bool(true), Bool(false), Null(Type::Boolean()), Bool(true), Bool(false)}}});
}

TEST(EvaluatorTest, ColumnReferenceIsZeroCopy) {
  Batch batch = NumbersBatch();
  auto expr = Col(1, Type::BigInt());
  ExpressionEvaluator evaluator(*expr);
  ASSERT_TRUE(evaluator.status().ok());
  absl::StatusOr<const ColumnVector*> result = evaluator.Evaluate(batch, nullptr);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, &batch.columns[1]);
}

TEST(EvaluatorTest, ConstantsFillEveryRow) {
  Batch batch = NumbersBatch();
  EXPECT_EQ(Eval(*Lit(Int(7)), batch), V(5, "7"));
  EXPECT_EQ(Eval(*Lit(Str("x")), batch), V(5, "x"));
  EXPECT_EQ(Eval(*Lit(Null(Type::Integer())), batch), V(5, "NULL"));
  EXPECT_EQ(Eval(*Lit(Value()), batch), V(5, "NULL"));  // untyped NULL
}

TEST(EvaluatorTest, ResultSizeIsTheBatchSize) {
  Batch batch = NumbersBatch();
  std::vector<std::unique_ptr<BoundExpression>> exprs;
  exprs.push_back(Lit(Int(7)));
  exprs.push_back(Col(0, Type::Integer()));
  exprs.push_back(Arith(ArithmeticOp::kAdd, Col(0, Type::Integer()), Lit(Int(1)), Type::Integer()));
  for (const auto& expr : exprs) {
    ExpressionEvaluator evaluator(*expr);
    absl::StatusOr<const ColumnVector*> result = evaluator.Evaluate(batch, nullptr);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ((*result)->size(), batch.size) << expr->ToString();
  }
}

TEST(EvaluatorTest, MissingColumnIsAnError) {
  Batch batch = NumbersBatch();
  absl::Status status = EvalStatus(*Col(9, Type::Integer()), batch);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(status), HasSubstr("#9"));
}

TEST(EvaluatorTest, ComparisonsPropagateNulls) {
  Batch batch = NumbersBatch();
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kLess, Col(0, Type::Integer()), Lit(Int(4))), batch),
            (V{"true", "true", "NULL", "false", "false"}));
  // Constant on the left is flipped: 4 <= x.
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kLessEqual, Lit(Int(4)), Col(0, Type::Integer())), batch),
            (V{"false", "false", "NULL", "true", "true"}));
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kNotEqual, Col(2, Type::Varchar()), Lit(Str("banana"))), batch),
            (V{"true", "false", "NULL", "true", "true"}));
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kGreater, Col(3, Type::Double()), Lit(Dbl(0))), batch),
            (V{"true", "false", "false", "true", "NULL"}));
  // Comparison with a NULL constant is NULL everywhere.
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kEqual, Col(0, Type::Integer()), Lit(Null(Type::Integer()))), batch), V(5, "NULL"));
}

TEST(EvaluatorTest, ComparisonOfTwoColumnsWithImplicitCommonType) {
  Batch batch = NumbersBatch();
  // INTEGER vs BIGINT: both compared as BIGINT.
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kLess, Col(0, Type::Integer()), Col(1, Type::BigInt())), batch),
            (V{"true", "false", "NULL", "NULL", "true"}));
  // BIGINT vs DOUBLE.
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kGreaterEqual, Col(1, Type::BigInt()), Col(3, Type::Double())), batch),
            (V{"true", "false", "true", "NULL", "NULL"}));
}

TEST(EvaluatorTest, ComparisonsOfEveryType) {
  Batch batch = MakeBatch({
      {Type::Decimal(15, 2), {Dec("1.10", 15, 2), Dec("-3.00", 15, 2), Dec("2.50", 15, 2)}},
      {Type::Decimal(30, 4), {Dec("1.1000", 30, 4), Dec("99999999999999999999.0001", 30, 4), Dec("-2.5", 30, 4)}},
      {Type::Date(), {DateOf("1998-12-01"), DateOf("1998-09-02"), DateOf("2000-02-29")}},
      {Type::Timestamp(),
       {*Str("1998-12-01 00:00:00").CastTo(Type::Timestamp()), *Str("1998-09-01 23:59:59").CastTo(Type::Timestamp()),
        Null(Type::Timestamp())}},
      {Type::Char(2), {Str("ab"), Str("b"), Str("a")}},
      {Type::IntervalType(), {IntervalOf("1 month"), IntervalOf("30 days"), IntervalOf("31 days")}},
  });
  // DECIMAL(15,2) vs DECIMAL(30,4): compared at scale 4.
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kEqual, Col(0, Type::Decimal(15, 2)), Col(1, Type::Decimal(30, 4))), batch),
            (V{"true", "false", "false"}));
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kGreater, Col(1, Type::Decimal(30, 4)), Lit(Dec("1.2", 30, 4))), batch),
            (V{"false", "true", "false"}));
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kLessEqual, Col(2, Type::Date()), Lit(DateOf("1998-09-02"))), batch),
            (V{"false", "true", "false"}));
  // DATE vs TIMESTAMP compares instants.
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kEqual, Col(2, Type::Date()), Col(3, Type::Timestamp())), batch),
            (V{"true", "false", "NULL"}));
  // Strings compare bytewise.
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kLess, Col(4, Type::Char(2)), Lit(Str("b"))), batch), (V{"true", "false", "true"}));
  // Intervals order as Value::Compare does: 1 month sorts with 30 days, ties broken by the month field (so
  // the order is total and agrees with hashing of the fields).
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kEqual, Col(5, Type::IntervalType()), Lit(IntervalOf("30 days"))), batch),
            (V{"false", "true", "false"}));
  EXPECT_EQ(Eval(*Cmp(ComparisonOp::kLess, Col(5, Type::IntervalType()), Lit(IntervalOf("31 days"))), batch),
            (V{"true", "true", "false"}));
}

TEST(EvaluatorTest, FilterKeepsOnlyTrueRows) {
  Batch batch = NumbersBatch();
  auto predicate = Cmp(ComparisonOp::kGreater, Col(0, Type::Integer()), Lit(Int(1)));
  EXPECT_EQ(FilterRows(*predicate, batch), (Rows{1, 3, 4}));  // row 2 is NULL
  SelectionVector in = Selection({0, 2, 3});
  EXPECT_EQ(FilterRows(*predicate, batch, &in), (Rows{3}));
  // In place: out == in.
  ExpressionEvaluator evaluator(*predicate);
  SelectionVector selection = Selection({1, 2, 4});
  ASSERT_TRUE(evaluator.Filter(batch, &selection, &selection).ok());
  EXPECT_EQ(Rows(selection.rows.begin(), selection.rows.begin() + selection.count), (Rows{1, 4}));
  // A boolean column as the predicate.
  EXPECT_EQ(FilterRows(*Col(4, Type::Boolean()), batch), (Rows{0, 3}));
  // Constants.
  EXPECT_EQ(FilterRows(*Lit(Bool(true)), batch), (Rows{0, 1, 2, 3, 4}));
  EXPECT_EQ(FilterRows(*Lit(Null(Type::Boolean())), batch), Rows{});
}

TEST(EvaluatorTest, EvaluateRespectsTheSelection) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(10), Int(0), Int(5), Int(0)}}});
  // 100 / x errors on rows 1 and 3, which are not selected.
  auto expr = Arith(ArithmeticOp::kDivide, Lit(Int(100)), Col(0, Type::Integer()), Type::Integer());
  SelectionVector selection = Selection({0, 2});
  EXPECT_EQ(Eval(*expr, batch, &selection), (V{"10", "20"}));
  EXPECT_THAT(Message(EvalStatus(*expr, batch)), HasSubstr("division by zero"));
}

// Three-valued logic: every combination of TRUE, FALSE, NULL.
TEST(EvaluatorTest, AndOrNotFollowThreeValuedLogic) {
  std::vector<Value> a, b;
  const Value values[] = {Bool(true), Bool(false), Null(Type::Boolean())};
  for (const Value& x : values) {
    for (const Value& y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  Batch batch = MakeBatch({{Type::Boolean(), a}, {Type::Boolean(), b}});
  auto a_col = [] { return Col(0, Type::Boolean()); };
  auto b_col = [] { return Col(1, Type::Boolean()); };
  auto and_expr = Conj(ExpressionKind::kAnd, a_col(), b_col());
  auto or_expr = Conj(ExpressionKind::kOr, a_col(), b_col());
  //         a:  T       T        T       F        F        F        N       N        N
  //         b:  T       F        N       T        F        N        T       F        N
  EXPECT_EQ(Eval(*and_expr, batch), (V{"true", "false", "NULL", "false", "false", "false", "NULL", "false", "NULL"}));
  EXPECT_EQ(Eval(*or_expr, batch), (V{"true", "true", "true", "true", "false", "NULL", "true", "NULL", "NULL"}));
  EXPECT_EQ(Eval(*MakeNot(a_col()), batch),
            (V{"false", "false", "false", "true", "true", "true", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(FilterRows(*and_expr, batch), (Rows{0}));
  EXPECT_EQ(FilterRows(*or_expr, batch), (Rows{0, 1, 2, 3, 6}));
  EXPECT_EQ(FilterRows(*MakeNot(a_col()), batch), (Rows{3, 4, 5}));
  // NOT (a AND b) and NOT (a OR b) through the generic paths.
  EXPECT_EQ(FilterRows(*MakeNot(and_expr->Clone()), batch), (Rows{1, 3, 4, 5, 7}));
  EXPECT_EQ(FilterRows(*MakeNot(or_expr->Clone()), batch), (Rows{4}));
  // With a selection: only rows 2, 5, 8 (b NULL).
  SelectionVector selection = Selection({2, 5, 8});
  EXPECT_EQ(Eval(*and_expr, batch, &selection), (V{"NULL", "false", "NULL"}));
  EXPECT_EQ(Eval(*or_expr, batch, &selection), (V{"true", "NULL", "NULL"}));
}

TEST(EvaluatorTest, ThreeTermConjunctionsAndNesting) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(1), Int(2), Int(3), Int(4), Int(5), Int(6), Null(Type::Integer())}}});
  auto x = [] { return Col(0, Type::Integer()); };
  // (x > 1 AND x < 6 AND x <> 3) OR x = 6
  auto expr = Conj(ExpressionKind::kOr,
                   Conj(ExpressionKind::kAnd, Cmp(ComparisonOp::kGreater, x(), Lit(Int(1))),
                        Cmp(ComparisonOp::kLess, x(), Lit(Int(6))), Cmp(ComparisonOp::kNotEqual, x(), Lit(Int(3)))),
                   Cmp(ComparisonOp::kEqual, x(), Lit(Int(6))));
  EXPECT_EQ(FilterRows(*expr, batch), (Rows{1, 3, 4, 5}));
  EXPECT_EQ(Eval(*expr, batch), (V{"false", "true", "false", "true", "true", "true", "NULL"}));
}

TEST(EvaluatorTest, AndShortCircuitsAvoidErrors) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(0), Int(5), Int(20), Null(Type::Integer())}}});
  auto x = [] { return Col(0, Type::Integer()); };
  // x <> 0 AND 10 / x > 1
  auto expr =
      Conj(ExpressionKind::kAnd, Cmp(ComparisonOp::kNotEqual, x(), Lit(Int(0))),
           Cmp(ComparisonOp::kGreater, Arith(ArithmeticOp::kDivide, Lit(Int(10)), x(), Type::Integer()), Lit(Int(1))));
  EXPECT_EQ(FilterRows(*expr, batch), (Rows{1}));
  EXPECT_EQ(Eval(*expr, batch), (V{"false", "true", "false", "NULL"}));
  // x = 0 OR 10 / x > 1
  auto or_expr =
      Conj(ExpressionKind::kOr, Cmp(ComparisonOp::kEqual, x(), Lit(Int(0))),
           Cmp(ComparisonOp::kGreater, Arith(ArithmeticOp::kDivide, Lit(Int(10)), x(), Type::Integer()), Lit(Int(1))));
  EXPECT_EQ(FilterRows(*or_expr, batch), (Rows{0, 1}));
  EXPECT_EQ(Eval(*or_expr, batch), (V{"true", "true", "false", "NULL"}));
}

TEST(EvaluatorTest, IsNull) {
  Batch batch = NumbersBatch();
  EXPECT_EQ(Eval(*MakeIsNull(Col(0, Type::Integer())), batch), (V{"false", "false", "true", "false", "false"}));
  EXPECT_EQ(Eval(*MakeIsNull(Col(2, Type::Varchar()), true), batch), (V{"true", "true", "false", "true", "true"}));
  EXPECT_EQ(FilterRows(*MakeIsNull(Col(1, Type::BigInt())), batch), (Rows{3}));
  EXPECT_EQ(FilterRows(*MakeIsNull(Col(1, Type::BigInt()), true), batch), (Rows{0, 1, 2, 4}));
  EXPECT_EQ(Eval(*MakeIsNull(Lit(Value())), batch), V(5, "true"));
}

TEST(EvaluatorTest, LikeFastPathsAndGeneralPatterns) {
  Batch batch = MakeBatch({{Type::Varchar(),
                            {Str("PROMO BRUSHED TIN"), Str("STANDARD POLISHED"), Str("special packages requests"),
                             Str("green"), Null(Type::Varchar()), Str(""), Str("héllo"), Str("forest green")}}});
  auto like = [](const std::string& pattern, bool negated = false) {
    return MakeLike(Col(0, Type::Varchar()), Str(pattern), negated);
  };
  EXPECT_EQ(FilterRows(*like("PROMO%"), batch), (Rows{0}));               // prefix
  EXPECT_EQ(FilterRows(*like("%green"), batch), (Rows{3, 7}));            // suffix
  EXPECT_EQ(FilterRows(*like("%POLISH%"), batch), (Rows{1}));             // contains
  EXPECT_EQ(FilterRows(*like("green"), batch), (Rows{3}));                // exact
  EXPECT_EQ(FilterRows(*like("%special%requests%"), batch), (Rows{2}));   // segments
  EXPECT_EQ(FilterRows(*like("s%packages%s"), batch), (Rows{2}));         // anchored segments
  EXPECT_EQ(FilterRows(*like("%"), batch), (Rows{0, 1, 2, 3, 5, 6, 7}));  // anything but NULL
  EXPECT_EQ(FilterRows(*like(""), batch), (Rows{5}));
  EXPECT_EQ(FilterRows(*like("gr__n"), batch), (Rows{3}));  // general
  EXPECT_EQ(FilterRows(*like("h_llo"), batch), (Rows{6}));  // '_' is one UTF-8 character
  EXPECT_EQ(FilterRows(*like("%e_n"), batch), (Rows{3, 7}));
  EXPECT_EQ(FilterRows(*like("_%_"), batch), (Rows{0, 1, 2, 3, 6, 7}));
  EXPECT_EQ(FilterRows(*like("%a%a%a%"), batch), (Rows{2}));
  EXPECT_EQ(FilterRows(*like("%aa%"), batch), Rows{});
  EXPECT_EQ(FilterRows(*like("PROMO%", true), batch), (Rows{1, 2, 3, 5, 6, 7}));  // NOT LIKE skips NULL
  EXPECT_EQ(Eval(*like("%e%"), batch), (V{"false", "false", "true", "true", "NULL", "false", "false", "true"}));
  EXPECT_EQ(Eval(*like("%e%", true), batch), (V{"true", "true", "false", "false", "NULL", "true", "true", "false"}));
  // A NULL pattern gives NULL.
  EXPECT_EQ(Eval(*MakeLike(Col(0, Type::Varchar()), Null(Type::Varchar())), batch), V(8, "NULL"));
}

TEST(EvaluatorTest, InListsFollowSqlNullRules) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(1), Int(2), Int(3), Null(Type::Integer())}},
                           {Type::Varchar(), {Str("MAIL"), Str("SHIP"), Str("AIR"), Str("RAIL")}}});
  auto x = [] { return Col(0, Type::Integer()); };
  EXPECT_EQ(Eval(*MakeInList(x(), {Int(1), Int(3)}), batch), (V{"true", "false", "true", "NULL"}));
  EXPECT_EQ(Eval(*MakeInList(x(), {Int(1), Int(3)}, true), batch), (V{"false", "true", "false", "NULL"}));
  EXPECT_EQ(Eval(*MakeInList(x(), {Int(1), Null(Type::Integer())}), batch), (V{"true", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(Eval(*MakeInList(x(), {Int(1), Null(Type::Integer())}, true), batch), (V{"false", "NULL", "NULL", "NULL"}));
  EXPECT_EQ(FilterRows(*MakeInList(x(), {Int(1), Null(Type::Integer())}), batch), (Rows{0}));
  EXPECT_EQ(FilterRows(*MakeInList(x(), {Int(1)}, true), batch), (Rows{1, 2}));
  EXPECT_EQ(FilterRows(*MakeInList(x(), {Int(1), Null(Type::Integer())}, true), batch), Rows{});
  // Strings, and a list long enough for binary search.
  EXPECT_EQ(FilterRows(*MakeInList(Col(1, Type::Varchar()), {Str("MAIL"), Str("SHIP")}), batch), (Rows{0, 1}));
  std::vector<Value> many;
  for (int i = 3; i < 40; ++i) many.push_back(Int(i));
  EXPECT_EQ(FilterRows(*MakeInList(x(), many), batch), (Rows{2}));
  // An item longer than the column's declared length matches nothing.
  Batch short_strings = MakeBatch({{Type::Varchar(4), {Str("MAIL"), Str("AIR")}}});
  EXPECT_EQ(FilterRows(*MakeInList(Col(0, Type::Varchar(4)), {Str("AIR"), Str("REG AIR")}), short_strings), (Rows{1}));
  // A DECIMAL item that INTEGER cannot hold matches nothing (and does not round to 2).
  EXPECT_EQ(FilterRows(*MakeInList(x(), {Dec("1.5", 5, 1), Dec("2.0", 5, 1)}), batch), (Rows{1}));
}

TEST(EvaluatorTest, CaseEvaluatesBranchesOnlyWhereTaken) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(0), Int(5), Int(-3), Null(Type::Integer())}}});
  auto x = [] { return Col(0, Type::Integer()); };
  // CASE WHEN x > 0 THEN 100 / x WHEN x < 0 THEN -x END
  std::vector<std::unique_ptr<BoundExpression>> arms;
  arms.push_back(Cmp(ComparisonOp::kGreater, x(), Lit(Int(0))));
  arms.push_back(Arith(ArithmeticOp::kDivide, Lit(Int(100)), x(), Type::Integer()));
  arms.push_back(Cmp(ComparisonOp::kLess, x(), Lit(Int(0))));
  arms.push_back(Arith(ArithmeticOp::kNegate, x(), nullptr, Type::Integer()));
  auto no_else = MakeCase(std::move(arms), nullptr, Type::Integer());
  EXPECT_EQ(Eval(*no_else, batch), (V{"NULL", "20", "3", "NULL"}));

  std::vector<std::unique_ptr<BoundExpression>> arms2;
  arms2.push_back(MakeIsNull(x()));
  arms2.push_back(Lit(Str("none")));
  arms2.push_back(Cmp(ComparisonOp::kEqual, x(), Lit(Int(0))));
  arms2.push_back(Lit(Str("zero")));
  auto with_else = MakeCase(std::move(arms2), MakeCast(x(), Type::Varchar()), Type::Varchar());
  EXPECT_EQ(Eval(*with_else, batch), (V{"zero", "5", "-3", "none"}));
  SelectionVector selection = Selection({1, 3});
  EXPECT_EQ(Eval(*with_else, batch, &selection), (V{"5", "none"}));
  // As a predicate.
  std::vector<std::unique_ptr<BoundExpression>> arms3;
  arms3.push_back(Cmp(ComparisonOp::kGreater, x(), Lit(Int(0))));
  arms3.push_back(Lit(Bool(true)));
  auto predicate = MakeCase(std::move(arms3), Lit(Bool(false)), Type::Boolean());
  EXPECT_EQ(FilterRows(*predicate, batch), (Rows{1}));
}

TEST(EvaluatorTest, ConstantSubtreesAreFoldedButErrorsOnlyWhenEvaluated) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(1), Int(2)}}});
  // 1 + 2 * 3
  auto folded = Arith(ArithmeticOp::kAdd, Lit(Int(1)),
                      Arith(ArithmeticOp::kMultiply, Lit(Int(2)), Lit(Int(3)), Type::Integer()), Type::Integer());
  EXPECT_EQ(Eval(*folded, batch), (V{"7", "7"}));
  // CASE WHEN x > 5 THEN 1 / 0 ELSE x END: the division is never evaluated.
  std::vector<std::unique_ptr<BoundExpression>> arms;
  arms.push_back(Cmp(ComparisonOp::kGreater, Col(0, Type::Integer()), Lit(Int(5))));
  arms.push_back(Arith(ArithmeticOp::kDivide, Lit(Int(1)), Lit(Int(0)), Type::Integer()));
  auto guarded = MakeCase(std::move(arms), Col(0, Type::Integer()), Type::Integer());
  EXPECT_EQ(Eval(*guarded, batch), (V{"1", "2"}));
  // Unguarded, it errors at evaluation.
  auto division = Arith(ArithmeticOp::kDivide, Lit(Int(1)), Lit(Int(0)), Type::Integer());
  ExpressionEvaluator evaluator(*division);
  EXPECT_TRUE(evaluator.status().ok());
  EXPECT_THAT(Message(evaluator.Evaluate(batch, nullptr).status()), HasSubstr("division by zero"));
}

TEST(EvaluatorTest, UnsupportedExpressionsReportAtConstructionAndEveryCall) {
  Batch batch = MakeBatch({{Type::Date(), {DateOf("2024-01-01")}}});
  auto expr = MakeCast(Col(0, Type::Date()), Type::Integer());
  ExpressionEvaluator evaluator(*expr);
  EXPECT_EQ(evaluator.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(evaluator.status()), HasSubstr("cannot cast DATE to INTEGER"));
  EXPECT_FALSE(evaluator.Evaluate(batch, nullptr).ok());
  SelectionVector out;
  EXPECT_FALSE(evaluator.Filter(batch, nullptr, &out).ok());
  // LIKE needs a constant pattern.
  auto like = MakeLike(Lit(Str("a")), Str("a"));
  like->children[1] = Col(0, Type::Varchar());
  EXPECT_THAT(Message(ExpressionEvaluator(*like).status()), HasSubstr("constant"));
}

TEST(EvaluatorTest, EvaluatorIsReusableAcrossBatchesOfDifferentSizes) {
  auto expr = Arith(ArithmeticOp::kAdd, Col(0, Type::BigInt()), Lit(Big(1)), Type::BigInt());
  ExpressionEvaluator evaluator(*expr);
  for (uint32_t size : {kVectorSize, 3u, 0u, 1000u}) {
    std::vector<Value> values;
    for (uint32_t i = 0; i < size; ++i) values.push_back(i % 7 == 0 ? Null(Type::BigInt()) : Big(i));
    Batch batch = MakeBatch({{Type::BigInt(), values}});
    batch.size = size;
    absl::StatusOr<const ColumnVector*> result = evaluator.Evaluate(batch, nullptr);
    ASSERT_TRUE(result.ok());
    for (uint32_t i = 0; i < size; ++i) {
      ASSERT_EQ((*result)->IsNull(i), i % 7 == 0);
      if (i % 7 != 0) {
        ASSERT_EQ((*result)->values<int64_t>()[i], static_cast<int64_t>(i) + 1);
      }
    }
  }
}

}  // namespace
}  // namespace tessera
