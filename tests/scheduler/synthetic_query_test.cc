#include "scheduler/synthetic_query.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

// Runs a work order inline, as a worker would, and reports it back.
void RunAndFinish(SyntheticQuery& query, std::unique_ptr<WorkOrderTask> task, int worker_id = 0) {
  WorkerContext context{worker_id, -1, 0};
  task->Run(context);
  query.OnWorkOrderFinished(WorkOrderCompletion{query.query_id(), task->operator_id(), worker_id, 0, 1, task->rows()});
}

TEST(SyntheticQueryTest, IssuesEveryWorkOrderOnceThenFinishes) {
  SyntheticQuery query(SimpleSyntheticQuery(5, 3, 0));
  EXPECT_EQ(query.query_id(), 5);
  EXPECT_EQ(query.EstimatedRemainingWorkOrders(), 3);
  std::vector<std::unique_ptr<WorkOrderTask>> tasks;
  while (query.HasReadyWorkOrder()) tasks.push_back(query.NextWorkOrder());
  EXPECT_EQ(tasks.size(), 3u);
  EXPECT_EQ(query.NextWorkOrder(), nullptr);
  EXPECT_FALSE(query.IsFinished());
  for (auto& task : tasks) RunAndFinish(query, std::move(task));
  EXPECT_TRUE(query.IsFinished());
  EXPECT_TRUE(query.IsOperatorDone(0));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(query.executions(0, i), 1);
  QueryProgress progress = query.Progress();
  EXPECT_EQ(progress.finished, 3);
  EXPECT_DOUBLE_EQ(progress.fraction_done, 1.0);
  EXPECT_EQ(progress.operators[0].state, OperatorState::kDone);
}

TEST(SyntheticQueryTest, BlockingOperatorWaitsForItsProducerToFinishExecuting) {
  SyntheticQueryOptions options;
  options.query_id = 1;
  options.operators = {{"build", 2, 0, false, false, 0, 10}, {"probe", 2, 0, true, false, 0, 5}};
  SyntheticQuery query(options);
  auto a = query.NextWorkOrder();
  auto b = query.NextWorkOrder();
  EXPECT_EQ(a->operator_id(), 0);
  EXPECT_EQ(b->operator_id(), 0);
  // All of the build is issued but not finished: the probe must not start.
  EXPECT_FALSE(query.HasReadyWorkOrder());
  QueryProgress progress = query.Progress();
  EXPECT_EQ(progress.operators[0].state, OperatorState::kRunning);
  EXPECT_EQ(progress.operators[1].state, OperatorState::kWaiting);
  RunAndFinish(query, std::move(a));
  EXPECT_FALSE(query.HasReadyWorkOrder());
  RunAndFinish(query, std::move(b));
  ASSERT_TRUE(query.HasReadyWorkOrder());
  auto c = query.NextWorkOrder();
  EXPECT_EQ(c->operator_id(), 1);
  c->Run(WorkerContext{});
  EXPECT_EQ(c->rows(), 5);
}

TEST(SyntheticQueryTest, HeldWorkOrdersWaitForThePreviousOperatorAndTheNextOperatorIsKnown) {
  SyntheticQueryOptions options;
  options.query_id = 1;
  options.operators = {{"probe", 2, 0}, {"finalize", 2, 0}};
  options.operators[1].held_work_orders = 1;
  SyntheticQuery query(options);
  // Round robin: probe, finalize's first, probe; its second waits for the probe.
  std::vector<std::unique_ptr<WorkOrderTask>> tasks;
  for (int expected : {0, 1, 0}) {
    EXPECT_EQ(query.NextWorkOrderOperator(), expected);
    tasks.push_back(query.NextWorkOrder());
    EXPECT_EQ(tasks.back()->operator_id(), expected);
  }
  EXPECT_EQ(query.NextWorkOrderOperator(), -1);
  EXPECT_FALSE(query.HasReadyWorkOrder());
  RunAndFinish(query, std::move(tasks[1]));
  RunAndFinish(query, std::move(tasks[0]));
  EXPECT_FALSE(query.HasReadyWorkOrder());
  EXPECT_FALSE(query.IsOperatorDone(1));
  RunAndFinish(query, std::move(tasks[2]));
  EXPECT_EQ(query.NextWorkOrderOperator(), 1);
  auto last = query.NextWorkOrder();
  EXPECT_EQ(last->operator_id(), 1);
  RunAndFinish(query, std::move(last));
  EXPECT_TRUE(query.IsFinished());
}

TEST(SyntheticQueryTest, InelasticOperatorHasOneWorkOrderInFlight) {
  SyntheticQueryOptions options;
  options.query_id = 1;
  options.operators = {{"merge", 3, 0, false, /*inelastic=*/true, 0, 0}};
  SyntheticQuery query(options);
  EXPECT_TRUE(query.InInelasticPhase());
  auto a = query.NextWorkOrder();
  EXPECT_FALSE(query.HasReadyWorkOrder());
  RunAndFinish(query, std::move(a));
  EXPECT_TRUE(query.HasReadyWorkOrder());
}

TEST(SyntheticQueryTest, PipelinedOperatorsInterleave) {
  SyntheticQueryOptions options;
  options.query_id = 1;
  options.operators = {{"scan", 4, 0, false, false, 0, 0}, {"agg", 4, 0, false, false, 0, 0}};
  SyntheticQuery query(options);
  std::vector<int> ops;
  while (query.HasReadyWorkOrder()) ops.push_back(query.NextWorkOrder()->operator_id());
  EXPECT_EQ(ops, (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1}));
}

TEST(SyntheticQueryTest, CancelStopsIssuing) {
  SyntheticQuery query(SimpleSyntheticQuery(1, 10, 0));
  auto a = query.NextWorkOrder();
  query.Cancel();
  EXPECT_FALSE(query.HasReadyWorkOrder());
  EXPECT_EQ(query.NextWorkOrder(), nullptr);
  EXPECT_FALSE(query.IsFinished());  // one in flight
  RunAndFinish(query, std::move(a));
  EXPECT_TRUE(query.IsFinished());
  EXPECT_TRUE(query.Progress().cancelled);
}

TEST(SyntheticQueryTest, WorkOrdersSpreadOverPreferredNodes) {
  SyntheticQueryOptions options;
  options.query_id = 1;
  options.operators = {{"scan", 4, 0, false, false, /*preferred_nodes=*/2, 0}};
  SyntheticQuery query(options);
  std::vector<int> nodes;
  while (query.HasReadyWorkOrder()) nodes.push_back(query.NextWorkOrder()->preferred_node());
  EXPECT_EQ(nodes, (std::vector<int>{0, 1, 0, 1}));
}

}  // namespace
}  // namespace tessera
