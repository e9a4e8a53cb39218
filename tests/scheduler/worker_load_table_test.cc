#include "scheduler/worker_load_table.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(WorkerLoadTableTest, ChoosesTheLeastLoadedBelowTheTarget) {
  WorkerLoadTable table(8);
  table.AddWorker(0, 0);
  table.AddWorker(1, 0);
  table.AddWorker(2, 0);
  for (int i = 0; i < 6; ++i) {
    const int w = table.Choose(-1, 2);
    ASSERT_GE(w, 0);
    table.OnDispatched(w);
  }
  // Uniform work orders: pending counts differ by at most one, and everyone is at the target.
  EXPECT_EQ(table.pending(0), 2);
  EXPECT_EQ(table.pending(1), 2);
  EXPECT_EQ(table.pending(2), 2);
  EXPECT_EQ(table.Choose(-1, 2), -1);
  table.OnFinished(1);
  EXPECT_EQ(table.Choose(-1, 2), 1);
}

TEST(WorkerLoadTableTest, PrefersTheWorkOrdersNodeWhileItHasRoom) {
  WorkerLoadTable table(8);
  table.AddWorker(0, 0);
  table.AddWorker(1, 1);
  table.AddWorker(2, 1);
  table.OnDispatched(1);  // node 1 is busier than node 0 but below the target
  EXPECT_EQ(table.Choose(1, 4), 2);
  table.OnDispatched(2);
  EXPECT_EQ(table.Choose(1, 4), 1);
  EXPECT_EQ(table.Choose(-1, 4), 0);
  // Node 1 full: a remote worker beats an idle one.
  for (int i = 0; i < 3; ++i) table.OnDispatched(1), table.OnDispatched(2);
  EXPECT_EQ(table.Choose(1, 4), 0);
  // Unknown node: anywhere.
  EXPECT_EQ(table.Choose(7, 4), 0);
}

TEST(WorkerLoadTableTest, DisabledWorkersAreNotChosenButStillTracked) {
  WorkerLoadTable table(4);
  table.AddWorker(0, 0);
  table.AddWorker(3, 0);
  table.OnDispatched(3);
  table.DisableWorker(3);
  EXPECT_EQ(table.num_dispatchable(), 1);
  EXPECT_EQ(table.num_disabled(), 1);
  EXPECT_TRUE(table.known(3));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(table.Choose(-1, 100), 0);
  table.OnFinished(3);
  table.RemoveWorker(3);
  EXPECT_FALSE(table.known(3));
  EXPECT_EQ(table.num_disabled(), 0);
}

TEST(WorkerLoadTableTest, PredictedTimeBoundsTheQueueNotTheCount) {
  WorkerLoadTable table(4);
  table.AddWorker(0, 0);
  table.AddWorker(1, 0);
  const PendingLimit limit{/*min_pending=*/1, /*max_pending=*/8, /*queued_ns=*/200'000};
  // Long work orders (5 ms): one per worker, however few that is; a query that becomes the policy's choice waits
  // for at most the running one.
  for (int i = 0; i < 2; ++i) table.OnDispatched(table.Choose(-1, limit), 5e6);
  EXPECT_EQ(table.pending(0), 1);
  EXPECT_EQ(table.pending(1), 1);
  EXPECT_EQ(table.Choose(-1, limit), -1);
  // Short ones (30 us) fill a freed worker up to the time bound: 7 x 30 us >= 200 us.
  table.OnFinished(0, 5e6);
  EXPECT_EQ(table.queued_ns(0), 0);
  int dispatched = 0;
  for (int w = table.Choose(-1, limit); w >= 0; w = table.Choose(-1, limit)) {
    EXPECT_EQ(w, 0);
    table.OnDispatched(w, 30'000);
    ++dispatched;
  }
  EXPECT_EQ(dispatched, 7);
  // Tiny ones stop at the count bound.
  table.OnFinished(1, 5e6);
  for (int i = 0; i < 8; ++i) table.OnDispatched(table.Choose(-1, limit), 1);
  EXPECT_EQ(table.pending(1), 8);
  EXPECT_EQ(table.Choose(-1, limit), -1);
}

TEST(WorkerLoadTableTest, PredictedTimeMinimumAndLeastQueuedTime) {
  WorkerLoadTable table(4);
  table.AddWorker(0, 1);
  table.AddWorker(1, 0);
  const PendingLimit limit{/*min_pending=*/2, /*max_pending=*/8, /*queued_ns=*/100};
  table.OnDispatched(0, 1000);
  table.OnDispatched(1, 3000);
  // Both over the time bound, both under the minimum: the one with less queued time, unless the node decides.
  EXPECT_EQ(table.Choose(-1, limit), 0);
  EXPECT_EQ(table.Choose(0, limit), 1);
  table.OnDispatched(0, 1000);
  EXPECT_EQ(table.Choose(1, limit), 1);  // node 1 full: a remote worker
  table.OnDispatched(1, 1000);
  EXPECT_EQ(table.Choose(-1, limit), -1);
}

}  // namespace
}  // namespace tessera
