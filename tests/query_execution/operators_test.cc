// Operators run as DAGs over real blocks: select, hash aggregation, hash joins (inner, left outer, semi,
// anti, residual), sort and top-k, window functions, checked against answers computed directly.

#include <filesystem>
#include <map>

#include "gtest/gtest.h"
#include "query_execution/local_executor.h"
#include "query_execution/query_manager.h"
#include "relational_operators/aggregation_operator.h"
#include "relational_operators/hash_join_operator.h"
#include "relational_operators/select_operator.h"
#include "relational_operators/sort_operator.h"
#include "relational_operators/window_operator.h"
#include "storage/delimited_file.h"

namespace tessera {
namespace {

class OperatorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("tessera_operators_test_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
    topology_ = MakeFakeTopology(2, 1);
    pool_ = std::make_unique<BufferPool>(512 << 20, topology_.get());
    catalog_ = *Catalog::Open(directory_, false);
    storage_ = *StorageManager::Open(directory_, *catalog_, pool_.get(), topology_.get(), false);
  }
  void TearDown() override {
    storage_.reset();
    std::filesystem::remove_all(directory_);
  }

  // Creates a table with small blocks (many work orders) and the given rows.
  std::shared_ptr<const TableDescriptor> MakeTable(const std::string& name, std::vector<ColumnSchema> columns,
                                                   const std::vector<std::vector<Value>>& rows) {
    TableDescriptor table;
    table.name = name;
    table.columns = std::move(columns);
    table.block_size_bytes = 64 << 10;
    EXPECT_TRUE(catalog_->CreateTable(table).ok());
    auto snapshot = *catalog_->GetTable(name);
    auto writer = *storage_->CreateSegmentWriter(catalog_->AllocateSegmentId());
    LoadedRows loaded = *LoadRows(*snapshot, rows, *storage_, *writer);
    EXPECT_TRUE(writer->Finish().ok());
    SegmentDescriptor segment = DescribeSegment(writer->segment_id(), loaded);
    auto updated = std::make_shared<TableDescriptor>(*snapshot);
    updated->segments.push_back(segment);
    updated->row_count = loaded.row_count;
    EXPECT_TRUE(catalog_->ReplaceTable(snapshot, updated).ok());
    storage_->RegisterSegment(segment, updated->columns, std::move(loaded.blocks));
    return *catalog_->GetTable(name);
  }

  std::vector<std::vector<std::string>> Run(std::unique_ptr<ExecutionDag> dag) {
    QueryManager query(std::move(dag));
    absl::Status status = RunQueryLocally(query, 2);
    EXPECT_TRUE(status.ok()) << status;
    std::vector<std::vector<std::string>> rows;
    const TemporaryRelation& result = *query.result();
    for (uint32_t b = 0; b < result.block_count(); ++b) {
      BlockView block = result.block(b);
      for (uint32_t r = 0; r < block.row_count(); ++r) {
        std::vector<std::string> row;
        for (size_t c = 0; c < result.schema().size(); ++c) {
          row.push_back(block.GetValue(static_cast<int>(c), r, result.schema()[c].type).ToString());
        }
        rows.push_back(row);
      }
    }
    return rows;
  }

