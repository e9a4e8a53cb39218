// The binder's typing rules (optimizer/type_rules.h) and bind-time constant folding.

#include "optimizer/type_rules.h"

#include "catalog/text_conversion.h"
#include "gtest/gtest.h"
#include "optimizer/constant_folding.h"

namespace tessera::optimizer {
namespace {

TEST(TypeRulesTest, CommonTypes) {
  EXPECT_EQ(CommonType(Type::Integer(), Type::Integer()), Type::Integer());
  EXPECT_EQ(CommonType(Type::Integer(), Type::BigInt()), Type::BigInt());
  EXPECT_EQ(CommonType(Type::Null(), Type::Date()), Type::Date());
  EXPECT_EQ(CommonType(Type::Integer(), Type::Decimal(15, 2)), Type::Decimal(15, 2));
  EXPECT_EQ(CommonType(Type::Integer(), Type::Decimal(5, 2)), Type::Decimal(12, 2));
  EXPECT_EQ(CommonType(Type::BigInt(), Type::Decimal(5, 2)), Type::Decimal(21, 2));
  EXPECT_EQ(CommonType(Type::Decimal(15, 2), Type::Decimal(10, 4)), Type::Decimal(17, 4));
  // Beyond 38 digits the scale is kept and integer digits give way.
  EXPECT_EQ(CommonType(Type::Decimal(38, 2), Type::Decimal(38, 12)), Type::Decimal(38, 12));
  EXPECT_EQ(CommonType(Type::Decimal(15, 2), Type::Double()), Type::Double());
  EXPECT_EQ(CommonType(Type::Char(10), Type::Varchar(25)), Type::Varchar(25));
  EXPECT_EQ(CommonType(Type::Varchar(), Type::Char(3)), Type::Varchar());
  EXPECT_EQ(CommonType(Type::Date(), Type::Timestamp()), Type::Timestamp());
  EXPECT_FALSE(CommonType(Type::Date(), Type::Integer()).has_value());
  EXPECT_FALSE(CommonType(Type::Varchar(), Type::Integer()).has_value());
  EXPECT_FALSE(CommonType(Type::Boolean(), Type::Integer()).has_value());
}

TEST(TypeRulesTest, ArithmeticTyping) {
  auto typed = TypeArithmetic(ArithmeticOp::kAdd, Type::Integer(), Type::Integer());
  ASSERT_TRUE(typed.has_value());
  EXPECT_EQ(typed->result, Type::Integer());
  typed = TypeArithmetic(ArithmeticOp::kDivide, Type::BigInt(), Type::Integer());
  EXPECT_EQ(typed->result, Type::BigInt());
  // DECIMAL +: one extra integer digit, operands and result share the type.
  typed = TypeArithmetic(ArithmeticOp::kSubtract, Type::Integer(), Type::Decimal(15, 2));
  EXPECT_EQ(typed->left, Type::Decimal(16, 2));
  EXPECT_EQ(typed->right, Type::Decimal(16, 2));
  EXPECT_EQ(typed->result, Type::Decimal(16, 2));
  // DECIMAL *: p1 + p2 + 1, s1 + s2, capped at 38.
  typed = TypeArithmetic(ArithmeticOp::kMultiply, Type::Decimal(15, 2), Type::Decimal(16, 2));
  EXPECT_EQ(typed->result, Type::Decimal(32, 4));
  typed = TypeArithmetic(ArithmeticOp::kMultiply, Type::Decimal(32, 4), Type::Decimal(16, 2));
  EXPECT_EQ(typed->result, Type::Decimal(38, 6));
  typed = TypeArithmetic(ArithmeticOp::kMultiply, Type::Decimal(15, 2), Type::Integer());
  EXPECT_EQ(typed->right, Type::Decimal(10, 0));
  EXPECT_EQ(typed->result, Type::Decimal(26, 2));
  // DECIMAL / DECIMAL: DOUBLE (as DuckDB), whatever the scales.
  typed = TypeArithmetic(ArithmeticOp::kDivide, Type::Decimal(15, 2), Type::Decimal(15, 2));
  EXPECT_EQ(typed->result, Type::Double());
  typed = TypeArithmetic(ArithmeticOp::kDivide, Type::Decimal(38, 4), Type::Decimal(38, 4));
  EXPECT_EQ(typed->result, Type::Double());
  typed = TypeArithmetic(ArithmeticOp::kMultiply, Type::Double(), Type::Decimal(15, 2));
  EXPECT_EQ(typed->result, Type::Double());
  // Dates.
  typed = TypeArithmetic(ArithmeticOp::kAdd, Type::Date(), Type::IntervalType());
  EXPECT_EQ(typed->result, Type::Date());
  EXPECT_FALSE(typed->swap_operands);
  typed = TypeArithmetic(ArithmeticOp::kAdd, Type::IntervalType(), Type::Date());
  EXPECT_EQ(typed->result, Type::Date());
  EXPECT_TRUE(typed->swap_operands);
  typed = TypeArithmetic(ArithmeticOp::kSubtract, Type::Date(), Type::Date());
  EXPECT_EQ(typed->result, Type::Integer());
  typed = TypeArithmetic(ArithmeticOp::kAdd, Type::Date(), Type::Integer());
  EXPECT_EQ(typed->result, Type::Date());
  EXPECT_FALSE(TypeArithmetic(ArithmeticOp::kMultiply, Type::Date(), Type::Integer()).has_value());
  EXPECT_FALSE(TypeArithmetic(ArithmeticOp::kSubtract, Type::IntervalType(), Type::Date()).has_value());
  EXPECT_FALSE(TypeArithmetic(ArithmeticOp::kAdd, Type::Varchar(), Type::Integer()).has_value());
}

TEST(TypeRulesTest, Casts) {
  EXPECT_TRUE(CanCast(Type::Varchar(), Type::Date()));
  EXPECT_TRUE(CanCast(Type::Date(), Type::Varchar()));
  EXPECT_TRUE(CanCast(Type::Decimal(15, 2), Type::Integer()));
  EXPECT_TRUE(CanCast(Type::Date(), Type::Timestamp()));
  EXPECT_TRUE(CanCast(Type::Integer(), Type::Boolean()));
  EXPECT_TRUE(CanCast(Type::Null(), Type::Date()));
  EXPECT_FALSE(CanCast(Type::Date(), Type::Boolean()));
  EXPECT_FALSE(CanCast(Type::Date(), Type::Integer()));
  EXPECT_FALSE(CanCast(Type::IntervalType(), Type::Date()));
}

TEST(TypeRulesTest, AggregateResultTypes) {
  Type argument;
  EXPECT_EQ(AggregateResultType(AggregateKind::kCountStar, Type::Null(), &argument), Type::BigInt());
  EXPECT_EQ(AggregateResultType(AggregateKind::kCount, Type::Varchar(), &argument), Type::BigInt());
  EXPECT_EQ(AggregateResultType(AggregateKind::kSum, Type::Integer(), &argument), Type::BigInt());
  EXPECT_EQ(AggregateResultType(AggregateKind::kSum, Type::BigInt(), &argument), Type::Decimal(38, 0));
  EXPECT_EQ(argument, Type::BigInt());
  EXPECT_EQ(AggregateResultType(AggregateKind::kSum, Type::Decimal(15, 2), &argument), Type::Decimal(38, 2));
  EXPECT_EQ(AggregateResultType(AggregateKind::kAvg, Type::Decimal(15, 2), &argument), Type::Double());
  EXPECT_EQ(AggregateResultType(AggregateKind::kAvg, Type::Decimal(20, 8), &argument), Type::Double());
  EXPECT_EQ(AggregateResultType(AggregateKind::kAvg, Type::Integer(), &argument), Type::Double());
  EXPECT_EQ(AggregateResultType(AggregateKind::kMax, Type::Char(10), &argument), Type::Char(10));
  EXPECT_FALSE(AggregateResultType(AggregateKind::kSum, Type::Varchar(), &argument).has_value());
  EXPECT_FALSE(AggregateResultType(AggregateKind::kAvg, Type::Date(), &argument).has_value());
  EXPECT_FALSE(AggregateResultType(AggregateKind::kMin, Type::IntervalType(), &argument).has_value());
}

ExpressionPtr Arithmetic(ArithmeticOp op, Value a, Value b, Type result) {
  return MakeArithmetic(op, MakeConstant(std::move(a)), MakeConstant(std::move(b)), result);
}

TEST(ConstantFoldingTest, FoldsExactArithmetic) {
  ExpressionPtr folded =
      FoldConstant(Arithmetic(ArithmeticOp::kAdd, Value::Integer(1), Value::Integer(10), Type::Integer()));
  ASSERT_EQ(folded->kind, ExpressionKind::kConstant);
  EXPECT_EQ(folded->constant, Value::Integer(11));
  // DECIMAL(3,2) 0.06 - 0.01 at the common type.
  folded = FoldConstant(Arithmetic(ArithmeticOp::kSubtract, Value::Decimal(6, Type::Decimal(4, 2)),
                                   Value::Decimal(1, Type::Decimal(4, 2)), Type::Decimal(4, 2)));
  EXPECT_EQ(folded->constant, Value::Decimal(5, Type::Decimal(4, 2)));
  // DECIMAL * keeps s1 + s2.
  folded = FoldConstant(Arithmetic(ArithmeticOp::kMultiply, Value::Decimal(15, Type::Decimal(2, 1)),
                                   Value::Decimal(2, Type::Decimal(2, 0)), Type::Decimal(5, 1)));
  EXPECT_EQ(folded->constant, Value::Decimal(30, Type::Decimal(5, 1)));
  folded = FoldConstant(Arithmetic(ArithmeticOp::kDivide, Value::Integer(7), Value::Integer(2), Type::Integer()));
  EXPECT_EQ(folded->constant, Value::Integer(3));
}

TEST(ConstantFoldingTest, LeavesErrorsToRunTime) {
  ExpressionPtr folded =
      FoldConstant(Arithmetic(ArithmeticOp::kAdd, Value::Integer(INT32_MAX), Value::Integer(1), Type::Integer()));
  EXPECT_EQ(folded->kind, ExpressionKind::kArithmetic);
  folded = FoldConstant(Arithmetic(ArithmeticOp::kDivide, Value::Integer(1), Value::Integer(0), Type::Integer()));
  EXPECT_EQ(folded->kind, ExpressionKind::kArithmetic);
  folded = FoldConstant(MakeCast(MakeConstant(Value::String("abc")), Type::Integer()));
  EXPECT_EQ(folded->kind, ExpressionKind::kCast);
}

TEST(ConstantFoldingTest, FoldsDatesCastsAndLogic) {
  int32_t day = 0;
  ASSERT_TRUE(ParseDate("1998-12-01", &day));
  ExpressionPtr folded = FoldConstant(
      Arithmetic(ArithmeticOp::kSubtract, Value::Date(day), Value::IntervalValue(Interval{0, 90, 0}), Type::Date()));
  EXPECT_EQ(folded->constant.ToString(), "1998-09-02");
  ASSERT_TRUE(ParseDate("2024-01-31", &day));
  folded = FoldConstant(
      Arithmetic(ArithmeticOp::kAdd, Value::Date(day), Value::IntervalValue(Interval{1, 0, 0}), Type::Date()));
  EXPECT_EQ(folded->constant.ToString(), "2024-02-29");
  folded = FoldConstant(MakeCast(MakeConstant(Value::String("1995-03-15")), Type::Date()));
  EXPECT_EQ(folded->constant.ToString(), "1995-03-15");
  folded = FoldConstant(
      MakeComparison(ComparisonOp::kLess, MakeConstant(Value::Integer(1)), MakeConstant(Value::Integer(2))));
  EXPECT_EQ(folded->constant, Value::Boolean(true));
  std::vector<ExpressionPtr> terms;
  terms.push_back(MakeConstant(Value::Boolean(true)));
  terms.push_back(
      MakeComparison(ComparisonOp::kEqual, MakeColumn(0, Type::Integer()), MakeConstant(Value::Integer(1))));
  folded = FoldConstant(MakeConjunction(ExpressionKind::kAnd, std::move(terms)));
  EXPECT_EQ(folded->kind, ExpressionKind::kComparison);
  terms.clear();
  terms.push_back(MakeConstant(Value::Boolean(true)));
  terms.push_back(MakeColumn(0, Type::Boolean()));
  folded = FoldConstant(MakeConjunction(ExpressionKind::kOr, std::move(terms)));
  EXPECT_EQ(folded->constant, Value::Boolean(true));
}

TEST(ConstantFoldingTest, FoldsCoalesceUpToItsFirstValue) {
  auto coalesce = [](ExpressionPtr first, ExpressionPtr second) {
    std::vector<ExpressionPtr> arguments;
    arguments.push_back(std::move(first));
    arguments.push_back(std::move(second));
    return MakeFunction(FunctionId::kCoalesce, std::move(arguments), Type::BigInt());
  };
  // The first argument that is not NULL, at the call's type.
  ExpressionPtr folded =
      FoldConstant(coalesce(MakeConstant(Value::Null(Type::BigInt())), MakeConstant(Value::Integer(0))));
  ASSERT_EQ(folded->kind, ExpressionKind::kConstant);
  EXPECT_EQ(folded->constant, Value::BigInt(0));
  // Only NULLs: NULL.
  folded = FoldConstant(coalesce(MakeConstant(Value::Null(Type::BigInt())), MakeConstant(Value::Null(Type::BigInt()))));
  ASSERT_EQ(folded->kind, ExpressionKind::kConstant);
  EXPECT_TRUE(folded->constant.is_null());
  // A column before the first value: left to run time.
  folded = FoldConstant(coalesce(MakeColumn(0, Type::BigInt()), MakeConstant(Value::BigInt(0))));
  EXPECT_EQ(folded->kind, ExpressionKind::kFunction);
}

}  // namespace
}  // namespace tessera::optimizer
