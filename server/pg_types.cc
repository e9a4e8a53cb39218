#include "server/pg_types.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "catalog/text_conversion.h"
#include "server/pg_protocol.h"

namespace tessera::pg {
namespace {

// Days and microseconds between 1970-01-01 (Tessera's epoch) and 2000-01-01 (PostgreSQL's binary epoch).
constexpr int32_t kPgEpochDays = 10957;
constexpr int64_t kPgEpochMicros = int64_t{kPgEpochDays} * 86'400'000'000;
constexpr int16_t kNumericPositive = 0x0000;
constexpr int16_t kNumericNegative = 0x4000;
constexpr int16_t kNumericNaN = static_cast<int16_t>(0xC000);

void AppendBigEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>(value >> (8 * i)));
}

uint64_t ReadBigEndian(std::string_view data) {
  uint64_t value = 0;
  for (char c : data) value = (value << 8) | static_cast<uint8_t>(c);
  return value;
}

// numeric's send format: ndigits, weight, sign, dscale, then base-10000 digits (most significant first) of
// unscaled / 10^scale.
void AppendNumericBinary(int128 unscaled, int scale, std::string* out) {
  const bool negative = unscaled < 0;
  std::string digits = Int128ToString(unscaled);
  if (negative) digits.erase(0, 1);
  if (static_cast<int>(digits.size()) <= scale) digits.insert(0, scale + 1 - digits.size(), '0');
  std::string integer = digits.substr(0, digits.size() - scale);
  std::string fraction = digits.substr(digits.size() - scale);
  integer.insert(0, (4 - integer.size() % 4) % 4, '0');
  fraction.append((4 - fraction.size() % 4) % 4, '0');
  std::vector<int16_t> groups;
  for (size_t i = 0; i < integer.size(); i += 4)
    groups.push_back(static_cast<int16_t>(std::stoi(integer.substr(i, 4))));
  int weight = static_cast<int>(groups.size()) - 1;
  for (size_t i = 0; i < fraction.size(); i += 4) {
    groups.push_back(static_cast<int16_t>(std::stoi(fraction.substr(i, 4))));
  }
  size_t first = 0;
  while (first < groups.size() && groups[first] == 0) {
    ++first;
    --weight;
  }
  size_t last = groups.size();
  while (last > first && groups[last - 1] == 0) --last;
  if (first == last) weight = 0;
  MessageWriter writer(out);
  writer.Int16(static_cast<int16_t>(last - first));
  writer.Int16(static_cast<int16_t>(weight));
  writer.Int16(negative && first != last ? kNumericNegative : kNumericPositive);
  writer.Int16(static_cast<int16_t>(scale));
  for (size_t i = first; i < last; ++i) writer.Int16(groups[i]);
}

// The decimal text of a binary numeric; false when malformed.
bool NumericBinaryToText(std::string_view data, std::string* text) {
  MessageReader reader(data);
  int16_t ndigits, weight, sign, dscale;
  if (!reader.ReadInt16(&ndigits) || !reader.ReadInt16(&weight) || !reader.ReadInt16(&sign) ||
      !reader.ReadInt16(&dscale) || ndigits < 0 || dscale < 0 || dscale > 1000 || weight < -1000 || weight > 1000 ||
      reader.remaining() != static_cast<size_t>(ndigits) * 2) {
    return false;
  }
  if (sign == kNumericNaN || (sign != kNumericPositive && sign != kNumericNegative)) return false;
  // Digits as a plain decimal string with the point after group `weight`.
  std::string integer, fraction;
  for (int i = 0; i < ndigits; ++i) {
    int16_t group;
    reader.ReadInt16(&group);
    if (group < 0 || group > 9999) return false;
    char buffer[5];
    snprintf(buffer, sizeof(buffer), "%04d", group);
    (i <= weight ? integer : fraction).append(buffer);
  }
  for (int i = ndigits; i <= weight; ++i) integer.append("0000");
  if (weight < -1) fraction.insert(0, static_cast<size_t>(-1 - weight) * 4, '0');
  size_t nonzero = integer.find_first_not_of('0');
  integer = nonzero == std::string::npos ? "0" : integer.substr(nonzero);
  fraction.resize(static_cast<size_t>(dscale), '0');
  *text = absl::StrCat(sign == kNumericNegative ? "-" : "", integer, dscale > 0 ? "." : "", fraction);
  return true;
}

std::string QuotedString(std::string_view text) {
  return absl::StrCat("'", absl::StrReplaceAll(absl::string_view(text.data(), text.size()), {{"'", "''"}}), "'");
}

