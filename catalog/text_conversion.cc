#include "catalog/text_conversion.h"

#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <system_error>

#include "glog/logging.h"

namespace tessera {
namespace {

using uint128 = unsigned __int128;

constexpr std::array<int128, kMaxDecimalPrecision + 1> MakePowersOfTen() {
  std::array<int128, kMaxDecimalPrecision + 1> powers{};
  int128 p = 1;
  for (int i = 0; i <= kMaxDecimalPrecision; ++i) {
    powers[i] = p;
    if (i < kMaxDecimalPrecision) p *= 10;
  }
  return powers;
}
constexpr std::array<int128, kMaxDecimalPrecision + 1> kPowersOfTen = MakePowersOfTen();

constexpr int kMinYear = 1;
constexpr int kMaxYear = 9999;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char ToLowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLowerAscii(a[i]) != ToLowerAscii(b[i])) return false;
  }
  return true;
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

template <typename Int>
bool ParseInteger(std::string_view text, Int* value) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') {
    ++begin;
    if (begin == end || !IsDigit(*begin)) return false;  // "+-1", "+"
  }
  // from_chars handles a leading '-' itself and needs at least one digit.
  if (begin == end || (*begin != '-' && !IsDigit(*begin))) return false;
  Int parsed;
  auto [ptr, ec] = std::from_chars(begin, end, parsed, 10);
  if (ec != std::errc() || ptr != end) return false;
  *value = parsed;
  return true;
}

