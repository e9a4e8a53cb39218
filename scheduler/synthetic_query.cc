#include "scheduler/synthetic_query.h"

#include <glog/logging.h>

#include "common/clock.h"

namespace tessera {

struct SyntheticQuery::Operator {
  SyntheticOperatorSpec spec;
  int64_t issued = 0;
  int64_t finished = 0;
  int64_t in_flight = 0;
  std::unique_ptr<std::atomic<int32_t>[]> executions;  // per work order, when tracked
};

class SyntheticQuery::SpinWorkOrder final : public WorkOrderTask {
 public:
  SpinWorkOrder(SyntheticQuery* query, int operator_id, int64_t index, int preferred_node, int64_t spin_ns,
                int64_t rows, std::atomic<int32_t>* execution_counter)
      : WorkOrderTask(operator_id, preferred_node),
        query_(query),
        spin_ns_(spin_ns),
        rows_(rows),
        execution_counter_(execution_counter) {
    (void)index;
  }

 protected:
  int64_t Execute(const WorkerContext& context) override {
    if (spin_ns_ > 0) {
      const int64_t until = MonotonicNanos() + spin_ns_;
      while (MonotonicNanos() < until) {
      }
    }
    if (execution_counter_ != nullptr) {
      execution_counter_->fetch_add(1, std::memory_order_relaxed);
      if (preferred_node() >= 0) {
        (preferred_node() == context.node ? query_->on_preferred_node_ : query_->elsewhere_)
            .fetch_add(1, std::memory_order_relaxed);
      }
    }
    return rows_;
  }

