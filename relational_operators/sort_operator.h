#pragma once
// Sort (ORDER BY) with optional LIMIT/OFFSET (top-k when a limit is given). Blocking: it collects every input
// block, then one work order orders the rows and writes them out. Input and output have the same schema.
//
// TODO(performance): per-block sorted runs in parallel work orders and a k-way merge; the single final work order
// is fine for the small ordered results of TPC-H/SSB but not for sorting large relations.

#include <cstdint>
#include <memory>
#include <vector>

#include "relational_operators/block_input.h"
#include "relational_operators/relational_operator.h"

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

  void FeedInputBlock(int input, uint32_t block_index) override { ++blocks_fed_; }
  void DoneFeedingInput(int input) override { input_done_ = true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  int64_t EstimatedWorkOrders() const override { return 1; }

 private:
  class SortWorkOrder;

  std::shared_ptr<TemporaryRelation> input_;
  const std::vector<SortKey> keys_;
  const int64_t limit_;
  const int64_t offset_;
  std::shared_ptr<TemporaryRelation> output_;
  uint32_t blocks_fed_ = 0;
  bool input_done_ = false;
  bool issued_ = false;
};

// Compares row `a_row` of block `a` with row `b_row` of block `b` on column `column` of type `type`
// (NULLs compare equal to each other and are ordered by the caller). Returns <0, 0, >0.
int CompareColumnValues(const BlockView& a, uint32_t a_row, const BlockView& b, uint32_t b_row, int column,
                        const Type& type);

}  // namespace tessera
