#pragma once
// The logical plan: a tree of relational operators that the binder produces from a query and the rules
// (optimizer/rules/) rewrite. Every node has an output schema (names, types, nullability). Expressions in a
// node are BoundExpressions whose kColumn indexes refer to the node's input, i.e. its child's output columns;
// for a Join they refer to the left child's columns followed by the right child's (see Join for the key
// convention).
//
// Nodes are plain data with public fields so that rules can edit them in place. A node caches its output
// schema: after changing a node's fields or children call RecomputeOutput() on it (and on every ancestor
// whose output depends on it). Plans are owned through unique_ptr, are not thread-safe while being rewritten,
// and are read-only (shareable between threads) once planning is done.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "expressions/aggregate_kind.h"
#include "expressions/bound_expression.h"

namespace tessera::optimizer {

struct OutputColumn {
  std::string name;
  Type type;
  bool nullable = true;
  // The FROM item (table alias or name) the column comes from; "" for computed columns. Used by EXPLAIN to
  // tell apart columns of the same name (n1.n_name vs n2.n_name).
  std::string relation;
};

enum class LogicalOperatorKind {
  kTableScan,
  kFilter,
  kProject,
  kJoin,
  kAggregate,
  kSort,
  kLimit,
  kSetOperation,
  kValues,
  kDistinct,
  kWindow,  // optimizer/logical_window.h
  kSeries,
};

class LogicalOperator {
 public:
  explicit LogicalOperator(LogicalOperatorKind kind) : kind_(kind) {}
  virtual ~LogicalOperator() = default;
  LogicalOperator(const LogicalOperator&) = delete;
  LogicalOperator& operator=(const LogicalOperator&) = delete;

  LogicalOperatorKind kind() const { return kind_; }
  const std::vector<OutputColumn>& output() const { return output_; }
  int output_width() const { return static_cast<int>(output_.size()); }
  std::vector<std::string> OutputNames() const;

  // Recomputes output() from the node's fields and its children's outputs.
  virtual void RecomputeOutput() = 0;
  // A deep copy of the subtree.
  virtual std::unique_ptr<LogicalOperator> Clone() const = 0;
  // One line describing this node (no children), expressions rendered with the input's column names.
  virtual std::string Describe() const = 0;

  // The indented tree for EXPLAIN: one node per line, children indented by two spaces.
  std::string ToString() const;

  // Downcasts; DCHECK the kind.
  template <typename T>
  T& As() {
    return static_cast<T&>(*this);
  }
  template <typename T>
  const T& As() const {
    return static_cast<const T&>(*this);
  }

  std::vector<std::unique_ptr<LogicalOperator>> children;

 protected:
  std::vector<OutputColumn> output_;
  // Copies the children of `this` into `copy` (for Clone implementations).
  void CloneChildrenInto(LogicalOperator& copy) const;

