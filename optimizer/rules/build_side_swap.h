#pragma once
// Chooses the hash table's side of left outer, semi and anti joins (Join::build_left). A join builds on its
// right side, unless its preserved (left) side is estimated at least kBuildPreservedSideRatio times smaller:
// then it builds on the left and decides the left rows from match flags in the hash table (right outer / semi /
// anti hash joins), so the large side streams through the probe. TPC-H Q13: customer LEFT JOIN orders builds on
// customer; Q21: the EXISTS / NOT EXISTS over lineitem build on the few qualifying l1 rows instead of lineitem.
//
// Not for joins without keys, null-aware anti joins (NOT IN), joins that publish a LIP filter (the filter is
// over the right side's keys and a scan below the left side waits for it: building on the left would wait for
// itself), a scalar subquery's join (enforce_single_row: its right side's rows are counted where they are
// built) or exact-filter joins (no hash table).
//
// A join built on its left side also filters its probe rows by a Bloom filter of the build keys
// (Join::filter_probe_by_build_keys) when at most kSwappedProbeMaxPassFraction of the probe side's distinct keys
// are estimated to be among them: a probe row without a key matches nothing, none of these joins outputs
// unmatched probe rows, and a Bloom probe costs a fraction of a hash probe into a table beyond the L2 cache
// (TPC-H Q21: 75 K orders of l1 against the 6 M rows of l2 and l3). Plain column keys only.
//
// Runs last but one (after ImpliedLipFilters, which decides which joins publish, and SetOperationLowering,
// whose joins it decides too); it changes no node's output.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class BuildSideSwap final : public Rule {
 public:
  static constexpr double kBuildPreservedSideRatio = 2.0;
  static constexpr double kSwappedProbeMaxPassFraction = 0.5;

  std::string name() const override { return "BuildSideSwap"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
