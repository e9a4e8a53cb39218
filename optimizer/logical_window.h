#pragma once
// The logical Window node: window functions (`rank() OVER (PARTITION BY a ORDER BY b)`) that share one
// PARTITION BY / ORDER BY, computed over the child's rows. Kept apart from logical_plan.h because only the
// binder's window part (window_binder.cc), the rules that must see through it and the plan builder use it.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "expressions/window_function.h"
#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// The function kinds and frames are expressions/window_function.h's, shared with the window operator.
using WindowFunction = WindowFunctionKind;

struct WindowCall {
  WindowFunction function = WindowFunction::kRowNumber;
  ExpressionPtr argument;  // over the child's output; null for row_number, rank, ..., ntile, count(*)
  // ntile: the bucket count (> 0); lag / lead: the offset (>= 0); nth_value: n (> 0).
  int64_t parameter = 0;
  Value default_value;  // lag / lead: the value beyond the partition (of result_type; NULL by default)
  WindowFrame frame;    // used by the aggregates and first_value / last_value / nth_value
  Type result_type;
  std::string name;  // output column name, e.g. "rank() OVER (ORDER BY x)"

  WindowCall Clone() const;
};

// Computes `calls` over the partitions of the child's rows by `partition_by`, each ordered by `order_by`.
// Output: the child's columns, then one column per call. Row order of the output is unspecified.
class Window final : public LogicalOperator {
 public:
  Window() : LogicalOperator(LogicalOperatorKind::kWindow) {}
  std::vector<ExpressionPtr> partition_by;  // over the child's output
  std::vector<SortKey> order_by;            // over the child's output
  std::vector<WindowCall> calls;
  // Top-N per partition (rules/window_top_n.h): when limit_call >= 0, only the rows whose call `limit_call` (a
  // row_number or rank) is at most `limit` are output, the others may be dropped; every call is then a
  // row_number, rank or dense_rank, whose values on the rows kept are those over all rows. A filter above keeps
  // the rows exact: dropping this setting never changes the query's result.
  int limit_call = -1;
  int64_t limit = 0;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

// Whether `window` may keep only the rows whose call `call` is at most some N (Window::limit_call): that call
// is a row_number or rank and every call is a row_number, rank or dense_rank (the rows dropped then change no
// value on the rows kept).
bool WindowTopNApplies(const Window& window, int call);

// Calls `visit` on every expression of `window` (partition keys, order keys, call arguments), for rules that
// read or rewrite all of a node's expressions.
void VisitWindowExpressions(Window& window, const std::function<void(ExpressionPtr&)>& visit);
void VisitWindowExpressions(const Window& window, const std::function<void(const BoundExpression&)>& visit);

}  // namespace tessera::optimizer
