// SELECT structure: select list, FROM and joins, WHERE/GROUP BY/HAVING, ORDER BY, LIMIT, WITH, set
// operations.

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "parser/ast.h"
#include "tests/parser/parse_for_test.h"

namespace tessera::parser {
namespace {

using testing::Dump;
using testing::ParseQuery;

const SelectCore& CoreOf(const SelectStatement& query) {
  EXPECT_EQ(query.body->kind, QueryBody::Kind::kSelect);
  return *query.body->select;
}

TEST(QueryTest, SelectListWithAliasesAndStars) {
  auto query = ParseQuery("SELECT *, t.*, a AS x, b y, c + 1, \"Q\".* , count(*) count FROM t");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = CoreOf(*query);
  ASSERT_EQ(core.items.size(), 7u);
  EXPECT_EQ(core.items[0].expr->kind, ExprKind::kStar);
  EXPECT_EQ(core.items[0].expr->qualifier, "");
  EXPECT_EQ(core.items[1].expr->kind, ExprKind::kStar);
  EXPECT_EQ(core.items[1].expr->qualifier, "t");
  EXPECT_EQ(core.items[2].alias, "x");
  EXPECT_EQ(core.items[3].alias, "y");
  EXPECT_EQ(core.items[4].alias, "");
  EXPECT_EQ(core.items[5].expr->qualifier, "Q");
  EXPECT_EQ(core.items[6].alias, "count");
  EXPECT_FALSE(core.distinct);
}

TEST(QueryTest, AliasAfterAsMayBeAnyWordOrQuoted) {
  auto query = ParseQuery("SELECT a AS \"Mixed Case\", b AS order, c AS date, d date FROM t");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = CoreOf(*query);
  EXPECT_EQ(core.items[0].alias, "Mixed Case");
  EXPECT_EQ(core.items[1].alias, "order");
  EXPECT_EQ(core.items[2].alias, "date");
  EXPECT_EQ(core.items[3].alias, "date");
}

TEST(QueryTest, SelectDistinctAndSelectWithoutFrom) {
  auto distinct = ParseQuery("SELECT DISTINCT a, b FROM t");
  ASSERT_NE(distinct, nullptr);
  EXPECT_TRUE(CoreOf(*distinct).distinct);
  auto all = ParseQuery("SELECT ALL a FROM t");
  EXPECT_FALSE(CoreOf(*all).distinct);
  auto constant = ParseQuery("SELECT 1 + 1");
  EXPECT_TRUE(CoreOf(*constant).from.empty());
}

TEST(QueryTest, FromListWithAliases) {
  auto query = ParseQuery("SELECT 1 FROM supplier, lineitem l1, nation AS n2, t AS x (a, b), \"Odd\" o");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = CoreOf(*query);
  ASSERT_EQ(core.from.size(), 5u);
  EXPECT_EQ(core.from[0]->kind, TableRefKind::kBaseTable);
  EXPECT_EQ(core.from[0]->name, "supplier");
  EXPECT_EQ(core.from[0]->alias, "");
  EXPECT_EQ(core.from[1]->alias, "l1");
  EXPECT_EQ(core.from[2]->alias, "n2");
  EXPECT_EQ(core.from[3]->column_aliases, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(core.from[4]->name, "Odd");
  EXPECT_EQ(core.from[1]->position.column, 25);
}

TEST(QueryTest, DerivedTables) {
  auto query = ParseQuery("SELECT * FROM (SELECT a FROM t) AS sub, (SELECT 1) x, (SELECT 2)");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = CoreOf(*query);
  ASSERT_EQ(core.from.size(), 3u);
  EXPECT_EQ(core.from[0]->kind, TableRefKind::kSubquery);
  EXPECT_EQ(core.from[0]->alias, "sub");
  ASSERT_NE(core.from[0]->subquery, nullptr);
  EXPECT_EQ(core.from[1]->alias, "x");
  EXPECT_EQ(core.from[2]->alias, "");
}

TEST(QueryTest, JoinKinds) {
  struct Case {
    const char* join;
    JoinType type;
    bool natural;
  };
  const Case cases[] = {
      {"JOIN", JoinType::kInner, false},       {"INNER JOIN", JoinType::kInner, false},
      {"LEFT JOIN", JoinType::kLeft, false},   {"LEFT OUTER JOIN", JoinType::kLeft, false},
      {"RIGHT JOIN", JoinType::kRight, false}, {"right outer join", JoinType::kRight, false},
      {"FULL JOIN", JoinType::kFull, false},   {"FULL OUTER JOIN", JoinType::kFull, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.join);
    auto query = ParseQuery(std::string("SELECT * FROM a ") + c.join + " b ON a.x = b.x");
    ASSERT_NE(query, nullptr);
    const TableRef& join = *CoreOf(*query).from[0];
    EXPECT_EQ(join.kind, TableRefKind::kJoin);
    EXPECT_EQ(join.join_type, c.type);
    EXPECT_EQ(join.natural, c.natural);
    EXPECT_EQ(join.left->name, "a");
    EXPECT_EQ(join.right->name, "b");
    EXPECT_EQ(Dump(*join.join_condition), "(= a.x b.x)");
  }
}

TEST(QueryTest, CrossNaturalAndUsingJoins) {
  auto cross = ParseQuery("SELECT * FROM a CROSS JOIN b");
  ASSERT_NE(cross, nullptr);
  EXPECT_EQ(CoreOf(*cross).from[0]->join_type, JoinType::kCross);
  EXPECT_EQ(CoreOf(*cross).from[0]->join_condition, nullptr);

  auto natural = ParseQuery("SELECT * FROM a NATURAL JOIN b NATURAL LEFT JOIN c");
  ASSERT_NE(natural, nullptr);
  const TableRef& outer = *CoreOf(*natural).from[0];
  EXPECT_TRUE(outer.natural);
  EXPECT_EQ(outer.join_type, JoinType::kLeft);
  EXPECT_TRUE(outer.left->natural);
  EXPECT_EQ(outer.left->join_type, JoinType::kInner);

  auto using_join = ParseQuery("SELECT * FROM a JOIN b USING (x, \"Y\")");
  ASSERT_NE(using_join, nullptr);
  EXPECT_EQ(CoreOf(*using_join).from[0]->using_columns, (std::vector<std::string>{"x", "Y"}));
}

TEST(QueryTest, JoinsAreLeftDeepAndParenthesesGroup) {
  auto chain = ParseQuery("SELECT * FROM a JOIN b ON p JOIN c ON q, d");
  ASSERT_NE(chain, nullptr);
  const SelectCore& core = CoreOf(*chain);
  ASSERT_EQ(core.from.size(), 2u);
  const TableRef& top = *core.from[0];
  EXPECT_EQ(top.right->name, "c");
  EXPECT_EQ(top.left->kind, TableRefKind::kJoin);
  EXPECT_EQ(top.left->left->name, "a");
  EXPECT_EQ(core.from[1]->name, "d");

  auto grouped = ParseQuery("SELECT * FROM a LEFT JOIN (b JOIN c ON q) ON p");
  ASSERT_NE(grouped, nullptr);
  const TableRef& join = *CoreOf(*grouped).from[0];
  EXPECT_EQ(join.left->name, "a");
  EXPECT_EQ(join.right->kind, TableRefKind::kJoin);
  EXPECT_EQ(Dump(*join.join_condition), "p");

  auto aliased = ParseQuery("SELECT * FROM (a JOIN b ON p) AS j");
  ASSERT_NE(aliased, nullptr);
  EXPECT_EQ(CoreOf(*aliased).from[0]->kind, TableRefKind::kJoin);
  EXPECT_EQ(CoreOf(*aliased).from[0]->alias, "j");
}

TEST(QueryTest, WhereGroupByHaving) {
  auto query = ParseQuery("SELECT a, sum(b) FROM t WHERE c > 1 GROUP BY a, 2, a + 1 HAVING sum(b) > 10");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = CoreOf(*query);
  EXPECT_EQ(Dump(*core.where), "(> c 1)");
  ASSERT_EQ(core.group_by.size(), 3u);
  EXPECT_EQ(Dump(*core.group_by[1]), "2");
  EXPECT_EQ(Dump(*core.group_by[2]), "(+ a 1)");
  EXPECT_EQ(Dump(*core.having), "(> (fn SUM b) 10)");
}

TEST(QueryTest, OrderByDirectionsAndNulls) {
  auto query = ParseQuery("SELECT a FROM t ORDER BY a, b DESC, 1 ASC, c NULLS FIRST, d DESC NULLS LAST, e + 1");
  ASSERT_NE(query, nullptr);
  ASSERT_EQ(query->order_by.size(), 6u);
  EXPECT_TRUE(query->order_by[0].ascending);
  EXPECT_FALSE(query->order_by[0].nulls_first.has_value());
  EXPECT_FALSE(query->order_by[1].ascending);
  EXPECT_EQ(Dump(*query->order_by[2].expr), "1");
  EXPECT_EQ(query->order_by[3].nulls_first, std::optional<bool>(true));
  EXPECT_FALSE(query->order_by[4].ascending);
  EXPECT_EQ(query->order_by[4].nulls_first, std::optional<bool>(false));
  EXPECT_EQ(Dump(*query->order_by[5].expr), "(+ e 1)");
}

TEST(QueryTest, LimitOffsetAndFetch) {
  auto limit = ParseQuery("SELECT a FROM t LIMIT 10 OFFSET 5");
  ASSERT_NE(limit, nullptr);
  EXPECT_EQ(Dump(*limit->limit), "10");
  EXPECT_EQ(Dump(*limit->offset), "5");
  auto reversed = ParseQuery("SELECT a FROM t OFFSET 5 ROWS LIMIT 10");
  EXPECT_EQ(Dump(*reversed->limit), "10");
  EXPECT_EQ(Dump(*reversed->offset), "5");
  auto fetch = ParseQuery("SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY");
  EXPECT_EQ(Dump(*fetch->limit), "3");
  auto fetch_one = ParseQuery("SELECT a FROM t FETCH NEXT ROW ONLY");
  EXPECT_EQ(Dump(*fetch_one->limit), "1");
  auto limit_all = ParseQuery("SELECT a FROM t LIMIT ALL");
  EXPECT_EQ(limit_all->limit, nullptr);
}

TEST(QueryTest, CommonTableExpressions) {
  auto query = ParseQuery(
      "WITH revenue (supplier_no, total) AS (SELECT a, b FROM t), other AS (SELECT * FROM revenue) "
      "SELECT * FROM revenue, other");
  ASSERT_NE(query, nullptr);
  ASSERT_EQ(query->ctes.size(), 2u);
  EXPECT_EQ(query->ctes[0].name, "revenue");
  EXPECT_EQ(query->ctes[0].column_names, (std::vector<std::string>{"supplier_no", "total"}));
  EXPECT_EQ(query->ctes[1].name, "other");
  EXPECT_TRUE(query->ctes[1].column_names.empty());
  ASSERT_NE(query->ctes[1].query, nullptr);
  EXPECT_EQ(query->ctes[0].position.column, 6);
}

TEST(QueryTest, RecursiveCommonTableExpressions) {
  auto query = ParseQuery("WITH RECURSIVE t (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t), u AS (SELECT 2) SELECT 1");
  ASSERT_NE(query, nullptr);
  ASSERT_EQ(query->ctes.size(), 2u);
  EXPECT_TRUE(query->ctes[0].recursive);
  EXPECT_TRUE(query->ctes[1].recursive);  // RECURSIVE applies to the whole WITH list
  EXPECT_EQ(query->ctes[0].position.column, 16);
  auto plain = ParseQuery("WITH recursive AS (SELECT 1) SELECT * FROM recursive");  // a WITH query named so
  ASSERT_NE(plain, nullptr);
  ASSERT_EQ(plain->ctes.size(), 1u);
  EXPECT_FALSE(plain->ctes[0].recursive);
}

TEST(QueryTest, SetOperationsWithIntersectBindingTighter) {
  auto query = ParseQuery("SELECT 1 UNION SELECT 2 INTERSECT SELECT 3 EXCEPT ALL SELECT 4");
  ASSERT_NE(query, nullptr);
  // ((1 UNION (2 INTERSECT 3)) EXCEPT ALL 4)
  const QueryBody& top = *query->body;
  ASSERT_EQ(top.kind, QueryBody::Kind::kSetOperation);
  EXPECT_EQ(top.set_operation, SetOperation::kExcept);
  EXPECT_TRUE(top.all);
  const QueryBody& left = *top.left;
  EXPECT_EQ(left.set_operation, SetOperation::kUnion);
  EXPECT_FALSE(left.all);
  EXPECT_EQ(left.left->kind, QueryBody::Kind::kSelect);
  EXPECT_EQ(left.right->kind, QueryBody::Kind::kSetOperation);
  EXPECT_EQ(left.right->set_operation, SetOperation::kIntersect);
  EXPECT_EQ(top.right->kind, QueryBody::Kind::kSelect);
}

TEST(QueryTest, ParenthesizedQueryBodies) {
  auto grouped = ParseQuery("SELECT 1 UNION ALL (SELECT 2 UNION SELECT 3)");
  ASSERT_NE(grouped, nullptr);
  EXPECT_EQ(grouped->body->right->kind, QueryBody::Kind::kSetOperation);

  // A parenthesized query with its own ORDER BY / LIMIT is nested; the outer ORDER BY applies to the union.
  auto nested = ParseQuery("(SELECT a FROM t ORDER BY a LIMIT 1) UNION (SELECT b FROM u) ORDER BY 1");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->body->left->kind, QueryBody::Kind::kNested);
  EXPECT_EQ(nested->body->left->nested->order_by.size(), 1u);
  EXPECT_EQ(nested->body->right->kind, QueryBody::Kind::kSelect);
  EXPECT_EQ(nested->order_by.size(), 1u);

  // A query in parentheses alone is just that query.
  auto alone = ParseQuery("((SELECT a FROM t ORDER BY a))");
  ASSERT_NE(alone, nullptr);
  EXPECT_EQ(alone->body->kind, QueryBody::Kind::kSelect);
  EXPECT_EQ(alone->order_by.size(), 1u);
}

TEST(QueryTest, NonReservedKeywordsAsNames) {
  const char* const kWords[] = {"date",   "year",   "month", "day",       "hour",     "minute", "second",
                                "text",   "name",   "key",   "value",     "first",    "last",   "count",
                                "sum",    "avg",    "min",   "max",       "analyze",  "format", "stats",
                                "memory", "tables", "data",  "timestamp", "interval", "if",     "view"};
  for (const char* word : kWords) {
    SCOPED_TRACE(word);
    const std::string w(word);
    auto query = ParseQuery("SELECT " + w + ", t." + w + ", " + w + " + 1 AS " + w + " FROM " + w + " AS t, " + w +
                            " " + w + "2 WHERE " + w + " = 1 GROUP BY " + w + " ORDER BY " + w);
    ASSERT_NE(query, nullptr);
    const SelectCore& core = CoreOf(*query);
    EXPECT_EQ(core.items[0].expr->name, w);
    EXPECT_EQ(core.items[1].expr->name, w);
    EXPECT_EQ(core.items[2].alias, w);
    EXPECT_EQ(core.from[0]->name, w);
    EXPECT_EQ(core.from[1]->name, w);
    EXPECT_EQ(core.from[1]->alias, w + "2");
  }
}

TEST(QueryTest, QuotedIdentifiersWorkForReservedWords) {
  auto query = ParseQuery("SELECT \"select\", \"from\".\"where\" FROM \"from\" \"group\"");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = CoreOf(*query);
  EXPECT_EQ(core.items[0].expr->name, "select");
  EXPECT_EQ(core.items[1].expr->qualifier, "from");
  EXPECT_EQ(core.from[0]->name, "from");
  EXPECT_EQ(core.from[0]->alias, "group");
}

TEST(QueryTest, SsbDateTableWithAliasAndDateLiteral) {
  auto query = ParseQuery(
      "SELECT d_year FROM lineorder, date d WHERE lo_orderdate = d.d_datekey AND d_date < DATE '1998-12-01'");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = CoreOf(*query);
  EXPECT_EQ(core.from[1]->name, "date");
  EXPECT_EQ(core.from[1]->alias, "d");
  EXPECT_EQ(Dump(*core.where), "(AND (= lo_orderdate d.d_datekey) (< d_date date:1998-12-01))");
}

}  // namespace
}  // namespace tessera::parser
