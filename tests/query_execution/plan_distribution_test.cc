#include "query_execution/plan_distribution.h"

#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "optimizer/partial_aggregation.h"
#include "query_execution/plan_fragment.h"

namespace tessera {
namespace {

namespace lp = optimizer;

// lineitem and orders partitioned on the order key (BIGINT and INTEGER: co-located), customer on its key, nation
// replicated.
class PlanDistributionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("tessera_plan_distribution_test_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
    catalog_ = *Catalog::Open(directory_, false);
    AddTable("lineitem", {{"l_orderkey", Type::BigInt(), false, {}}, {"l_quantity", Type::Decimal(15, 2), false, {}}},
             0);
    AddTable("orders", {{"o_orderkey", Type::Integer(), false, {}}, {"o_custkey", Type::Integer(), false, {}}}, 0);
    AddTable("customer", {{"c_custkey", Type::Integer(), false, {}}, {"c_name", Type::Varchar(25), false, {}}}, 0);
    AddTable("nation", {{"n_nationkey", Type::Integer(), false, {}}, {"n_name", Type::Char(25), false, {}}}, -1);
  }
  void TearDown() override {
    catalog_.reset();
    std::filesystem::remove_all(directory_);
  }

  void AddTable(const std::string& name, std::vector<ColumnSchema> columns, int partition_column) {
    TableDescriptor table;
    table.name = name;
    table.columns = std::move(columns);
    table.partition_column = partition_column;
    ASSERT_TRUE(catalog_->CreateTable(std::move(table)).ok());
  }

  lp::LogicalOperatorPtr Scan(const std::string& name, std::vector<int> columns = {0, 1}) {
    auto scan = std::make_unique<lp::TableScan>();
    scan->table = *catalog_->GetTable(name);
    scan->alias = name;
    scan->columns = std::move(columns);
    scan->RecomputeOutput();
    return scan;
  }

  // left.key = right.key (the right key cast to the left's type when they differ).
  static lp::LogicalOperatorPtr Join(lp::JoinType type, lp::LogicalOperatorPtr left, int left_key,
                                     lp::LogicalOperatorPtr right, int right_key) {
    const Type left_type = left->output()[left_key].type;
    const Type right_type = right->output()[right_key].type;
    auto join = lp::MakeJoin(type, std::move(left), std::move(right));
    join->left_keys.push_back(MakeColumn(left_key, left_type));
    std::unique_ptr<BoundExpression> key = MakeColumn(right_key, right_type);
    if (right_type != left_type) key = MakeCast(std::move(key), left_type);
    join->right_keys.push_back(std::move(key));
    join->RecomputeOutput();
    return join;
  }

  static lp::AggregateCall Call(AggregateKind function, int column, Type argument, Type result, bool distinct = false) {
    lp::AggregateCall call;
    call.function = function;
    call.distinct = distinct;
    call.argument = MakeColumn(column, argument);
    call.result_type = result;
    call.name = lp::AggregateFunctionName(function);
    return call;
  }

  static std::unique_ptr<lp::Aggregate> Aggregate(lp::LogicalOperatorPtr input, std::vector<int> keys,
                                                  std::vector<lp::AggregateCall> calls) {
    auto aggregate = std::make_unique<lp::Aggregate>();
    for (int k : keys) {
      aggregate->group_by.push_back(MakeColumn(k, input->output()[k].type));
      aggregate->group_names.push_back(input->output()[k].name);
    }
    aggregate->aggregates = std::move(calls);
    aggregate->children.push_back(std::move(input));
    aggregate->RecomputeOutput();
    return aggregate;
  }

  static std::vector<lp::AggregateCall> One(lp::AggregateCall call) {
    std::vector<lp::AggregateCall> calls;
    calls.push_back(std::move(call));
    return calls;
  }

