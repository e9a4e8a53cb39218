#pragma once
// Where each part of a query runs in a cluster (distributed/README.md, "Which query shapes are distributed"):
// the analysis the plan builder's distribution step asks on the master. A logical subtree is
//   replicated    every rank would compute the same rows (it reads replicated tables only);
//   partitioned   the rows over the whole cluster are the union of what each rank computes over its own data,
//                 so the subtree runs on every rank below a gather exchange; `key_columns` are output columns
//                 whose value decides the rank of the row (equal values, same rank), which makes joins and
//                 aggregations on them local to each rank;
//   master        neither: it runs on the master over gathered inputs.
// Partitioned: a scan of a PARTITION BY HASH table; filters and projections of a partitioned input; a join whose
// probe side (or, for an inner join, either side) is partitioned and whose other side is replicated; a join of
// two partitioned inputs on a key pair that is a partition key on both sides (co-located); an aggregation or
// DISTINCT grouped by a partition key of its partitioned input. Sorts, limits, windows and set operations over
// partitioned inputs run on the master (an ORDER BY ... LIMIT also as a top-N on the ranks, below).
// Broadcast: a join of a partitioned probe side with a build side that is neither replicated nor co-located
// (computed on the master, e.g. from its own gathers) is partitioned too when broadcasting the build side moves
// fewer estimated bytes than the alternative, a hash split (below) where one is possible (then only with at most
// kMaxBroadcastRows build rows), else gathering the inputs (then with any number: the master would build the same
// table itself): the master computes the build side and sends it whole to every rank with the fragment
// (Broadcast()). The bytes of each way are in ClassifyJoin and
// docs/decisions/0011 ("The join rule").
// Repartition: a join of two partitioned inputs that is not co-located and not broadcast (inner, left outer, semi,
// anti), on a key pair of INTEGER / BIGINT or string columns, and an aggregation over a partitioned input that
// cannot be split into partial aggregates (COUNT(DISTINCT), holistic calls) grouped by such a column, are
// partitioned too: each input not already placed by that key is repartitioned (Repartition(): every rank splits
// its rows by the key's rank and sends each part to its rank, distributed/repartition_operator.h), so that the
// rows that meet are on one rank. A join input that itself reads repartitioned inputs is repartitioned again (a
// nested split: its fragment reads the partitions of the inner splits on every rank, e.g. TPC-H Q5 / Q10's orders
// split by o_custkey to meet customer, then the joined rows split by o_orderkey to meet lineitem); one that reads
// a broadcast input is not (the exchange's fragment receives no broadcast inputs).
// Partial aggregation: SplitAggregates rewrites a decomposable aggregation over a partitioned input into partial
// aggregates on the ranks and their merge, on the master, or on the ranks after a hash split of the partials by a
// group key when the groups are many.
// Top-N: TopNOnRanks gives an ORDER BY ... LIMIT over a partitioned input a top-N of its own on every rank, so
// that only `limit + offset` rows a rank are gathered for the master's top-N.
//
// Threading: used by one plan builder on one thread; results are memoized per node (nodes must outlive it).

#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "distributed/cluster.h"
#include "optimizer/logical_plan.h"

namespace tessera {

enum class Placement { kReplicated, kPartitioned, kMaster };

struct SubtreePlacement {
  Placement placement = Placement::kMaster;
  std::vector<int> key_columns;  // partitioned only: output columns that place the row
};

class PlanDistribution {
 public:
  static constexpr double kMaxBroadcastRows = 1e6;
  // The most estimated groups of a shared aggregate (Aggregate::shared_result) that SplitAggregates merges on the
  // master, where the plan builder computes it once for all its copies, rather than on the ranks, once per copy:
  // as many rows as the master builds for a broadcast.
  static constexpr double kMaxSharedMergeGroups = kMaxBroadcastRows;

  // The default of `split_groups` below: the fewest estimated groups for which a decomposable aggregation's
  // partials are merged on the ranks (hash split by a group key) rather than on the master
  // (distributed::kDefaultSplitGroups, the server's --distributed-split-groups; docs/decisions/0011, round 6).
  static constexpr double kDefaultSplitGroups = distributed::kDefaultSplitGroups;

  // `ranks`: the cluster's size; `estimated_rows`: the optimizer's row estimate of a subtree (null: no broadcast
  // and no merge on the ranks); `estimated_distinct`: its estimate of an expression's distinct values over a
  // subtree's rows (null: the first placeable group key splits partials); `split_groups`: the fewest estimated
  // groups whose partials are merged on the ranks.
  PlanDistribution(
      int ranks, std::function<double(const optimizer::LogicalOperator&)> estimated_rows,
      std::function<double(const BoundExpression&, const optimizer::LogicalOperator&)> estimated_distinct = nullptr,
      double split_groups = kDefaultSplitGroups)
      : ranks_(ranks),
        estimated_rows_(std::move(estimated_rows)),
        estimated_distinct_(std::move(estimated_distinct)),
        split_groups_(split_groups) {}
  PlanDistribution() = default;

  // The fewest estimated distinct values per rank of the group key that splits partials (the one with the most),
  // so that every rank merges a fair share of the groups.
  static constexpr double kMinSplitKeyValuesPerRank = 64;

