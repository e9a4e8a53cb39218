#pragma once
// Hash join in two operators that share one JoinHashTable:
//   HashJoinBuildOperator indexes the build relation (one work order per build block, then one that links the
//   buckets). It must reach the probe operator through a blocking edge (input 1 of the probe, which carries no
//   blocks): probing starts only once the table is complete.
//   HashJoinProbeOperator reads the probe side (a base table with an optional pushed-down filter, or an upstream
//   relation), one work order per probe block, and emits matches vector at a time. Inner, left outer (probe rows
//   kept), right outer (build rows kept), full outer, semi and anti joins (with NOT IN's null-aware variant), each
//   with an optional residual predicate, and right semi / anti joins. Right and full outer joins and right semi /
//   anti joins flag matched build rows while probing; once every probe work order has finished, one work order per
//   build block emits the unmatched build rows (with NULL probe columns for outer joins), or the matched ones
//   for a right semi join.
//
// Output of inner / outer joins: `probe_output` columns of the probe batch, then `build_output` columns of the
// build relation (the other way round with `build_columns_first`). Semi / anti: `probe_output` only. The
// residual predicate is evaluated over the candidate pair's columns laid out as [probe batch columns..., build
// relation columns...] (all of them, not only output).
//
// Chained inner joins: a probe operator of an inner join without residual can absorb the inner joins (also
// without residual, keys that are plain columns) that would probe its output (ChainInnerJoin). Each work order
// then probes the tables one after the other: the rows matching join j (probe row and one entry per join so far)
// are probed against join j + 1 directly, a vector at a time, only the key columns are gathered in between, and
// the output columns are gathered once, from the probe batch and the build blocks, for the rows that matched
// every join. No intermediate relation is written. The "pair columns" of a chain are [probe batch columns...,
// build relation columns of join 0..., of join 1..., ...].
//
// Direct index and key filter (join_hash_table.h): probes of a table with a direct index look their entry up by
// key instead of hashing. Where the key of an inner or semi join (the first or a chained one) is a probe column,
// the scan also applies the table's key filter (a bit vector of its keys) as an optional runtime filter, so that
// only rows with a match in every join are looked up; this is decided when the operator first issues work orders
// and shows in EXPLAIN ANALYZE ("key filters in the scan").
//
// Fused consumer (batch_sink.h): an inner-chain probe may hand the rows that matched every join to a sink (a hash
// aggregation) inside its work orders instead of writing them (FeedSink); its output relation then stays empty.

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "expressions/bound_expression.h"
#include "relational_operators/batch_sink.h"
#include "relational_operators/block_input.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/join_hash_table.h"
#include "relational_operators/relational_operator.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {

// kRightSemi / kRightAnti keep the build rows that have / have no match (a semi or anti join built on its
// preserved side, so that the large side streams through the probe).
enum class HashJoinType { kInner, kLeftOuter, kRightOuter, kFullOuter, kSemi, kAnti, kRightSemi, kRightAnti };

// Whether the output has build columns (inner, outer and right semi / anti joins); whether matched pairs are
// written while probing (inner and outer joins); whether unmatched probe rows are kept (left and full outer);
// whether build rows are flagged when matched and emitted after the last probe (right and full outer, right semi
// and anti).
bool EmitsBuildColumns(HashJoinType type);
bool WritesPairs(HashJoinType type);
bool KeepsUnmatchedProbeRows(HashJoinType type);
bool TracksBuildMatches(HashJoinType type);

class HashJoinBuildOperator : public RelationalOperator {
 public:
  // With `single_row` (the join of a scalar subquery) the build relation may hold at most one row: the finalize
  // work order fails with kInvalidArgument (kScalarSubqueryRowsError) when it holds more.
  explicit HashJoinBuildOperator(std::shared_ptr<JoinHashTable> table, bool single_row = false)
      : RelationalOperator("HashJoinBuild"), table_(std::move(table)), single_row_(single_row) {}

  void FeedInputBlock(int input, uint32_t block_index) override { pending_.push_back(block_index); }
  void DoneFeedingInput(int input) override { input_done_ = true; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  // "direct index" or "hash buckets", and whether its LIP filter is an exact bit vector.
  std::string RuntimeDetail() const override;

 private:
  class AddBlockWorkOrder;
  class FinalizeWorkOrder;

  std::shared_ptr<JoinHashTable> table_;
  const bool single_row_;
  std::deque<uint32_t> pending_;
  bool input_done_ = false;
  int64_t issued_ = 0;
  std::atomic<int64_t> completed_{0};
  bool finalize_issued_ = false;
};

struct HashJoinSpec {
  HashJoinType type = HashJoinType::kInner;
  std::vector<std::unique_ptr<BoundExpression>> probe_keys;  // over the probe batch; types match the build keys
  std::vector<int> probe_output;                             // probe batch columns in the output
  std::vector<int> build_output;                             // build relation columns in the output
  std::vector<std::string> output_names;
  std::unique_ptr<BoundExpression> residual;  // optional, see the file comment
  bool null_aware = false;                    // kAnti for NOT IN
  bool build_columns_first = false;           // output build_output before probe_output
};

// The error of a scalar subquery that returns more than one row (PostgreSQL's and DuckDB's wording).
inline constexpr char kScalarSubqueryRowsError[] = "more than one row returned by a subquery used as an expression";

class HashJoinProbeOperator : public RelationalOperator {
 public:
  HashJoinProbeOperator(BlockInput probe, ScanSpec scan, std::shared_ptr<JoinHashTable> table, HashJoinSpec spec,
                        BufferPool* pool);
  ~HashJoinProbeOperator() override;

