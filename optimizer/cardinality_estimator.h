#pragma once
// Statistics-based estimates over logical plans, used by the rules (join ordering, build sides, filters) and by
// the plan builder (the operators' row and memory estimates, query_execution/memory_estimate.h). Inputs are the
// table snapshots in the plan's TableScans: row count, per-column min/max and distinct-count sketches
// (catalog/column_statistics.h).
//
// Conventions (the usual System R-style guesses where statistics say nothing):
//   col = constant -> 1/ndv; col <> constant -> 1 - 1/ndv (also for col + - * constant, and col % k with
//   ndv at most |k|: `d_date_sk % 7 = 1` keeps a seventh); range -> interpolated between min and max for
//   numbers and dates, else 1/3; IN (n items) -> n/ndv; LIKE -> 0.1 (NOT LIKE 0.9); IS NULL -> null fraction;
//   AND -> product (one interval per column for ranges; the narrowest of = / IN on one column); OR -> 1 - prod(1 -
//   s); anything else 1/2.
//   Equi-join: |L| * |R| / max(ndv(l), ndv(r)) per key pair, several pairs combined with exponential back-off
//   (s1 * s2^(1/2) * s3^(1/4) ...), so that composite keys are not treated as independent. A side filtered
//   below its keys counts its rows as distinct keys when the other side's keys span at most half its key range
//   (a date dimension filtered to a year of the facts' dates: JoinKeyDistinct).
//   Tables without statistics (row count 0) count as 1000 rows with unique columns.
//
// One estimate recurses into the same subplans many times (a join asks for its inputs' rows and, through
// distinct-value estimates, again and again), so EstimateRows memoizes per node for the duration of one outermost
// call; the plan must not change during a call. Not thread-safe: use one estimator per thread.

#include <optional>

#include "absl/container/flat_hash_map.h"

#include "catalog/catalog.h"
#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// Where an output column of a plan comes from, if it is a base-table column passed through unchanged.
struct ColumnOrigin {
  const TableDescriptor* table = nullptr;
  int column = -1;
};
std::optional<ColumnOrigin> FindColumnOrigin(const LogicalOperator& plan, int column);

class CardinalityEstimator {
 public:
  // Estimated number of output rows (at least 1).
  double EstimateRows(const LogicalOperator& plan) const;

  // Fraction of `input`'s rows for which `predicate` (over input's output) is TRUE, in [0, 1].
  double Selectivity(const BoundExpression& predicate, const LogicalOperator& input) const;

  // Estimated distinct values of `expression` (over input's output), at least 1 and at most the input's rows.
  double DistinctValues(const BoundExpression& expression, const LogicalOperator& input) const;

  // Selectivity of an equi-join with these key pairs over the given inputs (keys over each side's output).
  double EquiJoinSelectivity(const std::vector<const BoundExpression*>& left_keys, const LogicalOperator& left,
                             const std::vector<const BoundExpression*>& right_keys, const LogicalOperator& right) const;

  // The fraction of a join's left rows whose keys are among its right side's, whatever its residual: the key's
  // distinct values on each side (composite keys: the product of the columns', at most the side's rows).
  double KeyMatchFraction(const Join& join) const;

 private:
  // `column <op> constant` with op one of < <= > >=, on a column with numeric min / max statistics.
  struct RangeBound {
    int column;    // input column index
    bool upper;    // column < / <= value
    double value;  // the constant, as a number
    double min;
    double max;
    double distinct;
  };
  std::optional<RangeBound> AsRangeBound(const BoundExpression& comparison, const LogicalOperator& input) const;
  double ComputeRows(const LogicalOperator& plan) const;
  double ComparisonSelectivity(const BoundExpression& comparison, const LogicalOperator& input) const;
  // Distinct values of a (cast) column, or of +, -, * by a constant, % by a constant k (at most |k|) or a negation
  // of such an expression; nullopt for anything else (two columns, division, functions).
  std::optional<double> ArithmeticDistinct(const BoundExpression& expression, const LogicalOperator& input) const;
  // The [min, max] statistics of a join key that is a (cast) base-table column of `input`, if numeric.
  std::optional<std::pair<double, double>> KeyRange(const BoundExpression& key, const LogicalOperator& input) const;
  // The distinct values of `key` over `side` that an equi-join with `other_key` over `other` may match:
  // DistinctValues, or `side`'s estimated rows where `side` is filtered below its table's keys and the other
  // key's values lie in a narrow part of this key's range and are at least as many as `side`'s rows
  // (containment; the .cc file says why).
  double JoinKeyDistinct(const BoundExpression& key, const LogicalOperator& side, const BoundExpression& other_key,
                         const LogicalOperator& other) const;
  // The fraction of a join's left rows that find a match (semi join) or none (anti join; at least 0.1):
  // KeyMatchFraction, times a residual's selectivity.
  double MatchedFraction(const Join& join) const;
  double UnmatchedFraction(const Join& join) const;

  // EstimateRows of the nodes seen in the current outermost EstimateRows call.
  mutable absl::flat_hash_map<const LogicalOperator*, double> rows_cache_;
  mutable int depth_ = 0;
};

}  // namespace tessera::optimizer
