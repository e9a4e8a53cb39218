// Statement kinds, DDL and utility statements, statement text and positions.

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "parser/ast.h"
#include "parser/parser.h"
#include "tests/parser/parse_for_test.h"

namespace tessera::parser {
namespace {

using testing::Dump;
using testing::ParseOk;

template <typename T>
std::unique_ptr<T> ParseAs(std::string_view sql, StatementKind kind) {
  std::unique_ptr<Statement> statement = ParseOk(sql);
  if (statement == nullptr) return nullptr;
  EXPECT_EQ(statement->kind, kind) << std::string(sql);
  if (statement->kind != kind) return nullptr;
  return std::unique_ptr<T>(static_cast<T*>(statement.release()));
}

std::string OptionDump(const std::pair<std::string, std::unique_ptr<ParsedExpr>>& option) {
  return option.first + "=" + Dump(*option.second);
}

TEST(StatementTest, StatementKinds) {
  struct Case {
    const char* sql;
    StatementKind kind;
  };
  const Case cases[] = {
      {"SELECT 1", StatementKind::kSelect},
      {"(SELECT 1)", StatementKind::kSelect},
      {"WITH x AS (SELECT 1) SELECT * FROM x", StatementKind::kSelect},
      {"CREATE TABLE t (a INT)", StatementKind::kCreateTable},
      {"DROP TABLE t", StatementKind::kDropTable},
      {"CREATE VIEW v AS SELECT 1", StatementKind::kCreateView},
      {"DROP VIEW v", StatementKind::kDropView},
      {"COPY t FROM '/tmp/t.csv'", StatementKind::kCopy},
      {"INSERT INTO t VALUES (1)", StatementKind::kInsert},
      {"EXPLAIN SELECT 1", StatementKind::kExplain},
      {"ANALYZE", StatementKind::kAnalyze},
      {"SET threads = 4", StatementKind::kSet},
      {"SHOW TABLES", StatementKind::kShow},
      {"DESCRIBE t", StatementKind::kDescribe},
      {"DESC t", StatementKind::kDescribe},
  };
  for (const Case& c : cases) {
    std::unique_ptr<Statement> statement = ParseOk(c.sql);
    ASSERT_NE(statement, nullptr) << c.sql;
    EXPECT_EQ(statement->kind, c.kind) << c.sql;
  }
}

TEST(StatementTest, MultipleStatementsKeepTheirOwnTextAndPosition) {
  const std::string sql = "  -- leading comment\n SELECT 1 ;;\n\n  select a\n  from t /* trailing */ ; SHOW ALL";
  auto statements = ParseStatements(sql);
  ASSERT_TRUE(statements.ok()) << statements.status().message();
  ASSERT_EQ(statements->size(), 3u);
  EXPECT_EQ((*statements)[0]->text, "SELECT 1");
  EXPECT_EQ((*statements)[0]->position.line, 2);
  EXPECT_EQ((*statements)[0]->position.column, 2);
  EXPECT_EQ((*statements)[1]->text, "select a\n  from t");
  EXPECT_EQ((*statements)[1]->position.line, 4);
  EXPECT_EQ((*statements)[1]->position.column, 3);
  EXPECT_EQ((*statements)[1]->position.offset, static_cast<int>(sql.find("select")));
  EXPECT_EQ((*statements)[2]->text, "SHOW ALL");
}

TEST(StatementTest, EmptyInputHasNoStatements) {
  for (const char* sql : {"", "   ", ";", " ; ;; ", "-- nothing\n", "/* nothing */;"}) {
    auto statements = ParseStatements(sql);
    ASSERT_TRUE(statements.ok()) << sql;
    EXPECT_TRUE(statements->empty()) << sql;
  }
}

TEST(StatementTest, ParseStatementAcceptsExactlyOne) {
  EXPECT_TRUE(ParseStatement("SELECT 1;").ok());
  EXPECT_TRUE(ParseStatement("SELECT 1 ; ; ").ok());
  EXPECT_EQ(ParseStatements("SELECT 1; SELECT 2")->size(), 2u);  // ParseStatements accepts both...
  auto two = ParseStatement("SELECT 1; SELECT 2");               // ...ParseStatement does not.
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(std::string(two.status().message()),
            "syntax error at line 1, column 11: expected end of input after the statement, found 'SELECT'\n"
            "  SELECT 1; SELECT 2\n"
            "            ^");
  auto none = ParseStatement(" ; ");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(std::string(none.status().message()),
            "syntax error at line 1, column 3: unexpected end of input, expected a statement\n   ; \n    ^");
}

TEST(StatementTest, CreateTableAsQuery) {
  auto create = ParseAs<CreateTableStatement>(
      "CREATE TABLE IF NOT EXISTS totals WITH (block_size = '1MB') AS WITH x AS (SELECT 1 AS a) SELECT a FROM x",
      StatementKind::kCreateTable);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->table, "totals");
  EXPECT_TRUE(create->if_not_exists);
  EXPECT_TRUE(create->columns.empty());
  ASSERT_EQ(create->options.size(), 1u);
  EXPECT_EQ(create->options[0].first, "block_size");
  ASSERT_NE(create->query, nullptr);
  EXPECT_EQ(create->query->ctes.size(), 1u);
  auto plain = ParseAs<CreateTableStatement>("CREATE TABLE t (a INTEGER)", StatementKind::kCreateTable);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->query, nullptr);
}

