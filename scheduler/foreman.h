#pragma once
// The Foreman: the one scheduler thread. It owns the worker pool, the PolicyEnforcer, the LearningAgent and
// every active query, and makes every scheduling decision:
//   pick a query with the PolicyEnforcer -> take its next work order -> send it to the least-loaded worker,
//   preferring one on the work order's NUMA node.
// It keeps each worker supplied with a small number of pending work orders (never empty while work exists);
// the depth adapts to the work orders' size: a worker takes another while it holds fewer than
// min_pending_per_worker or the predicted time of what it holds is under `target_pending_ns`, and fewer than
// max_pending_per_worker work orders (a fixed depth
// when both are equal). A deeper queue costs policy responsiveness (a query that arrives or becomes the policy's
// choice waits for what is already queued), a shallower one costs idle workers between a completion and the
// refill; bounding the queue by each work order's own prediction keeps that wait near `target_pending_ns` (or
// min_pending_per_worker work orders) even while one query's work orders are far longer than the mean.
//
// Shared scans: when the work order it dispatches reads a base-table block, the Foreman also takes the ready
// work orders of other sharing queries on that block (SchedulableQuery::TakeSharedScanWorkOrder) and queues them
// right behind it on the same worker, so the block comes from memory once and from the cache for the others. Each
// work order is still its own task: its query is charged its own measured time, the LearningAgent learns per query,
// cancelling one query skips only its own. Members: queries with sharing on, admitted, not cancelling, of the same
// priority when the policy ranks by priority (a low-priority query never slows a high-priority one's work order by
// riding along, nor gets CPU its priority would not give it); in batch mode only while their working sets fit the
// cache together and their predicted work-order times differ from the first one's by less than a factor
// `shared_scan_similarity`.
//
// Messages in: query arrived (Submit), work order finished (from workers), cancel, priority changed, policy
// changed, pool resize, progress/stats requests. On each wake-up the Foreman handles everything queued, then
// refills the workers.
//
// Threading: all public methods may be called from any thread; they post a message and (for
// GetProgress/GetStats) wait for the answer. SchedulableQuery methods are only ever called on the Foreman
// thread.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scheduler/foreman_inbox.h"
#include "scheduler/learning_agent.h"
#include "scheduler/load_controller.h"
#include "scheduler/policy_enforcer.h"
#include "scheduler/query_handle.h"
#include "scheduler/schedulable_query.h"
#include "scheduler/work_order_log.h"
#include "scheduler/worker_load_table.h"
#include "threading/worker_pool.h"

namespace tessera {

struct ForemanOptions {
  PolicyOptions policy;  // switchable later with SetPolicy
  LearningAgentOptions learning;
  // Memory admission control (load_controller.h); off unless `load_control.memory` is set.
  LoadControlOptions load_control;
  WorkerPoolOptions pool;  // the Foreman creates and owns the pool; its sink is the Foreman's inbox
  // Work orders kept queued per worker: while the predicted time of its pending work orders (each its query's
  // prediction at dispatch) is under target_pending_ns, within [min, max] work orders (WorkerLoadTable's
  // PendingLimit). With `pending_by_count` (the rule before issue #14's share-shift work, kept to compare): a
  // count, ceil(target_pending_ns / the mean work-order time over all queries) within [min, max], which lets a
  // query with long work orders queue min x its work-order time ahead of any arrival.
  // At least 2: with 1 a worker idles from each completion until the Foreman's refill, which on a loaded 2-core
  // machine (the Foreman preempted) cost q18 30% in one share_shift_benchmark run.
  int min_pending_per_worker = 2;
  int max_pending_per_worker = 64;
  int64_t target_pending_ns = 200'000;
  bool pending_by_count = false;
  // Seeds the PolicyEnforcer's draws (reproducible runs).
  uint64_t random_seed = 42;
  // Empty: no work-order log. Otherwise JSON lines, see work_order_log.h.
  std::string work_order_log_path;
  // > 0: the log is rotated at this size (the previous file kept as PATH.1; work_order_log.h).
  size_t work_order_log_max_bytes = 0;
  // Time slices (0: off, one policy draw per work order). A worker keeps handing out one query's work orders
  // (one at a time as it needs them; queues stay at their target depth) for about `dispatch_run_ns` of CPU, so
  // that consecutive work orders of one query on one core find its hash tables and aggregation states still in
  // the cache, where alternating queries per work order evicts them. Shares are kept by virtual time instead of
  // draws (stride scheduling, the deterministic form of the lottery): each query's CPU share weight is what the
  // policy's draw would give it (its probability times its predicted work-order time); its virtual time advances
  // by the CPU it gets over that weight (predicted at dispatch, corrected by the measured time at completion);
  // a slice goes to the ready query with the least virtual time and ends when its query is no longer ready or
  // has run `dispatch_run_ns` of virtual time past the least one. A query that becomes ready (arrives, or
  // starts a new phase) is placed at most one slice behind the least virtual time of the others, so it cannot
  // hoard credit while it waits and it preempts the running slices at once when it is behind. Only under the
  // policies that draw (static, fair, hpf, pp, lottery); FCFS and the SRPT family pick one query anyway.
  int64_t dispatch_run_ns = 0;
  // Shared scans in batch mode (SchedulableQuery::scan_sharing): the cache the members' working sets and the
  // block must fit together (0: the last-level cache size the C library reports, else 32 MiB), and the factor by
  // which a member's predicted work-order time may differ from the first one's (the seed's runtime similarity d).
  int64_t shared_scan_cache_bytes = 0;
  double shared_scan_similarity = 1.25;
  // CPU time a query may get by riding along in other queries' shared scans before it has paid it back by
  // passing over its own picks (foreman.cc, Dispatch): bounds how far sharing moves a query from its policy share.
  int64_t shared_scan_ride_debt_ns = 200'000;
};

class Foreman {
 public:
  // Starts the worker pool and the scheduler thread.
  static absl::StatusOr<std::unique_ptr<Foreman>> Create(const ForemanOptions& options);
  // Stop().
  ~Foreman();

