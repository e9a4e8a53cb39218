#include "scheduler/load_controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/container/flat_hash_map.h"

namespace tessera {
namespace {

constexpr int64_t kMiB = 1 << 20;

// A buffer pool of 100 MiB with a threshold of 100% (so M = 100 MiB), base data `base` and per-query footprints
// that the test sets; the gauge's use is base + every footprint, as in the real pool.
// With `spilling`, every byte a query holds is also spillable (its footprint).
class LoadControllerTest : public ::testing::Test {
 protected:
  explicit LoadControllerTest(bool spilling = false) {
    LoadControlOptions options;
    options.threshold_fraction = 1.0;
    options.max_query_fraction = 1.0;
    if (spilling) options.spill_directory = "/unused";  // the controller only needs to know that spilling is on
    options.memory = [this] {
      int64_t used = base_;
      for (const auto& [owner, bytes] : footprints_) used += bytes;
      return MemoryGauge{used, 100 * kMiB};
    };
    auto footprint = [this](LoadController::Owner owner) {
      auto it = footprints_.find(owner);
      return it == footprints_.end() ? int64_t{0} : it->second;
    };
    controller_ = spilling ? std::make_unique<LoadController>(options, footprint, footprint)
                           : std::make_unique<LoadController>(options, footprint);
  }

  static LoadController::Owner Query(int n) {
    return reinterpret_cast<LoadController::Owner>(static_cast<intptr_t>(n));
  }
  static QueryMemoryRequest Needs(int64_t min_mib, int64_t max_mib) { return {min_mib * kMiB, max_mib * kMiB}; }

