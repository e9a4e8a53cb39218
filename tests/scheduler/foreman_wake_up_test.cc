// The Foreman's "message arrived" event: an operator whose work becomes ready on a thread of its own (an exchange
// receiving from other ranks, distributed/gather_operator.h) holds no worker while it waits; its wake-up
// (RelationalOperator::SetWakeUp -> Foreman::Poke) makes the Foreman ask it again.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "catalog/value.h"
#include "query_execution/execution_dag.h"
#include "query_execution/query_manager.h"
#include "scheduler/execution_query.h"
#include "storage/block_builder.h"
#include "storage/buffer_pool.h"
#include "storage/topology.h"
#include "tests/scheduler/foreman_test_util.h"

namespace tessera {
namespace {

// Hands out one work order once `arrived` is set by another thread (which then calls the wake-up), none before.
class WaitingOperator : public RelationalOperator {
 public:
  WaitingOperator(const std::atomic<bool>* arrived, BufferPool* pool)
      : RelationalOperator("waiting"),
        arrived_(arrived),
        output_(
            std::make_shared<TemporaryRelation>(std::vector<ColumnSchema>{{"v", Type::BigInt(), false, {}}}, pool)) {}

  void SetWakeUp(std::function<void()> wake_up) override { wake_up_ = std::move(wake_up); }
  const std::function<void()>& wake_up() const { return wake_up_; }

  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override {
    if (!arrived_->load()) return false;
    out->push_back(std::make_unique<Done>(index(), &ran_));
    return true;
  }
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  bool ran() const { return ran_.load(); }

 private:
  class Done : public WorkOrder {
   public:
    Done(int index, std::atomic<bool>* ran) : WorkOrder(index, -1), ran_(ran) {}
    absl::Status Execute(const WorkOrderContext&) override {
      ran_->store(true);
      return absl::OkStatus();
    }

   private:
    std::atomic<bool>* ran_;
  };

  const std::atomic<bool>* arrived_;
  std::shared_ptr<TemporaryRelation> output_;
  std::function<void()> wake_up_;
  std::atomic<bool> ran_{false};
};

TEST(ForemanWakeUpTest, AnOperatorWaitingOutsideItsWorkOrdersIsAskedAgainWhenWoken) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(1, 1);
  BufferPool pool(16 << 20, topology.get());
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(1));
  std::atomic<bool> arrived{false};
  auto dag = std::make_unique<ExecutionDag>();
  auto waiting = std::make_unique<WaitingOperator>(&arrived, &pool);
  WaitingOperator* op = waiting.get();
  dag->set_result_operator(dag->AddOperator(std::move(waiting)));
  constexpr QueryId kId = 77;
  op->SetWakeUp([&foreman] { foreman->Poke(kId).IgnoreError(); });
  auto query = std::make_shared<ExecutionQuery>(kId, 1, std::make_unique<QueryManager>(std::move(dag)), 1);
  QueryHandle handle = SubmitOrDie(*foreman, query);
  // Nothing to run and nothing running: the query waits, holding no worker, and is not asked again by itself.
  EXPECT_FALSE(handle.WaitFor(std::chrono::milliseconds(200)));
  EXPECT_FALSE(op->ran());
  std::thread receiver([&] {
    arrived.store(true);
    op->wake_up()();
  });
  ASSERT_TRUE(handle.WaitFor(std::chrono::seconds(60)));
  receiver.join();
  EXPECT_TRUE(handle.Wait().status.ok()) << handle.Wait().status;
  EXPECT_TRUE(op->ran());
}

// Reads its pipelining input: counts the blocks fed to it (on the scheduler thread), done once its input is.
class CountingConsumer : public RelationalOperator {
 public:
  CountingConsumer() : RelationalOperator("counting") {}
  void FeedInputBlock(int, uint32_t) override { fed_.fetch_add(1); }
  void DoneFeedingInput(int) override { input_done_ = true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>*) override { return input_done_; }
  int fed() const { return fed_.load(); }

 private:
  std::atomic<int> fed_{0};
  bool input_done_ = false;
};

// A streaming gather: blocks its producer appends from another thread reach a pipelining consumer when the
// producer wakes the Foreman, before the producer is done.
TEST(ForemanWakeUpTest, BlocksAppendedOutsideWorkOrdersAreFedWhenWoken) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(1, 1);
  BufferPool pool(16 << 20, topology.get());
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(1));
  std::atomic<bool> ended{false};
  auto dag = std::make_unique<ExecutionDag>();
  auto producing = std::make_unique<WaitingOperator>(&ended, &pool);
  WaitingOperator* producer = producing.get();
  auto consuming = std::make_unique<CountingConsumer>();
  CountingConsumer* consumer = consuming.get();
  const int producer_index = dag->AddOperator(std::move(producing));
  const int consumer_index = dag->AddOperator(std::move(consuming));
  dag->AddEdge(producer_index, consumer_index, 0, /*pipelining=*/true);
  dag->set_result_operator(consumer_index);
  constexpr QueryId kId = 78;
  producer->SetWakeUp([&foreman] { foreman->Poke(kId).IgnoreError(); });
  auto query = std::make_shared<ExecutionQuery>(kId, 1, std::make_unique<QueryManager>(std::move(dag)), 1);
  QueryHandle handle = SubmitOrDie(*foreman, query);
  std::thread receiver([&] {
    BlockBuilder builder(producer->output()->schema(), 1 << 20);
    ASSERT_TRUE(producer->output()->AppendValueRow(builder, {Value::BigInt(7)}).ok());
    ASSERT_TRUE(producer->output()->AppendBlock(builder).ok());
    producer->wake_up()();
  });
  receiver.join();
  for (int i = 0; i < 6000 && consumer->fed() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(consumer->fed(), 1);  // fed while the producer still waits
  EXPECT_FALSE(producer->ran());
  ended.store(true);
  producer->wake_up()();
  ASSERT_TRUE(handle.WaitFor(std::chrono::seconds(60)));
  EXPECT_TRUE(handle.Wait().status.ok()) << handle.Wait().status;
  EXPECT_EQ(consumer->fed(), 1);  // not again when the producer finishes
}

