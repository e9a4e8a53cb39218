#pragma once
// The ordered list of rewrite rules that turns a bound plan into the plan execution uses:
//   1. PredicatePushDown           filters into joins (equi-keys), join inputs and scans; common conjuncts of ORs
//                                  factored out; partial push-down of disjunctions (Quickstep D§2.5.1, TPC-H Q19/Q7)
//   2. ConstantFolding             folds what the rewrites made constant; drops TRUE conjuncts and empty Filters
//   3. JoinOrdering                greedy join order by estimated cardinality; smaller input on the build (right) side
//   4. InnerToSemiJoin             under a semi / anti join's build side, an inner join read for one input only is
//                                  a semi join (no repeats: TPC-DS Q95)
//   5. LeftJoinMatchReduction      a filter needing a match in one of some left joins semi-joins their left input
//                                  with the union of their keys first (TPC-DS Q78)
//   6. SemiJoinPushDown            selective semi/anti joins move down to the join input that holds their keys
//   7. AggregateSemiJoinReduction  a grouped aggregate joined on its key first keeps only the keys a filtered scan
//                                  on the other side can match (decorrelated subqueries: Q2, Q17, Q20)
//   8. DistinctAggregateSplit      DISTINCT aggregates of one argument as two plain aggregations
//   9. EagerAggregation            one join side aggregated by its join keys before the join (TPC-H Q13)
//  10. ColumnPruning               scans read and joins carry only the columns used above them
//  11. WindowTopN                  a filter rank() / row_number() <= N over a window keeps N rows per partition
//  12. ExactFilterSemiJoin         joins whose build side only filters, on a dense unique key, probe a bit vector
//  13. LipFilters                  Bloom filters from every build side applied in the probe-side scan (D§2.5.3)
//  14. ImpliedLipFilters           Bloom filters along equalities that join conditions only imply
//  15. SetOperationLowering        INTERSECT / EXCEPT as an aggregation over UNION ALL
//  16. BuildSideSwap               left outer / semi / anti joins build on their smaller preserved side
//  17. AggregateSharing            aggregates that compute the same rows are computed once
// Thread-safe (rules are stateless).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "optimizer/optimizer_options.h"
#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

// The rules in the order they run.
const std::vector<std::unique_ptr<Rule>>& RuleList();

// Runs every rule of RuleList() in order, except those `options` disables. With a `report`, appends one
// RuleRun per rule (elapsed time of each rule that ran). With `options.validate_plans`, the plan is validated
// before the first rule and after each one: Internal "the plan is invalid after rule NAME: ..." (or "as bound")
// when a check fails.
absl::StatusOr<LogicalOperatorPtr> RunRules(LogicalOperatorPtr plan, const OptimizerOptions& options = {},
                                            OptimizerReport* report = nullptr);

}  // namespace tessera::optimizer
