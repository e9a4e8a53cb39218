#include "catalog/value.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "catalog/text_conversion.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

Value Dec(std::string_view text, int precision, int scale) {
  int128 u = 0;
  EXPECT_TRUE(ParseDecimal(text, precision, scale, &u)) << text;
  return Value::Decimal(u, Type::Decimal(precision, scale));
}

Value Str(std::string s) { return Value::String(std::move(s)); }

Value DateValue(std::string_view text) {
  int32_t days = 0;
  EXPECT_TRUE(ParseDate(text, &days)) << text;
  return Value::Date(days);
}

// Casts and prints the result or the error message.
std::string Cast(const Value& v, Type target) {
  absl::StatusOr<Value> r = v.CastTo(target);
  if (!r.ok()) return "error: " + std::string(r.status().message());
  EXPECT_EQ(r->type(), target);
  return r->ToString();
}

TEST(ValueTest, DefaultIsUntypedNull) {
  Value v;
  EXPECT_TRUE(v.is_null());
  EXPECT_EQ(v.type(), Type::Null());
  EXPECT_EQ(v.ToString(), "NULL");
  Value typed = Value::Null(Type::Integer());
  EXPECT_TRUE(typed.is_null());
  EXPECT_EQ(typed.type(), Type::Integer());
  EXPECT_FALSE(v == typed);
}

TEST(ValueTest, Accessors) {
  EXPECT_TRUE(Value::Boolean(true).AsBool());
  EXPECT_EQ(Value::Integer(-5).AsInt64(), -5);
  EXPECT_EQ(Value::BigInt(INT64_MIN).AsInt64(), INT64_MIN);
  EXPECT_EQ(Value::Date(-3).AsInt64(), -3);
  EXPECT_EQ(Value::Timestamp(123).AsInt64(), 123);
  EXPECT_EQ(Dec("1.25", 10, 2).AsInt64(), 125);
  EXPECT_EQ(Dec("1.25", 30, 2).AsInt128(), 125);
  EXPECT_EQ(Value::Integer(7).AsInt128(), 7);
  EXPECT_EQ(Value::Integer(7).AsDouble(), 7.0);
  EXPECT_EQ(Dec("1.25", 10, 2).AsDouble(), 1.25);
  EXPECT_EQ(Dec("0.1", 38, 37).AsDouble(), 0.1);
  EXPECT_EQ(Dec("12345678901234567890.12345678", 38, 8).AsDouble(), 12345678901234567890.12345678);
  EXPECT_EQ(Str("abc").AsString(), "abc");
  EXPECT_EQ(Value::IntervalValue({1, 2, 3}).AsInterval(), (Interval{1, 2, 3}));
}

TEST(ValueTest, ToString) {
  EXPECT_EQ(Value::Null(Type::Date()).ToString(), "NULL");
  EXPECT_EQ(Value::Boolean(true).ToString(), "true");
  EXPECT_EQ(Value::Boolean(false).ToString(), "false");
  EXPECT_EQ(Value::Integer(INT32_MIN).ToString(), "-2147483648");
  EXPECT_EQ(Value::BigInt(INT64_MAX).ToString(), "9223372036854775807");
  EXPECT_EQ(Value::Double(0.1).ToString(), "0.1");
  EXPECT_EQ(Value::Double(-2.5).ToString(), "-2.5");
  EXPECT_EQ(Value::Double(1e20).ToString(), "1e+20");
  EXPECT_EQ(Dec("123.4", 15, 2).ToString(), "123.40");
  EXPECT_EQ(Dec("-0.05", 15, 2).ToString(), "-0.05");
  EXPECT_EQ(Dec("0", 15, 2).ToString(), "0.00");
  EXPECT_EQ(DateValue("1998-12-01").ToString(), "1998-12-01");
  EXPECT_EQ(Value::Timestamp(kMicrosPerDay + 1500000).ToString(), "1970-01-02 00:00:01.5");
  EXPECT_EQ(Value::Timestamp(0).ToString(), "1970-01-01 00:00:00");
  EXPECT_EQ(Value::IntervalValue({14, 3, 14706000000}).ToString(), "1 year 2 mons 3 days 04:05:06");
  EXPECT_EQ(Str("it's").ToString(), "it's");
}

TEST(ValueCastTest, NullCastsToNullOfTarget) {
  absl::StatusOr<Value> r = Value::Null().CastTo(Type::Decimal(10, 2));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->is_null());
  EXPECT_EQ(r->type(), Type::Decimal(10, 2));
}