  void FeedInputBlock(int input, uint32_t block_index) override {
    if (input == 0) probe_blocks_.Feed(block_index);
  }
  void DoneFeedingInput(int input) override {
    if (input == 0) probe_blocks_.DoneFeeding();
  }
  bool ReleasesInputBlocks(int input) const override { return input == 0; }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  void OnAllWorkOrdersFinished() override;
  int64_t EstimatedWorkOrders() const override;
  bool WritesOutputBlocks() const override { return sink_ == nullptr; }

  // Whether a further inner join can be chained into this operator (an inner join without residual). Plan
  // building only, before the DAG runs.
  bool CanChainInnerJoin() const;
  // Makes every work order also probe `table` with the rows it would have written, and write only the rows that
  // match there too (an inner join, no residual). `key_pair_columns` are the pair columns holding the probe
  // keys (of the types of the table's key columns); the output becomes the pair columns `output_pair_columns`,
  // named `output_names`; the new table's build columns are numbered from pair_width() as it was before this
  // call. Replaces output().
  void ChainInnerJoin(std::shared_ptr<JoinHashTable> table, std::vector<int> key_pair_columns,
                      std::vector<int> output_pair_columns, std::vector<std::string> output_names);
  int pair_width() const { return static_cast<int>(pair_types_.size()); }
  // The output columns, as pair columns.
  const std::vector<int>& output_pair_columns() const { return output_pair_columns_; }
  // Plan building: each work order writes at most `rows` rows and then stops, for a LIMIT without ORDER BY that reads
  // this operator's rows one for one (it needs no more from any one work order; a cross join's work order would
  // otherwise write a block's rows times the whole build side). Only where probe work orders decide every output
  // row (inner, left outer, semi, anti); false, and nothing changes, for joins that track build rows.
  bool SetOutputRowCap(int64_t rows);
  // Whether the rows can go to a sink instead of the output relation (FeedSink): the inner-chain path, no output
  // row cap. Plan building only.
  bool CanFeedSink() const { return ProbesInnerChain() && output_row_cap_ < 0 && sink_ == nullptr; }
  // Plan building, CanFeedSink(): every work order hands its output rows, restricted to output columns
  // `sink_columns` (in that order), to `sink` a vector at a time instead of writing them; the output relation
  // takes those columns and stays empty. `sink` must outlive the work orders (an operator of the same DAG).
  void FeedSink(BatchSink* sink, const std::vector<int>& sink_columns);
  // Joins probed per work order: 1 + the chained ones.
  int joins() const { return 1 + static_cast<int>(chained_.size()); }
  // Which joins look their build row up through a direct index, and whether the key filter runs in the scan.
  std::string RuntimeDetail() const override { return runtime_detail_; }

 private:
  class ProbeWorkOrder;
  class BuildRowsByMatchWorkOrder;

  // A join chained after the first one (ChainInnerJoin).
  struct ChainedJoin {
    std::shared_ptr<JoinHashTable> table;
    std::vector<int> key_pair_columns;
    int first_pair_column;  // the pair column of the build relation's column 0
  };
  // Whether work orders use the inner-join path that ChainInnerJoin extends (every inner join without residual).
  bool ProbesInnerChain() const { return CanChainInnerJoin(); }
  struct ProbeScratch;
  // A ProbeScratch for a probe work order, and back. Thread-safe.
  std::unique_ptr<ProbeScratch> TakeScratch();
  void GiveScratch(std::unique_ptr<ProbeScratch> scratch);
  void MakeOutput(std::vector<std::string> output_names);
  // Adds the key filters of the joins that drop probe rows without a match and whose key is a probe column to
  // the scan; once, before the first work order.
  void ApplyKeyFilterInScan();

  // The output columns in output order, out of a batch laid out as [probe columns..., build columns...].
  std::vector<const ColumnVector*> OutputColumns(const Batch& pairs) const;

  const BlockInput probe_;
  ScanSpec scan_;
  std::shared_ptr<JoinHashTable> table_;
  HashJoinSpec spec_;
  std::shared_ptr<TemporaryRelation> output_;
  BufferPool* pool_;
  std::vector<Type> pair_types_;          // types of [probe batch columns..., build columns...] (and chained builds')
  std::vector<int> output_pair_columns_;  // the output columns, as indexes into that layout
  std::vector<ChainedJoin> chained_;
  std::unique_ptr<BlockBuilderPool> builders_;  // for output_
  std::mutex scratch_mutex_;
  std::vector<std::unique_ptr<ProbeScratch>> idle_scratch_;  // at most one per concurrent work order
  // Per pair column: the join whose build relation it belongs to (0: table_, j: chained_[j - 1]), -1 for a
  // probe batch column.
  std::vector<int> pair_column_join_;
  BlockWorkQueue probe_blocks_;
  // Whether the scan applies table_'s key filter (JoinHashTable::key_filter), decided by the first GetWorkOrders
  // (the table is complete then).
  bool key_filter_decided_ = false;
  std::string runtime_detail_;  // set when the key filter is decided (all tables are built by then)
  // Right / full outer joins: probe work orders issued and finished, and whether the unmatched build rows'
  // work orders are out.
  int64_t probes_issued_ = 0;
  std::atomic<int64_t> probes_finished_{0};
  bool unmatched_issued_ = false;
  int64_t output_row_cap_ = -1;  // SetOutputRowCap; -1: none
  BatchSink* sink_ = nullptr;    // FeedSink; null: rows are written to output_
};

}  // namespace tessera
