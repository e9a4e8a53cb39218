#pragma once
// What the Foreman schedules: the SchedulableQuery interface (implemented by query_execution's QueryManager,
// and by SyntheticQuery for tests and benchmarks), its work orders, and the records that flow back.
//
// Threading contract: the Foreman calls every SchedulableQuery method from its single scheduler thread only,
// between Foreman::Submit and the moment the query's handle completes; so a QueryManager needs no locks for
// scheduler-facing state. Progress for other threads is fetched through Foreman::GetProgress, which runs
// Progress() on the scheduler thread. WorkOrderTask::Execute runs on a worker thread, concurrently with the
// Foreman and with other work orders of the same query.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "threading/task.h"

namespace tessera {

using QueryId = int64_t;

// Shared scans (scheduler/README.md): whether the Foreman may run a query's base-table work orders back to back
// with other queries' work orders on the same block. kFull shares with every admitted query that scans the block
// (under a priority policy: with queries of the same priority); kBatch only within a batch whose working sets fit
// the cache together and whose work orders take similar times (the seed's BatchSharing).
enum class ScanSharing { kOff, kFull, kBatch };
const char* ScanSharingName(ScanSharing sharing);
// "off", "full" or "batch" (case-insensitive); false for anything else.
bool ParseScanSharing(std::string_view text, ScanSharing* sharing);

// What a worker reports for one finished work order (the Foreman fills it from the task and the worker's
// times).
struct WorkOrderCompletion {
  QueryId query_id = 0;
  int operator_id = 0;
  int worker_id = -1;
  int64_t start_ns = 0;  // monotonic (common/clock.h)
  int64_t end_ns = 0;
  int64_t rows = 0;  // what Execute returned (rows produced)
  // Nonzero when the work order ran in a shared scan, back to back with other queries' work orders on this
  // base-table block (its key); 0 otherwise.
  uint64_t shared_block_key = 0;
};

// One work order: an operator's self-contained piece of work (typically one input block). Created by
// SchedulableQuery::NextWorkOrder on the scheduler thread, executed on a worker, destroyed on the scheduler
// thread after OnWorkOrderFinished.
class WorkOrderTask : public Task {
 public:
  // `preferred_node` is the NUMA node of the work order's input (-1: any); the Foreman prefers a worker
  // there.
  // `shared_scan_key`: the base-table block the work order reads (SchedulableQuery::TakeSharedScanWorkOrder), 0
  // when it reads none.
  explicit WorkOrderTask(int operator_id, int preferred_node = -1, uint64_t shared_scan_key = 0)
      : operator_id_(operator_id), preferred_node_(preferred_node), shared_scan_key_(shared_scan_key) {}

  int operator_id() const { return operator_id_; }
  int preferred_node() const { return preferred_node_; }
  uint64_t shared_scan_key() const { return shared_scan_key_; }
  // Set by the Foreman before dispatch when the work order runs in a shared scan; `rode_along`: it was taken along
  // with another query's work order on the same block, not picked for its own query.
  bool shared() const { return shared_; }
  bool rode_along() const { return rode_along_; }
  void set_shared(bool shared, bool rode_along = false) {
    shared_ = shared;
    rode_along_ = rode_along;
  }
  // Time slices: the CPU time the Foreman charged the query's virtual time at dispatch (its prediction), to be
  // corrected by the measured time at completion. Not for query implementations.
  double charged_ns() const { return charged_ns_; }
  void set_charged_ns(double charged_ns) { charged_ns_ = charged_ns; }
  // The work order's predicted time at dispatch, counted in its worker's queue until it finishes (the Foreman's
  // dispatch depth). Not for query implementations.
  double predicted_ns() const { return predicted_ns_; }
  void set_predicted_ns(double predicted_ns) { predicted_ns_ = predicted_ns; }
  // Tests only (SyntheticOperatorSpec::reported_ns): the duration the Foreman records for this work order (the
  // LearningAgent, CPU accounting, the work-order log) instead of the measured one, so that tests of decisions
  // made from learned costs do not depend on how fast a loaded machine ran them. 0 (the default): measured.
  int64_t cost_override_ns() const { return cost_override_ns_; }
  void set_cost_override_ns(int64_t ns) { cost_override_ns_ = ns; }
  // Valid after the task ran.
  int64_t rows() const { return rows_; }
  // True if the work order was not executed because its query was cancelled while it sat in a worker's queue.
  bool skipped() const { return skipped_; }

