// Window function calls of one SELECT block: `f(args) OVER ([PARTITION BY ...] [ORDER BY ...] [frame])`.
//
// Window calls are bound after the block's aggregation and HAVING and before its select list, in the select
// list's context: their arguments and windows may use aggregates and GROUP BY keys (`rank() OVER (ORDER BY
// sum(x))`, `sum(sum(x)) OVER (PARTITION BY y)`). Calls with the same PARTITION BY and ORDER BY share one
// Window node (one sort at run time); nodes for different windows are stacked. Each node appends its calls'
// columns to its input, so the columns below (aggregates, group keys) keep their indexes, and the select list
// and ORDER BY then refer to a window call by its column (WindowBinding).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/logical_window.h"
#include "optimizer/query_binder.h"
#include "optimizer/type_rules.h"
#include "parser/parser.h"

namespace tessera::optimizer {
namespace {

using parser::ExprKind;
using parser::ParsedExpr;

void CollectWindowCalls(const ParsedExpr& expr, std::vector<const ParsedExpr*>* calls) {
  if (expr.kind == ExprKind::kFunctionCall && expr.window != nullptr) {
    calls->push_back(&expr);
    return;
  }
  for (const auto& child : expr.children) CollectWindowCalls(*child, calls);
}

// The clauses in which a window call is nested inside another one.
bool IsWindowClause(const std::string& clause) {
  return clause == "window function arguments" || clause == "PARTITION BY" || clause == "window ORDER BY";
}

std::optional<WindowFunction> WindowFunctionByName(const std::string& lower, bool star) {
  if (lower == "row_number") return WindowFunction::kRowNumber;
  if (lower == "rank") return WindowFunction::kRank;
  if (lower == "dense_rank") return WindowFunction::kDenseRank;
  if (lower == "percent_rank") return WindowFunction::kPercentRank;
  if (lower == "cume_dist") return WindowFunction::kCumeDist;
  if (lower == "ntile") return WindowFunction::kNtile;
  if (lower == "lag") return WindowFunction::kLag;
  if (lower == "lead") return WindowFunction::kLead;
  if (lower == "first_value") return WindowFunction::kFirstValue;
  if (lower == "last_value") return WindowFunction::kLastValue;
  if (lower == "nth_value") return WindowFunction::kNthValue;
  if (lower == "count") return star ? WindowFunction::kCountStar : WindowFunction::kCount;
  if (lower == "sum") return WindowFunction::kSum;
  if (lower == "avg") return WindowFunction::kAvg;
  if (lower == "min") return WindowFunction::kMin;
  if (lower == "max") return WindowFunction::kMax;
  return std::nullopt;
}

AggregateKind AsAggregate(WindowFunction function) {
  switch (function) {
    case WindowFunction::kCountStar:
      return AggregateKind::kCountStar;
    case WindowFunction::kCount:
      return AggregateKind::kCount;
    case WindowFunction::kSum:
      return AggregateKind::kSum;
    case WindowFunction::kAvg:
      return AggregateKind::kAvg;
    case WindowFunction::kMin:
      return AggregateKind::kMin;
    default:
      return AggregateKind::kMax;
  }
}

bool SameKeys(const std::vector<ExpressionPtr>& a, const std::vector<ExpressionPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ExpressionsEqual(*a[i], *b[i])) return false;
  }
  return true;
}

bool SameOrder(const std::vector<SortKey>& a, const std::vector<SortKey>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].ascending != b[i].ascending || a[i].nulls_first != b[i].nulls_first ||
        !ExpressionsEqual(*a[i].expression, *b[i].expression)) {
      return false;
    }
  }
  return true;
}

WindowFrameBound::Kind BoundKind(parser::FrameBoundKind kind) {
  switch (kind) {
    case parser::FrameBoundKind::kUnboundedPreceding:
      return WindowFrameBound::Kind::kUnboundedPreceding;
    case parser::FrameBoundKind::kPreceding:
      return WindowFrameBound::Kind::kPreceding;
    case parser::FrameBoundKind::kCurrentRow:
      return WindowFrameBound::Kind::kCurrentRow;
    case parser::FrameBoundKind::kFollowing:
      return WindowFrameBound::Kind::kFollowing;
    case parser::FrameBoundKind::kUnboundedFollowing:
      return WindowFrameBound::Kind::kUnboundedFollowing;
  }
  return WindowFrameBound::Kind::kCurrentRow;
}

}  // namespace

