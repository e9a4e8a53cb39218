#include "optimizer/rules/inner_to_semi_join.h"

#include <vector>

#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"

namespace tessera::optimizer {
namespace {

// mapping[c]: the new index of old output column c, -1 where it was dropped.
using ColumnMapping = std::vector<int>;

ColumnMapping Identity(int width) {
  ColumnMapping mapping(width);
  for (int c = 0; c < width; ++c) mapping[c] = c;
  return mapping;
}

void Remap(BoundExpression* expression, const ColumnMapping& mapping) {
  RemapColumns(expression, [&](int column) { return mapping[column]; });
}

// A join over `left ++ right` whose inputs were rewritten with these mappings: the new index of a column of the
// old concatenation, for an expression over the new `left ++ right` (left_first) or `right ++ left`.
ColumnMapping Concatenation(const ColumnMapping& left, const ColumnMapping& right, int new_left_width,
                            int new_right_width, bool left_first) {
  ColumnMapping mapping;
  for (int column : left) mapping.push_back(column < 0 ? -1 : column + (left_first ? 0 : new_right_width));
  for (int column : right) mapping.push_back(column < 0 ? -1 : column + (left_first ? new_left_width : 0));
  return mapping;
}

LogicalOperatorPtr Reduce(LogicalOperatorPtr node, const std::vector<int>& needed, ColumnMapping* mapping);

// An inner join read only for the existence of its rows' `needed` columns.
LogicalOperatorPtr ReduceJoin(LogicalOperatorPtr node, const std::vector<int>& needed, ColumnMapping* mapping) {
  auto& join = node->As<Join>();
  const int left_width = node->children[0]->output_width();
  *mapping = Identity(node->output_width());
  if (join.join_type != JoinType::kInner || join.left_keys.empty() || join.enforce_single_row) return node;
  bool needs_left = false;
  bool needs_right = false;
  for (int column : needed) (column < left_width ? needs_left : needs_right) = true;
  if (needs_left && needs_right) return node;
  const int kept = needs_right ? 1 : 0;
  const CardinalityEstimator estimator;
  if (estimator.EstimateRows(*node) <= estimator.EstimateRows(*node->children[kept])) return node;

  // What each input must still provide: the needed columns, the keys, the residual's columns.
  std::vector<int> side_needed[2];
  for (size_t i = 0; i < join.left_keys.size(); ++i) {
    CollectColumns(*join.left_keys[i], &side_needed[0]);
    CollectColumns(*join.right_keys[i], &side_needed[1]);
  }
  std::vector<int> columns = needed;
  if (join.residual != nullptr) CollectColumns(*join.residual, &columns);
  for (int column : columns) {
    if (column < left_width) {
      side_needed[0].push_back(column);
    } else {
      side_needed[1].push_back(column - left_width);
    }
  }
  ColumnMapping side_mapping[2];
  LogicalOperatorPtr left = Reduce(std::move(node->children[0]), side_needed[0], &side_mapping[0]);
  LogicalOperatorPtr right = Reduce(std::move(node->children[1]), side_needed[1], &side_mapping[1]);
  for (size_t i = 0; i < join.left_keys.size(); ++i) {
    Remap(join.left_keys[i].get(), side_mapping[0]);
    Remap(join.right_keys[i].get(), side_mapping[1]);
  }
  const ColumnMapping concatenation = Concatenation(side_mapping[0], side_mapping[1], left->output_width(),
                                                    right->output_width(), /*left_first=*/kept == 0);
  if (join.residual != nullptr) Remap(join.residual.get(), concatenation);

  std::unique_ptr<Join> semi;
  if (kept == 0) {
    semi = MakeJoin(JoinType::kSemi, std::move(left), std::move(right));
    semi->left_keys = std::move(join.left_keys);
    semi->right_keys = std::move(join.right_keys);
  } else {
    semi = MakeJoin(JoinType::kSemi, std::move(right), std::move(left));
    semi->left_keys = std::move(join.right_keys);
    semi->right_keys = std::move(join.left_keys);
  }
  semi->residual = std::move(join.residual);
  semi->RecomputeOutput();
  // The kept input's columns stay at their new indexes; the other input's are gone.
  for (size_t c = 0; c < mapping->size(); ++c) {
    const bool kept_column = (static_cast<int>(c) < left_width) == (kept == 0);
    (*mapping)[c] = kept_column ? concatenation[c] : -1;
  }
  return semi;
}

// Rewrites the subtree `node`, read only for the existence of its rows' `needed` output columns, and sets
// *mapping from its old output columns to the new ones (the needed ones are all kept).
LogicalOperatorPtr Reduce(LogicalOperatorPtr node, const std::vector<int>& needed, ColumnMapping* mapping) {
  switch (node->kind()) {
    case LogicalOperatorKind::kJoin:
      return ReduceJoin(std::move(node), needed, mapping);
    case LogicalOperatorKind::kFilter: {
      auto& filter = node->As<Filter>();
      std::vector<int> child_needed = needed;
      CollectColumns(*filter.predicate, &child_needed);
      node->children[0] = Reduce(std::move(node->children[0]), child_needed, mapping);
      Remap(filter.predicate.get(), *mapping);
      node->RecomputeOutput();
      return node;
    }
    case LogicalOperatorKind::kProject: {
      auto& project = node->As<Project>();
      std::vector<int> child_needed;
      for (int column : needed) CollectColumns(*project.expressions[column], &child_needed);
      ColumnMapping child_mapping;
      node->children[0] = Reduce(std::move(node->children[0]), child_needed, &child_mapping);
      // Expressions over dropped columns are not needed: they go too.
      std::vector<ExpressionPtr> expressions;
      std::vector<std::string> names;
      std::vector<std::string> relations;
      mapping->assign(project.expressions.size(), -1);
      for (size_t i = 0; i < project.expressions.size(); ++i) {
        std::vector<int> columns;
        CollectColumns(*project.expressions[i], &columns);
        bool kept = true;
        for (int column : columns) kept &= child_mapping[column] >= 0;
        if (!kept) continue;
        Remap(project.expressions[i].get(), child_mapping);
        (*mapping)[i] = static_cast<int>(expressions.size());
        expressions.push_back(std::move(project.expressions[i]));
        names.push_back(std::move(project.names[i]));
        if (!project.relations.empty()) relations.push_back(std::move(project.relations[i]));
      }
      project.expressions = std::move(expressions);
      project.names = std::move(names);
      project.relations = std::move(relations);
      node->RecomputeOutput();
      return node;
    }
    default:
      *mapping = Identity(node->output_width());
      return node;
  }
}

LogicalOperatorPtr Visit(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = Visit(std::move(child));
  if (node->kind() != LogicalOperatorKind::kJoin) return node;
  auto& join = node->As<Join>();
  if ((join.join_type != JoinType::kSemi && join.join_type != JoinType::kAnti) || join.enforce_single_row) {
    return node;
  }
  const int left_width = node->children[0]->output_width();
  std::vector<int> needed;
  for (const auto& key : join.right_keys) CollectColumns(*key, &needed);
  if (join.residual != nullptr) {
    std::vector<int> columns;
    CollectColumns(*join.residual, &columns);
    for (int column : columns) {
      if (column >= left_width) needed.push_back(column - left_width);
    }
  }
  ColumnMapping mapping;
  node->children[1] = Reduce(std::move(node->children[1]), needed, &mapping);
  for (auto& key : join.right_keys) Remap(key.get(), mapping);
  if (join.residual != nullptr) {
    RemapColumns(join.residual.get(),
                 [&](int column) { return column < left_width ? column : left_width + mapping[column - left_width]; });
  }
  node->RecomputeOutput();
  return node;
}

}  // namespace

LogicalOperatorPtr InnerToSemiJoin::Apply(LogicalOperatorPtr plan) const { return Visit(std::move(plan)); }

}  // namespace tessera::optimizer
