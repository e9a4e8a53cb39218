#include "query_execution/query_manager.h"

#include <atomic>

#include "gtest/gtest.h"
#include "query_execution/local_executor.h"
#include "relational_operators/sort_operator.h"
#include "storage/topology.h"

namespace tessera {
namespace {

std::vector<ColumnSchema> OneBigInt() { return {{"v", Type::BigInt(), false, {}}}; }

// Produces `blocks` blocks of `rows` rows each (values 0, 1, 2, ... across blocks), one work order per block.
class ProducerOperator : public RelationalOperator {
 public:
  ProducerOperator(int blocks, int rows, BufferPool* pool, int fail_at = -1)
      : RelationalOperator("Producer"),
        blocks_(blocks),
        rows_(rows),
        fail_at_(fail_at),
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

// Sums its input, one work order per fed block; records whether the input was complete when it started. With
// `declares_consumed`, each work order declares the block it read consumed (WorkOrder::DeclareConsumedBlock).
class SumOperator : public RelationalOperator {
 public:
  SumOperator(std::shared_ptr<TemporaryRelation> input, std::atomic<int64_t>* sum, int* blocks_fed,
              bool declares_consumed = false)
      : RelationalOperator("Sum"),
        input_(std::move(input)),
        sum_(sum),
        blocks_fed_(blocks_fed),
        declares_consumed_(declares_consumed) {}
  bool ReleasesInputBlocks(int) const override { return declares_consumed_; }
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
    Add(SumOperator* op, uint32_t block) : WorkOrder(op->index(), -1), op_(op), block_(block) {
      if (op->declares_consumed_) DeclareConsumedBlock(0, block);
    }
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
  const bool declares_consumed_;
  std::vector<uint32_t> pending_;
  bool done_ = false;
};

// Runs `query` on the calling thread, one work order at a time in the order the QueryManager hands them out;
// returns the operator of every work order run, and the most the pool held after any work order finished.
std::vector<int> RunSerially(QueryManager& query, const BufferPool& pool, size_t* peak_bytes) {
  std::vector<int> order;
  const WorkOrderContext context{0, 1};
  while (std::unique_ptr<WorkOrder> work_order = query.NextWorkOrder()) {
    order.push_back(work_order->operator_index());
    absl::Status status = work_order->Execute(context);
    EXPECT_TRUE(status.ok()) << status;
    query.OnWorkOrderFinished(*work_order, status, 1);
    *peak_bytes = std::max(*peak_bytes, pool.Usage().used_bytes);
  }
  return order;
}

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

// A LIMIT without ORDER BY (a SortOperator without keys) fed as blocks are produced: once it has offset + limit
// rows it is satisfied and the operators feeding only it stop: here the producer runs 3 of its 40 work orders.
TEST_F(QueryManagerTest, ASatisfiedLimitStopsTheOperatorsFeedingOnlyIt) {
  auto dag = std::make_unique<ExecutionDag>();
  auto producer = std::make_unique<ProducerOperator>(40, 1000, &pool_);
  std::shared_ptr<TemporaryRelation> produced = producer->output();
  int p = dag->AddOperator(std::move(producer));
  int l = dag->AddOperator(std::make_unique<SortOperator>(produced, std::vector<SortKey>{}, /*limit=*/2500,
                                                          /*offset=*/100, &pool_));
  dag->AddEdge(p, l, 0, /*pipelining=*/true);
  dag->set_result_operator(l);
  QueryManager query(std::move(dag));
  size_t peak = 0;
  RunSerially(query, pool_, &peak);
  EXPECT_TRUE(query.IsFinished());
  ASSERT_TRUE(query.status().ok()) << query.status();
  auto progress = query.Progress();
  EXPECT_EQ(progress[p].issued, 3);  // 3,000 rows >= 100 + 2,500
  EXPECT_EQ(progress[p].finished, 3);
  EXPECT_EQ(progress[p].state, OperatorStatus::State::kDone);
  std::shared_ptr<TemporaryRelation> result = query.result();
  ASSERT_EQ(result->row_count(), 2500);
  int64_t expected = 100;  // serial run: the producer's blocks arrive in order
  for (uint32_t b = 0; b < result->block_count(); ++b) {
    BlockView view = result->block(b);
    for (uint32_t r = 0; r < view.row_count(); ++r) EXPECT_EQ(view.Values<int64_t>(0)[r], expected++);
  }
}

// Sums its input as SumOperator does and records when Start() was called: before any work order of the query
// ran (`started_before_work`), which a blocking edge cannot delay (a hash split's fragments on other ranks).
class StartRecordingSum : public SumOperator {
 public:
  StartRecordingSum(std::shared_ptr<TemporaryRelation> input, std::atomic<int64_t>* sum, int* blocks_fed)
      : SumOperator(input, sum, blocks_fed), input_(input) {}
  void Start() override {
    ++starts;
    started_before_work = input_->block_count() == 0;
  }
  int starts = 0;
  bool started_before_work = false;

