#include "tests/sqllogictest/test_file_parser.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::sqllogictest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TestFile ParseOrDie(std::string_view content) {
  absl::StatusOr<TestFile> file = ParseTestFile(content, "t.test");
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? *file : TestFile();
}

std::string ParseError(std::string_view content) {
  absl::StatusOr<TestFile> file = ParseTestFile(content, "t.test");
  EXPECT_FALSE(file.ok());
  return file.ok() ? "" : std::string(file.status().message());
}

TEST(TestFileParserTest, HeaderAndStatementOk) {
  TestFile file = ParseOrDie(
      "# name: test/sql/basic.test\n"
      "# group: [basic] [slow]\n"
      "# a comment\n"
      "\n"
      "statement ok\n"
      "CREATE TABLE t (a INTEGER,\n"
      "  b VARCHAR)\n");
  EXPECT_EQ(file.name, "test/sql/basic.test");
  EXPECT_EQ(file.group, "[basic] [slow]");
  EXPECT_TRUE(IsSlowGroup(file.group));
  ASSERT_EQ(file.records.size(), 1u);
  EXPECT_EQ(file.records[0].type, RecordType::kStatementOk);
  EXPECT_EQ(file.records[0].line, 5);
  EXPECT_EQ(file.records[0].sql, "CREATE TABLE t (a INTEGER,\n  b VARCHAR)");
  EXPECT_FALSE(file.records[0].skipped);
}

TEST(TestFileParserTest, IsSlowGroupOnlyForSlowTag) {
  EXPECT_FALSE(IsSlowGroup("[tpch]"));
  EXPECT_FALSE(IsSlowGroup(""));
  EXPECT_TRUE(IsSlowGroup("[tpch][slow]"));
}

TEST(TestFileParserTest, StatementErrorWithRegexAndSubstring) {
  TestFile file = ParseOrDie(
      "statement error no such table: .*\n"
      "SELECT * FROM missing\n"
      "\n"
      "statement error\n"
      "SELECT 1/0\n"
      "----\n"
      "division by zero\n"
      "\n"
      "statement error\n"
      "SELEC 1\n");
  ASSERT_EQ(file.records.size(), 3u);
  EXPECT_EQ(file.records[0].type, RecordType::kStatementError);
  EXPECT_EQ(file.records[0].expected_error_regex, "no such table: .*");
  EXPECT_EQ(file.records[0].expected_error_substring, "");
  EXPECT_EQ(file.records[1].expected_error_regex, "");
  EXPECT_EQ(file.records[1].expected_error_substring, "division by zero");
  EXPECT_EQ(file.records[1].sql, "SELECT 1/0");
  EXPECT_EQ(file.records[2].expected_error_regex, "");
  EXPECT_EQ(file.records[2].expected_error_substring, "");
}

TEST(TestFileParserTest, QueryWithSortModeLabelAndResults) {
  TestFile file = ParseOrDie(
      "query ITR rowsort my_label\n"
      "SELECT a, b, c\n"
      "FROM t\n"
      "----\n"
      "1\tx\t1.5\n"
      "# not a comment here\n"
      "\n"
      "query I\n"
      "SELECT 1\n"
      "----\n"
      "1\n");
  ASSERT_EQ(file.records.size(), 2u);
  const TestRecord& query = file.records[0];
  EXPECT_EQ(query.type, RecordType::kQuery);
  EXPECT_EQ(query.column_types, "ITR");
  EXPECT_EQ(query.sort_mode, SortMode::kRowSort);
  EXPECT_EQ(query.label, "my_label");
  EXPECT_EQ(query.sql, "SELECT a, b, c\nFROM t");
  EXPECT_TRUE(query.has_expected_results);
  EXPECT_THAT(query.expected_lines, ElementsAre("1\tx\t1.5", "# not a comment here"));
  EXPECT_EQ(file.records[1].sort_mode, SortMode::kNoSort);
  EXPECT_THAT(file.records[1].expected_lines, ElementsAre("1"));
}

TEST(TestFileParserTest, QueryWithoutSeparatorExpectsNoRows) {
  TestFile file = ParseOrDie("query I valuesort\nSELECT a FROM empty\n");
  ASSERT_EQ(file.records.size(), 1u);
  EXPECT_EQ(file.records[0].sort_mode, SortMode::kValueSort);
  EXPECT_FALSE(file.records[0].has_expected_results);
  EXPECT_TRUE(file.records[0].expected_lines.empty());
}

