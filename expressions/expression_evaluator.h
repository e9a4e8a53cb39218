#pragma once
// ExpressionEvaluator: vectorized evaluation of one bound expression over batches.
//
// The constructor compiles the tree once: it picks a typed kernel for every node, inserts the implicit casts
// the kernels need (e.g. INTEGER -> BIGINT when operand types differ), folds constant subtrees, and
// preallocates a kVectorSize scratch vector per node. Evaluate/Filter then allocate nothing once the first
// batch has been seen (string results may grow their arenas).
//
// Evaluation covers only the selected rows, and results keep row positions: row i of a result belongs to row
// i of the batch; values at unselected rows are unspecified. Short-circuiting: AND/OR, CASE and COALESCE
// evaluate later operands only on the rows that still need them, so `x <> 0 AND 10 / x > 1` never divides by
// zero.
//
// Errors (overflow, division by zero, bad casts, type combinations no kernel handles) are absl::Status values
// (InvalidArgument or OutOfRange); a compile-time problem is reported by status() and by every call.
//
// Threading: an evaluator is used by one thread at a time (its scratch vectors are mutable); create one per
// worker or work order. The BoundExpression must outlive the evaluator only during construction.

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "expressions/batch.h"
#include "expressions/bound_expression.h"
#include "expressions/column_vector.h"

namespace tessera {

class ExpressionEvaluator {
 public:
  explicit ExpressionEvaluator(const BoundExpression& expr);
  ~ExpressionEvaluator();
  ExpressionEvaluator(ExpressionEvaluator&&) noexcept;
  ExpressionEvaluator& operator=(ExpressionEvaluator&&) noexcept;

  // OK, or why the expression cannot be evaluated (returned by every Evaluate/Filter call as well).
  const absl::Status& status() const;
  const Type& result_type() const;

  // Evaluates over the rows in `selection` (null: all rows of `input`). The result vector is valid until the
  // next call (it may view the batch's memory, e.g. for a column reference). Precondition: input.size <=
  // kVectorSize.
  absl::StatusOr<const ColumnVector*> Evaluate(const Batch& input, const SelectionVector* selection);

  // Keeps the rows of `in` (null: all rows) where the predicate is TRUE (not FALSE, not NULL) and writes them
  // to `out` (ascending; `out` may be `in`). out->rows is grown to kVectorSize if smaller.
  absl::Status Filter(const Batch& input, const SelectionVector* in, SelectionVector* out);

 private:
  class Program;
  std::unique_ptr<Program> program_;
};

}  // namespace tessera
