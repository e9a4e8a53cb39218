#include "query_execution/memory_estimate.h"

#include "gtest/gtest.h"
#include "optimizer/cardinality_estimator.h"
#include "optimizer/logical_plan.h"
#include "query_execution/plan_builder.h"
#include "storage/buffer_pool.h"
#include "storage/topology.h"

namespace tessera {
namespace {

namespace lp = optimizer;
using Structure = OperatorEstimate::Structure;

// An operator without work orders or output: only its place in the DAG and its estimate matter here.
class PlaceholderOperator : public RelationalOperator {
 public:
  explicit PlaceholderOperator(std::string name) : RelationalOperator(std::move(name)) {}
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>*) override { return true; }
};

OperatorEstimate Estimate(Structure structure, int64_t structure_bytes, int64_t output_bytes, bool retains = false) {
  OperatorEstimate estimate;
  estimate.structure = structure;
  estimate.structure_bytes = structure_bytes;
  estimate.output_bytes = output_bytes;
  estimate.retains_inputs = retains;
  return estimate;
}

TEST(MemoryEstimateTest, RowBytesFollowTheDocumentedWidths) {
  EXPECT_EQ(EstimatedRowBytes({Type::Integer()}), 1 + 4);
  EXPECT_EQ(EstimatedRowBytes({Type::BigInt(), Type::Double()}), 2 * (1 + 8));
  EXPECT_EQ(EstimatedRowBytes({Type::Char(10)}), 1 + 10 + 4);
  EXPECT_EQ(EstimatedRowBytes({Type::Varchar(10)}), 1 + 10 + 4);
  EXPECT_EQ(EstimatedRowBytes({Type::Varchar(200)}), 1 + 32 + 4);
  EXPECT_EQ(EstimatedRowBytes({Type::Varchar()}), 1 + 32 + 4);
  EXPECT_EQ(EstimatedBytes(2.5, 10), 30);
  EXPECT_EQ(EstimatedBytes(0, 10), 0);
  EXPECT_EQ(EstimatedBytes(1e30, 10), int64_t{9'000'000'000'000'000'000});
}

// build select (0) -> hash build (1) =blocking=> probe (2) -> aggregation (3) =blocking=> sort (4)
TEST(MemoryEstimateTest, MinIsTheLargestPipelineWithItsBlockingInputsAndMaxIsEverything) {
  ExecutionDag dag;
  for (const char* name : {"Select", "HashJoinBuild", "HashJoinProbe", "Aggregation", "Sort"}) {
    dag.AddOperator(std::make_unique<PlaceholderOperator>(name));
  }
  dag.set_estimate(0, Estimate(Structure::kNone, 0, 100));
  dag.set_estimate(1, Estimate(Structure::kHashTable, 40, 0, /*retains=*/true));
  dag.set_estimate(2, Estimate(Structure::kNone, 0, 1000));
  dag.set_estimate(3, Estimate(Structure::kAggregationTable, 30, 20));
  dag.set_estimate(4, Estimate(Structure::kSortBuffer, 5, 20));
  dag.AddEdge(0, 1, 0, /*pipelining=*/true);
  dag.AddEdge(1, 2, 1, /*pipelining=*/false);
  dag.AddEdge(2, 3, 0, /*pipelining=*/true);
  dag.AddEdge(3, 4, 0, /*pipelining=*/false);
  dag.set_result_operator(4);

  QueryMemoryEstimate memory = EstimateQueryMemory(dag);
  EXPECT_EQ(memory.max_bytes, 100 + 40 + 1000 + 50 + 25);
  // The probe pipeline {2, 3} holds its own 1050 bytes plus the hash table it probes (40) and the build relation
  // the table references (100); the build pipeline needs 140, the sort 25 + its input 50.
  EXPECT_EQ(memory.min_bytes, 1050 + 40 + 100);

  // Without the reference from the hash table to its rows, the build relation is not needed by the probe.
  dag.set_estimate(1, Estimate(Structure::kHashTable, 40, 0, /*retains=*/false));
  EXPECT_EQ(EstimateQueryMemory(dag).min_bytes, 1050 + 40);
}

TEST(MemoryEstimateTest, AllPipelinedOperatorsCountTogether) {
  ExecutionDag dag;
  for (int i = 0; i < 3; ++i) dag.AddOperator(std::make_unique<PlaceholderOperator>("Select"));
  for (int i = 0; i < 3; ++i) dag.set_estimate(i, Estimate(Structure::kNone, 0, 10 * (i + 1)));
  dag.AddEdge(0, 1, 0, true);
  dag.AddEdge(1, 2, 0, true);
  QueryMemoryEstimate memory = EstimateQueryMemory(dag);
  EXPECT_EQ(memory.min_bytes, 60);
  EXPECT_EQ(memory.max_bytes, 60);
}

// An operator with a work-order estimate whose reads of its input free each block (RelationalOperator::
// ReleasesInputBlocks).
class StreamingOperator : public PlaceholderOperator {
 public:
  StreamingOperator(int64_t work_orders, bool releases)
      : PlaceholderOperator("Probe"), work_orders_(work_orders), releases_(releases) {}
  int64_t EstimatedWorkOrders() const override { return work_orders_; }
  bool ReleasesInputBlocks(int) const override { return releases_; }