bool QueryBinder::ContainsWindow(const ParsedExpr& expr) {
  if (expr.kind == ExprKind::kFunctionCall && expr.window != nullptr) return true;
  for (const auto& child : expr.children) {
    if (ContainsWindow(*child)) return true;
  }
  return false;
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindWindowReference(const ParsedExpr& expr, ExpressionContext& context) {
  if (context.windows != nullptr) {
    auto it = context.windows->columns.find(&expr);
    if (it != context.windows->columns.end()) return MakeColumn(it->second.index, it->second.type);
  }
  if (IsWindowClause(context.clause)) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position, "window function calls cannot be nested");
  }
  return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                 absl::StrCat("window functions are not allowed in ", context.clause));
}

struct QueryBinder::ResolvedWindow {
  const std::vector<std::unique_ptr<ParsedExpr>>* partition_by = nullptr;
  const std::vector<parser::OrderByItem>* order_by = nullptr;
  const parser::WindowFrame* frame = nullptr;
};

absl::StatusOr<QueryBinder::ResolvedWindow> QueryBinder::ResolveWindow(const parser::WindowSpec& spec,
                                                                       const parser::SelectCore& core) const {
  // Named windows: `OVER w` takes w as it is; `OVER (w ...)` adds an ORDER BY and a frame to w's PARTITION
  // BY (and ORDER BY, when it has none of its own), as in PostgreSQL.
  ResolvedWindow window{&spec.partition_by, &spec.order_by, spec.frame.has_value() ? &*spec.frame : nullptr};
  if (spec.base_name.empty()) return window;
  const parser::WindowDefinition* definition = nullptr;
  for (const parser::WindowDefinition& candidate : core.windows) {
    if (candidate.name == spec.base_name) definition = &candidate;
  }
  if (definition == nullptr) {
    return ErrorAt(absl::StatusCode::kNotFound, spec.position,
                   absl::StrCat("window \"", spec.base_name, "\" does not exist"));
  }
  const parser::WindowSpec& base = *definition->spec;
  if (!base.base_name.empty()) {
    return ErrorAt(absl::StatusCode::kUnimplemented, base.position,
                   "a WINDOW definition that refers to another window is not supported");
  }
  if (spec.parenthesized) {
    if (!spec.partition_by.empty()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, spec.position,
                     absl::StrCat("cannot override PARTITION BY clause of window \"", spec.base_name, "\""));
    }
    if (!spec.order_by.empty() && !base.order_by.empty()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, spec.position,
                     absl::StrCat("cannot override ORDER BY clause of window \"", spec.base_name, "\""));
    }
    if (base.frame.has_value()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, spec.position,
                     absl::StrCat("cannot copy window \"", spec.base_name, "\" because it has a frame clause"));
    }
  }
  window.partition_by = &base.partition_by;
  if (spec.order_by.empty()) window.order_by = &base.order_by;
  if (window.frame == nullptr && base.frame.has_value()) window.frame = &*base.frame;
  return window;
}

