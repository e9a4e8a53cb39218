// Logical plan nodes: output schemas, EXPLAIN rendering, deep copies, and the structural validator.

#include "optimizer/logical_plan.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/expression_format.h"
#include "optimizer/plan_validation.h"

namespace tessera::optimizer {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const TableDescriptor> Table(const std::string& name, std::vector<ColumnSchema> columns) {
  auto table = std::make_shared<TableDescriptor>();
  table->name = name;
  table->columns = std::move(columns);
  return table;
}

std::unique_ptr<TableScan> Scan(std::shared_ptr<const TableDescriptor> table, const std::string& alias) {
  auto scan = std::make_unique<TableScan>();
  scan->table = std::move(table);
  scan->alias = alias;
  for (size_t i = 0; i < scan->table->columns.size(); ++i) scan->columns.push_back(static_cast<int>(i));
  scan->RecomputeOutput();
  return scan;
}

class LogicalPlanTest : public ::testing::Test {
 protected:
  std::shared_ptr<const TableDescriptor> orders_ = Table("orders", {{"o_id", Type::Integer(), true, {}},
                                                                    {"o_customer", Type::Integer(), false, {}},
                                                                    {"o_total", Type::Decimal(15, 2), true, {}}});
  std::shared_ptr<const TableDescriptor> customers_ =
      Table("customers", {{"c_id", Type::Integer(), true, {}}, {"c_name", Type::Varchar(20), true, {}}});
};

TEST_F(LogicalPlanTest, ScanOutputFollowsSchemaAndAlias) {
  auto scan = Scan(orders_, "o");
  scan->columns = {2, 0};
  scan->filter = MakeComparison(ComparisonOp::kGreater, MakeColumn(0, Type::Decimal(15, 2)),
                                MakeConstant(Value::Decimal(1000, Type::Decimal(15, 2))));
  scan->RecomputeOutput();
  ASSERT_EQ(scan->output_width(), 2);
  EXPECT_EQ(scan->output()[0].name, "o_total");
  EXPECT_FALSE(scan->output()[0].nullable);
  EXPECT_EQ(scan->output()[0].relation, "o");
  EXPECT_EQ(scan->ToString(), "TableScan orders AS o [o_total, o_id] filter=(o_total > 10.00)\n");
  EXPECT_TRUE(ValidatePlan(*scan).ok());
}

TEST_F(LogicalPlanTest, JoinOutputsDependOnTheJoinType) {
  for (JoinType type : {JoinType::kInner, JoinType::kLeftOuter, JoinType::kSemi, JoinType::kAnti}) {
    auto join = MakeJoin(type, Scan(orders_, "orders"), Scan(customers_, "customers"));
    join->left_keys.push_back(MakeColumn(1, Type::Integer()));
    join->right_keys.push_back(MakeColumn(0, Type::Integer()));
    join->RecomputeOutput();
    const bool left_only = type == JoinType::kSemi || type == JoinType::kAnti;
    EXPECT_EQ(join->output_width(), left_only ? 3 : 5);
    if (type == JoinType::kLeftOuter) {
      EXPECT_TRUE(join->output()[4].nullable);
    } else if (type == JoinType::kInner) {
      EXPECT_FALSE(join->output()[4].nullable);
    }
    EXPECT_THAT(join->Describe(), HasSubstr("keys=[o_customer = c_id]"));
    EXPECT_TRUE(ValidatePlan(*join).ok());
  }
}

TEST_F(LogicalPlanTest, TreeRenderingAndClone) {
  auto join = MakeJoin(JoinType::kInner, Scan(orders_, "orders"), Scan(customers_, "customers"));
  join->left_keys.push_back(MakeColumn(1, Type::Integer()));
  join->right_keys.push_back(MakeColumn(0, Type::Integer()));
  join->residual = MakeComparison(ComparisonOp::kNotEqual, MakeColumn(4, Type::Varchar(20)),
                                  MakeConstant(Value::String("x", Type::Varchar(20))));
  join->RecomputeOutput();
  auto aggregate = std::make_unique<Aggregate>();
  aggregate->group_by.push_back(MakeColumn(4, Type::Varchar(20)));
  aggregate->group_names.push_back("c_name");
  AggregateCall sum;
  sum.function = AggregateKind::kSum;
  sum.argument = MakeColumn(2, Type::Decimal(15, 2));
  sum.result_type = Type::Decimal(38, 2);
  sum.name = "sum(o_total)";
  aggregate->aggregates.push_back(std::move(sum));
  AggregateCall count;
  count.function = AggregateKind::kCount;
  count.distinct = true;
  count.argument = MakeColumn(0, Type::Integer());
  count.result_type = Type::BigInt();
  count.name = "count(DISTINCT o_id)";
  aggregate->aggregates.push_back(std::move(count));
  aggregate->children.push_back(std::move(join));
  aggregate->RecomputeOutput();
  auto sort = std::make_unique<Sort>();
  sort->keys.push_back(SortKey{MakeColumn(1, Type::Decimal(38, 2)), false, true});
  sort->children.push_back(std::move(aggregate));
  sort->RecomputeOutput();
  auto limit = std::make_unique<Limit>();
  limit->limit = 10;
  limit->offset = 5;
  limit->children.push_back(std::move(sort));
  limit->RecomputeOutput();

  const std::string expected =
      "Limit 10 OFFSET 5\n"
      "  Sort [sum(o_total) DESC]\n"
      "    Aggregate groups=[c_name] aggregates=[sum(o_total), count(DISTINCT o_id)]\n"
      "      Join INNER keys=[o_customer = c_id] residual=(c_name <> 'x')\n"
      "        TableScan orders [o_id, o_customer, o_total]\n"
      "        TableScan customers [c_id, c_name]\n";
  EXPECT_EQ(limit->ToString(), expected);
  EXPECT_TRUE(limit->output()[1].nullable);   // SUM may be NULL
  EXPECT_FALSE(limit->output()[2].nullable);  // COUNT never is
  std::unique_ptr<LogicalOperator> copy = limit->Clone();
  EXPECT_EQ(copy->ToString(), expected);
  EXPECT_TRUE(ValidatePlan(*copy).ok());
}

TEST_F(LogicalPlanTest, ProjectNamesAndColumnSelection) {
  std::vector<ExpressionPtr> expressions;
  expressions.push_back(MakeColumn(1, Type::Integer()));
  expressions.push_back(MakeArithmetic(ArithmeticOp::kMultiply, MakeColumn(2, Type::Decimal(15, 2)),
                                       MakeConstant(Value::Decimal(2, Type::Decimal(1, 0))), Type::Decimal(17, 2)));
  auto project = MakeProject(Scan(orders_, "orders"), std::move(expressions), {"o_customer", "double_total"});
  EXPECT_EQ(project->Describe(), "Project [o_customer, double_total := (o_total * 2)]");
  auto selection = MakeColumnSelection(std::move(project), {1});
  EXPECT_EQ(selection->OutputNames(), std::vector<std::string>{"double_total"});
  EXPECT_EQ(selection->output()[0].type, Type::Decimal(17, 2));
}

TEST_F(LogicalPlanTest, ValuesSetOperationDistinct) {
  auto values = std::make_unique<Values>();
  values->columns = {{"x", Type::Integer(), false, ""}};
  values->rows = {{Value::Integer(1)}, {Value::Integer(2)}};
  values->RecomputeOutput();
  auto union_all = std::make_unique<SetOperation>();
  union_all->all = true;
  union_all->children.push_back(values->Clone());
  union_all->children.push_back(std::move(values));
  union_all->RecomputeOutput();
  auto distinct = std::make_unique<Distinct>();
  distinct->children.push_back(std::move(union_all));
  distinct->RecomputeOutput();
  EXPECT_EQ(distinct->ToString(),
            "Distinct\n  SetOperation UNION ALL\n    Values [x] (1), (2)\n    Values [x] (1), (2)\n");
  EXPECT_TRUE(ValidatePlan(*distinct).ok());
}

TEST_F(LogicalPlanTest, ValidatorFindsBrokenPlans) {
  auto filter =
      MakeFilter(Scan(customers_, "customers"),
                 MakeComparison(ComparisonOp::kEqual, MakeColumn(7, Type::Integer()), MakeConstant(Value::Integer(1))));
  absl::Status status = ValidatePlan(*filter);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()), HasSubstr("references column #7 of 2"));

  auto join = MakeJoin(JoinType::kInner, Scan(orders_, "orders"), Scan(customers_, "customers"));
  join->left_keys.push_back(MakeColumn(2, Type::Decimal(15, 2)));
  join->right_keys.push_back(MakeColumn(0, Type::Integer()));
  EXPECT_THAT(std::string(ValidatePlan(*join).message()), HasSubstr("key pair 0 has types DECIMAL(15,2) and INTEGER"));

  auto not_boolean = MakeFilter(Scan(customers_, "customers"), MakeColumn(0, Type::Integer()));
  EXPECT_THAT(std::string(ValidatePlan(*not_boolean).message()), HasSubstr("predicate is not BOOLEAN"));
}

TEST(ExpressionFormatTest, ConstantsAndNames) {
  EXPECT_EQ(FormatConstant(Value::String("it's")), "'it''s'");
  EXPECT_EQ(FormatConstant(Value::Null(Type::Integer())), "NULL");
  EXPECT_EQ(FormatConstant(Value::Boolean(false)), "FALSE");
  EXPECT_EQ(FormatConstant(Value::Decimal(-5, Type::Decimal(4, 2))), "-0.05");
  std::vector<OutputColumn> columns = {{"n_name", Type::Char(25), false, "n1"},
                                       {"n_name", Type::Char(25), false, "n2"},
                                       {"x", Type::Integer(), true, ""}};
  EXPECT_EQ(DisplayNames(columns), (std::vector<std::string>{"n1.n_name", "n2.n_name", "x"}));
  auto expression = MakeCast(MakeColumn(2, Type::Integer()), Type::BigInt());
  EXPECT_EQ(FormatExpression(*expression, DisplayNames(columns)), "CAST(x AS BIGINT)");
  EXPECT_EQ(FormatExpression(*MakeColumn(9, Type::Integer()), DisplayNames(columns)), "#9");
}

}  // namespace
}  // namespace tessera::optimizer