 private:
  std::shared_ptr<TemporaryRelation> input_;
};

TEST_F(QueryManagerTest, StartsEveryOperatorOnceBeforeItsBlockingInputsFinish) {
  auto dag = std::make_unique<ExecutionDag>();
  auto producer = std::make_unique<ProducerOperator>(4, 10, &pool_);
  std::shared_ptr<TemporaryRelation> produced = producer->output();
  int p = dag->AddOperator(std::move(producer));
  std::atomic<int64_t> sum{0};
  int fed = 0;
  auto consumer = std::make_unique<StartRecordingSum>(produced, &sum, &fed);
  StartRecordingSum* recording = consumer.get();
  int s = dag->AddOperator(std::move(consumer));
  dag->AddEdge(p, s, 0, /*pipelining=*/false);
  dag->set_result_operator(p);
  QueryManager query(std::move(dag));
  EXPECT_EQ(recording->starts, 1);
  EXPECT_TRUE(recording->started_before_work);
  size_t peak = 0;
  RunSerially(query, pool_, &peak);
  ASSERT_TRUE(query.status().ok()) << query.status();
  EXPECT_EQ(recording->starts, 1);  // not again when the blocking edge lets it run
  EXPECT_EQ(sum.load(), 39 * 40 / 2);
}

// The producer also feeds the query's result (a sum): a satisfied LIMIT beside it must not stop it.
TEST_F(QueryManagerTest, ASatisfiedLimitDoesNotStopAProducerThatFeedsOthersToo) {
  auto dag = std::make_unique<ExecutionDag>();
  auto producer = std::make_unique<ProducerOperator>(40, 1000, &pool_);
  std::shared_ptr<TemporaryRelation> produced = producer->output();
  std::atomic<int64_t> sum{0};
  int blocks_fed = 0;
  int p = dag->AddOperator(std::move(producer));
  int l = dag->AddOperator(std::make_unique<SortOperator>(produced, std::vector<SortKey>{}, 10, 0, &pool_));
  int s = dag->AddOperator(std::make_unique<SumOperator>(produced, &sum, &blocks_fed));
  dag->AddEdge(p, l, 0, /*pipelining=*/true);
  dag->AddEdge(p, s, 0, /*pipelining=*/true);
  dag->set_result_operator(s);
  QueryManager query(std::move(dag));
  size_t peak = 0;
  RunSerially(query, pool_, &peak);
  ASSERT_TRUE(query.IsFinished());
  ASSERT_TRUE(query.status().ok()) << query.status();
  EXPECT_EQ(query.Progress()[p].issued, 40);
  const int64_t n = 40 * 1000;
  EXPECT_EQ(sum.load(), n * (n - 1) / 2);
  EXPECT_EQ(query.Progress()[l].state, OperatorStatus::State::kDone);
}

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

// Consumers first: each block the producer writes is read (and, when declared consumed, freed) before the
// producer's next work order runs, so a streaming pipeline holds one of its blocks at a time instead of all ten.
TEST_F(QueryManagerTest, ConsumersRunFirstAndFreeEachStreamedBlockOnceRead) {
  size_t peaks[2] = {0, 0};
  for (bool declares : {true, false}) {
    auto dag = std::make_unique<ExecutionDag>();
    auto producer = std::make_unique<ProducerOperator>(10, 1000, &pool_);
    std::shared_ptr<TemporaryRelation> produced = producer->output();
    std::atomic<int64_t> sum{0};
    int blocks_fed = 0;
    int p = dag->AddOperator(std::move(producer));
    int s = dag->AddOperator(std::make_unique<SumOperator>(produced, &sum, &blocks_fed, declares));
    int r = dag->AddOperator(std::make_unique<ProducerOperator>(1, 10, &pool_));
    dag->AddEdge(p, s, 0, /*pipelining=*/true);
    dag->AddEdge(s, r, 0, /*pipelining=*/false);
    dag->set_result_operator(r);
    QueryManager query(std::move(dag));
    std::vector<int> order = RunSerially(query, pool_, &peaks[declares ? 0 : 1]);
    ASSERT_TRUE(query.IsFinished());
    ASSERT_TRUE(query.status().ok()) << query.status();
    std::vector<int> expected;
    for (int b = 0; b < 10; ++b) expected.insert(expected.end(), {p, s});
    expected.push_back(r);
    EXPECT_EQ(order, expected);
    EXPECT_EQ(sum.load(), 10'000 * 9'999 / 2);
    EXPECT_EQ(produced->block_count(), 10u);  // indexes and row counts stay
    EXPECT_EQ(produced->row_count(), 10'000);
  }
  EXPECT_LT(peaks[0] * 4, peaks[1]);
}

// Elastic pipelining's limits (SetOperatorLimits): an operator hands out no work order while its in-flight cap is
// reached, nor while its running pipelining consumer holds its backlog cap of ready + in-flight work orders; the
// query is then not ready, and becomes ready again as work orders finish. The answer is unchanged.
TEST_F(QueryManagerTest, OperatorLimitsHoldBackAProducerUntilWorkOrdersFinish) {
  auto dag = std::make_unique<ExecutionDag>();
  auto producer = std::make_unique<ProducerOperator>(12, 100, &pool_);
  std::shared_ptr<TemporaryRelation> produced = producer->output();
  std::atomic<int64_t> sum{0};
  int blocks_fed = 0;
  int p = dag->AddOperator(std::move(producer));
  int s = dag->AddOperator(std::make_unique<SumOperator>(produced, &sum, &blocks_fed, /*declares_consumed=*/true));
  dag->AddEdge(p, s, 0, /*pipelining=*/true);
  dag->set_result_operator(s);
  QueryManager query(std::move(dag));
  query.SetOperatorLimits(p, /*max_in_flight=*/2, /*max_consumer_backlog=*/3);
  const WorkOrderContext context{0, 1};
  auto finish = [&](std::unique_ptr<WorkOrder> work_order) {
    ASSERT_TRUE(work_order->Execute(context).ok());
    query.OnWorkOrderFinished(*work_order, absl::OkStatus(), 1);
  };

  // In-flight cap: two producer work orders out, the third waits.
  std::unique_ptr<WorkOrder> a = query.NextWorkOrder();
  std::unique_ptr<WorkOrder> b = query.NextWorkOrder();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(query.HasReadyWorkOrder());
  EXPECT_EQ(query.NextWorkOrder(), nullptr);
  EXPECT_EQ(query.NextWorkOrderOperator(), -1);
  finish(std::move(a));  // feeds one block: the consumer's work order comes first (consumers first)
  ASSERT_TRUE(query.HasReadyWorkOrder());
  std::unique_ptr<WorkOrder> c1 = query.NextWorkOrder();
  ASSERT_EQ(c1->operator_index(), s);
  finish(std::move(b));
  std::unique_ptr<WorkOrder> c2 = query.NextWorkOrder();
  ASSERT_EQ(c2->operator_index(), s);
  // Backlog cap: the consumer has 2 in flight; one more block makes 3 and holds the producer back.
  std::unique_ptr<WorkOrder> d = query.NextWorkOrder();
  ASSERT_EQ(d->operator_index(), p);
  finish(std::move(d));
  std::unique_ptr<WorkOrder> c3 = query.NextWorkOrder();
  ASSERT_EQ(c3->operator_index(), s);
  EXPECT_FALSE(query.HasReadyWorkOrder());
  finish(std::move(c1));
  ASSERT_TRUE(query.HasReadyWorkOrder());
  EXPECT_EQ(query.NextWorkOrderOperator(), p);
  finish(std::move(c2));
  finish(std::move(c3));

  // The rest runs to the same answer, the limits holding throughout.
  std::vector<std::unique_ptr<WorkOrder>> out;
  while (!query.IsFinished()) {
    while (std::unique_ptr<WorkOrder> work_order = query.NextWorkOrder()) out.push_back(std::move(work_order));
    ASSERT_FALSE(out.empty());
    int64_t producers_out = 0;
    for (const auto& work_order : out) producers_out += work_order->operator_index() == p ? 1 : 0;
    EXPECT_LE(producers_out, 2);
    finish(std::move(out.front()));
    out.erase(out.begin());
  }
  ASSERT_TRUE(query.status().ok()) << query.status();
  EXPECT_EQ(sum.load(), 1200 * 1199 / 2);
}

// A block is freed only once every consumer has declared it consumed; one that never declares keeps the whole
// relation until it finishes; the result relation is never freed early.
TEST_F(QueryManagerTest, FreesABlockOnlyWhenEveryConsumerDeclaredIt) {
  size_t peaks[2] = {0, 0};
  for (bool second_declares : {true, false}) {
    auto dag = std::make_unique<ExecutionDag>();
    auto producer = std::make_unique<ProducerOperator>(6, 1000, &pool_);
    std::shared_ptr<TemporaryRelation> produced = producer->output();
    std::atomic<int64_t> sum1{0}, sum2{0};
    int fed1 = 0, fed2 = 0;
    int p = dag->AddOperator(std::move(producer));
    int s1 = dag->AddOperator(std::make_unique<SumOperator>(produced, &sum1, &fed1, /*declares_consumed=*/true));
    int s2 = dag->AddOperator(std::make_unique<SumOperator>(produced, &sum2, &fed2, second_declares));
    dag->AddEdge(p, s1, 0, /*pipelining=*/true);
    dag->AddEdge(p, s2, 0, /*pipelining=*/true);
    dag->set_result_operator(s2);
    QueryManager query(std::move(dag));
    size_t peak = 0;
    RunSerially(query, pool_, &peak);
    ASSERT_TRUE(query.status().ok()) << query.status();
    EXPECT_EQ(sum1.load(), 6'000 * 5'999 / 2);
    EXPECT_EQ(sum2.load(), sum1.load());
    peaks[second_declares ? 0 : 1] = peak;
  }
  EXPECT_LT(peaks[0] * 4, peaks[1]);
  EXPECT_EQ(pool_.Usage().used_bytes, 0u);

  // The producer is the result: its blocks stay although its consumer declares them consumed.
  auto dag = std::make_unique<ExecutionDag>();
  auto producer = std::make_unique<ProducerOperator>(4, 100, &pool_);
  std::shared_ptr<TemporaryRelation> produced = producer->output();
  std::atomic<int64_t> sum{0};
  int fed = 0;
  int p = dag->AddOperator(std::move(producer));
  int s = dag->AddOperator(std::make_unique<SumOperator>(produced, &sum, &fed, /*declares_consumed=*/true));
  dag->AddEdge(p, s, 0, /*pipelining=*/true);
  dag->set_result_operator(p);
  QueryManager query(std::move(dag));
  size_t peak = 0;
  RunSerially(query, pool_, &peak);
  ASSERT_TRUE(query.status().ok());
  int64_t rows = 0;
  for (uint32_t b = 0; b < produced->block_count(); ++b) rows += produced->block(b).row_count();
  EXPECT_EQ(rows, 400);
}

}  // namespace
}  // namespace tessera