absl::StatusOr<WindowCall> QueryBinder::BindWindowCall(const ParsedExpr& node, ExpressionContext& context) {
  const std::string lower = absl::AsciiStrToLower(node.name);
  const bool star = node.children.size() == 1 && node.children[0]->kind == ExprKind::kStar;
  std::optional<WindowFunction> function = WindowFunctionByName(lower, star);
  if (!function.has_value()) {
    return ErrorAt(absl::StatusCode::kNotFound, node.position,
                   absl::StrCat("window function ", lower, " does not exist"));
  }
  if (node.distinct) {
    return ErrorAt(absl::StatusCode::kUnimplemented, node.position, "DISTINCT in window functions is not supported");
  }
  WindowCall call;
  call.function = *function;
  call.name = parser::ToString(node);
  call.parameter = 1;
  const size_t argument_count = star ? 0 : node.children.size();
  auto arity_error = [&](std::string_view expected) {
    return ErrorAt(
        absl::StatusCode::kInvalidArgument, node.position,
        absl::StrCat("window function ", lower, " expects ", std::string(expected), ", got ", argument_count));
  };
  auto positive_count = [&](const ParsedExpr& count, std::string_view what) -> absl::StatusOr<int64_t> {
    TESSERA_ASSIGN_OR_RETURN(const int64_t value, BindCount(count, what));
    if (value == 0) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, count.position,
                     absl::StrCat(std::string(what), " must be greater than zero"));
    }
    return value;
  };
  ExpressionContext argument_context = context;
  argument_context.clause = "window function arguments";
  argument_context.conjunct_root = false;
  ExpressionPtr argument;
  if (argument_count > 0 && *function != WindowFunction::kNtile) {
    TESSERA_ASSIGN_OR_RETURN(argument, BindExpression(*node.children[0], argument_context));
  }
  switch (*function) {
    case WindowFunction::kRowNumber:
    case WindowFunction::kRank:
    case WindowFunction::kDenseRank:
    case WindowFunction::kPercentRank:
    case WindowFunction::kCumeDist:
      if (argument_count != 0) return arity_error("no arguments");
      call.result_type = *function == WindowFunction::kPercentRank || *function == WindowFunction::kCumeDist
                             ? Type::Double()
                             : Type::BigInt();
      break;
    case WindowFunction::kNtile: {
      if (argument_count != 1) return arity_error("1 argument");
      TESSERA_ASSIGN_OR_RETURN(call.parameter, positive_count(*node.children[0], "ntile's argument"));
      call.result_type = Type::BigInt();
      break;
    }
    case WindowFunction::kLag:
    case WindowFunction::kLead: {
      if (argument_count < 1 || argument_count > 3) return arity_error("1 to 3 arguments");
      if (argument_count >= 2) {
        TESSERA_ASSIGN_OR_RETURN(call.parameter, BindCount(*node.children[1], absl::StrCat(lower, "'s offset")));
      }
      call.result_type = argument->result_type;
      call.default_value = Value::Null(call.result_type);
      if (argument_count == 3) {
        TESSERA_ASSIGN_OR_RETURN(ExpressionPtr fallback, BindExpression(*node.children[2], argument_context));
        fallback = FoldConstantsDeep(std::move(fallback));
        if (fallback->kind != ExpressionKind::kConstant) {
          return ErrorAt(absl::StatusCode::kUnimplemented, node.children[2]->position,
                         absl::StrCat(lower, "'s default must be a constant"));
        }
        TESSERA_ASSIGN_OR_RETURN(fallback, Coerce(std::move(fallback), call.result_type, node.children[2]->position));
        call.default_value = fallback->constant;
      }
      break;
    }
    case WindowFunction::kFirstValue:
    case WindowFunction::kLastValue:
      if (argument_count != 1) return arity_error("1 argument");
      call.result_type = argument->result_type;
      break;
    case WindowFunction::kNthValue: {
      if (argument_count != 2) return arity_error("2 arguments");
      TESSERA_ASSIGN_OR_RETURN(call.parameter, positive_count(*node.children[1], "nth_value's position"));
      call.result_type = argument->result_type;
      break;
    }
    case WindowFunction::kCountStar:
      call.result_type = Type::BigInt();
      break;
    case WindowFunction::kCount:
    case WindowFunction::kSum:
    case WindowFunction::kAvg:
    case WindowFunction::kMin:
    case WindowFunction::kMax: {
      if (argument_count != 1) return arity_error("1 argument");
      Type argument_type;
      std::optional<Type> type = AggregateResultType(AsAggregate(*function), argument->result_type, &argument_type);
      if (!type.has_value()) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, node.position,
                       absl::StrCat("function ", lower, "(", argument->result_type.ToString(), ") does not exist"));
      }
      TESSERA_ASSIGN_OR_RETURN(argument, Coerce(std::move(argument), argument_type, node.children[0]->position));
      call.result_type = *type;
      break;
    }
  }
  if (argument != nullptr && argument->result_type.id() == TypeId::kNull) {
    // A NULL literal argument: any type will do.
    argument = MakeConstant(Value::Null(Type::Integer()));
    if (call.result_type.id() == TypeId::kNull) call.result_type = Type::Integer();
    call.default_value = Value::Null(call.result_type);
  }
  call.argument = std::move(argument);
  return call;
}

absl::Status QueryBinder::BindWindowKeys(const ResolvedWindow& window, ExpressionContext& context,
                                         std::vector<ExpressionPtr>* partition_by, std::vector<SortKey>* sort_keys) {
  ExpressionContext key_context = context;
  key_context.conjunct_root = false;
  key_context.clause = "PARTITION BY";
  for (const auto& key : *window.partition_by) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(*key, key_context));
    partition_by->push_back(std::move(bound));
  }
  key_context.clause = "window ORDER BY";
  for (const parser::OrderByItem& item : *window.order_by) {
    SortKey key;
    TESSERA_ASSIGN_OR_RETURN(key.expression, BindExpression(*item.expr, key_context));
    key.ascending = item.ascending;
    key.nulls_first = item.nulls_first.value_or(!item.ascending);
    sort_keys->push_back(std::move(key));
  }
  return absl::OkStatus();
}

