#include "tests/sqllogictest/result_comparison.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::sqllogictest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

RenderedResult Result(std::vector<std::string> names, RenderedRows rows) {
  return RenderedResult{std::move(names), std::move(rows)};
}

TEST(RealValuesMatchTest, RelativeTolerance) {
  EXPECT_TRUE(RealValuesMatch("0.1", "0.1"));
  EXPECT_TRUE(RealValuesMatch("0.3", "0.30000000000000004"));
  EXPECT_TRUE(RealValuesMatch("1", "1.0000000001"));
  EXPECT_TRUE(RealValuesMatch("1e12", "1000000000100"));   // 1e-10 relative
  EXPECT_FALSE(RealValuesMatch("1e12", "1000000010000"));  // 1e-8 relative
  EXPECT_FALSE(RealValuesMatch("0.5", "0.501"));
  EXPECT_TRUE(RealValuesMatch("+2.5", "2.5"));
  EXPECT_TRUE(RealValuesMatch("-2.5", "-2.50"));
}

TEST(RealValuesMatchTest, TwoFractionDigitsAllowACent) {
  EXPECT_TRUE(RealValuesMatch("12345.68", "12345.678"));
  EXPECT_TRUE(RealValuesMatch("1.23", "1.24"));
  EXPECT_TRUE(RealValuesMatch("-1.23", "-1.225"));
  EXPECT_FALSE(RealValuesMatch("1.23", "1.2401"));
  // Only exactly two fraction digits switch the money rule on.
  EXPECT_FALSE(RealValuesMatch("1.2", "1.21"));
  EXPECT_FALSE(RealValuesMatch("1.230", "1.24"));
  EXPECT_FALSE(RealValuesMatch("123", "123.005"));
}

TEST(RealValuesMatchTest, NonNumbersMustMatchExactly) {
  EXPECT_TRUE(RealValuesMatch("NULL", "NULL"));
  EXPECT_FALSE(RealValuesMatch("NULL", "0"));
  EXPECT_FALSE(RealValuesMatch("0", "NULL"));
  EXPECT_TRUE(RealValuesMatch("(empty)", "(empty)"));
  EXPECT_FALSE(RealValuesMatch("1.5x", "1.5"));
  EXPECT_TRUE(RealValuesMatch("nan", "nan"));
  EXPECT_TRUE(RealValuesMatch("NaN", "nan"));
  EXPECT_FALSE(RealValuesMatch("nan", "1"));
  EXPECT_TRUE(RealValuesMatch("inf", "inf"));
  EXPECT_FALSE(RealValuesMatch("inf", "-inf"));
  EXPECT_FALSE(RealValuesMatch("inf", "1e308"));
}

TEST(SplitExpectedRowsTest, TabSeparatedRows) {
  absl::StatusOr<RenderedRows> rows = SplitExpectedRows({"1\ta", "2\t(empty)"}, 2);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("1", "a"), ElementsAre("2", "(empty)")));
}

TEST(SplitExpectedRowsTest, OneValuePerLine) {
  absl::StatusOr<RenderedRows> rows = SplitExpectedRows({"1", "a", "2", "b"}, 2);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("1", "a"), ElementsAre("2", "b")));
}

TEST(SplitExpectedRowsTest, SingleColumnKeepsSpaces) {
  absl::StatusOr<RenderedRows> rows = SplitExpectedRows({"hello world", " padded "}, 1);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("hello world"), ElementsAre(" padded ")));
}

TEST(SplitExpectedRowsTest, WrongValueCounts) {
  absl::StatusOr<RenderedRows> rows = SplitExpectedRows({"1\ta", "2\tb\tc"}, 2);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("line 2 has 3 tab-separated value(s) but the query has 2"));
  rows = SplitExpectedRows({"1 a", "2 b", "3 c"}, 2);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("separate values with tabs"));
  rows = SplitExpectedRows({"1"}, 0);
  EXPECT_FALSE(rows.ok());
}

