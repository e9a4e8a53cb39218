// Shared and circular scans of real queries (query_execution/query_manager.h, scheduler/foreman.h): work orders are
// taken by block key out of another query's plan, a scan that starts while another runs begins at its block and
// still reads every block once, a query cancelled in the middle of a shared scan leaves the other one correct,
// and concurrent sessions sharing scans get the answers they get alone.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "scheduler/execution_query.h"
#include "tests/engine/test_database.h"

namespace tessera {
namespace {

constexpr int kWorkers = 2;
constexpr int kFactBlocks = 12;

class SharedScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("shared_scan_test_", getpid());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_ / "db");  // kWorkers workers
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    // Every COPY appends one block: `fact` has kFactBlocks blocks of distinct rows, `dim` one.
    std::string load = "CREATE TABLE fact (x BIGINT, g BIGINT, d BIGINT); CREATE TABLE dim (k BIGINT, name VARCHAR);";
    for (int i = 0; i < kFactBlocks; ++i) {
      const std::filesystem::path file = directory_ / absl::StrCat("fact", i, ".csv");
      std::ofstream out(file);
      for (int r = 0; r < 2000; ++r) {
        const int x = i * 2000 + r;
        out << x << "," << x % 7 << "," << x % 10 << "\n";
      }
      absl::StrAppend(&load, "COPY fact FROM '", file.string(), "';");
    }
    {
      std::ofstream out(directory_ / "dim.csv");
      for (int k = 0; k < 10; ++k) out << k << ",name" << k << "\n";
    }
    absl::StrAppend(&load, "COPY dim FROM '", (directory_ / "dim.csv").string(), "';");
    Session session(database_.get());
    absl::StatusOr<QueryResult> loaded = session.Execute(load);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
  }

  void TearDown() override {
    database_.reset();
    std::filesystem::remove_all(directory_);
  }

  std::unique_ptr<ExecutionQuery> Plan(const std::string& sql, QueryId id) {
    return PlanTestQuery(*database_, sql, id, kWorkers);
  }

  static void RunTask(ExecutionQuery& query, std::unique_ptr<WorkOrderTask> task) {
    task->Run(WorkerContext{0, -1, 0});
    query.OnWorkOrderFinished(WorkOrderCompletion{query.query_id(), task->operator_id(), 0, 0, 0, task->rows()});
  }

  // Runs the rest of the query one work order at a time; returns the block keys of its scan work orders.
  static std::vector<uint64_t> RunToEnd(ExecutionQuery& query) {
    std::vector<uint64_t> keys;
    while (!query.IsFinished()) {
      std::unique_ptr<WorkOrderTask> task = query.NextWorkOrder();
      if (task == nullptr) {
        ADD_FAILURE() << "unfinished query without a ready work order";
        break;
      }
      if (task->shared_scan_key() != 0) keys.push_back(task->shared_scan_key());
      RunTask(query, std::move(task));
    }
    EXPECT_TRUE(query.manager().status().ok()) << query.manager().status();
    return keys;
  }

  static int64_t SingleValue(const ExecutionQuery& query) {
    const TemporaryRelation& relation = *query.manager().result();
    EXPECT_EQ(relation.block_count(), 1u);
    return relation.block(0).GetValue(0, 0, relation.schema()[0].type).AsInt64();
  }

  std::filesystem::path directory_;
  std::unique_ptr<Database> database_;
};