absl::StatusOr<WindowFrame> QueryBinder::BindWindowFrame(const parser::WindowFrame* window_frame, bool ordered) {
  // Without a frame: with ORDER BY, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (the current row's peers
  // included); without, the whole partition.
  WindowFrame bound;
  if (window_frame == nullptr) {
    bound.rows = !ordered;
    bound.start.kind = WindowFrameBound::Kind::kUnboundedPreceding;
    bound.end.kind = ordered ? WindowFrameBound::Kind::kCurrentRow : WindowFrameBound::Kind::kUnboundedFollowing;
  } else {
    const parser::WindowFrame& frame = *window_frame;
    bound.rows = frame.unit == parser::FrameUnit::kRows;
    bound.start.kind = BoundKind(frame.start.kind);
    bound.end.kind = BoundKind(frame.end.kind);
    if (frame.start.kind == parser::FrameBoundKind::kUnboundedFollowing) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, frame.start.position,
                     "frame start cannot be UNBOUNDED FOLLOWING");
    }
    if (frame.end.kind == parser::FrameBoundKind::kUnboundedPreceding) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, frame.end.position, "frame end cannot be UNBOUNDED PRECEDING");
    }
    if (frame.start.kind == parser::FrameBoundKind::kCurrentRow &&
        frame.end.kind == parser::FrameBoundKind::kPreceding) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, frame.end.position,
                     "frame starting from current row cannot have preceding rows");
    }
    if (frame.start.kind == parser::FrameBoundKind::kFollowing &&
        (frame.end.kind == parser::FrameBoundKind::kPreceding ||
         frame.end.kind == parser::FrameBoundKind::kCurrentRow)) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, frame.end.position,
                     "frame starting from following row cannot have preceding rows");
    }
    const parser::FrameBound* bounds[] = {&frame.start, &frame.end};
    WindowFrameBound* targets[] = {&bound.start, &bound.end};
    for (int b = 0; b < 2; ++b) {
      if (bounds[b]->offset == nullptr) continue;
      if (!bound.rows) {
        return ErrorAt(absl::StatusCode::kUnimplemented, bounds[b]->position,
                       "RANGE window frames with an offset (n PRECEDING / n FOLLOWING) are not supported; use ROWS");
      }
      TESSERA_ASSIGN_OR_RETURN(targets[b]->offset, BindCount(*bounds[b]->offset, "a window frame offset"));
    }
  }
  return bound;
}

absl::Status QueryBinder::BindWindows(const parser::SelectCore& core, const std::vector<parser::OrderByItem>* order_by,
                                      ExpressionContext& context, LogicalOperatorPtr* plan, WindowBinding* windows) {
  std::vector<const ParsedExpr*> nodes;
  for (const parser::SelectItem& item : core.items) CollectWindowCalls(*item.expr, &nodes);
  if (order_by != nullptr) {
    for (const parser::OrderByItem& item : *order_by) CollectWindowCalls(*item.expr, &nodes);
  }
  if (nodes.empty()) return absl::OkStatus();

  // One Window node per distinct (PARTITION BY, ORDER BY); calls keep their order within a node.
  struct Group {
    std::vector<ExpressionPtr> partition_by;
    std::vector<SortKey> order_by;
    std::vector<WindowCall> calls;
    std::vector<const ParsedExpr*> nodes;
  };
  std::vector<Group> groups;
  for (const ParsedExpr* node : nodes) {
    TESSERA_ASSIGN_OR_RETURN(const ResolvedWindow window, ResolveWindow(*node->window, core));
    TESSERA_ASSIGN_OR_RETURN(WindowCall call, BindWindowCall(*node, context));
    std::vector<ExpressionPtr> partition_by;
    std::vector<SortKey> sort_keys;
    TESSERA_RETURN_IF_ERROR(BindWindowKeys(window, context, &partition_by, &sort_keys));
    TESSERA_ASSIGN_OR_RETURN(call.frame, BindWindowFrame(window.frame, !sort_keys.empty()));
    if (!WindowFunctionUsesFrame(call.function)) call.frame = WindowFrame{};

    Group* group = nullptr;
    for (Group& candidate : groups) {
      if (SameKeys(candidate.partition_by, partition_by) && SameOrder(candidate.order_by, sort_keys)) {
        group = &candidate;
      }
    }
    if (group == nullptr) {
      groups.emplace_back();
      group = &groups.back();
      group->partition_by = std::move(partition_by);
      group->order_by = std::move(sort_keys);
    }
    group->calls.push_back(std::move(call));
    group->nodes.push_back(node);
  }

  for (Group& group : groups) {
    int column = (*plan)->output_width();
    for (size_t i = 0; i < group.calls.size(); ++i) {
      windows->columns[group.nodes[i]] = WindowBinding::Column{column++, group.calls[i].result_type};
    }
    auto node = std::make_unique<Window>();
    node->partition_by = std::move(group.partition_by);
    node->order_by = std::move(group.order_by);
    node->calls = std::move(group.calls);
    node->children.push_back(std::move(*plan));
    node->RecomputeOutput();
    *plan = std::move(node);
  }
  return absl::OkStatus();
}

}  // namespace tessera::optimizer
