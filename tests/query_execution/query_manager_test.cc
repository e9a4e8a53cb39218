#include "query_execution/query_manager.h"

#include <atomic>

#include "gtest/gtest.h"
#include "query_execution/local_executor.h"
#include "storage/topology.h"

namespace tessera {
namespace {

std::vector<ColumnSchema> OneBigInt() { return {{"v", Type::BigInt(), false, {}}}; }

// Produces `blocks` blocks of `rows` rows each (values 0, 1, 2, ... across blocks), one work order per block.
class ProducerOperator : public RelationalOperator {
 public:
  ProducerOperator(int blocks, int rows, BufferPool* pool, int fail_at = -1)
      : RelationalOperator("Producer"), blocks_(blocks), rows_(rows), fail_at_(fail_at),
        output_(std::make_shared<TemporaryRelation>(OneBigInt(), pool)) {}

  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override {
    for (int b = 0; b < blocks_; ++b) out->push_back(std::make_unique<Produce>(this, b));
    return true;
  }
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }

 private:
  class Produce : public WorkOrder {
   public:
    Produce(ProducerOperator* op, int block) : WorkOrder(op->index(), -1), op_(op), block_(block) {}
    absl::Status Execute(const WorkOrderContext&) override {
      if (block_ == op_->fail_at_) return absl::OutOfRangeError("injected failure");
      BlockBuilder builder(OneBigInt(), 1 << 20);
      for (int r = 0; r < op_->rows_; ++r) {
        builder.Append<int64_t>(0, int64_t{block_} * op_->rows_ + r);
        if (!builder.CommitRow()) return absl::InternalError("block full");
      }
      rows_out_ = op_->rows_;
      return op_->output_->AppendBlock(builder).status();
    }

   private:
    ProducerOperator* op_;
    int block_;
  };

