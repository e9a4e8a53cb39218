#pragma once
// Hash aggregation (GROUP BY) and scalar aggregation (no GROUP BY: exactly one output row, also for empty
// input).
//
// One work order per input block updates the partial table of the worker it runs on (per-worker tables: no
// locks and no shared cache lines in the hot loop); after the last input block, finalize work orders (one, or
// one per hash partition when there are many groups) merge the partial tables and write the groups
// (aggregation_table.h).
//
// Aggregates: COUNT(*), COUNT, SUM, AVG, MIN, MAX over numeric, date and string types; result types as the
// binder assigns them (optimizer/type_rules.h): SUM and AVG of exact types are computed in 128-bit integers.
//
// Fused input (batch_sink.h): a producer may instead hand its output vectors to the operator inside its own work
// orders (OpenWriter), which update the partial table of the worker they run on, as update work orders would. The
// input relation then receives no blocks and only the finalize work orders are the operator's own. Only for a
// scan spec that is a plain read of the input's columns (no filter, no runtime filters: AcceptsFusedInput).

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "expressions/bound_expression.h"
#include "relational_operators/aggregation_table.h"
#include "relational_operators/batch_sink.h"
#include "relational_operators/block_input.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/relational_operator.h"

namespace tessera {

class AggregationOperator : public RelationalOperator, public BatchSink {
 public:
  // Errors: an aggregate over a type it does not support.
  static absl::StatusOr<std::unique_ptr<AggregationOperator>> Create(BlockInput input, ScanSpec scan,
                                                                     AggregationSpec spec, BufferPool* pool);
  ~AggregationOperator() override;

  void FeedInputBlock(int input, uint32_t block_index) override { blocks_.Feed(block_index); }
  void DoneFeedingInput(int input) override { blocks_.DoneFeeding(); }
  bool ReleasesInputBlocks(int input) const override { return true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  void OnAllWorkOrdersFinished() override;
  int64_t EstimatedWorkOrders() const override;

  // Whether a producer may feed the operator through OpenWriter: its scan reads the input's columns as they are
  // (block column i as batch column i), with no filter and no runtime filters.
  bool AcceptsFusedInput() const;
  // BatchSink: batches of the input's columns (in the scan's order), folded into the worker's partial table.
  BatchSinkWriter* OpenWriter(int worker_index) override;
  // Plan building, AcceptsFusedInput(): a producer feeds the operator through OpenWriter, so its input relation
  // receives no blocks (for the work-order estimate: only the finalize is left).
  void SetFedByProducer() { fed_by_producer_ = true; }
  // The number of groups the aggregation will find, where the planner knows it well (one group column of a
  // base table scanned without filters: the column's distinct count). Above kPresizeMinGroups each worker's
  // partial table is sized for its share (AggregationTable::Presize) before its first block instead of growing
  // by doubling. An overestimate costs budget (charged, mostly untouched pages), so leave it unset otherwise.
  void SetExpectedGroups(size_t groups) { expected_groups_ = groups; }
  static constexpr size_t kPresizeMinGroups = size_t{1} << 16;

 private:
  class Folder;
  class UpdateWorkOrder;
  class FusedWriter;
  class FinalizeWorkOrder;

  AggregationOperator(BlockInput input, ScanSpec scan, AggregationSpec spec, BufferPool* pool);
  // The calling worker's partial table, created on first use.
  AggregationTable* PartialTable(int worker_index);
  // Charges `bytes` of growth of the partial tables' heap parts (AggregationTable::HeapBytes) to the pool;
  // ResourceExhausted over the budget. Any thread.
  absl::Status ChargeGrowth(size_t bytes);
  // Frees the partial tables and gives their charge back.
  void ReleaseTables();

  const BlockInput input_;
  ScanSpec scan_;
  AggregationSpec spec_;
  BufferPool* pool_;
  const std::vector<size_t> state_sources_;  // AggregationTable::StateSources(spec_)
  std::shared_ptr<TemporaryRelation> output_;

  std::mutex tables_mutex_;  // guards creation of partial tables (and fused writers) only
  std::vector<std::unique_ptr<AggregationTable>> partial_tables_;
  std::vector<std::unique_ptr<FusedWriter>> fused_writers_;  // per worker, made by OpenWriter

  BlockWorkQueue blocks_;
  int64_t issued_ = 0;
  std::atomic<int64_t> completed_{0};
  // Heap bytes of the partial tables charged to the pool (kBlob); released with the tables. Their arrays
  // are pool allocations and are not counted here.
  std::atomic<size_t> charged_bytes_{0};
  bool finalize_issued_ = false;
  bool fed_by_producer_ = false;      // SetFedByProducer
  size_t expected_groups_ = 0;        // SetExpectedGroups; 0: unknown
  std::atomic<int64_t> fed_rows_{0};  // rows folded in through OpenWriter's writers
};

}  // namespace tessera
