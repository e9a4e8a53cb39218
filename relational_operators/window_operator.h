#pragma once
// Window functions (`rank() OVER (PARTITION BY a ORDER BY b)`) that share one PARTITION BY / ORDER BY.
// Blocking: once every input block has arrived,
//   1. one partition work order per input block hashes the rows' PARTITION BY keys and lists the block's rows
//      by partition group (kPartitionGroups groups by hash; one group without PARTITION BY), with the hashes,
//      in parallel;
//   2. one compute work order per partition group gathers the group's rows from all blocks, sorts them by
//      PARTITION BY + ORDER BY keys (fixed-width keys as order-preserving 64-bit words; PARTITION BY keys that
//      are not, e.g. strings, as one word numbering the partitions by their hashes, keys compared on a match;
//      others with SortColumn as the sort operator; ties by input position, so results are deterministic),
//      computes every function over each partition and writes the chosen input columns
//      (WindowSpec::output_columns) followed by one column per function, a vector of rows at a time. Groups run
//      in parallel.
// Costs per partition of n rows: ranking, lag / lead, first / last / nth_value and COUNT / SUM / AVG over any
// frame O(n) after the sort (prefix sums; frames slide monotonically); MIN / MAX O(n) with a monotonic deque.
// With a top-N limit (WindowSpec::limit_function), a compute work order first keeps each partition's best rows:
// a bounded max-heap per partition of `limit` rows by ORDER BY keys and input position (partitions found by the
// partition work orders' hashes, keys compared on a hash match), then the rows not worse than the heap's worst
// (ties included for rank); only those are sorted: O(n log limit) instead of O(n log n).
// Output row order: by partition group, then by the sort. Memory: the partition lists and a compute work
// order's row references, sort entries and results are buffer-pool arrays (charged to the query).

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "catalog/value.h"
#include "expressions/window_function.h"
#include "relational_operators/relational_operator.h"
#include "relational_operators/sort_operator.h"
#include "storage/pool_array.h"

namespace tessera {

struct WindowFunctionSpec {
  WindowFunctionKind kind = WindowFunctionKind::kRowNumber;
  int argument = -1;      // input column; -1 for functions without one
  int64_t parameter = 1;  // ntile: buckets (> 0); lag / lead: offset (>= 0); nth_value: n (> 0)
  Value default_value;    // lag / lead beyond the partition: NULL or a value of result_type
  WindowFrame frame;      // the aggregates and first / last / nth_value
  Type result_type;       // as the binder typed it (SUM / AVG as the aggregates)
};

struct WindowSpec {
  std::vector<int> output_columns;     // input columns copied to the output, in order, before the functions'
  std::vector<int> partition_columns;  // input columns
  std::vector<SortKey> order_keys;     // over input columns
  std::vector<WindowFunctionSpec> functions;
  // Top-N per partition: when limit_function >= 0 (a kRowNumber or kRank function; every function is then a
  // row_number, rank or dense_rank), only the rows where that function is at most `limit` (>= 0) are output.
  int limit_function = -1;
  int64_t limit = 0;
};

class WindowOperator : public RelationalOperator {
 public:
  // Hash partition groups when there are PARTITION BY keys: the compute work orders that may run in parallel.
  static constexpr uint32_t kPartitionGroups = 16;

  WindowOperator(std::shared_ptr<TemporaryRelation> input, WindowSpec spec, BufferPool* pool);
  ~WindowOperator() override;

  void FeedInputBlock(int input, uint32_t block_index) override { ++blocks_fed_; }
  void DoneFeedingInput(int input) override { input_done_ = true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  int64_t EstimatedWorkOrders() const override;
  void OnAllWorkOrdersFinished() override;

 private:
  class PartitionWorkOrder;
  class ComputeWorkOrder;
  // One input block's rows listed by partition group: rows of group g are rows[offsets[g] .. offsets[g + 1]).
  struct BlockPartitions {
    PoolArray<uint32_t> rows;
    PoolArray<uint64_t> hashes;  // the PARTITION BY keys' hash of each of `rows`
    std::vector<uint32_t> offsets;
  };

  uint32_t group_count() const { return spec_.partition_columns.empty() ? 1 : kPartitionGroups; }

  std::shared_ptr<TemporaryRelation> input_;
  const WindowSpec spec_;
  BufferPool* pool_;
  std::shared_ptr<TemporaryRelation> output_;
  uint32_t blocks_fed_ = 0;
  bool input_done_ = false;
  std::vector<BlockView> blocks_;
  std::vector<BlockPartitions> partitions_;  // one per block, filled by its partition work order
  bool partitions_issued_ = false;
  std::atomic<size_t> partitions_finished_{0};
  bool compute_issued_ = false;
};

}  // namespace tessera
