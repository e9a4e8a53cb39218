#pragma once
// Implied LIP filters: Bloom filters published along join conditions that only imply an equality with the
// filtering join's probe key. TPC-H Q5 joins supplier with the ASIA nations (J: s_nationkey = n_nationkey) and
// meets customer only at the top join (K: c_nationkey = s_nationkey); customer's 150 K rows, a fifth of which
// have an ASIA nation, all reached the orders join and the lineitem probe's Bloom filter on o_orderkey. J's
// build keys bound every s_nationkey reaching K, so every c_nationkey that passes K is among them too: the
// customer scan can apply J's filter on c_nationkey.
//
// For each inner or semi join K and each of its key pairs `x = y` (plain columns, either way round), the rule
// looks for a join J in y's input of K that y passes unchanged from (through projections, filters, sorts,
// limits, distincts, aggregates' group keys, the left input of any join but a full outer one and either input
// of inner and cross joins), where y is J's probe key of a pair `y = b` (plain columns; J an inner or semi join
// with a hash table, not an exact filter, not null-aware). x is traced into K's other input the same way,
// except that only inner and cross joins are passed on either input (semi, anti and left outer joins on the
// left one) and limits stop it (dropping rows below one would let other rows in; below a group key, a dropped
// row's whole group fails K). Where x comes unchanged from a table scan's column through a join, aggregate,
// distinct or sort (not through filters and projections only: K probes such a scan's rows in the scan loop, so
// a filter there would only repeat that probe), J publishes a Bloom filter over b (Join::lip_filter_id, key pair
// `y = b` only; a filter J already publishes over exactly that pair is shared) and the scan applies it
// (TableScan::lip_filters). A dropped scan row has an x not among J's build keys, so every row derived from it
// fails K.
//
// Only when the filter is estimated to pass at most kMaxPassFraction of the scan's rows (J's distinct build keys
// over the column's distinct values in the scan) and the scan has at least kMinScanRows estimated rows; not
// from a semi join J whose right side is estimated larger than its left (execution would build on the left
// side, which a published filter forbids).
//
// The scan waits for J's hash build. J's build input depends only on its own subtree (the other rules' filters
// come from joins inside it), so the wait closes no cycle as long as no scan given a filter by this rule lies in
// the build input of a join publishing one of this rule's filters; candidates that would break this are skipped.
//
// Runs after LipFilters (it numbers its filters after those and shares theirs).

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class ImpliedLipFilters final : public Rule {
 public:
  static constexpr double kMaxPassFraction = 0.5;
  static constexpr double kMinScanRows = 10000;

  std::string name() const override { return "ImpliedLipFilters"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
