// Checks the contract that evaluation allocates nothing once the first batch has been seen. Counts calls of
// the global operator new, which this file replaces for the whole test binary (counting only while enabled).

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/expressions/test_batch.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

// GCC pairs inlined new/delete call sites and warns about malloc/free here; the replacement is consistent.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace tessera {
namespace {

using namespace ::tessera::testing;  // NOLINT

class AllocationCounter {
 public:
  AllocationCounter() {
    allocations = 0;
    counting = true;
  }
  ~AllocationCounter() { counting = false; }
  long count() const { return allocations.load(); }
};

Batch MixedBatch(int seed) {
  std::vector<Value> ints, prices, names, dates;
  for (uint32_t i = 0; i < kVectorSize; ++i) {
    const int v = static_cast<int>(i) * 7 + seed;
    ints.push_back(v % 13 == 0 ? Null(Type::Integer()) : Int(v % 100));
    prices.push_back(Value::Decimal(v % 100000, Type::Decimal(15, 2)));
    names.push_back(v % 11 == 0 ? Null(Type::Varchar()) : Str("name " + std::to_string(v % 500) + " special"));
    dates.push_back(Value::Date(9000 + v % 700));
  }
  return MakeBatch(
      {{Type::Integer(), ints}, {Type::Decimal(15, 2), prices}, {Type::Varchar(), names}, {Type::Date(), dates}});
}

TEST(AllocationTest, CounterSeesAllocations) {
  AllocationCounter counter;
  Value value = Value::String(std::string(100, 'x'));
  EXPECT_EQ(value.AsString().size(), 100u);
  EXPECT_GT(counter.count(), 0);
}

TEST(AllocationTest, EvaluateAndFilterAllocateNothingAfterTheFirstBatch) {
  const Type money = Type::Decimal(15, 2);
  auto x = [] { return Col(0, Type::Integer()); };
  // (x > 10 AND name LIKE '%5%special') OR (x IN (1, 2, 3) AND date < DATE '1995-01-01') OR price * 2 >
  // 900.00
  auto filter = Conj(ExpressionKind::kOr,
                     Conj(ExpressionKind::kAnd, Cmp(ComparisonOp::kGreater, x(), Lit(Int(10))),
                          MakeLike(Col(2, Type::Varchar()), Str("%5%special"))),
                     Conj(ExpressionKind::kAnd, MakeInList(x(), {Int(1), Int(2), Int(3)}),
                          Cmp(ComparisonOp::kLess, Col(3, Type::Date()), Lit(DateOf("1995-01-01")))),
                     Cmp(ComparisonOp::kGreater,
                         Arith(ArithmeticOp::kMultiply, Col(1, money), Lit(Dec("2", 1, 0)), Type::Decimal(17, 2)),
                         Lit(Dec("900.00", 17, 2))));
  // CASE WHEN x IS NULL THEN 'none' ELSE upper(substring(name, 1, 4)) || CAST(x AS VARCHAR) -- without ||:
  std::vector<std::unique_ptr<BoundExpression>> arms;
  arms.push_back(MakeIsNull(x()));
  arms.push_back(Lit(Str("none")));
  arms.push_back(
      Cmp(ComparisonOp::kEqual, Arith(ArithmeticOp::kModulo, x(), Lit(Int(2)), Type::Integer()), Lit(Int(0))));
  arms.push_back(Fn(FunctionId::kUpper, Type::Varchar(),
                    Fn(FunctionId::kSubstring, Type::Varchar(), Col(2, Type::Varchar()), Lit(Int(1)), Lit(Int(4)))));
  auto projection =
      MakeCase(std::move(arms),
               Fn(FunctionId::kCoalesce, Type::Varchar(), MakeCast(Col(1, money), Type::Varchar()), Lit(Str("?"))),
               Type::Varchar());
  ExpressionEvaluator filter_evaluator(*filter);
  ExpressionEvaluator projection_evaluator(*projection);
  ASSERT_TRUE(filter_evaluator.status().ok()) << filter_evaluator.status();
  ASSERT_TRUE(projection_evaluator.status().ok()) << projection_evaluator.status();
  Batch first = MixedBatch(0), second = MixedBatch(5);
  SelectionVector selection;
  ASSERT_TRUE(filter_evaluator.Filter(first, nullptr, &selection).ok());
  ASSERT_TRUE(projection_evaluator.Evaluate(first, &selection).ok());
  ASSERT_TRUE(projection_evaluator.Evaluate(first, nullptr).ok());
  {
    AllocationCounter counter;
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(filter_evaluator.Filter(second, nullptr, &selection).ok());
      ASSERT_GT(selection.count, 0u);
      ASSERT_TRUE(projection_evaluator.Evaluate(second, &selection).ok());
      ASSERT_TRUE(projection_evaluator.Evaluate(second, nullptr).ok());
    }
    EXPECT_EQ(counter.count(), 0);
  }
}

}  // namespace
}  // namespace tessera
