// TypeFromStoredParts (catalog/stored_type.h): every type comes back from its stored id and parameters, and ids or
// parameters a CREATE TABLE would refuse are refused.

#include "catalog/stored_type.h"

#include <vector>

#include "catalog/types.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

TEST(StoredTypeTest, EveryTypeComesBackFromItsIdAndParameters) {
  const std::vector<Type> types = {Type::Null(),      Type::Boolean(),      Type::Integer(),   Type::BigInt(),
                                   Type::Double(),    Type::Decimal(15, 2), Type::Char(10),    Type::Varchar(),
                                   Type::Varchar(25), Type::Date(),         Type::Timestamp(), Type::IntervalType()};
  for (const Type& type : types) {
    const int64_t first = type.IsString() ? type.length() : type.precision();
    absl::StatusOr<Type> made = TypeFromStoredParts(static_cast<int64_t>(type.id()), first, type.scale());
    ASSERT_TRUE(made.ok()) << type.ToString() << ": " << made.status();
    EXPECT_EQ(*made, type) << type.ToString();
  }
}

TEST(StoredTypeTest, IdsThatNameNoTypeAreRefused) {
  EXPECT_EQ(TypeFromStoredParts(-1, 0, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TypeFromStoredParts(static_cast<int64_t>(TypeId::kInterval) + 1, 0, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StoredTypeTest, ParametersOutOfRangeAreRefused) {
  const auto decimal = static_cast<int64_t>(TypeId::kDecimal);
  EXPECT_FALSE(TypeFromStoredParts(decimal, 0, 0).ok());
  EXPECT_FALSE(TypeFromStoredParts(decimal, 39, 0).ok());
  EXPECT_FALSE(TypeFromStoredParts(decimal, 5, 6).ok());
  EXPECT_FALSE(TypeFromStoredParts(static_cast<int64_t>(TypeId::kChar), 0, 0).ok());
  EXPECT_FALSE(TypeFromStoredParts(static_cast<int64_t>(TypeId::kVarchar), int64_t{1} << 40, 0).ok());
}

}  // namespace
}  // namespace tessera