// A negative number is parenthesized so that "x-$1" never becomes the comment "x--1".
std::string SignedLiteral(std::string text) {
  return !text.empty() && text[0] == '-' ? absl::StrCat("(", text, ")") : text;
}

absl::Status BadParameter(int number, int32_t oid, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("parameter $", number, " (", PgTypeName(oid), "): ", std::string(why)));
}

// The text form of a binary parameter; InvalidArgument when it does not decode.
absl::StatusOr<std::string> BinaryParameterText(int number, int32_t oid, std::string_view data) {
  auto need = [&](size_t size) -> absl::Status {
    if (data.size() != size) {
      return BadParameter(number, oid, absl::StrCat("binary value of ", data.size(), " bytes, expected ", size));
    }
    return absl::OkStatus();
  };
  switch (oid) {
    case kOidBool:
      if (absl::Status ok = need(1); !ok.ok()) return ok;
      return std::string(data[0] != 0 ? "true" : "false");
    case kOidInt2:
      if (absl::Status ok = need(2); !ok.ok()) return ok;
      return absl::StrCat(static_cast<int16_t>(ReadBigEndian(data)));
    case kOidInt4:
    case kOidOid:
      if (absl::Status ok = need(4); !ok.ok()) return ok;
      return absl::StrCat(oid == kOidOid ? static_cast<int64_t>(static_cast<uint32_t>(ReadBigEndian(data)))
                                         : static_cast<int64_t>(static_cast<int32_t>(ReadBigEndian(data))));
    case kOidInt8:
      if (absl::Status ok = need(8); !ok.ok()) return ok;
      return absl::StrCat(static_cast<int64_t>(ReadBigEndian(data)));
    case kOidFloat4: {
      if (absl::Status ok = need(4); !ok.ok()) return ok;
      const uint32_t bits = static_cast<uint32_t>(ReadBigEndian(data));
      float value;
      memcpy(&value, &bits, sizeof(value));
      std::string text;
      AppendDouble(value, &text);
      return text;
    }
    case kOidFloat8: {
      if (absl::Status ok = need(8); !ok.ok()) return ok;
      const uint64_t bits = ReadBigEndian(data);
      double value;
      memcpy(&value, &bits, sizeof(value));
      std::string text;
      AppendDouble(value, &text);
      return text;
    }
    case kOidDate: {
      if (absl::Status ok = need(4); !ok.ok()) return ok;
      const int64_t days = static_cast<int64_t>(static_cast<int32_t>(ReadBigEndian(data))) + kPgEpochDays;
      if (days < DaysFromCivil(1, 1, 1) || days > DaysFromCivil(9999, 12, 31)) {
        return BadParameter(number, oid, "date out of the range 0001-01-01 .. 9999-12-31");
      }
      std::string text;
      AppendDate(static_cast<int32_t>(days), &text);
      return text;
    }
    case kOidTimestamp: {
      if (absl::Status ok = need(8); !ok.ok()) return ok;
      const int64_t micros = static_cast<int64_t>(ReadBigEndian(data));
      constexpr int64_t kRange = int64_t{3'000'000} * 86'400'000'000;  // far beyond years 1..9999
      if (micros > kRange || micros < -kRange) return BadParameter(number, oid, "timestamp out of range");
      std::string text;
      AppendTimestamp(micros + kPgEpochMicros, &text);
      return text;
    }
    case kOidNumeric: {
      std::string text;
      if (!NumericBinaryToText(data, &text)) return BadParameter(number, oid, "malformed or NaN binary numeric");
      return text;
    }
    case kOidText:
    case kOidVarchar:
    case kOidBpchar:
    case kOidUnknown:
      return std::string(data);
    default:
      return BadParameter(number, oid, "Tessera cannot bind this type in binary format");
  }
}

}  // namespace

PgColumnType PgColumnTypeOf(const Type& type) {
  switch (type.id()) {
    case TypeId::kBoolean:
      return {kOidBool, 1, -1};
    case TypeId::kInteger:
      return {kOidInt4, 4, -1};
    case TypeId::kBigInt:
      return {kOidInt8, 8, -1};
    case TypeId::kDouble:
      return {kOidFloat8, 8, -1};
    case TypeId::kDecimal:
      return {kOidNumeric, -1, ((type.precision() << 16) | type.scale()) + 4};
    case TypeId::kChar:
      return {kOidBpchar, -1, static_cast<int32_t>(type.length()) + 4};
    case TypeId::kVarchar:
      if (type.length() == 0) return {kOidText, -1, -1};
      return {kOidVarchar, -1, static_cast<int32_t>(type.length()) + 4};
    case TypeId::kDate:
      return {kOidDate, 4, -1};
    case TypeId::kTimestamp:
      return {kOidTimestamp, 8, -1};
    case TypeId::kInterval:
      return {kOidInterval, 16, -1};
    case TypeId::kNull:
      return {kOidText, -1, -1};
  }
  return {kOidText, -1, -1};
}

