#include "expressions/bound_expression.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/expressions/test_batch.h"

namespace tessera {
namespace {

using namespace ::tessera::testing;  // NOLINT

TEST(BoundExpressionTest, ToStringIsReadable) {
  auto expr = Arith(ArithmeticOp::kMultiply, Col(3, Type::Decimal(15, 2)),
                    Arith(ArithmeticOp::kSubtract, Lit(Int(1)), Col(6, Type::Decimal(15, 2)), Type::Decimal(16, 2)),
                    Type::Decimal(32, 4));
  EXPECT_EQ(expr->ToString(), "(#3 * (1 - #6))");
  std::vector<std::string> names = {"a", "b", "c", "l_extendedprice", "e", "f", "l_discount"};
  EXPECT_EQ(expr->ToString(&names), "(l_extendedprice * (1 - l_discount))");

  auto predicate =
      Conj(ExpressionKind::kAnd, Cmp(ComparisonOp::kLessEqual, Col(0, Type::Date()), Lit(DateOf("1998-09-02"))),
           MakeLike(Col(1, Type::Varchar()), Str("it's%"), true),
           MakeInList(Col(2, Type::Integer()), {Int(1), Null(Type::Integer())}),
           MakeNot(MakeIsNull(Col(3, Type::Integer()), true)));
  EXPECT_EQ(predicate->ToString(),
            "((#0 <= DATE '1998-09-02') AND (#1 NOT LIKE 'it''s%') AND (#2 IN (1, NULL)) AND (NOT (#3 IS NOT "
            "NULL)))");

  std::vector<std::unique_ptr<BoundExpression>> arms;
  arms.push_back(Cmp(ComparisonOp::kGreater, Col(0, Type::Integer()), Lit(Int(0))));
  arms.push_back(Lit(Str("pos")));
  auto case_expr = MakeCase(std::move(arms), Lit(Str("other")), Type::Varchar());
  EXPECT_EQ(case_expr->ToString(), "CASE WHEN (#0 > 0) THEN 'pos' ELSE 'other' END");
  EXPECT_EQ(Fn(FunctionId::kExtractYear, Type::Integer(), Col(0, Type::Date()))->ToString(), "EXTRACT(YEAR FROM #0)");
  EXPECT_EQ(Fn(FunctionId::kSubstring, Type::Varchar(), Col(0, Type::Varchar()), Lit(Int(1)), Lit(Int(2)))->ToString(),
            "SUBSTRING(#0, 1, 2)");
  EXPECT_EQ(MakeCast(Col(0, Type::Integer()), Type::Decimal(10, 2))->ToString(), "CAST(#0 AS DECIMAL(10,2))");
  EXPECT_EQ(Arith(ArithmeticOp::kNegate, Col(0, Type::Integer()), nullptr, Type::Integer())->ToString(), "(- #0)");
  EXPECT_EQ(Lit(IntervalOf("3 months"))->ToString(), "INTERVAL '3 mons'");
}

TEST(BoundExpressionTest, CloneIsDeep) {
  auto original = Conj(ExpressionKind::kOr, Cmp(ComparisonOp::kEqual, Col(0, Type::Integer()), Lit(Int(1))),
                       MakeIsNull(Col(1, Type::Varchar())));
  auto copy = original->Clone();
  EXPECT_EQ(copy->ToString(), original->ToString());
  copy->children[0]->children[1]->constant = Int(2);
  EXPECT_EQ(original->ToString(), "((#0 = 1) OR (#1 IS NULL))");
  EXPECT_EQ(copy->ToString(), "((#0 = 2) OR (#1 IS NULL))");
}

TEST(BoundExpressionTest, ConjunctionHelpers) {
  std::vector<std::unique_ptr<BoundExpression>> none;
  EXPECT_EQ(MakeConjunction(ExpressionKind::kAnd, std::move(none))->ToString(), "true");
  std::vector<std::unique_ptr<BoundExpression>> one;
  one.push_back(Col(0, Type::Boolean()));
  auto single = MakeConjunction(ExpressionKind::kOr, std::move(one));
  EXPECT_EQ(single->kind, ExpressionKind::kColumn);
}

}  // namespace
}  // namespace tessera
