#include "optimizer/rules/exact_filter_semi_join.h"

#include <algorithm>
#include <optional>

#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/logical_window.h"
#include "optimizer/rules/column_pruning.h"

namespace tessera::optimizer {
namespace {

using Needed = std::vector<bool>;

void MarkColumns(const BoundExpression& expression, int offset, Needed* needed) {
  std::vector<int> columns;
  CollectColumns(expression, &columns);
  for (int column : columns) {
    const int local = column - offset;
    if (local >= 0 && local < static_cast<int>(needed->size())) (*needed)[local] = true;
  }
}

// The output columns of each child that `node` reads when the columns `needed` of its own output are read.
std::vector<Needed> ChildNeeds(const LogicalOperator& node, const Needed& needed) {
  std::vector<Needed> children;
  for (const auto& child : node.children) children.emplace_back(child->output_width(), false);
  switch (node.kind()) {
    case LogicalOperatorKind::kTableScan:
    case LogicalOperatorKind::kValues:
    case LogicalOperatorKind::kSeries:
      break;
    case LogicalOperatorKind::kFilter:
      children[0] = needed;
      MarkColumns(*node.As<Filter>().predicate, 0, &children[0]);
      break;
    case LogicalOperatorKind::kLimit:
      children[0] = needed;
      break;
    case LogicalOperatorKind::kSort:
      children[0] = needed;
      for (const SortKey& key : node.As<Sort>().keys) MarkColumns(*key.expression, 0, &children[0]);
      break;
    case LogicalOperatorKind::kProject: {
      const auto& project = node.As<Project>();
      for (size_t i = 0; i < project.expressions.size(); ++i) {
        if (needed[i]) MarkColumns(*project.expressions[i], 0, &children[0]);
      }
      break;
    }
    case LogicalOperatorKind::kAggregate: {
      const auto& aggregate = node.As<Aggregate>();
      for (const auto& key : aggregate.group_by) MarkColumns(*key, 0, &children[0]);
      for (const AggregateCall& call : aggregate.aggregates) {
        if (call.argument != nullptr) MarkColumns(*call.argument, 0, &children[0]);
      }
      break;
    }
    case LogicalOperatorKind::kDistinct:
    case LogicalOperatorKind::kSetOperation:
      for (Needed& child : children) child.assign(child.size(), true);
      break;
    case LogicalOperatorKind::kWindow:
      for (size_t i = 0; i < children[0].size(); ++i) children[0][i] = needed[i];
      VisitWindowExpressions(node.As<Window>(),
                             [&](const BoundExpression& expression) { MarkColumns(expression, 0, &children[0]); });
      break;
    case LogicalOperatorKind::kJoin: {
      const auto& join = node.As<Join>();
      const int left_width = node.children[0]->output_width();
      for (int i = 0; i < static_cast<int>(needed.size()); ++i) {
        if (!needed[i]) continue;
        if (i < left_width) {
          children[0][i] = true;
        } else if (i - left_width < static_cast<int>(children[1].size())) {
          children[1][i - left_width] = true;
        }
      }
      for (const auto& key : join.left_keys) MarkColumns(*key, 0, &children[0]);
      for (const auto& key : join.right_keys) MarkColumns(*key, 0, &children[1]);
      if (join.residual != nullptr) {
        MarkColumns(*join.residual, 0, &children[0]);
        MarkColumns(*join.residual, left_width, &children[1]);
      }
      break;
    }
  }
  return children;
}

bool IsDenseKeyType(const Type& type) {
  return type.id() == TypeId::kInteger || type.id() == TypeId::kBigInt || type.id() == TypeId::kDate;
}

// True when `plan` yields rows of one base table without repeating any (filters, projections, sorts, and semi
// or anti joins, which keep a subset of their left rows: TPC-H Q11's supplier rows of one nation).
bool IsSingleTableSubtree(const LogicalOperator& plan) {
  switch (plan.kind()) {
    case LogicalOperatorKind::kTableScan:
      return true;
    case LogicalOperatorKind::kFilter:
    case LogicalOperatorKind::kProject:
    case LogicalOperatorKind::kSort:
    case LogicalOperatorKind::kLimit:
      return IsSingleTableSubtree(*plan.children[0]);
    case LogicalOperatorKind::kJoin: {
      const JoinType type = plan.As<Join>().join_type;
      return (type == JoinType::kSemi || type == JoinType::kAnti) && IsSingleTableSubtree(*plan.children[0]);
    }
    default:
      return false;
  }
}

// The exact-filter range for `join` if the rule applies (see the header), given the join's needed outputs.
std::optional<Join::ExactFilterRange> ExactFilterRangeFor(const Join& join, const Needed& needed) {
  const bool inner = join.join_type == JoinType::kInner;
  const bool semi_or_anti =
      join.join_type == JoinType::kSemi || (join.join_type == JoinType::kAnti && !join.null_aware);
  if (!(inner || semi_or_anti) || join.exact_filter.has_value() || join.enforce_single_row) return std::nullopt;
  if (join.residual != nullptr || join.left_keys.size() != 1) return std::nullopt;
  const BoundExpression& left_key = *join.left_keys[0];
  const BoundExpression& right_key = *join.right_keys[0];
  if (!IsColumn(left_key) || !IsColumn(right_key) || !IsDenseKeyType(right_key.result_type)) return std::nullopt;
  const LogicalOperator& build = *join.children[1];
  if (inner) {
    const int left_width = join.children[0]->output_width();
    for (size_t i = left_width; i < needed.size(); ++i) {
      if (needed[i]) return std::nullopt;
    }
    if (!IsSingleTableSubtree(build)) return std::nullopt;
  }
  std::optional<ColumnOrigin> origin = FindColumnOrigin(build, right_key.column_index);
  if (!origin.has_value()) return std::nullopt;
  const TableDescriptor& table = *origin->table;
  if (table.row_count <= 0 || origin->column >= static_cast<int>(table.statistics.size())) return std::nullopt;
  if (table.columns[origin->column].type.id() != right_key.result_type.id()) return std::nullopt;
  const ColumnStatistics& statistics = table.statistics[origin->column];
  if (statistics.min.is_null() || statistics.max.is_null()) return std::nullopt;
  const int64_t non_null = table.row_count - statistics.null_count;
  const int64_t min = statistics.min.AsInt64();
  const int64_t max = statistics.max.AsInt64();
  if (non_null <= 0 || max < min) return std::nullopt;
  const double range = static_cast<double>(max) - static_cast<double>(min) + 1;
  if (range > ExactFilterSemiJoin::kDenseFactor * static_cast<double>(non_null)) return std::nullopt;
  if (inner && static_cast<double>(statistics.DistinctEstimate(non_null)) <
                   ExactFilterSemiJoin::kUniqueFraction * static_cast<double>(non_null)) {
    return std::nullopt;
  }
  return Join::ExactFilterRange{min, max, inner};
}

// Bottom-up, so that a join's build side already shows the semi joins that inner joins below became (TPC-H
// Q11: supplier's inner join with nation, whose columns nobody reads, makes the supplier side one table). The
// children's needs do not depend on the conversion: it happens only when no build column is needed.
LogicalOperatorPtr Rewrite(LogicalOperatorPtr node, const Needed& needed, bool* converted_inner) {
  Needed own_needed = needed;
  own_needed.resize(node->output_width(), false);
  std::vector<Needed> child_needs = ChildNeeds(*node, own_needed);
  for (size_t i = 0; i < node->children.size(); ++i) {
    node->children[i] = Rewrite(std::move(node->children[i]), child_needs[i], converted_inner);
  }
  std::vector<OutputColumn> inner_output;  // set when an inner join became a semi join
  if (node->kind() == LogicalOperatorKind::kJoin) {
    auto& join = node->As<Join>();
    if (std::optional<Join::ExactFilterRange> range = ExactFilterRangeFor(join, needed)) {
      join.exact_filter = range;
      if (join.join_type == JoinType::kInner) {
        inner_output = join.output();
        join.join_type = JoinType::kSemi;
        join.RecomputeOutput();
      }
    }
  }
  if (inner_output.empty()) return node;
  // Restore the inner join's width: its build columns are read by nobody above; the build key is equal to the
  // probe key, the others become NULLs until ColumnPruning drops them (it may keep one column of a node).
  *converted_inner = true;
  const auto& join = node->As<Join>();
  const int left_width = node->output_width();
  const int build_key = left_width + join.right_keys[0]->column_index;
  std::vector<ExpressionPtr> expressions;
  std::vector<std::string> names;
  std::vector<std::string> relations;
  for (int i = 0; i < static_cast<int>(inner_output.size()); ++i) {
    expressions.push_back(i < left_width   ? MakeInputColumn(node->output(), i)
                          : i == build_key ? join.left_keys[0]->Clone()
                                           : MakeConstant(Value::Null(inner_output[i].type)));
    names.push_back(inner_output[i].name);
    relations.push_back(inner_output[i].relation);
  }
  std::unique_ptr<Project> project = MakeProject(std::move(node), std::move(expressions), std::move(names));
  project->relations = std::move(relations);
  project->RecomputeOutput();
  return project;
}

bool IsExactFilterJoin(const LogicalOperator& node) {
  return node.kind() == LogicalOperatorKind::kJoin && node.As<Join>().exact_filter.has_value();
}

// Rows of the base tables that `plan` scans (what building its exact filter again would read).
double ScannedRows(const LogicalOperator& plan) {
  double rows = 0;
  if (plan.kind() == LogicalOperatorKind::kTableScan) {
    rows += static_cast<double>(std::max<int64_t>(plan.As<TableScan>().table->row_count, 1));
  }
  for (const auto& child : plan.children) rows += ScannedRows(*child);
  return rows;
}

LogicalOperatorPtr PushBelowLeftInput(LogicalOperatorPtr node);

// An exact-filter join over a UNION [ALL] as the union of one such join per branch, each with its own copy of
// the build side (the filter is built once per branch), pushed on into the branches. A row passes the filter
// by its key alone, so filtering the branches before the union keeps the same rows (and the same distinct rows).
LogicalOperatorPtr PushIntoUnionBranches(LogicalOperatorPtr node) {
  auto& join = node->As<Join>();
  LogicalOperatorPtr set = std::move(join.children[0]);
  LogicalOperatorPtr build = std::move(join.children[1]);
  join.children.clear();
  for (auto& branch : set->children) {
    LogicalOperatorPtr branch_join = node->Clone();
    branch_join->children.push_back(std::move(branch));
    branch_join->children.push_back(build->Clone());
    branch_join->RecomputeOutput();
    branch = PushBelowLeftInput(std::move(branch_join));
  }
  set->RecomputeOutput();
  return set;
}

// Moves the exact-filter join `node` below its left input while the key passes unchanged through it (the left
// side of a join other than a full outer join, a filter, a projection that copies the key column, the branches
// of a union), so that it ends up on the scan it filters. Result and column order are unchanged: the join
// outputs its left input. Into a union's branches only when building the filter again per branch reads at most
// as many rows as the union is estimated to produce (TPC-DS Q05: 14 days of date_dim's 73 K rows filter
// catalog_sales and catalog_returns before their 1.6 M rows are written to the union's blocks).
LogicalOperatorPtr PushBelowLeftInput(LogicalOperatorPtr node) {
  auto& join = node->As<Join>();
  LogicalOperator& left = *join.children[0];
  BoundExpression& key = *join.left_keys[0];
  switch (left.kind()) {
    case LogicalOperatorKind::kSetOperation:
      if (left.As<SetOperation>().operation != SetOperationType::kUnion ||
          ScannedRows(*join.children[1]) > CardinalityEstimator().EstimateRows(left)) {
        return node;
      }
      return PushIntoUnionBranches(std::move(node));
    case LogicalOperatorKind::kJoin:
      if (left.As<Join>().join_type == JoinType::kFullOuter || key.column_index >= left.children[0]->output_width()) {
        return node;
      }
      break;
    case LogicalOperatorKind::kFilter:
      break;
    case LogicalOperatorKind::kProject: {
      const BoundExpression& source = *left.As<Project>().expressions[key.column_index];
      if (!IsColumn(source) || source.result_type.id() != key.result_type.id()) return node;
      key.column_index = source.column_index;
      break;
    }
    default:
      return node;
  }
  LogicalOperatorPtr lower = std::move(join.children[0]);
  join.children[0] = std::move(lower->children[0]);
  join.RecomputeOutput();
  lower->children[0] = PushBelowLeftInput(std::move(node));
  lower->RecomputeOutput();
  return lower;
}

LogicalOperatorPtr PushExactFilterJoinsDown(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = PushExactFilterJoinsDown(std::move(child));
  return IsExactFilterJoin(*node) ? PushBelowLeftInput(std::move(node)) : std::move(node);
}

}  // namespace

LogicalOperatorPtr ExactFilterSemiJoin::Apply(LogicalOperatorPtr plan) const {
  bool converted_inner = false;
  Needed all(plan->output_width(), true);
  plan = PushExactFilterJoinsDown(Rewrite(std::move(plan), all, &converted_inner));
  if (converted_inner) plan = ColumnPruning().Apply(std::move(plan));
  return plan;
}

}  // namespace tessera::optimizer
