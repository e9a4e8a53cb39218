// Shared scans in the Foreman (foreman.h): work orders of several queries on the same base-table block are
// dispatched back to back on one worker, each still its own task, charged and reported to its own query.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "scheduler/foreman.h"
#include "tests/scheduler/foreman_test_util.h"

namespace tessera {
namespace {

// A query that scans `blocks` blocks of one table, one work order per block keyed by the block; held (no ready
// work order) until Release(), so that the test can make several queries active before any is dispatched.
class ScanQuery final : public SchedulableQuery {
 public:
  ScanQuery(QueryId id, int blocks, ScanSharing sharing, int priority = 1)
      : id_(id), priority_(priority), sharing_(sharing), executions_(blocks) {
    for (int b = 0; b < blocks; ++b) ready_.push_back(b);
  }

  class Task : public WorkOrderTask {
   public:
    Task(ScanQuery* query, int block) : WorkOrderTask(0, -1, KeyOf(block)), query_(query), block_(block) {}

   protected:
    int64_t Execute(const WorkerContext&) override {
      query_->executions_[block_].fetch_add(1);
      if (shared()) query_->shared_runs_.fetch_add(1);
      return 1;
    }

   private:
    ScanQuery* query_;
    int block_;
  };

  static uint64_t KeyOf(int block) { return 1000 + static_cast<uint64_t>(block); }

  void Release() { released_.store(true); }

  QueryId query_id() const override { return id_; }
  int priority() const override { return priority_; }
  ScanSharing scan_sharing() const override { return sharing_; }
  bool HasReadyWorkOrder() const override { return released_.load() && !cancelled_ && !ready_.empty(); }
  std::unique_ptr<WorkOrderTask> NextWorkOrder() override {
    if (!HasReadyWorkOrder()) return nullptr;
    const int block = ready_.front();
    ready_.erase(ready_.begin());
    ++in_flight_;
    return std::make_unique<Task>(this, block);
  }
  std::unique_ptr<WorkOrderTask> TakeSharedScanWorkOrder(uint64_t key) override {
    if (!HasReadyWorkOrder()) return nullptr;
    for (auto it = ready_.begin(); it != ready_.end(); ++it) {
      if (KeyOf(*it) != key) continue;
      const int block = *it;
      ready_.erase(it);
      ++in_flight_;
      return std::make_unique<Task>(this, block);
    }
    return nullptr;
  }
  void OnWorkOrderFinished(const WorkOrderCompletion& completion) override {
    --in_flight_;
    if (completion.shared_block_key != 0) ++shared_completions_;
  }
  bool IsOperatorDone(int) const override { return ready_.empty() && in_flight_ == 0; }
  bool IsFinished() const override { return (cancelled_ || ready_.empty()) && in_flight_ == 0; }
  void Cancel() override { cancelled_ = true; }
  QueryProgress Progress() const override { return QueryProgress{}; }

  int executions(int block) const { return executions_[block].load(); }
  int64_t shared_runs() const { return shared_runs_.load(); }
  int64_t shared_completions() const { return shared_completions_; }  // after the handle completed

