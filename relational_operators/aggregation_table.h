#pragma once
// The hash table of the aggregation operator: groups and their aggregate states.
//
// Each worker folds its input batches into its own table (Update: no locks, no shared cache lines); after the
// last batch, the partial tables are combined partition by partition (MergeAndWrite: partitions are disjoint,
// so one work order per partition, in parallel) and the final groups are written to the output relation.
//
// A group is one fixed-size row: its hash, its key, one state per aggregate. A key is a NULL flag per column
// (so NULLs group together, as SQL requires) and the values: stored in the row when every column is
// fixed-width or a string of a declared length up to 32 bytes, else serialized (length-prefixed strings)
// beside it. A table whose inline string meets a longer value (bytes, not characters, count) switches to
// serialized keys. COUNT / SUM / AVG (DISTINCT x) keep a set of serialized values per group (SUM and AVG fold
// it when the group is written). See
// docs/decisions/0003-hash-aggregation.md.
//
// Threading: a table is used by one thread at a time. MergeAndWrite for different partitions may run at the
// same time over the same partial tables once no Update runs any more.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "expressions/aggregate_kind.h"
#include "expressions/bound_expression.h"
#include "expressions/column_vector.h"
#include "relational_operators/temporary_relation.h"
#include "storage/buffer_pool.h"

namespace tessera {

struct AggregationSpec {
  struct Call {
    AggregateKind kind = AggregateKind::kCountStar;
    bool distinct = false;
    std::unique_ptr<BoundExpression> argument;  // over the input batch; null for COUNT(*)
    Type result_type;
    Value fraction;           // quantiles: in [0, 1]; a DECIMAL fraction places quantile_disc exactly
    bool descending = false;  // quantiles, string_agg: order the values descending
    bool ordered = false;     // string_agg: order the values (else the order is unspecified)
    std::string separator;    // string_agg
  };
  std::vector<std::unique_ptr<BoundExpression>> group_by;  // over the input batch
  std::vector<Call> calls;
  std::vector<std::string> output_names;  // group columns, then one per call
};

// Whether `call`'s state is a container that its slot indexes (DISTINCT sets, value lists, sketches) rather
// than a fixed-size summary.
bool HasContainerState(const AggregationSpec::Call& call);

class GroupTable;  // aggregation_table.cc

class AggregationTable {
 public:
  // The number of hash partitions that MergeAndWrite can split the groups into.
  static constexpr uint32_t kPartitions = 16;

  // `spec` and `pool` must outlive the table; only the spec's kinds and types are used (the expressions are
  // evaluated by the caller). The table's arrays (group rows, hash slots, partition lists) are allocated from
  // `pool` as the table grows, so they count against its budget (and account) exactly while they exist.
  AggregationTable(const AggregationSpec& spec, BufferPool* pool);
  ~AggregationTable();
  AggregationTable(const AggregationTable&) = delete;
  AggregationTable& operator=(const AggregationTable&) = delete;

  // Folds the selected rows (all rows 0..batch_size-1 when `selection` is null; `selected` of them) of one
  // batch: keys[g] is group column g evaluated over the batch, arguments[c] the argument of call c (null for
  // COUNT(*)). Errors: ResourceExhausted when the table cannot grow within the pool's budget (the table stays
  // valid and frees everything when destroyed, but the batch may be partly folded in).
  absl::Status Update(const std::vector<const ColumnVector*>& keys, const std::vector<const ColumnVector*>& arguments,
                      const SelectionVector* selection, uint32_t batch_size, uint32_t selected);

  // Makes room for `groups` groups in an empty table at once (rows of exactly that many groups, hash slots and
  // merge-partition lists to match), so that filling it does not grow the arrays step by step (copies, rehashes
  // and freshly zeroed pages at every doubling). For a group count known in advance; a table that outgrows it
  // grows as usual. Does nothing to a table that has groups. Errors: ResourceExhausted (the table stays valid
  // and empty; the caller may go on without the room).
  absl::Status Presize(size_t groups);

  // Per call, the call whose state it reads: itself, or for a SUM or AVG whose argument prints the same as an
  // earlier SUM's or AVG's (TPC-H Q1: sum(l_quantity) and avg(l_quantity)), that call, whose state (sum and
  // count of non-NULL values) is the same. Update folds only calls that are their own source (it ignores the
  // others' arguments, which may be null).
  static std::vector<size_t> StateSources(const AggregationSpec& spec);

  size_t group_count() const;
  // Bytes the table holds on the heap rather than in the pool (serialized keys of long strings, MIN/MAX
  // strings, COUNT(DISTINCT) sets; partly an estimate), for the owner to charge to the pool.
  size_t HeapBytes() const;

  // Combines the groups of hash partition `partition` of `partials` (null entries are skipped), or all their
  // groups when `partition` is -1, and appends the final groups to `output` (whose schema is the group
  // columns, then one column per call). A scalar aggregation (no group columns) writes its one row also
  // without input. Groups missing from the largest partial table are merged in a table allocated from `pool`
  // (freed before returning). Partial tables are left in an unspecified state for the partitions merged (each
  // partition at most once). Errors: SUM overflowing its result type; ResourceExhausted over the budget.
  static absl::Status MergeAndWrite(const AggregationSpec& spec,
                                    const std::vector<std::unique_ptr<AggregationTable>>& partials, int partition,
                                    BufferPool* pool, TemporaryRelation* output, int64_t* groups_written);

 private:
  std::unique_ptr<GroupTable> table_;
};

}  // namespace tessera
