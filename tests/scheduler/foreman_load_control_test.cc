// The Foreman with its LoadController: synthetic queries that report memory estimates and hold a footprint that
// grows with their finished work orders; the gauge is a fake 100 MiB buffer pool whose use is the sum of those
// footprints.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

TEST_F(ForemanLoadControlTest, TheCapOnAdmittedQueriesRunsThemInTurnAndLetsTheNextInWhenWorkRunsOut) {
  ForemanOptions options = TestForemanOptions(2, "fair");
  options.load_control.max_admitted = 1;  // no memory control: the cap alone
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  auto first = Query(1, 1, 300, 100'000, {0, 0});
  auto second = Query(2, 1, 50, 10'000, {0, 0});
  auto third = Query(3, 1, 50, 10'000, {0, 0});
  QueryHandle first_handle = SubmitOrDie(*foreman, first);
  ASSERT_TRUE(WaitUntil([&] { return first->finished() > 0; }));
  QueryHandle second_handle = SubmitOrDie(*foreman, second);
  QueryHandle third_handle = SubmitOrDie(*foreman, third);
  if (!first_handle.done()) {
    const std::string admission = Admission(*foreman, 3);
    EXPECT_TRUE(admission == "waiting for a query slot" || first_handle.done()) << admission;
  }
  for (QueryHandle* handle : {&first_handle, &second_handle, &third_handle}) ASSERT_TRUE(handle->Wait().status.ok());
  // The second starts once the first has no work order left to hand out (a worker would idle), not before.
  EXPECT_GT(second->dispatch_sequence().front(), first->dispatch_sequence().back());
  EXPECT_GT(third->dispatch_sequence().front(), first->dispatch_sequence().back());
  ExpectEveryWorkOrderOnce(*first);
  ExpectEveryWorkOrderOnce(*second);
  ExpectEveryWorkOrderOnce(*third);
}

// Under SRPT the cap's held-back queries follow the policy: a short query that arrives after a long one is admitted
// first when the running query's last work orders leave a worker idle (beyond the cap) or it finishes. The costs
// are reported (not timed), so only the work-order counts rank them; aging is off, so the submissions' spacing
// cannot reorder them. Under FCFS the same arrivals go in arrival order (the baseline this changes).
TEST_F(ForemanLoadControlTest, UnderSrptTheCapAdmitsTheShortestHeldBackQueryFirst) {
  for (const char* policy : {"srpt", "fcfs"}) {
    SCOPED_TRACE(policy);
    ForemanOptions options = TestForemanOptions(2, policy);
    options.policy.srpt_aging = 0;
    options.load_control.max_admitted = 1;
    std::unique_ptr<Foreman> foreman = MakeForeman(options);
    auto make = [&](QueryId id, int64_t work_orders, int64_t spin_ns) {
      SyntheticQueryOptions spec = SimpleSyntheticQuery(id, work_orders, spin_ns);
      spec.operators[0].reported_ns = 50'000;
      spec.dispatch_clock = clock_;
      return std::make_shared<SyntheticQuery>(std::move(spec));
    };
    auto first = make(1, 1000, 100'000);  // about 50 ms on two workers
    auto long_one = make(2, 400, 1'000);
    auto short_one = make(3, 20, 1'000);
    QueryHandle first_handle = SubmitOrDie(*foreman, first);
    ASSERT_TRUE(WaitUntil([&] { return first->finished() > 0; }));
    QueryHandle long_handle = SubmitOrDie(*foreman, long_one);
    QueryHandle short_handle = SubmitOrDie(*foreman, short_one);
    for (QueryHandle* handle : {&first_handle, &long_handle, &short_handle}) ASSERT_TRUE(handle->Wait().status.ok());
    if (long_handle.Wait().memory_wait_ns == 0) {
      GTEST_SKIP() << "the first query finished before the others arrived (a stalled test thread)";
    }
    if (std::string(policy) == "srpt") {
      EXPECT_LT(short_one->dispatch_sequence().front(), long_one->dispatch_sequence().front());
    } else {
      EXPECT_LT(long_one->dispatch_sequence().front(), short_one->dispatch_sequence().front());
    }
    ExpectEveryWorkOrderOnce(*long_one);
    ExpectEveryWorkOrderOnce(*short_one);
  }
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

// A synthetic query that holds `resident` bytes (its hash tables, say) until it spills them: SpillMemory blocks until
// Release() (a slow disk), RestoreMemory brings the bytes back. Both record their order in events(); the Foreman
// reads the footprint and spillable bytes on its thread while SpillMemory runs on the spill thread, hence atomics.
// With `honours_cancel` the spill stops at the Foreman's cancel flag instead (as BufferPool::SpillTo does between
// allocations): nothing is spilled, "spill cancelled" is recorded. A cancelled query's memory is freed (footprint 0).
class GatedSpillQuery : public SyntheticQuery {
 public:
  GatedSpillQuery(SyntheticQueryOptions options, int64_t resident, bool honours_cancel = false)
      : SyntheticQuery(std::move(options)), resident_(resident), honours_cancel_(honours_cancel) {}

  int64_t MemoryFootprint() const override { return spilled_.load() || freed_.load() ? 0 : resident_; }
  int64_t SpillableBytes() const override { return MemoryFootprint(); }
  void Cancel() override {
    freed_.store(true);
    SyntheticQuery::Cancel();
  }
  absl::StatusOr<int64_t> SpillMemory(const std::string&, const std::atomic<bool>& cancel) override {
    std::unique_lock<std::mutex> lock(mu_);
    spill_started_ = true;
    cv_.notify_all();
    // The Foreman sets the flag without this mutex: poll it.
    while (!released_ && !(honours_cancel_ && cancel.load())) cv_.wait_for(lock, std::chrono::milliseconds(1));
    if (!released_) {
      events_.push_back("spill cancelled");
      return absl::CancelledError("spill cancelled");
    }
    spilled_.store(true);
    events_.push_back("spilled");
    return resident_;
  }
  absl::Status RestoreMemory() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!spilled_.load()) return absl::OkStatus();  // nothing spilled (cancelled)
    spilled_.store(false);
    events_.push_back("restored");
    return absl::OkStatus();
  }

  bool WaitForSpillStart() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return spill_started_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  const int64_t resident_;
  const bool honours_cancel_;
  std::atomic<bool> spilled_{false};
  std::atomic<bool> freed_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool spill_started_ = false;
  bool released_ = false;
  std::vector<std::string> events_;
};

// Spilling on: the low-priority query holds 60 MiB resident (and may claim no more); the high-priority arrival
// needs 50 MiB, which only the low one's spill frees.
class ForemanSpillTest : public ForemanLoadControlTest {
 protected:
  std::unique_ptr<Foreman> StartSpilling() {
    ForemanOptions options = TestForemanOptions(2, "hpf");
    options.load_control.threshold_fraction = 1.0;
    options.load_control.max_query_fraction = 1.0;
    options.load_control.memory = [this] { return pool_.Gauge(); };
    options.load_control.spill_directory = ::testing::TempDir();
    return MakeForeman(options);
  }
  std::shared_ptr<GatedSpillQuery> Low(bool honours_cancel) {
    SyntheticQueryOptions options = SimpleSyntheticQuery(1, 2000, 50'000, /*priority=*/1);
    options.dispatch_clock = clock_;
    options.memory = {60 * kMiB, 60 * kMiB};
    auto query = std::make_shared<GatedSpillQuery>(std::move(options), 60 * kMiB, honours_cancel);
    pool_.Add(query);
    return query;
  }
  std::shared_ptr<SyntheticQuery> High() { return Query(2, 5, 200, 20'000, {50 * kMiB, 50 * kMiB}); }

  // Starts the low query, submits the high one after 20 of the low one's work orders, and returns once the low
  // one, suspended for it, has started its spill (which blocks until low_->Release()).
  void SuspendTheLowQueryIntoAGatedSpill(bool honours_cancel = false) {
    foreman_ = StartSpilling();
    low_ = Low(honours_cancel);
    high_ = High();
    low_handle_ = SubmitOrDie(*foreman_, low_);
    ASSERT_TRUE(WaitUntil([&] { return low_->finished() >= 20; }));
    high_handle_ = SubmitOrDie(*foreman_, high_);
    ASSERT_TRUE(low_->WaitForSpillStart());
  }

  std::unique_ptr<Foreman> foreman_;
  std::shared_ptr<GatedSpillQuery> low_;
  std::shared_ptr<SyntheticQuery> high_;
  QueryHandle low_handle_;
  QueryHandle high_handle_;
};

TEST_F(ForemanSpillTest, TheSpillRunsOffTheForemanThreadAndTheArrivalWaitsForIt) {
  SuspendTheLowQueryIntoAGatedSpill();
  // The spill blocks on its "disk"; the Foreman still answers (it used to run the spill on its own thread).
  EXPECT_EQ(Admission(*foreman_, 1), "suspended");
  EXPECT_EQ(Admission(*foreman_, 2), "waiting for memory");
  absl::StatusOr<ForemanStats> stats = foreman_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->load.suspended, 1);
  EXPECT_EQ(stats->load.waiting, 1);
  EXPECT_EQ(high_->issued(), 0);
  const int64_t low_issued = low_->issued();
  low_->Release();
  ASSERT_TRUE(high_handle_.Wait().status.ok());
  ASSERT_TRUE(low_handle_.Wait().status.ok());
  EXPECT_EQ(low_->events(), (std::vector<std::string>{"spilled", "restored"}));
  EXPECT_GT(low_->dispatch_sequence()[low_issued], high_->dispatch_sequence().back())
      << "the low-priority query resumed only after the high-priority one";
  ExpectEveryWorkOrderOnce(*low_);
  ExpectEveryWorkOrderOnce(*high_);
}

TEST_F(ForemanSpillTest, AResumeWaitsForTheSpillInFlight) {
  SuspendTheLowQueryIntoAGatedSpill();
  // The arrival leaves while the low query's spill is in flight: the LoadController re-admits the low one, whose
  // resumption waits for the spill (no work order of it runs on memory that is being written out).
  ASSERT_TRUE(foreman_->Cancel(2).ok());
  EXPECT_TRUE(absl::IsCancelled(high_handle_.Wait().status));
  const int64_t low_issued = low_->issued();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(low_->issued(), low_issued) << "dispatched while its spill was in flight";
  EXPECT_TRUE(low_->events().empty());
  low_->Release();
  ASSERT_TRUE(low_handle_.Wait().status.ok());
  EXPECT_EQ(low_->events(), (std::vector<std::string>{"spilled", "restored"}));
  ExpectEveryWorkOrderOnce(*low_);
}

TEST_F(ForemanSpillTest, ACancelWaitsForTheSpillInFlight) {
  SuspendTheLowQueryIntoAGatedSpill();
  ASSERT_TRUE(foreman_->Cancel(1).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(low_handle_.done()) << "the query ended (and could be destroyed) while its spill ran";
  low_->Release();
  EXPECT_TRUE(absl::IsCancelled(low_handle_.Wait().status));
  ASSERT_TRUE(high_handle_.Wait().status.ok()) << "admitted once the cancelled query's memory was gone";
  EXPECT_EQ(low_->events(), (std::vector<std::string>{"spilled"}));
  ExpectEveryWorkOrderOnce(*high_);
}

TEST_F(ForemanSpillTest, StopWaitsForTheSpillInFlight) {
  SuspendTheLowQueryIntoAGatedSpill();
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    low_->Release();
  });
  foreman_->Stop();
  releaser.join();
  EXPECT_TRUE(absl::IsAborted(low_handle_.Wait().status));
  EXPECT_TRUE(absl::IsAborted(high_handle_.Wait().status));
  EXPECT_EQ(low_->events(), (std::vector<std::string>{"spilled"}));
}

TEST_F(ForemanSpillTest, AResumeCutsTheSpillInFlightShort) {
  SuspendTheLowQueryIntoAGatedSpill(/*honours_cancel=*/true);
  // The arrival leaves while the low query's spill is in flight: its memory is wanted back, so the spill stops (the
  // gate is never released) and the low query resumes with its memory resident, nothing to read back.
  ASSERT_TRUE(foreman_->Cancel(2).ok());
  EXPECT_TRUE(absl::IsCancelled(high_handle_.Wait().status));
  ASSERT_TRUE(low_handle_.Wait().status.ok());
  EXPECT_EQ(low_->events(), (std::vector<std::string>{"spill cancelled"}));
  ExpectEveryWorkOrderOnce(*low_);
  absl::StatusOr<ForemanStats> stats = foreman_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->load.spilled_bytes_total, 0);
}

TEST_F(ForemanSpillTest, ACancelCutsTheSpillInFlightShort) {
  SuspendTheLowQueryIntoAGatedSpill(/*honours_cancel=*/true);
  ASSERT_TRUE(foreman_->Cancel(1).ok());
  EXPECT_TRUE(absl::IsCancelled(low_handle_.Wait().status)) << "ended without its disk being released";
  ASSERT_TRUE(high_handle_.Wait().status.ok()) << "admitted once the cancelled query's memory was freed";
  EXPECT_EQ(low_->events(), (std::vector<std::string>{"spill cancelled"}));
  ExpectEveryWorkOrderOnce(*high_);
}

}  // namespace
}  // namespace tessera