TEST(ValueCastTest, StringToEverything) {
  EXPECT_EQ(Cast(Str("42"), Type::Integer()), "42");
  EXPECT_EQ(Cast(Str(" 42 "), Type::Integer()), "42");
  EXPECT_EQ(Cast(Str("-2147483648"), Type::Integer()), "-2147483648");
  EXPECT_EQ(Cast(Str("abc"), Type::Integer()), "error: invalid input for INTEGER: 'abc'");
  EXPECT_EQ(Cast(Str("1.5"), Type::Integer()), "error: invalid input for INTEGER: '1.5'");
  EXPECT_EQ(Cast(Str("99999999999"), Type::Integer()), "error: value 99999999999 is out of range for INTEGER");
  EXPECT_EQ(Cast(Str("99999999999"), Type::BigInt()), "99999999999");
  EXPECT_EQ(Cast(Str("99999999999999999999"), Type::BigInt()),
            "error: value 99999999999999999999 is out of range for BIGINT");
  EXPECT_EQ(Cast(Str("2.5e-1"), Type::Double()), "0.25");
  EXPECT_EQ(Cast(Str("x1"), Type::Double()), "error: invalid input for DOUBLE: 'x1'");
  EXPECT_EQ(Cast(Str("123.456"), Type::Decimal(15, 2)), "123.46");
  EXPECT_EQ(Cast(Str("-123.455"), Type::Decimal(15, 2)), "-123.46");
  EXPECT_EQ(Cast(Str("12345"), Type::Decimal(5, 2)), "error: value 12345 is out of range for DECIMAL(5,2)");
  EXPECT_EQ(Cast(Str("1.2.3"), Type::Decimal(5, 2)), "error: invalid input for DECIMAL(5,2): '1.2.3'");
  EXPECT_EQ(Cast(Str("yes"), Type::Boolean()), "true");
  EXPECT_EQ(Cast(Str("maybe"), Type::Boolean()), "error: invalid input for BOOLEAN: 'maybe'");
  EXPECT_EQ(Cast(Str("2000-02-29"), Type::Date()), "2000-02-29");
  EXPECT_EQ(Cast(Str("1900-02-29"), Type::Date()), "error: invalid input for DATE: '1900-02-29'");
  EXPECT_EQ(Cast(Str("2024-01-02 23:59:59"), Type::Date()), "2024-01-02");
  EXPECT_EQ(Cast(Str("2024-01-02T03:04:05.000006"), Type::Timestamp()), "2024-01-02 03:04:05.000006");
  EXPECT_EQ(Cast(Str("1 year 2 months"), Type::IntervalType()), "1 year 2 mons");
  EXPECT_EQ(Cast(Str("soon"), Type::IntervalType()), "error: invalid input for INTERVAL: 'soon'");
}

TEST(ValueCastTest, ToStringWithLengthCheck) {
  EXPECT_EQ(Cast(Str("abcdef"), Type::Varchar(3)), "error: value 'abcdef' is too long for VARCHAR(3)");
  EXPECT_EQ(Cast(Str("abcdef"), Type::Char(3)), "error: value 'abcdef' is too long for CHAR(3)");
  EXPECT_EQ(Cast(Str("abc   "), Type::Varchar(3)), "abc");
  EXPECT_EQ(Cast(Str("abc"), Type::Varchar(3)), "abc");
  EXPECT_EQ(Cast(Str("ab"), Type::Char(3)), "ab");
  EXPECT_EQ(Cast(Str("\xc3\xa9t\xc3\xa9"), Type::Varchar(3)), "\xc3\xa9t\xc3\xa9") << "counts characters";
  EXPECT_EQ(Cast(Value::Integer(12345), Type::Varchar(3)), "error: value '12345' is too long for VARCHAR(3)");
  EXPECT_EQ(Cast(Value::Integer(123), Type::Varchar()), "123");
  EXPECT_EQ(Cast(Dec("-0.05", 15, 2), Type::Varchar()), "-0.05");
  EXPECT_EQ(Cast(Value::Boolean(true), Type::Varchar()), "true");
  EXPECT_EQ(Cast(DateValue("1970-01-01"), Type::Varchar()), "1970-01-01");
  EXPECT_EQ(Cast(Value::Double(0.1), Type::Varchar()), "0.1");
}

