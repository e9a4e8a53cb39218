#include "distributed/expression_codec.h"

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

TEST(ExpressionCodecTest, ExpressionsRoundTripFieldByField) {
  const std::unique_ptr<BoundExpression> filter = SampleFilter();
  ByteWriter out;
  WriteExpression(out, *filter);
  WriteOptionalExpression(out, nullptr);
  WriteType(out, Type::Decimal(38, 2));
  const std::string message = out.Release();
  ByteReader in(message);
  std::unique_ptr<BoundExpression> decoded = ReadExpression(in);
  ASSERT_NE(decoded, nullptr);
  ExpectSame(*filter, *decoded);
  EXPECT_EQ(filter->ToString(), decoded->ToString());
  std::unique_ptr<BoundExpression> absent = MakeConstant(Value::Integer(1));
  ASSERT_TRUE(ReadOptionalExpression(in, &absent));
  EXPECT_EQ(absent, nullptr);
  Type type;
  ASSERT_TRUE(ReadType(in, &type));
  EXPECT_EQ(type, Type::Decimal(38, 2));
  EXPECT_TRUE(in.AtEnd());
}

TEST(ExpressionCodecTest, TruncatedMessagesAreRefused) {
  ByteWriter out;
  WriteExpression(out, *SampleFilter());
  const std::string message = out.Release();
  for (size_t cut = 0; cut < message.size(); ++cut) {
    ByteReader in(std::string_view(message).substr(0, cut));
    EXPECT_EQ(ReadExpression(in), nullptr) << cut;
  }
}

}  // namespace
}  // namespace tessera::distributed
