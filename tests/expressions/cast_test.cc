#include <cmath>
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

using V = std::vector<std::string>;

std::vector<std::string> CastColumn(const Type& from, const std::vector<Value>& values, const Type& to) {
  Batch batch = MakeBatch({{from, values}});
  return Eval(*MakeCast(Col(0, from), to), batch);
}

absl::Status CastError(const Type& from, const std::vector<Value>& values, const Type& to) {
  Batch batch = MakeBatch({{from, values}});
  return EvalStatus(*MakeCast(Col(0, from), to), batch);
}

TEST(CastTest, IntegersToDecimal) {
  EXPECT_EQ(CastColumn(Type::Integer(), {Int(5), Int(-7), Null(Type::Integer())}, Type::Decimal(10, 2)),
            (V{"5.00", "-7.00", "NULL"}));
  EXPECT_EQ(CastColumn(Type::BigInt(), {Big(std::numeric_limits<int64_t>::max())}, Type::Decimal(38, 10)),
            (V{"9223372036854775807.0000000000"}));
  absl::Status status = CastError(Type::Integer(), {Int(1), Int(1000)}, Type::Decimal(4, 2));
  EXPECT_EQ(Message(status), "value 1000 is out of range for DECIMAL(4,2)");
}

TEST(CastTest, DecimalRescaleRoundsHalfAwayFromZero) {
  const Type from = Type::Decimal(10, 3);
  std::vector<Value> values = {Dec("1.125", 10, 3), Dec("-1.125", 10, 3), Dec("1.124", 10, 3), Dec("-0.005", 10, 3)};
  EXPECT_EQ(CastColumn(from, values, Type::Decimal(10, 2)), (V{"1.13", "-1.13", "1.12", "-0.01"}));
  EXPECT_EQ(CastColumn(from, values, Type::Decimal(30, 5)), (V{"1.12500", "-1.12500", "1.12400", "-0.00500"}));
  EXPECT_EQ(CastColumn(from, values, Type::Integer()), (V{"1", "-1", "1", "0"}));
  EXPECT_EQ(CastColumn(Type::Decimal(5, 1), {Dec("2.5", 5, 1), Dec("-2.5", 5, 1)}, Type::BigInt()), (V{"3", "-3"}));
  // Wide to narrow.
  EXPECT_EQ(CastColumn(Type::Decimal(30, 4), {Dec("12345.6789", 30, 4)}, Type::Decimal(15, 2)), (V{"12345.68"}));
  EXPECT_EQ(Message(CastError(Type::Decimal(30, 0), {Dec("100000000000000000000", 30, 0)}, Type::Decimal(15, 2))),
            "value 100000000000000000000 is out of range for DECIMAL(15,2)");
  EXPECT_EQ(Message(CastError(Type::Decimal(12, 0), {Dec("99999999999", 12, 0)}, Type::Integer())),
            "value 99999999999 is out of range for INTEGER");
}

TEST(CastTest, ToAndFromDouble) {
  EXPECT_EQ(CastColumn(Type::Decimal(15, 2), {Dec("1.10", 15, 2), Dec("-0.07", 15, 2)}, Type::Double()),
            (V{"1.1", "-0.07"}));
  EXPECT_EQ(CastColumn(Type::Decimal(38, 2), {Dec("123456789012345678901234567890.12", 38, 2)}, Type::Double()),
            (V{"1.2345678901234568e+29"}));
  EXPECT_EQ(CastColumn(Type::Integer(), {Int(3)}, Type::Double()), (V{"3"}));
  EXPECT_EQ(CastColumn(Type::Double(), {Dbl(2.675), Dbl(0.1), Dbl(-1.005)}, Type::Decimal(10, 2)),
            (V{"2.68", "0.10", "-1.01"}));
  EXPECT_EQ(CastColumn(Type::Double(), {Dbl(2.5), Dbl(-2.5), Dbl(1e9)}, Type::Integer()), (V{"3", "-3", "1000000000"}));
  EXPECT_EQ(Message(CastError(Type::Double(), {Dbl(1e10)}, Type::Integer())),
            "value 1e+10 is out of range for INTEGER");
  EXPECT_THAT(Message(CastError(Type::Double(), {Dbl(std::nan(""))}, Type::Decimal(10, 2))), HasSubstr("out of range"));
  EXPECT_EQ(Message(CastError(Type::Double(), {Dbl(1e300)}, Type::Decimal(38, 0))),
            "value 1e+300 is out of range for DECIMAL(38,0)");
}