  Foreman(const Foreman&) = delete;
  Foreman& operator=(const Foreman&) = delete;

  // Hands a query to the scheduler. AlreadyExists if a query with the same id is still active;
  // FailedPrecondition after Stop. `state`: the handle's state when the caller made it first (to wire a result
  // listener to State::Notify before any work order runs); null makes a new one.
  absl::StatusOr<QueryHandle> Submit(std::shared_ptr<SchedulableQuery> query,
                                     std::shared_ptr<QueryHandle::State> state = nullptr);
  // Stops dispatching the query's work orders; those already queued on workers are dropped unexecuted,
  // running ones finish; then its handle reports Cancelled. Other queries are untouched. NotFound if not
  // active.
  absl::Status Cancel(QueryId query_id);
  // Both take effect at the next scheduling decision. Priority must be >= 1.
  absl::Status SetPriority(QueryId query_id, int priority);
  absl::Status SetPolicy(const PolicyOptions& policy);
  // The LoadController's threshold (fraction of the memory budget, 0 = off) and per-query cap, at run time;
  // queries held back are reconsidered at once. Needs ForemanOptions::load_control.memory to have any effect.
  absl::Status SetLoadControl(double threshold_fraction, double max_query_fraction);
  // Grows or shrinks the pool to `num_workers` (>= 1). Removed workers finish their queued work orders first.
  absl::Status ResizePool(int num_workers);
  // Asks the Foreman to look at the query's readiness again (see SchedulableQuery::HasReadyWorkOrder); an
  // unknown id is ignored.
  absl::Status Poke(QueryId query_id);
  absl::StatusOr<QueryProgress> GetProgress(QueryId query_id);
  absl::StatusOr<ForemanStats> GetStats();
  // Cancels what is still active (handles report Aborted), waits for running work orders, stops the workers
  // and the scheduler thread, and flushes the work-order log. Idempotent. Not from a SchedulableQuery method.
  void Stop();

 private:
  struct QueryState;

  explicit Foreman(const ForemanOptions& options);
  absl::Status Start();
  bool IsActive(QueryId query_id);

