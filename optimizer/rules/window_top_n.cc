#include "optimizer/rules/window_top_n.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "optimizer/logical_window.h"

namespace tessera::optimizer {
namespace {

// The bound N that `term` puts on call `*call` of `window` (rows with the call above N fail the term), if it is
// `call op constant` or `constant op call` with op <, <= or = and an integer constant.
std::optional<int64_t> BoundOf(const BoundExpression& term, const Window& window, int* call) {
  if (term.kind != ExpressionKind::kComparison) return std::nullopt;
  const BoundExpression* column = term.children[0].get();
  const BoundExpression* constant = term.children[1].get();
  ComparisonOp op = term.comparison;
  if (column->kind != ExpressionKind::kColumn) {
    std::swap(column, constant);
    op = FlipComparison(op);
  }
  if (column->kind != ExpressionKind::kColumn || constant->kind != ExpressionKind::kConstant) return std::nullopt;
  const TypeId type = constant->constant.type().id();
  if (constant->constant.is_null() || (type != TypeId::kInteger && type != TypeId::kBigInt)) return std::nullopt;
  *call = column->column_index - static_cast<int>(window.children[0]->output().size());
  if (*call < 0 || !WindowTopNApplies(window, *call)) return std::nullopt;
  const int64_t value = constant->constant.AsInt64();
  switch (op) {
    case ComparisonOp::kLessEqual:
    case ComparisonOp::kEqual:
      return value;
    case ComparisonOp::kLess:
      return value <= 0 ? 0 : value - 1;  // ranks are positive: nothing is below 1 (and INT64_MIN - 1 overflows)
    default:
      return std::nullopt;
  }
}

// Narrows `window`'s limit by `term`, a conjunct of the filter over it (nested ANDs are searched).
void Consider(const BoundExpression& term, Window& window) {
  if (term.kind == ExpressionKind::kAnd) {
    for (const auto& child : term.children) Consider(*child, window);
    return;
  }
  int call = -1;
  const std::optional<int64_t> bound = BoundOf(term, window, &call);
  if (!bound.has_value() || (window.limit_call >= 0 && window.limit <= *bound)) return;
  window.limit_call = call;
  window.limit = std::max<int64_t>(*bound, 0);
}

void Visit(LogicalOperator& node) {
  for (auto& child : node.children) Visit(*child);
  if (node.kind() != LogicalOperatorKind::kFilter || node.children[0]->kind() != LogicalOperatorKind::kWindow) return;
  Consider(*node.As<Filter>().predicate, node.children[0]->As<Window>());
}

}  // namespace

LogicalOperatorPtr WindowTopN::Apply(LogicalOperatorPtr plan) const {
  Visit(*plan);
  return plan;
}

}  // namespace tessera::optimizer