  std::filesystem::path directory_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(PlanDistributionTest, PartitionedSubtreesAndTheirPlacingColumns) {
  PlanDistribution distribution;
  lp::LogicalOperatorPtr lineitem = Scan("lineitem");
  EXPECT_EQ(distribution.Of(*lineitem).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Of(*lineitem).key_columns, std::vector<int>{0});
  lp::LogicalOperatorPtr quantities = Scan("lineitem", {1});
  EXPECT_EQ(distribution.Of(*quantities).placement, Placement::kPartitioned);
  EXPECT_TRUE(distribution.Of(*quantities).key_columns.empty());
  lp::LogicalOperatorPtr nation = Scan("nation");
  EXPECT_EQ(distribution.Of(*nation).placement, Placement::kReplicated);

  // Co-located: both sides partitioned on the order key (BIGINT = CAST(INTEGER AS BIGINT)); both keys place.
  lp::LogicalOperatorPtr colocated = Join(lp::JoinType::kInner, Scan("lineitem"), 0, Scan("orders"), 0);
  EXPECT_EQ(distribution.Of(*colocated).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Of(*colocated).key_columns, (std::vector<int>{0, 2}));
  // orders.o_custkey = customer.c_custkey: partitioned on other columns, the master joins the gathered sides.
  lp::LogicalOperatorPtr apart = Join(lp::JoinType::kInner, Scan("orders"), 1, Scan("customer"), 0);
  EXPECT_EQ(distribution.Of(*apart).placement, Placement::kMaster);
  std::vector<lp::LogicalOperatorPtr> kept;
  // With a replicated table: partitioned for every join type that keeps each probe row on its rank.
  for (lp::JoinType type : {lp::JoinType::kInner, lp::JoinType::kLeftOuter, lp::JoinType::kSemi, lp::JoinType::kAnti}) {
    kept.push_back(Join(type, Scan("orders"), 1, Scan("nation"), 0));  // analysed nodes must outlive the analysis
    EXPECT_EQ(distribution.Of(*kept.back()).placement, Placement::kPartitioned) << lp::JoinTypeName(type);
  }
  // Replicated rows without a partner would come back from every rank.
  lp::LogicalOperatorPtr outer = Join(lp::JoinType::kLeftOuter, Scan("nation"), 0, Scan("customer"), 0);
  EXPECT_EQ(distribution.Of(*outer).placement, Placement::kMaster);
  lp::LogicalOperatorPtr inner = Join(lp::JoinType::kInner, Scan("nation"), 0, Scan("customer"), 0);
  EXPECT_EQ(distribution.Of(*inner).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Of(*inner).key_columns, std::vector<int>{2});
  // A LIMIT keeps rows that may differ between ranks.
  auto limit = std::make_unique<lp::Limit>();
  limit->limit = 3;
  limit->children.push_back(Scan("nation"));
  limit->RecomputeOutput();
  EXPECT_EQ(distribution.Of(*limit).placement, Placement::kMaster);
}

TEST_F(PlanDistributionTest, AggregationsAreWholeOnTheRanksOrSplit) {
  PlanDistribution distribution;
  const Type quantity = Type::Decimal(15, 2);
  // Grouped by the partition key: every group on one rank.
  lp::LogicalOperatorPtr by_order = distribution.SplitAggregates(
      Aggregate(Scan("lineitem"), {0}, One(Call(AggregateKind::kSum, 1, quantity, Type::Decimal(38, 2)))));
  ASSERT_EQ(by_order->kind(), lp::LogicalOperatorKind::kAggregate);
  EXPECT_EQ(distribution.Of(*by_order).placement, Placement::kPartitioned);
  // Grouped by something else: partial groups on the ranks, merged on the master (no estimates: no split).
  lp::LogicalOperatorPtr by_quantity = distribution.SplitAggregates(
      Aggregate(Scan("lineitem"), {1}, One(Call(AggregateKind::kAvg, 1, quantity, Type::Double()))));
  ASSERT_EQ(by_quantity->kind(), lp::LogicalOperatorKind::kProject);  // AVG's final value from SUM and COUNT
  const lp::LogicalOperator& merge = *by_quantity->children[0];
  EXPECT_EQ(distribution.Of(*by_quantity).placement, Placement::kMaster);
  EXPECT_TRUE(distribution.MergesOnMaster(merge));
  EXPECT_EQ(distribution.Of(*merge.children[0]).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Repartition(*merge.children[0]), -1);
  // COUNT(DISTINCT x) does not decompose: the ranks ship the input.
  lp::LogicalOperatorPtr distinct = distribution.SplitAggregates(Aggregate(
      Scan("lineitem"), {}, One(Call(AggregateKind::kCount, 1, quantity, Type::BigInt(), /*distinct=*/true))));
  ASSERT_EQ(distinct->kind(), lp::LogicalOperatorKind::kAggregate);
  EXPECT_EQ(distribution.Of(*distinct).placement, Placement::kMaster);
  // Replicated input: no exchange at all.
  lp::LogicalOperatorPtr replicated = distribution.SplitAggregates(
      Aggregate(Scan("nation"), {}, One(Call(AggregateKind::kMin, 1, Type::Char(25), Type::Char(25)))));
  ASSERT_EQ(replicated->kind(), lp::LogicalOperatorKind::kAggregate);
  EXPECT_EQ(distribution.Of(*replicated).placement, Placement::kReplicated);
}

// Many groups: every rank merges the partials its group key places there, and what reads the merge on that key
// stays on the ranks (TPC-H Q13: customer LEFT OUTER JOIN orders counted per customer).
TEST_F(PlanDistributionTest, LargeGroupAggregationsMergeOnTheRanks) {
  double groups = PlanDistribution::kDefaultSplitGroups;
  PlanDistribution distribution(2, [&groups](const lp::LogicalOperator&) { return groups; });
  const auto counted = [this] {
    return Aggregate(Scan("orders"), {1}, One(Call(AggregateKind::kCount, 0, Type::Integer(), Type::BigInt())));
  };
  lp::LogicalOperatorPtr plan =
      distribution.SplitAggregates(Join(lp::JoinType::kLeftOuter, Scan("customer"), 0, counted(), 0));
  const lp::LogicalOperator& merged = *plan->children[1];
  ASSERT_EQ(merged.kind(), lp::LogicalOperatorKind::kProject);  // COUNT's final value: COALESCE(SUM, 0)
  const lp::LogicalOperator& merge = *merged.children[0];
  const lp::LogicalOperator& partial = *merge.children[0];
  EXPECT_FALSE(distribution.MergesOnMaster(merge));
  EXPECT_EQ(distribution.Of(merge).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Of(merge).key_columns, std::vector<int>{0});
  EXPECT_EQ(distribution.Repartition(partial), 0);  // the partials split by o_custkey
  EXPECT_EQ(distribution.Repartition(*partial.children[0]), -1);
  EXPECT_EQ(distribution.Of(*plan).placement, Placement::kPartitioned);  // co-located with customer
  // Fewer groups: merged on the master; the join above is not co-located any more, and broadcasting the merged
  // counts (14 bytes a row to the other rank) moves fewer bytes than gathering half of customer (35 bytes a row).
  groups = PlanDistribution::kDefaultSplitGroups / 2;
  lp::LogicalOperatorPtr small =
      distribution.SplitAggregates(Join(lp::JoinType::kLeftOuter, Scan("customer"), 0, counted(), 0));
  EXPECT_TRUE(distribution.MergesOnMaster(*small->children[1]->children[0]));
  EXPECT_EQ(distribution.Repartition(*small->children[1]->children[0]->children[0]), -1);
  EXPECT_EQ(distribution.Of(*small).placement, Placement::kPartitioned);
  EXPECT_TRUE(distribution.Broadcast(*small->children[1]));
  // A group key that places no rows (DECIMAL) cannot split the partials.
  groups = PlanDistribution::kDefaultSplitGroups * 10;
  lp::LogicalOperatorPtr by_quantity = distribution.SplitAggregates(
      Aggregate(Scan("lineitem"), {1}, One(Call(AggregateKind::kCount, 0, Type::BigInt(), Type::BigInt()))));
  EXPECT_TRUE(distribution.MergesOnMaster(*by_quantity->children[0]));
  // The threshold is the server's setting (--distributed-split-groups): with a higher one, 10x the default groups
  // are still merged on the master, and as many groups as the setting are merged on the ranks.
  PlanDistribution higher(
      2, [&groups](const lp::LogicalOperator&) { return groups; }, nullptr,
      PlanDistribution::kDefaultSplitGroups * 100);
  lp::LogicalOperatorPtr below = higher.SplitAggregates(counted());
  EXPECT_TRUE(higher.MergesOnMaster(*below->children[0]));
  groups = PlanDistribution::kDefaultSplitGroups * 100;
  lp::LogicalOperatorPtr at = higher.SplitAggregates(counted());
  EXPECT_FALSE(higher.MergesOnMaster(*at->children[0]));
  EXPECT_EQ(higher.Repartition(*at->children[0]->children[0]), 0);
  // The key with the most distinct values splits; with too few for the ranks to share, the master merges.
  AddTable("partsupp",
           {{"ps_partkey", Type::Integer(), false, {}},
            {"ps_suppkey", Type::Integer(), false, {}},
            {"ps_availqty", Type::Integer(), false, {}}},
           0);
  double values = 1000;
  PlanDistribution by_values(
      2, [](const lp::LogicalOperator&) { return 1e6; },
      [&values](const BoundExpression& key, const lp::LogicalOperator&) { return key.column_index == 1 ? values : 3; });
  const auto two_keys = [this] {
    return Aggregate(Scan("partsupp", {1, 2}), {0, 1},
                     One(Call(AggregateKind::kCount, 0, Type::Integer(), Type::BigInt())));
  };
  lp::LogicalOperatorPtr split = by_values.SplitAggregates(two_keys());
  EXPECT_EQ(by_values.Repartition(*split->children[0]->children[0]), 1);  // ps_availqty
  EXPECT_EQ(by_values.Of(*split).key_columns, std::vector<int>{1});
  values = PlanDistribution::kMinSplitKeyValuesPerRank;
  lp::LogicalOperatorPtr few = by_values.SplitAggregates(two_keys());
  EXPECT_TRUE(by_values.MergesOnMaster(*few->children[0]));
}

// A shared aggregate (AggregateSharing: TPC-H Q15's revenue, read by the join with supplier and under MAX) is
// merged on the master, and its merges keep the sharing, so that the plan builder gathers and merges it once;
// merged on the ranks, each copy would be a fragment of its own. With more groups than the master holds, the
// copies are merged on the ranks as any other aggregate, not shared.
TEST_F(PlanDistributionTest, SharedAggregatesMergeOnceOnTheMaster) {
  double groups = PlanDistribution::kDefaultSplitGroups;  // many enough for a merge on the ranks
  const auto copy = [this](int shared_result, int lip_filter) {
    auto counted = Aggregate(Scan("orders"), {1}, One(Call(AggregateKind::kCount, 0, Type::Integer(), Type::BigInt())));
    counted->shared_result = shared_result;
    if (shared_result >= 0) counted->shared_lip_filters = {lip_filter};
    return counted;
  };
  const auto copies = [&copy](int shared_result) {
    return Join(lp::JoinType::kInner, copy(shared_result, 4), 0, copy(shared_result, 7), 0);
  };
  const auto merge_of = [](const lp::LogicalOperator& merged) -> const lp::Aggregate& {
    EXPECT_EQ(merged.kind(), lp::LogicalOperatorKind::kProject);
    return merged.children[0]->As<lp::Aggregate>();
  };
  PlanDistribution distribution(2, [&groups](const lp::LogicalOperator&) { return groups; });
  lp::LogicalOperatorPtr shared = distribution.SplitAggregates(copies(3));
  for (int side = 0; side < 2; ++side) {
    const lp::Aggregate& merge = merge_of(*shared->children[side]);
    EXPECT_TRUE(distribution.MergesOnMaster(merge)) << side;
    EXPECT_EQ(distribution.Repartition(*merge.children[0]), -1) << side;
    EXPECT_EQ(distribution.Of(*merge.children[0]).placement, Placement::kPartitioned) << side;
    EXPECT_EQ(merge.shared_result, 3) << side;
    EXPECT_EQ(merge.shared_lip_filters, std::vector<int>{side == 0 ? 4 : 7}) << side;
    EXPECT_EQ(merge.children[0]->As<lp::Aggregate>().shared_result, -1) << side;  // the partial is not shared
  }
  EXPECT_EQ(distribution.Of(*shared).placement, Placement::kMaster);
  // The same copies unshared: merged on the ranks by o_custkey, the join of the two co-located.
  lp::LogicalOperatorPtr unshared = distribution.SplitAggregates(copies(-1));
  for (int side = 0; side < 2; ++side) {
    const lp::Aggregate& merge = merge_of(*unshared->children[side]);
    EXPECT_FALSE(distribution.MergesOnMaster(merge)) << side;
    EXPECT_EQ(distribution.Repartition(*merge.children[0]), 0) << side;
    EXPECT_EQ(merge.shared_result, -1) << side;
  }
  EXPECT_EQ(distribution.Of(*unshared).placement, Placement::kPartitioned);
  // More groups than the master holds: merged on the ranks, each copy its own.
  groups = PlanDistribution::kMaxSharedMergeGroups * 2;
  lp::LogicalOperatorPtr large = distribution.SplitAggregates(copies(3));
  for (int side = 0; side < 2; ++side) {
    const lp::Aggregate& merge = merge_of(*large->children[side]);
    EXPECT_FALSE(distribution.MergesOnMaster(merge)) << side;
    EXPECT_EQ(distribution.Repartition(*merge.children[0]), 0) << side;
    EXPECT_EQ(merge.shared_result, -1) << side;
  }
  // Few groups: merged on the master with or without sharing, and shared.
  groups = PlanDistribution::kDefaultSplitGroups / 10;
  lp::LogicalOperatorPtr few = distribution.SplitAggregates(copies(3));
  EXPECT_TRUE(distribution.MergesOnMaster(merge_of(*few->children[0])));
  EXPECT_EQ(merge_of(*few->children[1]).shared_result, 3);
}

TEST_F(PlanDistributionTest, MergedPartialsHaveTheAggregatesColumns) {
  const Type quantity = Type::Decimal(15, 2);
  std::vector<lp::AggregateCall> calls;
  calls.push_back(Call(AggregateKind::kSum, 1, quantity, Type::Decimal(38, 2)));
  calls.push_back(Call(AggregateKind::kAvg, 1, quantity, Type::Double()));
  calls.push_back(Call(AggregateKind::kCount, 1, quantity, Type::BigInt()));
  calls.push_back(Call(AggregateKind::kMax, 1, quantity, quantity));
  auto aggregate = Aggregate(Scan("lineitem"), {0}, std::move(calls));
  lp::LogicalOperatorPtr partial = lp::MakePartialAggregate(*aggregate);
  EXPECT_EQ(partial->output_width(), 1 + 5);  // AVG travels as SUM and COUNT
  lp::LogicalOperatorPtr merged = lp::MergePartialAggregates(*aggregate, std::move(partial));
  ASSERT_EQ(merged->output_width(), aggregate->output_width());
  for (int c = 0; c < aggregate->output_width(); ++c) {
    EXPECT_EQ(merged->output()[c].type, aggregate->output()[c].type) << c;
    EXPECT_EQ(merged->output()[c].name, aggregate->output()[c].name) << c;
  }
}

TEST_F(PlanDistributionTest, FragmentsRoundTripAndKeepOnlyTheirOwnLipFilters) {
  lp::LogicalOperatorPtr orders = Scan("orders");
  orders->As<lp::TableScan>().filter =
      MakeComparison(ComparisonOp::kLess, MakeColumn(1, Type::Integer()), MakeConstant(Value::Integer(100)));
  orders->As<lp::TableScan>().lip_filters.push_back({7, {1}, "n_nationkey"});  // published below
  orders->As<lp::TableScan>().lip_filters.push_back({9, {0}, "elsewhere"});    // published outside
  lp::LogicalOperatorPtr join = Join(lp::JoinType::kSemi, std::move(orders), 1, Scan("nation"), 0);
  join->As<lp::Join>().lip_filter_id = 7;
  join->As<lp::Join>().lip_filter_key_pairs = {0};
  auto aggregate = Aggregate(std::move(join), {1}, One(Call(AggregateKind::kMin, 0, Type::Integer(), Type::Integer())));
  absl::StatusOr<std::string> message = EncodePlanFragment(*aggregate);
  std::vector<const lp::LogicalOperator*> inputs;
  ASSERT_TRUE(message.ok()) << message.status();
  absl::StatusOr<lp::LogicalOperatorPtr> decoded = DecodePlanFragment(*message, *catalog_, &inputs);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const lp::TableScan& scan = (*decoded)->children[0]->children[0]->As<lp::TableScan>();
  ASSERT_EQ(scan.lip_filters.size(), 1u);
  EXPECT_EQ(scan.lip_filters[0].filter_id, 7);
  aggregate->children[0]->children[0]->As<lp::TableScan>().lip_filters.pop_back();
  EXPECT_EQ((*decoded)->ToString(), aggregate->ToString());

  for (size_t cut = 0; cut < message->size(); cut += 3) {
    EXPECT_EQ(DecodePlanFragment(message->substr(0, cut), *catalog_, &inputs).status().code(),
              absl::StatusCode::kDataLoss)
        << cut;
  }
  EXPECT_EQ(DecodePlanFragment(*message + "x", *catalog_, &inputs).status().code(), absl::StatusCode::kDataLoss);
}

// Large inputs (no broadcast): a join on a key that places neither or only one side, and an aggregate that does
// not decompose grouped by such a key, run on the ranks over hash-split inputs.
TEST_F(PlanDistributionTest, HashSplitsForJoinsAndAggregatesOnAnotherKey) {
  PlanDistribution distribution(2, [](const lp::LogicalOperator&) { return 1e7; });
  // orders.o_custkey = customer.c_custkey: customer is placed by its key, orders is split by o_custkey.
  lp::LogicalOperatorPtr apart = Join(lp::JoinType::kInner, Scan("orders"), 1, Scan("customer"), 0);
  EXPECT_EQ(distribution.Of(*apart).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Of(*apart).key_columns, (std::vector<int>{1, 2}));
  EXPECT_EQ(distribution.Repartition(*apart->children[0]), 1);
  EXPECT_EQ(distribution.Repartition(*apart->children[1]), -1);
  // A self-join on o_custkey: both sides split.
  lp::LogicalOperatorPtr both = Join(lp::JoinType::kSemi, Scan("orders"), 1, Scan("orders"), 1);
  EXPECT_EQ(distribution.Of(*both).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Of(*both).key_columns, std::vector<int>{1});
  EXPECT_EQ(distribution.Repartition(*both->children[0]), 1);
  EXPECT_EQ(distribution.Repartition(*both->children[1]), 1);
  // Keys that cannot place rows (DECIMAL) and full outer joins stay on the master.
  lp::LogicalOperatorPtr decimal = Join(lp::JoinType::kInner, Scan("lineitem"), 1, Scan("lineitem"), 1);
  EXPECT_EQ(distribution.Of(*decimal).placement, Placement::kMaster);
  EXPECT_EQ(distribution.Repartition(*decimal->children[0]), -1);
  lp::LogicalOperatorPtr full = Join(lp::JoinType::kFullOuter, Scan("orders"), 1, Scan("customer"), 0);
  EXPECT_EQ(distribution.Of(*full).placement, Placement::kMaster);
  // COUNT(DISTINCT) grouped by o_custkey: orders split by it, each group whole on one rank.
  auto distinct =
      Aggregate(Scan("orders"), {1}, One(Call(AggregateKind::kCount, 0, Type::Integer(), Type::BigInt(), true)));
  EXPECT_EQ(distribution.Of(*distinct).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Of(*distinct).key_columns, std::vector<int>{0});
  EXPECT_EQ(distribution.Repartition(*distinct->children[0]), 1);
  // Decomposable calls keep the partial aggregation (LargeGroupAggregationsMergeOnTheRanks): the input is not
  // split, the partials are.
  lp::LogicalOperatorPtr counted = distribution.SplitAggregates(
      Aggregate(Scan("orders"), {1}, One(Call(AggregateKind::kCount, 0, Type::Integer(), Type::BigInt()))));
  const lp::LogicalOperator& partial = *counted->children[0]->children[0];
  EXPECT_EQ(distribution.Of(*counted).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Repartition(partial), 0);
  EXPECT_EQ(distribution.Repartition(*partial.children[0]), -1);
  // An input that reads a split input itself is split again (a nested split, TPC-H Q5 / Q10): orders split by
  // o_custkey to meet customer, then the joined rows split by o_orderkey to meet lineitem, which stays placed by
  // l_orderkey; every row moves once instead of the joined rows being gathered and broadcast.
  lp::LogicalOperatorPtr nested = Join(lp::JoinType::kInner, Scan("lineitem"), 0,
                                       Join(lp::JoinType::kInner, Scan("orders"), 1, Scan("customer"), 0), 0);
  EXPECT_EQ(distribution.Of(*nested).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Of(*nested).key_columns, (std::vector<int>{0, 2}));
  EXPECT_FALSE(distribution.Broadcast(*nested->children[1]));
  EXPECT_EQ(distribution.Repartition(*nested->children[1]), 0);
  EXPECT_EQ(distribution.Repartition(*nested->children[1]->children[0]), 1);
  EXPECT_EQ(distribution.Repartition(*nested->children[0]), -1);
  // Both sides of a join on o_custkey read split inputs: each is split again.
  lp::LogicalOperatorPtr twice = Join(
      lp::JoinType::kInner, Join(lp::JoinType::kInner, Scan("orders"), 1, Scan("customer"), 0), 0, Scan("orders"), 1);
  EXPECT_EQ(distribution.Of(*twice).placement, Placement::kPartitioned);
  EXPECT_EQ(distribution.Repartition(*twice->children[0]), 0);
  EXPECT_EQ(distribution.Repartition(*twice->children[1]), 1);

  // The fragment above the split reads it as an exchange placeholder that carries the exchange's tag.
  absl::StatusOr<std::string> message = EncodePlanFragment(*apart, {apart->children[0].get()}, {4242});
  ASSERT_TRUE(message.ok()) << message.status();
  std::vector<const lp::LogicalOperator*> inputs;
  std::vector<int> tags;
  absl::StatusOr<lp::LogicalOperatorPtr> decoded = DecodePlanFragment(*message, *catalog_, &inputs, &tags);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(tags, std::vector<int>{4242});
  EXPECT_EQ(inputs[0], (*decoded)->children[0].get());
  EXPECT_EQ((*decoded)->output().size(), apart->output().size());
}

// The join rule compares the estimated bytes each way moves (docs/decisions/0011, "The join rule"): orders
// (2 INTEGER columns, 10 bytes a row) joins customer (INTEGER and VARCHAR(25), 35 bytes a row) on the customer key,
// which places customer: broadcasting customer moves 1.5 x its bytes with 2 ranks (gathered, then sent), splitting
// orders by o_custkey half of orders' bytes.
TEST_F(PlanDistributionTest, JoinsBroadcastOrSplitByTheBytesTheyMove) {
  double orders_rows = 1e6;
  double customer_rows = 1e5;
  const auto rows = [&](const lp::LogicalOperator& node) {
    if (node.kind() != lp::LogicalOperatorKind::kTableScan) return 1e7;
    return node.As<lp::TableScan>().alias == "orders" ? orders_rows : customer_rows;
  };
  // 1.5 x 3.5 MB to broadcast, 5 MB to split: the split (rows alone, 3 x 1e5 < 1e6, would have broadcast).
  PlanDistribution split(2, rows);
  lp::LogicalOperatorPtr join = Join(lp::JoinType::kInner, Scan("orders"), 1, Scan("customer"), 0);
  EXPECT_EQ(split.Of(*join).placement, Placement::kPartitioned);
  EXPECT_FALSE(split.Broadcast(*join->children[1]));
  EXPECT_EQ(split.Repartition(*join->children[0]), 1);
  // Half the customers: 2.6 MB to broadcast, less than the split's 5 MB.
  customer_rows = 5e4;
  PlanDistribution broadcast(2, rows);
  join = Join(lp::JoinType::kInner, Scan("orders"), 1, Scan("customer"), 0);
  EXPECT_EQ(broadcast.Of(*join).placement, Placement::kPartitioned);
  EXPECT_EQ(broadcast.Of(*join).key_columns, std::vector<int>{0});  // orders stays placed by o_orderkey
  EXPECT_TRUE(broadcast.Broadcast(*join->children[1]));
  EXPECT_EQ(broadcast.Repartition(*join->children[0]), -1);
  // Without a split (a full outer join cannot be split or broadcast; a build side computed on the master cannot be
  // split): the broadcast against gathering the probe side. A LIMIT keeps customer on the master.
  const auto limited_customer = [this] {
    auto limit = std::make_unique<lp::Limit>();
    limit->limit = 1000000;
    limit->children.push_back(Scan("customer"));
    limit->RecomputeOutput();
    return limit;
  };
  const auto master_rows = [&](const lp::LogicalOperator& node) {
    return node.kind() == lp::LogicalOperatorKind::kTableScan && node.As<lp::TableScan>().alias == "orders"
               ? orders_rows
               : customer_rows;
  };
  customer_rows = 1.4e5;  // 4.9 MB sent to the other rank, 5 MB of orders gathered otherwise
  PlanDistribution small(2, master_rows);
  join = Join(lp::JoinType::kInner, Scan("orders"), 1, limited_customer(), 0);
  EXPECT_EQ(small.Of(*join).placement, Placement::kPartitioned);
  EXPECT_TRUE(small.Broadcast(*join->children[1]));
  customer_rows = 1.6e5;  // 5.6 MB
  PlanDistribution large(2, master_rows);
  join = Join(lp::JoinType::kInner, Scan("orders"), 1, limited_customer(), 0);
  EXPECT_EQ(large.Of(*join).placement, Placement::kMaster);
  EXPECT_FALSE(large.Broadcast(*join->children[1]));
  // Without a split, more than kMaxBroadcastRows build rows are still broadcast when that moves fewer bytes than
  // gathering the probe side (the master would build the same table): 2 M customers (70 MB) against 100 M orders
  // (500 MB gathered).
  orders_rows = 1e8;
  customer_rows = 2e6;
  PlanDistribution many(2, master_rows);
  join = Join(lp::JoinType::kInner, Scan("orders"), 1, limited_customer(), 0);
  EXPECT_EQ(many.Of(*join).placement, Placement::kPartitioned);
  EXPECT_TRUE(many.Broadcast(*join->children[1]));
  // With a split possible the cap holds: 2 M customers are not broadcast, the split (500 MB of orders) is taken
  // although the broadcast would move less (105 MB).
  PlanDistribution capped(2, rows);
  join = Join(lp::JoinType::kInner, Scan("orders"), 1, Scan("customer"), 0);
  EXPECT_EQ(capped.Of(*join).placement, Placement::kPartitioned);
  EXPECT_FALSE(capped.Broadcast(*join->children[1]));
  EXPECT_EQ(capped.Repartition(*join->children[0]), 1);
}

// A hash split's fragment receives no broadcast inputs: a side that reads a broadcast build side is not split,
// so the join above it broadcasts that side (or runs on the master).
TEST_F(PlanDistributionTest, AnInputThatReadsABroadcastIsNotSplit) {
  const auto rows = [](const lp::LogicalOperator& node) {
    if (node.kind() == lp::LogicalOperatorKind::kTableScan) {
      const std::string& table = node.As<lp::TableScan>().alias;
      return table == "lineitem" ? 1e8 : table == "orders" ? 1e6 : 1e4;
    }
    return node.kind() == lp::LogicalOperatorKind::kLimit ? 1e4 : 1e6;
  };
  PlanDistribution distribution(2, rows);
  auto limit = std::make_unique<lp::Limit>();
  limit->limit = 10000;
  limit->children.push_back(Scan("customer"));
  limit->RecomputeOutput();
  // orders with the first 10,000 customers (on the master, broadcast), joined with lineitem on o_custkey (not
  // orders' placing column): the joined orders would have to be split, but they read a broadcast.
  lp::LogicalOperatorPtr join = Join(lp::JoinType::kInner, Scan("lineitem"), 0,
                                     Join(lp::JoinType::kInner, Scan("orders"), 1, std::move(limit), 0), 1);
  EXPECT_EQ(distribution.Of(*join).placement, Placement::kPartitioned);
  EXPECT_TRUE(distribution.Broadcast(*join->children[1]->children[1]));
  EXPECT_EQ(distribution.Repartition(*join->children[1]), -1);
  EXPECT_TRUE(distribution.Broadcast(*join->children[1]));
}

TEST_F(PlanDistributionTest, ARankWithAnotherSchemaRefusesTheFragment) {
  absl::StatusOr<std::string> message = EncodePlanFragment(*Scan("orders"));
  std::vector<const lp::LogicalOperator*> inputs;
  ASSERT_TRUE(message.ok());
  ASSERT_TRUE(catalog_->DropTable("orders").ok());
  EXPECT_EQ(DecodePlanFragment(*message, *catalog_, &inputs).status().code(), absl::StatusCode::kNotFound);
  AddTable("orders", {{"o_orderkey", Type::BigInt(), false, {}}, {"o_custkey", Type::Integer(), false, {}}}, 0);
  absl::StatusOr<lp::LogicalOperatorPtr> decoded = DecodePlanFragment(*message, *catalog_, &inputs);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(decoded.status().message().find("another schema"), std::string::npos);
}

TEST_F(PlanDistributionTest, KindsNeverOnTheRanksAreNotEncoded) {
  auto series = std::make_unique<lp::Series>();
  series->column_name = "n";
  series->count = 3;
  series->RecomputeOutput();
  EXPECT_EQ(EncodePlanFragment(*series).status().code(), absl::StatusCode::kUnimplemented);
}

// ORDER BY ... LIMIT over a partitioned input: each rank keeps its own top `limit + offset` rows, which the
// master's Sort and Limit read gathered; the rank's copy travels in a plan fragment.
TEST_F(PlanDistributionTest, TopNOnTheRanksBelowTheMastersTopN) {
  PlanDistribution distribution;
  const auto top_n = [](lp::LogicalOperatorPtr input, bool ascending, std::optional<int64_t> count, int64_t offset) {
    auto sort = std::make_unique<lp::Sort>();
    const Type type = input->output()[1].type;
    sort->keys.push_back({MakeColumn(1, type), ascending, !ascending});
    sort->children.push_back(std::move(input));
    sort->RecomputeOutput();
    auto limit = std::make_unique<lp::Limit>();
    limit->limit = count;
    limit->offset = offset;
    limit->children.push_back(std::move(sort));
    limit->RecomputeOutput();
    return limit;
  };
  // Per-order sums: grouped by the partition key, every rank's groups are final.
  auto sums =
      Aggregate(Scan("lineitem"), {0}, One(Call(AggregateKind::kSum, 1, Type::Decimal(15, 2), Type::Decimal(38, 2))));
  const lp::LogicalOperator* groups = sums.get();
  lp::LogicalOperatorPtr plan =
      distribution.TopNOnRanks(distribution.SplitAggregates(top_n(std::move(sums), /*ascending=*/false, 10, 5)));
  ASSERT_EQ(plan->kind(), lp::LogicalOperatorKind::kLimit);
  EXPECT_EQ(distribution.Of(*plan).placement, Placement::kMaster);
  EXPECT_EQ(plan->As<lp::Limit>().limit, 10);
  EXPECT_EQ(plan->As<lp::Limit>().offset, 5);
  const lp::LogicalOperator& sort = *plan->children[0];
  ASSERT_EQ(sort.kind(), lp::LogicalOperatorKind::kSort);
  const lp::LogicalOperator& rank_limit = *sort.children[0];
  ASSERT_EQ(rank_limit.kind(), lp::LogicalOperatorKind::kLimit);
  EXPECT_EQ(rank_limit.As<lp::Limit>().limit, 15);  // limit + offset, from the first row
  EXPECT_EQ(rank_limit.As<lp::Limit>().offset, 0);
  EXPECT_EQ(distribution.Of(rank_limit).placement, Placement::kPartitioned);
  EXPECT_TRUE(distribution.Of(rank_limit).key_columns.empty());  // places no row for what reads it
  const lp::LogicalOperator& rank_sort = *rank_limit.children[0];
  ASSERT_EQ(rank_sort.kind(), lp::LogicalOperatorKind::kSort);
  ASSERT_EQ(rank_sort.As<lp::Sort>().keys.size(), 1u);
  EXPECT_FALSE(rank_sort.As<lp::Sort>().keys[0].ascending);
  EXPECT_TRUE(rank_sort.As<lp::Sort>().keys[0].nulls_first);
  EXPECT_EQ(rank_sort.children[0].get(), groups);  // the analysed input itself
  EXPECT_EQ(rank_limit.output().size(), groups->output().size());

  // The rank's copy as a fragment: its Limit and Sort survive the encoding.
  absl::StatusOr<std::string> message = EncodePlanFragment(rank_limit);
  ASSERT_TRUE(message.ok()) << message.status();
  std::vector<const lp::LogicalOperator*> inputs;
  absl::StatusOr<lp::LogicalOperatorPtr> decoded = DecodePlanFragment(*message, *catalog_, &inputs);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ((*decoded)->ToString(), rank_limit.ToString());
  for (size_t cut = 0; cut < message->size(); cut += 3) {
    EXPECT_EQ(DecodePlanFragment(message->substr(0, cut), *catalog_, &inputs).status().code(),
              absl::StatusCode::kDataLoss)
        << cut;
  }

  // Rows of a partitioned scan, no aggregation: the same.
  lp::LogicalOperatorPtr rows = distribution.TopNOnRanks(top_n(Scan("orders"), /*ascending=*/true, 3, 0));
  EXPECT_EQ(distribution.Of(*rows->children[0]->children[0]).placement, Placement::kPartitioned);
  EXPECT_EQ(rows->children[0]->children[0]->As<lp::Limit>().limit, 3);

  // Left alone: a replicated input, a merge of partials on the master (its rows are complete only there), an
  // OFFSET without LIMIT, a LIMIT without ORDER BY.
  lp::LogicalOperatorPtr replicated = distribution.TopNOnRanks(top_n(Scan("nation"), true, 3, 0));
  EXPECT_EQ(replicated->children[0]->children[0]->kind(), lp::LogicalOperatorKind::kTableScan);
  lp::LogicalOperatorPtr merged = distribution.TopNOnRanks(distribution.SplitAggregates(
      top_n(Aggregate(Scan("lineitem"), {1}, One(Call(AggregateKind::kCount, 0, Type::BigInt(), Type::BigInt()))), true,
            3, 0)));
  ASSERT_EQ(merged->children[0]->children[0]->kind(), lp::LogicalOperatorKind::kProject);  // the merge's
  EXPECT_TRUE(distribution.MergesOnMaster(*merged->children[0]->children[0]->children[0]));
  lp::LogicalOperatorPtr offset_only = distribution.TopNOnRanks(top_n(Scan("orders"), true, std::nullopt, 4));
  EXPECT_EQ(offset_only->children[0]->children[0]->kind(), lp::LogicalOperatorKind::kTableScan);
  auto plain = std::make_unique<lp::Limit>();
  plain->limit = 3;
  plain->children.push_back(Scan("orders"));
  plain->RecomputeOutput();
  lp::LogicalOperatorPtr unsorted = distribution.TopNOnRanks(std::move(plain));
  EXPECT_EQ(unsorted->children[0]->kind(), lp::LogicalOperatorKind::kTableScan);
  EXPECT_EQ(distribution.Of(*unsorted).placement, Placement::kMaster);
}

// TPC-H Q10's shape: per-customer sums over lineitem joined with orders and customer (a nested split). Alone, the
// aggregation's partials are merged on the master; under an ORDER BY ... LIMIT they are split by the customer key
// (a nested split of partials) and merged on the ranks, and each rank's top rows are all that is gathered.
TEST_F(PlanDistributionTest, PartialsUnderATopNAreMergedOnTheRanks) {
  const auto per_customer = [this] {
    lp::LogicalOperatorPtr nested = Join(lp::JoinType::kInner, Scan("lineitem"), 0,
                                         Join(lp::JoinType::kInner, Scan("orders"), 1, Scan("customer"), 0), 0);
    // Output: l_orderkey, l_quantity, o_orderkey, o_custkey, c_custkey, c_name; grouped by c_custkey.
    return Aggregate(std::move(nested), {4},
                     One(Call(AggregateKind::kSum, 1, Type::Decimal(15, 2), Type::Decimal(38, 2))));
  };
  PlanDistribution alone(2, [](const lp::LogicalOperator&) { return 1e7; });
  lp::LogicalOperatorPtr merged = alone.TopNOnRanks(alone.SplitAggregates(per_customer()));
  EXPECT_TRUE(alone.MergesOnMaster(*merged->children[0]));

  PlanDistribution distribution(2, [](const lp::LogicalOperator&) { return 1e7; });
  auto sort = std::make_unique<lp::Sort>();
  sort->keys.push_back({MakeColumn(1, Type::Decimal(38, 2)), false, true});
  sort->children.push_back(per_customer());
  sort->RecomputeOutput();
  auto limit = std::make_unique<lp::Limit>();
  limit->limit = 20;
  limit->children.push_back(std::move(sort));
  limit->RecomputeOutput();
  lp::LogicalOperatorPtr plan = distribution.TopNOnRanks(distribution.SplitAggregates(std::move(limit)));
  const lp::LogicalOperator& rank_limit = *plan->children[0]->children[0];
  ASSERT_EQ(rank_limit.kind(), lp::LogicalOperatorKind::kLimit);
  EXPECT_EQ(distribution.Of(rank_limit).placement, Placement::kPartitioned);
  // Limit -> Sort -> Project -> merging Aggregate -> partial Aggregate -> the nested join.
  const lp::LogicalOperator& merge = *rank_limit.children[0]->children[0]->children[0];
  ASSERT_EQ(merge.kind(), lp::LogicalOperatorKind::kAggregate);
  EXPECT_FALSE(distribution.MergesOnMaster(merge));
  EXPECT_EQ(distribution.Of(merge).key_columns, std::vector<int>{0});
  const lp::LogicalOperator& partial = *merge.children[0];
  EXPECT_EQ(distribution.Repartition(partial), 0);  // by c_custkey, its group key
  const lp::LogicalOperator& join = *partial.children[0];
  EXPECT_EQ(distribution.Repartition(*join.children[1]), 0);               // orders with customer, by o_orderkey
  EXPECT_EQ(distribution.Repartition(*join.children[1]->children[0]), 1);  // orders, by o_custkey
}

}  // namespace
}  // namespace tessera
