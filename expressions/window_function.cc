#include "expressions/window_function.h"

#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

std::string BoundText(const WindowFrameBound& bound) {
  switch (bound.kind) {
    case WindowFrameBound::Kind::kUnboundedPreceding:
      return "UNBOUNDED PRECEDING";
    case WindowFrameBound::Kind::kPreceding:
      return absl::StrCat(bound.offset, " PRECEDING");
    case WindowFrameBound::Kind::kCurrentRow:
      return "CURRENT ROW";
    case WindowFrameBound::Kind::kFollowing:
      return absl::StrCat(bound.offset, " FOLLOWING");
    case WindowFrameBound::Kind::kUnboundedFollowing:
      return "UNBOUNDED FOLLOWING";
  }
  return "?";
}

}  // namespace

std::string WindowFunctionName(WindowFunctionKind function) {
  switch (function) {
    case WindowFunctionKind::kRowNumber:
      return "row_number";
    case WindowFunctionKind::kRank:
      return "rank";
    case WindowFunctionKind::kDenseRank:
      return "dense_rank";
    case WindowFunctionKind::kPercentRank:
      return "percent_rank";
    case WindowFunctionKind::kCumeDist:
      return "cume_dist";
    case WindowFunctionKind::kNtile:
      return "ntile";
    case WindowFunctionKind::kLag:
      return "lag";
    case WindowFunctionKind::kLead:
      return "lead";
    case WindowFunctionKind::kFirstValue:
      return "first_value";
    case WindowFunctionKind::kLastValue:
      return "last_value";
    case WindowFunctionKind::kNthValue:
      return "nth_value";
    case WindowFunctionKind::kCountStar:
    case WindowFunctionKind::kCount:
      return "count";
    case WindowFunctionKind::kSum:
      return "sum";
    case WindowFunctionKind::kAvg:
      return "avg";
    case WindowFunctionKind::kMin:
      return "min";
    case WindowFunctionKind::kMax:
      return "max";
  }
  return "?";
}

bool WindowFunctionUsesFrame(WindowFunctionKind function) {
  switch (function) {
    case WindowFunctionKind::kFirstValue:
    case WindowFunctionKind::kLastValue:
    case WindowFunctionKind::kNthValue:
    case WindowFunctionKind::kCountStar:
    case WindowFunctionKind::kCount:
    case WindowFunctionKind::kSum:
    case WindowFunctionKind::kAvg:
    case WindowFunctionKind::kMin:
    case WindowFunctionKind::kMax:
      return true;
    default:
      return false;
  }
}

std::string WindowFrameText(const WindowFrame& frame) {
  return absl::StrCat(frame.rows ? "ROWS" : "RANGE", " BETWEEN ", BoundText(frame.start), " AND ",
                      BoundText(frame.end));
}

}  // namespace tessera
