#include "catalog/types.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

constexpr int64_t kMaxStringLength = int64_t{1} << 20;

// The type DECIMAL without parameters resolves to. The SQL standard leaves it to the implementation; DuckDB
// uses DECIMAL(18,3), which keeps the narrow 64-bit representation and three fraction digits for money-like
// data.
constexpr int kDefaultDecimalPrecision = 18;
constexpr int kDefaultDecimalScale = 3;

absl::Status WrongParameterCount(const std::string& name, size_t got, size_t max) {
  if (max == 0) return absl::InvalidArgumentError(absl::StrCat("type ", name, " takes no parameters (got ", got, ")"));
  return absl::InvalidArgumentError(
      absl::StrCat("type ", name, " takes at most ", max, " parameter", max == 1 ? "" : "s", " (got ", got, ")"));
}

}  // namespace

absl::StatusOr<Type> Type::MakeDecimal(int64_t precision, int64_t scale) {
  if (precision < 1 || precision > kMaxDecimalPrecision) {
    return absl::InvalidArgumentError(
        absl::StrCat("DECIMAL precision ", precision, " is out of range (1 to ", kMaxDecimalPrecision, ")"));
  }
  if (scale < 0 || scale > precision) {
    return absl::InvalidArgumentError(
        absl::StrCat("DECIMAL scale ", scale, " is out of range (0 to precision ", precision, ")"));
  }
  return Decimal(static_cast<int>(precision), static_cast<int>(scale));
}

absl::StatusOr<Type> Type::MakeChar(int64_t length) {
  if (length < 1 || length > kMaxStringLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("CHAR length ", length, " is out of range (1 to ", kMaxStringLength, ")"));
  }
  return Char(static_cast<uint32_t>(length));
}

absl::StatusOr<Type> Type::MakeVarchar(int64_t max_length) {
  if (max_length < 0 || max_length > kMaxStringLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("VARCHAR length ", max_length, " is out of range (0 to ", kMaxStringLength, ")"));
  }
  return Varchar(static_cast<uint32_t>(max_length));
}

absl::StatusOr<Type> Type::FromName(const std::string& name, const int64_t* parameters, size_t parameter_count) {
  const std::string upper = absl::AsciiStrToUpper(name);
  auto simple = [&](Type type) -> absl::StatusOr<Type> {
    if (parameter_count != 0) return WrongParameterCount(upper, parameter_count, 0);
    return type;
  };
  if (upper == "INTEGER" || upper == "INT" || upper == "INT4") return simple(Integer());
  if (upper == "BIGINT" || upper == "INT8") return simple(BigInt());
  if (upper == "DOUBLE" || upper == "FLOAT" || upper == "FLOAT8" || upper == "REAL") return simple(Double());
  if (upper == "DATE") return simple(Date());
  if (upper == "TIMESTAMP") return simple(Timestamp());
  if (upper == "INTERVAL") return simple(IntervalType());
  if (upper == "BOOLEAN" || upper == "BOOL") return simple(Boolean());
  if (upper == "TEXT" || upper == "STRING") return simple(Varchar());
  if (upper == "DECIMAL" || upper == "NUMERIC") {
    switch (parameter_count) {
      case 0:
        return Decimal(kDefaultDecimalPrecision, kDefaultDecimalScale);
      case 1:
        return MakeDecimal(parameters[0], 0);
      case 2:
        return MakeDecimal(parameters[0], parameters[1]);
      default:
        return WrongParameterCount(upper, parameter_count, 2);
    }
  }
  if (upper == "CHAR" || upper == "CHARACTER") {
    if (parameter_count > 1) return WrongParameterCount(upper, parameter_count, 1);
    return parameter_count == 0 ? Char(1) : MakeChar(parameters[0]);
  }
  if (upper == "VARCHAR") {
    if (parameter_count > 1) return WrongParameterCount(upper, parameter_count, 1);
    return parameter_count == 0 ? Varchar() : MakeVarchar(parameters[0]);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown type '", name, "'"));
}

std::string Type::ToString() const {
  switch (id_) {
    case TypeId::kNull:
      return "NULL";
    case TypeId::kBoolean:
      return "BOOLEAN";
    case TypeId::kInteger:
      return "INTEGER";
    case TypeId::kBigInt:
      return "BIGINT";
    case TypeId::kDouble:
      return "DOUBLE";
    case TypeId::kDecimal:
      return absl::StrCat("DECIMAL(", precision_, ",", scale_, ")");
    case TypeId::kChar:
      return absl::StrCat("CHAR(", length_, ")");
    case TypeId::kVarchar:
      return length_ == 0 ? std::string("VARCHAR") : absl::StrCat("VARCHAR(", length_, ")");
    case TypeId::kDate:
      return "DATE";
    case TypeId::kTimestamp:
      return "TIMESTAMP";
    case TypeId::kInterval:
      return "INTERVAL";
  }
  return absl::StrCat("TYPE#", static_cast<int>(id_));
}

}  // namespace tessera