TEST(StatementTest, CreateTableWithColumnsConstraintsAndOptions) {
  auto create = ParseAs<CreateTableStatement>(
      "CREATE TABLE IF NOT EXISTS lineitem (\n"
      "  l_orderkey BIGINT NOT NULL,\n"
      "  l_quantity DECIMAL(15,2) NULL,\n"
      "  l_comment VARCHAR(44) DEFAULT 'none' NOT NULL,\n"
      "  l_flag CHAR(1) DEFAULT -1,\n"
      "  l_ratio double precision,\n"
      "  l_name character varying(10),\n"
      "  PRIMARY KEY (l_orderkey, l_quantity)\n"
      ") WITH (block_size = '4MB', Compression = true, rows = 100)",
      StatementKind::kCreateTable);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->table, "lineitem");
  EXPECT_TRUE(create->if_not_exists);
  ASSERT_EQ(create->columns.size(), 6u);
  EXPECT_EQ(create->columns[0].name, "l_orderkey");
  EXPECT_EQ(create->columns[0].type.name, "BIGINT");
  EXPECT_TRUE(create->columns[0].not_null);
  EXPECT_EQ(create->columns[0].position.line, 2);
  EXPECT_EQ(create->columns[0].position.column, 3);
  EXPECT_EQ(create->columns[1].type.name, "DECIMAL");
  EXPECT_EQ(create->columns[1].type.parameters, (std::vector<int64_t>{15, 2}));
  EXPECT_FALSE(create->columns[1].not_null);
  EXPECT_EQ(create->columns[2].type.parameters, (std::vector<int64_t>{44}));
  EXPECT_TRUE(create->columns[2].not_null);
  EXPECT_EQ(Dump(*create->columns[2].default_value), "'none'");
  EXPECT_EQ(Dump(*create->columns[3].default_value), "-1");
  EXPECT_EQ(create->columns[4].type.name, "DOUBLE");
  EXPECT_EQ(create->columns[5].type.name, "VARCHAR");
  EXPECT_EQ(create->primary_key, (std::vector<std::string>{"l_orderkey", "l_quantity"}));
  ASSERT_EQ(create->options.size(), 3u);
  EXPECT_EQ(OptionDump(create->options[0]), "block_size='4MB'");
  EXPECT_EQ(OptionDump(create->options[1]), "compression=TRUE");
  EXPECT_EQ(OptionDump(create->options[2]), "rows=100");
}

