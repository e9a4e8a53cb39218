#pragma once
// Moves filter predicates as close to the data as possible:
//   - through Project (by substitution), Sort, Distinct, set operations (into both sides), and Aggregate (for
//     predicates on GROUP BY keys only);
//   - into inner joins: a conjunct over one side goes into that side, an equality between an expression of
//     each side becomes a key pair, anything else the residual; a cross join that gets a condition becomes
//     inner;
//   - into the left side of left outer, semi and anti joins (and join conditions over the right side only into
//     the right side); a left outer join below a predicate that rejects NULLs from its right side becomes
//     inner, also when that predicate is a condition or key of an inner join above it (TPC-DS Q93);
//   - into TableScan::filter;
//   - the single-row join of an uncorrelated scalar subquery compared by equality moves down to the input its
//     key reads, through inner joins and plain-column projections (JoinOrdering does not move it; TPC-DS Q06).
// Transitive predicates: a predicate pushed into a join that reads one column of one side and fails on NULL
// (`ss_sold_year = 2000`, `x BETWEEN 2 AND 4`, `x IN (...)`; not `IS NULL`) is also applied to the other side's
// column when a key pair equates the two (plain columns of one type): into the right side of inner, left outer,
// semi and anti joins, into the left side of inner and semi joins; never into NOT IN's null-aware join (a NULL
// there matters to every row). Only predicates that come from above the join are carried (a subquery's semi
// join sits above its block's WHERE). Tests: `tests/sql/optimizer/transitive_predicates.test`.
// Through a Window: only a filter that reads PARTITION BY columns alone moves below a Window (it keeps or drops
// whole partitions); any other stays above, since below it would change the rows the functions see. No other
// rule moves anything through a Window.
// Disjunctions are normalized first: conjuncts common to every branch of an OR are factored out
// ((A AND B) OR (A AND C) = A AND (B OR C)), which turns TPC-H Q19's OR into a join key. An OR over both
// sides of an inner join whose every branch constrains one side is also pushed partially into that side as
// the OR of those constraints, while the full predicate stays on the join (Quickstep's partial push-down,
// D§2.5.1; TPC-H Q7, Q19).

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class PredicatePushDown final : public Rule {
 public:
  std::string name() const override { return "PredicatePushDown"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