TEST(CastTest, IntegersAndBooleans) {
  EXPECT_EQ(CastColumn(Type::BigInt(), {Big(5), Big(-5)}, Type::Integer()), (V{"5", "-5"}));
  EXPECT_EQ(Message(CastError(Type::BigInt(), {Big(int64_t{1} << 40)}, Type::Integer())),
            "value 1099511627776 is out of range for INTEGER");
  EXPECT_EQ(CastColumn(Type::Integer(), {Int(0), Int(7)}, Type::Boolean()), (V{"false", "true"}));
  EXPECT_EQ(CastColumn(Type::Boolean(), {Bool(true), Bool(false)}, Type::BigInt()), (V{"1", "0"}));
}

TEST(CastTest, DatesAndTimestamps) {
  EXPECT_EQ(CastColumn(Type::Date(), {DateOf("2024-02-29"), DateOf("1969-12-31")}, Type::Timestamp()),
            (V{"2024-02-29 00:00:00", "1969-12-31 00:00:00"}));
  EXPECT_EQ(CastColumn(Type::Timestamp(),
                       {*Str("1969-12-31 23:00:00").CastTo(Type::Timestamp()),
                        *Str("2024-02-29 12:30:00").CastTo(Type::Timestamp())},
                       Type::Date()),
            (V{"1969-12-31", "2024-02-29"}));
}

TEST(CastTest, ParseStrings) {
  const Type text = Type::Varchar();
  EXPECT_EQ(CastColumn(text, {Str(" 42 "), Str("-7"), Null(text)}, Type::Integer()), (V{"42", "-7", "NULL"}));
  EXPECT_EQ(Message(CastError(text, {Str("1"), Str("abc")}, Type::Integer())), "invalid input for INTEGER: 'abc'");
  EXPECT_EQ(Message(CastError(text, {Str("99999999999")}, Type::Integer())),
            "value 99999999999 is out of range for INTEGER");
  EXPECT_EQ(CastColumn(text, {Str("12.345"), Str("-0.5")}, Type::Decimal(10, 2)), (V{"12.35", "-0.50"}));
  EXPECT_EQ(CastColumn(text, {Str("12.345")}, Type::Decimal(30, 2)), (V{"12.35"}));
  EXPECT_EQ(CastColumn(text, {Str("1e3"), Str("inf")}, Type::Double()), (V{"1000", "inf"}));
  EXPECT_EQ(CastColumn(text, {Str("1998-12-01"), Str("2024-02-29 13:00:00")}, Type::Date()),
            (V{"1998-12-01", "2024-02-29"}));
  EXPECT_EQ(Message(CastError(text, {Str("1998-02-30")}, Type::Date())), "invalid input for DATE: '1998-02-30'");
  EXPECT_EQ(CastColumn(text, {Str("2024-02-29 13:00:00.5")}, Type::Timestamp()), (V{"2024-02-29 13:00:00.5"}));
  EXPECT_EQ(CastColumn(text, {Str("yes"), Str("off")}, Type::Boolean()), (V{"true", "false"}));
  EXPECT_EQ(CastColumn(text, {Str("1 year 2 months")}, Type::IntervalType()), (V{"1 year 2 mons"}));
  EXPECT_EQ(CastColumn(text, {Str("9223372036854775807")}, Type::BigInt()), (V{"9223372036854775807"}));
}