TEST(ValueCastTest, NumericToNumeric) {
  EXPECT_EQ(Cast(Value::BigInt(2147483647), Type::Integer()), "2147483647");
  EXPECT_EQ(Cast(Value::BigInt(2147483648), Type::Integer()), "error: value 2147483648 is out of range for INTEGER");
  EXPECT_EQ(Cast(Value::BigInt(-2147483649), Type::Integer()), "error: value -2147483649 is out of range for INTEGER");
  EXPECT_EQ(Cast(Value::Integer(5), Type::BigInt()), "5");
  EXPECT_EQ(Cast(Value::Double(2.5), Type::Integer()), "3");
  EXPECT_EQ(Cast(Value::Double(-2.5), Type::Integer()), "-3");
  EXPECT_EQ(Cast(Value::Double(1e10), Type::Integer()), "error: value 1e+10 is out of range for INTEGER");
  EXPECT_EQ(Cast(Value::Double(9.3e18), Type::BigInt()), "error: value 9.3e+18 is out of range for BIGINT");
  EXPECT_EQ(Cast(Value::Double(std::nan("")), Type::BigInt()), "error: value nan is out of range for BIGINT");
  EXPECT_EQ(Cast(Dec("2.5", 10, 1), Type::Integer()), "3");
  EXPECT_EQ(Cast(Dec("-2.49", 10, 2), Type::Integer()), "-2");
  EXPECT_EQ(Cast(Dec("99999999999", 15, 2), Type::Integer()),
            "error: value 99999999999.00 is out of range for INTEGER");
  EXPECT_EQ(Cast(Value::Integer(123), Type::Decimal(5, 2)), "123.00");
  EXPECT_EQ(Cast(Value::Integer(1000), Type::Decimal(5, 2)), "error: value 1000 is out of range for DECIMAL(5,2)");
  EXPECT_EQ(Cast(Value::BigInt(INT64_MIN), Type::Decimal(38, 18)), "-9223372036854775808.000000000000000000");
  EXPECT_EQ(Cast(Value::BigInt(1), Type::Decimal(38, 38)), "error: value 1 is out of range for DECIMAL(38,38)");
  EXPECT_EQ(Cast(Dec("1.005", 10, 3), Type::Decimal(10, 2)), "1.01");
  EXPECT_EQ(Cast(Dec("-1.005", 10, 3), Type::Decimal(10, 2)), "-1.01");
  EXPECT_EQ(Cast(Dec("999.995", 10, 3), Type::Decimal(5, 2)), "error: value 999.995 is out of range for DECIMAL(5,2)");
  EXPECT_EQ(Cast(Dec("1.5", 2, 1), Type::Decimal(38, 37)), "1.5000000000000000000000000000000000000");
  EXPECT_EQ(Cast(Value::Double(0.1), Type::Decimal(15, 2)), "0.10");
  EXPECT_EQ(Cast(Value::Double(2.675), Type::Decimal(15, 2)), "2.68");
  EXPECT_EQ(Cast(Value::Double(1e20), Type::Decimal(15, 2)), "error: value 1e+20 is out of range for DECIMAL(15,2)");
  EXPECT_EQ(Cast(Value::Double(INFINITY), Type::Decimal(15, 2)), "error: value inf is out of range for DECIMAL(15,2)");
  EXPECT_EQ(Cast(Dec("123.45", 15, 2), Type::Double()), "123.45");
  EXPECT_EQ(Cast(Value::BigInt(1), Type::Double()), "1");
}

TEST(ValueCastTest, OtherPairs) {
  EXPECT_EQ(Cast(DateValue("2024-02-29"), Type::Timestamp()), "2024-02-29 00:00:00");
  EXPECT_EQ(Cast(Value::Timestamp(-1), Type::Date()), "1969-12-31");
  EXPECT_EQ(Cast(Value::Date(INT32_MAX), Type::Timestamp()),
            "error: value 5881580-07-11 is out of range for TIMESTAMP");
  EXPECT_EQ(Cast(Value::Integer(0), Type::Boolean()), "false");
  EXPECT_EQ(Cast(Value::BigInt(-3), Type::Boolean()), "true");
  EXPECT_EQ(Cast(Value::Boolean(true), Type::Integer()), "1");
  EXPECT_EQ(Cast(DateValue("2024-02-29"), Type::Boolean()), "error: cannot cast DATE to BOOLEAN");
  EXPECT_EQ(Cast(Value::Integer(1), Type::Date()), "error: cannot cast INTEGER to DATE");
  EXPECT_EQ(Cast(Value::IntervalValue({}), Type::Integer()), "error: cannot cast INTERVAL to INTEGER");
  EXPECT_EQ(Cast(Value::Integer(1), Type::Integer()), "1");
}

