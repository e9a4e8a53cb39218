#include "catalog/value.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "catalog/stored_type.h"
#include "catalog/text_conversion.h"
#include "glog/logging.h"

namespace tessera {
namespace {

enum class Family { kNull, kBoolean, kExact, kDouble, kString, kDateTime, kInterval };

Family FamilyOf(TypeId id) {
  switch (id) {
    case TypeId::kNull:
      return Family::kNull;
    case TypeId::kBoolean:
      return Family::kBoolean;
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kDecimal:
      return Family::kExact;
    case TypeId::kDouble:
      return Family::kDouble;
    case TypeId::kChar:
    case TypeId::kVarchar:
      return Family::kString;
    case TypeId::kDate:
    case TypeId::kTimestamp:
      return Family::kDateTime;
    case TypeId::kInterval:
      return Family::kInterval;
  }
  return Family::kNull;
}

template <typename T>
int Sign(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int128 Abs(int128 v) { return v < 0 ? -v : v; }

// This abseil build has its own string_view type; convert explicitly at StrCat/escaping calls.
absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string_view TrimSpaces(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// u / divisor rounded half away from zero (divisor > 0).
int128 DivideRounded(int128 u, int128 divisor) {
  int128 q = u / divisor;
  int128 r = Abs(u % divisor);
  if (r >= divisor - r) q += u < 0 ? -1 : 1;
  return q;
}

// Rescales unscaled `u` at `from_scale` to DECIMAL(precision, to_scale); false when it does not fit.
bool Rescale(int128 u, int from_scale, int precision, int to_scale, int128* out) {
  if (to_scale >= from_scale) {
    int d = to_scale - from_scale;
    if (Abs(u) >= PowerOfTen(precision - d)) return false;
    *out = u * PowerOfTen(d);
    return true;
  }
  int128 r = DivideRounded(u, PowerOfTen(from_scale - to_scale));
  if (Abs(r) >= PowerOfTen(precision)) return false;
  *out = r;
  return true;
}

// Compares u1 / 10^s1 with u2 / 10^s2 exactly.
int CompareExact(int128 u1, int s1, int128 u2, int s2) {
  if (s1 == s2) return Sign(u1, u2);
  int128 q1 = u1 / PowerOfTen(s1), q2 = u2 / PowerOfTen(s2);
  if (q1 != q2) return Sign(q1, q2);
  // Same integer part (truncated toward zero): the remainders carry the value's sign and compare at a common
  // scale.
  int s = s1 > s2 ? s1 : s2;
  int128 r1 = (u1 % PowerOfTen(s1)) * PowerOfTen(s - s1);
  int128 r2 = (u2 % PowerOfTen(s2)) * PowerOfTen(s - s2);
  return Sign(r1, r2);
}

// Compares two plain decimal numerals "[-]digits[.digits]" by value.
int CompareDecimalText(std::string_view a, std::string_view b) {
  struct Parts {
    int sign = 1;
    std::string_view integer, fraction;
  };
  auto split = [](std::string_view s) {
    Parts p;
    if (!s.empty() && s.front() == '-') {
      p.sign = -1;
      s.remove_prefix(1);
    }
    size_t dot = s.find('.');
    p.integer = s.substr(0, dot);
    p.fraction = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
    while (!p.integer.empty() && p.integer.front() == '0') p.integer.remove_prefix(1);
    while (!p.fraction.empty() && p.fraction.back() == '0') p.fraction.remove_suffix(1);
    if (p.integer.empty() && p.fraction.empty()) p.sign = 0;
    return p;
  };
  Parts x = split(a), y = split(b);
  if (x.sign != y.sign) return Sign(x.sign, y.sign);
  if (x.sign == 0) return 0;
  int magnitude = Sign(x.integer.size(), y.integer.size());
  if (magnitude == 0) magnitude = Sign(x.integer.compare(y.integer), 0);
  if (magnitude == 0) magnitude = Sign(x.fraction.compare(y.fraction), 0);
  return magnitude * x.sign;
}

// Compares a double with u / 10^scale exactly; NaN is above every number.
int CompareDoubleExact(double d, int128 u, int scale) {
  if (std::isnan(d)) return 1;
  if (std::isinf(d)) return d > 0 ? 1 : -1;
  // Every finite double has a finite decimal expansion (at most 1074 fraction digits); compare the numerals.
  char buffer[1500];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), d, std::chars_format::fixed, 1074);
  DCHECK(ec == std::errc());
  std::string exact;
  AppendDecimal(u, scale, &exact);
  return CompareDecimalText(std::string_view(buffer, ptr - buffer), exact);
}

int CompareDoubles(double a, double b) {
  bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan || b_nan) return Sign(a_nan, b_nan);
  return Sign(a, b);
}

// Number of UTF-8 code points (continuation bytes are not counted).
size_t CharacterCount(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool LooksLikeInteger(std::string_view s) {
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

absl::Status OutOfRange(std::string_view value_text, Type target) {
  return absl::InvalidArgumentError(
      absl::StrCat("value ", AsAbsl(value_text), " is out of range for ", target.ToString()));
}

absl::Status InvalidInput(std::string_view text, Type target) {
  return absl::InvalidArgumentError(absl::StrCat("invalid input for ", target.ToString(), ": '", AsAbsl(text), "'"));
}

absl::StatusOr<Value> MakeStringOfType(std::string text, Type target) {
  if (target.length() != 0) {
    size_t count = CharacterCount(text);
    if (count > target.length()) {
      // SQL: excess trailing spaces are silently removed; anything else is an error.
      size_t excess = count - target.length();
      size_t spaces = 0;
      while (spaces < text.size() && text[text.size() - 1 - spaces] == ' ') ++spaces;
      if (spaces < excess) {
        return absl::InvalidArgumentError(absl::StrCat("value '", text, "' is too long for ", target.ToString()));
      }
      text.resize(text.size() - excess);
    }
  }
  return Value::String(std::move(text), target);
}

absl::StatusOr<Value> ParseAs(std::string_view original, Type target) {
  const std::string_view text = TrimSpaces(original);
  switch (target.id()) {
    case TypeId::kBoolean: {
      bool b;
      if (ParseBoolean(text, &b)) return Value::Boolean(b);
      break;
    }
    case TypeId::kInteger: {
      int32_t v;
      if (ParseInt32(text, &v)) return Value::Integer(v);
      if (LooksLikeInteger(text)) return OutOfRange(text, target);
      break;
    }
    case TypeId::kBigInt: {
      int64_t v;
      if (ParseInt64(text, &v)) return Value::BigInt(v);
      if (LooksLikeInteger(text)) return OutOfRange(text, target);
      break;
    }
    case TypeId::kDouble: {
      double v;
      if (ParseDouble(text, &v)) return Value::Double(v);
      break;
    }
    case TypeId::kDecimal: {
      int128 u;
      if (ParseDecimal(text, target.precision(), target.scale(), &u)) return Value::Decimal(u, target);
      double ignored;
      if (ParseDouble(text, &ignored) && std::isfinite(ignored)) return OutOfRange(text, target);
      break;
    }
    case TypeId::kDate: {
      int32_t days;
      if (ParseDate(text, &days)) return Value::Date(days);
      int64_t micros;
      if (ParseTimestamp(text, &micros)) {
        return Value::Date(
            static_cast<int32_t>(micros >= 0 ? micros / kMicrosPerDay : -((-(micros + 1)) / kMicrosPerDay) - 1));
      }
      break;
    }
    case TypeId::kTimestamp: {
      int64_t micros;
      if (ParseTimestamp(text, &micros)) return Value::Timestamp(micros);
      break;
    }
    case TypeId::kInterval: {
      Interval interval;
      if (ParseInterval(text, "", &interval)) return Value::IntervalValue(interval);
      break;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("cannot cast VARCHAR to ", target.ToString()));
  }
  return InvalidInput(original, target);
}

absl::Status CannotCast(Type from, Type to) {
  return absl::InvalidArgumentError(absl::StrCat("cannot cast ", from.ToString(), " to ", to.ToString()));
}

}  // namespace

Value Value::Null(Type type) {
  Value v;
  v.type_ = type;
  return v;
}

Value Value::Boolean(bool value) {
  Value v;
  v.type_ = Type::Boolean();
  v.is_null_ = false;
  v.int_ = value ? 1 : 0;
  return v;
}

Value Value::Integer(int32_t value) {
  Value v;
  v.type_ = Type::Integer();
  v.is_null_ = false;
  v.int_ = value;
  return v;
}

Value Value::BigInt(int64_t value) {
  Value v;
  v.type_ = Type::BigInt();
  v.is_null_ = false;
  v.int_ = value;
  return v;
}

Value Value::Double(double value) {
  Value v;
  v.type_ = Type::Double();
  v.is_null_ = false;
  v.double_ = value;
  return v;
}

Value Value::Decimal(int128 unscaled, Type decimal_type) {
  DCHECK(decimal_type.id() == TypeId::kDecimal);
  DCHECK(Abs(unscaled) < PowerOfTen(decimal_type.precision()))
      << Int128ToString(unscaled) << " does not fit " << decimal_type.ToString();
  Value v;
  v.type_ = decimal_type;
  v.is_null_ = false;
  v.int_ = unscaled;
  return v;
}

Value Value::Date(int32_t days) {
  Value v;
  v.type_ = Type::Date();
  v.is_null_ = false;
  v.int_ = days;
  return v;
}

Value Value::FromExact(int128 value, const Type& type) {
  switch (type.id()) {
    case TypeId::kBoolean:
      return Boolean(value != 0);
    case TypeId::kInteger:
      return Integer(static_cast<int32_t>(value));
    case TypeId::kDate:
      return Date(static_cast<int32_t>(value));
    case TypeId::kBigInt:
      return BigInt(static_cast<int64_t>(value));
    case TypeId::kTimestamp:
      return Timestamp(static_cast<int64_t>(value));
    case TypeId::kDecimal:
      return Decimal(value, type);
    default:
      return Null(type);
  }
}

Value Value::Timestamp(int64_t micros) {
  Value v;
  v.type_ = Type::Timestamp();
  v.is_null_ = false;
  v.int_ = micros;
  return v;
}

Value Value::IntervalValue(Interval interval) {
  Value v;
  v.type_ = Type::IntervalType();
  v.is_null_ = false;
  v.interval_ = interval;
  return v;
}

Value Value::String(std::string value, Type type) {
  DCHECK(type.IsString()) << type.ToString();
  Value v;
  v.type_ = type;
  v.is_null_ = false;
  v.string_ = std::move(value);
  return v;
}

bool Value::AsBool() const {
  DCHECK(!is_null_ && type_.id() == TypeId::kBoolean) << type_.ToString();
  return int_ != 0;
}

int64_t Value::AsInt64() const {
  DCHECK(!is_null_);
  DCHECK(type_.id() == TypeId::kInteger || type_.id() == TypeId::kBigInt || type_.id() == TypeId::kDate ||
         type_.id() == TypeId::kTimestamp || type_.id() == TypeId::kBoolean ||
         (type_.id() == TypeId::kDecimal && !type_.IsWideDecimal()))
      << type_.ToString();
  return static_cast<int64_t>(int_);
}

int128 Value::AsInt128() const {
  DCHECK(!is_null_);
  DCHECK(FamilyOf(type_.id()) == Family::kExact || type_.id() == TypeId::kDate || type_.id() == TypeId::kTimestamp ||
         type_.id() == TypeId::kBoolean)
      << type_.ToString();
  return int_;
}

double Value::AsDouble() const {
  DCHECK(!is_null_ && type_.IsNumeric()) << type_.ToString();
  if (type_.id() == TypeId::kDouble) return double_;
  constexpr int128 kExactDoubleLimit = int128{1} << 53;
  const int scale = type_.id() == TypeId::kDecimal ? type_.scale() : 0;
  // Both operands exact doubles (10^22 is the largest exact power of ten): one correctly rounded division.
  if (Abs(int_) <= kExactDoubleLimit && scale <= 22) {
    return static_cast<double>(int_) / static_cast<double>(PowerOfTen(scale));
  }
  std::string text;
  AppendDecimal(int_, scale, &text);
  double result = 0;
  std::from_chars(text.data(), text.data() + text.size(), result);
  return result;
}

const std::string& Value::AsString() const {
  DCHECK(!is_null_ && type_.IsString()) << type_.ToString();
  return string_;
}

const Interval& Value::AsInterval() const {
  DCHECK(!is_null_ && type_.id() == TypeId::kInterval) << type_.ToString();
  return interval_;
}

std::string Value::ToString() const {
  if (is_null_) return "NULL";
  std::string out;
  switch (type_.id()) {
    case TypeId::kNull:
      return "NULL";
    case TypeId::kBoolean:
      return int_ != 0 ? "true" : "false";
    case TypeId::kInteger:
    case TypeId::kBigInt:
      AppendInt64(static_cast<int64_t>(int_), &out);
      break;
    case TypeId::kDouble:
      AppendDouble(double_, &out);
      break;
    case TypeId::kDecimal:
      AppendDecimal(int_, type_.scale(), &out);
      break;
    case TypeId::kChar:
    case TypeId::kVarchar:
      return string_;
    case TypeId::kDate:
      AppendDate(static_cast<int32_t>(int_), &out);
      break;
    case TypeId::kTimestamp:
      AppendTimestamp(static_cast<int64_t>(int_), &out);
      break;
    case TypeId::kInterval:
      AppendInterval(interval_, &out);
      break;
  }
  return out;
}

absl::StatusOr<Value> Value::CastTo(Type target) const {
  if (is_null_) return Null(target);
  if (type_ == target) return *this;
  const TypeId from = type_.id();
  const TypeId to = target.id();
  if (target.IsString()) return MakeStringOfType(type_.IsString() ? string_ : ToString(), target);
  if (type_.IsString()) return ParseAs(string_, target);

  switch (to) {
    case TypeId::kInteger:
    case TypeId::kBigInt: {
      int128 v;
      if (from == TypeId::kInteger || from == TypeId::kBigInt || from == TypeId::kBoolean) {
        v = int_;
      } else if (from == TypeId::kDecimal) {
        v = DivideRounded(int_, PowerOfTen(type_.scale()));
      } else if (from == TypeId::kDouble) {
        double rounded = std::round(double_);  // half away from zero
        if (!(rounded >= -0x1p63 && rounded < 0x1p63)) return OutOfRange(ToString(), target);
        v = static_cast<int64_t>(rounded);
      } else {
        return CannotCast(type_, target);
      }
      if (to == TypeId::kInteger) {
        if (v < INT32_MIN || v > INT32_MAX) return OutOfRange(ToString(), target);
        return Integer(static_cast<int32_t>(v));
      }
      if (v < INT64_MIN || v > INT64_MAX) return OutOfRange(ToString(), target);
      return BigInt(static_cast<int64_t>(v));
    }
    case TypeId::kDecimal: {
      int128 u;
      if (from == TypeId::kInteger || from == TypeId::kBigInt || from == TypeId::kDecimal) {
        const int from_scale = from == TypeId::kDecimal ? type_.scale() : 0;
        if (!Rescale(int_, from_scale, target.precision(), target.scale(), &u)) return OutOfRange(ToString(), target);
      } else if (from == TypeId::kDouble) {
        // Via the shortest round-trip text, so 0.1 becomes exactly 0.1 and 2.675 rounds to 2.68 at scale 2.
        if (!std::isfinite(double_)) return OutOfRange(ToString(), target);
        if (!ParseDecimal(ToString(), target.precision(), target.scale(), &u)) return OutOfRange(ToString(), target);
      } else {
        return CannotCast(type_, target);
      }
      return Decimal(u, target);
    }
    case TypeId::kDouble:
      if (FamilyOf(from) == Family::kExact) return Double(AsDouble());
      return CannotCast(type_, target);
    case TypeId::kBoolean:
      if (from == TypeId::kInteger || from == TypeId::kBigInt) return Boolean(int_ != 0);
      return CannotCast(type_, target);
    case TypeId::kDate:
      if (from == TypeId::kTimestamp) {
        int64_t micros = static_cast<int64_t>(int_);
        return Date(
            static_cast<int32_t>(micros >= 0 ? micros / kMicrosPerDay : -((-(micros + 1)) / kMicrosPerDay) - 1));
      }
      return CannotCast(type_, target);
    case TypeId::kTimestamp:
      if (from == TypeId::kDate) {
        int64_t micros;
        if (__builtin_mul_overflow(static_cast<int64_t>(int_), kMicrosPerDay, &micros)) {
          return OutOfRange(ToString(), target);
        }
        return Timestamp(micros);
      }
      return CannotCast(type_, target);
    default:
      return CannotCast(type_, target);
  }
}

int Value::Compare(const Value& other) const {
  if (is_null_ || other.is_null_) return Sign(!is_null_, !other.is_null_);
  const Family a = FamilyOf(type_.id());
  const Family b = FamilyOf(other.type_.id());
  const bool a_numeric = a == Family::kExact || a == Family::kDouble;
  const bool b_numeric = b == Family::kExact || b == Family::kDouble;
  if (a_numeric && b_numeric) {
    if (a == Family::kDouble && b == Family::kDouble) return CompareDoubles(double_, other.double_);
    const int scale_a = type_.id() == TypeId::kDecimal ? type_.scale() : 0;
    const int scale_b = other.type_.id() == TypeId::kDecimal ? other.type_.scale() : 0;
    if (a == Family::kExact && b == Family::kExact) return CompareExact(int_, scale_a, other.int_, scale_b);
    if (a == Family::kDouble) return CompareDoubleExact(double_, other.int_, scale_b);
    return -CompareDoubleExact(other.double_, int_, scale_a);
  }
  if (a != b) return Sign(static_cast<int>(type_.id()), static_cast<int>(other.type_.id()));
  switch (a) {
    case Family::kBoolean:
      return Sign(int_, other.int_);
    case Family::kString:
      return Sign(string_.compare(other.string_), 0);
    case Family::kDateTime: {
      int128 x = type_.id() == TypeId::kDate ? int_ * kMicrosPerDay : int_;
      int128 y = other.type_.id() == TypeId::kDate ? other.int_ * kMicrosPerDay : other.int_;
      return Sign(x, y);
    }
    case Family::kInterval: {
      // PostgreSQL's ordering: 1 month = 30 days, 1 day = 24 hours; ties broken by fields for a total order.
      auto total = [](const Interval& i) {
        return (static_cast<int128>(i.months) * 30 + i.days) * kMicrosPerDay + i.micros;
      };
      int c = Sign(total(interval_), total(other.interval_));
      if (c != 0) return c;
      c = Sign(interval_.months, other.interval_.months);
      if (c != 0) return c;
      return Sign(interval_.days, other.interval_.days);
    }
    default:
      return 0;
  }
}

bool operator==(const Value& a, const Value& b) {
  if (a.type_ != b.type_ || a.is_null_ != b.is_null_) return false;
  if (a.is_null_) return true;
  switch (FamilyOf(a.type_.id())) {
    case Family::kDouble:
      return std::bit_cast<uint64_t>(a.double_) == std::bit_cast<uint64_t>(b.double_) ||
             (std::isnan(a.double_) && std::isnan(b.double_));
    case Family::kString:
      return a.string_ == b.string_;
    case Family::kInterval:
      return a.interval_ == b.interval_;
    case Family::kNull:
      return true;
    default:
      return a.int_ == b.int_;
  }
}

std::string Value::Serialize() const {
  std::string out;
  AppendInt64(static_cast<int>(type_.id()), &out);
  if (type_.id() == TypeId::kDecimal) {
    absl::StrAppend(&out, ",", type_.precision(), ",", type_.scale());
  } else if (type_.IsString()) {
    absl::StrAppend(&out, ",", type_.length());
  }
  if (is_null_) {
    out.push_back('!');
    return out;
  }
  out.push_back(':');
  switch (type_.id()) {
    case TypeId::kNull:
      break;
    case TypeId::kDouble: {
      // Shortest round-trip text reproduces every finite double and infinities exactly.
      AppendDouble(double_, &out);
      break;
    }
    case TypeId::kDecimal:
      out += Int128ToString(int_);
      break;
    case TypeId::kChar:
    case TypeId::kVarchar:
      out += string_;
      break;
    case TypeId::kInterval:
      absl::StrAppend(&out, interval_.months, ",", interval_.days, ",", interval_.micros);
      break;
    default:
      AppendInt64(static_cast<int64_t>(int_), &out);
      break;
  }
  return out;
}

absl::StatusOr<Value> Value::Deserialize(std::string_view bytes) {
  auto malformed = [&]() {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed serialized value '", absl::CHexEscape(AsAbsl(bytes.substr(0, 64))), "'"));
  };
  const size_t delimiter = bytes.find_first_of(":!");
  if (delimiter == std::string_view::npos) return malformed();
  std::string_view header = bytes.substr(0, delimiter);
  const bool is_null = bytes[delimiter] == '!';
  const std::string_view payload = bytes.substr(delimiter + 1);
  if (is_null && !payload.empty()) return malformed();

  int64_t fields[3];
  int field_count = 0;
  while (true) {
    size_t comma = header.find(',');
    if (field_count == 3 || !ParseInt64(header.substr(0, comma), &fields[field_count])) return malformed();
    ++field_count;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  absl::StatusOr<Type> stored =
      TypeFromStoredParts(fields[0], field_count > 1 ? fields[1] : 0, field_count > 2 ? fields[2] : 0);
  if (!stored.ok()) return malformed();
  const Type type = *stored;
  const TypeId id = type.id();
  const int expected_fields = id == TypeId::kDecimal ? 3 : (type.IsString() ? 2 : 1);
  if (field_count != expected_fields) return malformed();
  if (is_null) return Null(type);

  switch (id) {
    case TypeId::kNull:
      if (!payload.empty()) return malformed();
      return Null();
    case TypeId::kBoolean:
      if (payload == "1") return Boolean(true);
      if (payload == "0") return Boolean(false);
      return malformed();
    case TypeId::kInteger: {
      int32_t v;
      if (!ParseInt32(payload, &v)) return malformed();
      return Integer(v);
    }
    case TypeId::kBigInt:
    case TypeId::kTimestamp: {
      int64_t v;
      if (!ParseInt64(payload, &v)) return malformed();
      return id == TypeId::kBigInt ? BigInt(v) : Timestamp(v);
    }
    case TypeId::kDate: {
      int32_t v;
      if (!ParseInt32(payload, &v)) return malformed();
      return Date(v);
    }
    case TypeId::kDouble: {
      double v;
      if (!ParseDouble(payload, &v)) return malformed();
      return Double(v);
    }
    case TypeId::kDecimal: {
      int128 u;
      if (!ParseDecimal(payload, type.precision(), 0, &u) || payload.find_first_of(".eE") != std::string_view::npos) {
        return malformed();
      }
      return Decimal(u, type);
    }
    case TypeId::kChar:
    case TypeId::kVarchar:
      return String(std::string(payload), type);
    case TypeId::kInterval: {
      Interval interval;
      size_t c1 = payload.find(',');
      size_t c2 = c1 == std::string_view::npos ? c1 : payload.find(',', c1 + 1);
      if (c2 == std::string_view::npos || !ParseInt32(payload.substr(0, c1), &interval.months) ||
          !ParseInt32(payload.substr(c1 + 1, c2 - c1 - 1), &interval.days) ||
          !ParseInt64(payload.substr(c2 + 1), &interval.micros)) {
        return malformed();
      }
      return IntervalValue(interval);
    }
  }
  return malformed();
}

}  // namespace tessera