  // Task: runs Execute unless the query has been cancelled meanwhile.
  void Run(const WorkerContext& context) final;

  // Set by the Foreman at dispatch; not for query implementations.
  void BindForDispatch(void* dispatch_owner, const std::atomic<bool>* cancelled) {
    dispatch_owner_ = dispatch_owner;
    cancelled_ = cancelled;
  }
  void* dispatch_owner() const { return dispatch_owner_; }

 protected:
  // The work itself. Runs on a worker thread to completion (no preemption); returns the number of rows
  // produced. Must not throw; an internal failure is recorded in the query's own state and reported by the
  // query.
  virtual int64_t Execute(const WorkerContext& context) = 0;
  // The query's cancel flag bound at dispatch (null before), for long work orders to poll.
  const std::atomic<bool>* cancel_flag() const { return cancelled_; }

 private:
  const int operator_id_;
  const int preferred_node_;
  const uint64_t shared_scan_key_;
  bool shared_ = false;
  bool rode_along_ = false;
  double charged_ns_ = 0;
  double predicted_ns_ = 0;
  int64_t cost_override_ns_ = 0;
  int64_t rows_ = 0;
  bool skipped_ = false;
  void* dispatch_owner_ = nullptr;
  const std::atomic<bool>* cancelled_ = nullptr;
};

enum class OperatorState { kWaiting, kRunning, kDone };

struct OperatorProgress {
  int operator_id = 0;
  std::string name;
  OperatorState state = OperatorState::kWaiting;
  int64_t issued = 0;            // work orders handed to the Foreman
  int64_t finished = 0;          // work orders completed
  int64_t estimated_total = -1;  // expected work orders over the operator's life, -1 if unknown
  int64_t rows_out = 0;          // rows its finished work orders wrote (a load: rows loaded so far)
};

// What the optimizer expects a query to need, in bytes (query_execution/memory_estimate.h); {0, 0} = unknown.
struct QueryMemoryRequest {
  int64_t min_bytes = 0;
  int64_t max_bytes = 0;
};

struct QueryProgress {
  QueryId query_id = 0;
  // Filled by Foreman::GetProgress: "admitted", "waiting for memory" or "suspended" (the LoadController's
  // view), and the query's current scheduling priority.
  std::string admission = "admitted";
  int priority = 1;
  std::vector<OperatorProgress> operators;
  int64_t issued = 0;
  int64_t finished = 0;
  double fraction_done = 0;  // in [0, 1]
  bool cancelled = false;
};

// One query as the scheduler sees it. See the threading contract at the top of this file.
class SchedulableQuery {
 public:
  virtual ~SchedulableQuery() = default;

  virtual QueryId query_id() const = 0;
  // Larger is more important; the initial priority (Foreman::SetPriority changes it later). Must be >= 1.
  virtual int priority() const { return 1; }

  // Whether NextWorkOrder would return a work order now. May change only as a result of a Foreman call on
  // this query (NextWorkOrder, OnWorkOrderFinished, Cancel); a query whose readiness changes for another
  // reason must call Foreman::Poke(query_id) so the Foreman looks again.
  virtual bool HasReadyWorkOrder() const = 0;
  // The next work order, or null if none is ready.
  virtual std::unique_ptr<WorkOrderTask> NextWorkOrder() = 0;
  // Shared scans: whether and how this query shares, and a ready work order reading the base-table block
  // `block_key` (WorkOrderTask::shared_scan_key), handed out as NextWorkOrder would, or null if none is ready.
  virtual ScanSharing scan_sharing() const { return ScanSharing::kOff; }
  virtual std::unique_ptr<WorkOrderTask> TakeSharedScanWorkOrder(uint64_t block_key) { return nullptr; }
  // Foreman::Poke for this query (also the "message arrived" event of exchanges): work the query waited for
  // outside its work orders may be ready; ExecutionQuery asks its operators again.
  virtual void OnPoke() {}
  // Called once per executed work order (not for work orders skipped after Cancel).
  virtual void OnWorkOrderFinished(const WorkOrderCompletion& completion) = 0;
  // Whether all work orders of `operator_id` have finished and it will issue no more (the LearningAgent then
  // drops the operator's history).
  virtual bool IsOperatorDone(int operator_id) const = 0;
  // True when the query has no more work: every issued work order finished and none will be issued.
  virtual bool IsFinished() const = 0;

