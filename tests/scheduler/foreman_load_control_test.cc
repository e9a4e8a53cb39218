// The Foreman with its LoadController: synthetic queries that report memory estimates and hold a footprint that
// grows with their finished work orders; the gauge is a fake 100 MiB buffer pool whose use is the sum of those
// footprints.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "scheduler/foreman.h"
#include "scheduler/synthetic_query.h"
#include "tests/scheduler/foreman_test_util.h"

namespace tessera {
namespace {

constexpr int64_t kMiB = 1 << 20;

class FakePool {
 public:
  void Add(std::shared_ptr<SyntheticQuery> query) {
    std::lock_guard<std::mutex> lock(mu_);
    queries_.push_back(std::move(query));
  }
  MemoryGauge Gauge() {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t used = 0;
    for (const auto& query : queries_) used += query->MemoryFootprint();
    return MemoryGauge{used, 100 * kMiB};
  }

 private:
  std::mutex mu_;
  std::vector<std::shared_ptr<SyntheticQuery>> queries_;
};

class ForemanLoadControlTest : public ::testing::Test {
 protected:
  std::unique_ptr<Foreman> Start(const std::string& policy) {
    ForemanOptions options = TestForemanOptions(2, policy);
    options.load_control.threshold_fraction = 1.0;
    options.load_control.max_query_fraction = 1.0;
    options.load_control.memory = [this] { return pool_.Gauge(); };
    return MakeForeman(options);
  }

  std::shared_ptr<SyntheticQuery> Query(QueryId id, int priority, int64_t work_orders, int64_t spin_ns,
                                        QueryMemoryRequest memory, int64_t footprint_per_work_order = 0) {
    SyntheticQueryOptions options = SimpleSyntheticQuery(id, work_orders, spin_ns, priority);
    options.dispatch_clock = clock_;
    options.memory = memory;
    options.footprint_per_work_order = footprint_per_work_order;
    auto query = std::make_shared<SyntheticQuery>(std::move(options));
    pool_.Add(query);
    return query;
  }

  static std::string Admission(Foreman& foreman, QueryId id) {
    absl::StatusOr<QueryProgress> progress = foreman.GetProgress(id);
    return progress.ok() ? progress->admission : std::string(progress.status().message());
  }

