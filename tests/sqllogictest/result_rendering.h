#pragma once
// Turns one result value into the text that a `.test` file compares against, given the column's type letter.
//
// The runner converts each engine Value into a ResultCell (the only place that knows the engine's Value); the
// rules here are then engine-independent and unit-tested:
//
//   NULL                      -> "NULL" (any column type)
//   empty text                -> "(empty)" (any column type)
//   I column: integer         -> decimal digits
//             DOUBLE          -> truncated toward zero ("2.9" -> "2", "-2.9" -> "-2"); inf/nan as in R
//             DECIMAL         -> its exact text without the fraction ("-0.50" -> "0")
//   R column: integer         -> decimal digits
//             DOUBLE          -> shortest round-trip text ("0.1", "1", "1e+300"); compared with tolerance
//             DECIMAL         -> its exact text ("12.50")
//   other letters (T, B, ...) -> the engine's text (Value::ToString)
//   text-like values (strings, dates, booleans, intervals) in an I or R column keep their text.
//
// All functions are pure and thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::sqllogictest {

// Engine-independent view of one value of a result.
struct ResultCell {
  enum class Kind {
    kNull,
    kInteger,  // `integer` holds it
    kReal,     // binary floating point: `real` holds it
    kDecimal,  // exact decimal: `text` holds the exact digits, `real` an approximation
    kText,     // everything else: `text` holds it
  };

  static ResultCell Null();
  static ResultCell Integer(int64_t value);
  static ResultCell Real(double value);
  static ResultCell Decimal(std::string exact_text);
  static ResultCell Text(std::string text);

  Kind kind = Kind::kNull;
  int64_t integer = 0;
  double real = 0;
  std::string text;
};

// Renders `cell` for a column declared with `column_type` ('I', 'R', or any other letter for text).
std::string RenderCell(const ResultCell& cell, char column_type);

// Shortest text that parses back to exactly `value` ("0.1", "3", "-2.5e-07", "inf", "nan").
std::string ShortestRealText(double value);

}  // namespace tessera::sqllogictest
