#include "cli/result_format.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

QueryResult People() {
  QueryResult result;
  result.returns_rows = true;
  result.columns = {{"id", Type::Integer()}, {"name", Type::Varchar()}, {"score", Type::Decimal(5, 2)}};
  result.rows = {
      {Value::Integer(1), Value::String("ann"), Value::Null(Type::Decimal(5, 2))},
      {Value::Integer(22), Value::String("NULL"), Value::Decimal(1234, Type::Decimal(5, 2))},
      {Value::Null(Type::Integer()), Value::String("line\nbreak \"q\", x"), Value::Decimal(-5, Type::Decimal(5, 2))}};
  return result;
}

TEST(ResultFormatTest, AlignedHasNamesTypesRightAlignedNumbersAndAFooter) {
  EXPECT_EQ(FormatResult(People(), OutputFormat::kAligned),
            " id      | name               | score       \n"
            " INTEGER | VARCHAR            | DECIMAL(5,2)\n"
            "---------+--------------------+--------------\n"
            "       1 | ann                |         NULL\n"
            "      22 | NULL               |        12.34\n"
            "    NULL | line\\nbreak \"q\", x |        -0.05\n"
            "(3 rows)\n");
}

TEST(ResultFormatTest, TerminalStylesDimNullButNotTheStringNull) {
  FormatOptions options{.format = OutputFormat::kAligned, .terminal_styles = true};
  std::string out = FormatResult(People(), options);
  EXPECT_THAT(out, HasSubstr("|         \x1b[2mNULL\x1b[0m\n"));  // score NULL, dimmed
  EXPECT_THAT(out, HasSubstr("| NULL               |"));          // the string 'NULL', plain
}

TEST(ResultFormatTest, WideTablesAreCutToTheWidthWithEllipses) {
  QueryResult result = People();
  result.rows[0][1] = Value::String(std::string(200, 'x'));
  FormatOptions options{.format = OutputFormat::kAligned, .max_width = 50};
  std::string out = FormatResult(result, options);
  for (const std::string& line : std::vector<std::string>(absl::StrSplit(out, '\n')))
    EXPECT_LE(DisplayWidth(line), 50u) << line;
  EXPECT_THAT(out, HasSubstr("x…"));
  EXPECT_THAT(out, HasSubstr("12.34"));  // numbers are never cut
}

TEST(ResultFormatTest, TooManyColumnsLeaveOutTheMiddleOnes) {
  QueryResult result;
  result.returns_rows = true;
  std::vector<Value> row;
  for (int c = 0; c < 30; ++c) {
    result.columns.push_back({"column_" + std::to_string(c), Type::Varchar()});
    row.push_back(Value::String("value_" + std::to_string(c)));
  }
  result.rows.push_back(row);
  std::string out = FormatResult(result, FormatOptions{.format = OutputFormat::kAligned, .max_width = 80});
  for (const std::string& line : std::vector<std::string>(absl::StrSplit(out, '\n')))
    EXPECT_LE(DisplayWidth(line), 80u) << line;
  EXPECT_THAT(out, HasSubstr("column_0"));
  EXPECT_THAT(out, HasSubstr("column_29"));
  EXPECT_THAT(out, Not(HasSubstr("column_15")));
  EXPECT_THAT(out, HasSubstr(" | … | "));
  EXPECT_THAT(out, HasSubstr("columns not shown)"));
}

TEST(ResultFormatTest, ManyRowsShowTheFirstAndLastOnes) {
  QueryResult result;
  result.returns_rows = true;
  result.columns = {{"n", Type::BigInt()}};
  for (int i = 0; i < 100; ++i) result.rows.push_back({Value::BigInt(i)});
  std::string out = FormatResult(result, FormatOptions{.format = OutputFormat::kAligned, .max_rows = 6});
  EXPECT_EQ(out,
            " n     \n"
            " BIGINT\n"
            "--------\n"
            "      0\n"
            "      1\n"
            "      2\n"
            "      …\n"
            "     97\n"
            "     98\n"
            "     99\n"
            "(100 rows, 6 shown)\n");
}

TEST(ResultFormatTest, CsvQuotesAndLeavesNullEmpty) {
  EXPECT_EQ(FormatResult(People(), OutputFormat::kCsv),
            "id,name,score\n1,ann,\n22,NULL,12.34\n,\"line\nbreak \"\"q\"\", x\",-0.05\n");
}

TEST(ResultFormatTest, JsonIsAnArrayOfObjects) {
  QueryResult result = People();
  result.columns.push_back({"ok", Type::Boolean()});
  result.columns.push_back({"ratio", Type::Double()});
  result.rows[0].push_back(Value::Boolean(true));
  result.rows[0].push_back(Value::Double(0.5));
  result.rows[1].push_back(Value::Boolean(false));
  result.rows[1].push_back(Value::Double(1.0 / 0.0));
  result.rows[2].push_back(Value::Null(Type::Boolean()));
  result.rows[2].push_back(Value::Null(Type::Double()));
  EXPECT_EQ(FormatResult(result, OutputFormat::kJson),
            "[{\"id\":1,\"name\":\"ann\",\"score\":null,\"ok\":true,\"ratio\":0.5},\n"
            "{\"id\":22,\"name\":\"NULL\",\"score\":12.34,\"ok\":false,\"ratio\":null},\n"
            "{\"id\":null,\"name\":\"line\\nbreak \\\"q\\\", x\",\"score\":-0.05,\"ok\":null,\"ratio\":null}]\n");
  QueryResult empty;
  empty.returns_rows = true;
  empty.columns = {{"a", Type::Integer()}};
  EXPECT_EQ(FormatResult(empty, OutputFormat::kJson), "[]\n");
}

TEST(ResultFormatTest, StatusMessagesExceptInJson) {
  QueryResult created;
  created.status_message = "CREATE TABLE";
  EXPECT_EQ(FormatResult(created, OutputFormat::kAligned), "CREATE TABLE\n");
  EXPECT_EQ(FormatResult(created, OutputFormat::kCsv), "CREATE TABLE\n");
  EXPECT_EQ(FormatResult(created, OutputFormat::kJson), "");
}

}  // namespace
}  // namespace tessera
