#pragma once
// The plan builder: turns an optimized logical plan (optimizer/logical_plan.h) into an ExecutionDag of relational
// operators. It also plays the physical planner's part for now: filters and table scans are fused into the block
// scanner of the operator that consumes them (select, join probe, aggregation), a join's right child becomes the
// hash table's build side, and edges are marked pipelining or blocking.

#include <memory>

#include "absl/status/statusor.h"
#include "optimizer/logical_plan.h"
#include "query_execution/execution_dag.h"
#include "storage/storage_manager.h"

namespace tessera {

absl::StatusOr<std::unique_ptr<ExecutionDag>> BuildExecutionDag(const optimizer::LogicalOperator& plan,
                                                                 StorageManager* storage, BufferPool* pool);

}  // namespace tessera