 private:
  const int64_t work_orders_;
  const bool releases_;
};

// scan-probe (0, 640 work orders) -> probe (1, fed by 0) -> aggregation (2) =blocking=> sort (3): 0's and 1's
// outputs are streamed, each counted as kStreamedWorkOrdersResident (64) of its 640 work orders' output; the
// aggregation's output is read by a blocking edge and counts whole; so does everything once edges are blocking.
TEST(MemoryEstimateTest, StreamedOutputsCountTheirWindow) {
  ExecutionDag dag;
  dag.AddOperator(std::make_unique<StreamingOperator>(640, true));
  dag.AddOperator(std::make_unique<StreamingOperator>(-1, true));
  dag.AddOperator(std::make_unique<StreamingOperator>(-1, true));
  dag.AddOperator(std::make_unique<PlaceholderOperator>("Sort"));
  dag.set_estimate(0, Estimate(Structure::kNone, 0, 64'000));
  dag.set_estimate(1, Estimate(Structure::kNone, 0, 32'000));
  dag.set_estimate(2, Estimate(Structure::kAggregationTable, 500, 300));
  dag.set_estimate(3, Estimate(Structure::kSortBuffer, 7, 300));
  dag.AddEdge(0, 1, 0, true);
  dag.AddEdge(1, 2, 0, true);
  dag.AddEdge(2, 3, 0, false);
  dag.set_result_operator(3);
  QueryMemoryEstimate memory = EstimateQueryMemory(dag);
  EXPECT_EQ(memory.max_bytes, 6'400 + 3'200 + 800 + 307);
  EXPECT_EQ(memory.min_bytes, 6'400 + 3'200 + 800);

  // A consumer that keeps its input (a hash build, a sort) makes the whole output count.
  ExecutionDag keeps;
  keeps.AddOperator(std::make_unique<StreamingOperator>(640, false));
  keeps.AddOperator(std::make_unique<StreamingOperator>(-1, false));
  keeps.set_estimate(0, Estimate(Structure::kNone, 0, 64'000));
  keeps.set_estimate(1, Estimate(Structure::kNone, 0, 10));
  keeps.AddEdge(0, 1, 0, true);
  keeps.set_result_operator(1);
  EXPECT_EQ(EstimateQueryMemory(keeps).max_bytes, 64'010);

  dag.MakeAllEdgesBlocking();
  EXPECT_EQ(dag.memory_estimate().max_bytes, 64'000 + 32'000 + 800 + 307);
}

TEST(MemoryEstimateTest, HugeEstimatesSaturateInsteadOfOverflowing) {
  ExecutionDag dag;
  for (int i = 0; i < 3; ++i) {
    dag.AddOperator(std::make_unique<PlaceholderOperator>("Select"));
    dag.set_estimate(i, Estimate(Structure::kSortBuffer, EstimatedBytes(1e30, 8), EstimatedBytes(1e30, 8)));
  }
  dag.AddEdge(0, 1, 0, true);
  QueryMemoryEstimate memory = EstimateQueryMemory(dag);
  EXPECT_EQ(memory.max_bytes, OperatorEstimate::kMaxEstimateBytes);
  EXPECT_EQ(memory.min_bytes, OperatorEstimate::kMaxEstimateBytes);
}

std::shared_ptr<const TableDescriptor> Table(const std::string& name, int64_t rows, std::vector<ColumnSchema> columns) {
  auto table = std::make_shared<TableDescriptor>();
  table->name = name;
  table->row_count = rows;
  table->columns = std::move(columns);
  return table;
}

std::unique_ptr<lp::TableScan> Scan(std::shared_ptr<const TableDescriptor> table) {
  auto scan = std::make_unique<lp::TableScan>();
  scan->table = table;
  scan->alias = table->name;
  for (size_t c = 0; c < table->columns.size(); ++c) scan->columns.push_back(static_cast<int>(c));
  scan->RecomputeOutput();
  return scan;
}

// SELECT f.k, count(*) FROM fact f JOIN dim d ON f.k = d.k GROUP BY f.k, planned by hand, through the plan
// builder: the estimates come from the cardinality estimator and the widths of each operator's output.
TEST(MemoryEstimateTest, PlanBuilderAttachesEstimatesToAHandMadePlan) {
  auto fact = Table("fact", 1'000'000, {{"k", Type::Integer()}, {"v", Type::Double()}});
  auto dim = Table("dim", 1000, {{"k", Type::Integer()}, {"name", Type::Char(20)}});
  auto join = lp::MakeJoin(lp::JoinType::kInner, Scan(fact), Scan(dim));
  join->left_keys.push_back(MakeColumn(0, Type::Integer()));
  join->right_keys.push_back(MakeColumn(0, Type::Integer()));
  auto aggregate = std::make_unique<lp::Aggregate>();
  aggregate->group_by.push_back(MakeColumn(0, Type::Integer()));
  aggregate->group_names.push_back("k");
  lp::AggregateCall count;
  count.function = AggregateKind::kCountStar;
  count.result_type = Type::BigInt();
  count.name = "count(*)";
  aggregate->aggregates.push_back(std::move(count));
  aggregate->children.push_back(std::move(join));
  aggregate->RecomputeOutput();

  std::unique_ptr<Topology> topology = MakeFakeTopology(1, 2);
  BufferPool pool(64 << 20, topology.get());
  absl::StatusOr<std::unique_ptr<ExecutionDag>> built = BuildExecutionDag(*aggregate, /*storage=*/nullptr, &pool);
  ASSERT_TRUE(built.ok()) << built.status();
  const ExecutionDag& dag = **built;

  int build = -1, aggregation = -1, build_select = -1;
  for (int i = 0; i < dag.size(); ++i) {
    if (dag.op(i)->name() == "HashJoinBuild") build = i;
    if (dag.op(i)->name() == "HashAggregate") aggregation = i;
  }
  ASSERT_GE(build, 0);
  ASSERT_GE(aggregation, 0);
  for (const DagEdge& edge : dag.edges()) {
    if (edge.consumer == build) build_select = edge.producer;
  }
  ASSERT_GE(build_select, 0);

  // The build side is the 1000-row dimension: its rows are materialized and indexed.
  const OperatorEstimate& table = dag.estimate(build);
  EXPECT_EQ(table.structure, Structure::kHashTable);
  EXPECT_DOUBLE_EQ(table.output_rows, 1000);
  EXPECT_EQ(table.structure_bytes, 1000 * kHashEntryBytes);
  EXPECT_TRUE(table.retains_inputs);
  EXPECT_EQ(dag.estimate(build_select).output_bytes, 1000 * EstimatedRowBytes({Type::Integer(), Type::Char(20)}));
  const OperatorEstimate& groups = dag.estimate(aggregation);
  EXPECT_EQ(groups.structure, Structure::kAggregationTable);
  EXPECT_GE(groups.output_rows, 1);
  EXPECT_LE(groups.output_rows, 1000);
  EXPECT_GT(groups.structure_bytes, 0);

  const QueryMemoryEstimate& memory = dag.memory_estimate();
  EXPECT_EQ(memory.min_bytes, EstimateQueryMemory(dag).min_bytes);
  EXPECT_EQ(memory.max_bytes, EstimateQueryMemory(dag).max_bytes);
  int64_t sum = 0;
  for (int i = 0; i < dag.size(); ++i) sum += dag.estimate(i).bytes();
  EXPECT_EQ(memory.max_bytes, sum);
  // The probe pipeline needs the hash table and the build rows it references.
  EXPECT_GE(memory.min_bytes, table.bytes() + dag.estimate(build_select).bytes());
  EXPECT_LE(memory.min_bytes, memory.max_bytes);
  // The fact table is read from storage: the join's probe side costs nothing until the join's output.
  EXPECT_LT(memory.max_bytes, EstimatedBytes(1'000'000, EstimatedRowBytes({Type::Integer(), Type::Double()})));
}

// fact JOIN dim1 ON f.k = d1.k JOIN dim2 ON f.k2 = d2.k2, by hand: the second join probes the first one's output,
// so both run in one probe operator (chained inner joins). Its estimate is the top join's output alone (no
// intermediate relation is written), and it waits for both hash tables, so its pipeline needs both.
TEST(MemoryEstimateTest, ChainedInnerJoinsAreOneProbeWithTheTopJoinsOutput) {
  auto fact = Table("fact", 1'000'000, {{"k", Type::Integer()}, {"k2", Type::Integer()}, {"v", Type::Double()}});
  auto dim1 = Table("dim1", 1000, {{"k", Type::Integer()}, {"name", Type::Char(20)}});
  auto dim2 = Table("dim2", 500, {{"k2", Type::Integer()}, {"x", Type::BigInt()}});
  auto lower = lp::MakeJoin(lp::JoinType::kInner, Scan(fact), Scan(dim1));
  lower->left_keys.push_back(MakeColumn(0, Type::Integer()));
  lower->right_keys.push_back(MakeColumn(0, Type::Integer()));
  auto upper = lp::MakeJoin(lp::JoinType::kInner, std::move(lower), Scan(dim2));
  upper->left_keys.push_back(MakeColumn(1, Type::Integer()));
  upper->right_keys.push_back(MakeColumn(0, Type::Integer()));
  const double upper_rows = optimizer::CardinalityEstimator().EstimateRows(*upper);

  std::unique_ptr<Topology> topology = MakeFakeTopology(1, 2);
  BufferPool pool(64 << 20, topology.get());
  absl::StatusOr<std::unique_ptr<ExecutionDag>> built = BuildExecutionDag(*upper, /*storage=*/nullptr, &pool);
  ASSERT_TRUE(built.ok()) << built.status();
  const ExecutionDag& dag = **built;

  std::vector<int> probes, builds;
  for (int i = 0; i < dag.size(); ++i) {
    if (dag.op(i)->name() == "HashJoinProbe") probes.push_back(i);
    if (dag.op(i)->name() == "HashJoinBuild") builds.push_back(i);
  }
  ASSERT_EQ(probes.size(), 1u);
  ASSERT_EQ(builds.size(), 2u);
  const int probe = probes[0];
  EXPECT_EQ(dag.detail(probe), "2 chained INNER joins, scan fact");
  for (int build : builds) {
    bool feeds_probe = false;
    for (const DagEdge& edge : dag.edges()) {
      feeds_probe |= edge.producer == build && edge.consumer == probe && !edge.pipelining;
    }
    EXPECT_TRUE(feeds_probe) << "build #" << build;
  }
  const std::vector<Type> output_types = {Type::Integer(), Type::Integer(), Type::Double(), Type::Integer(),
                                          Type::Char(20),  Type::Integer(), Type::BigInt()};
  ASSERT_EQ(dag.op(probe)->output()->schema().size(), output_types.size());
  const OperatorEstimate& joined = dag.estimate(probe);
  EXPECT_DOUBLE_EQ(joined.output_rows, upper_rows);
  EXPECT_EQ(joined.output_bytes, EstimatedBytes(upper_rows, EstimatedRowBytes(output_types)));
  // The probe's pipeline holds both tables and the build rows they reference.
  int64_t tables = 0;
  for (int build : builds) tables += dag.estimate(build).bytes();
  EXPECT_GE(dag.memory_estimate().min_bytes, joined.bytes() + tables);
}

}  // namespace
}  // namespace tessera