TEST(StatementTest, TypeNamesAreUpperCasedAsWritten) {
  auto create = ParseAs<CreateTableStatement>(
      "CREATE TABLE t (a integer, b int, c int4, d bigint, e int8, f float, g float8, h real, i numeric(10), "
      "j character(3), k text, l string, m date, n timestamp, o interval, p boolean, q bool, r char(2))",
      StatementKind::kCreateTable);
  ASSERT_NE(create, nullptr);
  std::vector<std::string> names;
  for (const ColumnDefinition& column : create->columns) names.push_back(column.type.name);
  EXPECT_EQ(names, (std::vector<std::string>{"INTEGER", "INT", "INT4", "BIGINT", "INT8", "FLOAT", "FLOAT8", "REAL",
                                             "NUMERIC", "CHARACTER", "TEXT", "STRING", "DATE", "TIMESTAMP", "INTERVAL",
                                             "BOOLEAN", "BOOL", "CHAR"}));
}

TEST(StatementTest, ColumnPrimaryKeyImpliesNotNull) {
  auto create =
      ParseAs<CreateTableStatement>("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)", StatementKind::kCreateTable);
  ASSERT_NE(create, nullptr);
  EXPECT_FALSE(create->if_not_exists);
  EXPECT_TRUE(create->columns[0].primary_key);
  EXPECT_TRUE(create->columns[0].not_null);
  EXPECT_FALSE(create->columns[1].not_null);
  EXPECT_TRUE(create->primary_key.empty());
}

TEST(StatementTest, SsbTablesWithKeywordNames) {
  auto create = ParseAs<CreateTableStatement>(
      "CREATE TABLE date (d_datekey INTEGER NOT NULL, d_date VARCHAR(18), d_year INTEGER, month TEXT, "
      "name TEXT, key INT, value INT)",
      StatementKind::kCreateTable);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->table, "date");
  EXPECT_EQ(create->columns[3].name, "month");
  auto drop = ParseAs<DropStatement>("DROP TABLE IF EXISTS date", StatementKind::kDropTable);
  ASSERT_NE(drop, nullptr);
  EXPECT_EQ(drop->name, "date");
  EXPECT_TRUE(drop->if_exists);
}

TEST(StatementTest, DropTableAndView) {
  auto drop_table = ParseAs<DropStatement>("DROP TABLE lineitem", StatementKind::kDropTable);
  ASSERT_NE(drop_table, nullptr);
  EXPECT_EQ(drop_table->name, "lineitem");
  EXPECT_FALSE(drop_table->if_exists);
  auto table_named_if = ParseAs<DropStatement>("DROP TABLE if", StatementKind::kDropTable);
  ASSERT_NE(table_named_if, nullptr);
  EXPECT_EQ(table_named_if->name, "if");
  auto drop_view = ParseAs<DropStatement>("drop view if exists \"My View\"", StatementKind::kDropView);
  ASSERT_NE(drop_view, nullptr);
  EXPECT_EQ(drop_view->name, "My View");
  EXPECT_TRUE(drop_view->if_exists);
}

TEST(StatementTest, CreateViewKeepsTheQueryText) {
  auto view = ParseAs<CreateViewStatement>(
      "CREATE OR REPLACE VIEW revenue0 (supplier_no, total_revenue) AS\n"
      "  SELECT l_suppkey, sum(l_extendedprice)  -- per supplier\n"
      "  FROM lineitem GROUP BY l_suppkey ;",
      StatementKind::kCreateView);
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->name, "revenue0");
  EXPECT_TRUE(view->or_replace);
  EXPECT_EQ(view->column_names, (std::vector<std::string>{"supplier_no", "total_revenue"}));
  EXPECT_EQ(view->query_text,
            "SELECT l_suppkey, sum(l_extendedprice)  -- per supplier\n  FROM lineitem GROUP BY l_suppkey");
  ASSERT_NE(view->query, nullptr);
  EXPECT_EQ(view->text.substr(0, 17), "CREATE OR REPLACE");

  auto plain = ParseAs<CreateViewStatement>("CREATE VIEW v AS (SELECT 1) UNION SELECT 2", StatementKind::kCreateView);
  ASSERT_NE(plain, nullptr);
  EXPECT_FALSE(plain->or_replace);
  EXPECT_EQ(plain->query_text, "(SELECT 1) UNION SELECT 2");
}

