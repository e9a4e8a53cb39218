#include "optimizer/join_condition.h"

#include "optimizer/expression_analysis.h"

namespace tessera::optimizer {

bool IsEquiJoinConjunct(const BoundExpression& conjunct, int left_width, int total_width) {
  if (conjunct.kind != ExpressionKind::kComparison || conjunct.comparison != ComparisonOp::kEqual) return false;
  const BoundExpression& a = *conjunct.children[0];
  const BoundExpression& b = *conjunct.children[1];
  if (MaxColumnIndex(a) < 0 || MaxColumnIndex(b) < 0) return false;
  const bool a_left = ReferencesOnlyRange(a, 0, left_width);
  const bool a_right = ReferencesOnlyRange(a, left_width, total_width);
  const bool b_left = ReferencesOnlyRange(b, 0, left_width);
  const bool b_right = ReferencesOnlyRange(b, left_width, total_width);
  return (a_left && b_right) || (a_right && b_left);
}

void AddJoinCondition(Join* join, ExpressionPtr condition) {
  const int left_width = join->children[0]->output_width();
  const int total_width = left_width + join->children[1]->output_width();
  std::vector<ExpressionPtr> residual = SplitConjuncts(std::move(join->residual));
  bool added = false;
  for (ExpressionPtr& conjunct : SplitConjuncts(std::move(condition))) {
    added = true;
    if (IsBooleanConstant(*conjunct, true)) continue;
    if (IsEquiJoinConjunct(*conjunct, left_width, total_width)) {
      ExpressionPtr a = std::move(conjunct->children[0]);
      ExpressionPtr b = std::move(conjunct->children[1]);
      if (!ReferencesOnlyRange(*a, 0, left_width)) std::swap(a, b);
      ShiftColumns(b.get(), -left_width);
      join->left_keys.push_back(std::move(a));
      join->right_keys.push_back(std::move(b));
      continue;
    }
    residual.push_back(std::move(conjunct));
  }
  join->residual = CombineConjuncts(std::move(residual));
  if (added && join->join_type == JoinType::kCross) join->join_type = JoinType::kInner;
}

}  // namespace tessera::optimizer
