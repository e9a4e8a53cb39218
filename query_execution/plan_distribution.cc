#include "query_execution/plan_distribution.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "distributed/partitioning.h"
#include "optimizer/partial_aggregation.h"
#include "query_execution/memory_estimate.h"

namespace tessera {
namespace {

namespace lp = optimizer;

// Whether equal values of types `a` and `b` are placed on the same rank (distributed/partitioning.h: INTEGER and
// BIGINT hash their value, CHAR and VARCHAR their bytes, others their serialized value).
bool SamePlacement(Type a, Type b) {
  const auto integer = [](Type t) { return t.id() == TypeId::kInteger || t.id() == TypeId::kBigInt; };
  if (integer(a) || integer(b)) return integer(a) && integer(b);
  if (a.id() != b.id()) return false;
  return a.IsString() || a == b;
}

// The input column a key expression is, looking through an integer widening cast; -1 otherwise.
int KeyColumn(const BoundExpression& key) {
  if (key.kind == ExpressionKind::kColumn) return key.column_index;
  if (key.kind == ExpressionKind::kCast && key.result_type.id() == TypeId::kBigInt &&
      key.children[0]->kind == ExpressionKind::kColumn && key.children[0]->result_type.id() == TypeId::kInteger) {
    return key.children[0]->column_index;
  }
  return -1;
}

bool Contains(const std::vector<int>& columns, int column) {
  return std::find(columns.begin(), columns.end(), column) != columns.end();
}

// The positions of `expressions` that are plain columns among `placing` (of their input).
std::vector<int> PlacingColumns(const std::vector<lp::ExpressionPtr>& expressions, const std::vector<int>& placing) {
  std::vector<int> keys;
  for (size_t i = 0; i < expressions.size(); ++i) {
    if (expressions[i]->kind == ExpressionKind::kColumn && Contains(placing, expressions[i]->column_index)) {
      keys.push_back(static_cast<int>(i));
    }
  }
  return keys;
}

// The estimated bytes of `rows` rows of `node`'s output (query_execution/memory_estimate.h's row width).
double OutputBytes(const lp::LogicalOperator& node, double rows) {
  std::vector<Type> types;
  for (const lp::OutputColumn& column : node.output()) types.push_back(column.type);
  return rows * static_cast<double>(EstimatedRowBytes(types));
}

SubtreePlacement Replicated() { return {Placement::kReplicated, {}}; }
SubtreePlacement Master() { return {Placement::kMaster, {}}; }
SubtreePlacement Partitioned(std::vector<int> keys) { return {Placement::kPartitioned, std::move(keys)}; }

}  // namespace

const SubtreePlacement& PlanDistribution::Of(const lp::LogicalOperator& node) {
  if (auto found = placements_.find(&node); found != placements_.end()) return found->second;
  SubtreePlacement placement = Classify(node);
  return placements_.insert_or_assign(&node, std::move(placement)).first->second;
}

lp::LogicalOperatorPtr PlanDistribution::SplitAggregates(lp::LogicalOperatorPtr plan) {
  SplitAggregatesBelow(&plan, /*below_top_n=*/false);
  return plan;
}

void PlanDistribution::SplitAggregatesBelow(lp::LogicalOperatorPtr* slot, bool below_top_n) {
  // Inputs first: Of() below sees the rewritten input, and Of() of this node's ancestors is not asked yet.
  const lp::LogicalOperator& node = **slot;
  const bool top_n = node.kind() == lp::LogicalOperatorKind::kLimit && node.As<lp::Limit>().limit.has_value() &&
                     node.children[0]->kind() == lp::LogicalOperatorKind::kSort;
  const bool passes = below_top_n && (node.kind() == lp::LogicalOperatorKind::kSort ||
                                      node.kind() == lp::LogicalOperatorKind::kProject);
  for (lp::LogicalOperatorPtr& child : (*slot)->children) SplitAggregatesBelow(&child, top_n || passes);
  if ((*slot)->kind() != lp::LogicalOperatorKind::kAggregate) return;
  lp::Aggregate& aggregate = (*slot)->As<lp::Aggregate>();
  const SubtreePlacement& input = Of(*aggregate.children[0]);
  if (input.placement != Placement::kPartitioned || !PlacingColumns(aggregate.group_by, input.key_columns).empty() ||
      !std::all_of(aggregate.aggregates.begin(), aggregate.aggregates.end(), lp::Decomposable)) {
    return;
  }
  // A shared aggregate (AggregateSharing: a CTE read twice, TPC-H Q15's revenue) with groups few enough to hold on
  // the master is merged there, and its merge keeps the sharing: the plan builder computes it once, with one
  // gather of the partials, for every copy's consumers. Merged on the ranks, each copy would be read by a fragment
  // of its own and computed again, its input split again (a rank's fragments share no results).
  const bool shared_on_master =
      aggregate.shared_result >= 0 && estimated_rows_ != nullptr && estimated_rows_(aggregate) <= kMaxSharedMergeGroups;
  // The group key that splits the partials: placeable, the most distinct values.
  int split_key = -1;
  const lp::LogicalOperator& input_node = *aggregate.children[0];
  if (!shared_on_master && estimated_rows_ != nullptr && estimated_rows_(aggregate) >= split_groups_ &&
      Splittable(input_node, /*nested=*/below_top_n)) {
    double most = 0;
    for (size_t g = 0; g < aggregate.group_by.size(); ++g) {
      if (!distributed::PlaceableKeyType(aggregate.group_by[g]->result_type)) continue;
      const double values = estimated_distinct_ != nullptr ? estimated_distinct_(*aggregate.group_by[g], input_node)
                                                           : kMinSplitKeyValuesPerRank * ranks_;
      if (values > most) {
        most = values;
        split_key = static_cast<int>(g);
      }
    }
    if (most < kMinSplitKeyValuesPerRank * ranks_) split_key = -1;
  }
  lp::LogicalOperatorPtr partial = lp::MakePartialAggregate(aggregate);
  // The analysed input node itself (its placements and exchanges are known), not MakePartialAggregate's copy.
  partial->children[0] = std::move(aggregate.children[0]);
  const lp::LogicalOperator* partial_node = partial.get();
  partial_aggregates_.insert(partial_node);
  lp::LogicalOperatorPtr merged = lp::MergePartialAggregates(aggregate, std::move(partial));
  lp::Aggregate& merge = merged->children[0]->As<lp::Aggregate>();
  if (split_key >= 0) {
    repartition_[partial_node] = split_key;
    rank_merges_[&merge] = split_key;
  } else {
    master_merges_.insert(&merge);
    if (shared_on_master) {
      // Every copy becomes the same merge of the same partials; the copy's LIP filters are those of its input
      // (now the partial's), as they were the original's.
      merge.shared_result = aggregate.shared_result;
      merge.shared_lip_filters = aggregate.shared_lip_filters;
    }
  }
  *slot = std::move(merged);  // drops `aggregate` (never analysed itself)
}

lp::LogicalOperatorPtr PlanDistribution::TopNOnRanks(lp::LogicalOperatorPtr plan) {
  TopNBelow(&plan);
  return plan;
}

void PlanDistribution::TopNBelow(lp::LogicalOperatorPtr* slot) {
  for (lp::LogicalOperatorPtr& child : (*slot)->children) TopNBelow(&child);
  if ((*slot)->kind() != lp::LogicalOperatorKind::kLimit) return;
  const lp::Limit& limit = (*slot)->As<lp::Limit>();
  lp::LogicalOperator& sort_node = *(*slot)->children[0];
  if (!limit.limit.has_value() || sort_node.kind() != lp::LogicalOperatorKind::kSort || *limit.limit < 0 ||
      limit.offset < 0 || *limit.limit > std::numeric_limits<int64_t>::max() - limit.offset ||
      Of(*sort_node.children[0]).placement != Placement::kPartitioned) {
    return;
  }
  auto rank_sort = std::make_unique<lp::Sort>();
  for (const lp::SortKey& key : sort_node.As<lp::Sort>().keys) {
    rank_sort->keys.push_back(key.Clone());
  }
  // The analysed input node itself (its placements and exchanges are known), not a copy.
  rank_sort->children.push_back(std::move(sort_node.children[0]));
  rank_sort->RecomputeOutput();
  auto rank_limit = std::make_unique<lp::Limit>();
  rank_limit->limit = *limit.limit + limit.offset;
  rank_limit->children.push_back(std::move(rank_sort));
  rank_limit->RecomputeOutput();
  rank_top_n_.insert(rank_limit.get());
  sort_node.children[0] = std::move(rank_limit);
}

SubtreePlacement PlanDistribution::Classify(const lp::LogicalOperator& node) {
  std::vector<const SubtreePlacement*> children;
  bool all_replicated = true;
  for (const auto& child : node.children) {
    children.push_back(&Of(*child));
    all_replicated &= children.back()->placement == Placement::kReplicated;
  }
  switch (node.kind()) {
    case lp::LogicalOperatorKind::kTableScan: {
      const auto& scan = node.As<lp::TableScan>();
      if (scan.table->partition_column < 0) return Replicated();
      std::vector<int> keys;
      for (size_t c = 0; c < scan.columns.size(); ++c) {
        if (scan.columns[c] == scan.table->partition_column) keys.push_back(static_cast<int>(c));
      }
      return Partitioned(std::move(keys));
    }
    case lp::LogicalOperatorKind::kValues:
      return Replicated();
    case lp::LogicalOperatorKind::kFilter:
      return *children[0];
    case lp::LogicalOperatorKind::kProject: {
      if (children[0]->placement != Placement::kPartitioned) return *children[0];
      return Partitioned(PlacingColumns(node.As<lp::Project>().expressions, children[0]->key_columns));
    }
    case lp::LogicalOperatorKind::kJoin:
      return ClassifyJoin(node.As<lp::Join>());
    case lp::LogicalOperatorKind::kAggregate: {
      if (partial_aggregates_.contains(&node)) return Partitioned({});
      if (master_merges_.contains(&node)) return Master();
      // Each rank merges the partials of the groups its key places there: its groups are final.
      if (auto merge = rank_merges_.find(&node); merge != rank_merges_.end()) return Partitioned({merge->second});
      if (children[0]->placement != Placement::kPartitioned) return *children[0];
      // Grouped by a partition key: every group lives on one rank, so each rank's groups are final.
      std::vector<int> keys = PlacingColumns(node.As<lp::Aggregate>().group_by, children[0]->key_columns);
      if (!keys.empty()) return Partitioned(std::move(keys));
      return RepartitionAggregate(node.As<lp::Aggregate>());
    }
    case lp::LogicalOperatorKind::kDistinct:
      if (children[0]->placement != Placement::kPartitioned) return *children[0];
      return children[0]->key_columns.empty() ? Master() : *children[0];
    case lp::LogicalOperatorKind::kSort:
    case lp::LogicalOperatorKind::kSetOperation:
      return all_replicated ? Replicated() : Master();
    case lp::LogicalOperatorKind::kLimit:
      // A top-N of TopNOnRanks: each rank's own top rows. Another LIMIT keeps rows that may differ between ranks.
      return rank_top_n_.contains(&node) ? Partitioned({}) : Master();
    default:  // windows
      return Master();
  }
}

SubtreePlacement PlanDistribution::ClassifyJoin(const lp::Join& join) {
  const SubtreePlacement& left = Of(*join.children[0]);
  const SubtreePlacement& right = Of(*join.children[1]);
  if (left.placement == Placement::kMaster) return Master();
  if (left.placement == Placement::kReplicated) {
    if (right.placement == Placement::kMaster) return Master();
    if (right.placement == Placement::kReplicated) return Replicated();
  }
  const int left_width = join.children[0]->output_width();
  if (left.placement == Placement::kPartitioned && right.placement != Placement::kReplicated &&
      join.join_type != lp::JoinType::kFullOuter && estimated_rows_ != nullptr) {
    SubtreePlacement colocated = ClassifyPartitionedJoin(join, left, right);
    if (colocated.placement == Placement::kPartitioned) return colocated;
    // The bytes each way moves (docs/decisions/0011, "The join rule"), r ranks, P and B the probe and build
    // sides' estimated bytes over the cluster:
    //   broadcast  B x (r - 1), plus B x (r - 1) / r gathered first when the build side is partitioned;
    //   split      (r - 1) / r of each side not placed by its key (both partitioned only);
    //   gather     (r - 1) / r of the probe side, and of the build side when it is partitioned (the join then
    //              runs on the master).
    // A split never moves more than the gather, so the broadcast is taken when it moves fewer bytes than the
    // split and its build side has at most kMaxBroadcastRows rows, or, without a split, when it moves fewer bytes
    // than the gather whatever its rows: the gathered join would build the same table on the master, so the cap
    // would guard no memory and only send the probe side to the master (TPC-H SF10's Q5 and Q18 gathered
    // lineitem, 840 and 480 MB, against build sides of an estimated 1.1 and 2.5 million rows).
    const double r = ranks_;
    const double build_rows = estimated_rows_(*join.children[1]);
    const double build_bytes = OutputBytes(*join.children[1], build_rows);
    const double probe_bytes = OutputBytes(*join.children[0], estimated_rows_(*join.children[0]));
    const bool build_partitioned = right.placement == Placement::kPartitioned;
    const double broadcast = build_bytes * (r - 1) + (build_partitioned ? build_bytes * (r - 1) / r : 0);
    double other = (probe_bytes + (build_partitioned ? build_bytes : 0)) * (r - 1) / r;
    const std::optional<JoinSplit> split = PlanJoinSplit(join, left, right, probe_bytes, build_bytes);
    if (split.has_value()) other = split->bytes * (r - 1) / r;
    if ((build_rows <= kMaxBroadcastRows || !split.has_value()) && broadcast < other) {
      broadcast_.insert(join.children[1].get());
      return Partitioned(left.key_columns);
    }
    if (split.has_value()) return ApplyJoinSplit(join, left, right, *split);
    return Master();
  }
  if (right.placement == Placement::kMaster) return Master();
  if (left.placement == Placement::kPartitioned && right.placement == Placement::kReplicated) {
    // Each probe row is on one rank and meets the whole build side there.
    if (join.join_type == lp::JoinType::kFullOuter) return Master();
    return Partitioned(left.key_columns);
  }
  if (left.placement == Placement::kReplicated) {
    // Each pair meets on the rank of its partitioned row; rows without a partner would be repeated per rank.
    if (join.join_type != lp::JoinType::kInner && join.join_type != lp::JoinType::kCross) return Master();
    std::vector<int> keys;
    for (int c : right.key_columns) keys.push_back(left_width + c);
    return Partitioned(std::move(keys));
  }
  return ClassifyPartitionedJoin(join, left, right);
}

SubtreePlacement PlanDistribution::ClassifyPartitionedJoin(const lp::Join& join, const SubtreePlacement& left,
                                                           const SubtreePlacement& right) {
  if (left.placement != Placement::kPartitioned || right.placement != Placement::kPartitioned) return Master();
  const int left_width = join.children[0]->output_width();
  const bool keeps_right = join.join_type != lp::JoinType::kSemi && join.join_type != lp::JoinType::kAnti;
  // Both partitioned: co-located when a key pair is a partition key on both sides.
  if (join.join_type == lp::JoinType::kFullOuter || join.join_type == lp::JoinType::kCross) return Master();
  bool colocated = false;
  for (size_t k = 0; k < join.left_keys.size() && !colocated; ++k) {
    const int l = KeyColumn(*join.left_keys[k]);
    const int r = KeyColumn(*join.right_keys[k]);
    colocated = l >= 0 && r >= 0 && Contains(left.key_columns, l) && Contains(right.key_columns, r) &&
                SamePlacement(join.children[0]->output()[l].type, join.children[1]->output()[r].type);
  }
  if (!colocated) return Master();
  std::vector<int> keys = left.key_columns;
  // A left outer join's NULL-padded right columns do not place their rows.
  if (keeps_right && join.join_type == lp::JoinType::kInner) {
    for (int c : right.key_columns) keys.push_back(left_width + c);
  }
  return Partitioned(std::move(keys));
}

bool PlanDistribution::Splittable(const lp::LogicalOperator& node, bool nested) const {
  if (broadcast_.contains(&node) || repartition_.contains(&node)) return false;
  return std::all_of(node.children.begin(), node.children.end(), [&](const lp::LogicalOperatorPtr& child) {
    // A split input below is the nested split's own input (its partition, ExchangeResults on a rank); a broadcast
    // one would need the master's stream, which a hash split's fragment does not receive.
    return (nested && repartition_.contains(child.get())) || Splittable(*child, nested);
  });
}

std::optional<PlanDistribution::JoinSplit> PlanDistribution::PlanJoinSplit(const lp::Join& join,
                                                                           const SubtreePlacement& left,
                                                                           const SubtreePlacement& right,
                                                                           double probe_bytes,
                                                                           double build_bytes) const {
  if (left.placement != Placement::kPartitioned || right.placement != Placement::kPartitioned) return std::nullopt;
  if (join.join_type == lp::JoinType::kFullOuter || join.join_type == lp::JoinType::kCross) return std::nullopt;
  const lp::LogicalOperator& probe = *join.children[0];
  const lp::LogicalOperator& build = *join.children[1];
  std::optional<JoinSplit> best;
  for (size_t k = 0; k < join.left_keys.size(); ++k) {
    const int l = KeyColumn(*join.left_keys[k]);
    const int r = KeyColumn(*join.right_keys[k]);
    if (l < 0 || r < 0) continue;
    const Type left_type = probe.output()[l].type;
    const Type right_type = build.output()[r].type;
    if (!SamePlacement(left_type, right_type) || !distributed::PlaceableKeyType(left_type) ||
        !distributed::PlaceableKeyType(right_type)) {
      continue;
    }
    // A side already placed by its key stays where it is; the other is split to meet it.
    JoinSplit split;
    if (!Contains(left.key_columns, l)) split.left_column = l;
    if (!Contains(right.key_columns, r)) split.right_column = r;
    if ((split.left_column >= 0 && !Splittable(probe, /*nested=*/true)) ||
        (split.right_column >= 0 && !Splittable(build, /*nested=*/true))) {
      continue;
    }
    split.bytes = (split.left_column >= 0 ? probe_bytes : 0) + (split.right_column >= 0 ? build_bytes : 0);
    // The key pair that moves the fewest bytes (Q5: l_orderkey = o_orderkey moves the build side, l_suppkey =
    // s_suppkey both sides).
    if (!best.has_value() || split.bytes < best->bytes) best = split;
  }
  return best;
}

SubtreePlacement PlanDistribution::ApplyJoinSplit(const lp::Join& join, const SubtreePlacement& left,
                                                  const SubtreePlacement& right, const JoinSplit& split) {
  const lp::LogicalOperator& probe = *join.children[0];
  const lp::LogicalOperator& build = *join.children[1];
  if (split.left_column >= 0) repartition_[&probe] = split.left_column;
  if (split.right_column >= 0) repartition_[&build] = split.right_column;
  std::vector<int> keys = split.left_column >= 0 ? std::vector<int>{split.left_column} : left.key_columns;
  if (join.join_type == lp::JoinType::kInner) {
    const int left_width = probe.output_width();
    if (split.right_column >= 0) {
      keys.push_back(left_width + split.right_column);
    } else {
      for (int c : right.key_columns) keys.push_back(left_width + c);
    }
  }
  return Partitioned(std::move(keys));
}

SubtreePlacement PlanDistribution::RepartitionAggregate(const lp::Aggregate& aggregate) {
  if (estimated_rows_ == nullptr ||
      std::all_of(aggregate.aggregates.begin(), aggregate.aggregates.end(), lp::Decomposable)) {
    // SplitAggregates made such an aggregate partial and merged ones; one it did not see reads its gathered
    // input on the master.
    return Master();
  }
  const lp::LogicalOperator& child = *aggregate.children[0];
  if (!Splittable(child, /*nested=*/false)) return Master();
  for (size_t g = 0; g < aggregate.group_by.size(); ++g) {
    const lp::ExpressionPtr& key = aggregate.group_by[g];
    if (key->kind != ExpressionKind::kColumn ||
        !distributed::PlaceableKeyType(child.output()[key->column_index].type)) {
      continue;
    }
    repartition_[&child] = key->column_index;
    return Partitioned({static_cast<int>(g)});
  }
  return Master();
}

}  // namespace tessera