  // Stop producing work orders (HasReadyWorkOrder() must return false from now on) and release what can be
  // released. In-flight work orders still complete; the Foreman reports the query cancelled once they have.
  virtual void Cancel() = 0;

  virtual QueryProgress Progress() const = 0;

  // Optional hints for the LoadController: the memory the query expects to need, and what it holds now in the
  // buffer pool (called on the scheduler thread at admission decisions; must be cheap and thread-safe towards
  // the query's running work orders).
  virtual QueryMemoryRequest MemoryRequest() const { return {}; }
  virtual int64_t MemoryFootprint() const { return 0; }
  // Optional, for suspension that frees memory (load_controller.h, LoadControlOptions::spill_directory): what the
  // query could move out of the buffer pool now (its temporary blocks and hash / aggregation tables), moving it
  // into a spill file in `directory` (returns the bytes freed), and bringing it back. The Foreman calls SpillMemory
  // and RestoreMemory only while the query is suspended and none of its work orders is running or queued; an error
  // of RestoreMemory fails the query. A query destroyed while spilled removes its spill file.
  // Threading exception: SpillMemory runs on a background thread of the Foreman (a spill writes tens of MiB). While
  // it runs, the Foreman thread calls only Progress, MemoryRequest, MemoryFootprint and SpillableBytes of the query,
  // which must be safe beside it; a cancellation, resumption or end of the query waits until SpillMemory returned.
  virtual int64_t SpillableBytes() const { return 0; }
  // `cancel` is set by the Foreman when the spill is no longer wanted (the query resumes, is cancelled, or the
  // Foreman stops): SpillMemory should then stop early and return Cancelled with nothing spilled (memory still
  // resident); a spill past its last check may still complete.
  virtual absl::StatusOr<int64_t> SpillMemory(const std::string& directory, const std::atomic<bool>& cancel) {
    return 0;
  }
  virtual absl::Status RestoreMemory() { return absl::OkStatus(); }

  // Optional hints for size-based policies (SRPT, IF-SRPT).
  // Work orders still to finish, including issued ones; -1 if unknown (ranked last by SRPT).
  virtual int64_t EstimatedRemainingWorkOrders() const { return -1; }
  // The same per operator, by operator id (the ids of NextWorkOrderOperator and the LearningAgent), into
  // `by_operator` (resized by the callee; no allocation once it has grown); false if unknown. The Foreman then
  // estimates remaining time as Σ remaining work orders × that operator's own cost, which ranks queries far
  // better than the count times one per-query mean (work orders of one query differ in cost by 10-100x).
  virtual bool EstimatedRemainingWorkOrdersByOperator(std::vector<int64_t>* by_operator) const { return false; }
  // An id of the query's plan, equal for queries that run the same plan (0: none). The LearningAgent remembers
  // each finished operator's mean work-order time under it, so that a query whose plan ran before has per-operator
  // costs from its first work order on (dashboards and benchmark streams repeat their queries).
  virtual uint64_t PlanSignature() const { return 0; }
  // True while the query is in a phase that cannot use many workers (e.g. a single-work-order merge or a
  // serial finalization); IF-SRPT serves such queries first.
  virtual bool InInelasticPhase() const { return false; }

  // Optional hint for the LearningAgent: the operator id of the work order NextWorkOrder would return now, -1
  // if unknown or none is ready. Its recent durations then predict the next work order better than a mean pooled
  // over every active operator. Must be cheap: the Foreman asks after every completion and every work order
  // taken.
  virtual int NextWorkOrderOperator() const { return -1; }

  // Optional, for elastic pipelining (scheduler/elastic_pipelining.h): the workers the policy gives this query now
  // (the pool's workers times its share among the admitted queries; all of them for FCFS, SRPT and IF-SRPT, which
  // run one query at a time). The Foreman calls it when a query is admitted or leaves (and at the query's own
  // admission); the query may then change its readiness.
  virtual void SetWorkerShare(double workers) {}
};

}  // namespace tessera