  int64_t base_ = 10 * kMiB;
  absl::flat_hash_map<LoadController::Owner, int64_t> footprints_;
  std::unique_ptr<LoadController> controller_;
};

TEST_F(LoadControllerTest, DisabledAdmitsEverything) {
  LoadController controller(LoadControlOptions{}, [](LoadController::Owner) { return int64_t{0}; });
  EXPECT_FALSE(controller.enabled());
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(controller.Arrive(Query(i), 1, Needs(1000, 1000), false).admitted);
  }
  EXPECT_EQ(controller.Stats().admitted, 3);
}

TEST_F(LoadControllerTest, TheCapAloneAdmitsAtMostThatManyInArrivalOrder) {
  LoadControlOptions options;  // no memory control
  options.max_admitted = 2;
  LoadController controller(options, [](LoadController::Owner) { return int64_t{0}; });
  EXPECT_FALSE(controller.enabled());
  EXPECT_TRUE(controller.capped());
  EXPECT_TRUE(controller.Arrive(Query(1), 1, Needs(1000, 1000), false).admitted);
  EXPECT_TRUE(controller.Arrive(Query(2), 1, Needs(1000, 1000), false).admitted);
  EXPECT_FALSE(controller.Arrive(Query(3), 1, Needs(0, 0), false).admitted);
  EXPECT_FALSE(controller.Arrive(Query(4), 1, Needs(0, 0), false).admitted);
  EXPECT_EQ(controller.state(Query(3)), AdmissionState::kWaiting);
  EXPECT_STREQ(controller.StateName(Query(3)), "waiting for a query slot");
  EXPECT_STREQ(controller.StateName(Query(1)), "admitted");
  EXPECT_EQ(controller.Stats().waiting, 2);
  // One leaves: the first waiting one takes its slot, the other still waits.
  EXPECT_EQ(controller.Leave(Query(2)), (std::vector<LoadController::Owner>{Query(3)}));
  EXPECT_EQ(controller.state(Query(4)), AdmissionState::kWaiting);
  // A new arrival waits behind query 4 even after a slot frees (no overtaking).
  EXPECT_FALSE(controller.Arrive(Query(5), 1, Needs(0, 0), false).admitted);
  EXPECT_EQ(controller.Leave(Query(1)), (std::vector<LoadController::Owner>{Query(4)}));
  EXPECT_EQ(controller.Leave(Query(3)), (std::vector<LoadController::Owner>{Query(5)}));
  // Switching memory control off at run time keeps the cap.
  EXPECT_FALSE(controller.Arrive(Query(6), 1, Needs(0, 0), false).admitted);
  EXPECT_TRUE(controller.Reconfigure(0, 1.0).empty());
  EXPECT_EQ(controller.state(Query(6)), AdmissionState::kWaiting);
}

TEST_F(LoadControllerTest, AdmitBeyondTheCapLetsOneWaitingQueryInAtATime) {
  LoadControlOptions options;
  options.max_admitted = 1;
  LoadController controller(options, [](LoadController::Owner) { return int64_t{0}; });
  EXPECT_TRUE(controller.AdmitBeyondTheCap().empty()) << "nothing waits";
  EXPECT_TRUE(controller.Arrive(Query(1), 1, Needs(0, 0), false).admitted);
  EXPECT_FALSE(controller.Arrive(Query(2), 1, Needs(0, 0), false).admitted);
  EXPECT_FALSE(controller.Arrive(Query(3), 1, Needs(0, 0), false).admitted);
  EXPECT_EQ(controller.AdmitBeyondTheCap(), (std::vector<LoadController::Owner>{Query(2)}));
  EXPECT_EQ(controller.Stats().admitted, 2);
  EXPECT_EQ(controller.state(Query(3)), AdmissionState::kWaiting);
  // The cap still holds for the rest: 1 leaving leaves 2 admitted, so 3 waits on.
  EXPECT_TRUE(controller.Leave(Query(1)).empty());
  EXPECT_EQ(controller.Leave(Query(2)), (std::vector<LoadController::Owner>{Query(3)}));
  LoadController uncapped(LoadControlOptions{}, [](LoadController::Owner) { return int64_t{0}; });
  EXPECT_TRUE(uncapped.AdmitBeyondTheCap().empty());
}

// Under SRPT the Foreman ranks held-back queries by their aged remaining-time estimate (Foreman::HeldBackRank):
// beyond the cap they are admitted in that order, not in arrival order; unranked ones (a negative or NaN rank)
// come after every ranked one, in arrival order; a rank that changes while a query waits counts at the next round.
TEST_F(LoadControllerTest, BeyondTheCapTheLeastRankedWaitingQueryGoesFirst) {
  LoadControlOptions options;
  options.max_admitted = 1;
  absl::flat_hash_map<LoadController::Owner, double> ranks = {
      {Query(2), 30.0}, {Query(3), 10.0}, {Query(4), -1.0}, {Query(5), std::nan("")}, {Query(6), 20.0}};
  LoadController controller(
      options, [](LoadController::Owner) { return int64_t{0}; }, {},
      [&](LoadController::Owner owner) { return ranks.at(owner); });
  EXPECT_TRUE(controller.Arrive(Query(1), 1, Needs(0, 0), false).admitted);
  for (int i = 2; i <= 6; ++i) EXPECT_FALSE(controller.Arrive(Query(i), 1, Needs(0, 0), false).admitted);
  EXPECT_EQ(controller.Leave(Query(1)), (std::vector<LoadController::Owner>{Query(3)}));
  // Work-conserving admission takes the same order.
  EXPECT_EQ(controller.AdmitBeyondTheCap(), (std::vector<LoadController::Owner>{Query(6)}));
  ranks[Query(5)] = 5.0;  // now known, and the least
  EXPECT_TRUE(controller.Leave(Query(3)).empty()) << "6 still holds the one slot";
  EXPECT_EQ(controller.Leave(Query(6)), (std::vector<LoadController::Owner>{Query(5)}));
  EXPECT_EQ(controller.Leave(Query(5)), (std::vector<LoadController::Owner>{Query(2)}));
  EXPECT_EQ(controller.Leave(Query(2)), (std::vector<LoadController::Owner>{Query(4)}));
  // A higher priority still goes before any rank.
  EXPECT_FALSE(controller.Arrive(Query(7), 1, Needs(0, 0), false).admitted);
  EXPECT_FALSE(controller.Arrive(Query(8), 2, Needs(0, 0), false).admitted);
  ranks[Query(7)] = 1.0;
  ranks[Query(8)] = 100.0;
  EXPECT_EQ(controller.Leave(Query(4)), (std::vector<LoadController::Owner>{Query(8)}));
}

TEST_F(LoadControllerTest, AHigherPriorityThanEveryAdmittedQueryPassesTheCapUnderAPriorityPolicy) {
  LoadControlOptions options;
  options.max_admitted = 1;
  LoadController controller(options, [](LoadController::Owner) { return int64_t{0}; });
  EXPECT_TRUE(controller.Arrive(Query(1), 2, Needs(0, 0), /*priority_policy=*/true).admitted);
  EXPECT_FALSE(controller.Arrive(Query(2), 2, Needs(0, 0), true).admitted) << "the same priority waits";
  EXPECT_FALSE(controller.Arrive(Query(3), 5, Needs(0, 0), false).admitted) << "not under a policy without priorities";
  EXPECT_TRUE(controller.Arrive(Query(4), 9, Needs(0, 0), true).admitted);
  EXPECT_EQ(controller.Stats().admitted, 2);
  // Both admitted must leave before the highest-priority waiting one (3) gets the slot.
  EXPECT_TRUE(controller.Leave(Query(4)).empty());
  EXPECT_EQ(controller.Leave(Query(1)), (std::vector<LoadController::Owner>{Query(3)}));
}

TEST_F(LoadControllerTest, TheCapAndMemoryTogether) {
  LoadControlOptions options;
  options.threshold_fraction = 1.0;
  options.max_query_fraction = 1.0;
  options.max_admitted = 2;
  options.memory = [] { return MemoryGauge{0, 100 * kMiB}; };
  LoadController controller(options, [](LoadController::Owner) { return int64_t{0}; });
  EXPECT_TRUE(controller.Arrive(Query(1), 1, Needs(10, 10), false).admitted);
  EXPECT_FALSE(controller.Arrive(Query(2), 1, Needs(95, 95), false).admitted);  // memory
  EXPECT_STREQ(controller.StateName(Query(2)), "waiting for memory");
  EXPECT_FALSE(controller.Arrive(Query(3), 1, Needs(1, 1), false).admitted);  // behind 2
  EXPECT_EQ(controller.Leave(Query(1)), (std::vector<LoadController::Owner>{Query(2), Query(3)}));
  EXPECT_FALSE(controller.Arrive(Query(4), 1, Needs(1, 1), false).admitted);  // the cap, with memory to spare
  EXPECT_STREQ(controller.StateName(Query(4)), "waiting for a query slot");
  // Beyond the cap only what fits in memory, never forced.
  EXPECT_EQ(controller.AdmitBeyondTheCap(), (std::vector<LoadController::Owner>{Query(4)}));
  EXPECT_FALSE(controller.Arrive(Query(5), 1, Needs(100, 100), false).admitted);
  EXPECT_TRUE(controller.AdmitBeyondTheCap().empty());
  EXPECT_EQ(controller.state(Query(5)), AdmissionState::kWaiting);
  // Below the cap nothing is admitted beyond it: what waits then waits for memory.
  EXPECT_TRUE(controller.Leave(Query(2)).empty());
  EXPECT_TRUE(controller.Leave(Query(4)).empty());
  EXPECT_TRUE(controller.AdmitBeyondTheCap().empty());
  EXPECT_STREQ(controller.StateName(Query(5)), "waiting for memory");
}

TEST_F(LoadControllerTest, AdmitsWhatFitsAndWaitListsTheRestInArrivalOrder) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(30, 50), false).admitted);  // free 90 -> 40
  EXPECT_FALSE(controller_->Arrive(Query(2), 1, Needs(45, 60), false).admitted);
  EXPECT_FALSE(controller_->Arrive(Query(3), 1, Needs(5, 10), false).admitted)
      << "a later small query does not overtake the waiting one";
  EXPECT_EQ(controller_->state(Query(2)), AdmissionState::kWaiting);
  LoadControlStats stats = controller_->Stats();
  EXPECT_EQ(stats.admitted, 1);
  EXPECT_EQ(stats.waiting, 2);
  EXPECT_EQ(stats.claimable_bytes, 50 * kMiB);

  // Query 1 leaves: 2 (60) and then 3 (10) fit into the 90 MiB free.
  EXPECT_EQ(controller_->Leave(Query(1)), (std::vector<LoadController::Owner>{Query(2), Query(3)}));
  EXPECT_EQ(controller_->state(Query(2)), AdmissionState::kAdmitted);
  EXPECT_EQ(controller_->state(Query(3)), AdmissionState::kAdmitted);
}

