// Policies end to end through the Foreman with synthetic work orders. Shares are measured by counting work
// orders dispatched while all queries were active (never by timing), with generous bounds, so a loaded 2-core
// machine only makes the tests slower, not flaky.
#include <gtest/gtest.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "scheduler/foreman.h"
#include "tests/scheduler/foreman_test_util.h"

namespace tessera {
namespace {

struct QueryRun {
  std::vector<std::shared_ptr<SyntheticQuery>> queries;
  std::vector<QueryHandle> handles;
};

// Submits one query per spec (sharing one dispatch clock) and waits for all of them.
QueryRun SubmitAndWait(Foreman& foreman, std::vector<SyntheticQueryOptions> specs) {
  auto clock = std::make_shared<std::atomic<int64_t>>(0);
  QueryRun run;
  for (SyntheticQueryOptions& spec : specs) {
    spec.dispatch_clock = clock;
    run.queries.push_back(std::make_shared<SyntheticQuery>(spec));
  }
  for (auto& query : run.queries) run.handles.push_back(SubmitOrDie(foreman, query));
  for (auto& handle : run.handles) EXPECT_TRUE(handle.Wait().status.ok()) << handle.Wait().status;
  return run;
}

std::vector<int64_t> CountsWhileAllActive(const QueryRun& run) {
  std::vector<const SyntheticQuery*> queries;
  for (const auto& q : run.queries) queries.push_back(q.get());
  return DispatchCountsWhileAllActive(queries);
}

TEST(ForemanPolicyTest, FairGivesEqualQueriesEqualShares) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2, "fair"));
  QueryRun run = SubmitAndWait(*foreman, {SimpleSyntheticQuery(1, 3000, 20'000), SimpleSyntheticQuery(2, 3000, 20'000),
                                          SimpleSyntheticQuery(3, 3000, 20'000)});
  std::vector<int64_t> counts = CountsWhileAllActive(run);
  const double total = counts[0] + counts[1] + counts[2];
  ASSERT_GT(total, 3000);
  for (int64_t count : counts) {
    EXPECT_GT(count / total, 0.25) << counts[0] << " " << counts[1] << " " << counts[2];
    EXPECT_LT(count / total, 0.42) << counts[0] << " " << counts[1] << " " << counts[2];
  }
}

// Dissertation §3.8.5: with static 1/N probabilities a query with 4x longer work orders takes ~4x the CPU;
// the learned fair policy gives the short query ~4x the work orders instead, so CPU shares are equal.
TEST(ForemanPolicyTest, FairEqualizesCpuWhereStaticEqualizesWorkOrderCounts) {
  for (const char* policy : {"fair", "static"}) {
    std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2, policy));
    QueryRun run =
        SubmitAndWait(*foreman, {SimpleSyntheticQuery(1, 8000, 10'000), SimpleSyntheticQuery(2, 8000, 40'000)});
    std::vector<int64_t> counts = CountsWhileAllActive(run);
    ASSERT_GT(counts[1], 100) << policy;
    const double ratio = static_cast<double>(counts[0]) / counts[1];
    if (std::string(policy) == "fair") {
      EXPECT_GT(ratio, 2.0) << "short/long work orders under fair: " << counts[0] << "/" << counts[1];
      EXPECT_LT(ratio, 8.0) << "short/long work orders under fair: " << counts[0] << "/" << counts[1];
    } else {
      EXPECT_GT(ratio, 0.6) << "short/long work orders under static: " << counts[0] << "/" << counts[1];
      EXPECT_LT(ratio, 1.6) << "short/long work orders under static: " << counts[0] << "/" << counts[1];
    }
  }
}

