#pragma once
// Drives one query's ExecutionDag (dissertation appendix A.1): activates an operator once every blocking
// producer has finished executing, feeds each block a producer writes to its pipelining consumers at once (and
// all blocks to blocking consumers when the producer is done), collects ready work orders, and tracks progress.
// Intermediate relations are dropped as soon as their last consumer has finished.
//
// Threading: every method is called from one thread at a time (the scheduler thread); work orders run elsewhere
// and report back through OnWorkOrderFinished.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "query_execution/execution_dag.h"

namespace tessera {

struct OperatorStatus {
  std::string name;
  enum class State { kWaiting, kRunning, kDone } state = State::kWaiting;
  int64_t issued = 0;
  int64_t finished = 0;
  int64_t estimated_total = -1;
  int64_t rows_in = 0;
  int64_t rows_out = 0;
  int64_t busy_ns = 0;
};

class QueryManager {
 public:
  explicit QueryManager(std::unique_ptr<ExecutionDag> dag);

  bool HasReadyWorkOrder() const { return !ready_.empty(); }
  // The operator index of the work order NextWorkOrder would return, -1 if none is ready.
  int NextWorkOrderOperator() const { return ready_.empty() ? -1 : ready_.front()->operator_index(); }
  // The next ready work order, or null.
  std::unique_ptr<WorkOrder> NextWorkOrder();
  // Reports a finished work order (`status` is what Execute returned; `elapsed_ns` its run time). The first error
  // cancels the query.
  void OnWorkOrderFinished(const WorkOrder& work_order, const absl::Status& status, int64_t elapsed_ns);
  // No work order is running or ready and none will be issued.
  bool IsFinished() const { return in_flight_ == 0 && (cancelled_ || finished_operators_ == dag_->size()); }
  bool IsOperatorDone(int index) const { return operators_[index].finished; }
  void Cancel(absl::Status reason);

  // OK, the first work-order error, or the cancellation reason.
  const absl::Status& status() const { return status_; }
  // The result relation; valid once IsFinished() and status().ok().
  std::shared_ptr<TemporaryRelation> result() const { return result_; }
  // Per operator, indexed like the DAG's operators.
  std::vector<OperatorStatus> Progress() const;
  // The DAG being run (its operators, edges and estimates); valid for the manager's life.
  const ExecutionDag& dag() const { return *dag_; }
  double FractionDone() const;

 private:
  struct OperatorRuntime {
    std::vector<int> in_edges;
    std::vector<int> out_edges;
    bool active = false;
    bool done_generating = false;
    bool finished = false;
    int64_t in_flight = 0;
    uint32_t fed_blocks_pipelined = 0;  // blocks of this operator's output already fed along pipelining edges
    OperatorStatus status;
  };

  void ActivateReadyOperators();
  void CollectWorkOrders(int index);
  void FeedNewBlocks(int producer, bool producer_finished);
  void FinishOperator(int index);
  void ReleaseIfUnneeded(int index);

  std::unique_ptr<ExecutionDag> dag_;
  std::vector<OperatorRuntime> operators_;
  std::deque<std::unique_ptr<WorkOrder>> ready_;
  std::shared_ptr<TemporaryRelation> result_;
  int64_t in_flight_ = 0;
  int finished_operators_ = 0;
  bool cancelled_ = false;
  absl::Status status_;
};

}  // namespace tessera
