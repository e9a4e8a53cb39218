// Foreman mechanism: completion, cancellation, pool resizing, progress, shutdown, the work-order log.
#include "scheduler/foreman.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "tests/scheduler/foreman_test_util.h"

namespace tessera {
namespace {

void ExpectEachWorkOrderRanOnce(const SyntheticQuery& query, const SyntheticQueryOptions& options) {
  for (int op = 0; op < static_cast<int>(options.operators.size()); ++op) {
    for (int64_t i = 0; i < options.operators[op].work_orders; ++i) {
      ASSERT_EQ(query.executions(op, i), 1) << "query " << query.query_id() << " operator " << op << " #" << i;
    }
  }
}

TEST(ForemanTest, RunsEveryWorkOrderOfConcurrentQueriesExactlyOnce) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2));
  std::vector<SyntheticQueryOptions> specs;
  specs.push_back(SimpleSyntheticQuery(1, 3000, 0));      // empty work orders
  specs.push_back(SimpleSyntheticQuery(2, 400, 20'000));  // 20 us each
  SyntheticQueryOptions dag;                              // build -> probe (blocking) with a pipelined agg
  dag.query_id = 3;
  dag.operators = {{"build", 50, 5'000, false, false, 0, 100},
                   {"probe", 200, 5'000, true, false, 0, 10},
                   {"aggregate", 20, 1'000, false, false, 0, 1},
                   {"merge", 5, 1'000, true, true, 0, 1}};
  specs.push_back(dag);
  specs.push_back(SimpleSyntheticQuery(4, 1000, 1'000, /*priority=*/3));
  std::vector<std::shared_ptr<SyntheticQuery>> queries;
  std::vector<QueryHandle> handles;
  for (const auto& spec : specs) {
    queries.push_back(std::make_shared<SyntheticQuery>(spec));
    handles.push_back(SubmitOrDie(*foreman, queries.back()));
  }
  for (size_t i = 0; i < queries.size(); ++i) {
    const QueryOutcome& outcome = handles[i].Wait();
    EXPECT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_EQ(outcome.query_id, specs[i].query_id);
    EXPECT_EQ(outcome.work_orders_executed, queries[i]->total_work_orders());
    EXPECT_EQ(outcome.work_orders_skipped, 0);
    EXPECT_DOUBLE_EQ(outcome.final_progress.fraction_done, 1.0);
    EXPECT_LE(outcome.submit_ns, outcome.first_dispatch_ns);
    EXPECT_LE(outcome.first_dispatch_ns, outcome.finish_ns);
    EXPECT_GT(outcome.learning.records, 0);
    for (const OperatorProgress& op : outcome.final_progress.operators) EXPECT_EQ(op.state, OperatorState::kDone);
    ExpectEachWorkOrderRanOnce(*queries[i], specs[i]);
  }
  EXPECT_GE(handles[1].Wait().busy_ns, 400 * 20'000);
  absl::StatusOr<ForemanStats> stats = foreman->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->active_queries, 0);
  EXPECT_EQ(stats->executed, 3000 + 400 + 275 + 1000);
  EXPECT_EQ(stats->dispatched, stats->executed);
  EXPECT_EQ(stats->workers, 2);
  EXPECT_EQ(stats->policy, "fair");
}

TEST(ForemanTest, QueryWithoutWorkCompletesAtOnce) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(1));
  QueryHandle handle = SubmitOrDie(*foreman, std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(9, 0, 0)));
  const QueryOutcome& outcome = handle.Wait();
  EXPECT_TRUE(outcome.status.ok());
  EXPECT_EQ(outcome.work_orders_executed, 0);
  EXPECT_EQ(outcome.first_dispatch_ns, -1);
}

TEST(ForemanTest, RejectsADuplicateActiveQueryId) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(1));
  auto first = std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(5, 200, 10'000));
  QueryHandle handle = SubmitOrDie(*foreman, first);
  absl::StatusOr<QueryHandle> duplicate =
      foreman->Submit(std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(5, 1, 0)));
  EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(handle.Wait().status.ok());
  // Once the handle has completed, the id is free again.
  QueryHandle again = SubmitOrDie(*foreman, std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(5, 1, 0)));
  EXPECT_TRUE(again.Wait().status.ok());
  EXPECT_EQ(foreman->Submit(nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ForemanTest, CancelStopsTheQueryAndLeavesOthersUntouched) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2));
  SyntheticQueryOptions big_spec = SimpleSyntheticQuery(1, 1'000'000, 10'000);  // ~10 s of work: never finishes
  SyntheticQueryOptions small_spec = SimpleSyntheticQuery(2, 2000, 10'000);
  auto big = std::make_shared<SyntheticQuery>(big_spec);
  auto small = std::make_shared<SyntheticQuery>(small_spec);
  QueryHandle big_handle = SubmitOrDie(*foreman, big);
  QueryHandle small_handle = SubmitOrDie(*foreman, small);
  ASSERT_TRUE(WaitUntil([&] { return big->finished() >= 100; }));
  ASSERT_TRUE(foreman->Cancel(1).ok());

  const QueryOutcome& cancelled = big_handle.Wait();
  EXPECT_EQ(cancelled.status.code(), absl::StatusCode::kCancelled);
  const int64_t issued_at_end = big->issued();
  EXPECT_LT(issued_at_end, big_spec.operators[0].work_orders);
  EXPECT_EQ(cancelled.work_orders_executed + cancelled.work_orders_skipped, issued_at_end);
  EXPECT_EQ(cancelled.work_orders_executed, big->finished());
  EXPECT_TRUE(cancelled.final_progress.cancelled);
  for (int64_t i = 0; i < issued_at_end; ++i) ASSERT_LE(big->executions(0, i), 1);
  for (int64_t i = issued_at_end; i < issued_at_end + 1000; ++i) ASSERT_EQ(big->executions(0, i), 0);
  EXPECT_EQ(foreman->Cancel(1).code(), absl::StatusCode::kNotFound);

  const QueryOutcome& other = small_handle.Wait();
  EXPECT_TRUE(other.status.ok()) << other.status;
  ExpectEachWorkOrderRanOnce(*small, small_spec);
  EXPECT_EQ(big->issued(), issued_at_end);  // nothing dispatched after the cancellation completed
  EXPECT_EQ(foreman->Cancel(77).code(), absl::StatusCode::kNotFound);
}

TEST(ForemanTest, GrowingAndShrinkingThePoolUnderLoadLosesNothing) {
  ForemanOptions options = TestForemanOptions(2);
  options.pool.max_workers = 8;
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  SyntheticQueryOptions spec = SimpleSyntheticQuery(1, 20000, 5'000);
  auto query = std::make_shared<SyntheticQuery>(spec);
  QueryHandle handle = SubmitOrDie(*foreman, query);
  int64_t mark = 0;
  for (int size : {4, 1, 3, 1, 5, 2}) {
    ASSERT_TRUE(foreman->ResizePool(size).ok());
    mark += 1500;
    WaitUntil([&] { return query->finished() >= mark || handle.done(); });
  }
  const QueryOutcome& outcome = handle.Wait();
  ASSERT_TRUE(outcome.status.ok());
  EXPECT_EQ(outcome.work_orders_executed, 20000);
  ExpectEachWorkOrderRanOnce(*query, spec);
  // Workers beyond the initial two did run work orders.
  std::vector<int64_t> by_worker = query->finished_by_worker();
  EXPECT_GT(by_worker.size(), 2u);
  ASSERT_TRUE(WaitUntil([&] { return foreman->GetStats()->workers == 2; }));
  EXPECT_EQ(foreman->ResizePool(0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(foreman->ResizePool(9).code(), absl::StatusCode::kInvalidArgument);
}

// The scan is far longer than any stall of the test thread on a loaded machine (100,000 work orders of 50 us, about
// 2.5 s on two workers; it flaked with 400, about 10 ms, when the query finished before GetProgress), and the query
// is cancelled once its progress has been read.
TEST(ForemanTest, ReportsProgressWhileRunning) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2));
  SyntheticQueryOptions spec;
  spec.query_id = 4;
  spec.operators = {{"scan", 100'000, 50'000, false, false, 0, 0}, {"sort", 10, 10'000, true, false, 0, 0}};
  auto query = std::make_shared<SyntheticQuery>(spec);
  QueryHandle handle = SubmitOrDie(*foreman, query);
  ASSERT_TRUE(WaitUntil([&] { return query->finished() >= 10; }));
  absl::StatusOr<QueryProgress> progress = foreman->GetProgress(4);
  ASSERT_TRUE(progress.ok()) << progress.status();
  EXPECT_EQ(progress->query_id, 4);
  ASSERT_EQ(progress->operators.size(), 2u);
  EXPECT_GE(progress->finished, 10);
  EXPECT_LE(progress->finished, progress->issued);
  EXPECT_GT(progress->fraction_done, 0);
  EXPECT_LT(progress->fraction_done, 1);
  EXPECT_EQ(progress->operators[1].state, OperatorState::kWaiting);  // blocked behind the scan
  EXPECT_EQ(progress->operators[0].estimated_total, 100'000);
  ASSERT_TRUE(foreman->Cancel(4).ok());
  EXPECT_EQ(handle.Wait().status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(foreman->GetProgress(4).status().code(), absl::StatusCode::kNotFound);
}

TEST(ForemanTest, StopAbortsActiveQueriesAndRejectsNewOnes) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2));
  auto query = std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(1, 1'000'000, 10'000));
  QueryHandle handle = SubmitOrDie(*foreman, query);
  ASSERT_TRUE(WaitUntil([&] { return query->finished() >= 10; }));
  foreman->Stop();
  EXPECT_TRUE(handle.done());
  EXPECT_EQ(handle.Wait().status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(foreman->Submit(std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(2, 1, 0))).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(foreman->GetStats().status().code(), absl::StatusCode::kFailedPrecondition);
  foreman->Stop();  // idempotent
}

TEST(ForemanTest, WritesOneLogLinePerExecutedWorkOrder) {
  ForemanOptions options = TestForemanOptions(2);
  options.work_order_log_path = ::testing::TempDir() + "foreman_test_log_" + std::to_string(getpid()) + ".jsonl";
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  QueryHandle a = SubmitOrDie(*foreman, std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(10, 300, 1'000)));
  QueryHandle b = SubmitOrDie(*foreman, std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(11, 200, 1'000)));
  a.Wait();
  b.Wait();
  foreman->Stop();  // closes the log
  std::ifstream in(options.work_order_log_path);
  std::map<std::string, int> per_query;
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    ASSERT_EQ(line.front(), '{');
    ASSERT_NE(line.find("\"start_ns\":"), std::string::npos);
    per_query[line.substr(0, line.find(','))]++;
  }
  EXPECT_EQ(lines, 500);
  EXPECT_EQ(per_query["{\"query\":10"], 300);
  EXPECT_EQ(per_query["{\"query\":11"], 200);
  std::remove(options.work_order_log_path.c_str());
}

TEST(ForemanTest, PrefersWorkersOnTheWorkOrdersNode) {
  ForemanOptions options = TestForemanOptions(4);
  options.pool.cpus = {0, 1};                              // workers on CPUs 0, 1, 0, 1 (unpinned) ...
  options.pool.node_of_cpu = [](int cpu) { return cpu; };  // ... so two per fake node
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  SyntheticQueryOptions spec;
  spec.query_id = 1;
  spec.operators = {{"scan", 4000, 5'000, false, false, /*preferred_nodes=*/2, 0}};
  auto query = std::make_shared<SyntheticQuery>(spec);
  ASSERT_TRUE(SubmitOrDie(*foreman, query).Wait().status.ok());
  const int64_t local = query->executed_on_preferred_node();
  const int64_t remote = query->executed_elsewhere();
  EXPECT_EQ(local + remote, 4000);
  // Random placement would give one half; a remote worker is used only when the local ones are full.
  EXPECT_GT(local, remote * 2 / 3) << "local " << local << " remote " << remote;
  ExpectEachWorkOrderRanOnce(*query, spec);
}

TEST(ForemanTest, TimeSlicesGiveAWorkerRunsOfOneQueryAndStillRunEveryWorkOrderOnce) {
  ForemanOptions options = TestForemanOptions(1);
  options.dispatch_run_ns = 2'000'000;  // 2 ms: runs of up to 100 work orders of 20 us
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  auto clock = std::make_shared<std::atomic<int64_t>>(0);
  std::vector<std::shared_ptr<SyntheticQuery>> queries;
  std::vector<QueryHandle> handles;
  std::vector<SyntheticQueryOptions> specs;
  for (QueryId id = 1; id <= 3; ++id) {
    specs.push_back(SimpleSyntheticQuery(id, 600, 20'000));
    specs.back().dispatch_clock = clock;
    queries.push_back(std::make_shared<SyntheticQuery>(specs.back()));
    handles.push_back(SubmitOrDie(*foreman, queries.back()));
  }
  for (size_t i = 0; i < queries.size(); ++i) {
    EXPECT_TRUE(handles[i].Wait().status.ok());
    ExpectEachWorkOrderRanOnce(*queries[i], specs[i]);
  }
  // Once predictions exist, a query's dispatches come in runs: far fewer switches between queries than
  // dispatches (one work order per pick switches about two times in three with three queries).
  std::vector<int> owner(3 * 600, -1);
  for (size_t q = 0; q < queries.size(); ++q) {
    for (int64_t sequence : queries[q]->dispatch_sequence()) owner[sequence] = static_cast<int>(q);
  }
  int switches = 0;
  for (size_t s = 1; s < owner.size(); ++s) switches += owner[s] != owner[s - 1] ? 1 : 0;
  EXPECT_LT(switches, 3 * 600 / 5);
}

}  // namespace
}  // namespace tessera
