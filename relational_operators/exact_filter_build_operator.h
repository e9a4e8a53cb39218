#pragma once
// Builds an ExactFilter (exact_filter.h) from the build side of a semi / anti join: one work order per input
// block scans it (with the build side's pushed-down filter), evaluates nothing else and sets the key's bit.
// There is no hash table and no materialized build relation. The operators whose scans apply the filter must
// depend on this one through a blocking edge that carries no blocks (ExecutionDag's ordering-only input).

#include <deque>
#include <memory>

#include "relational_operators/block_input.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/exact_filter.h"
#include "relational_operators/relational_operator.h"

namespace tessera {

class ExactFilterBuildOperator : public RelationalOperator {
 public:
  // `key_column` is the batch column of `scan` holding the key.
  ExactFilterBuildOperator(BlockInput input, ScanSpec scan, int key_column, std::shared_ptr<ExactFilter> filter);

  void FeedInputBlock(int input, uint32_t block_index) override {
    if (input == 0) blocks_.Feed(block_index);
  }
  void DoneFeedingInput(int input) override {
    if (input == 0) blocks_.DoneFeeding();
  }
  bool ReleasesInputBlocks(int input) const override { return input == 0; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  int64_t EstimatedWorkOrders() const override;

 private:
  class InsertWorkOrder;

  const BlockInput input_;
  ScanSpec scan_;
  const int key_column_;
  std::shared_ptr<ExactFilter> filter_;
  BlockWorkQueue blocks_;
};

}  // namespace tessera
