// Tessera values as PostgreSQL clients see them (server/pg_types.h): type OIDs and modifiers, text and binary
// formats, and parameters turned into SQL literals; errors and positions (server/pg_errors.h); statement text
// (server/pg_statements.h): splitting, $n substitution with positions mapped back, the statements answered at the
// protocol layer.

#include <cmath>
#include <limits>
#include <string>

#include "catalog/types.h"
#include "catalog/value.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "server/pg_errors.h"
#include "server/pg_statements.h"
#include "server/pg_types.h"

namespace tessera::pg {
namespace {

std::string Text(const Value& value) {
  std::string out;
  AppendPgText(value, &out);
  return out;
}

std::string Binary(const Value& value) {
  std::string out;
  AppendPgBinary(value, &out);
  return out;
}

TEST(PgTypesTest, ColumnTypes) {
  EXPECT_EQ(PgColumnTypeOf(Type::Integer()).oid, kOidInt4);
  EXPECT_EQ(PgColumnTypeOf(Type::BigInt()).oid, kOidInt8);
  EXPECT_EQ(PgColumnTypeOf(Type::Double()).oid, kOidFloat8);
  EXPECT_EQ(PgColumnTypeOf(Type::Boolean()).size, 1);
  EXPECT_EQ(PgColumnTypeOf(Type::Date()).oid, kOidDate);
  EXPECT_EQ(PgColumnTypeOf(Type::Varchar()).oid, kOidText);
  const PgColumnType varchar = PgColumnTypeOf(Type::Varchar(25));
  EXPECT_EQ(varchar.oid, kOidVarchar);
  EXPECT_EQ(varchar.modifier, 29);
  EXPECT_EQ(PgColumnTypeOf(Type::Char(1)).oid, kOidBpchar);
  const PgColumnType numeric = PgColumnTypeOf(Type::Decimal(15, 2));
  EXPECT_EQ(numeric.oid, kOidNumeric);
  EXPECT_EQ(numeric.modifier, (15 << 16 | 2) + 4);
  EXPECT_EQ(numeric.size, -1);
}

TEST(PgTypesTest, TextFormatFollowsPostgres) {
  EXPECT_EQ(Text(Value::Boolean(true)), "t");
  EXPECT_EQ(Text(Value::Boolean(false)), "f");
  EXPECT_EQ(Text(Value::BigInt(-9000000000)), "-9000000000");
  EXPECT_EQ(Text(Value::Double(0.1)), "0.1");
  EXPECT_EQ(Text(Value::Double(std::numeric_limits<double>::infinity())), "Infinity");
  EXPECT_EQ(Text(Value::Double(-std::numeric_limits<double>::infinity())), "-Infinity");
  EXPECT_EQ(Text(Value::Double(std::nan(""))), "NaN");
  EXPECT_EQ(Text(Value::Decimal(12340, Type::Decimal(10, 2))), "123.40");
  EXPECT_EQ(Text(Value::Decimal(-5, Type::Decimal(10, 2))), "-0.05");
  EXPECT_EQ(Text(Value::Date(0)), "1970-01-01");
  EXPECT_EQ(Text(Value::Timestamp(1'500'000)), "1970-01-01 00:00:01.5");
  EXPECT_EQ(Text(Value::IntervalValue({14, 3, 0})), "1 year 2 mons 3 days");
  EXPECT_EQ(Text(Value::String("héllo")), "héllo");
}

TEST(PgTypesTest, BinaryFormatIsTheSendFunctions) {
  EXPECT_EQ(Binary(Value::Boolean(true)), std::string("\x01", 1));
  EXPECT_EQ(Binary(Value::Integer(-2)), std::string("\xff\xff\xff\xfe", 4));
  EXPECT_EQ(Binary(Value::BigInt(258)), std::string("\0\0\0\0\0\0\x01\x02", 8));
  EXPECT_EQ(Binary(Value::Double(1.0)), std::string("\x3f\xf0\0\0\0\0\0\0", 8));
  // Dates and timestamps count from 2000-01-01.
  EXPECT_EQ(Binary(Value::Date(10957)), std::string("\0\0\0\0", 4));
  EXPECT_EQ(Binary(Value::Date(10956)), std::string("\xff\xff\xff\xff", 4));
  EXPECT_EQ(Binary(Value::Timestamp(int64_t{10957} * 86'400'000'000 + 1)), std::string("\0\0\0\0\0\0\0\x01", 8));
  // numeric: ndigits, weight, sign, dscale, base-10000 digits.
  EXPECT_EQ(Binary(Value::Decimal(1234567, Type::Decimal(10, 3))),
            std::string("\0\x02\0\0\0\0\0\x03\x04\xd2\x16\x26", 12));  // 1234.567 = 1234 | 5670
  EXPECT_EQ(Binary(Value::Decimal(-5, Type::Decimal(10, 2))),
            std::string("\0\x01\xff\xff\x40\0\0\x02\x01\xf4", 10));  // -0.05 = -(0500 x 10000^-1)
  EXPECT_EQ(Binary(Value::Decimal(0, Type::Decimal(10, 2))), std::string("\0\0\0\0\0\0\0\x02", 8));
  EXPECT_EQ(Binary(Value::Decimal(100000000, Type::Decimal(12, 0))),
            std::string("\0\x01\0\x02\0\0\0\0\0\x01", 10));  // 10^8 = 1 x 10000^2
  EXPECT_EQ(Binary(Value::IntervalValue({1, 2, 3})), std::string("\0\0\0\0\0\0\0\x03\0\0\0\x02\0\0\0\x01", 16));
}

TEST(ParameterLiteralTest, TextParametersBecomeTypedLiterals) {
  EXPECT_EQ(*ParameterLiteral(1, kOidInt4, 0, "42"), "42");
  EXPECT_EQ(*ParameterLiteral(1, kOidInt8, 0, "-7"), "(-7)");  // "x-$1" never becomes a comment
  EXPECT_EQ(*ParameterLiteral(1, kOidText, 0, "it's"), "'it''s'");
  EXPECT_EQ(*ParameterLiteral(1, kOidUnspecified, 0, "'; DROP TABLE t; --"), "'''; DROP TABLE t; --'");
  EXPECT_EQ(*ParameterLiteral(1, kOidNumeric, 0, "-0.50"), "(-0.50)");
  EXPECT_EQ(*ParameterLiteral(1, kOidNumeric, 0, ".5"), "0.5");
  EXPECT_EQ(*ParameterLiteral(1, kOidNumeric, 0, "-.5"), "(-0.5)");
  EXPECT_EQ(*ParameterLiteral(1, kOidNumeric, 0, "+7."), "7");
  EXPECT_EQ(*ParameterLiteral(1, kOidBool, 0, "t"), "TRUE");
  EXPECT_EQ(*ParameterLiteral(1, kOidDate, 0, "1995-3-5"), "DATE '1995-03-05'");
  EXPECT_EQ(*ParameterLiteral(1, kOidTimestamp, 0, "2024-02-29 12:00:00"), "TIMESTAMP '2024-02-29 12:00:00'");
  EXPECT_EQ(*ParameterLiteral(1, kOidFloat8, 0, "2.5"), "CAST('2.5' AS DOUBLE)");
  EXPECT_EQ(*ParameterLiteral(1, kOidFloat8, 0, "-Infinity"), "CAST('-inf' AS DOUBLE)");
  EXPECT_EQ(*ParameterLiteral(3, kOidInt4, 0, std::nullopt), "NULL");
}

TEST(ParameterLiteralTest, BinaryParametersAreDecoded) {
  EXPECT_EQ(*ParameterLiteral(1, kOidInt4, 1, std::string("\xff\xff\xff\xfe", 4)), "(-2)");
  EXPECT_EQ(*ParameterLiteral(1, kOidInt2, 1, std::string("\x01\x00", 2)), "256");
  EXPECT_EQ(*ParameterLiteral(1, kOidBool, 1, std::string("\x01", 1)), "TRUE");
  EXPECT_EQ(*ParameterLiteral(1, kOidFloat8, 1, std::string("\x3f\xf0\0\0\0\0\0\0", 8)), "CAST('1' AS DOUBLE)");
  EXPECT_EQ(*ParameterLiteral(1, kOidDate, 1, std::string("\0\0\0\x01", 4)), "DATE '2000-01-02'");
  EXPECT_EQ(*ParameterLiteral(1, kOidNumeric, 1, std::string("\0\x02\0\0\0\0\0\x03\x04\xd2\x16\x26", 12)), "1234.567");
  EXPECT_EQ(*ParameterLiteral(1, kOidNumeric, 1, std::string("\0\x01\xff\xff\x40\0\0\x02\x01\xf4", 10)), "(-0.05)");
  EXPECT_EQ(*ParameterLiteral(1, kOidNumeric, 1, std::string("\0\x01\0\x02\0\0\0\0\0\x01", 10)), "100000000");
  EXPECT_EQ(*ParameterLiteral(1, kOidText, 1, "a'b"), "'a''b'");
}

TEST(ParameterLiteralTest, RefusesWhatCannotBeBound) {
  auto code = [](absl::StatusOr<std::string> literal) { return literal.status().code(); };
  EXPECT_EQ(code(ParameterLiteral(2, kOidInt4, 0, "12abc")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ParameterLiteral(2, kOidInt4, 1, "abc")), absl::StatusCode::kInvalidArgument);  // 3 bytes
  EXPECT_EQ(code(ParameterLiteral(2, kOidUnspecified, 1, "abcd")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ParameterLiteral(2, kOidBytea, 0, "x")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ParameterLiteral(2, kOidText, 0, std::string("a\0b", 3))), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ParameterLiteral(2, kOidDate, 0, "1995-02-30")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ParameterLiteral(2, kOidNumeric, 0, "1e5")), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ParameterLiteral(2, kOidNumeric, 1, std::string("\0\x01\0\0\xc0\0\0\0\0\x01", 10))),
            absl::StatusCode::kInvalidArgument);                                               // NaN
  EXPECT_EQ(code(ParameterLiteral(2, kOidInt4, 2, "1")), absl::StatusCode::kInvalidArgument);  // format 2
  absl::Status status = ParameterLiteral(2, kOidInt4, 0, "x").status();
  EXPECT_EQ(SqlStateOf(status), "22023");
  EXPECT_NE(std::string(status.message()).find("parameter $2 (int4)"), std::string::npos);
}

TEST(PgErrorsTest, SqlStates) {
  EXPECT_EQ(SqlStateOf(absl::CancelledError("query cancelled")), "57014");
  EXPECT_EQ(SqlStateOf(absl::DeadlineExceededError("statement timeout")), "57014");
  EXPECT_EQ(SqlStateOf(absl::ResourceExhaustedError("memory")), "53200");
  EXPECT_EQ(SqlStateOf(absl::ResourceExhaustedError("too many open sessions (4)")), "53300");
  EXPECT_EQ(SqlStateOf(absl::InvalidArgumentError("table 'x' does not exist")), "42P01");
  EXPECT_EQ(SqlStateOf(absl::NotFoundError("view 'x' does not exist")), "42P01");
  EXPECT_EQ(SqlStateOf(absl::InvalidArgumentError("column 'x' does not exist")), "42703");
  EXPECT_EQ(SqlStateOf(absl::InvalidArgumentError("invalid input for INTEGER: 'a'")), "22P02");
  EXPECT_EQ(SqlStateOf(absl::InvalidArgumentError("value 1e99 is out of range for INTEGER")), "22003");
  EXPECT_EQ(SqlStateOf(absl::InvalidArgumentError("division by zero")), "22012");
  EXPECT_EQ(SqlStateOf(absl::PermissionDeniedError("outside --allowed-directories")), "42501");
  EXPECT_EQ(SqlStateOf(absl::InternalError("bug")), "XX000");
}

TEST(PgErrorsTest, PositionsComeFromTheMessageAndCaretLinesGo) {
  const std::string sql = "SELECT 1;\nSELECT 'é', FROM t";
  absl::Status status = parser::ParseStatements(sql).status();
  ASSERT_FALSE(status.ok());
  size_t byte = 0;
  PgError error = ErrorFromStatus(status, sql, &byte);
  EXPECT_EQ(error.sqlstate, "42601");
  EXPECT_EQ(error.message.find('\n'), std::string::npos);
  EXPECT_EQ(error.message.rfind("syntax error: ", 0), 0u) << error.message;
  EXPECT_EQ(sql.substr(byte, 4), "FROM");
  // 1-based, in characters: "é" is two bytes but one character.
  EXPECT_EQ(CharacterPosition(sql, byte), static_cast<int>(byte));

  error = ErrorFromStatus(
      absl::InvalidArgumentError(parser::FormatErrorWithCaret("SELECT x FROM t", {1, 8}, "column 'x' does not exist")),
      "SELECT x FROM t", &byte);
  EXPECT_EQ(error.message, "column 'x' does not exist");
  EXPECT_EQ(byte, 7u);
  error = ErrorFromStatus(absl::CancelledError("query cancelled"), "", &byte);
  EXPECT_EQ(byte, std::string_view::npos);
}

TEST(PgStatementsTest, SplitsOutsideQuotesAndComments) {
  const std::string sql = " SELECT ';' ; -- a; comment\n SELECT \"a;b\" /* ; /* ; */ */ FROM t;; ";
  std::vector<StatementText> statements = SplitStatements(sql);
  ASSERT_EQ(statements.size(), 2u);
  EXPECT_EQ(statements[0].text, "SELECT ';'");
  EXPECT_EQ(statements[0].offset, 1u);
  EXPECT_EQ(statements[1].text.substr(0, 12), "-- a; commen");
  EXPECT_TRUE(SplitStatements(" ; -- nothing\n").empty());
  EXPECT_EQ(SplitStatements("SELECT 1").size(), 1u);
}

TEST(PgStatementsTest, SubstitutesParametersAndMapsPositionsBack) {
  const std::string sql = "SELECT $1, '$2', $2 -- $3\nFROM t WHERE a$1 = $10";
  EXPECT_EQ(*CountParameters(sql), 10);
  EXPECT_EQ(CountParameters("SELECT $0").status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> literals(10, "NULL");
  literals[0] = "'long literal'";
  literals[1] = "7";
  SubstitutedSql substituted = SubstituteParameters(sql, literals);
  EXPECT_EQ(substituted.sql, "SELECT 'long literal', '$2', 7 -- $3\nFROM t WHERE a$1 = NULL");
  const size_t from = substituted.sql.find("FROM");
  EXPECT_EQ(substituted.OriginalOffset(from), sql.find("FROM"));
  EXPECT_EQ(substituted.OriginalOffset(9), 7u);  // inside the first literal: its placeholder
  EXPECT_EQ(substituted.OriginalOffset(0), 0u);
}

TEST(PgStatementsTest, AnswersTransactionControlSettingsAndVersion) {
  PgParameters parameters;
  auto handle = [&](std::string_view sql) { return HandleCompatStatement(sql, parameters); };
  EXPECT_EQ((*handle("BEGIN"))->transaction, CompatOutcome::Transaction::kBegin);
  EXPECT_EQ((*handle("commit;"))->transaction, CompatOutcome::Transaction::kCommit);
  EXPECT_EQ((*handle("ROLLBACK"))->transaction, CompatOutcome::Transaction::kRollback);

  auto set = handle("SET application_name TO 'psql'");
  ASSERT_TRUE(set.has_value() && set->ok());
  EXPECT_TRUE((*set)->parameter_changed);
  EXPECT_EQ(parameters.Get("application_name"), "psql");
  auto show = handle("show Application_Name");
  ASSERT_TRUE(show.has_value() && show->ok());
  EXPECT_EQ((*show)->result.rows[0][0].AsString(), "psql");
  EXPECT_EQ((*show)->result.columns[0].name, "application_name");

  EXPECT_FALSE((*handle("SET search_path = public"))->notice.empty());
  // TIMESTAMP has no time zone: any zone is accepted, with a notice that it changes nothing.
  auto zone = handle("SET TIME ZONE 'Europe/Paris'");
  ASSERT_TRUE(zone.has_value() && zone->ok());
  EXPECT_FALSE((*zone)->notice.empty());
  EXPECT_EQ(parameters.Get("TimeZone"), "Europe/Paris");
  EXPECT_EQ(handle("SET DateStyle = 'German'")->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(handle("SET client_encoding = 'LATIN1'")->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SqlStateOf(handle("SET server_version = '1'")->status()), "55P02");

  // Tessera's own settings and ordinary statements go to the engine.
  EXPECT_FALSE(handle("SET priority = 2").has_value());
  EXPECT_FALSE(handle("SHOW priority").has_value());
  EXPECT_FALSE(handle("SELECT version FROM t").has_value());
  auto version = handle("select pg_catalog.version()");
  ASSERT_TRUE(version.has_value() && version->ok());
  EXPECT_EQ((*version)->result.rows[0][0].AsString(), kVersionString);

  ASSERT_TRUE(handle("RESET ALL")->ok());
  EXPECT_EQ(parameters.Get("application_name"), "");
}

TEST(PgStatementsTest, StartupParametersBecomeDefaults) {
  PgParameters parameters;
  ASSERT_TRUE(parameters
                  .ApplyStartup({{"user", "ann"},
                                 {"application_name", "app"},
                                 {"client_encoding", "UTF8"},
                                 {"some_extension.setting", "1"}})
                  .ok());
  EXPECT_EQ(parameters.Get("session_authorization"), "ann");
  parameters.ResetAll();
  EXPECT_EQ(parameters.Get("application_name"), "app");
  EXPECT_FALSE(parameters.ApplyStartup({{"client_encoding", "SQL_ASCII"}}).ok());
}

TEST(PgStatementsTest, StartupOptions) {
  auto options = ParseStartupOptions("-c statement_timeout=5s  --application-name=my\\ app -cpriority=2");
  ASSERT_TRUE(options.ok()) << options.status();
  ASSERT_EQ(options->size(), 3u);
  EXPECT_EQ((*options)[0], (std::pair<std::string, std::string>("statement_timeout", "5s")));
  EXPECT_EQ((*options)[1], (std::pair<std::string, std::string>("application_name", "my app")));
  EXPECT_EQ((*options)[2], (std::pair<std::string, std::string>("priority", "2")));
  EXPECT_TRUE(ParseStartupOptions("").ok());
  EXPECT_FALSE(ParseStartupOptions("-x").ok());
  EXPECT_FALSE(ParseStartupOptions("-c novalue").ok());
  EXPECT_FALSE(ParseStartupOptions("--=1").ok());
}

}  // namespace
}  // namespace tessera::pg