 private:
  const QueryId id_;
  const int priority_;
  const ScanSharing sharing_;
  std::atomic<bool> released_{false};
  std::vector<int> ready_;
  int64_t in_flight_ = 0;
  bool cancelled_ = false;
  std::vector<std::atomic<int>> executions_;
  std::atomic<int64_t> shared_runs_{0};
  int64_t shared_completions_ = 0;
};

struct SharedRun {
  std::vector<std::shared_ptr<ScanQuery>> queries;
  ForemanStats stats;
};

// Submits `queries`, waits until all are admitted, releases them together and waits for every handle.
SharedRun RunTogether(std::vector<std::shared_ptr<ScanQuery>> queries, const ForemanOptions& options) {
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  std::vector<QueryHandle> handles;
  for (const auto& query : queries) handles.push_back(SubmitOrDie(*foreman, query));
  EXPECT_TRUE(WaitUntil([&] {
    for (const auto& query : queries) {
      if (!foreman->GetProgress(query->query_id()).ok()) return false;
    }
    return true;
  }));
  // All released before the Foreman looks at any: the first one it dispatches takes the others along.
  for (const auto& query : queries) query->Release();
  for (const auto& query : queries) EXPECT_TRUE(foreman->Poke(query->query_id()).ok());
  for (QueryHandle& handle : handles) EXPECT_TRUE(handle.Wait().status.ok());
  absl::StatusOr<ForemanStats> stats = foreman->GetStats();
  EXPECT_TRUE(stats.ok());
  return SharedRun{std::move(queries), *stats};
}

// One worker; every query may ride along without paying back first, so the counts below are exact on any machine.
SharedRun RunTogether(std::vector<std::shared_ptr<ScanQuery>> queries, const std::string& policy = "fair") {
  ForemanOptions options = TestForemanOptions(1, policy);
  options.shared_scan_ride_debt_ns = int64_t{1} << 50;
  return RunTogether(std::move(queries), options);
}

constexpr int kBlocks = 40;

TEST(ForemanSharedScanTest, QueriesScanningTheSameBlocksShareThemAndRunEachWorkOrderOnce) {
  SharedRun run = RunTogether({std::make_shared<ScanQuery>(1, kBlocks, ScanSharing::kFull),
                               std::make_shared<ScanQuery>(2, kBlocks, ScanSharing::kFull),
                               std::make_shared<ScanQuery>(3, kBlocks, ScanSharing::kFull)});
  for (const auto& query : run.queries) {
    for (int b = 0; b < kBlocks; ++b) EXPECT_EQ(query->executions(b), 1) << "query " << query->query_id();
    // Released together with identical blocks: every dispatch takes the other two along.
    EXPECT_EQ(query->shared_runs(), kBlocks);
    EXPECT_EQ(query->shared_completions(), kBlocks);
  }
  EXPECT_EQ(run.stats.shared, 3 * kBlocks);
  EXPECT_EQ(run.stats.executed, 3 * kBlocks);
}

TEST(ForemanSharedScanTest, AQueryWithSharingOffNeitherLeadsNorJoins) {
  SharedRun run = RunTogether({std::make_shared<ScanQuery>(1, kBlocks, ScanSharing::kFull),
                               std::make_shared<ScanQuery>(2, kBlocks, ScanSharing::kOff)});
  EXPECT_EQ(run.queries[1]->shared_runs(), 0);
  EXPECT_EQ(run.queries[0]->shared_runs(), 0);  // nobody to share with
  EXPECT_EQ(run.stats.shared, 0);
  for (int b = 0; b < kBlocks; ++b) EXPECT_EQ(run.queries[1]->executions(b), 1);
}

TEST(ForemanSharedScanTest, UnderHighestPriorityFirstOnlyQueriesOfTheSamePriorityShare) {
  SharedRun run = RunTogether({std::make_shared<ScanQuery>(1, kBlocks, ScanSharing::kFull, /*priority=*/1),
                               std::make_shared<ScanQuery>(2, kBlocks, ScanSharing::kFull, /*priority=*/5),
                               std::make_shared<ScanQuery>(3, kBlocks, ScanSharing::kFull, /*priority=*/5)},
                              "hpf");
  EXPECT_EQ(run.queries[0]->shared_runs(), 0);
  EXPECT_EQ(run.queries[1]->shared_runs(), kBlocks);
  EXPECT_EQ(run.queries[2]->shared_runs(), kBlocks);
  for (int b = 0; b < kBlocks; ++b) EXPECT_EQ(run.queries[0]->executions(b), 1);
}

TEST(ForemanSharedScanTest, RidesAlongAreBoundedAndPaidBackSoEveryQueryStillFinishes) {
  // With the default bound, a query that rode along passes over picks until it has paid back; whatever the
  // timing, every block of every query runs exactly once and some are shared.
  std::vector<std::shared_ptr<ScanQuery>> queries;
  for (int q = 1; q <= 4; ++q) queries.push_back(std::make_shared<ScanQuery>(q, kBlocks, ScanSharing::kFull));
  SharedRun run = RunTogether(queries, TestForemanOptions(2));
  int64_t shared = 0;
  for (const auto& query : run.queries) {
    for (int b = 0; b < kBlocks; ++b) EXPECT_EQ(query->executions(b), 1);
    shared += query->shared_runs();
  }
  EXPECT_GT(shared, 0);
  EXPECT_EQ(run.stats.shared, shared);
}

TEST(ForemanSharedScanTest, PartlyOverlappingScansShareOnlyTheCommonBlocks) {
  // Query 2 scans only the first half of the blocks.
  auto whole = std::make_shared<ScanQuery>(1, kBlocks, ScanSharing::kFull);
  auto half = std::make_shared<ScanQuery>(2, kBlocks / 2, ScanSharing::kFull);
  SharedRun run = RunTogether({whole, half});
  EXPECT_EQ(half->shared_runs(), kBlocks / 2);
  EXPECT_EQ(whole->shared_runs(), kBlocks / 2);
  for (int b = 0; b < kBlocks; ++b) EXPECT_EQ(whole->executions(b), 1);
}

}  // namespace
}  // namespace tessera