// Parses exactly `count` digits at text[*pos].
bool ParseFixedDigits(std::string_view text, size_t* pos, int count, int* value) {
  if (*pos + count > text.size()) return false;
  int v = 0;
  for (int i = 0; i < count; ++i) {
    char c = text[*pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += count;
  *value = v;
  return true;
}

// Parses 1 to `max_count` digits at text[*pos].
bool ParseDigitRun(std::string_view text, size_t* pos, int max_count, int* value) {
  int v = 0;
  int n = 0;
  while (*pos < text.size() && IsDigit(text[*pos])) {
    if (++n > max_count) return false;
    v = v * 10 + (text[*pos] - '0');
    ++*pos;
  }
  if (n == 0) return false;
  *value = v;
  return true;
}

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

unsigned DaysInMonth(int year, unsigned month) {
  static constexpr unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

bool ValidCivilDate(int year, int month, int day) {
  return year >= kMinYear && year <= kMaxYear && month >= 1 && month <= 12 && day >= 1 &&
         static_cast<unsigned>(day) <= DaysInMonth(year, static_cast<unsigned>(month));
}

// Parses "HH:MM[:SS[.f{1,6}]]" (hours: 1 to `max_hour_digits` digits) into micros, consuming all of `text`.
bool ParseTimeOfDay(std::string_view text, int max_hour_digits, int64_t* micros) {
  size_t pos = 0;
  int hour, minute, second = 0;
  int64_t fraction = 0;
  if (!ParseDigitRun(text, &pos, max_hour_digits, &hour)) return false;
  if (pos >= text.size() || text[pos] != ':') return false;
  ++pos;
  if (!ParseFixedDigits(text, &pos, 2, &minute) || minute > 59) return false;
  if (pos < text.size()) {
    if (text[pos] != ':') return false;
    ++pos;
    if (!ParseFixedDigits(text, &pos, 2, &second) || second > 59) return false;
    if (pos < text.size()) {
      if (text[pos] != '.') return false;
      ++pos;
      int digits = 0;
      while (pos < text.size() && IsDigit(text[pos])) {
        if (++digits > 6) return false;
        fraction = fraction * 10 + (text[pos] - '0');
        ++pos;
      }
      if (digits == 0 || pos != text.size()) return false;
      for (; digits < 6; ++digits) fraction *= 10;
    }
  }
  *micros = hour * kMicrosPerHour + minute * kMicrosPerMinute + second * kMicrosPerSecond + fraction;
  return true;
}

// ---- Intervals
// -------------------------------------------------------------------------------------------------

enum class IntervalUnit { kYear, kMonth, kWeek, kDay, kHour, kMinute, kSecond, kMillisecond, kMicrosecond };

bool ParseIntervalUnit(std::string_view word, IntervalUnit* unit) {
  struct Name {
    std::string_view name;
    IntervalUnit unit;
  };
  static constexpr Name kNames[] = {
      {"year", IntervalUnit::kYear},
      {"years", IntervalUnit::kYear},
      {"yr", IntervalUnit::kYear},
      {"yrs", IntervalUnit::kYear},
      {"y", IntervalUnit::kYear},
      {"month", IntervalUnit::kMonth},
      {"months", IntervalUnit::kMonth},
      {"mon", IntervalUnit::kMonth},
      {"mons", IntervalUnit::kMonth},
      {"week", IntervalUnit::kWeek},
      {"weeks", IntervalUnit::kWeek},
      {"w", IntervalUnit::kWeek},
      {"day", IntervalUnit::kDay},
      {"days", IntervalUnit::kDay},
      {"d", IntervalUnit::kDay},
      {"hour", IntervalUnit::kHour},
      {"hours", IntervalUnit::kHour},
      {"hr", IntervalUnit::kHour},
      {"hrs", IntervalUnit::kHour},
      {"h", IntervalUnit::kHour},
      {"minute", IntervalUnit::kMinute},
      {"minutes", IntervalUnit::kMinute},
      {"min", IntervalUnit::kMinute},
      {"mins", IntervalUnit::kMinute},
      {"m", IntervalUnit::kMinute},
      {"second", IntervalUnit::kSecond},
      {"seconds", IntervalUnit::kSecond},
      {"sec", IntervalUnit::kSecond},
      {"secs", IntervalUnit::kSecond},
      {"s", IntervalUnit::kSecond},
      {"millisecond", IntervalUnit::kMillisecond},
      {"milliseconds", IntervalUnit::kMillisecond},
      {"ms", IntervalUnit::kMillisecond},
      {"microsecond", IntervalUnit::kMicrosecond},
      {"microseconds", IntervalUnit::kMicrosecond},
      {"us", IntervalUnit::kMicrosecond},
  };
  for (const Name& n : kNames) {
    if (EqualsIgnoreCase(word, n.name)) {
      *unit = n.unit;
      return true;
    }
  }
  return false;
}

// A signed number "[+-]digits[.digits]" split into its integer part and a fraction numerator over 10^digits.
struct IntervalNumber {
  bool negative = false;
  int64_t whole = 0;
  int64_t fraction = 0;     // 0 <= fraction < 10^fraction_digits
  int fraction_digits = 0;  // at most 18 kept; further digits are dropped (far below a microsecond)
};

// Parses a number at the start of `text`, advancing *pos past it.
bool ParseIntervalNumber(std::string_view text, size_t* pos, IntervalNumber* number) {
  size_t p = *pos;
  IntervalNumber n;
  if (p < text.size() && (text[p] == '+' || text[p] == '-')) {
    n.negative = text[p] == '-';
    ++p;
  }
  int digits = 0;
  while (p < text.size() && IsDigit(text[p])) {
    if (__builtin_mul_overflow(n.whole, 10, &n.whole) || __builtin_add_overflow(n.whole, text[p] - '0', &n.whole)) {
      return false;
    }
    ++digits;
    ++p;
  }
  if (p < text.size() && text[p] == '.') {
    ++p;
    while (p < text.size() && IsDigit(text[p])) {
      if (n.fraction_digits < 18) {
        n.fraction = n.fraction * 10 + (text[p] - '0');
        ++n.fraction_digits;
      }
      ++digits;
      ++p;
    }
  }
  if (digits == 0) return false;
  *pos = p;
  *number = n;
  return true;
}

// Rounds fraction * factor / 10^digits half away from zero (fraction, factor >= 0).
int64_t ScaleFraction(int64_t fraction, int digits, int64_t factor) {
  int128 scaled = static_cast<int128>(fraction) * factor;
  int128 divisor = kPowersOfTen[digits];
  return static_cast<int64_t>((scaled + divisor / 2) / divisor);
}

struct IntervalAccumulator {
  int64_t months = 0;
  int64_t days = 0;
  int64_t micros = 0;

  bool Add(int64_t* field, int64_t whole, int64_t factor) {
    int64_t product;
    return !__builtin_mul_overflow(whole, factor, &product) && !__builtin_add_overflow(*field, product, field);
  }

  bool AddNumber(const IntervalNumber& n, IntervalUnit unit) {
    const int64_t sign = n.negative ? -1 : 1;
    const int64_t whole = sign * n.whole;
    // Fractions of calendar units spill into smaller units as PostgreSQL does: 1 month = 30 days, 1 day = 24
    // hours.
    switch (unit) {
      case IntervalUnit::kYear:
        return Add(&months, whole, 12) && Add(&months, sign * ScaleFraction(n.fraction, n.fraction_digits, 12), 1);
      case IntervalUnit::kMonth: {
        int64_t frac_micros = ScaleFraction(n.fraction, n.fraction_digits, 30 * kMicrosPerDay);
        return Add(&months, whole, 1) && Add(&days, sign * (frac_micros / kMicrosPerDay), 1) &&
               Add(&micros, sign * (frac_micros % kMicrosPerDay), 1);
      }
      case IntervalUnit::kWeek: {
        int64_t frac_micros = ScaleFraction(n.fraction, n.fraction_digits, 7 * kMicrosPerDay);
        return Add(&days, whole, 7) && Add(&days, sign * (frac_micros / kMicrosPerDay), 1) &&
               Add(&micros, sign * (frac_micros % kMicrosPerDay), 1);
      }
      case IntervalUnit::kDay:
        return Add(&days, whole, 1) &&
               Add(&micros, sign * ScaleFraction(n.fraction, n.fraction_digits, kMicrosPerDay), 1);
      case IntervalUnit::kHour:
        return AddTime(n, sign, kMicrosPerHour);
      case IntervalUnit::kMinute:
        return AddTime(n, sign, kMicrosPerMinute);
      case IntervalUnit::kSecond:
        return AddTime(n, sign, kMicrosPerSecond);
      case IntervalUnit::kMillisecond:
        return AddTime(n, sign, 1000);
      case IntervalUnit::kMicrosecond:
        return AddTime(n, sign, 1);
    }
    return false;
  }

  bool AddTime(const IntervalNumber& n, int64_t sign, int64_t unit_micros) {
    return Add(&micros, sign * n.whole, unit_micros) &&
           Add(&micros, sign * ScaleFraction(n.fraction, n.fraction_digits, unit_micros), 1);
  }

  bool Finish(Interval* interval) const {
    if (months < std::numeric_limits<int32_t>::min() || months > std::numeric_limits<int32_t>::max() ||
        days < std::numeric_limits<int32_t>::min() || days > std::numeric_limits<int32_t>::max()) {
      return false;
    }
    interval->months = static_cast<int32_t>(months);
    interval->days = static_cast<int32_t>(days);
    interval->micros = micros;
    return true;
  }
};

bool IsTimeToken(std::string_view token) { return token.find(':') != std::string_view::npos; }

bool AddTimeToken(std::string_view token, IntervalAccumulator* acc) {
  bool negative = false;
  if (!token.empty() && (token.front() == '+' || token.front() == '-')) {
    negative = token.front() == '-';
    token.remove_prefix(1);
  }
  int64_t micros;
  if (!ParseTimeOfDay(token, 9, &micros)) return false;
  return acc->Add(&acc->micros, negative ? -micros : micros, 1);
}

}  // namespace

int128 PowerOfTen(int exponent) {
  DCHECK(exponent >= 0 && exponent <= kMaxDecimalPrecision) << exponent;
  return kPowersOfTen[exponent];
}

std::string Int128ToString(int128 value) {
  char buffer[41];
  char* end = buffer + sizeof(buffer);
  char* p = end;
  uint128 magnitude = value < 0 ? -static_cast<uint128>(value) : static_cast<uint128>(value);
  do {
    *--p = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  if (value < 0) *--p = '-';
  return std::string(p, end);
}

bool ParseBoolean(std::string_view text, bool* value) {
  static constexpr std::string_view kTrue[] = {"true", "t", "1", "yes", "y", "on"};
  static constexpr std::string_view kFalse[] = {"false", "f", "0", "no", "n", "off"};
  for (std::string_view word : kTrue) {
    if (EqualsIgnoreCase(text, word)) {
      *value = true;
      return true;
    }
  }
  for (std::string_view word : kFalse) {
    if (EqualsIgnoreCase(text, word)) {
      *value = false;
      return true;
    }
  }
  return false;
}

bool ParseInt32(std::string_view text, int32_t* value) { return ParseInteger(text, value); }
bool ParseInt64(std::string_view text, int64_t* value) { return ParseInteger(text, value); }

bool ParseDouble(std::string_view text, double* value) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end || *begin == '+' || (*begin == '-' && begin != text.data())) return false;
  double parsed;
  auto [ptr, ec] = std::from_chars(begin, end, parsed, std::chars_format::general);
  if (ec != std::errc() || ptr != end) return false;
  *value = parsed;
  return true;
}

bool ParseDecimal(std::string_view text, int precision, int scale, int128* unscaled) {
  DCHECK(precision >= 1 && precision <= kMaxDecimalPrecision && scale >= 0 && scale <= precision);
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  // Mantissa digits: [int_begin, int_end) and [frac_begin, frac_end).
  const size_t int_begin = pos;
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  const size_t int_end = pos;
  size_t frac_begin = pos, frac_end = pos;
  if (pos < text.size() && text[pos] == '.') {
    frac_begin = ++pos;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    frac_end = pos;
  }
  const int64_t int_digits = static_cast<int64_t>(int_end - int_begin);
  const int64_t frac_digits = static_cast<int64_t>(frac_end - frac_begin);
  if (int_digits + frac_digits == 0) return false;
  int64_t exponent = 0;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    bool exponent_negative = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      exponent_negative = text[pos] == '-';
      ++pos;
    }
    if (pos >= text.size() || !IsDigit(text[pos])) return false;
    while (pos < text.size() && IsDigit(text[pos])) {
      if (exponent < 1000000) exponent = exponent * 10 + (text[pos] - '0');  // saturate; beyond is all-zero/overflow
      ++pos;
    }
    if (exponent_negative) exponent = -exponent;
  }
  if (pos != text.size()) return false;

  // unscaled = mantissa_digits * 10^shift.
  const int64_t total_digits = int_digits + frac_digits;
  const int64_t shift = exponent - frac_digits + scale;
  const int64_t kept = shift < 0 ? total_digits + shift : total_digits;  // digits before the rounding position
  const int128 limit_before_digit = kPowersOfTen[precision - 1];         // acc >= this cannot take another digit
  auto digit_at = [&](int64_t i) -> int {
    return i < int_digits ? text[int_begin + i] - '0' : text[frac_begin + (i - int_digits)] - '0';
  };
  int128 acc = 0;
  for (int64_t i = 0; i < kept; ++i) {
    if (acc >= limit_before_digit) return false;
    acc = acc * 10 + digit_at(i);
  }
  if (shift > 0 && acc != 0) {
    for (int64_t i = 0; i < shift; ++i) {
      if (acc >= limit_before_digit) return false;
      acc *= 10;
    }
  }
  if (kept >= 0 && kept < total_digits && digit_at(kept) >= 5) ++acc;  // half away from zero (on the magnitude)
  if (acc >= kPowersOfTen[precision]) return false;
  *unscaled = negative ? -acc : acc;
  return true;
}