std::string PgTypeName(int32_t oid) {
  switch (oid) {
    case kOidUnspecified:
      return "unspecified";
    case kOidBool:
      return "bool";
    case kOidBytea:
      return "bytea";
    case kOidInt8:
      return "int8";
    case kOidInt2:
      return "int2";
    case kOidInt4:
      return "int4";
    case kOidText:
      return "text";
    case kOidOid:
      return "oid";
    case kOidFloat4:
      return "float4";
    case kOidFloat8:
      return "float8";
    case kOidUnknown:
      return "unknown";
    case kOidBpchar:
      return "bpchar";
    case kOidVarchar:
      return "varchar";
    case kOidDate:
      return "date";
    case kOidTime:
      return "time";
    case kOidTimestamp:
      return "timestamp";
    case kOidTimestampTz:
      return "timestamptz";
    case kOidInterval:
      return "interval";
    case kOidNumeric:
      return "numeric";
    default:
      return absl::StrCat("type oid ", oid);
  }
}

void AppendPgText(const Value& value, std::string* out) {
  switch (value.type().id()) {
    case TypeId::kBoolean:
      out->push_back(value.AsBool() ? 't' : 'f');
      return;
    case TypeId::kInteger:
    case TypeId::kBigInt:
      AppendInt64(value.AsInt64(), out);
      return;
    case TypeId::kDouble: {
      const double d = value.AsDouble();
      if (std::isnan(d)) {
        out->append("NaN");
      } else if (std::isinf(d)) {
        out->append(d > 0 ? "Infinity" : "-Infinity");
      } else {
        AppendDouble(d, out);
      }
      return;
    }
    case TypeId::kDecimal:
      AppendDecimal(value.AsInt128(), value.type().scale(), out);
      return;
    case TypeId::kChar:
    case TypeId::kVarchar:
      out->append(value.AsString());
      return;
    case TypeId::kDate:
      AppendDate(static_cast<int32_t>(value.AsInt64()), out);
      return;
    case TypeId::kTimestamp:
      AppendTimestamp(value.AsInt64(), out);
      return;
    case TypeId::kInterval:
      AppendInterval(value.AsInterval(), out);
      return;
    case TypeId::kNull:
      return;
  }
}

void AppendPgBinary(const Value& value, std::string* out) {
  switch (value.type().id()) {
    case TypeId::kBoolean:
      out->push_back(value.AsBool() ? 1 : 0);
      return;
    case TypeId::kInteger:
      AppendBigEndian(static_cast<uint32_t>(static_cast<int32_t>(value.AsInt64())), 4, out);
      return;
    case TypeId::kBigInt:
      AppendBigEndian(static_cast<uint64_t>(value.AsInt64()), 8, out);
      return;
    case TypeId::kDouble: {
      const double d = value.AsDouble();
      uint64_t bits;
      memcpy(&bits, &d, sizeof(bits));
      AppendBigEndian(bits, 8, out);
      return;
    }
    case TypeId::kDecimal:
      AppendNumericBinary(value.AsInt128(), value.type().scale(), out);
      return;
    case TypeId::kChar:
    case TypeId::kVarchar:
      out->append(value.AsString());
      return;
    case TypeId::kDate:
      AppendBigEndian(static_cast<uint32_t>(static_cast<int32_t>(value.AsInt64() - kPgEpochDays)), 4, out);
      return;
    case TypeId::kTimestamp:
      AppendBigEndian(static_cast<uint64_t>(value.AsInt64() - kPgEpochMicros), 8, out);
      return;
    case TypeId::kInterval: {
      const Interval& interval = value.AsInterval();
      AppendBigEndian(static_cast<uint64_t>(interval.micros), 8, out);
      AppendBigEndian(static_cast<uint32_t>(interval.days), 4, out);
      AppendBigEndian(static_cast<uint32_t>(interval.months), 4, out);
      return;
    }
    case TypeId::kNull:
      return;
  }
}