TEST(CompareQueryResultTest, NoSortComparesInOrder) {
  RenderedResult actual = Result({"a", "b"}, {{"1", "x"}, {"2", "y"}});
  EXPECT_TRUE(CompareQueryResult("IT", SortMode::kNoSort, {"1\tx", "2\ty"}, actual).matched);
  ComparisonOutcome outcome = CompareQueryResult("IT", SortMode::kNoSort, {"2\ty", "1\tx"}, actual);
  EXPECT_FALSE(outcome.matched);
  EXPECT_THAT(outcome.explanation, HasSubstr("row 1, column 1 ('I'): expected '2' but got '1'"));
  EXPECT_THAT(outcome.explanation, HasSubstr("expected (2 rows):\n    2\ty\n    1\tx"));
  EXPECT_THAT(outcome.explanation, HasSubstr("actual (2 rows):\n    1\tx\n    2\ty"));
}

TEST(CompareQueryResultTest, RowSortSortsBothSides) {
  RenderedResult actual = Result({"a", "b"}, {{"2", "y"}, {"1", "x"}, {"1", "w"}});
  EXPECT_TRUE(CompareQueryResult("IT", SortMode::kRowSort, {"1\tw", "1\tx", "2\ty"}, actual).matched);
  EXPECT_TRUE(CompareQueryResult("IT", SortMode::kRowSort, {"2\ty", "1\tx", "1\tw"}, actual).matched);
  // Rows stay rows: swapping values between rows is a mismatch.
  EXPECT_FALSE(CompareQueryResult("IT", SortMode::kRowSort, {"1\tx", "1\ty", "2\tw"}, actual).matched);
}

TEST(CompareQueryResultTest, ValueSortIgnoresRowBoundaries) {
  RenderedResult actual = Result({"a", "b"}, {{"2", "y"}, {"1", "x"}});
  EXPECT_TRUE(CompareQueryResult("IT", SortMode::kValueSort, {"1", "2", "x", "y"}, actual).matched);
  EXPECT_TRUE(CompareQueryResult("IT", SortMode::kValueSort, {"1\ty", "2\tx"}, actual).matched);
  ComparisonOutcome outcome = CompareQueryResult("IT", SortMode::kValueSort, {"1", "2", "x", "z"}, actual);
  EXPECT_FALSE(outcome.matched);
  EXPECT_THAT(outcome.explanation, HasSubstr("sorted value 4"));
}

TEST(CompareQueryResultTest, ValueSortUsesToleranceOnlyWhenAllColumnsAreReal) {
  RenderedResult reals = Result({"a", "b"}, {{"0.30000000000000004", "1"}});
  EXPECT_TRUE(CompareQueryResult("RR", SortMode::kValueSort, {"0.3", "1"}, reals).matched);
  EXPECT_FALSE(CompareQueryResult("RI", SortMode::kValueSort, {"0.3", "1"}, reals).matched);
}

TEST(CompareQueryResultTest, RealColumnsUseTolerance) {
  RenderedResult actual = Result({"sum", "name"}, {{"12345.678", "a"}, {"0.30000000000000004", "b"}});
  EXPECT_TRUE(CompareQueryResult("RT", SortMode::kNoSort, {"12345.68\ta", "0.3\tb"}, actual).matched);
  // Text columns are exact.
  EXPECT_FALSE(CompareQueryResult("TT", SortMode::kNoSort, {"12345.68\ta", "0.3\tb"}, actual).matched);
}

TEST(CompareQueryResultTest, RegexPatternsMatchTheWholeResult) {
  RenderedResult actual = Result({"plan"}, {{"#0 Select (scan t)"}, {"#1 Sort <- #0 blocking"}});
  EXPECT_TRUE(CompareQueryResult("T", SortMode::kNoSort, {"<REGEX>:Select", "<REGEX>:#0 blocking$"}, actual).matched);
  EXPECT_TRUE(CompareQueryResult("T", SortMode::kNoSort, {"<REGEX>:scan t\\)\n#1"}, actual).matched);
  EXPECT_TRUE(CompareQueryResult("T", SortMode::kNoSort, {"<REGEX>:Sort", "<!REGEX>:HashJoin"}, actual).matched);
  ComparisonOutcome outcome = CompareQueryResult("T", SortMode::kNoSort, {"<REGEX>:HashJoin"}, actual);
  EXPECT_FALSE(outcome.matched);
  EXPECT_THAT(outcome.explanation, HasSubstr("does not match regex 'HashJoin'"));
  EXPECT_FALSE(CompareQueryResult("T", SortMode::kNoSort, {"<!REGEX>:Sort"}, actual).matched);
  EXPECT_FALSE(CompareQueryResult("T", SortMode::kNoSort, {"<REGEX>:Sort", "#0 Select (scan t)"}, actual).matched);
  EXPECT_FALSE(CompareQueryResult("T", SortMode::kNoSort, {"<REGEX>:(unclosed"}, actual).matched);
}