  std::string directory_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<StorageManager> storage_;
};

std::unique_ptr<BoundExpression> Col(int i, Type t) { return MakeColumn(i, t); }

TEST_F(OperatorsTest, FilteredGroupByAggregationThenSort) {
  const Type money = Type::Decimal(15, 2);
  std::vector<std::vector<Value>> rows;
  std::map<std::string, std::pair<int128, int64_t>> expected;  // group -> (sum of cents, count)
  for (int k = 0; k < 20000; ++k) {
    std::string group = "g" + std::to_string(k % 7);
    Value v = k % 11 == 0 ? Value::Null(money) : Value::Decimal(k * 3 + 1, money);
    rows.push_back({Value::Integer(k), Value::String(group, Type::Varchar(10)), v});
    if (k > 100) {
      auto& e = expected[group];
      if (!v.is_null()) e.first += k * 3 + 1;
      e.second += 1;
    }
  }
  auto table = MakeTable(
      "t", {{"k", Type::Integer(), true, {}}, {"g", Type::Varchar(10), false, {}}, {"v", money, false, {}}}, rows);
  ASSERT_GT(table->BlockCount(), 4);
  auto dag = std::make_unique<ExecutionDag>();
  ScanSpec scan;
  scan.block_columns = {0, 1, 2};
  scan.types = {Type::Integer(), Type::Varchar(10), money};
  scan.filter = MakeComparison(ComparisonOp::kGreater, Col(0, Type::Integer()), MakeConstant(Value::Integer(100)));
  AggregationSpec spec;
  spec.group_by.push_back(Col(1, Type::Varchar(10)));
  AggregationSpec::Call sum{AggregateKind::kSum, false, Col(2, money), Type::Decimal(38, 2)};
  AggregationSpec::Call count{AggregateKind::kCountStar, false, nullptr, Type::BigInt()};
  AggregationSpec::Call min{AggregateKind::kMin, false, Col(0, Type::Integer()), Type::Integer()};
  AggregationSpec::Call avg{AggregateKind::kAvg, false, Col(2, money), Type::Decimal(38, 6)};
  spec.calls.push_back(std::move(sum));
  spec.calls.push_back(std::move(count));
  spec.calls.push_back(std::move(min));
  spec.calls.push_back(std::move(avg));
  spec.output_names = {"g", "sum", "count", "min", "avg"};
  auto aggregate = *AggregationOperator::Create(BlockInput::FromTable(table, storage_.get()), std::move(scan),
                                                std::move(spec), pool_.get());
  auto aggregate_output = aggregate->output();
  int a = dag->AddOperator(std::move(aggregate));
  int s = dag->AddOperator(
      std::make_unique<SortOperator>(aggregate_output, std::vector<SortKey>{{0, false, false}}, -1, 0, pool_.get()));
  dag->AddEdge(a, s, 0, false);
  dag->set_result_operator(s);
  auto result = Run(std::move(dag));
  ASSERT_EQ(result.size(), 7u);
  EXPECT_EQ(result[0][0], "g6");  // descending
  for (const auto& row : result) {
    const auto& e = expected[row[0]];
    EXPECT_EQ(row[1], Value::Decimal(e.first, Type::Decimal(38, 2)).ToString()) << row[0];
    EXPECT_EQ(row[2], std::to_string(e.second));
  }
  EXPECT_EQ(result[6][0], "g0");
  EXPECT_EQ(result[6][3], "105");  // smallest k > 100 with k % 7 == 0
}

TEST_F(OperatorsTest, ScalarAggregateOfAnEmptyInputIsOneRow) {
  auto table = MakeTable("e", {{"x", Type::BigInt(), false, {}}}, {{Value::BigInt(5)}});
  auto dag = std::make_unique<ExecutionDag>();
  ScanSpec scan;
  scan.block_columns = {0};
  scan.types = {Type::BigInt()};
  scan.filter = MakeComparison(ComparisonOp::kGreater, Col(0, Type::BigInt()), MakeConstant(Value::BigInt(10)));
  AggregationSpec spec;
  spec.calls.push_back({AggregateKind::kCountStar, false, nullptr, Type::BigInt()});
  spec.calls.push_back({AggregateKind::kMax, false, Col(0, Type::BigInt()), Type::BigInt()});
  spec.output_names = {"count", "max"};
  auto op = *AggregationOperator::Create(BlockInput::FromTable(table, storage_.get()), std::move(scan), std::move(spec),
                                         pool_.get());
  dag->set_result_operator(dag->AddOperator(std::move(op)));
  auto result = Run(std::move(dag));
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0][0], "0");
  EXPECT_EQ(result[0][1], "NULL");
}