absl::StatusOr<std::string> ParameterLiteral(int number, int32_t oid, int16_t format,
                                             std::optional<std::string_view> data) {
  if (!data.has_value()) return std::string("NULL");
  if (format != 0 && format != 1) return BadParameter(number, oid, absl::StrCat("unknown format code ", format));
  std::string text;
  if (format == 1) {
    if (oid == kOidUnspecified) return BadParameter(number, oid, "a binary value needs a parameter type");
    absl::StatusOr<std::string> decoded = BinaryParameterText(number, oid, *data);
    if (!decoded.ok()) return decoded.status();
    text = *std::move(decoded);
  } else {
    text = std::string(*data);
  }
  if (text.find('\0') != std::string::npos) return BadParameter(number, oid, "a value may not hold a NUL byte");
  const absl::string_view trimmed = absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size()));
  const std::string_view value(trimmed.data(), trimmed.size());
  switch (oid) {
    case kOidInt2:
    case kOidInt4:
    case kOidInt8:
    case kOidOid: {
      int64_t parsed;
      if (!ParseInt64(value, &parsed)) return BadParameter(number, oid, absl::StrCat("invalid integer '", text, "'"));
      return SignedLiteral(absl::StrCat(parsed));
    }
    case kOidFloat4:
    case kOidFloat8: {
      double parsed;
      const std::string lower = absl::AsciiStrToLower(trimmed);
      if (lower == "infinity" || lower == "-infinity" || lower == "nan" || lower == "inf" || lower == "-inf") {
        return absl::StrCat("CAST(",
                            QuotedString(lower[0] == '-'  ? "-inf"
                                         : lower == "nan" ? "nan"
                                                          : "inf"),
                            " AS DOUBLE)");
      }
      if (!ParseDouble(value, &parsed) || !std::isfinite(parsed)) {
        return BadParameter(number, oid, absl::StrCat("invalid floating-point number '", text, "'"));
      }
      std::string shortest;
      AppendDouble(parsed, &shortest);
      return absl::StrCat("CAST(", QuotedString(shortest), " AS DOUBLE)");
    }
    case kOidNumeric: {
      int128 ignored;
      if (!ParseDecimal(value, kMaxDecimalPrecision, 0, &ignored)) {
        return BadParameter(number, oid, absl::StrCat("invalid or too large numeric '", text, "'"));
      }
      if (value.find_first_of("eE") != std::string_view::npos) {
        return BadParameter(number, oid, "numeric values with an exponent are not supported; write the digits");
      }
      std::string digits(value[0] == '+' ? value.substr(1) : value);
      const size_t sign = !digits.empty() && digits[0] == '-' ? 1 : 0;
      if (digits.size() > sign && digits[sign] == '.') {
        digits = absl::StrCat(digits.substr(0, sign), "0", digits.substr(sign));  // ".5" -> "0.5"
      }
      if (!digits.empty() && digits.back() == '.') digits.pop_back();
      return SignedLiteral(digits);
    }
    case kOidBool: {
      bool parsed;
      if (!ParseBoolean(value, &parsed)) return BadParameter(number, oid, absl::StrCat("invalid boolean '", text, "'"));
      return std::string(parsed ? "TRUE" : "FALSE");
    }
    case kOidDate: {
      int32_t days;
      if (!ParseDate(value, &days)) return BadParameter(number, oid, absl::StrCat("invalid date '", text, "'"));
      std::string canonical;
      AppendDate(days, &canonical);
      return absl::StrCat("DATE '", canonical, "'");
    }
    case kOidTimestamp: {
      int64_t micros;
      if (!ParseTimestamp(value, &micros)) {
        return BadParameter(number, oid, absl::StrCat("invalid timestamp '", text, "'"));
      }
      std::string canonical;
      AppendTimestamp(micros, &canonical);
      return absl::StrCat("TIMESTAMP '", canonical, "'");
    }
    case kOidInterval: {
      Interval interval;
      if (!ParseInterval(value, "", &interval)) {
        return BadParameter(number, oid, absl::StrCat("invalid interval '", text, "'"));
      }
      return absl::StrCat("INTERVAL ", QuotedString(value));
    }
    case kOidText:
    case kOidVarchar:
    case kOidBpchar:
    case kOidUnknown:
    case kOidUnspecified:
      return QuotedString(text);
    default:
      return BadParameter(number, oid, "Tessera cannot bind parameters of this type");
  }
}

}  // namespace tessera::pg
