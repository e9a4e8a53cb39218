#pragma once
// Exact filters for semi joins (Quickstep D§2.5.2). A join gets an exact filter (Join::exact_filter: its build
// side becomes a bit vector over [min, max] instead of a hash table) when
//   - it is a semi join, an anti join (not NOT IN's null-aware one), or an inner join whose build (right) side
//     contributes no column that is read above the join;
//   - it has exactly one key pair, both plain columns, of type INTEGER, BIGINT or DATE, and no residual;
//   - the build key traces back to a base-table column with statistics (rows, nulls, min, max) whose range is
//     dense: max - min + 1 <= kDenseFactor x its non-NULL rows (SSB's p_partkey, s_suppkey, c_custkey are;
//     d_datekey, 19920101..19981230 over 2,556 rows, is not);
//   - for an inner join, also: the statistics call the key unique (distinct estimate >= kUniqueFraction x
//     non-NULL rows) and the build side is that one table under filters / projections and semi / anti joins
//     (no join that could repeat keys). The inner join becomes a semi join; a Project restores the join's
//     output width (the unread build columns become NULL constants) and ColumnPruning runs again to drop them.
// Distinct-count statistics are estimates: execution checks uniqueness and repeats probe rows for keys that
// occur more than once (relational_operators/exact_filter.h), so a wrong estimate costs time, not answers.
// Without statistics (row count 0, or min/max unknown) nothing changes.
//
// Exact-filter joins are then moved down the left (probe) side while their key passes through unchanged
// (left inputs of joins other than full outer ones, filters, column projections), onto the scan they filter:
// execution applies them in that scan's reader, before any hash probe. They also move into the branches of a
// UNION [ALL]: into a union's branches the join is copied, build side included (each branch builds its own
// filter), when the build side scans at most as many base rows as the union is estimated to yield (TPC-DS Q05 in
// decision 0010). Tests: `tests/sql/optimizer/union_join_filters.test`.
//
// Runs after ColumnPruning (it needs to know which columns are read).

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class ExactFilterSemiJoin final : public Rule {
 public:
  static constexpr double kDenseFactor = 4.0;
  static constexpr double kUniqueFraction = 0.95;

  std::string name() const override { return "ExactFilterSemiJoin"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
