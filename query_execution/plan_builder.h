#pragma once
// The plan builder: turns an optimized logical plan (optimizer/logical_plan.h) into an ExecutionDag of relational
// operators. There is no separate physical planner: the builder makes the physical choices (filters and table
// scans fused into the block scanner of the operator that consumes them, inner joins chained into one probe, an
// aggregation fed inside the probe's work orders, edges marked pipelining or blocking) and follows the logical
// ones the optimizer's rules made (which side of a join is built, which aggregates are computed once:
// optimizer/README.md, "Rule or plan builder?").

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "optimizer/logical_plan.h"
#include "query_execution/execution_dag.h"
#include "relational_operators/table_load.h"
#include "storage/storage_manager.h"

namespace tessera {
namespace distributed {
class Cluster;
}

// A plan of more operators is refused with InvalidArgument "query plan too large: N operators (limit M)". The
// binder already bounds CTE and view expansion (optimizer::QueryBinder::kMaxExpandedReferences); this bounds what
// the scheduler's per-operator structures (LearningAgent, progress) must hold.
inline constexpr int kMaxPlanOperators = 10000;

// A broadcast input of a rank's plan fragment (plan_fragment.h): the placeholder node in the plan, and the
// relation received from the master that it stands for.
struct FragmentInput {
  const optimizer::LogicalOperator* placeholder = nullptr;
  std::shared_ptr<TemporaryRelation> relation;
};

// With `cluster` (the master of a `tessera-server --distributed` cluster), the parts of the plan that
// plan_distribution.h places on the ranks run on every rank below gather exchanges (distributed/README.md).
// `inputs`: on a rank, the relations that a fragment's placeholders read.
absl::StatusOr<std::unique_ptr<ExecutionDag>> BuildExecutionDag(const optimizer::LogicalOperator& plan,
                                                                StorageManager* storage, BufferPool* pool,
                                                                distributed::Cluster* cluster = nullptr,
                                                                const std::vector<FragmentInput>& inputs = {});

// Where INSERT ... SELECT puts the query's rows: output column i fills table column `target_columns[i]` (cast to
// its type); the table's other columns get their DEFAULT or NULL. The caller checked that the counts match.
struct InsertTarget {
  std::shared_ptr<TableLoad> load;
  std::vector<int> target_columns;
};

// The DAG of `plan` ending in an InsertOperator into `target.load` (relational_operators/insert_operator.h), its
// result operator; the query then returns no rows, and the load commits with its last work order.
absl::StatusOr<std::unique_ptr<ExecutionDag>> BuildInsertDag(const optimizer::LogicalOperator& plan,
                                                             InsertTarget target, StorageManager* storage,
                                                             BufferPool* pool);

}  // namespace tessera
