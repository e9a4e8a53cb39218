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
//
// Threading: used by one plan builder on one thread; results are memoized per node (nodes must outlive it).

#include <vector>

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
  const SubtreePlacement& Of(const optimizer::LogicalOperator& node);

  // An Aggregate over a partitioned input that is not itself partitioned, with every call decomposable
  // (optimizer/partial_aggregation.h): every rank computes partial groups, the master merges them.
  bool SplitsAggregate(const optimizer::LogicalOperator& node);

 private:
  SubtreePlacement Classify(const optimizer::LogicalOperator& node);
  SubtreePlacement ClassifyJoin(const optimizer::Join& join);

  absl::node_hash_map<const optimizer::LogicalOperator*, SubtreePlacement> placements_;  // stable references
};

}  // namespace tessera