 private:
  void AppendTree(int depth, std::string* out) const;
  const LogicalOperatorKind kind_;
};

using LogicalOperatorPtr = std::unique_ptr<LogicalOperator>;
using ExpressionPtr = std::unique_ptr<BoundExpression>;

// Reads the columns `columns` (ordinals into table->columns, in output order) of a table snapshot; rows that
// fail `filter` (over this scan's output columns; null = none) are dropped. No children.
class TableScan final : public LogicalOperator {
 public:
  TableScan() : LogicalOperator(LogicalOperatorKind::kTableScan) {}
  std::shared_ptr<const TableDescriptor> table;
  std::string alias;  // the name the query used for the table (alias or table name)
  std::vector<int> columns;
  ExpressionPtr filter;
  // Set by the LipFilters rule: Bloom filters published by hash joins above this scan (Join::lip_filter_id)
  // that the scan's reader applies before any hash probe; ImpliedLipFilters adds filters of joins elsewhere
  // whose probe key an equality above makes equal to a column of this scan. key_columns are this scan's output
  // columns, one per key pair the filter covers; build_keys names the build side's keys for EXPLAIN.
  struct LipFilterUse {
    int filter_id = -1;
    std::vector<int> key_columns;
    std::string build_keys;
  };
  std::vector<LipFilterUse> lip_filters;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

// Keeps the rows of its child for which `predicate` is TRUE. Output = child's output.
class Filter final : public LogicalOperator {
 public:
  Filter() : LogicalOperator(LogicalOperatorKind::kFilter) {}
  ExpressionPtr predicate;
  // The estimated rows when a rule knows them better than the predicate's selectivity does (SetOperationLowering:
  // the filter over the tag aggregation yields what the INTERSECT / EXCEPT it replaced was estimated to); negative:
  // none.
  double estimated_rows = -1;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

// Computes one output column per expression (over the child's output).
class Project final : public LogicalOperator {
 public:
  Project() : LogicalOperator(LogicalOperatorKind::kProject) {}
  std::vector<ExpressionPtr> expressions;
  std::vector<std::string> names;      // one per expression
  std::vector<std::string> relations;  // optional (empty or one per expression): OutputColumn::relation

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

enum class JoinType {
  kInner,      // rows of left x right that satisfy keys and residual
  kLeftOuter,  // inner rows, plus each unmatched left row padded with NULLs
  kFullOuter,  // left outer plus each unmatched right row padded with NULLs (no hash-join operator yet)
  kSemi,       // each left row with at least one match; output = left columns only
  kAnti,       // each left row with no match; output = left columns only
  kCross,      // every pair; no keys, no residual
};

// A join. children[0] = left (probe side by convention), children[1] = right (build side).
//   left_keys[i] is over the left child's output, right_keys[i] over the right child's output (its own
//   indices), and both have the same type; a pair matches when the values are equal and not NULL. residual is
//   over left ++ right columns (also for semi/anti joins) and must be TRUE for a pair to match.
// Output: left ++ right columns (right columns nullable for left/full outer), or left only for semi/anti.
class Join final : public LogicalOperator {
 public:
  Join() : LogicalOperator(LogicalOperatorKind::kJoin) {}
  JoinType join_type = JoinType::kInner;
  std::vector<ExpressionPtr> left_keys;
  std::vector<ExpressionPtr> right_keys;
  ExpressionPtr residual;
  // kAnti only: NOT IN semantics for key pair 0 (SQL three-valued logic): a left row is also dropped when its
  // key 0 is NULL and the right side has a row matching the other keys and residual, or when such a right row
  // has a NULL key 0. Further key pairs (correlation keys) compare as usual.
  bool null_aware = false;
  // The right input must yield at most one row (uncorrelated scalar subquery that is not an aggregate); the
  // executor reports "more than one row returned by a subquery used as an expression" otherwise.
  bool enforce_single_row = false;
  // Set by the ExactFilterSemiJoin rule on a semi / anti join with one integer key pair (plain columns): the
  // build side is a bit vector over [min, max] (catalog statistics of the build key) instead of a hash table
  // (relational_operators/exact_filter.h). from_inner_join: the join was an inner join whose build side
  // contributed no columns and whose key the statistics call unique; execution then still repeats probe rows
  // for build keys that turn out to occur more than once.
  struct ExactFilterRange {
    int64_t min = 0;
    int64_t max = 0;
    bool from_inner_join = false;
  };
  std::optional<ExactFilterRange> exact_filter;
  // Set by the LipFilters and ImpliedLipFilters rules: this join's hash build publishes Bloom filter
  // `lip_filter_id` (-1: none), which scans list in TableScan::lip_filters (scans below its probe side, or,
  // for ImpliedLipFilters, scans in another join's other input). The filter covers the key pairs lip_filter_key_pairs (indices
  // into left_keys / right_keys, ascending): all of them, or those whose probe keys come from one scan when the
  // others come from elsewhere (TPC-H Q5: l_suppkey of s_suppkey = l_suppkey AND s_nationkey = c_nationkey).
  int lip_filter_id = -1;
  std::vector<int> lip_filter_key_pairs;
  // Set by the BuildSideSwap rule on a left outer, semi or (not null-aware) anti join with keys: the hash table
  // is built on the left (preserved) side and the right side streams through the probe (right outer / semi /
  // anti hash joins). filter_probe_by_build_keys (only with build_left): the probe rows are first filtered by a
  // Bloom filter of the build keys.
  bool build_left = false;
  bool filter_probe_by_build_keys = false;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  // EXPLAIN of join filters: `Join SEMI exact filter [1, 200000] (from inner join) keys=[lo_partkey =
  // p_partkey]`, `Join INNER keys=[lo_orderdate = d_datekey] publishes LIP filter #0`, on the scan `LIP filters:
  // [lo_orderdate IN bloom(d_datekey)]` (TableScan::Describe), a multi-key join's filter `publishes LIP filter #0
  // on [s_suppkey]`; the operator DAG (query_execution/plan_builder.cc) shows the `ExactFilterBuild` operators
  // and how many runtime filters a scan applies; a swapped join shows `(left side built)` there.
  std::string Describe() const override;
};

// kQuantileCont / kQuantileDisc / kStringAgg are holistic (every value of a group is kept until the group is
// written); kApproxCountDistinct keeps a HyperLogLog sketch per group. None of them decomposes into partials.
struct AggregateCall {
  AggregateKind function = AggregateKind::kCountStar;
  bool distinct = false;
  ExpressionPtr argument;  // over the child's output; null for COUNT(*)
  Type result_type;
  std::string name;  // output column name, e.g. "sum(l_quantity)"
  // Quantiles: the fraction in [0, 1], a DECIMAL or DOUBLE constant (DECIMAL keeps the discrete position exact).
  Value fraction;
  // Quantiles and string_agg: order the values descending (percentile_cont(f) WITHIN GROUP (ORDER BY x DESC),
  // string_agg(x, s ORDER BY x DESC)); `ordered` says whether string_agg orders at all.
  bool descending = false;
  bool ordered = false;
  std::string separator;  // string_agg

