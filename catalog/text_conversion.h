#pragma once
// Exact text parsers and formatters for SQL values, used by COPY's per-field loop and by result printing.
//
// Contracts shared by every function here:
//   - No allocation (the Append* functions only append to the caller's string), no exceptions, no locale.
//   - Parsers accept exactly the documented grammar: leading/trailing spaces are NOT accepted (CSV fields are
//   exact)
//     unless a function says otherwise. They return false on any malformed or out-of-range input and leave
//     the output untouched in that case.
//   - All functions are pure and thread-safe.
//
// Date/time representation (see catalog/types.h): DATE = days since 1970-01-01 (proleptic Gregorian
// calendar), TIMESTAMP = microseconds since 1970-01-01 00:00:00 (no time zone). Accepted years are 1..9999.

#include <cstdint>
#include <string>
#include <string_view>

#include "catalog/types.h"

namespace tessera {

// 10^exponent for 0 <= exponent <= 38 (table lookup; DCHECKs the range).
int128 PowerOfTen(int exponent);
// Largest unscaled magnitude of DECIMAL(precision, s): 10^precision - 1.
inline int128 MaxDecimalUnscaled(int precision) { return PowerOfTen(precision) - 1; }

// Decimal text of an int128, e.g. "-170141183460469231731687303715884105728".
std::string Int128ToString(int128 value);

// "true"/"false"/"t"/"f"/"1"/"0"/"yes"/"no"/"y"/"n"/"on"/"off", case-insensitive.
bool ParseBoolean(std::string_view text, bool* value);
// Optional '+' or '-', then one or more ASCII digits; overflow returns false.
bool ParseInt32(std::string_view text, int32_t* value);
bool ParseInt64(std::string_view text, int64_t* value);
// std::from_chars general format with an optional leading '+'; also "inf", "-inf", "nan" (any case, as
// from_chars).
bool ParseDouble(std::string_view text, double* value);
// Decimal literal for DECIMAL(precision, scale) into `*unscaled` = value * 10^scale.
// Grammar: [+-] digits [. digits] [e|E [+-] digits], with at least one digit before or after the point
// ("12", "-12.345", ".5", "5.", "1e3", "1.5E-2"). Fraction digits beyond `scale` are rounded half away from
// zero. Returns false when the rounded value needs more than precision - scale integer digits.
bool ParseDecimal(std::string_view text, int precision, int scale, int128* unscaled);
// "YYYY-MM-DD" (year 1..9999, exactly 4 digits; month and day 1 or 2 digits) or the 8-digit "YYYYMMDD".
// Month/day validated, including leap years.
bool ParseDate(std::string_view text, int32_t* days);
// A date as in ParseDate, optionally followed by ' ' or 'T' and "HH:MM[:SS[.f{1,6}]]" (hours 0..23).
bool ParseTimestamp(std::string_view text, int64_t* micros);
// An interval quantity with an optional separate unit, as SQL writes it: INTERVAL '3' MONTH -> ("3",
// "MONTH"); INTERVAL '1 day' -> ("1 day", ""); also "1 year 2 months 3 days 04:05:06.5", "-2 hours", "10:00"
// (HH:MM[:SS]). Units (case-insensitive, singular or plural, abbreviations): year/yr/y, month/mon, week/w,
// day/d, hour/h, minute/min/m, second/sec/s, millisecond/ms, microsecond/us. A non-empty `unit` applies to a
// bare number in `quantity_text` (which may then be signed and, for DAY and smaller units, fractional).
// Surrounding spaces inside quantity_text are tolerated; overflow returns false.
bool ParseInterval(std::string_view quantity_text, std::string_view unit, Interval* interval);

// Howard Hinnant's civil calendar algorithms (proleptic Gregorian; valid far beyond years 1..9999).
int32_t DaysFromCivil(int year, unsigned month, unsigned day);
void CivilFromDays(int32_t days, int* year, unsigned* month, unsigned* day);
// Adds calendar months, clamping the day to the end of the resulting month (2024-01-31 + 1 month =
// 2024-02-29).
int32_t AddMonthsToDate(int32_t days, int32_t months);
// Adds an interval to a timestamp: months first (clamped like AddMonthsToDate), then days, then micros.
// Precondition: the result fits int64 (callers range-check user input first).
int64_t AddIntervalToTimestamp(int64_t micros, const Interval& interval);

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
constexpr int64_t kMicrosPerHour = 60 * kMicrosPerMinute;
constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;

void AppendInt64(int64_t value, std::string* out);
// Shortest text that round-trips (std::to_chars); "inf", "-inf", "nan" for non-finite values.
void AppendDouble(double value, std::string* out);
// Exactly `scale` fraction digits: (12340, 2) -> "123.40", (-5, 2) -> "-0.05", (7, 0) -> "7".
void AppendDecimal(int128 unscaled, int scale, std::string* out);
// "YYYY-MM-DD"; years outside 0..9999 are written with as many digits as needed and a leading '-' if
// negative.
void AppendDate(int32_t days, std::string* out);
// "YYYY-MM-DD HH:MM:SS", plus ".ffffff" (trailing zeros dropped) when the fraction is non-zero.
void AppendTimestamp(int64_t micros, std::string* out);
// Postgres style: "1 year 2 mons 3 days 04:05:06", "-1 days", "00:00:00" for the zero interval.
void AppendInterval(const Interval& interval, std::string* out);

}  // namespace tessera
