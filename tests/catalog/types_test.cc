#include "catalog/types.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace tessera {
namespace {

absl::StatusOr<Type> FromName(const std::string& name, std::initializer_list<int64_t> params = {}) {
  return Type::FromName(name, params.begin(), params.size());
}

TEST(TypeTest, MakeDecimalValidatesPrecisionAndScale) {
  EXPECT_EQ(*Type::MakeDecimal(15, 2), Type::Decimal(15, 2));
  EXPECT_EQ(*Type::MakeDecimal(1, 0), Type::Decimal(1, 0));
  EXPECT_EQ(*Type::MakeDecimal(38, 38), Type::Decimal(38, 38));
  EXPECT_EQ(Type::MakeDecimal(40, 2).status().message(), "DECIMAL precision 40 is out of range (1 to 38)");
  EXPECT_EQ(Type::MakeDecimal(0, 0).status().message(), "DECIMAL precision 0 is out of range (1 to 38)");
  EXPECT_EQ(Type::MakeDecimal(3, 5).status().message(), "DECIMAL scale 5 is out of range (0 to precision 3)");
  EXPECT_FALSE(Type::MakeDecimal(10, -1).ok());
}

TEST(TypeTest, MakeCharAndVarcharValidateLength) {
  EXPECT_EQ(*Type::MakeChar(1), Type::Char(1));
  EXPECT_EQ(*Type::MakeChar(1 << 20), Type::Char(1 << 20));
  EXPECT_EQ(Type::MakeChar(0).status().message(), "CHAR length 0 is out of range (1 to 1048576)");
  EXPECT_FALSE(Type::MakeChar((1 << 20) + 1).ok());
  EXPECT_EQ(*Type::MakeVarchar(0), Type::Varchar());
  EXPECT_EQ(*Type::MakeVarchar(25), Type::Varchar(25));
  EXPECT_EQ(Type::MakeVarchar(-1).status().message(), "VARCHAR length -1 is out of range (0 to 1048576)");
  EXPECT_FALSE(Type::MakeVarchar((1 << 20) + 1).ok());
}

TEST(TypeTest, FromNameResolvesSynonyms) {
  for (const char* name : {"INTEGER", "INT", "INT4", "integer"}) EXPECT_EQ(*FromName(name), Type::Integer()) << name;
  for (const char* name : {"BIGINT", "INT8"}) EXPECT_EQ(*FromName(name), Type::BigInt()) << name;
  for (const char* name : {"DOUBLE", "FLOAT", "FLOAT8", "REAL"}) EXPECT_EQ(*FromName(name), Type::Double()) << name;
  for (const char* name : {"BOOLEAN", "BOOL"}) EXPECT_EQ(*FromName(name), Type::Boolean()) << name;
  for (const char* name : {"VARCHAR", "TEXT", "STRING"}) EXPECT_EQ(*FromName(name), Type::Varchar()) << name;
  EXPECT_EQ(*FromName("DATE"), Type::Date());
  EXPECT_EQ(*FromName("TIMESTAMP"), Type::Timestamp());
  EXPECT_EQ(*FromName("INTERVAL"), Type::IntervalType());
}

TEST(TypeTest, FromNameParameters) {
  EXPECT_EQ(*FromName("DECIMAL"), Type::Decimal(18, 3));
  EXPECT_EQ(*FromName("NUMERIC", {10}), Type::Decimal(10, 0));
  EXPECT_EQ(*FromName("DECIMAL", {15, 2}), Type::Decimal(15, 2));
  EXPECT_EQ(FromName("DECIMAL", {40, 2}).status().message(), "DECIMAL precision 40 is out of range (1 to 38)");
  EXPECT_EQ(FromName("DECIMAL", {1, 2, 3}).status().message(), "type DECIMAL takes at most 2 parameters (got 3)");
  EXPECT_EQ(*FromName("CHAR"), Type::Char(1));
  EXPECT_EQ(*FromName("CHARACTER", {10}), Type::Char(10));
  EXPECT_EQ(*FromName("VARCHAR", {25}), Type::Varchar(25));
  EXPECT_EQ(FromName("VARCHAR", {1, 2}).status().message(), "type VARCHAR takes at most 1 parameter (got 2)");
  EXPECT_EQ(FromName("INTEGER", {4}).status().message(), "type INTEGER takes no parameters (got 1)");
  EXPECT_EQ(FromName("TEXT", {4}).status().message(), "type TEXT takes no parameters (got 1)");
  EXPECT_EQ(FromName("FOO").status().message(), "unknown type 'FOO'");
  EXPECT_EQ(FromName("FOO").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TypeTest, ToStringIsSqlSpelling) {
  EXPECT_EQ(Type::Null().ToString(), "NULL");
  EXPECT_EQ(Type::Boolean().ToString(), "BOOLEAN");
  EXPECT_EQ(Type::Integer().ToString(), "INTEGER");
  EXPECT_EQ(Type::BigInt().ToString(), "BIGINT");
  EXPECT_EQ(Type::Double().ToString(), "DOUBLE");
  EXPECT_EQ(Type::Decimal(15, 2).ToString(), "DECIMAL(15,2)");
  EXPECT_EQ(Type::Char(1).ToString(), "CHAR(1)");
  EXPECT_EQ(Type::Varchar(25).ToString(), "VARCHAR(25)");
  EXPECT_EQ(Type::Varchar().ToString(), "VARCHAR");
  EXPECT_EQ(Type::Date().ToString(), "DATE");
  EXPECT_EQ(Type::Timestamp().ToString(), "TIMESTAMP");
  EXPECT_EQ(Type::IntervalType().ToString(), "INTERVAL");
}

TEST(TypeTest, ToStringRoundTripsThroughFromName) {
  for (Type t :
       {Type::Integer(), Type::BigInt(), Type::Double(), Type::Decimal(38, 10), Type::Char(3), Type::Varchar(7),
        Type::Varchar(), Type::Date(), Type::Timestamp(), Type::IntervalType(), Type::Boolean()}) {
    std::string s = t.ToString();
    std::string name = s.substr(0, s.find('('));
    std::vector<int64_t> params;
    if (s.find('(') != std::string::npos) {
      std::string inner = s.substr(s.find('(') + 1);
      params.push_back(std::stoll(inner));
      if (inner.find(',') != std::string::npos) params.push_back(std::stoll(inner.substr(inner.find(',') + 1)));
    }
    EXPECT_EQ(*Type::FromName(name, params.data(), params.size()), t) << s;
  }
}

TEST(TypeTest, FixedWidth) {
  EXPECT_EQ(Type::Decimal(18, 2).FixedWidth(), 8);
  EXPECT_EQ(Type::Decimal(19, 2).FixedWidth(), 16);
  EXPECT_TRUE(Type::Decimal(19, 2).IsWideDecimal());
  EXPECT_EQ(Type::Varchar().FixedWidth(), 0);
}

}  // namespace
}  // namespace tessera
