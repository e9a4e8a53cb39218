#pragma once
// Drives one query's ExecutionDag (dissertation appendix A.1): activates an operator once every blocking
// producer has finished executing, feeds each block a producer writes to its pipelining consumers at once (and
// all blocks to blocking consumers when the producer is done), collects ready work orders, and tracks progress.
// Intermediate relations are dropped as soon as their last consumer has finished; a block of one is freed earlier,
// once every consumer has finished a work order that declared it consumed (WorkOrder::consumed_input).
//
// Dispatch order within the query: consumers first. NextWorkOrder hands out a ready work order of the operator
// latest in producers-before-consumers order, so a block a pipelining producer just wrote is read (while it is
// still in cache) and freed before the producer writes more: with eager pipelining, a chain of streaming operators
// holds a few blocks per worker instead of its whole intermediate result.
//
// Shared scans (scheduler/README.md): work orders that read a base-table block carry its key
// (WorkOrder::shared_scan); TakeSharedScanWorkOrder hands out a ready one by key, out of the dispatch order, so the
// scheduler can run it right after another query's work order on the same block. An operator's table scan
// registers with the table's ScanCursor while it runs; one that starts while scans of other queries run begins at
// the cursor's block and wraps around (a circular scan), so its blocks line up with theirs.
//
// Threading: every method is called from one thread at a time (the scheduler thread); work orders run elsewhere
// and report back through OnWorkOrderFinished.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
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
  int64_t shared = 0;          // work orders that ran in a shared scan (beside other queries' on the same block)
  std::string runtime_detail;  // RelationalOperator::RuntimeDetail, once the operator finished
};

class QueryManager {
 public:
  explicit QueryManager(std::unique_ptr<ExecutionDag> dag);
  // Ends the scans still registered with their tables' cursors.
  ~QueryManager();
  QueryManager(const QueryManager&) = delete;
  QueryManager& operator=(const QueryManager&) = delete;

  // A work order is ready and not held back by an operator limit (SetOperatorLimits).
  bool HasReadyWorkOrder() const { return ready_count_ > 0 && (!limited_ || NextWorkOrderOperator() >= 0); }
  // The operator index of the work order NextWorkOrder would return, -1 if none is ready.
  int NextWorkOrderOperator() const;
  // The next ready work order, or null.
  std::unique_ptr<WorkOrder> NextWorkOrder();
  // A ready work order reading the base-table block `block_key` (SharedScanTag::block_key), or null if none is.
  std::unique_ptr<WorkOrder> TakeSharedScanWorkOrder(uint64_t block_key);
  // Asks every active operator that may still generate work orders for them again (after a wake-up,
  // RelationalOperator::SetWakeUp), first feeding its pipelining consumers the blocks it appended to its output
  // outside its work orders (a gather's received blocks); finishes those that have nothing left. An active,
  // unfinished operator with an ExternalFailure cancels the query with it first (the first such, in index order).
  void PollOperators();
  // Reports a finished work order (`status` is what Execute returned; `elapsed_ns` its run time; `shared`: it ran
  // in a shared scan). The first error cancels the query.
  void OnWorkOrderFinished(const WorkOrder& work_order, const absl::Status& status, int64_t elapsed_ns,
                           bool shared = false);
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

  // Hints for size-based scheduling (SRPT / IF-SRPT, scheduler/schedulable_query.h); O(operators + edges), no
  // allocation.
  //
  // EstimatedRemainingWorkOrders: Σ over unfinished operators of max(1, expected_total - finished), where an
  // operator's expected_total is the largest of
  //   - the work orders it has issued,
  //   - its own estimate (RelationalOperator::EstimatedWorkOrders: base-table blocks for scans, probes and
  //     aggregations over a table, +1 for an aggregation's finalize; fed blocks + 1 for a sort), and
  //   - for an operator fed by producers: the blocks fed to it so far plus the blocks its unfinished producers
  //     are still expected to write, computed producers first: a producer with finished work orders writes its
  //     observed output blocks per finished work order times its own estimated remaining work orders; before
  //     its first one finished, an aggregation or sort (which writes its output at the end) the plan builder's
  //     output estimate (OperatorEstimate::output_bytes) in blocks of its output relation, at least 1, and any
  //     other operator one block per work order (every work order writes its rows to blocks of its own).
  // Serial tails (an aggregation's or hash build's finalize, a sort's merge) are not foreseen: they count once
  // issued, or as the 1 of max(1, ...) when they are all an unfinished operator has left, so with right output
  // estimates the result is low by at most one work order per such operator (a partitioned aggregation merge: by
  // its partitions). Finished operators count 0; a finished or cancelled query 0. With `by_operator` (resized to
  // the operator count) each operator's share of the sum, by operator id.
  int64_t EstimatedRemainingWorkOrders(std::vector<int64_t>* by_operator = nullptr) const;
  // Work orders ready to be issued plus those issued and not yet finished: what the query could run right now.
  int64_t ReadyOrRunningWorkOrders() const { return ready_count_ + in_flight_; }