TEST_F(SharedScanTest, AnotherQuerysWorkOrderOnTheSameBlockIsTakenByItsKey) {
  std::unique_ptr<ExecutionQuery> first = Plan("SELECT count(*) FROM fact WHERE g < 3", 1);
  std::unique_ptr<ExecutionQuery> second = Plan("SELECT sum(x) FROM fact WHERE d = 4", 2);
  std::set<uint64_t> keys;
  // Every work order of `first` on a block takes `second`'s on the same block along, as the Foreman does.
  while (!first->IsFinished()) {
    std::unique_ptr<WorkOrderTask> task = first->NextWorkOrder();
    ASSERT_NE(task, nullptr);
    const uint64_t key = task->shared_scan_key();
    if (key != 0) {
      EXPECT_TRUE(keys.insert(key).second) << "block read twice";
      std::unique_ptr<WorkOrderTask> along = second->TakeSharedScanWorkOrder(key);
      ASSERT_NE(along, nullptr);
      EXPECT_EQ(along->shared_scan_key(), key);
      along->set_shared(true);
      RunTask(*second, std::move(along));
    }
    RunTask(*first, std::move(task));
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(kFactBlocks));
  EXPECT_TRUE(RunToEnd(*second).empty());  // every scan work order was taken along
  EXPECT_EQ(second->TakeSharedScanWorkOrder(*keys.begin()), nullptr);

  // The answers are those of the queries run alone.
  int64_t count = 0, sum = 0;
  for (int x = 0; x < kFactBlocks * 2000; ++x) {
    count += x % 7 < 3 ? 1 : 0;
    sum += x % 10 == 4 ? x : 0;
  }
  EXPECT_EQ(SingleValue(*first), count);
  EXPECT_EQ(SingleValue(*second), sum);
  int64_t shared = 0;
  for (const OperatorStatus& status : second->manager().Progress()) shared += status.shared;
  EXPECT_EQ(shared, kFactBlocks);
}

TEST_F(SharedScanTest, CancellingOneQueryOfASharedScanLeavesTheOtherCorrectAndEveryBlockReadOnce) {
  std::unique_ptr<ExecutionQuery> cancelled = Plan("SELECT count(*) FROM fact WHERE g < 3", 1);
  std::unique_ptr<ExecutionQuery> survivor =
      Plan("SELECT name, sum(x) FROM fact, dim WHERE d = k AND g = 2 GROUP BY name ORDER BY name", 2);
  std::multiset<uint64_t> survivor_keys;
  // Five blocks shared, as the Foreman runs them: the leader's work order, then the one taken along.
  auto run_shared_block = [&](bool cancel_in_between) {
    std::unique_ptr<WorkOrderTask> task = cancelled->NextWorkOrder();
    ASSERT_NE(task, nullptr);
    while (task->shared_scan_key() == 0) {  // work orders that read no base-table block
      RunTask(*cancelled, std::move(task));
      task = cancelled->NextWorkOrder();
      ASSERT_NE(task, nullptr);
    }
    std::unique_ptr<WorkOrderTask> along = survivor->TakeSharedScanWorkOrder(task->shared_scan_key());
    while (along == nullptr) {  // the survivor's hash table is built first; then it takes its scan work orders
      std::unique_ptr<WorkOrderTask> own = survivor->NextWorkOrder();
      ASSERT_NE(own, nullptr);
      if (own->shared_scan_key() != 0) survivor_keys.insert(own->shared_scan_key());
      RunTask(*survivor, std::move(own));
      along = survivor->TakeSharedScanWorkOrder(task->shared_scan_key());
    }
    survivor_keys.insert(along->shared_scan_key());
    task->set_shared(true);
    along->set_shared(true, /*rode_along=*/true);
    if (cancel_in_between) cancelled->Cancel();  // the leader's work order is already handed out: it still runs
    RunTask(*cancelled, std::move(task));
    RunTask(*survivor, std::move(along));
  };
  for (int i = 0; i < 5; ++i) run_shared_block(false);
  run_shared_block(true);
  EXPECT_TRUE(cancelled->IsFinished());
  EXPECT_EQ(cancelled->NextWorkOrder(), nullptr);
  EXPECT_EQ(cancelled->TakeSharedScanWorkOrder(*survivor_keys.begin()), nullptr);

  for (uint64_t key : RunToEnd(*survivor)) survivor_keys.insert(key);
  // Every block of `fact` exactly once (the others are the dimension's).
  const std::vector<uint64_t> fact_keys = RunToEnd(*Plan("SELECT count(*) FROM fact", 3));
  ASSERT_EQ(fact_keys.size(), static_cast<size_t>(kFactBlocks));
  for (uint64_t key : fact_keys) EXPECT_EQ(survivor_keys.count(key), 1u) << key;
  // The survivor's answer is its answer alone.
  Session session(database_.get());
  absl::StatusOr<QueryResult> alone =
      session.Execute("SELECT name, sum(x) FROM fact, dim WHERE d = k AND g = 2 GROUP BY name ORDER BY name");
  ASSERT_TRUE(alone.ok()) << alone.status();
  const TemporaryRelation& result = *survivor->manager().result();
  std::vector<std::vector<Value>> rows;
  for (uint32_t b = 0; b < result.block_count(); ++b) {
    for (uint32_t r = 0; r < result.block(b).row_count(); ++r) {
      rows.push_back({result.block(b).GetValue(0, r, result.schema()[0].type),
                      result.block(b).GetValue(1, r, result.schema()[1].type)});
    }
  }
  EXPECT_EQ(rows, alone->rows);
}

