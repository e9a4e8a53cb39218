#pragma once
// A SchedulableQuery made of synthetic work orders, for scheduler tests, benchmarks and demonstrations until
// the execution engine's QueryManager exists. Each operator issues a fixed number of work orders that
// busy-spin for a given time (0: empty work orders, to measure pure scheduling overhead).
//
// Operators form a chain. An operator with `blocking_input` starts only after the previous one has finished
// executing (a pipeline breaker); otherwise it is ready from the start. An `inelastic` operator has at most
// one work order in flight (a serial phase; IF-SRPT serves it first). `held_work_orders` of an operator wait
// for the previous one to finish. Ready operators take turns (round robin).
//
// Observation for tests: `issued()`/`finished()` may be read from any thread at any time; the dispatch
// sequence numbers and per-work-order execution counts are complete once the query's handle has completed.
//
// Threading: the SchedulableQuery methods follow schedulable_query.h (Foreman thread only); work orders run
// on workers and only touch atomics.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/schedulable_query.h"

namespace tessera {

struct SyntheticOperatorSpec {
  std::string name;
  int64_t work_orders = 0;
  int64_t spin_ns = 0;          // busy-spin per work order; 0 = empty work order
  bool blocking_input = false;  // starts after the previous operator finished
  bool inelastic = false;       // at most one work order in flight
  int preferred_nodes = 0;      // > 0: work order i prefers node i % preferred_nodes; 0: any node
  int64_t rows_per_work_order = 0;
  // The last `held_work_orders` become ready only once the previous operator has finished (a finalize step,
  // or a build whose last block waits for a probe): the operator stays active through the previous one.
  int64_t held_work_orders = 0;
  // > 0: the time the Foreman records for each work order (WorkOrderTask::cost_override_ns) instead of the
  // measured one; the work order still spins spin_ns. For tests of decisions made from learned costs.
  int64_t reported_ns = 0;
};

struct SyntheticQueryOptions {
  QueryId query_id = 0;
  int priority = 1;
  std::vector<SyntheticOperatorSpec> operators;
  // Shared counter that stamps every dispatched work order (across queries) with a global sequence number;
  // null disables the stamps.
  std::shared_ptr<std::atomic<int64_t>> dispatch_clock;
  // Count executions per work order and node locality (a few atomics per work order; off for benchmarks).
  bool track_executions = true;
  // For the LoadController: the estimate the query reports, and the bytes it holds per finished work order
  // until its last work order has finished (then it holds nothing).
  QueryMemoryRequest memory;
  int64_t footprint_per_work_order = 0;
  // SchedulableQuery::PlanSignature (0: none): queries with the same signature share remembered operator costs.
  uint64_t plan_signature = 0;
};

// One operator of SyntheticQueryOptions repeated: `work_orders` work orders spinning `spin_ns` each.
SyntheticQueryOptions SimpleSyntheticQuery(QueryId id, int64_t work_orders, int64_t spin_ns, int priority = 1);

class SyntheticQuery : public SchedulableQuery {
 public:
  explicit SyntheticQuery(SyntheticQueryOptions options);
  ~SyntheticQuery() override;

  QueryId query_id() const override { return options_.query_id; }
  int priority() const override { return options_.priority; }
  bool HasReadyWorkOrder() const override;
  std::unique_ptr<WorkOrderTask> NextWorkOrder() override;
  void OnWorkOrderFinished(const WorkOrderCompletion& completion) override;
  bool IsOperatorDone(int operator_id) const override;
  bool IsFinished() const override;
  void Cancel() override;
  QueryProgress Progress() const override;
  int64_t EstimatedRemainingWorkOrders() const override;
  bool EstimatedRemainingWorkOrdersByOperator(std::vector<int64_t>* by_operator) const override;
  uint64_t PlanSignature() const override { return options_.plan_signature; }
  bool InInelasticPhase() const override;
  QueryMemoryRequest MemoryRequest() const override { return options_.memory; }
  int64_t MemoryFootprint() const override {
    const int64_t done = finished();
    return done == total_ ? 0 : done * options_.footprint_per_work_order;
  }
  int NextWorkOrderOperator() const override;

  // Any thread.
  int64_t issued() const { return issued_total_.load(std::memory_order_relaxed); }
  int64_t finished() const { return finished_total_.load(std::memory_order_relaxed); }
  int64_t total_work_orders() const { return total_; }

  // After completion.
  const std::vector<int64_t>& dispatch_sequence() const { return dispatch_sequence_; }
  // How often work order `index` of `operator_id` was executed (tests expect exactly once).
  int executions(int operator_id, int64_t index) const;
  int64_t executed_on_preferred_node() const { return on_preferred_node_.load(); }
  int64_t executed_elsewhere() const { return elsewhere_.load(); }
  std::vector<int64_t> finished_by_worker() const;  // index = worker id

 private:
  struct Operator;
  class SpinWorkOrder;

  bool Startable(int index) const;
  bool OperatorReady(int index) const;
  int NextReadyOperator() const;  // the one NextWorkOrder takes from, -1 if none

  const SyntheticQueryOptions options_;
  std::vector<std::unique_ptr<Operator>> operators_;
  int64_t total_ = 0;
  int next_operator_ = 0;  // round-robin start among ready operators
  bool cancelled_ = false;
  int64_t in_flight_ = 0;
  std::vector<int64_t> dispatch_sequence_;
  std::vector<int64_t> finished_by_worker_;
  std::atomic<int64_t> issued_total_{0};
  std::atomic<int64_t> finished_total_{0};
  std::atomic<int64_t> on_preferred_node_{0};
  std::atomic<int64_t> elsewhere_{0};
};

}  // namespace tessera