bool ParseDate(std::string_view text, int32_t* days) {
  int year, month, day;
  size_t pos = 0;
  if (text.size() == 8 && text.find('-') == std::string_view::npos) {
    if (!ParseFixedDigits(text, &pos, 4, &year) || !ParseFixedDigits(text, &pos, 2, &month) ||
        !ParseFixedDigits(text, &pos, 2, &day)) {
      return false;
    }
  } else {
    if (!ParseFixedDigits(text, &pos, 4, &year) || pos >= text.size() || text[pos++] != '-' ||
        !ParseDigitRun(text, &pos, 2, &month) || pos >= text.size() || text[pos++] != '-' ||
        !ParseDigitRun(text, &pos, 2, &day) || pos != text.size()) {
      return false;
    }
  }
  if (!ValidCivilDate(year, month, day)) return false;
  *days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return true;
}

bool ParseTimestamp(std::string_view text, int64_t* micros) {
  size_t separator = text.find_first_of(" T");
  int32_t days;
  if (!ParseDate(text.substr(0, separator), &days)) return false;
  int64_t time = 0;
  if (separator != std::string_view::npos && !ParseTimeOfDay(text.substr(separator + 1), 2, &time)) return false;
  if (time >= kMicrosPerDay) return false;
  *micros = days * kMicrosPerDay + time;
  return true;
}