TEST_F(SharedScanTest, AScanStartingWhileAnotherRunsBeginsAtItsBlockAndReadsEveryBlockOnce) {
  std::unique_ptr<ExecutionQuery> running = Plan("SELECT count(*) FROM fact", 1);
  std::vector<uint64_t> running_keys;
  for (int i = 0; i < 5; ++i) {
    std::unique_ptr<WorkOrderTask> task = running->NextWorkOrder();
    ASSERT_NE(task, nullptr);
    running_keys.push_back(task->shared_scan_key());
    RunTask(*running, std::move(task));
  }
  // Arrives while `running` is at its fifth block: starts there and wraps around.
  std::unique_ptr<ExecutionQuery> arriving = Plan("SELECT max(x) FROM fact", 2);
  std::vector<uint64_t> arriving_keys = RunToEnd(*arriving);
  ASSERT_EQ(arriving_keys.size(), static_cast<size_t>(kFactBlocks));
  EXPECT_EQ(arriving_keys.front(), running_keys.back());
  std::vector<uint64_t> rest = RunToEnd(*running);
  running_keys.insert(running_keys.end(), rest.begin(), rest.end());
  EXPECT_EQ(std::set<uint64_t>(arriving_keys.begin(), arriving_keys.end()),
            std::set<uint64_t>(running_keys.begin(), running_keys.end()));
  EXPECT_EQ(std::set<uint64_t>(arriving_keys.begin(), arriving_keys.end()).size(), static_cast<size_t>(kFactBlocks));
  EXPECT_EQ(SingleValue(*arriving), kFactBlocks * 2000 - 1);

  // Once no scan of the table runs, a new one reads in storage order again.
  std::unique_ptr<ExecutionQuery> alone = Plan("SELECT count(*) FROM fact", 3);
  EXPECT_EQ(RunToEnd(*alone).front(), running_keys.front());
}

TEST_F(SharedScanTest, ConcurrentSessionsSharingScansGetTheirAnswersAlone) {
  const std::vector<std::string> queries = {
      "SELECT g, count(*), sum(x) FROM fact WHERE d < 5 GROUP BY g ORDER BY g",
      "SELECT name, sum(x) FROM fact, dim WHERE d = k AND g = 2 GROUP BY name ORDER BY name",
      "SELECT count(*) FROM fact WHERE x % 13 = 1",
      "SELECT d, max(x), min(x) FROM fact GROUP BY d ORDER BY d",
  };
  std::map<std::string, std::vector<std::vector<Value>>> alone;
  {
    Session session(database_.get());
    for (const std::string& sql : queries) {
      absl::StatusOr<QueryResult> result = session.Execute(sql);
      ASSERT_TRUE(result.ok()) << result.status();
      alone[sql] = result->rows;
    }
  }
  for (const std::string mode : {"full", "batch"}) {
    std::vector<std::thread> threads;
    std::atomic<int> mismatches{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        Session session(database_.get());
        if (!session.Execute(absl::StrCat("SET scan_sharing = '", mode, "'")).ok()) mismatches++;
        for (int round = 0; round < 10; ++round) {
          const std::string& sql = queries[(t + round) % queries.size()];
          absl::StatusOr<QueryResult> result = session.Execute(sql);
          if (!result.ok() || result->rows != alone[sql]) mismatches++;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(mismatches.load(), 0) << mode;
  }
}

TEST_F(SharedScanTest, ScanSharingSettingIsChecked) {
  Session session(database_.get());
  EXPECT_TRUE(session.Execute("SET scan_sharing = 'full'").ok());
  absl::StatusOr<QueryResult> bad = session.Execute("SET scan_sharing = 'sometimes'");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("off, full or batch"), std::string::npos);
}

}  // namespace
}  // namespace tessera
