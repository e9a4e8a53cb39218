#include "optimizer/rules/aggregate_semi_join_reduction.h"

#include <vector>

#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/rules/semi_join_push_down.h"

namespace tessera::optimizer {
namespace {

// A semi join with a copy of the source pays for itself only when the source is much smaller than the
// aggregation it trims.
constexpr double kMaxSourceRowsPerGroup = 0.2;

// A filtered base-table scan whose `column` holds every (non-NULL) value of some plan column.
struct KeySource {
  const TableScan* scan = nullptr;
  int column = -1;
};

int ColumnIndex(const BoundExpression& expression) { return IsColumn(expression) ? expression.column_index : -1; }

// Adds to `sources` every scan found below `node` whose column contains all non-NULL values of `node`'s output
// column `column`: followed through pass-through columns and through the key equalities of inner and semi joins
// (a row leaves such a join only with equal keys on both sides).
void CollectKeySources(const LogicalOperator& node, int column, std::vector<KeySource>* sources) {
  switch (node.kind()) {
    case LogicalOperatorKind::kTableScan:
      sources->push_back({&node.As<TableScan>(), column});
      return;
    case LogicalOperatorKind::kFilter:
    case LogicalOperatorKind::kSort:
    case LogicalOperatorKind::kLimit:
    case LogicalOperatorKind::kDistinct:
      CollectKeySources(*node.children[0], column, sources);
      return;
    case LogicalOperatorKind::kProject: {
      const int input = ColumnIndex(*node.As<Project>().expressions[column]);
      if (input >= 0) CollectKeySources(*node.children[0], input, sources);
      return;
    }
    case LogicalOperatorKind::kAggregate: {
      const auto& aggregate = node.As<Aggregate>();
      if (column >= static_cast<int>(aggregate.group_by.size())) return;
      const int input = ColumnIndex(*aggregate.group_by[column]);
      if (input >= 0) CollectKeySources(*node.children[0], input, sources);
      return;
    }
    case LogicalOperatorKind::kJoin: {
      const auto& join = node.As<Join>();
      const int left_width = node.children[0]->output_width();
      const int side = column < left_width ? 0 : 1;
      const int local = side == 0 ? column : column - left_width;
      switch (join.join_type) {
        case JoinType::kInner:
        case JoinType::kCross:
        case JoinType::kSemi:
          break;
        case JoinType::kLeftOuter:
        case JoinType::kAnti:
          // Right columns of a left join are NULL or right values; no key equality holds for unmatched rows.
          CollectKeySources(*node.children[side], local, sources);
          return;
        case JoinType::kFullOuter:
          return;
      }
      CollectKeySources(*node.children[side], local, sources);
      const auto& own_keys = side == 0 ? join.left_keys : join.right_keys;
      const auto& other_keys = side == 0 ? join.right_keys : join.left_keys;
      for (size_t k = 0; k < own_keys.size(); ++k) {
        const int other = ColumnIndex(*other_keys[k]);
        if (ColumnIndex(*own_keys[k]) == local && other >= 0) {
          CollectKeySources(*node.children[1 - side], other, sources);
        }
      }
      return;
    }
    case LogicalOperatorKind::kWindow:  // dropping rows below a window changes its values
    case LogicalOperatorKind::kSetOperation:
    case LogicalOperatorKind::kValues:
    case LogicalOperatorKind::kSeries:
      return;
  }
}

// The Aggregate whose grouping key `*column` of `node`'s output is, passed up unchanged through Filters and
// Projects; on success `*column` becomes the index of that grouping key's input column.
Aggregate* FindGroupingAggregate(LogicalOperator* node, int* column) {
  int index = *column;
  while (true) {
    switch (node->kind()) {
      case LogicalOperatorKind::kFilter:
        break;
      case LogicalOperatorKind::kProject:
        index = ColumnIndex(*node->As<Project>().expressions[index]);
        if (index < 0) return nullptr;
        break;
      case LogicalOperatorKind::kAggregate: {
        auto& aggregate = node->As<Aggregate>();
        if (index >= static_cast<int>(aggregate.group_by.size())) return nullptr;
        *column = ColumnIndex(*aggregate.group_by[index]);
        return *column >= 0 ? &aggregate : nullptr;
      }
      default:
        return nullptr;
    }
    node = node->children[0].get();
  }
}

// Whether rows of the join's child `side` that match nothing on the other side can be dropped without changing
// the join's result.
bool UnmatchedRowsIrrelevant(const Join& join, int side) {
  switch (join.join_type) {
    case JoinType::kInner:
    case JoinType::kSemi:
      return true;
    case JoinType::kLeftOuter:
      return side == 1;
    case JoinType::kAnti:
      return side == 1 && !join.null_aware;
    case JoinType::kFullOuter:
    case JoinType::kCross:
      return false;
  }
  return false;
}

void TryReduce(Join& join) {
  const CardinalityEstimator estimator;
  struct Candidate {
    Aggregate* aggregate = nullptr;
    int input_column = -1;
    KeySource source;
    double rows_per_group = kMaxSourceRowsPerGroup;
  } best;
  for (int side = 0; side < 2; ++side) {
    if (!UnmatchedRowsIrrelevant(join, side)) continue;
    const auto& own_keys = side == 0 ? join.left_keys : join.right_keys;
    const auto& other_keys = side == 0 ? join.right_keys : join.left_keys;
    for (size_t k = 0; k < own_keys.size(); ++k) {
      int column = ColumnIndex(*own_keys[k]);
      const int other_column = ColumnIndex(*other_keys[k]);
      if (column < 0 || other_column < 0) continue;
      Aggregate* aggregate = FindGroupingAggregate(join.children[side].get(), &column);
      if (aggregate == nullptr) continue;
      const LogicalOperator& input = *aggregate->children[0];
      const double groups = estimator.DistinctValues(*MakeInputColumn(input.output(), column), input);
      std::vector<KeySource> sources;
      CollectKeySources(*join.children[1 - side], other_column, &sources);
      for (const KeySource& source : sources) {
        if (!(source.scan->output()[source.column].type == input.output()[column].type)) continue;
        const double rows_per_group = estimator.EstimateRows(*source.scan) / groups;
        if (rows_per_group <= best.rows_per_group) best = {aggregate, column, source, rows_per_group};
      }
    }
  }
  if (best.aggregate == nullptr) return;
  auto semi = MakeJoin(JoinType::kSemi, std::move(best.aggregate->children[0]), best.source.scan->Clone());
  semi->left_keys.push_back(MakeInputColumn(semi->children[0]->output(), best.input_column));
  semi->right_keys.push_back(MakeInputColumn(semi->children[1]->output(), best.source.column));
  semi->RecomputeOutput();
  best.aggregate->children[0] = SinkSemiJoin(std::move(semi));
}

void Visit(LogicalOperator& node) {
  for (auto& child : node.children) Visit(*child);
  if (node.kind() == LogicalOperatorKind::kJoin) TryReduce(node.As<Join>());
}

}  // namespace

LogicalOperatorPtr AggregateSemiJoinReduction::Apply(LogicalOperatorPtr plan) const {
  Visit(*plan);
  return plan;
}

}  // namespace tessera::optimizer