TEST(StatementTest, CopyWithOptions) {
  auto copy = ParseAs<CopyStatement>(
      "COPY lineitem FROM '/data/lineitem.tbl' WITH (FORMAT csv, DELIMITER '|', HEADER, NULL '', "
      "QUOTE '\"', skip 2, header_row false)",
      StatementKind::kCopy);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->table, "lineitem");
  EXPECT_TRUE(copy->from);
  EXPECT_EQ(copy->path, "/data/lineitem.tbl");
  EXPECT_TRUE(copy->columns.empty());
  std::vector<std::string> options;
  for (const auto& option : copy->options) options.push_back(OptionDump(option));
  EXPECT_EQ(options, (std::vector<std::string>{"format='csv'", "delimiter='|'", "header=TRUE", "null=''", "quote='\"'",
                                               "skip=2", "header_row=FALSE"}));
}

TEST(StatementTest, CopyToWithColumnsAndOptionsWithoutWith) {
  auto copy = ParseAs<CopyStatement>("copy t (a, \"B\") to 'out.csv' (format CSV, header true)", StatementKind::kCopy);
  ASSERT_NE(copy, nullptr);
  EXPECT_FALSE(copy->from);
  EXPECT_EQ(copy->columns, (std::vector<std::string>{"a", "B"}));
  ASSERT_EQ(copy->options.size(), 2u);
  EXPECT_EQ(OptionDump(copy->options[0]), "format='CSV'");  // bare words keep their spelling
  EXPECT_EQ(OptionDump(copy->options[1]), "header=TRUE");

  auto bare = ParseAs<CopyStatement>("COPY t FROM 'x'", StatementKind::kCopy);
  ASSERT_NE(bare, nullptr);
  EXPECT_TRUE(bare->options.empty());
}

TEST(StatementTest, InsertValuesAndSelect) {
  auto values = ParseAs<InsertStatement>("INSERT INTO t (a, b) VALUES (1, 'x'), (-2, NULL), (3 + 4, DATE '2020-01-01')",
                                         StatementKind::kInsert);
  ASSERT_NE(values, nullptr);
  EXPECT_EQ(values->table, "t");
  EXPECT_EQ(values->columns, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(values->values.size(), 3u);
  EXPECT_EQ(Dump(*values->values[1][0]), "-2");
  EXPECT_EQ(Dump(*values->values[1][1]), "NULL");
  EXPECT_EQ(Dump(*values->values[2][0]), "(+ 3 4)");
  EXPECT_EQ(values->query, nullptr);

  auto select = ParseAs<InsertStatement>("INSERT INTO t SELECT * FROM u WHERE x > 1", StatementKind::kInsert);
  ASSERT_NE(select, nullptr);
  EXPECT_TRUE(select->columns.empty());
  EXPECT_TRUE(select->values.empty());
  ASSERT_NE(select->query, nullptr);

  auto parenthesized = ParseAs<InsertStatement>("INSERT INTO t (a) (SELECT 1)", StatementKind::kInsert);
  ASSERT_NE(parenthesized, nullptr);
  EXPECT_EQ(parenthesized->columns, (std::vector<std::string>{"a"}));
  ASSERT_NE(parenthesized->query, nullptr);

  auto with = ParseAs<InsertStatement>("INSERT INTO t WITH x AS (SELECT 1) SELECT * FROM x", StatementKind::kInsert);
  ASSERT_NE(with, nullptr);
  EXPECT_EQ(with->query->ctes.size(), 1u);
}

TEST(StatementTest, ExplainForms) {
  auto plain = ParseAs<ExplainStatement>("EXPLAIN SELECT 1", StatementKind::kExplain);
  ASSERT_NE(plain, nullptr);
  EXPECT_FALSE(plain->analyze);
  EXPECT_EQ(plain->format, "TEXT");
  ASSERT_NE(plain->statement, nullptr);
  EXPECT_EQ(plain->statement->kind, StatementKind::kSelect);
  EXPECT_EQ(plain->statement->text, "SELECT 1");
  EXPECT_EQ(plain->statement->position.column, 9);

  auto analyze = ParseAs<ExplainStatement>("explain analyze select * from t", StatementKind::kExplain);
  ASSERT_NE(analyze, nullptr);
  EXPECT_TRUE(analyze->analyze);

  auto dot = ParseAs<ExplainStatement>("EXPLAIN (FORMAT DOT) SELECT 1", StatementKind::kExplain);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->format, "DOT");
  EXPECT_FALSE(dot->analyze);

  auto both = ParseAs<ExplainStatement>("EXPLAIN (format text, analyze) SELECT 1", StatementKind::kExplain);
  ASSERT_NE(both, nullptr);
  EXPECT_EQ(both->format, "TEXT");
  EXPECT_TRUE(both->analyze);

  auto query = ParseAs<ExplainStatement>("EXPLAIN (SELECT 1) UNION SELECT 2", StatementKind::kExplain);
  ASSERT_NE(query, nullptr);
  EXPECT_EQ(query->statement->kind, StatementKind::kSelect);

  auto insert = ParseAs<ExplainStatement>("EXPLAIN INSERT INTO t SELECT 1", StatementKind::kExplain);
  ASSERT_NE(insert, nullptr);
  EXPECT_EQ(insert->statement->kind, StatementKind::kInsert);
}