  // Foreman thread.
  void Run();
  void HandleCompletion(TaskCompletion& completion);
  void HandleRetired(int worker_id);
  void HandleControl(ControlMessage& message);
  void Admit(foreman_message::Submit& submit);
  // Puts an admitted query into the PolicyEnforcer (on arrival or when the LoadController admits or resumes it).
  void Activate(QueryState* state);
  // Takes an admitted query out of the PolicyEnforcer: its running work orders finish, no new ones start.
  void Suspend(QueryState* state);
  // With spilling on: a suspended query with nothing in flight starts moving its memory out (once per suspension)
  // on a thread of its own; the query stays suspended until the spill is done.
  void MaybeSpill(QueryState* state);
  // On the poke the spill thread posts when done: joins it, admits the queries that waited for that memory, and
  // resumes (restoring what was spilled), cancels or finishes the query if that was asked while it ran.
  void CompleteSpill(QueryState* state);
  void Deactivate(QueryState* state);
  // Tells every admitted query its worker share under the policy (SchedulableQuery::SetWorkerShare), after a
  // query entered or left the PolicyEnforcer.
  void UpdateWorkerShares();
  void BeginCancel(QueryState* state, absl::Status status);
  void MaybeFinish(QueryState* state);
  void Finish(QueryState* state);
  void RefreshCandidate(QueryState* state);
  // SRPT / IFSRPT: the query's remaining work in ns: Σ over operators of its remaining work orders × that
  // operator's cost (LearningAgent::PredictOperatorCost), falling back to the remaining count × the query's
  // prediction; -1 if unknown.
  double EstimateRemainingNs(QueryState* state);
  // The LoadController's rank of a query held back (load_controller.h): SRPT's key under srpt / ifsrpt (the
  // remaining-time estimate + srpt_aging x its submit time, the order StrictChoice would serve it in), else -1
  // (arrival order).
  double HeldBackRank(QueryState* state);
  // Time slices (ForemanOptions::dispatch_run_ns): whether they are on under the current policy; the query a
  // worker whose slice belongs to `holder` (null: none) serves next (null: none ready); the least virtual time
  // among the ready queries other than `except` (+inf: none), refreshing their CPU share weights.
  bool SlicesOn() const;
  QueryState* NextInSlice(QueryState* holder);
  double LeastReadyVirtualTime(const QueryState* except);
  // Time slices: advances the query's virtual time by `cpu_ns` of CPU.
  void ChargeVirtualTime(QueryState* state, double cpu_ns);
  // After NextWorkOrder: readiness, and the prediction when the next work order's operator changed.
  void RefreshAfterTake(QueryState* state);
  void ReconcilePoolSize();
  // With ForemanOptions::pending_by_count: the work orders kept per worker.
  int PendingTarget() const;
  // The worker with room for the next work order (preferring `preferred_node`), -1 if none.
  int ChooseWorker(int preferred_node) const;
  // The predicted time of the query's next work order (its candidate's prediction, else the mean over all queries,
  // else 1 ms): charged to its virtual time and counted in a worker's queue at dispatch.
  double PredictedWorkOrderNs(const QueryState* state) const;
  void Dispatch();
  // A query from the PolicyEnforcer, passing over picks of queries that still owe CPU from shared-scan rides.
  QueryState* PickPayingBackRides();
  // Queues behind `leader` (just queued on `worker` for `state`) the other queries' work orders on its block.
  void ShareScan(QueryState* state, WorkOrderTask* leader, int worker, std::vector<std::unique_ptr<Task>>* out);
  // Time slices: charges the work order's predicted time to the query's virtual time (corrected at completion).
  void ChargeAtDispatch(QueryState* state, WorkOrderTask* work_order);
  // Bookkeeping of one work order handed to `worker` for `state`.
  void NoteDispatched(QueryState* state, WorkOrderTask* work_order, int worker);
  void FlushOutgoing();
  ForemanStats CollectStats() const;

  const ForemanOptions options_;
  ForemanInbox inbox_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<WorkOrderLog> log_;
  std::thread thread_;
  std::mutex stop_mu_;  // serializes Stop()

  // Ids of submitted queries whose handle has not completed; guards duplicate submission from client threads.
  std::mutex ids_mu_;
  absl::flat_hash_set<QueryId> active_ids_;

  // Foreman-thread state.
  PolicyEnforcer enforcer_;
  LearningAgent agent_;
  LoadController load_controller_;
  WorkerLoadTable loads_;
  absl::flat_hash_map<QueryId, std::unique_ptr<QueryState>> queries_;
  std::vector<std::vector<std::unique_ptr<Task>>> outgoing_;  // by worker id
  // By worker id: the query whose time slice the worker is in (dispatch_run_ns), null if none.
  std::vector<QueryState*> slice_holders_;
  std::vector<int> touched_workers_;
  std::vector<int64_t> remaining_scratch_;  // EstimateRemainingNs
  uint64_t next_arrival_ = 0;
  int desired_workers_ = 0;
  bool stopping_ = false;
  int64_t dispatched_ = 0;
  int64_t executed_ = 0;
  int64_t finished_queries_ = 0;  // ForemanStats' query times
  int64_t sum_submit_to_finish_ns_ = 0;
  int64_t sum_submit_to_first_dispatch_ns_ = 0;
  int64_t shared_ = 0;
  int64_t shared_scan_cache_bytes_ = 0;
};

}  // namespace tessera
