#pragma once
// Value: one typed SQL scalar, possibly NULL. Used for literals, defaults, column statistics (min/max) and
// row-at-a-time paths such as result printing; never inside vectorized hot loops (it may own a std::string).
//
// Representation follows catalog/types.h: INTEGER/BIGINT/DATE/TIMESTAMP/BOOLEAN and DECIMAL (unscaled, any
// precision) are kept as an integer, DOUBLE as a double, CHAR/VARCHAR as bytes, INTERVAL as an Interval.
// A default-constructed Value is the untyped NULL.
//
// Value is a regular value type: copyable, movable, not synchronized (share const Values freely across
// threads).

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "catalog/types.h"

namespace tessera {

class Value {
 public:
  Value() = default;

  static Value Null(Type type = Type::Null());
  static Value Boolean(bool value);
  static Value Integer(int32_t value);
  static Value BigInt(int64_t value);
  static Value Double(double value);
  // `unscaled` = value * 10^scale of `decimal_type`; DCHECKs that it fits the type's precision.
  static Value Decimal(int128 unscaled, Type decimal_type);
  static Value Date(int32_t days);
  static Value Timestamp(int64_t micros);
  static Value IntervalValue(Interval interval);
  // A value of an exactly ordered type (BOOLEAN, INTEGER, BIGINT, DECIMAL as unscaled, DATE, TIMESTAMP) from its
  // integer representation; NULL of `type` for any other type.
  static Value FromExact(int128 value, const Type& type);
  // `type` must be CHAR(n) or VARCHAR(n); the length is not checked here (CastTo checks it).
  static Value String(std::string value, Type type = Type::Varchar());

  Type type() const { return type_; }
  bool is_null() const { return is_null_; }

  // Accessors DCHECK a non-NULL value of a fitting type.
  bool AsBool() const;
  // INTEGER, BIGINT, DATE, TIMESTAMP, BOOLEAN (0/1), and the unscaled value of DECIMAL with precision <= 18.
  int64_t AsInt64() const;
  // Unscaled value of any DECIMAL, or any integer-represented type as in AsInt64.
  int128 AsInt128() const;
  // Any numeric type converted to double (DECIMAL divided by 10^scale).
  double AsDouble() const;
  const std::string& AsString() const;
  const Interval& AsInterval() const;

  // SQL text: "NULL", "true", "123.40", "2024-02-29", "2024-02-29 12:00:00.5", "1 year 2 mons", raw string
  // bytes.
  std::string ToString() const;

  // Converts to `target` as SQL CAST does. NULL casts to NULL of any type. Errors (InvalidArgument) name the
  // value and the type: "invalid input for INTEGER: 'abc'", "value 99999999999 is out of range for INTEGER",
  // "value 'abcdef' is too long for VARCHAR(3)", "cannot cast DATE to BOOLEAN".
  // Numeric narrowing rounds half away from zero (DOUBLE/DECIMAL -> INTEGER/BIGINT/DECIMAL of smaller scale).
  // String -> other types parses the text with surrounding whitespace trimmed (catalog/text_conversion.h).
  // CHAR(n)/VARCHAR(n) count UTF-8 characters and reject longer values unless the excess is trailing spaces,
  // which are then removed (SQL standard). CHAR(n) is not blank-padded (as in DuckDB): it behaves as
  // VARCHAR(n). Also allowed: INTEGER/BIGINT <-> BOOLEAN (non-zero is true), DATE <-> TIMESTAMP (floor to the
  // day).
  absl::StatusOr<Value> CastTo(Type target) const;

  // Total order used by statistics and sorting of literals: NULL first; numeric types compared exactly by
  // value (DECIMAL vs INTEGER vs DOUBLE, NaN above every number); strings bytewise; DATE vs TIMESTAMP by
  // instant; intervals as PostgreSQL orders them (1 month = 30 days, 1 day = 24 hours; ties then by months,
  // days). Values of unrelated types order by TypeId.
  int Compare(const Value& other) const;
  // Same type, same NULL-ness and same payload (so DECIMAL(5,1) 1.0 != DECIMAL(5,2) 1.00; use Compare for
  // that).
  friend bool operator==(const Value& a, const Value& b);

  // Compact, exact text form "<TypeId>[,<p>,<s>|,<len>]" then ':' and the payload, or '!' for NULL:
  // "2:42", "5,15,2:-1234" (unscaled), "7,0:hello" (raw bytes, any content), "4:0.1" (shortest round-trip),
  // "10:14,3,5000" (months,days,micros), "2!" (NULL INTEGER), "0!" (untyped NULL). Deserialize inverts it
  // exactly (type included) and rejects anything else with InvalidArgument.
  std::string Serialize() const;
  static absl::StatusOr<Value> Deserialize(std::string_view bytes);

 private:
  Type type_ = Type::Null();
  bool is_null_ = true;
  int128 int_ = 0;  // BOOLEAN, INTEGER, BIGINT, DECIMAL (unscaled), DATE, TIMESTAMP
  double double_ = 0;
  Interval interval_;
  std::string string_;
};

}  // namespace tessera
