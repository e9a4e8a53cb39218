#pragma once
// LIP filters (Quickstep D§2.5.3, lookahead information passing). When several joins probe with rows that
// come from one table scan (a star join: SSB's lineorder against date, part, supplier, customer), each of
// those hash joins publishes a Bloom filter over its build keys (Join::lip_filter_id) and the scan applies all
// of them (TableScan::lip_filters) before the first hash probe, so a row that some join would drop later is
// dropped at once. Execution orders the filters adaptively by their observed pass rates.
//
// A join publishes a filter when it is an inner or semi join with equality keys (no exact filter: that one is
// applied at the scan anyway), some of its probe keys are columns that pass unchanged from the scan
// (through the left inputs of joins, filters, sorts and column projections, not limits; the filter covers those
// key pairs, Join::lip_filter_key_pairs, taking the scan that most probe keys come from), and at least one hash
// join lies between it and the scan: the scan's direct prober runs its hash probe right after the scan's
// filters in the same loop, so a Bloom filter of its own keys would only repeat that probe (measured: it made
// SSB Q2.3, whose first join keeps one part brand, 1.5x slower). The exception is an inner direct prober whose
// build side is large (at least kDirectProberMinBuildRows estimated rows): its hash table (about 24 bytes a
// row) lies beyond the L2 cache and a probe costs two cache misses, while its Bloom filter (10 bits a key) is
// one load from L2; such a join publishes a filter even when no other join probes the scan (TPC-H Q9's partsupp
// scan probing 320 K lineitem rows: 800 K probes, 5% of which match). A second exception is the scan's only
// join (no other join, exact filters included, probes its rows) when it is an inner direct prober estimated to
// keep at most kOnlyJoinMaxPassFraction of its probe rows: a Bloom probe is a few nanoseconds, a hash probe
// (hash, bucket, entries, gather) several times that, and nine in ten rows skip it (TPC-H Q17's outer
// lineitem scan against the 204 parts with their average quantity: probe busy 180 -> 50 ms). In star joins
// the other joins' filters already thin the rows that reach the direct prober, so it stays without one there
// (SSB Q2.3). A third: an inner direct prober on two or more keys whose build keys are estimated to hold those of
// at most kOnlyJoinMaxPassFraction of its probe rows (CardinalityEstimator::KeyMatchFraction: the Bloom filter
// tests the keys, not the residual) publishes whatever other joins probe the scan. Such a join is never a
// direct look-up (that needs one integer key): each probe hashes and compares every key in buckets that lie
// beyond the caches, while the other joins' filters may drop nothing (TPC-DS Q72's inventory scan, 11.7 M rows,
// whose other join is to its 5 warehouses: probe busy 248 -> 144 ms; Q50 and Q64's returns joins on ticket or
// order number and item). Apart from these exceptions, filters are placed only on scans that at least kMinJoinsPerScan
// joins probe with (counting exact-filter joins). A fourth exception: a join that is no direct prober of the scan
// (a hash join lies between, or a UNION [ALL]: the union writes every row it reads to its own blocks before the
// join probes them) publishes when it is estimated to keep at most kIndirectMaxPassFraction of its probe rows,
// whatever other joins probe the scan: after the anti-join idiom `store_sales LEFT JOIN store_returns ... WHERE
// sr_ticket_number IS NULL`, one year of date_dim (TPC-DS Q78) lets only that year's sales probe the left join's
// hash table. Probe keys are traced into every branch of a union that passes them unchanged, and the one filter
// is applied by every branch's scan (TPC-DS Q05's sales UNION ALL returns). Dropping a scan row whose key is not
// among the build keys is safe whatever lies between: every row derived from it carries the key and fails the
// join.
//
// Execution builds a publishing join's hash table on its right side whatever the sizes (the filter is over the
// build keys, and building on the left side would make that side wait for its own filter).
//
// Runs after ExactFilterSemiJoin.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class LipFilters final : public Rule {
 public:
  static constexpr int kMinJoinsPerScan = 2;
  static constexpr double kDirectProberMinBuildRows = 100000;
  static constexpr double kOnlyJoinMaxPassFraction = 0.1;
  static constexpr double kIndirectMaxPassFraction = 0.5;

  std::string name() const override { return "LipFilters"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
