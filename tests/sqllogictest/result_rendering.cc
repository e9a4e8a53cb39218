#include "tests/sqllogictest/result_rendering.h"

#include <charconv>
#include <cmath>
#include <string_view>
#include <utility>

namespace tessera::sqllogictest {
namespace {

constexpr std::string_view kNullText = "NULL";
constexpr std::string_view kEmptyText = "(empty)";

std::string TextOrEmptyMarker(const std::string& text) { return text.empty() ? std::string(kEmptyText) : text; }

// Truncates toward zero; values outside int64 (or non-finite) keep their shortest text.
std::string TruncatedRealText(double value) {
  double truncated = std::trunc(value);
  // 2^63 is exactly representable; anything at or beyond it does not fit.
  if (!std::isfinite(truncated) || truncated >= 9223372036854775808.0 || truncated < -9223372036854775808.0) {
    return ShortestRealText(value);
  }
  return std::to_string(static_cast<int64_t>(truncated));
}

// The integer part of an exact decimal text such as "-12.50"; "-0.5" becomes "0". Text that is not a plain
// decimal (no exponent expected from the engine) is returned unchanged.
std::string DecimalIntegerPart(const std::string& text) {
  bool negative = !text.empty() && text[0] == '-';
  size_t sign_length = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  std::string digits = text.substr(sign_length, text.find('.') - sign_length);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return text;
  size_t first_nonzero = digits.find_first_not_of('0');
  if (first_nonzero == std::string::npos) return "0";
  return (negative ? "-" : "") + digits.substr(first_nonzero);
}

}  // namespace

ResultCell ResultCell::Null() { return ResultCell(); }

ResultCell ResultCell::Integer(int64_t value) {
  ResultCell cell;
  cell.kind = Kind::kInteger;
  cell.integer = value;
  cell.text = std::to_string(value);
  return cell;
}

ResultCell ResultCell::Real(double value) {
  ResultCell cell;
  cell.kind = Kind::kReal;
  cell.real = value;
  cell.text = ShortestRealText(value);
  return cell;
}

ResultCell ResultCell::Decimal(std::string exact_text) {
  ResultCell cell;
  cell.kind = Kind::kDecimal;
  cell.text = std::move(exact_text);
  double approximation = 0;
  std::from_chars(cell.text.data(), cell.text.data() + cell.text.size(), approximation);
  cell.real = approximation;
  return cell;
}

ResultCell ResultCell::Text(std::string text) {
  ResultCell cell;
  cell.kind = Kind::kText;
  cell.text = std::move(text);
  return cell;
}

std::string RenderCell(const ResultCell& cell, char column_type) {
  switch (cell.kind) {
    case ResultCell::Kind::kNull:
      return std::string(kNullText);
    case ResultCell::Kind::kInteger:
      return std::to_string(cell.integer);
    case ResultCell::Kind::kReal:
      if (column_type == 'I') return TruncatedRealText(cell.real);
      if (column_type == 'R') return ShortestRealText(cell.real);
      return TextOrEmptyMarker(cell.text);
    case ResultCell::Kind::kDecimal:
      if (column_type == 'I') return DecimalIntegerPart(cell.text);
      return TextOrEmptyMarker(cell.text);
    case ResultCell::Kind::kText:
      return TextOrEmptyMarker(cell.text);
  }
  return TextOrEmptyMarker(cell.text);
}

std::string ShortestRealText(double value) {
  char buffer[64];
  std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

}  // namespace tessera::sqllogictest
