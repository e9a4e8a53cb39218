#pragma once
// Select: filter + projection, one work order per input block. Blocks whose zone maps rule out the filter are
// skipped without reading their columns. Output: a temporary relation with one column per projection.

#include <atomic>
#include <deque>
#include <memory>
#include <vector>

#include "expressions/bound_expression.h"
#include "relational_operators/block_input.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/relational_operator.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {

class SelectOperator : public RelationalOperator {
 public:
  // `projections` are expressions over the scan's batch columns; `output_names` name them.
  SelectOperator(BlockInput input, ScanSpec scan, std::vector<std::unique_ptr<BoundExpression>> projections,
                 std::vector<std::string> output_names, BufferPool* pool);

  void FeedInputBlock(int input, uint32_t block_index) override { blocks_.Feed(block_index); }
  void DoneFeedingInput(int input) override { blocks_.DoneFeeding(); }
  bool ReleasesInputBlocks(int input) const override { return true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  int64_t EstimatedWorkOrders() const override;
  void OnAllWorkOrdersFinished() override { builders_->Clear(); }

  // Blocks skipped by zone maps so far (read on the scheduler thread after work orders finished).
  int64_t skipped_blocks() const { return skipped_blocks_.load(); }

 private:
  class SelectWorkOrder;

  const BlockInput input_;
  ScanSpec scan_;
  const std::vector<std::unique_ptr<BoundExpression>> projections_;
  std::shared_ptr<TemporaryRelation> output_;
  // The work orders' output block builders, reused: a fresh builder grew each staging buffer by doubling (malloc,
  // copy, zero fill) for every input block.
  std::unique_ptr<BlockBuilderPool> builders_;
  BlockWorkQueue blocks_;
  std::atomic<int64_t> skipped_blocks_{0};
};

}  // namespace tessera