  // Elastic pipelining (scheduler/elastic_pipelining.h decides the numbers): operator `index` hands out no work
  // order while `max_in_flight` of its work orders are handed out and unfinished, nor while one of its consumers
  // along a pipelining edge, active and unfinished, has `max_consumer_backlog` or more work orders ready or in
  // flight (the blocks it was fed and has not finished reading). 0 = no limit (the default). Deadlock-free: an
  // operator is held back only while work orders of its own or of a consumer are in flight or ready, and a
  // consumer's chain ends at an operator without pipelining consumers. O(1); allocation-free.
  void SetOperatorLimits(int index, int max_in_flight, int max_consumer_backlog);
  // For the elastic limits: whether operator `index` has been activated (its blocking producers finished) and
  // not finished, and how many blocks its output relation holds (released ones included).
  bool IsOperatorRunning(int index) const { return operators_[index].active && !operators_[index].finished; }
  uint32_t OutputBlocksWritten(int index) const { return operators_[index].fed_blocks_pipelined; }

 private:
  struct OperatorRuntime {
    std::vector<int> in_edges;
    std::vector<int> out_edges;
    bool active = false;
    bool done_generating = false;
    bool finished = false;
    bool stopped = false;           // StopUpstreamOf: issues no more work orders
    bool upstream_stopped = false;  // StopUpstreamOf ran for this operator
    int64_t in_flight = 0;
    uint32_t fed_blocks_pipelined = 0;  // blocks of this operator's output already fed along pipelining edges
    int64_t input_blocks_fed = 0;       // blocks fed to this operator so far, over all its inputs
    bool writes_output = false;         // the operator has an output relation
    int max_in_flight = 0;              // SetOperatorLimits; 0 = none
    int max_consumer_backlog = 0;
    // Output blocks of an operator that writes at the end (aggregation, sort) from the plan builder's estimate,
    // at least 1; 0 for operators that write as they go.
    double planned_output_blocks = 0;
    OperatorStatus status;
    std::deque<std::unique_ptr<WorkOrder>> ready;  // issued, not yet handed out
    ScanCursor* scan_cursor = nullptr;             // the table cursor this operator's running scan registered with
    // Early block release: out edges that feed this operator's output (not ordering-only), and per output block
    // how many consumers have declared it consumed so far.
    int feeding_out_edges = 0;
    std::vector<uint8_t> block_consumptions;
  };

  void ActivateReadyOperators();
  // An operator limit (SetOperatorLimits) holds operator `index`'s ready work orders back now.
  bool HeldBack(int index) const;
  // Registers the operator's table scan with its cursor and, when other queries scan that table now, rotates the
  // scan's work orders to begin at the cursor's block.
  void BeginScan(int index, std::vector<std::unique_ptr<WorkOrder>>* work_orders);
  void EndScan(OperatorRuntime& runtime);
  // Hands out `work_order` of operator `index` (bookkeeping shared by NextWorkOrder and TakeSharedScanWorkOrder).
  std::unique_ptr<WorkOrder> HandOut(int index, std::unique_ptr<WorkOrder> work_order);
  void CollectWorkOrders(int index);
  void FeedNewBlocks(int producer, bool producer_finished);
  void FinishOperator(int index);
  // Operator `satisfied` needs no more input (RelationalOperator::InputSatisfied: a LIMIT without ORDER BY has
  // its rows): every operator whose output flows only into it stops issuing work orders, drops its ready ones and
  // finishes once those in flight have; `satisfied` then gets DoneFeedingInput and produces its output. What the
  // stopped operators hand on after that (partial, for blocking ones) reaches only `satisfied`, which ignores it.
  void StopUpstreamOf(int satisfied);
  void ReleaseIfUnneeded(int index);
  // Counts `work_order`'s declared consumption of an upstream block and frees the block once all its consumers
  // have declared it.
  void CountConsumedBlock(const WorkOrder& work_order);

  std::unique_ptr<ExecutionDag> dag_;
  std::vector<OperatorRuntime> operators_;
  std::vector<int> producers_first_;  // operator indexes, every producer before its consumers
  // EstimatedRemainingWorkOrders' per-operator scratch: output blocks the operator is expected to write in all.
  mutable std::vector<double> scratch_output_blocks_;
  std::vector<int> consumers_first_;  // producers_first_ reversed: the dispatch order
  int64_t ready_count_ = 0;
  // Ready base-block work orders: block key -> the operators with one ready (an operator once per work order) and
  // the block's position in its table.
  struct ReadyScan {
    int op = 0;
    uint32_t position = 0;
  };
  absl::flat_hash_map<uint64_t, absl::InlinedVector<ReadyScan, 1>> ready_scans_;
  // Where operator `index`'s ready work order of the block at `position` (key `block_key`) is in its ready queue.
  std::deque<std::unique_ptr<WorkOrder>>::iterator FindReadyScan(int index, uint64_t block_key, uint32_t position);
  // Drops operator `index` from the ready scans of `block_key`.
  void ForgetReadyScan(uint64_t block_key, int index);
  std::shared_ptr<TemporaryRelation> result_;
  int64_t in_flight_ = 0;
  bool limited_ = false;  // some operator has a limit (SetOperatorLimits)
  int finished_operators_ = 0;
  bool cancelled_ = false;
  absl::Status status_;
};

}  // namespace tessera
