#include "distributed/scan_fragment.h"

#include "gtest/gtest.h"

namespace tessera::distributed {
namespace {

std::unique_ptr<BoundExpression> SampleFilter() {
  std::vector<std::unique_ptr<BoundExpression>> terms;
  terms.push_back(MakeComparison(ComparisonOp::kLess, MakeColumn(0, Type::Decimal(15, 2)),
                                 MakeConstant(Value::Decimal(1000, Type::Decimal(15, 2)))));
  terms.push_back(MakeLike(MakeColumn(1, Type::Varchar(25)), Value::String("PROMO%"), /*negated=*/true));
  terms.push_back(MakeInList(MakeColumn(2, Type::Date()), {Value::Date(9000), Value::Null(Type::Date())}));
  std::vector<std::unique_ptr<BoundExpression>> when_then;
  when_then.push_back(MakeIsNull(MakeColumn(3, Type::BigInt()), /*negated=*/true));
  when_then.push_back(MakeConstant(Value::Boolean(true)));
  terms.push_back(MakeCase(std::move(when_then), MakeConstant(Value::Boolean(false)), Type::Boolean()));
  std::vector<std::unique_ptr<BoundExpression>> arguments;
  arguments.push_back(MakeColumn(1, Type::Varchar(25)));
  terms.push_back(MakeComparison(
      ComparisonOp::kGreaterEqual, MakeFunction(FunctionId::kLength, std::move(arguments), Type::Integer()),
      MakeArithmetic(ArithmeticOp::kNegate, MakeCast(MakeColumn(3, Type::BigInt()), Type::Integer()), nullptr,
                     Type::Integer())));
  return MakeConjunction(ExpressionKind::kAnd, std::move(terms));
}

void ExpectSame(const BoundExpression& a, const BoundExpression& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.result_type, b.result_type);
  EXPECT_EQ(a.column_index, b.column_index);
  EXPECT_EQ(a.constant.Serialize(), b.constant.Serialize());
  EXPECT_EQ(a.arithmetic, b.arithmetic);
  EXPECT_EQ(a.comparison, b.comparison);
  EXPECT_EQ(a.negated, b.negated);
  EXPECT_EQ(a.has_else, b.has_else);
  if (a.kind == ExpressionKind::kFunction) EXPECT_EQ(a.function, b.function);
  ASSERT_EQ(a.children.size(), b.children.size());
  for (size_t i = 0; i < a.children.size(); ++i) ExpectSame(*a.children[i], *b.children[i]);
}

TEST(ScanFragmentTest, FiltersRoundTripFieldByField) {
  ScanFragment fragment;
  fragment.table = "lineitem";
  fragment.columns = {4, 15, 10, 0};
  fragment.filter = SampleFilter();
  absl::StatusOr<ScanFragment> decoded = DecodeScanFragment(EncodeScanFragment(fragment));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->table, "lineitem");
  EXPECT_EQ(decoded->columns, fragment.columns);
  ASSERT_NE(decoded->filter, nullptr);
  ExpectSame(*fragment.filter, *decoded->filter);
  EXPECT_EQ(fragment.filter->ToString(), decoded->filter->ToString());
}

TEST(ScanFragmentTest, NoFilterAndMalformedMessages) {
  ScanFragment fragment;
  fragment.table = "orders";
  fragment.columns = {0};
  const std::string message = EncodeScanFragment(fragment);
  absl::StatusOr<ScanFragment> decoded = DecodeScanFragment(message);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->filter, nullptr);
  for (size_t cut = 0; cut < message.size(); ++cut) {
    EXPECT_EQ(DecodeScanFragment(message.substr(0, cut)).status().code(), absl::StatusCode::kDataLoss);
  }
  EXPECT_EQ(DecodeScanFragment(message + "x").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace tessera::distributed
