#include "optimizer/rules/implied_lip_filters.h"

#include <algorithm>
#include <vector>

#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/expression_format.h"

namespace tessera::optimizer {
namespace {

// Joins whose output keeps both inputs' columns and only drops or repeats their rows.
bool KeepsBothInputs(const Join& join) {
  return join.join_type == JoinType::kInner || join.join_type == JoinType::kCross;
}

// One step down from `node` following output column *column (a column passed unchanged): the child it comes
// from, with *column rewritten to that child's index (an aggregate's group key, a distinct's column); nullptr
// where the column is computed or may be NULL padding. `only_drops_rows`: the way must be one where dropping
// input rows only drops output rows with the same value (the scan side), so not through limits (they would let
// other rows in).
LogicalOperator* StepDown(LogicalOperator* node, int* column, bool only_drops_rows) {
  switch (node->kind()) {
    case LogicalOperatorKind::kFilter:
    case LogicalOperatorKind::kSort:
    case LogicalOperatorKind::kDistinct:
      return node->children[0].get();
    case LogicalOperatorKind::kAggregate: {  // a group key: dropping a group's input rows drops just that group
      const auto& aggregate = node->As<Aggregate>();
      if (*column >= static_cast<int>(aggregate.group_by.size())) return nullptr;
      const BoundExpression& key = *aggregate.group_by[*column];
      if (!IsColumn(key)) return nullptr;
      *column = key.column_index;
      return node->children[0].get();
    }
    case LogicalOperatorKind::kLimit:
      return only_drops_rows ? nullptr : node->children[0].get();
    case LogicalOperatorKind::kProject: {
      const BoundExpression& expression = *node->As<Project>().expressions[*column];
      if (!IsColumn(expression)) return nullptr;
      *column = expression.column_index;
      return node->children[0].get();
    }
    case LogicalOperatorKind::kJoin: {
      const auto& join = node->As<Join>();
      if (join.join_type == JoinType::kFullOuter) return nullptr;
      const int left_width = join.children[0]->output_width();
      if (*column < left_width) return join.children[0].get();
      if (!KeepsBothInputs(join)) return nullptr;  // a left outer join's right columns may be NULL padding
      *column -= left_width;
      return join.children[1].get();
    }
    default:
      return nullptr;
  }
}

// The join below `node` whose build keys bound output column `column`: an inner or semi hash join that the
// column passes unchanged from through its probe input, with a pair `column = build column`. *pair: that pair.
Join* FindBoundingJoin(LogicalOperator* node, int column, int* pair) {
  while (node != nullptr) {
    if (node->kind() == LogicalOperatorKind::kJoin) {
      auto& join = node->As<Join>();
      const bool filtering = join.join_type == JoinType::kInner || join.join_type == JoinType::kSemi;
      if (filtering && !join.exact_filter.has_value() && !join.null_aware && !join.enforce_single_row &&
          column < join.children[0]->output_width()) {
        for (size_t p = 0; p < join.left_keys.size(); ++p) {
          if (IsColumn(*join.left_keys[p]) && join.left_keys[p]->column_index == column &&
              IsColumn(*join.right_keys[p])) {
            *pair = static_cast<int>(p);
            return &join;
          }
        }
      }
    }
    node = StepDown(node, &column, /*only_drops_rows=*/false);
  }
  return nullptr;
}

// The table scan that output column `column` of `node` comes from unchanged, along a way where dropping scan
// rows only drops output rows; *scan_column: the scan's output column. Not a scan that reaches `node` through
// filters and projections only: the join consuming `node` probes its rows in the same loop as the scan's filters
// (lip_filters.h), so a filter there would only repeat that probe.
TableScan* TraceToScanNotProbedDirectly(LogicalOperator* node, int column, int* scan_column) {
  bool probed_directly = true;
  while (node != nullptr) {
    if (node->kind() == LogicalOperatorKind::kTableScan) {
      *scan_column = column;
      return probed_directly ? nullptr : &node->As<TableScan>();
    }
    probed_directly &= node->kind() == LogicalOperatorKind::kFilter || node->kind() == LogicalOperatorKind::kProject;
    node = StepDown(node, &column, /*only_drops_rows=*/true);
  }
  return nullptr;
}

int MaxFilterId(const LogicalOperator& node) {
  int id = node.kind() == LogicalOperatorKind::kJoin ? node.As<Join>().lip_filter_id : -1;
  for (const auto& child : node.children) id = std::max(id, MaxFilterId(*child));
  return id;
}

class Publisher {
 public:
  explicit Publisher(int next_id) : next_id_(next_id) {}

