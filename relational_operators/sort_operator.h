#pragma once
// Sort (ORDER BY) with optional LIMIT/OFFSET (top-k when a limit is given). Blocking: once every input block
// has arrived, one work order per input block sorts that block's rows into a run (row references, not copies;
// only the first offset + limit rows for a top-k; the sort keys' values decoded once per block), in parallel;
// then one merge work order merges the runs and writes the rows from `offset` on, a vector of rows at a time.
// Runs are stable and ties between runs go to the earlier block, so the sort is stable. Input and output have
// the same schema.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "relational_operators/block_input.h"
#include "relational_operators/relational_operator.h"
#include "storage/pool_array.h"

namespace tessera {

struct SortKey {
  int column = 0;
  bool ascending = true;
  bool nulls_first = false;
};

class SortOperator : public RelationalOperator {
 public:
  // `limit` < 0: no limit.
  SortOperator(std::shared_ptr<TemporaryRelation> input, std::vector<SortKey> keys, int64_t limit, int64_t offset,
               BufferPool* pool);
  ~SortOperator() override;

  // Without sort keys and with a limit (a LIMIT without ORDER BY), blocks fed once offset + limit rows have
  // arrived are ignored (InputSatisfied), and the output is the first rows of the blocks fed before that.
  void FeedInputBlock(int input, uint32_t block_index) override;
  void DoneFeedingInput(int input) override { input_done_ = true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  int64_t EstimatedWorkOrders() const override { return static_cast<int64_t>(blocks_fed_) + 1; }
  void OnAllWorkOrdersFinished() override;
  bool InputSatisfied() const override { return keys_.empty() && limit_ >= 0 && rows_fed_ >= offset_ + limit_; }

 private:
  class RunWorkOrder;
  class MergeWorkOrder;
  struct RowRef {
    uint32_t block;
    uint32_t row;
  };
  // A block's rows in sorted order; only the first `length` (the rows the output needs) count.
  struct Run {
    PoolArray<RowRef> rows;
    size_t length = 0;
  };

  // Whether row x orders before row y (ties: false).
  bool Less(const RowRef& x, const RowRef& y) const;
  // Rows from the start of the sorted order that the output needs: offset + limit, or all.
  size_t RowsNeeded(size_t rows) const;

  std::shared_ptr<TemporaryRelation> input_;
  const std::vector<SortKey> keys_;
  const int64_t limit_;
  const int64_t offset_;
  BufferPool* pool_;
  std::shared_ptr<TemporaryRelation> output_;
  uint32_t blocks_fed_ = 0;
  int64_t rows_fed_ = 0;
  bool input_done_ = false;
  // Set when the runs are issued: the input blocks, and one sorted run per block (filled by its work order).
  std::vector<BlockView> blocks_;
  std::vector<Run> runs_;
  bool runs_issued_ = false;
  std::atomic<size_t> runs_finished_{0};
  bool merge_issued_ = false;
};

// Compares row `a_row` of block `a` with row `b_row` of block `b` on column `column` of type `type`
// (NULLs compare equal to each other and are ordered by the caller). Returns <0, 0, >0.
int CompareColumnValues(const BlockView& a, uint32_t a_row, const BlockView& b, uint32_t b_row, int column,
                        const Type& type);

}  // namespace tessera