bool ParseInterval(std::string_view quantity_text, std::string_view unit, Interval* interval) {
  std::string_view text = TrimSpaces(quantity_text);
  unit = TrimSpaces(unit);
  IntervalAccumulator acc;
  if (!unit.empty()) {
    IntervalUnit parsed_unit;
    if (!ParseIntervalUnit(unit, &parsed_unit)) return false;
    size_t pos = 0;
    IntervalNumber number;
    if (ParseIntervalNumber(text, &pos, &number) && pos == text.size()) {
      if (!acc.AddNumber(number, parsed_unit)) return false;
      return acc.Finish(interval);
    }
    // Not a bare number: the text carries its own units (INTERVAL '1 day 2 hours' DAY); fall through.
  }
  if (text.empty()) return false;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && IsSpace(text[pos])) ++pos;
    if (pos >= text.size()) break;
    size_t token_end = pos;
    while (token_end < text.size() && !IsSpace(text[token_end])) ++token_end;
    std::string_view token = text.substr(pos, token_end - pos);
    if (IsTimeToken(token)) {
      if (!AddTimeToken(token, &acc)) return false;
      pos = token_end;
      continue;
    }
    IntervalNumber number;
    size_t number_end = pos;
    if (!ParseIntervalNumber(text, &number_end, &number)) return false;
    // The unit follows directly ("3days") or after spaces ("3 days"); a lone trailing number means seconds.
    size_t unit_begin = number_end;
    while (unit_begin < text.size() && IsSpace(text[unit_begin])) ++unit_begin;
    size_t unit_end = unit_begin;
    while (unit_end < text.size() && !IsSpace(text[unit_end])) ++unit_end;
    IntervalUnit parsed_unit = IntervalUnit::kSecond;
    if (unit_begin == text.size()) {
      pos = unit_begin;
    } else {
      if (!ParseIntervalUnit(text.substr(unit_begin, unit_end - unit_begin), &parsed_unit)) return false;
      pos = unit_end;
    }
    if (!acc.AddNumber(number, parsed_unit)) return false;
  }
  return acc.Finish(interval);
}