TEST_F(LoadControllerTest, ASmallerQueryIsAdmittedWhenItFitsBesideOthers) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(30, 50), false).admitted);
  EXPECT_TRUE(controller_->Arrive(Query(2), 1, Needs(10, 40), false).admitted);  // exactly the 40 MiB left
  EXPECT_EQ(controller_->Stats().claimable_bytes, 90 * kMiB);
}

TEST_F(LoadControllerTest, MemoryAlreadyAllocatedIsNotCountedTwice) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(30, 50), false).admitted);
  footprints_[Query(1)] = 35 * kMiB;  // used 45, query 1 may claim 15 more: 40 free
  EXPECT_EQ(controller_->Stats().claimable_bytes, 15 * kMiB);
  EXPECT_TRUE(controller_->Arrive(Query(2), 1, Needs(40, 40), false).admitted);
  // A query beyond its estimate claims nothing more, but what it holds is used.
  footprints_[Query(1)] = 70 * kMiB;
  EXPECT_EQ(controller_->Stats().claimable_bytes, 40 * kMiB);
}

TEST_F(LoadControllerTest, TheMiddleBandIsAdmittedWithWhatIsLeft) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(30, 50), false).admitted);
  // 40 free: min 20 fits, max 80 does not -> admitted, committed 40.
  EXPECT_TRUE(controller_->Arrive(Query(2), 1, Needs(20, 80), false).admitted);
  EXPECT_EQ(controller_->Stats().claimable_bytes, 90 * kMiB);
  EXPECT_FALSE(controller_->Arrive(Query(3), 1, Needs(1, 1), false).admitted);
}

