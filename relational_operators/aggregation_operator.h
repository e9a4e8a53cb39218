#pragma once
// Hash aggregation (GROUP BY) and scalar aggregation (no GROUP BY: exactly one output row, also for empty input).
//
// One work order per input block updates the partial table of the worker it runs on (per-worker tables: no locks
// and no shared cache lines in the hot loop); after the last input block, one finalize work order merges the
// partial tables and writes the groups. Group keys are serialized into bytes (a NULL flag per column, fixed-width
// values, length-prefixed strings), so NULLs group together, as SQL requires. COUNT(DISTINCT x) keeps a set of
// serialized values per group.
//
// Aggregates: COUNT(*), COUNT, SUM, AVG, MIN, MAX over numeric, date and string types; result types as the binder
// assigns them (optimizer/type_rules.h): SUM and AVG of exact types are computed in 128-bit integers.

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "expressions/bound_expression.h"
#include "relational_operators/block_input.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/relational_operator.h"

namespace tessera {

enum class AggregateKind { kCountStar, kCount, kSum, kAvg, kMin, kMax };

struct AggregationSpec {
  struct Call {
    AggregateKind kind = AggregateKind::kCountStar;
    bool distinct = false;
    std::unique_ptr<BoundExpression> argument;  // over the input batch; null for COUNT(*)
    Type result_type;
  };
  std::vector<std::unique_ptr<BoundExpression>> group_by;  // over the input batch
  std::vector<Call> calls;
  std::vector<std::string> output_names;  // group columns, then one per call
};

class AggregationTable;

class AggregationOperator : public RelationalOperator {
 public:
  // Errors: an aggregate over a type it does not support.
  static absl::StatusOr<std::unique_ptr<AggregationOperator>> Create(BlockInput input, ScanSpec scan,
                                                                     AggregationSpec spec, BufferPool* pool);
  ~AggregationOperator() override;

  void FeedInputBlock(int input, uint32_t block_index) override { blocks_.Feed(block_index); }
  void DoneFeedingInput(int input) override { blocks_.DoneFeeding(); }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  void OnAllWorkOrdersFinished() override;
  int64_t EstimatedWorkOrders() const override;

 private:
  class UpdateWorkOrder;
  class FinalizeWorkOrder;

  AggregationOperator(BlockInput input, ScanSpec scan, AggregationSpec spec, BufferPool* pool);
  // The calling worker's partial table, created on first use.
  AggregationTable* PartialTable(int worker_index);

  const BlockInput input_;
  ScanSpec scan_;
  AggregationSpec spec_;
  BufferPool* pool_;
  std::shared_ptr<TemporaryRelation> output_;

  std::mutex tables_mutex_;  // guards creation of partial tables only
  std::vector<std::unique_ptr<AggregationTable>> partial_tables_;

  BlockWorkQueue blocks_;
  int64_t issued_ = 0;
  std::atomic<int64_t> completed_{0};
  bool finalize_issued_ = false;
};

}  // namespace tessera
