#pragma once
// What a window function is, shared by the binder's logical Window node (optimizer/logical_window.h) and the
// window operator (relational_operators/window_operator.h): the function kinds and window frames. Plain data;
// the binder types the calls, the operator computes them.

#include <cstdint>
#include <string>

namespace tessera {

enum class WindowFunctionKind {
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

// One end of a window frame. ROWS offsets count rows; a RANGE frame has no offsets (the binder rejects them),
// so a RANGE bound of kCurrentRow is the current row's first peer (start) or last peer (end).
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

// "row_number", "sum", ... (count(*) is "count").
std::string WindowFunctionName(WindowFunctionKind function);
// Whether the function reads a frame (the aggregates and first_value / last_value / nth_value); the others
// are defined by the partition and its peer groups alone.
bool WindowFunctionUsesFrame(WindowFunctionKind function);
// "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW"
std::string WindowFrameText(const WindowFrame& frame);

}  // namespace tessera