// Issue #5 in miniature: query 1's two short operators (ten empty work orders each, then one held until the
// probe is done) stay active through its probe, so their samples stay in its pooled mean, which
// under-predicts the probe ~3x: fair with pooled predictions gives it ~3x the probe work orders of query 2
// (same work-order time). Predicting with the next work order's operator (the Foreman asks
// SchedulableQuery::NextWorkOrderOperator) gives both the same. The pooled run is the control and is only
// reported: its bias needs the empty work orders to be measured as near 0, which a descheduled worker on a loaded
// machine breaks (it failed about once in 15 runs), so asserting it made the test flaky.
TEST(ForemanPolicyTest, FairIsNotBiasedByAShortOperatorThatStaysActive) {
  for (PredictionScope scope : {PredictionScope::kNextOperator, PredictionScope::kPooled}) {
    ForemanOptions options = TestForemanOptions(2, "fair");
    options.learning.scope = scope;
    std::unique_ptr<Foreman> foreman = MakeForeman(options);
    SyntheticQueryOptions biased;
    biased.query_id = 1;
    biased.operators = {{"probe", 1500, 40'000}, {"finalize a", 11, 0}, {"finalize b", 11, 0}};
    biased.operators[1].held_work_orders = 1;
    biased.operators[2].held_work_orders = 1;
    QueryRun run = SubmitAndWait(*foreman, {biased, SimpleSyntheticQuery(2, 1500, 40'000)});
    std::vector<int64_t> counts = CountsWhileAllActive(run);
    ASSERT_GT(counts[1], 100) << PredictionScopeName(scope);
    const double ratio = static_cast<double>(counts[0]) / counts[1];
    if (scope == PredictionScope::kNextOperator) {
      EXPECT_GT(ratio, 0.6) << "work orders query 1 / query 2: " << counts[0] << "/" << counts[1];
      EXPECT_LT(ratio, 1.6) << "work orders query 1 / query 2: " << counts[0] << "/" << counts[1];
    } else {
      std::printf("pooled (control), work orders query 1 / query 2: %lld/%lld (about 3 when unloaded)\n",
                  static_cast<long long>(counts[0]), static_cast<long long>(counts[1]));
    }
  }
}

// Time slices (ForemanOptions::dispatch_run_ns) give a query runs of its work orders; the policy still draws
// as if each pick were one work order and the runs' extra CPU is paid back by passing over later picks, so a
// query with 4x shorter work orders still gets 4x the work orders (equal CPU), as without slices.
TEST(ForemanPolicyTest, FairWithTimeSlicesStillEqualizesCpu) {
  ForemanOptions options = TestForemanOptions(2, "fair");
  options.dispatch_run_ns = 1'000'000;
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  QueryRun run =
      SubmitAndWait(*foreman, {SimpleSyntheticQuery(1, 16000, 10'000), SimpleSyntheticQuery(2, 4000, 40'000)});
  std::vector<int64_t> counts = CountsWhileAllActive(run);
  ASSERT_GT(counts[1], 100);
  const double ratio = static_cast<double>(counts[0]) / counts[1];
  // Generous bounds: virtual time charges measured (wall) durations, which a loaded machine stretches at random
  // (8.2 seen with four copies of the test on two cores); counted runs per pick would give about 1.
  EXPECT_GT(ratio, 2.0) << "short/long work orders under fair with slices: " << counts[0] << "/" << counts[1];
  EXPECT_LT(ratio, 12.0) << "short/long work orders under fair with slices: " << counts[0] << "/" << counts[1];
}

// A query of many short phases (each phase's work orders become ready only when the previous phase is done)
// can never use a whole slice. It must still get its share: its short runs cost it no weight, and when it
// becomes ready with nothing in flight it starts a run at once instead of waiting for the other query's slice
// to end (one worker, so that every phase start finds the worker in the other query's slice).
TEST(ForemanPolicyTest, FairWithTimeSlicesServesAQueryOfShortPhases) {
  ForemanOptions options = TestForemanOptions(1, "fair");
  options.dispatch_run_ns = 1'000'000;  // 25 work orders of 40 us
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  SyntheticQueryOptions phases;
  phases.query_id = 1;
  for (int phase = 0; phase < 150; ++phase) {
    phases.operators.push_back({absl::StrCat("phase ", phase), 4, 40'000, /*blocking_input=*/phase > 0});
  }
  QueryRun run = SubmitAndWait(*foreman, {phases, SimpleSyntheticQuery(2, 3000, 40'000)});
  std::vector<int64_t> counts = CountsWhileAllActive(run);
  ASSERT_GT(counts[1], 100);
  const double ratio = static_cast<double>(counts[0]) / counts[1];
  // About 0.9 on an idle machine, 0.47 seen under heavy load; the weight-divided runs this replaced gave 0.17.
  EXPECT_GT(ratio, 0.3) << "work orders phased / steady query: " << counts[0] << "/" << counts[1];
  EXPECT_LT(ratio, 3.0) << "work orders phased / steady query: " << counts[0] << "/" << counts[1];
}

TEST(ForemanPolicyTest, HighestPriorityFirstRunsTheHighPriorityQueryFirst) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2, "hpf"));
  auto clock = std::make_shared<std::atomic<int64_t>>(0);
  SyntheticQueryOptions low_spec = SimpleSyntheticQuery(1, 4000, 20'000, /*priority=*/1);
  SyntheticQueryOptions high_spec = SimpleSyntheticQuery(2, 500, 20'000, /*priority=*/5);
  low_spec.dispatch_clock = high_spec.dispatch_clock = clock;
  auto low = std::make_shared<SyntheticQuery>(low_spec);
  auto high = std::make_shared<SyntheticQuery>(high_spec);
  QueryHandle low_handle = SubmitOrDie(*foreman, low);
  ASSERT_TRUE(WaitUntil([&] { return low->finished() >= 50; }));
  QueryHandle high_handle = SubmitOrDie(*foreman, high);
  const QueryOutcome& high_outcome = high_handle.Wait();
  const QueryOutcome& low_outcome = low_handle.Wait();
  ASSERT_TRUE(high_outcome.status.ok());
  ASSERT_TRUE(low_outcome.status.ok());
  // From its arrival until its last work order was handed out, nothing of the low-priority query was
  // dispatched.
  EXPECT_TRUE(DispatchedContiguously(*high));
  EXPECT_LT(high_outcome.finish_ns, low_outcome.finish_ns);
  EXPECT_GT(low->dispatch_sequence().back(), high->dispatch_sequence().back());
}

TEST(ForemanPolicyTest, ProportionalPrioritySharesFollowPriorities) {
  for (const char* policy : {"pp", "pp-exp"}) {
    std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2, policy));
    // Linear priorities 1, 2, 4 and exponential 0, 1, 2 (base 2) both mean shares 1 : 2 : 4.
    const bool linear = std::string(policy) == "pp";
    QueryRun run = SubmitAndWait(*foreman, {SimpleSyntheticQuery(1, 4000, 20'000, linear ? 1 : 1),
                                            SimpleSyntheticQuery(2, 4000, 20'000, linear ? 2 : 2),
                                            SimpleSyntheticQuery(3, 4000, 20'000, linear ? 4 : 3)});
    std::vector<int64_t> counts = CountsWhileAllActive(run);
    ASSERT_GT(counts[0], 100) << policy;
    const double middle = static_cast<double>(counts[1]) / counts[0];
    const double top = static_cast<double>(counts[2]) / counts[0];
    EXPECT_GT(middle, 1.0) << policy << ": " << counts[0] << " " << counts[1] << " " << counts[2];
    EXPECT_LT(middle, 4.0) << policy << ": " << counts[0] << " " << counts[1] << " " << counts[2];
    EXPECT_GT(top, 2.0) << policy << ": " << counts[0] << " " << counts[1] << " " << counts[2];
    EXPECT_LT(top, 8.0) << policy << ": " << counts[0] << " " << counts[1] << " " << counts[2];
  }
}

TEST(ForemanPolicyTest, PolicyAndPrioritySwitchAtRunTime) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2, "hpf"));
  auto high = std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(1, 10'000'000, 20'000, /*priority=*/2));
  auto low = std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(2, 200, 20'000, /*priority=*/1));
  QueryHandle high_handle = SubmitOrDie(*foreman, high);
  QueryHandle low_handle = SubmitOrDie(*foreman, low);
  const int64_t mark = high->issued();
  ASSERT_TRUE(WaitUntil([&] { return high->issued() >= mark + 300; }));
  EXPECT_EQ(low->issued(), 0);  // starved under HPF while the high-priority query has work

  ASSERT_TRUE(foreman->SetPolicy(*ParsePolicy("fair")).ok());
  EXPECT_TRUE(low_handle.Wait().status.ok());  // runs to completion beside the high-priority query
  EXPECT_FALSE(high_handle.done());

  // Back to HPF, and raising a newcomer above the running query starves the running one instead.
  ASSERT_TRUE(foreman->SetPolicy(*ParsePolicy("hpf")).ok());
  auto newcomer = std::make_shared<SyntheticQuery>(SimpleSyntheticQuery(3, 10'000'000, 20'000, /*priority=*/1));
  QueryHandle newcomer_handle = SubmitOrDie(*foreman, newcomer);
  ASSERT_TRUE(foreman->SetPriority(3, 9).ok());
  ASSERT_TRUE(WaitUntil([&] { return newcomer->issued() >= 300; }));
  const int64_t high_issued = high->issued();
  ASSERT_TRUE(WaitUntil([&] { return newcomer->issued() >= 600; }));
  // The running query only gets what was already decided before the priority change reached the Foreman.
  EXPECT_LE(high->issued() - high_issued, 0);
  EXPECT_EQ(foreman->SetPriority(3, 0).code(), absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(foreman->Cancel(1).ok());
  ASSERT_TRUE(foreman->Cancel(3).ok());
  EXPECT_EQ(high_handle.Wait().status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(newcomer_handle.Wait().status.code(), absl::StatusCode::kCancelled);
}

TEST(ForemanPolicyTest, SrptServesTheShortestQueryFirst) {
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2, "srpt"));
  auto clock = std::make_shared<std::atomic<int64_t>>(0);
  SyntheticQueryOptions long_spec = SimpleSyntheticQuery(1, 10000, 10'000);
  SyntheticQueryOptions short_spec = SimpleSyntheticQuery(2, 200, 10'000);
  long_spec.dispatch_clock = short_spec.dispatch_clock = clock;
  auto long_query = std::make_shared<SyntheticQuery>(long_spec);
  auto short_query = std::make_shared<SyntheticQuery>(short_spec);
  QueryHandle long_handle = SubmitOrDie(*foreman, long_query);
  ASSERT_TRUE(WaitUntil([&] { return long_query->finished() >= 100; }));
  QueryHandle short_handle = SubmitOrDie(*foreman, short_query);
  ASSERT_TRUE(short_handle.Wait().status.ok());
  EXPECT_TRUE(DispatchedContiguously(*short_query));
  EXPECT_FALSE(long_handle.done());
  ASSERT_TRUE(foreman->Cancel(1).ok());
  long_handle.Wait();
}

// SRPT ranks by remaining time, not work orders: 4000 work orders of 5 us (20 ms) come before 400 of 200 us
// (80 ms). Costs come from the operator's own work orders or, before any has run, from an earlier query of the
// same plan (the LearningAgent remembers finished operators by plan signature): here both plans ran once alone
// first. Ranked by count (or with the cheap query's cost unknown: the global mean, about 200 us) the cheap query
// would wait for the whole expensive one.
// The costs are injected (SyntheticOperatorSpec::reported_ns: what the Foreman records for each work order), not
// measured: the ranking, the costs remembered by plan and the per-plan correction then do not depend on how fast a
// loaded machine runs the work orders (measured 5 and 200 us spins flaked in a clean-clone CI run). Aging is off
// (pure size order), so the wall time between the two submissions cannot reorder them either. The expensive query
// spins 100 us per work order (about 50 ms on two workers), so it still has work orders to dispatch when the cheap
// one arrives even if the test thread is held up for tens of milliseconds; the cheap one spins 2 us.
TEST(ForemanPolicyTest, SrptRanksByRemainingTimeWithCostsRememberedFromTheSamePlan) {
  ForemanOptions options = TestForemanOptions(2, "srpt");
  options.policy.srpt_aging = 0;
  std::unique_ptr<Foreman> foreman = MakeForeman(options);
  // Remaining time once the cheap one arrives: cheap 4000 x 5 us = 20 ms; expensive about 980 x 200 us = 196 ms.
  auto spec_of = [](QueryId id, int64_t work_orders, int64_t spin_ns, int64_t cost_ns, uint64_t plan) {
    SyntheticQueryOptions spec = SimpleSyntheticQuery(id, work_orders, spin_ns);
    spec.operators[0].reported_ns = cost_ns;
    spec.plan_signature = plan;
    return spec;
  };
  auto cheap_spec = [&](QueryId id) { return spec_of(id, 4000, 2'000, 5'000, 11); };
  auto expensive_spec = [&](QueryId id) { return spec_of(id, 1000, 100'000, 200'000, 22); };
  for (SyntheticQueryOptions spec : {cheap_spec(1), expensive_spec(2)}) {
    ASSERT_TRUE(SubmitOrDie(*foreman, std::make_shared<SyntheticQuery>(spec)).Wait().status.ok());
  }
  auto clock = std::make_shared<std::atomic<int64_t>>(0);
  SyntheticQueryOptions expensive = expensive_spec(3);
  SyntheticQueryOptions cheap = cheap_spec(4);
  expensive.dispatch_clock = cheap.dispatch_clock = clock;
  auto expensive_query = std::make_shared<SyntheticQuery>(expensive);
  auto cheap_query = std::make_shared<SyntheticQuery>(cheap);
  QueryHandle expensive_handle = SubmitOrDie(*foreman, expensive_query);
  ASSERT_TRUE(WaitUntil([&] { return expensive_query->finished() >= 20; }));
  QueryHandle cheap_handle = SubmitOrDie(*foreman, cheap_query);
  ASSERT_TRUE(cheap_handle.Wait().status.ok());
  ASSERT_TRUE(expensive_handle.Wait().status.ok());
  EXPECT_TRUE(DispatchedContiguously(*cheap_query));
  EXPECT_LT(cheap_query->dispatch_sequence().back(), expensive_query->dispatch_sequence().back())
      << "the expensive query's last work orders went before the cheap query";
}

TEST(ForemanPolicyTest, InelasticFirstSrptServesTheSerialPhaseBeforeAShorterElasticQuery) {
  for (const char* policy : {"ifsrpt", "srpt"}) {
    std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(2, policy));
    auto clock = std::make_shared<std::atomic<int64_t>>(0);
    SyntheticQueryOptions elastic_spec = SimpleSyntheticQuery(1, 500, 20'000);  // ~10 ms of work left
    SyntheticQueryOptions serial_spec;                                          // ~60 ms, one at a time
    serial_spec.query_id = 2;
    serial_spec.operators = {{"merge", 1500, 40'000, false, /*inelastic=*/true, 0, 0}};
    elastic_spec.dispatch_clock = serial_spec.dispatch_clock = clock;
    auto elastic = std::make_shared<SyntheticQuery>(elastic_spec);
    auto serial = std::make_shared<SyntheticQuery>(serial_spec);
    QueryHandle elastic_handle = SubmitOrDie(*foreman, elastic);
    ASSERT_TRUE(WaitUntil([&] { return elastic->finished() >= 20; }));
    QueryHandle serial_handle = SubmitOrDie(*foreman, serial);
    ASSERT_TRUE(elastic_handle.Wait().status.ok());
    // On a loaded machine the serial query may already have finished (NotFound).
    const absl::Status cancelled = foreman->Cancel(2);
    ASSERT_TRUE(cancelled.ok() || absl::IsNotFound(cancelled)) << cancelled;
    serial_handle.Wait();
    const int64_t elastic_last = elastic->dispatch_sequence().back();
    const int64_t serial_first = serial->dispatch_sequence().front();
    if (std::string(policy) == "ifsrpt") {
      EXPECT_LT(serial_first, elastic_last) << "the inelastic query waited for the elastic one";
    } else {
      EXPECT_GT(serial_first, elastic_last) << "SRPT served the longer query first";
    }
  }
}

}  // namespace
}  // namespace tessera