  // The partial / merge rewrite, before any Of(): takes the whole plan and returns it with every Aggregate over
  // a partitioned input that is not grouped by a placing column, every call decomposable
  // (optimizer/partial_aggregation.h), replaced by the merge of its partial aggregates (a Project over the
  // merging Aggregate over the partial Aggregate, which takes over the original's input node). The partial
  // aggregate runs on every rank (partitioned, no key). The merge runs on the master over the gathered partials
  // (MergesOnMaster; a shared aggregate's merges, with at most kMaxSharedMergeGroups estimated groups, always, and
  // they keep its shared_result and shared_lip_filters, so that every copy is computed once), or, with at least
  // `split_groups` estimated groups (an estimator is needed) and a group key
  // of a placeable type with enough distinct values (kMinSplitKeyValuesPerRank), on every rank over the partials
  // hash split by that key (Repartition() of the partial):
  // the merge is then partitioned by the key, so a join or aggregation above it on that key stays on the ranks
  // and only final rows are gathered.
  optimizer::LogicalOperatorPtr SplitAggregates(optimizer::LogicalOperatorPtr plan);

  // The top-N rewrite, after SplitAggregates and before any other Of(): every Limit with a limit directly over a
  // Sort whose input is partitioned gets a copy of the two between the Sort and its input, the copy's Limit
  // keeping `limit + offset` rows from the first (no offset). The copy is partitioned (each rank keeps its own top
  // rows, no key: it places no row for a join above) and gathered; the master's Sort and Limit over the union are
  // exact, because every row of the whole top `limit + offset` is among the top of its own rank.
  optimizer::LogicalOperatorPtr TopNOnRanks(optimizer::LogicalOperatorPtr plan);

  const SubtreePlacement& Of(const optimizer::LogicalOperator& node);

  // Whether `node` is a merge made by SplitAggregates that combines the gathered partials on the master.
  bool MergesOnMaster(const optimizer::LogicalOperator& node) const { return master_merges_.contains(&node); }

  // Whether `node` is the build side of a join that Of() calls partitioned by broadcasting it (valid after Of()
  // of that join).
  bool Broadcast(const optimizer::LogicalOperator& node) const { return broadcast_.contains(&node); }
  // The output column by which `node` is repartitioned (hash split) below the join or aggregation that
  // reads it, -1 when it is not (valid after Of() of that join or aggregation).
  int Repartition(const optimizer::LogicalOperator& node) const {
    auto found = repartition_.find(&node);
    return found == repartition_.end() ? -1 : found->second;
  }

 private:
  SubtreePlacement Classify(const optimizer::LogicalOperator& node);
  SubtreePlacement ClassifyJoin(const optimizer::Join& join);
  SubtreePlacement ClassifyPartitionedJoin(const optimizer::Join& join, const SubtreePlacement& left,
                                           const SubtreePlacement& right);
  // A hash split that brings the rows of a join of two partitioned inputs together: the side(s) to split and
  // by which output column (-1: the side stays, placed by its key).
  struct JoinSplit {
    int left_column = -1;
    int right_column = -1;
    double bytes = 0;  // the estimated bytes of the sides split (each moves (r - 1) / r of them)
  };
  // The split of the key pair that moves the fewest estimated bytes (`probe_bytes`, `build_bytes`: the sides').
  std::optional<JoinSplit> PlanJoinSplit(const optimizer::Join& join, const SubtreePlacement& left,
                                         const SubtreePlacement& right, double probe_bytes, double build_bytes) const;
  SubtreePlacement ApplyJoinSplit(const optimizer::Join& join, const SubtreePlacement& left,
                                  const SubtreePlacement& right, const JoinSplit& split);
  SubtreePlacement RepartitionAggregate(const optimizer::Aggregate& aggregate);
  // SplitAggregates on `*slot` and below; `below_top_n`: `*slot` is the input of an ORDER BY ... LIMIT (through
  // its Sort and projections), whose top-N then runs on the ranks too (TopNOnRanks) if the merge does.
  void SplitAggregatesBelow(optimizer::LogicalOperatorPtr* slot, bool below_top_n);
  // TopNOnRanks on `*slot` and below.
  void TopNBelow(optimizer::LogicalOperatorPtr* slot);
  // Whether `node` may be the input of a hash split: not itself an exchange's input, and a subtree without
  // broadcast inputs, and, unless `nested`, without repartitioned inputs (with `nested` they are split first: a
  // nested split). Joins split nested inputs (the alternative, broadcasting the build side, moves it
  // (r - 1) x (1 + 1 / r) times); aggregations do not (the alternative, gathering the partials, moves about as
  // much as splitting them, without a third exchange in sequence), unless an ORDER BY ... LIMIT reads their
  // groups: merged on the ranks, only each rank's top rows are gathered (TPC-H Q10).
  bool Splittable(const optimizer::LogicalOperator& node, bool nested) const;

  int ranks_ = 2;
  std::function<double(const optimizer::LogicalOperator&)> estimated_rows_;
  std::function<double(const BoundExpression&, const optimizer::LogicalOperator&)> estimated_distinct_;
  double split_groups_ = kDefaultSplitGroups;
  absl::node_hash_map<const optimizer::LogicalOperator*, SubtreePlacement> placements_;  // stable references
  absl::flat_hash_set<const optimizer::LogicalOperator*> broadcast_;
  absl::flat_hash_map<const optimizer::LogicalOperator*, int> repartition_;
  // Made by SplitAggregates: partial aggregates (partitioned), merges on the master, merges on the ranks by
  // their key column.
  absl::flat_hash_set<const optimizer::LogicalOperator*> partial_aggregates_;
  absl::flat_hash_set<const optimizer::LogicalOperator*> master_merges_;
  absl::flat_hash_map<const optimizer::LogicalOperator*, int> rank_merges_;
  // Made by TopNOnRanks: the Limits of the top-N on every rank.
  absl::flat_hash_set<const optimizer::LogicalOperator*> rank_top_n_;
};

}  // namespace tessera
