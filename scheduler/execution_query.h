#pragma once
// Adapts one query's QueryManager (query_execution/) to the Foreman's SchedulableQuery interface, so real
// queries run under the scheduler's policies exactly like synthetic ones.
//
// Threading: as SchedulableQuery requires, every method except the work orders' Execute runs on the scheduler
// thread. A work order records its outcome (status, duration) in a small mutex-protected list when it finishes on
// its worker; OnWorkOrderFinished, which the Foreman calls once per executed work order, hands one recorded outcome
// to the QueryManager (which outcome does not matter: they are all reported in the end).

#include <memory>
#include <mutex>
#include <vector>

#include "query_execution/query_manager.h"
#include "scheduler/schedulable_query.h"

namespace tessera {

class ExecutionQuery : public SchedulableQuery {
 public:
  ExecutionQuery(QueryId id, int priority, std::unique_ptr<QueryManager> manager);

  QueryId query_id() const override { return id_; }
  int priority() const override { return priority_; }
  bool HasReadyWorkOrder() const override { return !cancelled_ && manager_->HasReadyWorkOrder(); }
  std::unique_ptr<WorkOrderTask> NextWorkOrder() override;
  void OnWorkOrderFinished(const WorkOrderCompletion& completion) override;
  bool IsOperatorDone(int operator_id) const override { return manager_->IsOperatorDone(operator_id); }
  bool IsFinished() const override { return cancelled_ || manager_->IsFinished(); }
  void Cancel() override;
  QueryProgress Progress() const override;
  int NextWorkOrderOperator() const override { return cancelled_ ? -1 : manager_->NextWorkOrderOperator(); }

  // After the query's handle completed: the query's own status (first work-order error) and its result.
  const QueryManager& manager() const { return *manager_; }

 private:
  class Task;
  struct Outcome {
    std::unique_ptr<WorkOrder> work_order;
    absl::Status status;
    int64_t elapsed_ns;
  };
  void Record(Outcome outcome);

  const QueryId id_;
  const int priority_;
  std::unique_ptr<QueryManager> manager_;
  bool cancelled_ = false;
  std::mutex mutex_;
  std::vector<Outcome> finished_;
};

}  // namespace tessera
