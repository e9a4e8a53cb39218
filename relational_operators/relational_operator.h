#pragma once
// A relational operator produces work orders. The QueryManager (query_execution/) drives it:
//   - FeedInputBlock(input, block): a new block is available on input edge `input` (pipelining edges feed each
//     block as soon as its producer finished it; blocking edges feed all blocks once the producer is done);
//   - DoneFeedingInput(input): no more blocks will arrive on that edge;
//   - GetWorkOrders: hands out the work orders that are ready now; returns true once no more will ever come.
// All of these run on the scheduler thread only; the work orders run on workers. Adding an operator: one header,
// one source file, one test, and one case in the plan builder (query_execution/plan_builder.cc, which also plays
// the physical planner's part); relational_operators/README.md has the checklist.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "relational_operators/temporary_relation.h"
#include "relational_operators/work_order.h"

namespace tessera {

class RelationalOperator {
 public:
  explicit RelationalOperator(std::string name) : name_(std::move(name)) {}
  virtual ~RelationalOperator() = default;

  const std::string& name() const { return name_; }
  int index() const { return index_; }
  void set_index(int index) { index_ = index; }

  // Called once when the query starts running (its QueryManager is made), before any operator is activated, on
  // the scheduler thread: work that needs none of the operator's inputs and runs outside its work orders may
  // begin here (a hash split's fragments on the other ranks, distributed/repartition_operator.h).
  virtual void Start() {}
  virtual void FeedInputBlock(int input, uint32_t block_index) {}
  virtual void DoneFeedingInput(int input) {}
  // Appends the ready work orders to `out`. Returns true when the operator will generate no more work orders.
  virtual bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) = 0;
  // Called once every work order of this operator has finished executing.
  virtual void OnAllWorkOrdersFinished() {}
  // For operators whose work becomes ready without one of their work orders finishing (an exchange that receives
  // on threads of its own, distributed/gather_operator.h): `wake_up`, set before the query runs, makes the
  // scheduler call GetWorkOrders again soon (Foreman::Poke). It may be called from any thread, also before the
  // query is submitted or after it finished (then it is ignored, so an operator must not depend on one early call).
  virtual void SetWakeUp(std::function<void()> wake_up) {}
  // An error found outside the operator's work orders (a stream of an exchange, on a thread of its own, failed),
  // OK while there is none. The QueryManager asks every active operator when it polls them (after a wake-up) and
  // cancels the query with the first error at once, without a work order that would wait for a free worker; the
  // work orders in flight still finish. An operator whose threads find the error guards it itself, then wakes
  // the scheduler. Scheduler thread.
  virtual absl::Status ExternalFailure() const { return absl::OkStatus(); }
  // True once the operator needs no more input: its complete output comes from the blocks fed so far, and blocks
  // fed later are ignored (a LIMIT without ORDER BY that has its rows). When the query's result operator says so,
  // the QueryManager stops every other operator: no more work orders are issued, those in flight finish.
  virtual bool InputSatisfied() const { return false; }

  // The relation this operator writes (null for operators without output).
  virtual std::shared_ptr<TemporaryRelation> output() const { return nullptr; }
  // Whether the operator writes blocks into output(): false for one whose rows go to a consumer fused into its
  // work orders (batch_sink.h), whose output relation stays empty. For progress estimates.
  virtual bool WritesOutputBlocks() const { return output() != nullptr; }
  // Work orders this operator is expected to issue over its life, -1 if unknown (for progress).
  virtual int64_t EstimatedWorkOrders() const { return -1; }
  // True when the work orders reading blocks of upstream relation `input` read each block once and declare it
  // consumed (WorkOrder::DeclareConsumedBlock), so that such blocks can be freed as they are read (the memory
  // estimate counts a streamed relation's window, not all of it).
  virtual bool ReleasesInputBlocks(int input) const { return false; }
  // What the operator decided while running that the plan does not show (e.g. a hash join's direct index), for
  // EXPLAIN ANALYZE; "" when nothing. Scheduler thread; read once every work order has finished, before
  // OnAllWorkOrdersFinished.
  virtual std::string RuntimeDetail() const { return ""; }

 private:
  const std::string name_;
  int index_ = -1;
};

}  // namespace tessera