TEST(ValueCompareTest, NullFirst) {
  EXPECT_LT(Value::Null().Compare(Value::Integer(INT32_MIN)), 0);
  EXPECT_GT(Value::Integer(INT32_MIN).Compare(Value::Null(Type::Integer())), 0);
  EXPECT_EQ(Value::Null().Compare(Value::Null(Type::Integer())), 0);
}

TEST(ValueCompareTest, AcrossNumericTypesExactly) {
  EXPECT_EQ(Value::Integer(1).Compare(Value::BigInt(1)), 0);
  EXPECT_EQ(Value::Integer(1).Compare(Dec("1.00", 10, 2)), 0);
  EXPECT_EQ(Dec("1.0", 10, 1).Compare(Dec("1.00", 30, 2)), 0);
  EXPECT_LT(Dec("1.00", 10, 2).Compare(Dec("1.001", 10, 3)), 0);
  EXPECT_GT(Dec("-1.0001", 10, 4).Compare(Dec("-1.001", 10, 3)), 0);
  EXPECT_LT(Dec("-0.5", 10, 1).Compare(Value::Integer(0)), 0);
  EXPECT_GT(Dec("0.5", 10, 1).Compare(Value::Integer(0)), 0);
  EXPECT_LT(Value::Integer(2).Compare(Dec("2.01", 10, 2)), 0);
  EXPECT_GT(Value::BigInt(INT64_MAX).Compare(Value::BigInt(INT64_MAX - 1)), 0);
  EXPECT_GT(Dec(std::string(38, '9'), 38, 0).Compare(Value::BigInt(INT64_MAX)), 0);
  // Double vs exact: 0.1 as a double is slightly above 1/10; 2^53 + 1 is not representable as a double.
  EXPECT_GT(Value::Double(0.1).Compare(Dec("0.1", 10, 1)), 0);
  EXPECT_LT(Dec("0.1", 10, 1).Compare(Value::Double(0.1)), 0);
  EXPECT_LT(Value::Double(0.1).Compare(Dec("0.1000000000000000056", 30, 19)), 0);
  EXPECT_EQ(Value::Double(0.5).Compare(Dec("0.50", 10, 2)), 0);
  EXPECT_EQ(Value::Double(3).Compare(Value::Integer(3)), 0);
  EXPECT_LT(Value::Double(9007199254740992.0).Compare(Value::BigInt(9007199254740993)), 0);
  EXPECT_GT(Value::BigInt(9007199254740993).Compare(Value::Double(9007199254740992.0)), 0);
  EXPECT_LT(Value::Double(-1e300).Compare(Value::BigInt(INT64_MIN)), 0);
  EXPECT_GT(Value::Double(INFINITY).Compare(Dec(std::string(38, '9'), 38, 0)), 0);
  EXPECT_GT(Value::Double(std::nan("")).Compare(Value::Double(INFINITY)), 0);
  EXPECT_EQ(Value::Double(std::nan("")).Compare(Value::Double(std::nan(""))), 0);
  EXPECT_GT(Value::Double(std::nan("")).Compare(Value::Integer(1)), 0);
  EXPECT_EQ(Value::Double(-0.0).Compare(Value::Integer(0)), 0);
  EXPECT_EQ(Value::Double(-0.0).Compare(Value::Double(0.0)), 0);
  EXPECT_LT(Value::Double(5e-324).Compare(Dec("0." + std::string(37, '0') + "1", 38, 38)), 0);
}

TEST(ValueCompareTest, OtherTypes) {
  EXPECT_LT(Str("abc").Compare(Str("abd")), 0);
  EXPECT_LT(Str("ab").Compare(Str("abc")), 0);
  EXPECT_GT(Str("\xff").Compare(Str("a")), 0) << "bytewise, unsigned";
  EXPECT_EQ(Str("x").Compare(Value::String("x", Type::Char(1))), 0);
  EXPECT_LT(DateValue("1969-12-31").Compare(DateValue("1970-01-01")), 0);
  EXPECT_EQ(DateValue("1970-01-02").Compare(Value::Timestamp(kMicrosPerDay)), 0);
  EXPECT_LT(DateValue("1970-01-02").Compare(Value::Timestamp(kMicrosPerDay + 1)), 0);
  EXPECT_LT(Value::Boolean(false).Compare(Value::Boolean(true)), 0);
  EXPECT_GT(Value::IntervalValue({1, 0, 0}).Compare(Value::IntervalValue({0, 29, 0})), 0);
  EXPECT_LT(Value::IntervalValue({0, 1, 0}).Compare(Value::IntervalValue({0, 0, kMicrosPerDay + 1})), 0);
  EXPECT_NE(Value::IntervalValue({1, 0, 0}).Compare(Value::IntervalValue({0, 30, 0})), 0) << "total order";
}

