#include "scheduler/execution_query.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "query_execution/dag_printer.h"

namespace tessera {

class ExecutionQuery::Task : public WorkOrderTask {
 public:
  Task(ExecutionQuery* query, std::unique_ptr<WorkOrder> work_order)
      : WorkOrderTask(work_order->operator_index(), work_order->preferred_node(), work_order->shared_scan().block_key),
        query_(query),
        work_order_(std::move(work_order)) {}

 protected:
  int64_t Execute(const WorkerContext& context) override {
    WorkOrderContext work_context{context.worker_id < 0 ? 0 : context.worker_id, 0, cancel_flag()};
    int64_t start = MonotonicNanos();
    absl::Status status = work_order_->Execute(work_context);
    int64_t elapsed = MonotonicNanos() - start;
    int64_t rows = work_order_->rows_out();
    query_->Record(Outcome{std::move(work_order_), std::move(status), elapsed, shared()});
    return rows;
  }

 private:
  ExecutionQuery* query_;
  std::unique_ptr<WorkOrder> work_order_;
};

ExecutionQuery::ExecutionQuery(QueryId id, int priority, std::unique_ptr<QueryManager> manager, int workers)
    : id_(id),
      priority_(std::max(1, priority)),
      workers_(std::max(1, workers)),
      manager_(std::move(manager)),
      result_(manager_->result().get()),
      plan_signature_(std::max<uint64_t>(1, HashString(DagToText(manager_->dag())))),
      worker_share_(static_cast<double>(workers_)) {}

void ExecutionQuery::set_elastic_pipelining(bool elastic) {
  if (!elastic) {
    elastic_.reset();
    return;
  }
  const ExecutionDag& dag = manager_->dag();
  std::vector<ElasticPipelining::Edge> edges;
  for (const DagEdge& edge : dag.edges()) {
    if (edge.pipelining && edge.consumer_input != DagEdge::kOrderingOnly)
      edges.push_back({edge.producer, edge.consumer});
  }
  elastic_ = std::make_unique<ElasticPipelining>(dag.size(), std::move(edges));
}

void ExecutionQuery::SetWorkerShare(double workers) {
  worker_share_ = workers;
  ApplyElasticLimits();
}

void ExecutionQuery::ApplyElasticLimits() {
  if (elastic_ == nullptr || cancelled_) return;
  const std::vector<ElasticPipelining::Limit>& limits =
      elastic_->Compute(worker_share_, [&](int op) { return manager_->IsOperatorRunning(op); });
  for (int op = 0; op < static_cast<int>(limits.size()); ++op) {
    manager_->SetOperatorLimits(op, limits[op].max_in_flight, limits[op].max_consumer_backlog);
  }
}

std::unique_ptr<WorkOrderTask> ExecutionQuery::NextWorkOrder() {
  if (cancelled_) return nullptr;
  std::unique_ptr<WorkOrder> work_order = manager_->NextWorkOrder();
  if (work_order == nullptr) return nullptr;
  return std::make_unique<Task>(this, std::move(work_order));
}

std::unique_ptr<WorkOrderTask> ExecutionQuery::TakeSharedScanWorkOrder(uint64_t block_key) {
  if (cancelled_ || ResultBacklogFull()) return nullptr;
  std::unique_ptr<WorkOrder> work_order = manager_->TakeSharedScanWorkOrder(block_key);
  if (work_order == nullptr) return nullptr;
  return std::make_unique<Task>(this, std::move(work_order));
}

void ExecutionQuery::Record(Outcome outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_.push_back(std::move(outcome));
}

void ExecutionQuery::OnWorkOrderFinished(const WorkOrderCompletion&) {
  Outcome outcome;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_.empty()) return;
    outcome = std::move(finished_.back());
    finished_.pop_back();
  }
  const int op = outcome.work_order->operator_index();
  const uint32_t blocks_before = manager_->OutputBlocksWritten(op);
  manager_->OnWorkOrderFinished(*outcome.work_order, outcome.status, outcome.elapsed_ns, outcome.shared);
  // A failed work order cancels the query inside the QueryManager; stop issuing too.
  if (!manager_->status().ok()) cancelled_ = true;
  if (elastic_ != nullptr) {
    elastic_->Record(op, outcome.elapsed_ns, manager_->OutputBlocksWritten(op) - blocks_before);
    ApplyElasticLimits();
  }
}

void ExecutionQuery::Cancel() {
  cancelled_ = true;
  manager_->Cancel(absl::CancelledError("query cancelled"));
}

int64_t ExecutionQuery::EstimatedRemainingWorkOrders() const {
  return cancelled_ ? 0 : manager_->EstimatedRemainingWorkOrders();
}

bool ExecutionQuery::EstimatedRemainingWorkOrdersByOperator(std::vector<int64_t>* by_operator) const {
  if (cancelled_) {
    by_operator->clear();
  } else {
    manager_->EstimatedRemainingWorkOrders(by_operator);
  }
  return true;
}

bool ExecutionQuery::InInelasticPhase() const {
  return !IsFinished() && manager_->ReadyOrRunningWorkOrders() < workers_;
}

QueryProgress ExecutionQuery::Progress() const {
  QueryProgress progress;
  progress.query_id = id_;
  std::vector<OperatorStatus> operators = manager_->Progress();
  for (size_t i = 0; i < operators.size(); ++i) {
    OperatorProgress op;
    op.operator_id = static_cast<int>(i);
    op.name = operators[i].name;
    op.state = operators[i].state == OperatorStatus::State::kDone      ? OperatorState::kDone
               : operators[i].state == OperatorStatus::State::kRunning ? OperatorState::kRunning
                                                                       : OperatorState::kWaiting;
    op.issued = operators[i].issued;
    op.finished = operators[i].finished;
    op.estimated_total = operators[i].estimated_total;
    op.rows_out = operators[i].rows_out;
    progress.issued += op.issued;
    progress.finished += op.finished;
    progress.operators.push_back(std::move(op));
  }
  progress.fraction_done = manager_->FractionDone();
  progress.cancelled = cancelled_;
  return progress;
}

int64_t ExecutionQuery::SpillableBytes() const {
  const BufferPool* account = manager_->dag().memory_account();
  return account == nullptr ? 0 : static_cast<int64_t>(account->SpillableBytes());
}

absl::StatusOr<int64_t> ExecutionQuery::SpillMemory(const std::string& directory, const std::atomic<bool>& cancel) {
  BufferPool* account = manager_->dag().memory_account();
  if (account == nullptr) return 0;
  absl::flat_hash_set<const void*> keep;
  if (result_backlog_limit_ > 0) {
    for (const void* block : result_->LiveBlockAddresses()) keep.insert(block);
  }
  TESSERA_ASSIGN_OR_RETURN(size_t spilled,
                           account->SpillTo(absl::StrCat(directory, "/query_", id_, ".spill"), keep, &cancel));
  return static_cast<int64_t>(spilled);
}

absl::Status ExecutionQuery::RestoreMemory() {
  BufferPool* account = manager_->dag().memory_account();
  return account == nullptr ? absl::OkStatus() : account->RestoreSpilled();
}

QueryMemoryRequest ExecutionQuery::MemoryRequest() const {
  const QueryMemoryEstimate& estimate = manager_->dag().memory_estimate();
  return QueryMemoryRequest{estimate.min_bytes, estimate.max_bytes};
}

}  // namespace tessera
