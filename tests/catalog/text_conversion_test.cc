#include "catalog/text_conversion.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace tessera {
namespace {

std::string DecimalText(int128 unscaled, int scale) {
  std::string out;
  AppendDecimal(unscaled, scale, &out);
  return out;
}

// Parses `text` as DECIMAL(p,s) and prints it back; "fail" when the parse fails.
std::string ReparseDecimal(std::string_view text, int precision, int scale) {
  int128 u;
  if (!ParseDecimal(text, precision, scale, &u)) return "fail";
  return DecimalText(u, scale);
}

std::string DateText(int32_t days) {
  std::string out;
  AppendDate(days, &out);
  return out;
}

std::string TimestampText(int64_t micros) {
  std::string out;
  AppendTimestamp(micros, &out);
  return out;
}

std::string IntervalText(const Interval& interval) {
  std::string out;
  AppendInterval(interval, &out);
  return out;
}

int32_t Days(std::string_view text) {
  int32_t days = 0;
  EXPECT_TRUE(ParseDate(text, &days)) << text;
  return days;
}

TEST(PowerOfTenTest, Table) {
  EXPECT_EQ(PowerOfTen(0), 1);
  EXPECT_EQ(PowerOfTen(18), int128{1000000000000000000});
  EXPECT_EQ(Int128ToString(PowerOfTen(38)), "1" + std::string(38, '0'));
  EXPECT_EQ(Int128ToString(MaxDecimalUnscaled(38)), std::string(38, '9'));
}

TEST(Int128ToStringTest, Extremes) {
  EXPECT_EQ(Int128ToString(0), "0");
  EXPECT_EQ(Int128ToString(-7), "-7");
  const int128 max = static_cast<int128>((static_cast<unsigned __int128>(1) << 127) - 1);
  EXPECT_EQ(Int128ToString(max), "170141183460469231731687303715884105727");
  EXPECT_EQ(Int128ToString(-max - 1), "-170141183460469231731687303715884105728");
}

TEST(ParseBooleanTest, AcceptedSpellings) {
  bool b = false;
  for (const char* t : {"true", "TRUE", "True", "t", "T", "1", "yes", "YES", "y", "on"}) {
    b = false;
    EXPECT_TRUE(ParseBoolean(t, &b)) << t;
    EXPECT_TRUE(b) << t;
  }
  for (const char* t : {"false", "FALSE", "f", "F", "0", "no", "No", "n", "off"}) {
    b = true;
    EXPECT_TRUE(ParseBoolean(t, &b)) << t;
    EXPECT_FALSE(b) << t;
  }
  for (const char* t : {"", " true", "true ", "2", "tru", "yess", "-1"}) EXPECT_FALSE(ParseBoolean(t, &b)) << t;
}

TEST(ParseIntTest, Int32Boundaries) {
  int32_t v = 0;
  EXPECT_TRUE(ParseInt32("2147483647", &v));
  EXPECT_EQ(v, INT32_MAX);
  EXPECT_TRUE(ParseInt32("-2147483648", &v));
  EXPECT_EQ(v, INT32_MIN);
  EXPECT_TRUE(ParseInt32("+42", &v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(ParseInt32("-0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ParseInt32("007", &v));
  EXPECT_EQ(v, 7);
  v = 5;
  for (const char* t : {"2147483648", "-2147483649", "99999999999", "", "+", "-", "+-1", "-+1", "1.0", "1e3", " 1",
                        "1 ", "0x10", "12a", "--1"}) {
    EXPECT_FALSE(ParseInt32(t, &v)) << t;
  }
  EXPECT_EQ(v, 5) << "a failed parse leaves the output untouched";
}

TEST(ParseIntTest, Int64Boundaries) {
  int64_t v = 0;
  EXPECT_TRUE(ParseInt64("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(ParseInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_FALSE(ParseInt64("9223372036854775808", &v));
  EXPECT_FALSE(ParseInt64("-9223372036854775809", &v));
  EXPECT_FALSE(ParseInt64("", &v));
}

TEST(ParseDoubleTest, FormsAndRejections) {
  double d = 0;
  EXPECT_TRUE(ParseDouble("1.5", &d));
  EXPECT_EQ(d, 1.5);
  EXPECT_TRUE(ParseDouble("+2.5e-3", &d));
  EXPECT_EQ(d, 2.5e-3);
  EXPECT_TRUE(ParseDouble("-.5", &d));
  EXPECT_EQ(d, -0.5);
  EXPECT_TRUE(ParseDouble("0.1", &d));
  EXPECT_EQ(d, 0.1);
  EXPECT_TRUE(ParseDouble("inf", &d));
  EXPECT_TRUE(std::isinf(d));
  EXPECT_TRUE(ParseDouble("nan", &d));
  EXPECT_TRUE(std::isnan(d));
  for (const char* t : {"", "+", "+-1", " 1", "1 ", "1.5x", "1e", "0x1p3", "1,5"})
    EXPECT_FALSE(ParseDouble(t, &d)) << t;
}

TEST(AppendDoubleTest, ShortestRoundTrip) {
  for (double d : {0.1, 1.0 / 3, 1e300, -2.5, 123456789.125, 5e-324, std::numeric_limits<double>::max()}) {
    std::string s;
    AppendDouble(d, &s);
    double back;
    ASSERT_TRUE(ParseDouble(s, &back)) << s;
    EXPECT_EQ(back, d) << s;
  }
  std::string s;
  AppendDouble(0.1, &s);
  EXPECT_EQ(s, "0.1");
  s.clear();
  AppendDouble(std::nan(""), &s);
  EXPECT_EQ(s, "nan");
}

TEST(ParseDecimalTest, Basics) {
  EXPECT_EQ(ReparseDecimal("-12.345", 10, 3), "-12.345");
  EXPECT_EQ(ReparseDecimal("12", 10, 3), "12.000");
  EXPECT_EQ(ReparseDecimal(".5", 10, 2), "0.50");
  EXPECT_EQ(ReparseDecimal("5.", 10, 2), "5.00");
  EXPECT_EQ(ReparseDecimal("+7", 3, 0), "7");
  EXPECT_EQ(ReparseDecimal("1e3", 10, 2), "1000.00");
  EXPECT_EQ(ReparseDecimal("1.5E-2", 10, 3), "0.015");
  EXPECT_EQ(ReparseDecimal("-0.05", 15, 2), "-0.05");
  EXPECT_EQ(ReparseDecimal("-0.00", 15, 2), "0.00");
  EXPECT_EQ(ReparseDecimal("000123.40", 5, 2), "123.40");
  for (const char* t : {"", ".", "-", "+.", "1e", "1e+", "1.2.3", " 1", "1 ", "1,5", "abc", "--1", "e5"}) {
    EXPECT_EQ(ReparseDecimal(t, 10, 2), "fail") << t;
  }
}

TEST(ParseDecimalTest, RoundsHalfAwayFromZero) {
  EXPECT_EQ(ReparseDecimal("1.005", 15, 2), "1.01");
  EXPECT_EQ(ReparseDecimal("1.0049999", 15, 2), "1.00");
  EXPECT_EQ(ReparseDecimal("-1.005", 15, 2), "-1.01");
  EXPECT_EQ(ReparseDecimal("2.5", 15, 0), "3");
  EXPECT_EQ(ReparseDecimal("-2.5", 15, 0), "-3");
  EXPECT_EQ(ReparseDecimal("-0.004", 15, 2), "0.00");
  EXPECT_EQ(ReparseDecimal("-0.005", 15, 2), "-0.01");
  EXPECT_EQ(ReparseDecimal("0.5e-2", 15, 2), "0.01");
  EXPECT_EQ(ReparseDecimal("4e-5", 15, 2), "0.00");
  EXPECT_EQ(ReparseDecimal("1e-999999999", 15, 2), "0.00");
}

TEST(ParseDecimalTest, PrecisionLimits) {
  // DECIMAL(15,2): 13 integer digits.
  EXPECT_EQ(ReparseDecimal("9999999999999.99", 15, 2), "9999999999999.99");
  EXPECT_EQ(ReparseDecimal("-9999999999999.99", 15, 2), "-9999999999999.99");
  EXPECT_EQ(ReparseDecimal("10000000000000", 15, 2), "fail");
  EXPECT_EQ(ReparseDecimal("9999999999999.995", 15, 2), "fail") << "rounding up overflows";
  EXPECT_EQ(ReparseDecimal("9999999999999.994", 15, 2), "9999999999999.99");
  EXPECT_EQ(ReparseDecimal("1e13", 15, 2), "fail");
  EXPECT_EQ(ReparseDecimal("1e12", 15, 2), "1000000000000.00");
  EXPECT_EQ(ReparseDecimal("0e999999", 15, 2), "0.00");
  // 38 digits.
  const std::string nines(38, '9');
  EXPECT_EQ(ReparseDecimal(nines, 38, 0), nines);
  EXPECT_EQ(ReparseDecimal("-" + nines, 38, 0), "-" + nines);
  EXPECT_EQ(ReparseDecimal("1" + std::string(38, '0'), 38, 0), "fail");
  EXPECT_EQ(ReparseDecimal(nines + ".4", 38, 0), nines);
  EXPECT_EQ(ReparseDecimal(nines + ".5", 38, 0), "fail");
  EXPECT_EQ(ReparseDecimal("0." + nines, 38, 38), "0." + nines);
  EXPECT_EQ(ReparseDecimal("1", 38, 38), "fail");
  EXPECT_EQ(ReparseDecimal("12345678901234567890.123456789012345678", 38, 18),
            "12345678901234567890.123456789012345678");
  EXPECT_EQ(ReparseDecimal(std::string(100, '0') + "1.5", 2, 1), "1.5");
  EXPECT_EQ(ReparseDecimal("1" + std::string(100, '0'), 38, 0), "fail");
}

TEST(AppendDecimalTest, FractionDigits) {
  EXPECT_EQ(DecimalText(12340, 2), "123.40");
  EXPECT_EQ(DecimalText(-5, 2), "-0.05");
  EXPECT_EQ(DecimalText(0, 2), "0.00");
  EXPECT_EQ(DecimalText(7, 0), "7");
  EXPECT_EQ(DecimalText(-7, 0), "-7");
  EXPECT_EQ(DecimalText(1, 38), "0.00000000000000000000000000000000000001");
  EXPECT_EQ(DecimalText(-MaxDecimalUnscaled(38), 0), "-" + std::string(38, '9'));
}

TEST(CivilCalendarTest, KnownDays) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(1, 1, 1), -719162);
  EXPECT_EQ(DaysFromCivil(9999, 12, 31), 2932896);
}

TEST(CivilCalendarTest, RoundTripEveryDayOfYears1To9999) {
  int32_t expected = DaysFromCivil(1, 1, 1);
  for (int32_t days = expected; days <= DaysFromCivil(9999, 12, 31); ++days) {
    int y;
    unsigned m, d;
    CivilFromDays(days, &y, &m, &d);
    ASSERT_EQ(DaysFromCivil(y, m, d), days) << y << "-" << m << "-" << d;
  }
}

TEST(ParseDateTest, FormsAndRoundTrips) {
  EXPECT_EQ(Days("1970-01-01"), 0);
  EXPECT_EQ(Days("1969-12-31"), -1);
  EXPECT_EQ(Days("1970-01-02"), 1);
  EXPECT_EQ(Days("19700102"), 1);
  EXPECT_EQ(Days("2024-2-9"), Days("2024-02-09"));
  for (const char* t : {"0001-01-01", "1969-12-31", "1970-01-01", "1999-12-31", "2000-02-29", "2024-02-29",
                        "9999-12-31", "1600-02-29", "1582-10-10"}) {
    EXPECT_EQ(DateText(Days(t)), t);
  }
}

TEST(ParseDateTest, Validation) {
  int32_t days = 123;
  EXPECT_TRUE(ParseDate("2000-02-29", &days));
  for (const char* t :
       {"1900-02-29",  "2023-02-29", "2024-02-30",  "2024-04-31",  "2024-13-01", "2024-00-10",  "2024-01-00",
        "0000-01-01",  "2024-01-32", "24-01-01",    "20240230",    "2024/01/01", "2024-01-01 ", " 2024-01-01",
        "2024-01-01x", "",           "2024-001-01", "10000-01-01", "2024-01",    "2024--01-01"}) {
    EXPECT_FALSE(ParseDate(t, &days)) << t;
  }
}

TEST(ParseTimestampTest, Forms) {
  int64_t us = 0;
  ASSERT_TRUE(ParseTimestamp("1970-01-01", &us));
  EXPECT_EQ(us, 0);
  ASSERT_TRUE(ParseTimestamp("1970-01-01 00:00:01", &us));
  EXPECT_EQ(us, kMicrosPerSecond);
  ASSERT_TRUE(ParseTimestamp("1970-01-01T01:02", &us));
  EXPECT_EQ(us, kMicrosPerHour + 2 * kMicrosPerMinute);
  ASSERT_TRUE(ParseTimestamp("1969-12-31 23:59:59.5", &us));
  EXPECT_EQ(us, -kMicrosPerSecond / 2);
  ASSERT_TRUE(ParseTimestamp("2024-02-29 12:34:56.123456", &us));
  EXPECT_EQ(TimestampText(us), "2024-02-29 12:34:56.123456");
  for (const char* t :
       {"0001-01-01 00:00:00", "1969-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999", "2000-01-01 10:00:00.5"}) {
    ASSERT_TRUE(ParseTimestamp(t, &us)) << t;
    EXPECT_EQ(TimestampText(us), t);
  }
  ASSERT_TRUE(ParseTimestamp("2000-01-01", &us));
  EXPECT_EQ(TimestampText(us), "2000-01-01 00:00:00");
  for (const char* t : {"2024-01-01 24:00:00", "2024-01-01 12:60", "2024-01-01 12:00:60", "2024-01-01 12",
                        "2024-01-01 12:00:00.1234567", "2024-01-01 12:00:00.", "2024-01-01  12:00", "2024-01-01 ",
                        "2024-02-30 00:00", "2024-01-01 1:2:3"}) {
    EXPECT_FALSE(ParseTimestamp(t, &us)) << t;
  }
}

TEST(AddMonthsToDateTest, ClampsToEndOfMonth) {
  EXPECT_EQ(DateText(AddMonthsToDate(Days("2024-01-31"), 1)), "2024-02-29");
  EXPECT_EQ(DateText(AddMonthsToDate(Days("2023-01-31"), 1)), "2023-02-28");
  EXPECT_EQ(DateText(AddMonthsToDate(Days("2024-03-31"), -1)), "2024-02-29");
  EXPECT_EQ(DateText(AddMonthsToDate(Days("1970-01-15"), -1)), "1969-12-15");
  EXPECT_EQ(DateText(AddMonthsToDate(Days("1998-12-01"), 3)), "1999-03-01");
  EXPECT_EQ(DateText(AddMonthsToDate(Days("2000-02-29"), 12)), "2001-02-28");
  EXPECT_EQ(DateText(AddMonthsToDate(Days("2000-05-31"), -25)), "1998-04-30");
}

TEST(AddIntervalToTimestampTest, MonthsThenDaysThenMicros) {
  int64_t ts;
  ASSERT_TRUE(ParseTimestamp("2024-01-31 23:00:00", &ts));
  EXPECT_EQ(TimestampText(AddIntervalToTimestamp(ts, Interval{1, 1, 2 * kMicrosPerHour})), "2024-03-02 01:00:00");
  ASSERT_TRUE(ParseTimestamp("1970-01-01 00:00:00", &ts));
  EXPECT_EQ(TimestampText(AddIntervalToTimestamp(ts, Interval{0, 0, -1})), "1969-12-31 23:59:59.999999");
}

Interval ParseIntervalOrDie(std::string_view text, std::string_view unit = "") {
  Interval interval{99, 99, 99};
  EXPECT_TRUE(ParseInterval(text, unit, &interval)) << text << " / " << unit;
  return interval;
}

TEST(ParseIntervalTest, SeparateUnit) {
  EXPECT_EQ(ParseIntervalOrDie("3", "MONTH"), (Interval{3, 0, 0}));
  EXPECT_EQ(ParseIntervalOrDie("3", "months"), (Interval{3, 0, 0}));
  EXPECT_EQ(ParseIntervalOrDie("1", "YEAR"), (Interval{12, 0, 0}));
  EXPECT_EQ(ParseIntervalOrDie("90", "DAY"), (Interval{0, 90, 0}));
  EXPECT_EQ(ParseIntervalOrDie("-2", "HOUR"), (Interval{0, 0, -2 * kMicrosPerHour}));
  EXPECT_EQ(ParseIntervalOrDie("1.5", "SECOND"), (Interval{0, 0, 1500000}));
  EXPECT_EQ(ParseIntervalOrDie("1.5", "DAY"), (Interval{0, 1, 12 * kMicrosPerHour}));
  EXPECT_EQ(ParseIntervalOrDie("1.5", "YEAR"), (Interval{18, 0, 0}));
  EXPECT_EQ(ParseIntervalOrDie("1 day", "DAY"), (Interval{0, 1, 0}));
  Interval i;
  EXPECT_FALSE(ParseInterval("3", "FORTNIGHT", &i));
  EXPECT_FALSE(ParseInterval("x", "DAY", &i));
}

TEST(ParseIntervalTest, TextWithUnits) {
  EXPECT_EQ(ParseIntervalOrDie("1 day"), (Interval{0, 1, 0}));
  EXPECT_EQ(ParseIntervalOrDie("1 year 2 months"), (Interval{14, 0, 0}));
  EXPECT_EQ(ParseIntervalOrDie("1 year 2 mons 3 days 04:05:06"),
            (Interval{14, 3, 4 * kMicrosPerHour + 5 * kMicrosPerMinute + 6 * kMicrosPerSecond}));
  EXPECT_EQ(ParseIntervalOrDie("2 WEEKS"), (Interval{0, 14, 0}));
  EXPECT_EQ(ParseIntervalOrDie("3days"), (Interval{0, 3, 0}));
  EXPECT_EQ(ParseIntervalOrDie("-1 year +2 months"), (Interval{-10, 0, 0}));
  EXPECT_EQ(ParseIntervalOrDie("-01:30"), (Interval{0, 0, -90 * kMicrosPerMinute}));
  EXPECT_EQ(ParseIntervalOrDie("100:00:00.25"), (Interval{0, 0, 100 * kMicrosPerHour + 250000}));
  EXPECT_EQ(ParseIntervalOrDie("  5 minutes  "), (Interval{0, 0, 5 * kMicrosPerMinute}));
  EXPECT_EQ(ParseIntervalOrDie("10 ms 7 us"), (Interval{0, 0, 10007}));
  EXPECT_EQ(ParseIntervalOrDie("1.5 months"), (Interval{1, 15, 0}));
  EXPECT_EQ(ParseIntervalOrDie("42"), (Interval{0, 0, 42 * kMicrosPerSecond}));
  Interval i;
  for (const char* t : {"", "   ", "day", "1 fortnight", "1 day extra", "1:2", "1:60", "--1 day", "99999999999 years",
                        "3000000000 days"}) {
    EXPECT_FALSE(ParseInterval(t, "", &i)) << t;
  }
}

TEST(AppendIntervalTest, PostgresStyle) {
  EXPECT_EQ(IntervalText({}), "00:00:00");
  EXPECT_EQ(IntervalText({14, 3, 4 * kMicrosPerHour + 5 * kMicrosPerMinute + 6 * kMicrosPerSecond}),
            "1 year 2 mons 3 days 04:05:06");
  EXPECT_EQ(IntervalText({1, 0, 0}), "1 mon");
  EXPECT_EQ(IntervalText({24, 1, 0}), "2 years 1 day");
  EXPECT_EQ(IntervalText({0, -1, 0}), "-1 days");
  EXPECT_EQ(IntervalText({-14, 0, 0}), "-1 years -2 mons");
  EXPECT_EQ(IntervalText({0, -1, kMicrosPerHour}), "-1 days +01:00:00");
  EXPECT_EQ(IntervalText({0, 0, -1500000}), "-00:00:01.5");
  EXPECT_EQ(IntervalText({0, 0, 100 * kMicrosPerHour}), "100:00:00");
  EXPECT_EQ(IntervalText({0, 0, std::numeric_limits<int64_t>::min()}), "-2562047788:00:54.775808");
}

TEST(AppendIntervalTest, RoundTripsThroughParse) {
  for (Interval i : {Interval{14, 3, 14706000000}, Interval{0, -1, 3600000000}, Interval{-14, 0, 0},
                     Interval{0, 0, -1500000}, Interval{7, -8, 123456}}) {
    EXPECT_EQ(ParseIntervalOrDie(IntervalText(i)), i) << IntervalText(i);
  }
}

TEST(AppendTest, Int64AndDates) {
  std::string s;
  AppendInt64(INT64_MIN, &s);
  EXPECT_EQ(s, "-9223372036854775808");
  EXPECT_EQ(DateText(-1), "1969-12-31");
  EXPECT_EQ(DateText(DaysFromCivil(12345, 1, 1)), "12345-01-01");
  EXPECT_EQ(DateText(DaysFromCivil(-44, 3, 15)), "-0044-03-15");
  EXPECT_EQ(TimestampText(-1), "1969-12-31 23:59:59.999999");
}

}  // namespace
}  // namespace tessera
