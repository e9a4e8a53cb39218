#pragma once
// UNION ALL: the rows of several inputs (same column types) in one relation, one work order per input block.
// Each input may carry its own pushed-down filter (a scan spec over its blocks). UNION without ALL is this
// operator followed by a DISTINCT (hash aggregation over every column).

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "relational_operators/block_input.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/relational_operator.h"

namespace tessera {

class UnionAllOperator : public RelationalOperator {
 public:
  // Input i is `inputs[i]` read through `scans[i]`, whose first batch columns are the output columns in order
  // (runtime-filter keys that the branch does not output may follow them; they are not copied).
  UnionAllOperator(std::vector<BlockInput> inputs, std::vector<ScanSpec> scans, std::vector<std::string> names,
                   BufferPool* pool);

  void FeedInputBlock(int input, uint32_t block_index) override { pending_.emplace_back(input, block_index); }
  void DoneFeedingInput(int input) override { ++inputs_done_; }
  bool ReleasesInputBlocks(int input) const override { return true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }

 private:
  class CopyWorkOrder;

  const std::vector<BlockInput> inputs_;
  std::vector<ScanSpec> scans_;
  std::shared_ptr<TemporaryRelation> output_;
  std::deque<std::pair<int, uint32_t>> pending_;
  int inputs_done_ = 0;
  bool table_blocks_issued_ = false;
};

}  // namespace tessera