TEST(LoadControllerCapTest, NoQueryIsPromisedMoreThanItsShareOfTheThreshold) {
  LoadControlOptions options;
  options.threshold_fraction = 1.0;
  options.max_query_fraction = 0.25;
  options.memory = [] { return MemoryGauge{0, 100 * kMiB}; };
  LoadController controller(options, [](LoadController::Owner) { return int64_t{0}; });
  auto query = [](int n) { return reinterpret_cast<LoadController::Owner>(static_cast<intptr_t>(n)); };
  // Estimates far beyond the pool (a misestimated join) are promised 25 MiB each: four run side by side.
  for (int i = 1; i <= 4; ++i) {
    EXPECT_TRUE(controller.Arrive(query(i), 1, {500 * kMiB, 900 * kMiB}, false).admitted) << i;
  }
  EXPECT_EQ(controller.Stats().claimable_bytes, 100 * kMiB);
  EXPECT_FALSE(controller.Arrive(query(5), 1, {1 * kMiB, 2 * kMiB}, false).admitted);
}

TEST_F(LoadControllerTest, WithNothingAdmittedTheFirstWaitingQueryRunsAnyway) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(200, 300), false).admitted)
      << "nothing else could ever free memory for it";
  EXPECT_FALSE(controller_->Arrive(Query(2), 1, Needs(200, 300), false).admitted);
  EXPECT_EQ(controller_->Leave(Query(1)), (std::vector<LoadController::Owner>{Query(2)}));
}

TEST_F(LoadControllerTest, FairPolicyNeverSuspendsRunningQueries) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(60, 80), false).admitted);
  LoadController::Decision decision = controller_->Arrive(Query(2), 5, Needs(50, 50), /*priority_policy=*/false);
  EXPECT_FALSE(decision.admitted);
  EXPECT_TRUE(decision.suspend.empty());
}