class JoinTest : public OperatorsTest {
 protected:
  // orders(o_id, o_cust) probe side; customers(c_id, c_name) build side. Customer 3 has no orders; orders of
  // customer 9 have no customer; one order has a NULL customer.
  std::vector<std::vector<std::string>> Join(HashJoinType type, bool residual) {
    auto orders = MakeTable("orders", {{"o_id", Type::Integer(), false, {}}, {"o_cust", Type::Integer(), false, {}}},
                            {{Value::Integer(1), Value::Integer(1)},
                             {Value::Integer(2), Value::Integer(1)},
                             {Value::Integer(3), Value::Integer(2)},
                             {Value::Integer(4), Value::Integer(9)},
                             {Value::Integer(5), Value::Null(Type::Integer())}});
    auto customers =
        MakeTable("customers", {{"c_id", Type::Integer(), false, {}}, {"c_name", Type::Varchar(), false, {}}},
                  {{Value::Integer(1), Value::String("ann")},
                   {Value::Integer(2), Value::String("bob")},
                   {Value::Integer(3), Value::String("cy")}});
    auto dag = std::make_unique<ExecutionDag>();
    ScanSpec build_scan;
    build_scan.block_columns = {0, 1};
    build_scan.types = {Type::Integer(), Type::Varchar()};
    std::vector<std::unique_ptr<BoundExpression>> build_columns;
    build_columns.push_back(Col(0, Type::Integer()));
    build_columns.push_back(Col(1, Type::Varchar()));
    auto select = std::make_unique<SelectOperator>(BlockInput::FromTable(customers, storage_.get()),
                                                   std::move(build_scan), std::move(build_columns),
                                                   std::vector<std::string>{"c_id", "c_name"}, pool_.get());
    auto hash_table = std::make_shared<JoinHashTable>(select->output(), std::vector<int>{0}, pool_.get());
    int sel = dag->AddOperator(std::move(select));
    int build = dag->AddOperator(std::make_unique<HashJoinBuildOperator>(hash_table));
    dag->AddEdge(sel, build, 0, true);
    ScanSpec probe_scan;
    probe_scan.block_columns = {0, 1};
    probe_scan.types = {Type::Integer(), Type::Integer()};
    HashJoinSpec spec;
    spec.type = type;
    spec.probe_keys.push_back(Col(1, Type::Integer()));
    spec.probe_output = {0};
    spec.output_names = {"o_id"};
    if (type == HashJoinType::kInner || type == HashJoinType::kLeftOuter) {
      spec.build_output = {1};
      spec.output_names.push_back("c_name");
    }
    if (residual) {  // o_id <> 2 (pair layout: o_id, o_cust, c_id, c_name)
      spec.residual = MakeComparison(ComparisonOp::kNotEqual, Col(0, Type::Integer()), MakeConstant(Value::Integer(2)));
    }
    auto probe = std::make_unique<HashJoinProbeOperator>(
        BlockInput::FromTable(orders, storage_.get()), std::move(probe_scan), hash_table, std::move(spec), pool_.get());
    int p = dag->AddOperator(std::move(probe));
    dag->AddEdge(build, p, 1, false);
    auto probe_output = dag->op(p)->output();
    int s = dag->AddOperator(
        std::make_unique<SortOperator>(probe_output, std::vector<SortKey>{{0, true, false}}, -1, 0, pool_.get()));
    dag->AddEdge(p, s, 0, false);
    dag->set_result_operator(s);
    return Run(std::move(dag));
  }
};

using Rows = std::vector<std::vector<std::string>>;

TEST_F(JoinTest, Inner) {
  EXPECT_EQ(Join(HashJoinType::kInner, false), (Rows{{"1", "ann"}, {"2", "ann"}, {"3", "bob"}}));
}
TEST_F(JoinTest, InnerWithResidual) { EXPECT_EQ(Join(HashJoinType::kInner, true), (Rows{{"1", "ann"}, {"3", "bob"}})); }
TEST_F(JoinTest, LeftOuter) {
  EXPECT_EQ(Join(HashJoinType::kLeftOuter, false),
            (Rows{{"1", "ann"}, {"2", "ann"}, {"3", "bob"}, {"4", "NULL"}, {"5", "NULL"}}));
}
TEST_F(JoinTest, Semi) { EXPECT_EQ(Join(HashJoinType::kSemi, false), (Rows{{"1"}, {"2"}, {"3"}})); }
TEST_F(JoinTest, SemiWithResidual) { EXPECT_EQ(Join(HashJoinType::kSemi, true), (Rows{{"1"}, {"3"}})); }
TEST_F(JoinTest, Anti) { EXPECT_EQ(Join(HashJoinType::kAnti, false), (Rows{{"4"}, {"5"}})); }

