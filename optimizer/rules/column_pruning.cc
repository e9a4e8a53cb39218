#include "optimizer/rules/column_pruning.h"

#include <algorithm>
#include <utility>

#include "optimizer/expression_analysis.h"
#include "optimizer/logical_window.h"

namespace tessera::optimizer {
namespace {

using Needed = std::vector<bool>;

void Mark(const BoundExpression& expression, int offset, Needed* needed) {
  std::vector<int> columns;
  CollectColumns(expression, &columns);
  for (int column : columns) {
    const int local = column - offset;
    if (local >= 0 && local < static_cast<int>(needed->size())) (*needed)[local] = true;
  }
}

void EnsureOne(Needed* needed) {
  if (!needed->empty() && std::find(needed->begin(), needed->end(), true) == needed->end()) (*needed)[0] = true;
}

void Apply(const std::vector<int>& mapping, BoundExpression* expression) {
  RemapColumns(expression, [&](int column) { return mapping[column]; });
}

// Prunes `node` to (at least) the `needed` output columns; mapping[i] = new index of old column i (-1 if
// gone).
LogicalOperatorPtr Prune(LogicalOperatorPtr node, Needed needed, std::vector<int>* mapping);

LogicalOperatorPtr PruneAll(LogicalOperatorPtr node) {
  std::vector<int> mapping;
  Needed all(node->output_width(), true);
  return Prune(std::move(node), all, &mapping);
}

std::vector<int> Identity(int width) {
  std::vector<int> mapping(width);
  for (int i = 0; i < width; ++i) mapping[i] = i;
  return mapping;
}

// Merges a Project into a Project below it when every computed expression of the lower one is used at most
// once.
LogicalOperatorPtr MergeProjects(std::unique_ptr<Project> upper) {
  if (upper->children[0]->kind() != LogicalOperatorKind::kProject) return upper;
  auto& lower = upper->children[0]->As<Project>();
  std::vector<int> uses(lower.expressions.size(), 0);
  for (const auto& expression : upper->expressions) {
    std::vector<int> columns;
    CollectColumns(*expression, &columns);
    for (int column : columns) uses[column]++;
  }
  for (size_t i = 0; i < lower.expressions.size(); ++i) {
    const ExpressionKind kind = lower.expressions[i]->kind;
    if (uses[i] > 1 && kind != ExpressionKind::kColumn && kind != ExpressionKind::kConstant) return upper;
  }
  std::vector<const BoundExpression*> replacements;
  for (const auto& expression : lower.expressions) replacements.push_back(expression.get());
  std::vector<ExpressionPtr> merged;
  for (const auto& expression : upper->expressions) merged.push_back(SubstituteColumns(*expression, replacements));
  upper->expressions = std::move(merged);
  if (upper->relations.empty()) {
    for (size_t i = 0; i < upper->expressions.size(); ++i) {
      upper->relations.push_back(upper->output()[i].relation);
    }
  }
  LogicalOperatorPtr grandchild = std::move(upper->children[0]->children[0]);
  upper->children[0] = std::move(grandchild);
  upper->RecomputeOutput();
  return upper;
}

LogicalOperatorPtr Prune(LogicalOperatorPtr node, Needed needed, std::vector<int>* mapping) {
  const int width = node->output_width();
  needed.resize(width, false);
  EnsureOne(&needed);
  switch (node->kind()) {
    case LogicalOperatorKind::kTableScan: {
      auto& scan = node->As<TableScan>();
      if (scan.filter != nullptr) Mark(*scan.filter, 0, &needed);
      std::vector<int> columns;
      mapping->assign(width, -1);
      for (int i = 0; i < width; ++i) {
        if (!needed[i]) continue;
        (*mapping)[i] = static_cast<int>(columns.size());
        columns.push_back(scan.columns[i]);
      }
      scan.columns = std::move(columns);
      if (scan.filter != nullptr) Apply(*mapping, scan.filter.get());
      scan.RecomputeOutput();
      return node;
    }
    case LogicalOperatorKind::kFilter: {
      auto& filter = node->As<Filter>();
      Mark(*filter.predicate, 0, &needed);
      node->children[0] = Prune(std::move(node->children[0]), needed, mapping);
      Apply(*mapping, filter.predicate.get());
      node->RecomputeOutput();
      return node;
    }
    case LogicalOperatorKind::kSort: {
      auto& sort = node->As<Sort>();
      for (const SortKey& key : sort.keys) Mark(*key.expression, 0, &needed);
      node->children[0] = Prune(std::move(node->children[0]), needed, mapping);
      for (SortKey& key : sort.keys) Apply(*mapping, key.expression.get());
      node->RecomputeOutput();
      return node;
    }
    case LogicalOperatorKind::kLimit: {
      node->children[0] = Prune(std::move(node->children[0]), needed, mapping);
      node->RecomputeOutput();
      return node;
    }
    case LogicalOperatorKind::kSeries:  // its one column stays
    case LogicalOperatorKind::kDistinct:
    case LogicalOperatorKind::kSetOperation: {
      for (auto& child : node->children) child = PruneAll(std::move(child));
      node->RecomputeOutput();
      *mapping = Identity(width);
      return node;
    }
    case LogicalOperatorKind::kValues: {
      auto& values = node->As<Values>();
      mapping->assign(width, -1);
      std::vector<OutputColumn> columns;
      for (int i = 0; i < width; ++i) {
        if (!needed[i]) continue;
        (*mapping)[i] = static_cast<int>(columns.size());
        columns.push_back(values.columns[i]);
      }
      for (auto& row : values.rows) {
        std::vector<Value> kept;
        for (int i = 0; i < width; ++i) {
          if (needed[i]) kept.push_back(row[i]);
        }
        row = std::move(kept);
      }
      values.columns = std::move(columns);
      node->RecomputeOutput();
      return node;
    }
    case LogicalOperatorKind::kProject: {
      auto& project = node->As<Project>();
      std::vector<ExpressionPtr> expressions;
      std::vector<std::string> names;
      std::vector<std::string> relations;
      mapping->assign(width, -1);
      for (int i = 0; i < width; ++i) {
        if (!needed[i]) continue;
        (*mapping)[i] = static_cast<int>(expressions.size());
        names.push_back(project.names[i]);
        relations.push_back(project.output()[i].relation);
        expressions.push_back(std::move(project.expressions[i]));
      }
      Needed child_needed(node->children[0]->output_width(), false);
      for (const auto& expression : expressions) Mark(*expression, 0, &child_needed);
      std::vector<int> child_mapping;
      node->children[0] = Prune(std::move(node->children[0]), child_needed, &child_mapping);
      for (auto& expression : expressions) Apply(child_mapping, expression.get());
      project.expressions = std::move(expressions);
      project.names = std::move(names);
      project.relations = std::move(relations);
      node->RecomputeOutput();
      std::unique_ptr<Project> owned(static_cast<Project*>(node.release()));
      return MergeProjects(std::move(owned));
    }
    case LogicalOperatorKind::kAggregate: {
      auto& aggregate = node->As<Aggregate>();
      const int keys = static_cast<int>(aggregate.group_by.size());
      mapping->assign(width, -1);
      for (int i = 0; i < keys; ++i) (*mapping)[i] = i;
      std::vector<AggregateCall> calls;
      for (int i = keys; i < width; ++i) {
        if (!needed[i]) continue;
        (*mapping)[i] = keys + static_cast<int>(calls.size());
        calls.push_back(std::move(aggregate.aggregates[i - keys]));
      }
      aggregate.aggregates = std::move(calls);
      Needed child_needed(node->children[0]->output_width(), false);
      for (const auto& key : aggregate.group_by) Mark(*key, 0, &child_needed);
      for (const AggregateCall& call : aggregate.aggregates) {
        if (call.argument != nullptr) Mark(*call.argument, 0, &child_needed);
      }
      std::vector<int> child_mapping;
      node->children[0] = Prune(std::move(node->children[0]), child_needed, &child_mapping);
      for (auto& key : aggregate.group_by) Apply(child_mapping, key.get());
      for (AggregateCall& call : aggregate.aggregates) {
        if (call.argument != nullptr) Apply(child_mapping, call.argument.get());
      }
      node->RecomputeOutput();
      return node;
    }
    case LogicalOperatorKind::kWindow: {
      // Calls whose columns nobody reads are dropped, and the node with them when none is left.
      auto& window = node->As<Window>();
      const int child_width = node->children[0]->output_width();
      std::vector<WindowCall> calls;
      std::vector<int> kept;
      for (int i = child_width; i < width; ++i) {
        if (!needed[i]) continue;
        kept.push_back(i);
        calls.push_back(std::move(window.calls[i - child_width]));
      }
      Needed child_needed(needed.begin(), needed.begin() + child_width);
      if (calls.empty()) {
        LogicalOperatorPtr child = Prune(std::move(node->children[0]), child_needed, mapping);
        mapping->resize(width, -1);
        return child;
      }
      window.calls = std::move(calls);
      VisitWindowExpressions(std::as_const(window),
                             [&](const BoundExpression& expression) { Mark(expression, 0, &child_needed); });
      std::vector<int> child_mapping;
      node->children[0] = Prune(std::move(node->children[0]), child_needed, &child_mapping);
      VisitWindowExpressions(window, [&](ExpressionPtr& expression) { Apply(child_mapping, expression.get()); });
      const int new_child_width = node->children[0]->output_width();
      *mapping = std::move(child_mapping);
      mapping->resize(width, -1);
      for (size_t k = 0; k < kept.size(); ++k) (*mapping)[kept[k]] = new_child_width + static_cast<int>(k);
      node->RecomputeOutput();
      return node;
    }
    case LogicalOperatorKind::kJoin: {
      auto& join = node->As<Join>();
      const int left_width = node->children[0]->output_width();
      const int right_width = node->children[1]->output_width();
      const bool left_only_output = join.join_type == JoinType::kSemi || join.join_type == JoinType::kAnti;
      Needed left_needed(left_width, false);
      Needed right_needed(right_width, false);
      for (int i = 0; i < width; ++i) {
        if (!needed[i]) continue;
        if (i < left_width) {
          left_needed[i] = true;
        } else {
          right_needed[i - left_width] = true;
        }
      }
      for (const auto& key : join.left_keys) Mark(*key, 0, &left_needed);
      for (const auto& key : join.right_keys) Mark(*key, 0, &right_needed);
      if (join.residual != nullptr) {
        Mark(*join.residual, 0, &left_needed);
        Mark(*join.residual, left_width, &right_needed);
      }
      std::vector<int> left_mapping;
      std::vector<int> right_mapping;
      node->children[0] = Prune(std::move(node->children[0]), left_needed, &left_mapping);
      node->children[1] = Prune(std::move(node->children[1]), right_needed, &right_mapping);
      const int new_left_width = node->children[0]->output_width();
      for (auto& key : join.left_keys) Apply(left_mapping, key.get());
      for (auto& key : join.right_keys) Apply(right_mapping, key.get());
      std::vector<int> combined = left_mapping;
      for (int i = 0; i < right_width; ++i) {
        combined.push_back(right_mapping[i] < 0 ? -1 : new_left_width + right_mapping[i]);
      }
      if (join.residual != nullptr) Apply(combined, join.residual.get());
      if (left_only_output) combined.resize(left_width);
      *mapping = std::move(combined);
      node->RecomputeOutput();
      return node;
    }
  }
  *mapping = Identity(width);
  return node;
}

}  // namespace

LogicalOperatorPtr ColumnPruning::Apply(LogicalOperatorPtr plan) const { return PruneAll(std::move(plan)); }

}  // namespace tessera::optimizer
