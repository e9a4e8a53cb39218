#pragma once
// The front end shared by operators that read blocks: loads a block's needed columns a vector at a time, skips
// whole blocks whose zone maps rule out the filter, and applies the filter. One scanner per work order.

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "expressions/batch.h"
#include "expressions/bound_expression.h"
#include "expressions/expression_evaluator.h"
#include "storage/block_layout.h"

namespace tessera {

// What to read: `block_columns[i]` is the block column loaded as batch column i (with `types[i]`); `filter`
// (optional) is a predicate over batch columns. Shared by all work orders of an operator; immutable.
struct ScanSpec {
  std::vector<int> block_columns;
  std::vector<Type> types;
  std::unique_ptr<BoundExpression> filter;

  // Conjuncts of `filter` of the form column <op> constant, for zone-map skipping. Filled by Prepare().
  struct RangeTerm {
    int batch_column;
    ComparisonOp op;
    Value constant;
  };
  std::vector<RangeTerm> range_terms;
  void Prepare();
};

class BlockScanner {
 public:
  explicit BlockScanner(const ScanSpec& spec);

  // True if the block's zone maps prove that no row passes the filter.
  bool CanSkip(const BlockView& block) const;

  // Iterates over the block a vector at a time. Returns false when the block is exhausted. On true, `batch()`
  // holds the next vector of rows and `selection()` the rows passing the filter (null: all rows pass).
  absl::StatusOr<bool> Next(const BlockView& block);
  void Reset() { next_row_ = 0; }

  const Batch& batch() const { return batch_; }
  const SelectionVector* selection() const { return has_filter_ ? &selection_ : nullptr; }
  uint32_t selected_count() const { return has_filter_ ? selection_.count : batch_.size; }

 private:
  const ScanSpec& spec_;
  bool has_filter_;
  std::unique_ptr<ExpressionEvaluator> filter_;
  Batch batch_;
  SelectionVector selection_;
  uint32_t next_row_ = 0;
};

}  // namespace tessera