TEST_F(LoadControllerTest, HigherPriorityArrivalSuspendsTheLargestLowerPriorityQuery) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(10, 20), true).admitted);
  EXPECT_TRUE(controller_->Arrive(Query(2), 1, Needs(30, 50), true).admitted);
  EXPECT_TRUE(controller_->Arrive(Query(3), 3, Needs(10, 10), true).admitted);  // 10 free now
  footprints_[Query(2)] = 20 * kMiB;                                            // still 10 free
  // Priority 5 needs 30: suspending query 2 (largest commitment, 30 claimable) is enough; query 3 has a higher
  // priority than 1 and 2 but is below 5, yet it is not needed.
  LoadController::Decision decision = controller_->Arrive(Query(4), 5, Needs(30, 35), true);
  EXPECT_TRUE(decision.admitted);
  EXPECT_EQ(decision.suspend, (std::vector<LoadController::Owner>{Query(2)}));
  EXPECT_EQ(controller_->state(Query(2)), AdmissionState::kSuspended);
  EXPECT_EQ(controller_->suspensions(Query(2)), 1);
  LoadControlStats stats = controller_->Stats();
  EXPECT_EQ(stats.suspended, 1);
  EXPECT_EQ(stats.suspensions, 1);

  // When query 4 leaves, query 2 comes back with its 20 MiB held plus the 30 it gave back.
  EXPECT_EQ(controller_->Leave(Query(4)), (std::vector<LoadController::Owner>{Query(2)}));
  EXPECT_EQ(controller_->state(Query(2)), AdmissionState::kAdmitted);
  EXPECT_EQ(controller_->Stats().claimable_bytes, (20 + 30 + 10) * kMiB);
}

TEST_F(LoadControllerTest, NoSuspensionWhenItCannotMakeRoom) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(10, 20), true).admitted);
  EXPECT_TRUE(controller_->Arrive(Query(2), 4, Needs(60, 70), true).admitted);
  // Priority 3 needs 50: only query 1 (20) is below it; not enough, so nobody is suspended and it waits.
  LoadController::Decision decision = controller_->Arrive(Query(3), 3, Needs(50, 50), true);
  EXPECT_FALSE(decision.admitted);
  EXPECT_TRUE(decision.suspend.empty());
  EXPECT_EQ(controller_->state(Query(1)), AdmissionState::kAdmitted);
}

TEST_F(LoadControllerTest, ALowerPriorityThanEveryAdmittedQueryWaits) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 3, Needs(60, 80), true).admitted);
  LoadController::Decision decision = controller_->Arrive(Query(2), 1, Needs(50, 50), true);
  EXPECT_FALSE(decision.admitted);
  EXPECT_TRUE(decision.suspend.empty());
}

TEST_F(LoadControllerTest, QueriesThatHoldEverythingTheyAskedForAreNotSuspended) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(40, 40), true).admitted);
  EXPECT_TRUE(controller_->Arrive(Query(2), 1, Needs(40, 40), true).admitted);
  footprints_[Query(1)] = 40 * kMiB;  // nothing left to give back
  LoadController::Decision decision = controller_->Arrive(Query(3), 5, Needs(30, 30), true);
  EXPECT_TRUE(decision.admitted);
  EXPECT_EQ(decision.suspend, (std::vector<LoadController::Owner>{Query(2)}));
}

TEST_F(LoadControllerTest, ResumesHighestPriorityFirstThenTheMostRecentlySuspended) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(40, 40), true).admitted);
  EXPECT_TRUE(controller_->Arrive(Query(2), 1, Needs(30, 30), true).admitted);
  EXPECT_EQ(controller_->Arrive(Query(3), 2, Needs(40, 40), true).suspend,
            (std::vector<LoadController::Owner>{Query(1)}));
  EXPECT_EQ(controller_->Arrive(Query(4), 3, Needs(50, 50), true).suspend,
            (std::vector<LoadController::Owner>{Query(3)}));
  // Admitted: 2 (30) and 4 (50); suspended: 1 (gave back 40), 3 (gave back 40); a waiting priority-2 query.
  EXPECT_FALSE(controller_->Arrive(Query(5), 2, Needs(20, 20), true).admitted);
  // 4 leaves: 60 free. Priority 2 first, suspended (3) before waiting (5); 1 no longer fits.
  EXPECT_EQ(controller_->Leave(Query(4)), (std::vector<LoadController::Owner>{Query(3), Query(5)}));
  EXPECT_EQ(controller_->state(Query(1)), AdmissionState::kSuspended);
  EXPECT_EQ(controller_->Leave(Query(3)), (std::vector<LoadController::Owner>{Query(1)}));
}