// A nested-loop join (no keys: every probe row meets every build row) polls its query's cancel flag inside the
// probe loop: a work order run after the query was cancelled stops with Cancelled instead of running to the end
// (issue #18: cancelling nested loops took 16-78 s).
TEST_F(JoinTest, NestedLoopProbeStopsOnceItsQueryIsCancelled) {
  std::vector<std::vector<Value>> build_rows;
  for (int i = 0; i < 5000; ++i) build_rows.push_back({Value::Integer(i)});
  std::vector<std::vector<Value>> probe_rows;
  for (int i = 0; i < 3000; ++i) probe_rows.push_back({Value::Integer(i)});
  auto build_table = MakeTable("b", {{"b", Type::Integer(), false, {}}}, build_rows);
  auto probe_table = MakeTable("p", {{"p", Type::Integer(), false, {}}}, probe_rows);
  auto dag = std::make_unique<ExecutionDag>();
  ScanSpec build_scan;
  build_scan.block_columns = {0};
  build_scan.types = {Type::Integer()};
  std::vector<std::unique_ptr<BoundExpression>> build_columns;
  build_columns.push_back(Col(0, Type::Integer()));
  auto select =
      std::make_unique<SelectOperator>(BlockInput::FromTable(build_table, storage_.get()), std::move(build_scan),
                                       std::move(build_columns), std::vector<std::string>{"b"}, pool_.get());
  auto hash_table = std::make_shared<JoinHashTable>(select->output(), std::vector<int>{}, pool_.get());
  int sel = dag->AddOperator(std::move(select));
  int build = dag->AddOperator(std::make_unique<HashJoinBuildOperator>(hash_table));
  dag->AddEdge(sel, build, 0, true);
  ScanSpec probe_scan;
  probe_scan.block_columns = {0};
  probe_scan.types = {Type::Integer()};
  HashJoinSpec spec;
  spec.type = HashJoinType::kInner;
  spec.probe_output = {0};
  spec.output_names = {"p"};
  // p = b + 1000000 (pair layout: p, b): never true, so all 15 million pairs are looked at.
  spec.residual = MakeComparison(ComparisonOp::kEqual, Col(0, Type::Integer()),
                                 MakeArithmetic(ArithmeticOp::kAdd, Col(1, Type::Integer()),
                                                MakeConstant(Value::Integer(1000000)), Type::Integer()));
  auto probe = std::make_unique<HashJoinProbeOperator>(BlockInput::FromTable(probe_table, storage_.get()),
                                                       std::move(probe_scan), hash_table, std::move(spec), pool_.get());
  int p = dag->AddOperator(std::move(probe));
  dag->AddEdge(build, p, 1, false);
  dag->set_result_operator(p);
  QueryManager query(std::move(dag));
  std::atomic<bool> cancelled{false};
  const WorkOrderContext context{0, 1, &cancelled};
  int probes = 0;
  while (std::unique_ptr<WorkOrder> work_order = query.NextWorkOrder()) {
    const bool is_probe = work_order->operator_index() == p;
    cancelled.store(is_probe);
    absl::Status status = work_order->Execute(context);
    if (is_probe) {
      ++probes;
      EXPECT_TRUE(absl::IsCancelled(status)) << status;
      break;
    }
    ASSERT_TRUE(status.ok()) << status;
    query.OnWorkOrderFinished(*work_order, status, 1);
  }
  EXPECT_EQ(probes, 1);
}
TEST_F(JoinTest, AntiWithResidual) { EXPECT_EQ(Join(HashJoinType::kAnti, true), (Rows{{"2"}, {"4"}, {"5"}})); }

