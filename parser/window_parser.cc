// Window syntax: the OVER clause of a window function call, window frames, and the WINDOW clause of a SELECT
// block. Which functions may take OVER, and the meaning of frames, is the binder's business
// (optimizer/window_binder.cc).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "parser/recursive_descent_parser.h"

namespace tessera::parser {

absl::StatusOr<std::unique_ptr<WindowSpec>> RecursiveDescentParser::ParseOverClause() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("OVER"));
  if (AtOperator("(")) return ParseWindowSpec();
  auto spec = std::make_unique<WindowSpec>();
  spec->position = Current().position;
  spec->parenthesized = false;
  TESSERA_ASSIGN_OR_RETURN(spec->base_name, ExpectName("a window name or '('"));
  return spec;
}

absl::StatusOr<std::unique_ptr<WindowSpec>> RecursiveDescentParser::ParseWindowSpec() {
  auto spec = std::make_unique<WindowSpec>();
  spec->position = Current().position;
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  const bool clause_follows =
      AtWord("PARTITION") || AtWord("ORDER") || AtWord("ROWS") || AtWord("RANGE") || AtWord("GROUPS");
  if (IsName(Current()) && !clause_follows) {
    TESSERA_ASSIGN_OR_RETURN(spec->base_name, ExpectName("a window name"));
  }
  if (ConsumeWord("PARTITION")) {
    TESSERA_RETURN_IF_ERROR(ExpectWord("BY"));
    TESSERA_ASSIGN_OR_RETURN(spec->partition_by, ParseExpressionList());
  }
  if (ConsumeWord("ORDER")) {
    TESSERA_RETURN_IF_ERROR(ExpectWord("BY"));
    TESSERA_RETURN_IF_ERROR(ParseOrderByItems(&spec->order_by));
  }
  if (AtWord("GROUPS")) return ErrorAt(Current().position, "GROUPS window frames are not supported");
  if (AtWord("ROWS") || AtWord("RANGE")) {
    TESSERA_ASSIGN_OR_RETURN(spec->frame, ParseWindowFrame());
  }
  if (!AtOperator(")")) {
    return ErrorExpected(spec->frame.has_value()       ? "')'"
                         : !spec->order_by.empty()     ? "ROWS, RANGE or ')'"
                         : !spec->partition_by.empty() ? "ORDER BY, ROWS, RANGE or ')'"
                                                       : "PARTITION BY, ORDER BY, ROWS, RANGE or ')'");
  }
  Advance();
  return spec;
}

absl::StatusOr<WindowFrame> RecursiveDescentParser::ParseWindowFrame() {
  WindowFrame frame;
  frame.position = Current().position;
  frame.unit = AtWord("ROWS") ? FrameUnit::kRows : FrameUnit::kRange;
  Advance();
  if (ConsumeWord("BETWEEN")) {
    TESSERA_ASSIGN_OR_RETURN(frame.start, ParseFrameBound());
    TESSERA_RETURN_IF_ERROR(ExpectWord("AND"));
    TESSERA_ASSIGN_OR_RETURN(frame.end, ParseFrameBound());
  } else {
    TESSERA_ASSIGN_OR_RETURN(frame.start, ParseFrameBound());
    frame.end.kind = FrameBoundKind::kCurrentRow;
    frame.end.position = frame.start.position;
  }
  if (AtWord("EXCLUDE")) return ErrorAt(Current().position, "EXCLUDE in window frames is not supported");
  return frame;
}

absl::StatusOr<FrameBound> RecursiveDescentParser::ParseFrameBound() {
  FrameBound bound;
  bound.position = Current().position;
  if (ConsumeWord("UNBOUNDED")) {
    if (ConsumeWord("PRECEDING")) {
      bound.kind = FrameBoundKind::kUnboundedPreceding;
    } else if (ConsumeWord("FOLLOWING")) {
      bound.kind = FrameBoundKind::kUnboundedFollowing;
    } else {
      return ErrorExpected("PRECEDING or FOLLOWING");
    }
    return bound;
  }
  if (ConsumeWord("CURRENT")) {
    TESSERA_RETURN_IF_ERROR(ExpectWord("ROW"));
    bound.kind = FrameBoundKind::kCurrentRow;
    return bound;
  }
  // `n PRECEDING`: the offset is an additive-level expression, so that the AND of BETWEEN ... AND is not
  // taken for a conjunction.
  TESSERA_ASSIGN_OR_RETURN(bound.offset, ParseBinaryLevel(BinaryLevel::kAdditive));
  if (ConsumeWord("PRECEDING")) {
    bound.kind = FrameBoundKind::kPreceding;
  } else if (ConsumeWord("FOLLOWING")) {
    bound.kind = FrameBoundKind::kFollowing;
  } else {
    return ErrorExpected("PRECEDING or FOLLOWING");
  }
  return bound;
}

absl::Status RecursiveDescentParser::ParseWindowClause(SelectCore& core) {
  TESSERA_RETURN_IF_ERROR(ExpectWord("WINDOW"));
  do {
    WindowDefinition definition;
    definition.position = Current().position;
    TESSERA_ASSIGN_OR_RETURN(definition.name, ExpectName("a window name"));
    for (const WindowDefinition& existing : core.windows) {
      if (existing.name == definition.name) {
        return ErrorAt(definition.position, "window \"" + definition.name + "\" is already defined");
      }
    }
    TESSERA_RETURN_IF_ERROR(ExpectWord("AS"));
    if (!AtOperator("(")) return ErrorExpected("'('");
    TESSERA_ASSIGN_OR_RETURN(definition.spec, ParseWindowSpec());
    core.windows.push_back(std::move(definition));
  } while (ConsumeOperator(","));
  return absl::OkStatus();
}

}  // namespace tessera::parser