  AggregateCall Clone() const;
};

// Groups the child's rows by `group_by` and computes `aggregates` per group. Output: one column per group-by
// expression, then one per aggregate. Without group-by expressions it yields exactly one row (also for empty
// input: COUNT = 0, others NULL).
class Aggregate final : public LogicalOperator {
 public:
  Aggregate() : LogicalOperator(LogicalOperatorKind::kAggregate) {}
  std::vector<ExpressionPtr> group_by;
  std::vector<std::string> group_names;  // one per group-by expression
  std::vector<AggregateCall> aggregates;
  // Set by the AggregateSharing rule: aggregates with the same shared_result (>= 0) compute the same rows (their
  // subtrees print the same up to the numbers of the LIP filters they publish), and execution computes them once.
  // shared_lip_filters: the LIP filter ids this subtree's joins publish, in the order they print (a copy's id i
  // stands for the same position of the planned one's list). -1 / empty: no other aggregate is the same.
  int shared_result = -1;
  std::vector<int> shared_lip_filters;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

struct SortKey {
  ExpressionPtr expression;  // over the child's output
  bool ascending = true;
  bool nulls_first = false;  // SQL default: NULLS LAST for ASC, NULLS FIRST for DESC

  SortKey Clone() const;
};

// Orders the child's rows. Output = child's output.
class Sort final : public LogicalOperator {
 public:
  Sort() : LogicalOperator(LogicalOperatorKind::kSort) {}
  std::vector<SortKey> keys;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

// Skips `offset` rows, then passes at most `limit` rows (no limit when unset). Output = child's output.
class Limit final : public LogicalOperator {
 public:
  Limit() : LogicalOperator(LogicalOperatorKind::kLimit) {}
  std::optional<int64_t> limit;
  int64_t offset = 0;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

enum class SetOperationType { kUnion, kIntersect, kExcept };

// children[0] op children[1]; both children have the same column types (the binder inserts casts). Without
// `all`, duplicates are removed (set semantics); with `all`, bag semantics. Output names = left's.
class SetOperation final : public LogicalOperator {
 public:
  SetOperation() : LogicalOperator(LogicalOperatorKind::kSetOperation) {}
  SetOperationType operation = SetOperationType::kUnion;
  bool all = false;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

// Constant rows; each row has one Value per column, already of the column's type. No children.
class Values final : public LogicalOperator {
 public:
  Values() : LogicalOperator(LogicalOperatorKind::kValues) {}
  std::vector<OutputColumn> columns;
  std::vector<std::vector<Value>> rows;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

// The integers start, start + step, ... (`count` of them; step != 0): generate_series and range in FROM
// (optimizer/table_function_binder.cc). One BIGINT column, never NULL. No children.
class Series final : public LogicalOperator {
 public:
  Series() : LogicalOperator(LogicalOperatorKind::kSeries) {}
  std::string column_name;
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

// Removes duplicate rows (NULLs compare equal). Output = child's output.
class Distinct final : public LogicalOperator {
 public:
  Distinct() : LogicalOperator(LogicalOperatorKind::kDistinct) {}

  void RecomputeOutput() override;
  std::unique_ptr<LogicalOperator> Clone() const override;
  std::string Describe() const override;
};

std::string JoinTypeName(JoinType type);
std::string AggregateFunctionName(AggregateKind function);

// Convenience constructors: they take ownership of the children and compute the output schema.
std::unique_ptr<Filter> MakeFilter(LogicalOperatorPtr child, ExpressionPtr predicate);
std::unique_ptr<Project> MakeProject(LogicalOperatorPtr child, std::vector<ExpressionPtr> expressions,
                                     std::vector<std::string> names);
// A join without keys or residual; callers add conditions and call RecomputeOutput() if they change the type.
std::unique_ptr<Join> MakeJoin(JoinType type, LogicalOperatorPtr left, LogicalOperatorPtr right);
// left UNION ALL right (the children must have the same column types).
std::unique_ptr<SetOperation> MakeUnionAll(LogicalOperatorPtr left, LogicalOperatorPtr right);
// A projection of the child's columns `columns` (by index), keeping names and relations.
std::unique_ptr<Project> MakeColumnSelection(LogicalOperatorPtr child, const std::vector<int>& columns);

}  // namespace tessera::optimizer