  void Visit(LogicalOperator* node) {
    for (auto& child : node->children) Visit(child.get());
    if (node->kind() != LogicalOperatorKind::kJoin) return;
    auto& join = node->As<Join>();
    if (join.join_type != JoinType::kInner && join.join_type != JoinType::kSemi) return;
    for (size_t p = 0; p < join.left_keys.size(); ++p) {
      if (!IsColumn(*join.left_keys[p]) || !IsColumn(*join.right_keys[p])) continue;
      const int left_column = join.left_keys[p]->column_index;
      const int right_column = join.right_keys[p]->column_index;
      TryPublish(join.children[1].get(), right_column, join.children[0].get(), left_column);
      TryPublish(join.children[0].get(), left_column, join.children[1].get(), right_column);
    }
  }

 private:
  // For a key pair `x = y` of a join: y is output column `bounded_column` of `bounded_side`, x column
  // `scan_side_column` of `scan_side`.
  void TryPublish(LogicalOperator* bounded_side, int bounded_column, LogicalOperator* scan_side, int scan_side_column) {
    int pair = -1;
    Join* bounding = FindBoundingJoin(bounded_side, bounded_column, &pair);
    if (bounding == nullptr) return;
    int scan_column = -1;
    TableScan* scan = TraceToScanNotProbedDirectly(scan_side, scan_side_column, &scan_column);
    if (scan == nullptr || !Pays(*bounding, pair, *scan, scan_column) || !Acyclic(*bounding, *scan)) return;
    Publish(bounding, pair, scan, scan_column);
  }

  // The scan will wait for the bounding join's build. That build depends only on nodes of its own subtree as
  // long as no scan there waits for a filter from outside (exact and LIP filters come from joins inside, see
  // lip_filters.h), so the wait closes no cycle when (a) no scan that this rule gave a filter lies in the build
  // subtree and (b) the scan lies in no build subtree whose join publishes one of this rule's filters.
  bool Acyclic(const Join& bounding, const TableScan& scan) const {
    for (const TableScan* filtered : filtered_scans_) {
      if (Contains(*bounding.children[1], *filtered)) return false;
    }
    for (const LogicalOperator* build : publishing_builds_) {
      if (Contains(*build, scan)) return false;
    }
    return !Contains(*bounding.children[1], scan);
  }

  static bool Contains(const LogicalOperator& subtree, const LogicalOperator& node) {
    if (&subtree == &node) return true;
    return std::any_of(subtree.children.begin(), subtree.children.end(),
                       [&](const LogicalOperatorPtr& child) { return Contains(*child, node); });
  }

  bool Pays(const Join& bounding, int pair, const TableScan& scan, int scan_column) const {
    const double scan_rows = estimator_.EstimateRows(scan);
    if (scan_rows < ImpliedLipFilters::kMinScanRows) return false;
    // A publishing join builds on its right side; execution builds a semi join on a much smaller left side
    // instead (Q21's EXISTS), which the filter would forbid.
    if (bounding.join_type == JoinType::kSemi &&
        estimator_.EstimateRows(*bounding.children[1]) > estimator_.EstimateRows(*bounding.children[0])) {
      return false;
    }
    const double build_keys = std::min(estimator_.DistinctValues(*bounding.right_keys[pair], *bounding.children[1]),
                                       estimator_.EstimateRows(*bounding.children[1]));
    const ExpressionPtr column = MakeInputColumn(scan.output(), scan_column);
    const double scan_keys = estimator_.DistinctValues(*column, scan);
    return build_keys <= ImpliedLipFilters::kMaxPassFraction * scan_keys;
  }

  void Publish(Join* bounding, int pair, TableScan* scan, int scan_column) {
    if (bounding->lip_filter_id < 0) {
      bounding->lip_filter_id = next_id_++;
      bounding->lip_filter_key_pairs = {pair};
    } else if (bounding->lip_filter_key_pairs != std::vector<int>{pair} &&
               !(bounding->lip_filter_key_pairs.empty() && bounding->left_keys.size() == 1)) {
      return;  // it publishes a filter over other key pairs already
    }
    const int id = bounding->lip_filter_id;
    if (std::any_of(scan->lip_filters.begin(), scan->lip_filters.end(),
                    [&](const TableScan::LipFilterUse& use) { return use.filter_id == id; })) {
      return;
    }
    filtered_scans_.push_back(scan);
    publishing_builds_.push_back(bounding->children[1].get());
    const std::vector<std::string> build_names = DisplayNames(bounding->children[1]->output());
    scan->lip_filters.push_back({id, {scan_column}, FormatExpression(*bounding->right_keys[pair], build_names)});
  }

  CardinalityEstimator estimator_;
  int next_id_;
  std::vector<const TableScan*> filtered_scans_;           // scans given a filter by this rule
  std::vector<const LogicalOperator*> publishing_builds_;  // build inputs of the joins publishing those filters
};

}  // namespace

LogicalOperatorPtr ImpliedLipFilters::Apply(LogicalOperatorPtr plan) const {
  Publisher publisher(MaxFilterId(*plan) + 1);
  publisher.Visit(plan.get());
  return plan;
}

}  // namespace tessera::optimizer
