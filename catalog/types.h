#pragma once
// SQL types and their physical representation. A Type is a small value (copy freely); it says how values of a
// column are stored in blocks and column vectors:
//
//   BOOLEAN          uint8_t (0/1)
//   INTEGER          int32_t
//   BIGINT           int64_t
//   DOUBLE           double
//   DECIMAL(p,s)     p <= 18: int64_t holding value * 10^s;  18 < p <= 38: __int128 holding value * 10^s
//   DATE             int32_t days since 1970-01-01
//   TIMESTAMP        int64_t microseconds since 1970-01-01 00:00:00
//   INTERVAL         Interval {int32 months, int32 days, int64 micros}
//   CHAR(n)/VARCHAR(n)  variable-length bytes (offsets + heap in blocks); n = 0 means unbounded VARCHAR
//   NULL             the type of an untyped NULL literal; no storage
//
// NULL-ness is not part of the type: every column may hold NULL unless its schema says NOT NULL.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tessera {

enum class TypeId : uint8_t {
  kNull = 0,
  kBoolean = 1,
  kInteger = 2,
  kBigInt = 3,
  kDouble = 4,
  kDecimal = 5,
  kChar = 6,
  kVarchar = 7,
  kDate = 8,
  kTimestamp = 9,
  kInterval = 10,
};

using int128 = __int128;

struct Interval {
  int32_t months = 0;
  int32_t days = 0;
  int64_t micros = 0;
  friend bool operator==(const Interval&, const Interval&) = default;
};

constexpr int kMaxDecimalPrecision = 38;
constexpr int kMaxInt64DecimalPrecision = 18;

class Type {
 public:
  constexpr Type() = default;

  static constexpr Type Null() { return Type(TypeId::kNull); }
  static constexpr Type Boolean() { return Type(TypeId::kBoolean); }
  static constexpr Type Integer() { return Type(TypeId::kInteger); }
  static constexpr Type BigInt() { return Type(TypeId::kBigInt); }
  static constexpr Type Double() { return Type(TypeId::kDouble); }
  static constexpr Type Date() { return Type(TypeId::kDate); }
  static constexpr Type Timestamp() { return Type(TypeId::kTimestamp); }
  static constexpr Type IntervalType() { return Type(TypeId::kInterval); }
  // Precondition: 1 <= precision <= 38, 0 <= scale <= precision (use MakeDecimal for user input).
  static constexpr Type Decimal(int precision, int scale) { return Type(TypeId::kDecimal, precision, scale, 0); }
  static constexpr Type Char(uint32_t length) { return Type(TypeId::kChar, 0, 0, length); }
  static constexpr Type Varchar(uint32_t max_length = 0) { return Type(TypeId::kVarchar, 0, 0, max_length); }

  // Validating constructors for types written by users; errors name the offending parameter.
  static absl::StatusOr<Type> MakeDecimal(int64_t precision, int64_t scale);
  static absl::StatusOr<Type> MakeChar(int64_t length);
  static absl::StatusOr<Type> MakeVarchar(int64_t max_length);
  // Resolves a type name as written in SQL (upper-case), e.g. ("DECIMAL", {15, 2}), ("INT", {}), ("TEXT", {}).
  static absl::StatusOr<Type> FromName(const std::string& name, const int64_t* parameters, size_t parameter_count);

  constexpr TypeId id() const { return id_; }
  constexpr int precision() const { return precision_; }
  constexpr int scale() const { return scale_; }
  // CHAR(n) length or VARCHAR(n) maximum length; 0 = unbounded VARCHAR.
  constexpr uint32_t length() const { return length_; }

  constexpr bool IsString() const { return id_ == TypeId::kChar || id_ == TypeId::kVarchar; }
  constexpr bool IsNumeric() const {
    return id_ == TypeId::kInteger || id_ == TypeId::kBigInt || id_ == TypeId::kDouble || id_ == TypeId::kDecimal;
  }
  constexpr bool IsWideDecimal() const { return id_ == TypeId::kDecimal && precision_ > kMaxInt64DecimalPrecision; }
  // Bytes per value in a fixed-width column; 0 for strings and NULL.
  constexpr int FixedWidth() const {
    switch (id_) {
      case TypeId::kBoolean:
        return 1;
      case TypeId::kInteger:
      case TypeId::kDate:
        return 4;
      case TypeId::kBigInt:
      case TypeId::kDouble:
      case TypeId::kTimestamp:
        return 8;
      case TypeId::kDecimal:
        return precision_ > kMaxInt64DecimalPrecision ? 16 : 8;
      case TypeId::kInterval:
        return 16;
      default:
        return 0;
    }
  }

  // SQL spelling: "INTEGER", "DECIMAL(15,2)", "VARCHAR(25)", "CHAR(1)".
  std::string ToString() const;

  friend constexpr bool operator==(const Type&, const Type&) = default;

 private:
  constexpr explicit Type(TypeId id, int precision = 0, int scale = 0, uint32_t length = 0)
      : id_(id), precision_(static_cast<uint8_t>(precision)), scale_(static_cast<uint8_t>(scale)), length_(length) {}

  TypeId id_ = TypeId::kNull;
  uint8_t precision_ = 0;
  uint8_t scale_ = 0;
  uint32_t length_ = 0;
};

}  // namespace tessera