  const int blocks_, rows_, fail_at_;
  std::shared_ptr<TemporaryRelation> output_;
};

// Sums its input, one work order per fed block; records whether the input was complete when it started.
class SumOperator : public RelationalOperator {
 public:
  SumOperator(std::shared_ptr<TemporaryRelation> input, std::atomic<int64_t>* sum, int* blocks_fed)
      : RelationalOperator("Sum"), input_(std::move(input)), sum_(sum), blocks_fed_(blocks_fed) {}
  void FeedInputBlock(int, uint32_t block) override {
    pending_.push_back(block);
    ++*blocks_fed_;
  }
  void DoneFeedingInput(int) override { done_ = true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override {
    for (uint32_t block : pending_) out->push_back(std::make_unique<Add>(this, block));
    pending_.clear();
    return done_;
  }

 private:
  class Add : public WorkOrder {
   public:
    Add(SumOperator* op, uint32_t block) : WorkOrder(op->index(), -1), op_(op), block_(block) {}
    absl::Status Execute(const WorkOrderContext&) override {
      BlockView view = op_->input_->block(block_);
      int64_t sum = 0;
      for (uint32_t r = 0; r < view.row_count(); ++r) sum += view.Values<int64_t>(0)[r];
      op_->sum_->fetch_add(sum);
      rows_in_ = view.row_count();
      return absl::OkStatus();
    }

   private:
    SumOperator* op_;
    uint32_t block_;
  };

  std::shared_ptr<TemporaryRelation> input_;
  std::atomic<int64_t>* sum_;
  int* blocks_fed_;
  std::vector<uint32_t> pending_;
  bool done_ = false;
};

class QueryManagerTest : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<Topology> topology_ = MakeFakeTopology(1, 2);
  BufferPool pool_{256 << 20, topology_.get()};
};

TEST_P(QueryManagerTest, FeedsEveryBlockOnceAndFinishes) {
  const bool pipelining = GetParam();
  auto dag = std::make_unique<ExecutionDag>();
  auto producer = std::make_unique<ProducerOperator>(40, 1000, &pool_);
  std::shared_ptr<TemporaryRelation> produced = producer->output();
  std::atomic<int64_t> sum{0};
  int blocks_fed = 0;
  int p = dag->AddOperator(std::move(producer));
  int s = dag->AddOperator(std::make_unique<SumOperator>(produced, &sum, &blocks_fed));
  dag->AddEdge(p, s, 0, pipelining);
  dag->set_result_operator(p);
  QueryManager query(std::move(dag));
  ASSERT_TRUE(RunQueryLocally(query, 2).ok());
  EXPECT_TRUE(query.IsFinished());
  EXPECT_EQ(blocks_fed, 40);
  const int64_t n = 40 * 1000;
  EXPECT_EQ(sum.load(), n * (n - 1) / 2);
  auto progress = query.Progress();
  EXPECT_EQ(progress[0].issued, 40);
  EXPECT_EQ(progress[1].finished, 40);
  EXPECT_EQ(progress[1].rows_in, n);
  EXPECT_DOUBLE_EQ(query.FractionDone(), 1.0);
}

INSTANTIATE_TEST_SUITE_P(PipeliningAndBlocking, QueryManagerTest, ::testing::Bool());

// The scheduler's LearningAgent predicts with the history of the operator the next work order comes from.
TEST_F(QueryManagerTest, NextWorkOrderOperatorIsThatOfTheNextReadyWorkOrder) {
  auto dag = std::make_unique<ExecutionDag>();
  auto producer = std::make_unique<ProducerOperator>(2, 10, &pool_);
  std::shared_ptr<TemporaryRelation> produced = producer->output();
  std::atomic<int64_t> sum{0};
  int blocks_fed = 0;
  int p = dag->AddOperator(std::move(producer));
  int s = dag->AddOperator(std::make_unique<SumOperator>(produced, &sum, &blocks_fed));
  dag->AddEdge(p, s, 0, /*pipelining=*/true);
  dag->set_result_operator(p);
  QueryManager query(std::move(dag));
  EXPECT_EQ(query.NextWorkOrderOperator(), p);
  std::unique_ptr<WorkOrder> first = query.NextWorkOrder();
  std::unique_ptr<WorkOrder> second = query.NextWorkOrder();
  EXPECT_EQ(query.NextWorkOrderOperator(), -1);
  const WorkOrderContext context{0, 1};
  ASSERT_TRUE(first->Execute(context).ok());
  query.OnWorkOrderFinished(*first, absl::OkStatus(), 1);
  EXPECT_EQ(query.NextWorkOrderOperator(), s);  // the block it wrote was fed to the sum
  ASSERT_TRUE(second->Execute(context).ok());
  query.OnWorkOrderFinished(*second, absl::OkStatus(), 1);
  while (query.HasReadyWorkOrder()) {
    EXPECT_EQ(query.NextWorkOrderOperator(), s);
    std::unique_ptr<WorkOrder> add = query.NextWorkOrder();
    ASSERT_TRUE(add->Execute(context).ok());
    query.OnWorkOrderFinished(*add, absl::OkStatus(), 1);
  }
  EXPECT_EQ(query.NextWorkOrderOperator(), -1);
  EXPECT_TRUE(query.IsFinished());
  EXPECT_EQ(sum.load(), 19 * 20 / 2);
}

TEST_F(QueryManagerTest, AWorkOrderErrorFailsTheQueryAndFreesIntermediates) {
  {
    auto dag = std::make_unique<ExecutionDag>();
    auto producer = std::make_unique<ProducerOperator>(30, 1000, &pool_, /*fail_at=*/7);
    std::shared_ptr<TemporaryRelation> produced = producer->output();
    std::atomic<int64_t> sum{0};
    int blocks_fed = 0;
    int p = dag->AddOperator(std::move(producer));
    int s = dag->AddOperator(std::make_unique<SumOperator>(std::move(produced), &sum, &blocks_fed));
    dag->AddEdge(p, s, 0, true);
    dag->set_result_operator(s);
    QueryManager query(std::move(dag));
    absl::Status status = RunQueryLocally(query, 2);
    EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
    EXPECT_EQ(status.message(), "injected failure");
    EXPECT_TRUE(query.IsFinished());
  }
  EXPECT_EQ(pool_.Usage().used_bytes, 0u);
}

TEST_F(QueryManagerTest, DropsAnIntermediateOnceItsConsumerFinished) {
  auto dag = std::make_unique<ExecutionDag>();
  auto producer = std::make_unique<ProducerOperator>(10, 1000, &pool_);
  std::weak_ptr<TemporaryRelation> produced = producer->output();
  std::atomic<int64_t> sum{0};
  int blocks_fed = 0;
  int p = dag->AddOperator(std::move(producer));
  auto consumer = std::make_unique<SumOperator>(produced.lock(), &sum, &blocks_fed);
  auto result = std::make_unique<ProducerOperator>(1, 10, &pool_);
  int s = dag->AddOperator(std::move(consumer));
  int r = dag->AddOperator(std::move(result));
  dag->AddEdge(p, s, 0, false);
  dag->AddEdge(s, r, 0, false);
  dag->set_result_operator(r);
  QueryManager query(std::move(dag));
  ASSERT_TRUE(RunQueryLocally(query, 2).ok());
  EXPECT_TRUE(produced.expired());
  EXPECT_EQ(query.result()->row_count(), 10);
}

}  // namespace
}  // namespace tessera
