#pragma once
// The logical Window node: window functions (`rank() OVER (PARTITION BY a ORDER BY b)`) that share one
// PARTITION BY / ORDER BY, computed over the child's rows. Kept apart from logical_plan.h because only the
// binder's window part (window_binder.cc), the rules that must see through it and the plan builder use it.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

enum class WindowFunction {
  kRowNumber,
  kRank,
  kDenseRank,
  kPercentRank,
  kCumeDist,
  kNtile,
  kLag,
  kLead,
  kFirstValue,
  kLastValue,
  kNthValue,
  kCountStar,
  kCount,
  kSum,
  kAvg,
  kMin,
  kMax,
};

// One end of a window frame. For ROWS, `offset` counts rows; RANGE frames have no offsets (the binder rejects
// them), so a RANGE bound of kCurrentRow means the current row's last (end) or first (start) peer.
struct WindowFrameBound {
  enum class Kind { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing, kUnboundedFollowing };
  Kind kind = Kind::kUnboundedPreceding;
  int64_t offset = 0;  // kPreceding / kFollowing: >= 0
};

struct WindowFrame {
  bool rows = false;  // ROWS (true) or RANGE (false)
  WindowFrameBound start;
  WindowFrameBound end{WindowFrameBound::Kind::kCurrentRow, 0};
};

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

std::string WindowFunctionName(WindowFunction function);
// Whether the function reads a frame (aggregates and first_value / last_value / nth_value); the others are
// defined by the partition and the peer groups alone.
bool WindowFunctionUsesFrame(WindowFunction function);

// Computes `calls` over the partitions of the child's rows by `partition_by`, each ordered by `order_by`.
// Output: the child's columns, then one column per call. Row order of the output is unspecified.
class Window final : public LogicalOperator {
 public:
  Window() : LogicalOperator(LogicalOperatorKind::kWindow) {}
  std::vector<ExpressionPtr> partition_by;  // over the child's output
  std::vector<SortKey> order_by;            // over the child's output
  std::vector<WindowCall> calls;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

// Calls `visit` on every expression of `window` (partition keys, order keys, call arguments), for rules that
// read or rewrite all of a node's expressions.
void VisitWindowExpressions(Window& window, const std::function<void(ExpressionPtr&)>& visit);
void VisitWindowExpressions(const Window& window, const std::function<void(const BoundExpression&)>& visit);

}  // namespace tessera::optimizer
