#pragma once
// Left outer joins whose matches a filter above them requires. A Filter directly over a chain of left outer joins
//
//   Filter(... AND (d_1 OR ... OR d_m) AND ...)  over  A LEFT JOIN R_1 ON k = r_1 ... LEFT JOIN R_n ON k = r_n
//
// where each disjunct d_i cannot be TRUE when every column of one right side R_j(i) is NULL (the row found no
// match there: `coalesce(ws_qty, 0) > 0`, `cs_qty IS NOT NULL`) keeps only rows of A that match some R_j(i) on
// its keys. When those joins read the same key columns k of A, A is first semi-joined with the union of the
// right sides' keys:
//
//   A  ->  A SEMI JOIN (r_j(1)(R_j(1)) UNION ALL ... ) ON k
//
// (copies of the right sides, projected to their keys). The semi join then sinks into A (SinkSemiJoin: below
// Projects, below an Aggregate when k are its group keys, and on into A's input). Every row the filter keeps matched some R_j(i), so it passes the semi join, and rows of A keep
// their values; only rows that the filter would drop are dropped earlier. TPC-DS Q78: the store channel's
// (year, item, customer) aggregate of 2.9 M sales rows is joined with the web and the catalog channels' and kept
// only where one of them sold too: 207 of its 493 K groups at SF1.
//
// A join's residual changes nothing (a match still needs equal keys). Fires only where every disjunct of the
// conjunct is such a test of some join, the needed joins' left keys are the same plain columns of A, and their
// right sides are estimated smaller than A together. The right sides are computed twice (their copies for the
// semi join are pruned to the keys, so AggregateSharing does not share them).
//
// Runs after InnerToSemiJoin and before SemiJoinPushDown.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class LeftJoinMatchReduction final : public Rule {
 public:
  std::string name() const override { return "LeftJoinMatchReduction"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