TEST(CompareQueryResultTest, NullAndEmptyAreDistinct) {
  RenderedResult actual = Result({"a"}, {{"NULL"}, {"(empty)"}});
  EXPECT_TRUE(CompareQueryResult("T", SortMode::kNoSort, {"NULL", "(empty)"}, actual).matched);
  EXPECT_FALSE(CompareQueryResult("T", SortMode::kNoSort, {"(empty)", "NULL"}, actual).matched);
  EXPECT_FALSE(CompareQueryResult("R", SortMode::kNoSort, {"0", "(empty)"}, actual).matched);
}

TEST(CompareQueryResultTest, RowCountMismatch) {
  RenderedResult actual = Result({"a"}, {{"1"}, {"2"}});
  ComparisonOutcome outcome = CompareQueryResult("I", SortMode::kNoSort, {"1"}, actual);
  EXPECT_FALSE(outcome.matched);
  EXPECT_THAT(outcome.explanation, HasSubstr("expected 1 rows but got 2"));
  EXPECT_FALSE(CompareQueryResult("I", SortMode::kNoSort, {}, actual).matched);
  EXPECT_TRUE(CompareQueryResult("I", SortMode::kNoSort, {}, Result({"a"}, {})).matched);
}

TEST(CompareQueryResultTest, ColumnCountMismatchIsClear) {
  RenderedResult actual = Result({"a", "b", "c"}, {{"1", "2", "3"}});
  ComparisonOutcome outcome = CompareQueryResult("II", SortMode::kNoSort, {"1\t2"}, actual);
  EXPECT_FALSE(outcome.matched);
  EXPECT_THAT(outcome.explanation, HasSubstr("declares 2 column(s) ('II') but the result has 3: [a, b, c]"));
  EXPECT_THAT(outcome.explanation, HasSubstr("actual (1 row):\n    1\t2\t3"));
  EXPECT_THAT(outcome.explanation, ::testing::Not(HasSubstr("expected (")));
}

TEST(CompareQueryResultTest, PrintsAtMostTwentyRows) {
  RenderedRows rows;
  for (int i = 0; i < 25; ++i) rows.push_back({std::to_string(i)});
  ComparisonOutcome outcome = CompareQueryResult("I", SortMode::kNoSort, {"0"}, Result({"a"}, rows));
  EXPECT_THAT(outcome.explanation, HasSubstr("\n    19\n    ... 5 more"));
  EXPECT_THAT(outcome.explanation, ::testing::Not(HasSubstr("\n    20\n")));
}

TEST(CheckErrorMessageTest, SubstringAndRegex) {
  std::string message = "table \"missing\" does not exist (line 1, column 15)";
  EXPECT_TRUE(CheckErrorMessage(message, "", "").matched);
  EXPECT_TRUE(CheckErrorMessage(message, "", "does not exist").matched);
  EXPECT_FALSE(CheckErrorMessage(message, "", "no such table").matched);
  EXPECT_TRUE(CheckErrorMessage(message, "table \"\\w+\" does not", "").matched);
  EXPECT_TRUE(CheckErrorMessage(message, "column [0-9]+", "").matched);  // search, not full match
  ComparisonOutcome outcome = CheckErrorMessage(message, "^does", "");
  EXPECT_FALSE(outcome.matched);
  EXPECT_THAT(outcome.explanation, HasSubstr("does not match regex '^does'"));
  EXPECT_THAT(outcome.explanation, HasSubstr("actual error: table"));
  EXPECT_FALSE(CheckErrorMessage(message, "missing", "nope").matched);
}

TEST(RowsToLinesTest, JoinsWithTabs) {
  EXPECT_THAT(RowsToLines({{"1", "a"}, {"NULL", "(empty)"}}), ElementsAre("1\ta", "NULL\t(empty)"));
}

}  // namespace
}  // namespace tessera::sqllogictest