TEST_F(LoadControllerTest, ReconfiguringAdmitsWhatNowFitsAndTurningOffAdmitsEverything) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(40, 60), false).admitted);
  EXPECT_FALSE(controller_->Arrive(Query(2), 1, Needs(40, 60), false).admitted);  // 30 free of M = 100
  EXPECT_FALSE(controller_->Arrive(Query(3), 1, Needs(40, 60), false).admitted);
  EXPECT_TRUE(controller_->Reconfigure(1.0, 1.0).empty()) << "nothing changed";
  // A 25 MiB cap per query: the waiting ones are now promised 25 each, so 2 fits into the 30 MiB left beside 1
  // (which keeps its 60), and 3 does not.
  std::vector<LoadController::Owner> admitted = controller_->Reconfigure(1.0, 0.25);
  EXPECT_EQ(admitted, (std::vector<LoadController::Owner>{Query(2)}));
  EXPECT_FALSE(controller_->Arrive(Query(4), 1, Needs(10, 20), false).admitted);
  std::vector<LoadController::Owner> all = controller_->Reconfigure(0, 0.25);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<LoadController::Owner>{Query(3), Query(4)}));
  EXPECT_FALSE(controller_->enabled());
  EXPECT_TRUE(controller_->Arrive(Query(6), 1, Needs(400, 600), false).admitted);
}

TEST_F(LoadControllerTest, OverTheThresholdNothingNewIsAdmitted) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(0, 0), false).admitted);
  footprints_[Query(1)] = 95 * kMiB;  // 105 MiB used of 100
  EXPECT_FALSE(controller_->Arrive(Query(2), 1, Needs(0, 0), false).admitted);
  footprints_.erase(Query(1));
  EXPECT_EQ(controller_->Leave(Query(1)), (std::vector<LoadController::Owner>{Query(2)}));
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// LoadControllerTest with spilling on: every byte a query holds is spillable (its
// footprint), and a finished spill moves it out of the gauge (the test does that, as the Foreman's spill does).
class SpillingLoadControllerTest : public LoadControllerTest {
 protected:
  SpillingLoadControllerTest() : LoadControllerTest(/*spilling=*/true) {}
};

TEST_F(SpillingLoadControllerTest, AnArrivalThatFitsOnlyAfterTheSpillWaitsForItThenRuns) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(60, 80), true).admitted);
  footprints_[Query(1)] = 70 * kMiB;  // 10 claimable, 10 free
  // Priority 5 needs 50: the claimable 10 are not enough, the 70 query 1 holds are; it is suspended and the new
  // query waits until the spill has freed them.
  LoadController::Decision decision = controller_->Arrive(Query(2), 5, Needs(50, 60), true);
  EXPECT_FALSE(decision.admitted);
  EXPECT_EQ(decision.suspend, (std::vector<LoadController::Owner>{Query(1)}));
  EXPECT_EQ(controller_->state(Query(1)), AdmissionState::kSuspended);
  EXPECT_EQ(controller_->state(Query(2)), AdmissionState::kWaiting);

  footprints_[Query(1)] = 0;  // spilled
  EXPECT_EQ(controller_->Spilled(Query(1), 70 * kMiB), (std::vector<LoadController::Owner>{Query(2)}));
  EXPECT_EQ(controller_->state(Query(2)), AdmissionState::kAdmitted);
  LoadControlStats stats = controller_->Stats();
  EXPECT_EQ(stats.spilled_bytes, 70 * kMiB);
  EXPECT_EQ(stats.spilled_bytes_total, 70 * kMiB);
  EXPECT_EQ(stats.suspended, 1);

  // Query 1 comes back only when its 70 spilled and 10 given back fit: after query 2 leaves (90 free).
  footprints_[Query(2)] = 55 * kMiB;
  EXPECT_TRUE(controller_->Spilled(Query(1), 0).empty()) << "reconsidering changes nothing while 2 runs";
  footprints_.erase(Query(2));
  EXPECT_EQ(controller_->Leave(Query(2)), (std::vector<LoadController::Owner>{Query(1)}));
  EXPECT_EQ(controller_->state(Query(1)), AdmissionState::kAdmitted);
  stats = controller_->Stats();
  EXPECT_EQ(stats.spilled_bytes, 0);
  EXPECT_EQ(stats.spilled_bytes_total, 70 * kMiB);
  EXPECT_EQ(stats.claimable_bytes, 80 * kMiB) << "committed = footprint 0 + spilled 70 + given back 10";
}