  FakePool pool_;
  std::shared_ptr<std::atomic<int64_t>> clock_ = std::make_shared<std::atomic<int64_t>>(0);
};

// Every work order of `query` ran exactly once.
void ExpectEveryWorkOrderOnce(const SyntheticQuery& query) {
  for (int64_t i = 0; i < query.total_work_orders(); ++i) ASSERT_EQ(query.executions(0, i), 1) << i;
}

TEST_F(ForemanLoadControlTest, FairPolicyWaitListsAQueryUntilMemoryFrees) {
  std::unique_ptr<Foreman> foreman = Start("fair");
  auto first = Query(1, 1, 400, 100'000, {60 * kMiB, 80 * kMiB});
  auto second = Query(2, 1, 100, 10'000, {50 * kMiB, 50 * kMiB});
  QueryHandle first_handle = SubmitOrDie(*foreman, first);
  ASSERT_TRUE(WaitUntil([&] { return first->finished() > 0; }));
  QueryHandle second_handle = SubmitOrDie(*foreman, second);
  // While the first runs, the second waits (unless the first finished in between, which the dispatch order
  // below still checks).
  if (!first_handle.done()) {
    const std::string admission = Admission(*foreman, 2);
    EXPECT_TRUE(admission == "waiting for memory" || first_handle.done()) << admission;
  }
  const QueryOutcome& first_outcome = first_handle.Wait();
  const QueryOutcome& second_outcome = second_handle.Wait();
  ASSERT_TRUE(first_outcome.status.ok());
  ASSERT_TRUE(second_outcome.status.ok());
  EXPECT_GT(second->dispatch_sequence().front(), first->dispatch_sequence().back())
      << "the second query started only after the first one had left";
  EXPECT_GT(second_outcome.memory_wait_ns, 0);
  EXPECT_EQ(second_outcome.suspensions, 0);
  EXPECT_EQ(first_outcome.suspensions, 0);
  ExpectEveryWorkOrderOnce(*first);
  ExpectEveryWorkOrderOnce(*second);
}

TEST_F(ForemanLoadControlTest, HigherPriorityArrivalSuspendsTheLowerPriorityQueryWhichResumesAfter) {
  std::unique_ptr<Foreman> foreman = Start("hpf");
  // The low-priority query may claim up to 60 MiB and holds 20 KiB more per finished work order (40 MiB at the
  // end); the high-priority one needs 50 MiB, more than the 40 left beside the low one's commitment.
  auto low = Query(1, 1, 2000, 100'000, {10 * kMiB, 60 * kMiB}, 20 << 10);
  auto high = Query(2, 5, 200, 100'000, {50 * kMiB, 50 * kMiB});
  QueryHandle low_handle = SubmitOrDie(*foreman, low);
  ASSERT_TRUE(WaitUntil([&] { return low->finished() >= 20; }));
  QueryHandle high_handle = SubmitOrDie(*foreman, high);
  ASSERT_TRUE(WaitUntil([&] { return high->finished() > 0 || high_handle.done(); }));
  if (!high_handle.done()) EXPECT_EQ(Admission(*foreman, 1), "suspended");

  const QueryOutcome& high_outcome = high_handle.Wait();
  const QueryOutcome& low_outcome = low_handle.Wait();
  ASSERT_TRUE(high_outcome.status.ok());
  ASSERT_TRUE(low_outcome.status.ok()) << "the suspended query resumed and finished";
  EXPECT_EQ(low_outcome.suspensions, 1);
  EXPECT_GT(low_outcome.memory_wait_ns, 0);
  EXPECT_EQ(high_outcome.memory_wait_ns, 0);
  // Not one low-priority work order was dispatched while the high-priority query ran.
  const std::vector<int64_t>& low_dispatches = low->dispatch_sequence();
  const int64_t high_first = high->dispatch_sequence().front();
  const int64_t high_last = high->dispatch_sequence().back();
  EXPECT_EQ(std::count_if(low_dispatches.begin(), low_dispatches.end(),
                          [&](int64_t s) { return s > high_first && s < high_last; }),
            0);
  EXPECT_GT(low_dispatches.back(), high_last) << "the low-priority query resumed after";
  ExpectEveryWorkOrderOnce(*low);
  ExpectEveryWorkOrderOnce(*high);
  absl::StatusOr<ForemanStats> stats = foreman->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->load.suspensions, 1);
  EXPECT_EQ(stats->load.admitted + stats->load.waiting + stats->load.suspended, 0);
}

TEST_F(ForemanLoadControlTest, CancellingAWaitingQueryLeavesTheRunningOneAlone) {
  std::unique_ptr<Foreman> foreman = Start("fair");
  auto running = Query(1, 1, 400, 100'000, {60 * kMiB, 80 * kMiB});
  auto waiting = Query(2, 1, 100, 10'000, {50 * kMiB, 50 * kMiB});
  QueryHandle running_handle = SubmitOrDie(*foreman, running);
  ASSERT_TRUE(WaitUntil([&] { return running->finished() > 0; }));
  QueryHandle waiting_handle = SubmitOrDie(*foreman, waiting);
  ASSERT_TRUE(foreman->Cancel(2).ok());
  const QueryOutcome& cancelled = waiting_handle.Wait();
  EXPECT_TRUE(absl::IsCancelled(cancelled.status) || cancelled.status.ok()) << cancelled.status;
  if (absl::IsCancelled(cancelled.status) && !running_handle.done()) {
    EXPECT_EQ(cancelled.work_orders_executed, 0);
  }
  ASSERT_TRUE(running_handle.Wait().status.ok());
  ExpectEveryWorkOrderOnce(*running);
}

TEST_F(ForemanLoadControlTest, StopAbortsWaitingAndSuspendedQueries) {
  std::unique_ptr<Foreman> foreman = Start("hpf");
  auto low = Query(1, 1, 100'000, 50'000, {10 * kMiB, 60 * kMiB}, 1);
  auto high = Query(2, 5, 100'000, 50'000, {50 * kMiB, 50 * kMiB});
  auto waiting = Query(3, 1, 10, 0, {90 * kMiB, 90 * kMiB});
  QueryHandle low_handle = SubmitOrDie(*foreman, low);
  ASSERT_TRUE(WaitUntil([&] { return low->finished() > 0; }));
  QueryHandle high_handle = SubmitOrDie(*foreman, high);
  QueryHandle waiting_handle = SubmitOrDie(*foreman, waiting);
  ASSERT_TRUE(WaitUntil([&] { return high->finished() > 0; }));
  absl::StatusOr<ForemanStats> stats = foreman->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->load.suspended, 1);
  EXPECT_EQ(stats->load.waiting, 1);
  foreman->Stop();
  EXPECT_TRUE(absl::IsAborted(low_handle.Wait().status));
  EXPECT_TRUE(absl::IsAborted(high_handle.Wait().status));
  EXPECT_TRUE(absl::IsAborted(waiting_handle.Wait().status));
  EXPECT_EQ(waiting_handle.Wait().work_orders_executed, 0);
}

TEST_F(ForemanLoadControlTest, WithoutAGaugeEveryQueryIsAdmitted) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2, "fair"));
  auto a = Query(1, 1, 50, 0, {90 * kMiB, 90 * kMiB});
  auto b = Query(2, 1, 50, 0, {90 * kMiB, 90 * kMiB});
  QueryHandle ha = SubmitOrDie(*foreman, a);
  QueryHandle hb = SubmitOrDie(*foreman, b);
  EXPECT_EQ(ha.Wait().memory_wait_ns, 0);
  EXPECT_EQ(hb.Wait().memory_wait_ns, 0);
}

}  // namespace
}  // namespace tessera
