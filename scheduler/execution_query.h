#pragma once
// Adapts one query's QueryManager (query_execution/) to the Foreman's SchedulableQuery interface, so real
// queries run under the scheduler's policies exactly like synthetic ones.
//
// Threading: as SchedulableQuery requires, every method except the work orders' Execute runs on the scheduler
// thread. A work order records its outcome (status, duration) in a small mutex-protected list when it finishes on
// its worker; OnWorkOrderFinished, which the Foreman calls once per executed work order, hands one recorded outcome
// to the QueryManager (which outcome does not matter: they are all reported in the end).
//
// Size-based scheduling hints (SRPT, IF-SRPT):
//   - EstimatedRemainingWorkOrders: the QueryManager's DAG estimate (query_manager.h: per unfinished operator,
//     its expected work orders from base-table blocks, blocks fed and blocks its producers are still expected to
//     write, minus those finished, at least 1), 0 once cancelled. The Foreman multiplies it by the query's
//     predicted work-order time.
//   - InInelasticPhase: the query's ready plus running work orders are fewer than `workers` (the worker
//     threads of the pool it runs on), so it cannot use every worker now: a serial start (a small dimension
//     scan), a single finalize / merge / sort merge, or the last work orders of a phase.

#include <memory>
#include <mutex>
#include <vector>

#include "query_execution/query_manager.h"
#include "relational_operators/temporary_relation.h"
#include "scheduler/elastic_pipelining.h"
#include "scheduler/schedulable_query.h"

namespace tessera {

class ExecutionQuery : public SchedulableQuery {
 public:
  // `workers`: the worker threads the query's Foreman runs (for InInelasticPhase); >= 1.
  ExecutionQuery(QueryId id, int priority, std::unique_ptr<QueryManager> manager, int workers);

  QueryId query_id() const override { return id_; }
  int priority() const override { return priority_; }
  bool HasReadyWorkOrder() const override {
    return !cancelled_ && manager_->HasReadyWorkOrder() && !ResultBacklogFull();
  }
  std::unique_ptr<WorkOrderTask> NextWorkOrder() override;
  ScanSharing scan_sharing() const override { return scan_sharing_; }
  // Before Foreman::Submit.
  void set_scan_sharing(ScanSharing sharing) { scan_sharing_ = sharing; }
  std::unique_ptr<WorkOrderTask> TakeSharedScanWorkOrder(uint64_t block_key) override;
  void OnWorkOrderFinished(const WorkOrderCompletion& completion) override;
  bool IsOperatorDone(int operator_id) const override { return manager_->IsOperatorDone(operator_id); }
  bool IsFinished() const override { return cancelled_ || manager_->IsFinished(); }
  void Cancel() override;
  void OnPoke() override {
    if (!cancelled_) manager_->PollOperators();
  }
  QueryProgress Progress() const override;
  // The optimizer's estimate (ExecutionDag::memory_estimate) and what the query's operators hold now.
  QueryMemoryRequest MemoryRequest() const override;
  int64_t MemoryFootprint() const override { return manager_->dag().CurrentMemoryBytes(); }
  // Spills the DAG's memory account (BufferPool::SpillTo) to `directory`/query_<id>.spill, leaving a streamed
  // result's unsent blocks in memory (its reader may be reading them).
  int64_t SpillableBytes() const override;
  absl::StatusOr<int64_t> SpillMemory(const std::string& directory, const std::atomic<bool>& cancel) override;
  absl::Status RestoreMemory() override;
  int64_t EstimatedRemainingWorkOrders() const override;
  bool EstimatedRemainingWorkOrdersByOperator(std::vector<int64_t>* by_operator) const override;
  // A hash of the DAG's EXPLAIN text (operators, their details and estimates), computed at construction.
  uint64_t PlanSignature() const override { return plan_signature_; }
  bool InInelasticPhase() const override;
  int NextWorkOrderOperator() const override { return cancelled_ ? -1 : manager_->NextWorkOrderOperator(); }

  // SET pipelining = elastic (scheduler/elastic_pipelining.h): per-operator limits from measured rates, applied to
  // the QueryManager (SetOperatorLimits) after every finished work order and every change of the worker share.
  // Before Foreman::Submit.
  void set_elastic_pipelining(bool elastic);
  bool elastic_pipelining() const { return elastic_ != nullptr; }
  void SetWorkerShare(double workers) override;

  // Streaming results (engine/query_statement.cc): while the result relation holds more than `bytes` that its
  // reader has not released (TemporaryRelation::live_bytes), the query has no ready work order and rides no shared
  // scan, so a slow client pauses its query instead of growing the result; the reader calls Foreman::Poke after
  // releasing blocks. 0 (the default): no limit. Before Foreman::Submit.
  void set_result_backlog_limit(size_t bytes) { result_backlog_limit_ = bytes; }
  bool ResultBacklogFull() const { return result_backlog_limit_ > 0 && result_->live_bytes() > result_backlog_limit_; }

  // After the query's handle completed: the query's own status (first work-order error) and its result.
  const QueryManager& manager() const { return *manager_; }

 private:
  class Task;
  struct Outcome {
    std::unique_ptr<WorkOrder> work_order;
    absl::Status status;
    int64_t elapsed_ns;
    bool shared;
  };
  void Record(Outcome outcome);
  void ApplyElasticLimits();

  const QueryId id_;
  const int priority_;
  const int workers_;
  std::unique_ptr<QueryManager> manager_;
  const TemporaryRelation* result_;  // the manager's result relation
  uint64_t plan_signature_ = 0;
  bool cancelled_ = false;
  ScanSharing scan_sharing_ = ScanSharing::kOff;
  size_t result_backlog_limit_ = 0;
  std::unique_ptr<ElasticPipelining> elastic_;  // null unless SET pipelining = elastic
  double worker_share_;                         // SetWorkerShare; the pool's workers until told
  std::mutex mutex_;
  std::vector<Outcome> finished_;
};

}  // namespace tessera