// Issues `count` work orders at once; each counts itself, and the first sets `started` and waits until `release`
// is set (holding the only worker).
class BusyOperator : public RelationalOperator {
 public:
  BusyOperator(int count, std::atomic<bool>* started, const std::atomic<bool>* release)
      : RelationalOperator("busy"), count_(count), started_(started), release_(release) {}

  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override {
    for (int i = 0; i < count_; ++i) {
      out->push_back(std::make_unique<Step>(index(), i == 0 ? started_ : nullptr, i == 0 ? release_ : nullptr, &ran_));
    }
    return true;
  }
  int ran() const { return ran_.load(); }

 private:
  class Step : public WorkOrder {
   public:
    Step(int index, std::atomic<bool>* started, const std::atomic<bool>* release, std::atomic<int>* ran)
        : WorkOrder(index, -1), started_(started), release_(release), ran_(ran) {}
    absl::Status Execute(const WorkOrderContext&) override {
      if (started_ != nullptr) started_->store(true);
      while (release_ != nullptr && !release_->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ran_->fetch_add(1);
      return absl::OkStatus();
    }

   private:
    std::atomic<bool>* started_;
    const std::atomic<bool>* release_;
    std::atomic<int>* ran_;
  };

  const int count_;
  std::atomic<bool>* started_;
  const std::atomic<bool>* release_;
  std::atomic<int> ran_{0};
};

// Waits outside its work orders (an exchange's streams) and never issues one; another thread records a failure
// and wakes the scheduler.
class FailingOperator : public RelationalOperator {
 public:
  FailingOperator() : RelationalOperator("failing") {}
  void SetWakeUp(std::function<void()> wake_up) override { wake_up_ = std::move(wake_up); }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>*) override { return false; }
  absl::Status ExternalFailure() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }
  void Fail(absl::Status failure) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::move(failure);
    }
    wake_up_();
  }

 private:
  mutable std::mutex mutex_;
  absl::Status failure_;
  std::function<void()> wake_up_;
};

// A gather whose rank died while the master's only worker is busy with the query's own work orders: the wake-up
// fails the query with the exchange's error once the work order in flight ends; the other ready work orders never
// run (before, the error waited for a worker to run the exchange's outcome work order, behind all of them).
TEST(ForemanWakeUpTest, AnOperatorFailsItsQueryWithoutAWorkOrder) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(1, 1);
  std::unique_ptr<Foreman> foreman = MakeForeman(TestForemanOptions(1));
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  constexpr int kSteps = 50;
  auto dag = std::make_unique<ExecutionDag>();
  auto busy_owned = std::make_unique<BusyOperator>(kSteps, &started, &release);
  BusyOperator* busy = busy_owned.get();
  auto failing_owned = std::make_unique<FailingOperator>();
  FailingOperator* failing = failing_owned.get();
  const int busy_index = dag->AddOperator(std::move(busy_owned));
  const int failing_index = dag->AddOperator(std::move(failing_owned));
  // The result reads both, so neither is the query's last operator.
  auto result_owned = std::make_unique<CountingConsumer>();
  const int result_index = dag->AddOperator(std::move(result_owned));
  dag->AddEdge(busy_index, result_index, 0, /*pipelining=*/false);
  dag->AddEdge(failing_index, result_index, 1, /*pipelining=*/false);
  dag->set_result_operator(result_index);
  constexpr QueryId kId = 79;
  failing->SetWakeUp([&foreman] { foreman->Poke(kId).IgnoreError(); });
  auto query = std::make_shared<ExecutionQuery>(kId, 1, std::make_unique<QueryManager>(std::move(dag)), 1);
  QueryHandle handle = SubmitOrDie(*foreman, query);
  for (int i = 0; i < 6000 && !started.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(started.load());  // the only worker runs the first busy work order and waits
  failing->Fail(absl::UnavailableError("rank 1 stopped answering"));
  // The Foreman takes the wake-up before the worker's completion, which follows the release.
  EXPECT_FALSE(handle.WaitFor(std::chrono::milliseconds(100)));  // the work order in flight still finishes
  release.store(true);
  ASSERT_TRUE(handle.WaitFor(std::chrono::seconds(60)));
  // The query's own status (the engine reports it, ExecutionQuery::manager), as a work order's error would be.
  EXPECT_EQ(query->manager().status().code(), absl::StatusCode::kUnavailable) << query->manager().status();
  EXPECT_EQ(std::string(query->manager().status().message()), "rank 1 stopped answering");
  EXPECT_LT(busy->ran(), kSteps);
}

}  // namespace
}  // namespace tessera