TEST(ValueEqualityTest, TypeAndPayload) {
  EXPECT_EQ(Value::Integer(1), Value::Integer(1));
  EXPECT_NE(Value::Integer(1), Value::BigInt(1));
  EXPECT_NE(Dec("1.0", 5, 1), Dec("1.00", 5, 2));
  EXPECT_EQ(Str("a"), Str("a"));
  EXPECT_NE(Str("a"), Value::String("a", Type::Varchar(1)));
  EXPECT_EQ(Value::Double(std::nan("")), Value::Double(std::nan("")));
  EXPECT_NE(Value::Double(0.0), Value::Double(-0.0));
  EXPECT_EQ(Value::Null(Type::Date()), Value::Null(Type::Date()));
  EXPECT_NE(Value::Null(Type::Date()), Value::Date(0));
}

std::vector<Value> EveryKindOfValue() {
  const int128 wide_max = MaxDecimalUnscaled(38);
  return {
      Value::Null(),
      Value::Null(Type::Integer()),
      Value::Null(Type::Decimal(15, 2)),
      Value::Null(Type::Varchar(10)),
      Value::Boolean(true),
      Value::Boolean(false),
      Value::Integer(INT32_MIN),
      Value::Integer(INT32_MAX),
      Value::BigInt(INT64_MIN),
      Value::BigInt(INT64_MAX),
      Value::Double(0.1),
      Value::Double(-0.0),
      Value::Double(1.0 / 3),
      Value::Double(5e-324),
      Value::Double(std::numeric_limits<double>::max()),
      Value::Double(INFINITY),
      Value::Double(-INFINITY),
      Value::Double(std::nan("")),
      Value::Decimal(-5, Type::Decimal(15, 2)),
      Value::Decimal(wide_max, Type::Decimal(38, 0)),
      Value::Decimal(-wide_max, Type::Decimal(38, 38)),
      Value::Decimal(0, Type::Decimal(1, 1)),
      Value::Date(0),
      Value::Date(-719162),
      Value::Date(2932896),
      Value::Timestamp(-1),
      Value::Timestamp(INT64_MAX),
      Value::IntervalValue({-14, 3, INT64_MIN}),
      Value::IntervalValue({}),
      Value::String(""),
      Value::String("hello"),
      Value::String(std::string("a:b!c,\0\n\xff", 9)),
      Value::String("x", Type::Char(1)),
      Value::String("2:42", Type::Varchar(25)),
  };
}

TEST(ValueSerializeTest, RoundTripsEveryType) {
  for (const Value& v : EveryKindOfValue()) {
    std::string bytes = v.Serialize();
    absl::StatusOr<Value> back = Value::Deserialize(bytes);
    ASSERT_TRUE(back.ok()) << bytes << ": " << back.status();
    EXPECT_EQ(*back, v) << bytes;
    EXPECT_EQ(back->type(), v.type()) << bytes;
    EXPECT_EQ(back->Serialize(), bytes);
  }
}

TEST(ValueSerializeTest, KnownForms) {
  EXPECT_EQ(Value::Integer(42).Serialize(), "2:42");
  EXPECT_EQ(Value::Decimal(-1234, Type::Decimal(15, 2)).Serialize(), "5,15,2:-1234");
  EXPECT_EQ(Value::String("hello").Serialize(), "7,0:hello");
  EXPECT_EQ(Value::Null(Type::Integer()).Serialize(), "2!");
  EXPECT_EQ(Value::Null().Serialize(), "0!");
  EXPECT_EQ(Value::IntervalValue({14, 3, 5000}).Serialize(), "10:14,3,5000");
}

TEST(ValueSerializeTest, RejectsMalformedInput) {
  for (std::string_view bad : {"", "2", "2:", "2:x", "2:99999999999", "11:1", "-1:1", "5:1", "5,40,2:1", "5,3,2:1000",
                               "5,3,2:1.5", "7:abc", "7,-1:abc", "1:2", "10:1,2", "2!x", "4:nope", "0:x", "2,1:5"}) {
    EXPECT_FALSE(Value::Deserialize(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace tessera