TEST(StatementTest, AnalyzeSetShowDescribe) {
  auto analyze_all = ParseAs<AnalyzeStatement>("ANALYZE", StatementKind::kAnalyze);
  ASSERT_NE(analyze_all, nullptr);
  EXPECT_EQ(analyze_all->table, "");
  auto analyze_one = ParseAs<AnalyzeStatement>("analyze LineItem;", StatementKind::kAnalyze);
  ASSERT_NE(analyze_one, nullptr);
  EXPECT_EQ(analyze_one->table, "lineitem");

  auto set = ParseAs<SetStatement>("SET Scheduler.Policy = 'fair'", StatementKind::kSet);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->name, "scheduler.policy");
  EXPECT_EQ(Dump(*set->value), "'fair'");
  auto set_to = ParseAs<SetStatement>("SET threads TO 8", StatementKind::kSet);
  ASSERT_NE(set_to, nullptr);
  EXPECT_EQ(Dump(*set_to->value), "8");
  auto set_word = ParseAs<SetStatement>("SET policy = Fair", StatementKind::kSet);
  ASSERT_NE(set_word, nullptr);
  EXPECT_EQ(Dump(*set_word->value), "'Fair'");
  auto set_default = ParseAs<SetStatement>("SET policy TO DEFAULT", StatementKind::kSet);
  ASSERT_NE(set_default, nullptr);
  EXPECT_EQ(Dump(*set_default->value), "'DEFAULT'");
  auto set_bool = ParseAs<SetStatement>("SET profiling = true", StatementKind::kSet);
  ASSERT_NE(set_bool, nullptr);
  EXPECT_EQ(Dump(*set_bool->value), "TRUE");
  auto set_negative = ParseAs<SetStatement>("SET priority = -3", StatementKind::kSet);
  ASSERT_NE(set_negative, nullptr);
  EXPECT_EQ(Dump(*set_negative->value), "-3");

  struct ShowCase {
    const char* sql;
    const char* name;
    const char* target;
  };
  const ShowCase shows[] = {{"SHOW ALL", "all", ""},         {"SHOW TABLES", "tables", ""},
                            {"show stats", "stats", ""},     {"SHOW STATS lineitem", "stats", "lineitem"},
                            {"SHOW MEMORY", "memory", ""},   {"SHOW Scheduler.Policy", "scheduler.policy", ""},
                            {"SHOW threads;", "threads", ""}};
  for (const ShowCase& c : shows) {
    auto show = ParseAs<ShowStatement>(c.sql, StatementKind::kShow);
    ASSERT_NE(show, nullptr) << c.sql;
    EXPECT_EQ(show->name, c.name) << c.sql;
    EXPECT_EQ(show->target, c.target) << c.sql;
  }

  auto describe = ParseAs<DescribeStatement>("DESCRIBE \"Orders\"", StatementKind::kDescribe);
  ASSERT_NE(describe, nullptr);
  EXPECT_EQ(describe->table, "Orders");
  auto desc = ParseAs<DescribeStatement>("desc date", StatementKind::kDescribe);
  ASSERT_NE(desc, nullptr);
  EXPECT_EQ(desc->table, "date");
}

}  // namespace
}  // namespace tessera::parser