// Window functions over many blocks and all partition groups: each row's values are checked against a direct
// computation over its partition (brute force over every frame).
TEST_F(OperatorsTest, WindowFunctionsOverManyBlocksMatchADirectComputation) {
  constexpr int kRows = 20000;
  std::vector<std::vector<Value>> rows;
  for (int k = 0; k < kRows; ++k) {
    Value group = k % 101 == 0 ? Value::Null(Type::Integer()) : Value::Integer(k % 37);
    Value v = k % 13 == 0 ? Value::Null(Type::BigInt()) : Value::BigInt((k * 7919) % 50);
    rows.push_back({Value::Integer(k), group, v});
  }
  auto table = MakeTable(
      "w", {{"k", Type::Integer(), true, {}}, {"g", Type::Integer(), false, {}}, {"v", Type::BigInt(), false, {}}},
      rows);
  ASSERT_GT(table->BlockCount(), 4);
  auto dag = std::make_unique<ExecutionDag>();
  ScanSpec scan;
  scan.block_columns = {0, 1, 2};
  scan.types = {Type::Integer(), Type::Integer(), Type::BigInt()};
  std::vector<std::unique_ptr<BoundExpression>> projections;
  projections.push_back(Col(0, Type::Integer()));
  projections.push_back(Col(1, Type::Integer()));
  projections.push_back(Col(2, Type::BigInt()));
  auto select =
      std::make_unique<SelectOperator>(BlockInput::FromTable(table, storage_.get()), std::move(scan),
                                       std::move(projections), std::vector<std::string>{"k", "g", "v"}, pool_.get());
  auto select_output = select->output();
  WindowSpec spec;
  spec.output_columns = {0, 2};  // k, v (g is read, not passed on)
  spec.partition_columns = {1};
  spec.order_keys = {SortKey{2, true, false}, SortKey{0, true, false}};  // v (NULLs last), then k: no ties
  using Bound = WindowFrameBound::Kind;
  auto function = [](WindowFunctionKind kind, int argument, Type result_type) {
    WindowFunctionSpec spec;
    spec.kind = kind;
    spec.argument = argument;
    spec.result_type = result_type;
    return spec;
  };
  WindowFunctionSpec row_number = function(WindowFunctionKind::kRowNumber, -1, Type::BigInt());
  WindowFunctionSpec sliding_sum = function(WindowFunctionKind::kSum, 2, Type::Decimal(38, 0));
  sliding_sum.frame = {true, {Bound::kPreceding, 3}, {Bound::kFollowing, 1}};
  WindowFunctionSpec sliding_min = function(WindowFunctionKind::kMin, 2, Type::BigInt());
  sliding_min.frame = {true, {Bound::kPreceding, 2}, {Bound::kFollowing, 2}};
  WindowFunctionSpec lag = function(WindowFunctionKind::kLag, 0, Type::Integer());
  lag.parameter = 2;
  lag.default_value = Value::Integer(-1);
  spec.functions.push_back(row_number);
  spec.functions.push_back(sliding_sum);
  spec.functions.push_back(sliding_min);
  spec.functions.push_back(lag);
  int sel = dag->AddOperator(std::move(select));
  int w = dag->AddOperator(std::make_unique<WindowOperator>(select_output, std::move(spec), pool_.get()));
  dag->AddEdge(sel, w, 0, false);
  dag->set_result_operator(w);
  auto result = Run(std::move(dag));
  ASSERT_EQ(result.size(), static_cast<size_t>(kRows));

  // Expected: partitions in (v NULLS LAST, k) order.
  std::map<int, std::vector<int>> partitions;  // group (-1: NULL) -> keys in window order
  for (int k = 0; k < kRows; ++k) partitions[rows[k][1].is_null() ? -1 : k % 37].push_back(k);
  std::map<int, std::vector<std::string>> expected;
  for (auto& [group, keys] : partitions) {
    std::sort(keys.begin(), keys.end(), [&](int a, int b) {
      const Value& x = rows[a][2];
      const Value& y = rows[b][2];
      if (x.is_null() != y.is_null()) return y.is_null();
      if (!x.is_null() && x.AsInt64() != y.AsInt64()) return x.AsInt64() < y.AsInt64();
      return a < b;
    });
    const int n = static_cast<int>(keys.size());
    for (int i = 0; i < n; ++i) {
      int64_t sum = 0, present = 0, min = 0;
      bool has_min = false;
      for (int j = std::max(0, i - 3); j <= std::min(n - 1, i + 1); ++j) {
        if (rows[keys[j]][2].is_null()) continue;
        sum += rows[keys[j]][2].AsInt64();
        ++present;
      }
      for (int j = std::max(0, i - 2); j <= std::min(n - 1, i + 2); ++j) {
        if (rows[keys[j]][2].is_null()) continue;
        const int64_t value = rows[keys[j]][2].AsInt64();
        if (!has_min || value < min) min = value;
        has_min = true;
      }
      expected[keys[i]] = {std::to_string(keys[i]),
                           rows[keys[i]][2].ToString(),
                           std::to_string(i + 1),
                           present == 0 ? "NULL" : std::to_string(sum),
                           has_min ? std::to_string(min) : "NULL",
                           i >= 2 ? std::to_string(keys[i - 2]) : "-1"};
    }
  }
  for (const auto& row : result) {
    const auto& want = expected[std::stoi(row[0])];
    EXPECT_EQ(row, want) << "k = " << row[0];
    if (row != want) break;
  }
}

}  // namespace
}  // namespace tessera