TEST(TestFileParserTest, CommentLinesInsideSqlAreDropped) {
  TestFile file = ParseOrDie("statement ok\n# explain why\nCREATE TABLE t (a INT)\n");
  EXPECT_EQ(file.records[0].sql, "CREATE TABLE t (a INT)");
}

TEST(TestFileParserTest, WindowsLineEndings) {
  TestFile file = ParseOrDie("query I\r\nSELECT 1\r\n----\r\n1\r\n\r\nstatement ok\r\nSELECT 2\r\n");
  ASSERT_EQ(file.records.size(), 2u);
  EXPECT_EQ(file.records[0].sql, "SELECT 1");
  EXPECT_THAT(file.records[0].expected_lines, ElementsAre("1"));
}

TEST(TestFileParserTest, ControlDirectives) {
  TestFile file = ParseOrDie("restart\n\nhalt\n\nrequire tpch\n");
  ASSERT_EQ(file.records.size(), 3u);
  EXPECT_EQ(file.records[0].type, RecordType::kRestart);
  EXPECT_EQ(file.records[1].type, RecordType::kHalt);
  EXPECT_EQ(file.records[2].type, RecordType::kRequire);
  EXPECT_EQ(file.records[2].argument, "tpch");
}

TEST(TestFileParserTest, SkipifAndOnlyifApplyToTheNextRecordOnly) {
  TestFile file = ParseOrDie(
      "skipif tessera\n"
      "statement ok\nSELECT 1\n\n"
      "skipif duckdb\n"
      "statement ok\nSELECT 2\n\n"
      "onlyif duckdb\n"
      "statement ok\nSELECT 3\n\n"
      "onlyif tessera\n"
      "statement ok\nSELECT 4\n\n"
      "statement ok\nSELECT 5\n");
  ASSERT_EQ(file.records.size(), 5u);
  EXPECT_TRUE(file.records[0].skipped);
  EXPECT_FALSE(file.records[1].skipped);
  EXPECT_TRUE(file.records[2].skipped);
  EXPECT_FALSE(file.records[3].skipped);
  EXPECT_FALSE(file.records[4].skipped);
}

TEST(TestFileParserTest, ModeSkipBlock) {
  TestFile file = ParseOrDie(
      "mode skip\n\n"
      "statement ok\nSELECT 1\n\n"
      "query I\nSELECT 2\n----\n2\n\n"
      "mode unskip\n\n"
      "statement ok\nSELECT 3\n");
  ASSERT_EQ(file.records.size(), 3u);
  EXPECT_TRUE(file.records[0].skipped);
  EXPECT_TRUE(file.records[1].skipped);
  EXPECT_FALSE(file.records[2].skipped);
}

TEST(TestFileParserTest, ErrorsNameFileAndLine) {
  EXPECT_THAT(ParseError("\nstatment ok\nSELECT 1\n"), HasSubstr("t.test:2: unknown or unsupported directive"));
  EXPECT_THAT(ParseError("statement ok\n\n"), HasSubstr("t.test:1: record has no SQL"));
  EXPECT_THAT(ParseError("statement ok\nSELECT 1\n----\nx\n"), HasSubstr("cannot have a '----'"));
  EXPECT_THAT(ParseError("statement maybe\nSELECT 1\n"), HasSubstr("expected 'statement ok'"));
  EXPECT_THAT(ParseError("statement error ([a-\nSELECT 1\n"), HasSubstr("invalid regex"));
  EXPECT_THAT(ParseError("query I sorted\nSELECT 1\n"), HasSubstr("unknown sort mode 'sorted'"));
  EXPECT_THAT(ParseError("query\nSELECT 1\n"), HasSubstr("expected 'query <types>"));
  EXPECT_THAT(ParseError("query I2\nSELECT 1\n"), HasSubstr("column types must be letters"));
  EXPECT_THAT(ParseError("skipif tessera\n"), HasSubstr("t.test:1: skipif/onlyif is not followed by a record"));
  EXPECT_THAT(ParseError("mode output_result\n"), HasSubstr("only 'mode skip'"));
  EXPECT_THAT(ParseError("loop i 0 10\n"), HasSubstr("unsupported directive 'loop'"));
  EXPECT_THAT(ParseError("restart now\n"), HasSubstr("restart takes no arguments"));
}

}  // namespace
}  // namespace tessera::sqllogictest
