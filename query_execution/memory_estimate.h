#pragma once
// The memory a query needs, estimated before it runs from the optimizer's cardinality estimates, so that the
// scheduler's load controller can decide whether to admit it (ExecutionDag::memory_estimate()).
//
// Per operator (OperatorEstimate in execution_dag.h, filled by the plan builder):
//   output relation    estimated output rows x EstimatedRowBytes(output types); every operator's output is
//                      materialized in this engine and lives until its last consumer has finished, except that a
//                      streamed output (every consumer reads it over a pipelining edge and frees each block once
//                      read, RelationalOperator::ReleasesInputBlocks) holds only the blocks written and not yet
//                      read: the QueryManager dispatches consumers first, so that is a few work orders' output
//                      per worker, counted as kStreamedWorkOrdersResident of the producer's expected work orders
//                      (its own estimate, else its pipelining producers'; unknown counts the whole output)
//   hash table         a hash-join build: build rows x kHashEntryBytes (entry + bucket head); it references the
//                      build relation, which therefore stays resident with it (retains_inputs)
//   aggregation table  groups x (EstimatedRowBytes(group and aggregate types) + kAggregationEntryOverheadBytes);
//                      per-worker partial tables are counted once
//   sort buffer        input rows x kSortEntryBytes (the row permutation)
// Base tables are not counted: their blocks are cached by the buffer pool and can be evicted.
//
// Per query:
//   max = the sum over all operators: every structure and intermediate result resident at once.
//   min = the largest pipeline's need: a pipeline is a set of operators connected by pipelining edges (they run
//         together); it needs its members' memory plus that of every operator feeding it over a blocking edge (a
//         hash table it probes, the relation a sort reads) and whatever those retain. Running the query at all
//         needs at least this much, even when pipelines run one after the other.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <vector>

#include "catalog/types.h"
#include "query_execution/execution_dag.h"

namespace tessera {

inline constexpr int64_t kHashEntryBytes = 32;
inline constexpr int64_t kAggregationEntryOverheadBytes = 48;
inline constexpr int64_t kSortEntryBytes = 16;
// Producer work orders whose output a streamed relation is assumed to hold at once (see above): generous for up
// to 32 workers with consumers-first dispatch.
inline constexpr double kStreamedWorkOrdersResident = 64;

// Estimated bytes of one row: fixed-width types their width, CHAR(n) n, VARCHAR(n) min(n, 32) and unbounded
// VARCHAR 32, each string with a 4-byte offset; plus one null-flag byte per column.
int64_t EstimatedRowBytes(const std::vector<Type>& types);

// The bytes that `rows` estimated rows of `row_bytes` take (rows rounded up; never negative).
int64_t EstimatedBytes(double rows, int64_t row_bytes);

// min and max as described above, from the DAG's edges and its operators' estimates.
QueryMemoryEstimate EstimateQueryMemory(const ExecutionDag& dag);

}  // namespace tessera