int32_t DaysFromCivil(int year, unsigned month, unsigned day) {
  // http://howardhinnant.github.io/date_algorithms.html#days_from_civil
  const int y = year - (month <= 2 ? 1 : 0);
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);                           // [0, 399]
  const unsigned doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                          // [0, 146096]
  return era * 146097 + static_cast<int>(doe) - 719468;
}

void CivilFromDays(int32_t days, int* year, unsigned* month, unsigned* day) {
  // http://howardhinnant.github.io/date_algorithms.html#civil_from_days
  const int64_t z = static_cast<int64_t>(days) + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);                // [0, 146096]
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const unsigned mp = (5 * doy + 2) / 153;                                     // [0, 11]
  *day = doy - (153 * mp + 2) / 5 + 1;
  *month = mp < 10 ? mp + 3 : mp - 9;
  *year = static_cast<int>(static_cast<int64_t>(yoe) + era * 400 + (*month <= 2 ? 1 : 0));
}

int32_t AddMonthsToDate(int32_t days, int32_t months) {
  int year;
  unsigned month, day;
  CivilFromDays(days, &year, &month, &day);
  int64_t total = static_cast<int64_t>(year) * 12 + (month - 1) + months;
  int64_t new_year = total >= 0 ? total / 12 : (total - 11) / 12;
  unsigned new_month = static_cast<unsigned>(total - new_year * 12) + 1;
  unsigned last_day = DaysInMonth(static_cast<int>(new_year), new_month);
  return DaysFromCivil(static_cast<int>(new_year), new_month, day < last_day ? day : last_day);
}

int64_t AddIntervalToTimestamp(int64_t micros, const Interval& interval) {
  int64_t days = micros >= 0 ? micros / kMicrosPerDay : (micros - (kMicrosPerDay - 1)) / kMicrosPerDay;
  int64_t time = micros - days * kMicrosPerDay;
  if (interval.months != 0) days = AddMonthsToDate(static_cast<int32_t>(days), interval.months);
  return (days + interval.days) * kMicrosPerDay + time + interval.micros;
}

void AppendInt64(int64_t value, std::string* out) {
  char buffer[24];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, ptr);
}

void AppendDouble(double value, std::string* out) {
  if (value != value) {  // NaN: to_chars may write "-nan"
    out->append("nan");
    return;
  }
  char buffer[32];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  DCHECK(ec == std::errc());
  out->append(buffer, ptr);
}

