// The Foreman's "message arrived" event: an operator whose work becomes ready on a thread of its own (an exchange
// receiving from other ranks, distributed/gather_operator.h) holds no worker while it waits; its wake-up
// (RelationalOperator::SetWakeUp -> Foreman::Poke) makes the Foreman ask it again.
#include <atomic>
#include <memory>
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

}  // namespace
}  // namespace tessera