TEST(CastTest, EverythingToVarchar) {
  const Type text = Type::Varchar();
  EXPECT_EQ(CastColumn(Type::Integer(), {Int(-12), Null(Type::Integer())}, text), (V{"-12", "NULL"}));
  EXPECT_EQ(CastColumn(Type::BigInt(), {Big(1234567890123)}, text), (V{"1234567890123"}));
  EXPECT_EQ(CastColumn(Type::Decimal(15, 2), {Dec("-0.05", 15, 2)}, text), (V{"-0.05"}));
  EXPECT_EQ(CastColumn(Type::Decimal(30, 3), {Dec("123456789012345678901.5", 30, 3)}, text),
            (V{"123456789012345678901.500"}));
  EXPECT_EQ(CastColumn(Type::Double(), {Dbl(0.1)}, text), (V{"0.1"}));
  EXPECT_EQ(CastColumn(Type::Date(), {DateOf("1995-03-15")}, text), (V{"1995-03-15"}));
  EXPECT_EQ(CastColumn(Type::Boolean(), {Bool(true)}, text), (V{"true"}));
  EXPECT_EQ(CastColumn(Type::IntervalType(), {IntervalOf("3 days")}, text), (V{"3 days"}));
  // Length limits: excess trailing spaces are dropped, anything else is an error.
  EXPECT_EQ(CastColumn(text, {Str("ab   "), Str("abc")}, Type::Varchar(3)), (V{"ab ", "abc"}));
  EXPECT_EQ(Message(CastError(text, {Str("abcdef")}, Type::Varchar(3))), "value 'abcdef' is too long for VARCHAR(3)");
  EXPECT_EQ(Message(CastError(Type::Integer(), {Int(123)}, Type::Varchar(2))),
            "value '123' is too long for VARCHAR(2)");
  // Widening string casts view the input.
  EXPECT_EQ(CastColumn(Type::Varchar(3), {Str("abc")}, Type::Varchar(10)), (V{"abc"}));
}

TEST(CastTest, UnsupportedCasts) {
  EXPECT_EQ(Message(CastError(Type::Date(), {DateOf("2024-01-01")}, Type::Double())), "cannot cast DATE to DOUBLE");
  EXPECT_EQ(Message(CastError(Type::Boolean(), {Bool(true)}, Type::Date())), "cannot cast BOOLEAN to DATE");
}

// The vectorized casts agree with Value::CastTo (the row-at-a-time path) on values and error messages.
TEST(CastTest, AgreesWithValueCastTo) {
  const std::vector<Value> inputs = {
      Int(0),         Int(-1),           Int(2147483647),        Big(-9223372036854775807LL),
      Big(123456789), Dbl(0.5),          Dbl(-1234.5678),        Dbl(1e20),
      Dbl(-0.0),      Dec("9.99", 3, 2), Dec("-123.456", 10, 3), Dec("12345678901234567890.12", 30, 2),
      Str("12"),      Str(" -3.5 "),     Str("2020-01-01"),      Str("x"),
      Str("1e5"),     Bool(true),        DateOf("2000-02-29"),   *Str("2001-01-01 10:00").CastTo(Type::Timestamp()),
  };
  const std::vector<Type> targets = {Type::Boolean(),     Type::Integer(),      Type::BigInt(),        Type::Double(),
                                     Type::Decimal(5, 2), Type::Decimal(18, 0), Type::Decimal(38, 10), Type::Date(),
                                     Type::Timestamp(),   Type::Varchar(),      Type::Varchar(4)};
  for (const Value& input : inputs) {
    for (const Type& target : targets) {
      absl::StatusOr<Value> expected = input.CastTo(target);
      Batch batch = MakeBatch({{input.type(), {input}}});
      auto expr = MakeCast(Col(0, input.type()), target);
      ExpressionEvaluator evaluator(*expr);
      absl::StatusOr<const ColumnVector*> result = evaluator.Evaluate(batch, nullptr);
      const std::string what = input.type().ToString() + " " + input.ToString() + " -> " + target.ToString();
      if (expected.ok()) {
        ASSERT_TRUE(result.ok()) << what << ": " << result.status();
        EXPECT_EQ((*result)->GetValue(0).ToString(), expected->ToString()) << what;
      } else {
        ASSERT_FALSE(result.ok()) << what << " gave " << (*result)->GetValue(0).ToString();
        EXPECT_EQ(Message(result.status()), Message(expected.status())) << what;
      }
    }
  }
}

}  // namespace
}  // namespace tessera
