#pragma once
// Finds aggregates that compute the same rows: a CTE or view referenced twice (TPC-H Q15's revenue0, once joined
// with supplier and once under MAX), the copies of the finest aggregation of GROUP BY ROLLUP / CUBE / GROUPING
// SETS (optimizer/grouping_sets.h). Aggregates whose subtrees print the same (EXPLAIN's text: tables, aliases,
// columns, filters, keys, residuals, exact and LIP filters, every expression) get one Aggregate::shared_result;
// the numbers of the LIP filters their joins publish are compared by order of appearance, since the rules number
// each copy's joins apart (Aggregate::shared_lip_filters lists them).
//
// The plan builder computes such an aggregate once and feeds its rows to the consumers of every copy (the
// relation is released when the last of them has finished); a copy's LIP filter numbers then stand for the
// planned one's filters. The plan keeps every copy's subtree, so its output and estimates are unchanged.
//
// First, copies that differ only in a filter on one of their group keys are made the same (TPC-DS Q04 / Q11 / Q74: the
// CTE year_total read once per channel and year, `d_year = 2001` / `2002` pushed down to date_dim's scan; Q39's inv per
// month; Q31 per quarter; Q75 with the filter in each UNION branch). A group key `g` that is a plain column of the
// aggregate's input is traced down through projections of the column, Filters, DISTINCT, both sides of inner / cross
// joins, the preserved (left) side of left outer / semi / anti joins and every branch of a UNION (ALL or not; an empty
// Values branch counts as filtered), never through another Aggregate, a Window, a Limit or the NULL-padded side of an
// outer join. The copy has a filter on g when every path ends at a TableScan filter or Filter with conjuncts `c =
// constant` / `c IN (constants)` (no NULL constant, the column's type) on g's column c, all such sites letting the same
// values V through (several conjuncts at one site: their intersection). Copies whose text (SharingKey) with those
// conjuncts removed is the same, sites at the same positions on the same key, form a group; a copy with no conjunct on
// any traced key column joins it with its own text; a copy with such conjuncts that do not make a filter (one UNION
// branch only, sites with different V) takes no part. In a group whose V differ, every site gets `c IN (U)`, U the
// union of the V (nothing when a member is unfiltered), and a copy whose V is not U gets `g = v` / `g IN (V)` above it
// (ANDed into a Filter directly above, e.g. Q04's `year_total > 0`, which stays on its copy). This is exact because g
// is a group key: each group has one value of g, equal to c in every row it came from, so dropping groups after the
// aggregation drops exactly the rows the sites dropped before. Aggregates nested in a rewritten one are left as they
// are in that pass. All expressions are deterministic, so no filter is skipped for that. The copies then print the same
// and are shared as below.
//
// Runs last: the decisions of every other rule are part of the text it compares (a group's copies print the same
// with the filters removed, so their join orders, build sides and join filters are the same already).

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class AggregateSharing final : public Rule {
 public:
  std::string name() const override { return "AggregateSharing"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