TEST_F(SpillingLoadControllerTest, ClaimableMemoryAloneStillAdmitsAtOnce) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(30, 80), true).admitted);
  footprints_[Query(1)] = 20 * kMiB;  // 60 claimable, 10 free
  LoadController::Decision decision = controller_->Arrive(Query(2), 5, Needs(40, 40), true);
  EXPECT_TRUE(decision.admitted) << "the claimable memory makes room without waiting for the spill";
  EXPECT_EQ(decision.suspend, (std::vector<LoadController::Owner>{Query(1)}));
}

TEST_F(SpillingLoadControllerTest, WithoutSpillingHeldMemoryDoesNotCount) {
  LoadControlOptions options;
  options.threshold_fraction = 1.0;
  options.max_query_fraction = 1.0;
  options.memory = [this] { return MemoryGauge{base_ + footprints_[Query(1)], 100 * kMiB}; };
  auto footprint = [this](LoadController::Owner owner) { return footprints_[owner]; };
  LoadController controller(options, footprint, footprint);  // no spill directory
  EXPECT_FALSE(controller.spilling());
  EXPECT_TRUE(controller.Arrive(Query(1), 1, Needs(60, 80), true).admitted);
  footprints_[Query(1)] = 70 * kMiB;
  LoadController::Decision decision = controller.Arrive(Query(2), 5, Needs(50, 60), true);
  EXPECT_FALSE(decision.admitted);
  EXPECT_TRUE(decision.suspend.empty()) << "suspending query 1 would free only its 10 claimable";
}

TEST_F(SpillingLoadControllerTest, AFailedOrEmptySpillStillLetsTheWaitingQueryRunWhenNothingElseRuns) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(60, 80), true).admitted);
  footprints_[Query(1)] = 70 * kMiB;
  EXPECT_FALSE(controller_->Arrive(Query(2), 5, Needs(50, 60), true).admitted);
  // The spill failed: query 1 still holds its 70, but nothing is admitted, so the waiting query runs anyway.
  EXPECT_EQ(controller_->Spilled(Query(1), 0), (std::vector<LoadController::Owner>{Query(2)}));
  EXPECT_EQ(controller_->Stats().spilled_bytes, 0);
}

TEST_F(SpillingLoadControllerTest, AQueryReadmittedWhileItsSpillRunsCountsTheBytesBeingWritten) {
  EXPECT_TRUE(controller_->Arrive(Query(1), 1, Needs(60, 80), true).admitted);
  footprints_[Query(1)] = 70 * kMiB;
  EXPECT_FALSE(controller_->Arrive(Query(2), 5, Needs(50, 60), true).admitted);
  controller_->SpillStarted(Query(1));
  // The spill has released its 70 but not reported them yet when query 2 leaves and query 1 is re-admitted.
  footprints_[Query(1)] = 0;
  EXPECT_EQ(controller_->Leave(Query(2)), (std::vector<LoadController::Owner>{Query(1)}));
  EXPECT_EQ(controller_->Stats().claimable_bytes, 80 * kMiB)
      << "committed = footprint before the spill 70 + 10 given back";
  EXPECT_TRUE(controller_->Spilled(Query(1), 70 * kMiB).empty());
  LoadControlStats stats = controller_->Stats();
  EXPECT_EQ(stats.claimable_bytes, 80 * kMiB) << "the 70 are not counted twice";
  EXPECT_EQ(stats.spilled_bytes, 0) << "held by an admitted query, read back before it runs";
  EXPECT_EQ(stats.spilled_bytes_total, 70 * kMiB);
  // A third query does not fit beside the 80 query 1 may claim back (100 - base 10 - 80 = 10 free).
  EXPECT_FALSE(controller_->Arrive(Query(3), 1, Needs(30, 30), true).admitted);
}

}  // namespace
}  // namespace tessera
