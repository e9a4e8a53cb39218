// The SRPT / IF-SRPT hints of real queries (scheduler/execution_query.h,
// QueryManager::EstimatedRemainingWorkOrders): SQL is planned into an ExecutionDag over a small database, and the ExecutionQuery is driven by hand on the test
// thread, one work order at a time, exactly through the calls the Foreman makes; the hints are read between steps.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "scheduler/execution_query.h"
#include "tests/engine/test_database.h"

namespace tessera {
namespace {

constexpr int kWorkers = 2;

// What the hints said before each work order was taken, and after the last one finished.
struct Step {
  int64_t remaining = 0;
  bool inelastic = false;
  int64_t ready_or_running = 0;
};

class ExecutionQueryHintsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("execution_query_hints_test_", getpid());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
    {
      std::ofstream out(directory_ / "rows.csv");
      for (int i = 0; i < 500; ++i) out << i << "," << i % 7 << "\n";
    }
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_ / "db");  // kWorkers workers
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    Session session(database_.get());
    // Every COPY appends one block: `fact` has kFactBlocks blocks, `dim` one.
    std::string load = "CREATE TABLE fact (x BIGINT, g BIGINT); CREATE TABLE dim (x BIGINT, g BIGINT);";
    const std::string rows = (directory_ / "rows.csv").string();
    for (int i = 0; i < kFactBlocks; ++i) absl::StrAppend(&load, "COPY fact FROM '", rows, "';");
    absl::StrAppend(&load, "COPY dim FROM '", rows, "';");
    absl::StatusOr<QueryResult> loaded = session.Execute(load);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
  }

  void TearDown() override {
    database_.reset();
    std::filesystem::remove_all(directory_);
  }

  std::unique_ptr<ExecutionQuery> Plan(const std::string& sql) { return PlanTestQuery(*database_, sql, 1, kWorkers); }

  // Runs the query to the end one work order at a time; returns the hints before every work order and at the end.
  static std::vector<Step> RunStepByStep(ExecutionQuery& query) {
    std::vector<Step> steps;
    auto record = [&] {
      steps.push_back(
          {query.EstimatedRemainingWorkOrders(), query.InInelasticPhase(), query.manager().ReadyOrRunningWorkOrders()});
    };
    while (!query.IsFinished()) {
      record();
      std::unique_ptr<WorkOrderTask> task = query.NextWorkOrder();
      if (task == nullptr) {
        ADD_FAILURE() << "unfinished query without a ready work order";
        break;
      }
      task->Run(WorkerContext{0, -1, 0});
      query.OnWorkOrderFinished(WorkOrderCompletion{query.query_id(), task->operator_id(), 0, 0, 0, task->rows()});
    }
    record();
    EXPECT_TRUE(query.manager().status().ok()) << query.manager().status();
    return steps;
  }

  static constexpr int kFactBlocks = 12;
  std::filesystem::path directory_;
  std::unique_ptr<Database> database_;
};

TEST_F(ExecutionQueryHintsTest, AggregationOverATableCountsEveryBlockAndTheFinalizeExactly) {
  std::unique_ptr<ExecutionQuery> query = Plan("SELECT count(*) FROM fact WHERE x < 400");
  std::vector<Step> steps = RunStepByStep(*query);
  // kFactBlocks update work orders and one finalize, known from the start.
  ASSERT_EQ(steps.size(), kFactBlocks + 2u);
  for (size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(steps[k].remaining, static_cast<int64_t>(steps.size() - 1 - k)) << "before work order " << k;
  }
  // All blocks are ready at once: elastic while at least two are left (2 workers); inelastic for the last block
  // and for the finalize alone.
  for (size_t k = 0; k + 1 < kFactBlocks; ++k) EXPECT_FALSE(steps[k].inelastic) << "before work order " << k;
  EXPECT_TRUE(steps[kFactBlocks - 1].inelastic);
  EXPECT_TRUE(steps[kFactBlocks].inelastic);
  EXPECT_EQ(steps[kFactBlocks].ready_or_running, 1);
  EXPECT_FALSE(steps.back().inelastic);  // finished
}

TEST_F(ExecutionQueryHintsTest, JoinAggregateSortEstimatesFedOperatorsFromTheirProducers) {
  // The aggregate reads both sides, so it stays above the join (no EagerAggregation).
  std::unique_ptr<ExecutionQuery> query = Plan(
      "SELECT dim.g, sum(fact.x + dim.g) FROM fact, dim WHERE fact.x = dim.x AND dim.g < 5 GROUP BY dim.g "
      "ORDER BY dim.g");
  const ExecutionDag& dag = query->manager().dag();
  std::vector<Step> steps = RunStepByStep(*query);
  const int64_t executed = static_cast<int64_t>(steps.size()) - 1;
  std::string trace;
  for (const Step& step : steps) absl::StrAppend(&trace, step.remaining, step.inelastic ? "i " : " ");
  SCOPED_TRACE("remaining estimate before each work order (i = inelastic): " + trace);
  SCOPED_TRACE("operators: " + std::to_string(dag.size()));
  // Select (dim, 1 block) -> hash build -> probe (fact, kFactBlocks blocks) -> aggregation -> sort. The probe
  // folds its rows into the aggregation's tables in its own work orders (fused: batch_sink.h), so the aggregation
  // issues only its finalize, and the estimate knows that from the start; it counts the aggregation's output as
  // the plan's estimate (1 block) for the sort. What it does not count before they are issued are the serial
  // tails: the hash build's finalize, the aggregation's finalize and the sort's merge, so it is the true remaining
  // count minus at most 3.
  ASSERT_EQ(dag.size(), 5);
  ASSERT_EQ(executed, 1 + 2 + kFactBlocks + 1 + 2);
  for (size_t k = 0; k < steps.size(); ++k) {
    const int64_t truth = executed - static_cast<int64_t>(k);
    EXPECT_LE(steps[k].remaining, truth) << "before work order " << k;
    EXPECT_GE(steps[k].remaining, truth - 3) << "before work order " << k;
    if (truth > 0) EXPECT_GE(steps[k].remaining, 1) << "before work order " << k;
  }
  EXPECT_EQ(steps.back().remaining, 0);
  // Inelastic at the serial start (one select work order, then the build's) and from the last probe work order
  // on; elastic while the probe has at least two blocks ready.
  EXPECT_TRUE(steps[0].inelastic);
  for (int k = 3; k < 3 + kFactBlocks - 1; ++k) EXPECT_FALSE(steps[k].inelastic) << "before work order " << k;
  // The last work order (the sort's merge) is one work order alone: inelastic.
  EXPECT_TRUE(steps[executed - 1].inelastic);
  EXPECT_EQ(steps[executed - 1].remaining, 1);
}

TEST_F(ExecutionQueryHintsTest, CancelledQueryHasNothingLeft) {
  std::unique_ptr<ExecutionQuery> query = Plan("SELECT count(*) FROM fact");
  EXPECT_EQ(query->EstimatedRemainingWorkOrders(), kFactBlocks + 1);
  query->Cancel();
  EXPECT_EQ(query->EstimatedRemainingWorkOrders(), 0);
  EXPECT_FALSE(query->InInelasticPhase());
}

}  // namespace
}  // namespace tessera