 private:
  SyntheticQuery* const query_;
  const int64_t spin_ns_;
  const int64_t rows_;
  std::atomic<int32_t>* const execution_counter_;
};

SyntheticQueryOptions SimpleSyntheticQuery(QueryId id, int64_t work_orders, int64_t spin_ns, int priority) {
  SyntheticQueryOptions options;
  options.query_id = id;
  options.priority = priority;
  SyntheticOperatorSpec spec;
  spec.name = "spin";
  spec.work_orders = work_orders;
  spec.spin_ns = spin_ns;
  options.operators.push_back(spec);
  return options;
}

SyntheticQuery::SyntheticQuery(SyntheticQueryOptions options) : options_(std::move(options)) {
  for (const SyntheticOperatorSpec& spec : options_.operators) {
    auto op = std::make_unique<Operator>();
    op->spec = spec;
    if (options_.track_executions && spec.work_orders > 0) {
      op->executions.reset(new std::atomic<int32_t>[spec.work_orders]);
      for (int64_t i = 0; i < spec.work_orders; ++i) op->executions[i].store(0, std::memory_order_relaxed);
    }
    total_ += spec.work_orders;
    operators_.push_back(std::move(op));
  }
  if (options_.dispatch_clock != nullptr) dispatch_sequence_.reserve(total_);
}

SyntheticQuery::~SyntheticQuery() = default;

bool SyntheticQuery::Startable(int index) const {
  if (index == 0 || !operators_[index]->spec.blocking_input) return true;
  return IsOperatorDone(index - 1);
}

bool SyntheticQuery::OperatorReady(int index) const {
  const Operator& op = *operators_[index];
  if (op.issued >= op.spec.work_orders) return false;
  if (op.spec.inelastic && op.in_flight > 0) return false;
  const bool held = op.issued >= op.spec.work_orders - op.spec.held_work_orders;
  if (held && index > 0 && !IsOperatorDone(index - 1)) return false;
  return Startable(index);
}

int SyntheticQuery::NextReadyOperator() const {
  if (cancelled_) return -1;
  const int count = static_cast<int>(operators_.size());
  for (int k = 0, index = next_operator_; k < count; ++k, index = index + 1 == count ? 0 : index + 1) {
    if (OperatorReady(index)) return index;
  }
  return -1;
}

bool SyntheticQuery::HasReadyWorkOrder() const {
  if (cancelled_) return false;
  for (int i = 0; i < static_cast<int>(operators_.size()); ++i) {
    if (OperatorReady(i)) return true;
  }
  return false;
}

int SyntheticQuery::NextWorkOrderOperator() const { return NextReadyOperator(); }

std::unique_ptr<WorkOrderTask> SyntheticQuery::NextWorkOrder() {
  const int index = NextReadyOperator();
  if (index < 0) return nullptr;
  next_operator_ = index + 1 == static_cast<int>(operators_.size()) ? 0 : index + 1;
  Operator& op = *operators_[index];
  const int64_t work_order = op.issued++;
  ++op.in_flight;
  ++in_flight_;
  issued_total_.fetch_add(1, std::memory_order_relaxed);
  if (options_.dispatch_clock != nullptr) {
    dispatch_sequence_.push_back(options_.dispatch_clock->fetch_add(1, std::memory_order_relaxed));
  }
  const int node = op.spec.preferred_nodes > 0 ? static_cast<int>(work_order % op.spec.preferred_nodes) : -1;
  auto task =
      std::make_unique<SpinWorkOrder>(this, index, work_order, node, op.spec.spin_ns, op.spec.rows_per_work_order,
                                      op.executions ? &op.executions[work_order] : nullptr);
  task->set_cost_override_ns(op.spec.reported_ns);
  return task;
}

void SyntheticQuery::OnWorkOrderFinished(const WorkOrderCompletion& completion) {
  Operator& op = *operators_[completion.operator_id];
  ++op.finished;
  --op.in_flight;
  --in_flight_;
  finished_total_.fetch_add(1, std::memory_order_relaxed);
  if (completion.worker_id >= static_cast<int>(finished_by_worker_.size())) {
    finished_by_worker_.resize(completion.worker_id + 1, 0);
  }
  ++finished_by_worker_[completion.worker_id];
}

bool SyntheticQuery::IsOperatorDone(int operator_id) const {
  const Operator& op = *operators_[operator_id];
  return op.finished == op.spec.work_orders;
}

bool SyntheticQuery::IsFinished() const {
  if (cancelled_) return in_flight_ == 0;
  for (const auto& op : operators_) {
    if (op->finished < op->spec.work_orders) return false;
  }
  return true;
}

void SyntheticQuery::Cancel() { cancelled_ = true; }

QueryProgress SyntheticQuery::Progress() const {
  QueryProgress progress;
  progress.query_id = options_.query_id;
  progress.cancelled = cancelled_;
  for (int i = 0; i < static_cast<int>(operators_.size()); ++i) {
    const Operator& op = *operators_[i];
    OperatorProgress entry;
    entry.operator_id = i;
    entry.name = op.spec.name;
    entry.issued = op.issued;
    entry.finished = op.finished;
    entry.estimated_total = op.spec.work_orders;
    if (IsOperatorDone(i)) {
      entry.state = OperatorState::kDone;
    } else if (op.issued > 0) {
      entry.state = OperatorState::kRunning;
    } else {
      entry.state = OperatorState::kWaiting;
    }
    progress.issued += op.issued;
    progress.finished += op.finished;
    progress.operators.push_back(std::move(entry));
  }
  progress.fraction_done = total_ == 0 ? 1.0 : static_cast<double>(progress.finished) / static_cast<double>(total_);
  return progress;
}

int64_t SyntheticQuery::EstimatedRemainingWorkOrders() const {
  return total_ - finished_total_.load(std::memory_order_relaxed);
}

bool SyntheticQuery::EstimatedRemainingWorkOrdersByOperator(std::vector<int64_t>* by_operator) const {
  by_operator->resize(operators_.size());
  for (size_t i = 0; i < operators_.size(); ++i) {
    (*by_operator)[i] = cancelled_ ? 0 : operators_[i]->spec.work_orders - operators_[i]->finished;
  }
  return true;
}

bool SyntheticQuery::InInelasticPhase() const {
  for (int i = 0; i < static_cast<int>(operators_.size()); ++i) {
    const Operator& op = *operators_[i];
    if (op.spec.inelastic && !IsOperatorDone(i) && Startable(i)) return true;
  }
  return false;
}

int SyntheticQuery::executions(int operator_id, int64_t index) const {
  const Operator& op = *operators_[operator_id];
  return op.executions ? op.executions[index].load(std::memory_order_relaxed) : -1;
}

std::vector<int64_t> SyntheticQuery::finished_by_worker() const { return finished_by_worker_; }

}  // namespace tessera
