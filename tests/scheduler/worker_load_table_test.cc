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

}  // namespace
}  // namespace tessera