void AppendDecimal(int128 unscaled, int scale, std::string* out) {
  DCHECK(scale >= 0 && scale <= kMaxDecimalPrecision);
  char buffer[48];
  char* end = buffer + sizeof(buffer);
  char* p = end;
  uint128 magnitude = unscaled < 0 ? -static_cast<uint128>(unscaled) : static_cast<uint128>(unscaled);
  for (int i = 0; i < scale; ++i) {
    *--p = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  }
  if (scale > 0) *--p = '.';
  do {
    *--p = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  if (unscaled < 0) *--p = '-';
  out->append(p, end);
}

namespace {
void AppendPadded(int64_t value, int width, std::string* out) {
  char buffer[24];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  for (int n = static_cast<int>(ptr - buffer); n < width; ++n) out->push_back('0');
  out->append(buffer, ptr);
}

// Appends ".ffffff" without trailing zeros when fraction_micros != 0.
void AppendMicrosFraction(int64_t fraction_micros, std::string* out) {
  if (fraction_micros == 0) return;
  char digits[6];
  for (int i = 5; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + fraction_micros % 10);
    fraction_micros /= 10;
  }
  int length = 6;
  while (digits[length - 1] == '0') --length;
  out->push_back('.');
  out->append(digits, length);
}

void AppendTimeOfDay(int64_t micros, std::string* out) {  // micros >= 0; hours may exceed 23
  AppendPadded(micros / kMicrosPerHour, 2, out);
  out->push_back(':');
  AppendPadded(micros / kMicrosPerMinute % 60, 2, out);
  out->push_back(':');
  AppendPadded(micros / kMicrosPerSecond % 60, 2, out);
  AppendMicrosFraction(micros % kMicrosPerSecond, out);
}
}  // namespace

void AppendDate(int32_t days, std::string* out) {
  int year;
  unsigned month, day;
  CivilFromDays(days, &year, &month, &day);
  if (year < 0) {
    out->push_back('-');
    AppendPadded(-static_cast<int64_t>(year), 4, out);
  } else {
    AppendPadded(year, 4, out);
  }
  out->push_back('-');
  AppendPadded(month, 2, out);
  out->push_back('-');
  AppendPadded(day, 2, out);
}

void AppendTimestamp(int64_t micros, std::string* out) {
  int64_t days = micros >= 0 ? micros / kMicrosPerDay : -((-(micros + 1)) / kMicrosPerDay) - 1;
  int64_t time = micros - days * kMicrosPerDay;
  AppendDate(static_cast<int32_t>(days), out);
  out->push_back(' ');
  AppendTimeOfDay(time, out);
}

void AppendInterval(const Interval& interval, std::string* out) {
  // Mirrors PostgreSQL's "postgres" IntervalStyle (EncodeInterval).
  bool is_zero = true;
  bool is_before = false;
  auto add_part = [&](int64_t value, std::string_view unit) {
    if (value == 0) return;
    if (!is_zero) out->push_back(' ');
    if (is_before && value > 0) out->push_back('+');
    AppendInt64(value, out);
    out->push_back(' ');
    out->append(unit);
    if (value != 1) out->push_back('s');
    is_before = value < 0;
    is_zero = false;
  };
  add_part(interval.months / 12, "year");
  add_part(interval.months % 12, "mon");
  add_part(interval.days, "day");
  if (interval.micros != 0 || is_zero) {
    bool minus = interval.micros < 0;
    if (!is_zero) out->push_back(' ');
    if (minus) {
      out->push_back('-');
    } else if (is_before) {
      out->push_back('+');
    }
    // Magnitude as unsigned so INT64_MIN does not overflow.
    uint64_t magnitude = minus ? 0 - static_cast<uint64_t>(interval.micros) : static_cast<uint64_t>(interval.micros);
    AppendPadded(static_cast<int64_t>(magnitude / kMicrosPerHour), 2, out);
    out->push_back(':');
    AppendPadded(static_cast<int64_t>(magnitude / kMicrosPerMinute % 60), 2, out);
    out->push_back(':');
    AppendPadded(static_cast<int64_t>(magnitude / kMicrosPerSecond % 60), 2, out);
    AppendMicrosFraction(static_cast<int64_t>(magnitude % kMicrosPerSecond), out);
  }
}

}  // namespace tessera
