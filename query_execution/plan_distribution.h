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
// partitioned inputs run on the master.
// Broadcast: a join of a partitioned probe side with a build side that is neither replicated nor co-located
// (computed on the master, e.g. from its own gathers) is partitioned too when the build side is estimated small
// (rows x ranks, or x (ranks + 1) when it must be gathered first, < the probe side's rows, and at most
// kMaxBroadcastRows): the master computes the build side and sends it whole to every rank with the fragment
// (Broadcast()), instead of gathering the probe side.
// Repartition: a join of two partitioned inputs that is not co-located and not broadcast (inner, left outer, semi,
// anti), on a key pair of INTEGER / BIGINT or string columns, and an aggregation over a partitioned input that
// cannot be split into partial aggregates (COUNT(DISTINCT), holistic calls) grouped by such a column, are
// partitioned too: each input not already placed by that key is repartitioned (Repartition(): every rank splits
// its rows by the key's rank and sends each part to its rank, distributed/repartition_operator.h), so that the
// rows that meet are on one rank. An input that itself reads broadcast or repartitioned inputs is not
// repartitioned (the exchange's input runs as one plan fragment without inputs).
//
// Threading: used by one plan builder on one thread; results are memoized per node (nodes must outlive it).

#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
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

  // `ranks`: the cluster's size; `estimated_rows`: the optimizer's row estimate of a subtree (null: no broadcast).
  PlanDistribution(int ranks, std::function<double(const optimizer::LogicalOperator&)> estimated_rows)
      : ranks_(ranks), estimated_rows_(std::move(estimated_rows)) {}
  PlanDistribution() = default;

  const SubtreePlacement& Of(const optimizer::LogicalOperator& node);

  // An Aggregate over a partitioned input that is not itself partitioned, with every call decomposable
  // (optimizer/partial_aggregation.h): every rank computes partial groups, the master merges them.
  bool SplitsAggregate(const optimizer::LogicalOperator& node);

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
  SubtreePlacement RepartitionJoin(const optimizer::Join& join, const SubtreePlacement& left,
                                   const SubtreePlacement& right);
  SubtreePlacement RepartitionAggregate(const optimizer::Aggregate& aggregate);
  // Whether `node` may be the input of a hash split: a subtree without broadcast or repartitioned inputs.
  bool Splittable(const optimizer::LogicalOperator& node) const;

  int ranks_ = 2;
  std::function<double(const optimizer::LogicalOperator&)> estimated_rows_;
  absl::node_hash_map<const optimizer::LogicalOperator*, SubtreePlacement> placements_;  // stable references
  absl::flat_hash_set<const optimizer::LogicalOperator*> broadcast_;
  absl::flat_hash_map<const optimizer::LogicalOperator*, int> repartition_;
};

}  // namespace tessera
