#include "catalog/stored_type.h"

#include "absl/strings/str_cat.h"

namespace tessera {

absl::StatusOr<Type> TypeFromStoredParts(int64_t id, int64_t first, int64_t second) {
  if (id < 0 || id > static_cast<int64_t>(TypeId::kInterval)) {
    return absl::InvalidArgumentError(absl::StrCat("stored type id ", id, " names no type"));
  }
  switch (static_cast<TypeId>(id)) {
    case TypeId::kNull:
      return Type::Null();
    case TypeId::kBoolean:
      return Type::Boolean();
    case TypeId::kInteger:
      return Type::Integer();
    case TypeId::kBigInt:
      return Type::BigInt();
    case TypeId::kDouble:
      return Type::Double();
    case TypeId::kDecimal:
      return Type::MakeDecimal(first, second);
    case TypeId::kChar:
      return Type::MakeChar(first);
    case TypeId::kVarchar:
      return Type::MakeVarchar(first);
    case TypeId::kDate:
      return Type::Date();
    case TypeId::kTimestamp:
      return Type::Timestamp();
    case TypeId::kInterval:
      return Type::IntervalType();
  }
  return absl::InvalidArgumentError(absl::StrCat("stored type id ", id, " names no type"));
}

}  // namespace tessera
