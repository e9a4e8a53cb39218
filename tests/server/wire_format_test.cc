// Column types on the wire (server/wire_format.h): TypeToProto and TypeFromProto round-trip every type, and a
// header naming no type or an invalid one is refused rather than trusted.

#include "server/wire_format.h"

#include <vector>

#include "catalog/types.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

TEST(WireFormatTest, EveryColumnTypeRoundTrips) {
  const std::vector<Type> types = {Type::Null(),      Type::Boolean(),       Type::Integer(),   Type::BigInt(),
                                   Type::Double(),    Type::Decimal(38, 10), Type::Char(1),     Type::Varchar(),
                                   Type::Varchar(80), Type::Date(),          Type::Timestamp(), Type::IntervalType()};
  for (const Type& type : types) {
    v1::ColumnType proto;
    TypeToProto(type, &proto);
    absl::StatusOr<Type> back = TypeFromProto(proto);
    ASSERT_TRUE(back.ok()) << type.ToString() << ": " << back.status();
    EXPECT_EQ(*back, type) << type.ToString();
  }
}

TEST(WireFormatTest, InvalidColumnTypesAreRefused) {
  v1::ColumnType unknown;
  unknown.set_id(static_cast<v1::TypeId>(42));
  EXPECT_EQ(TypeFromProto(unknown).status().code(), absl::StatusCode::kInvalidArgument);

  v1::ColumnType long_varchar;
  long_varchar.set_id(v1::TYPE_VARCHAR);
  long_varchar.set_length(1u << 30);
  EXPECT_EQ(TypeFromProto(long_varchar).status().code(), absl::StatusCode::kInvalidArgument);

  v1::ColumnType decimal;
  decimal.set_id(v1::TYPE_DECIMAL);
  decimal.set_precision(4);
  decimal.set_scale(5);
  EXPECT_EQ(TypeFromProto(decimal).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
