#pragma once
// The aggregate functions, one enum for the whole engine: the binder's logical plan (optimizer::AggregateCall) and
// the aggregation operator's spec (relational_operators/aggregation_table.h) both use it.
//
// kQuantileCont / kQuantileDisc / kStringAgg keep every non-NULL value of a group and compute the result when the
// group is written; kApproxCountDistinct keeps a HyperLogLog sketch (catalog's DistinctSketch: 2^11 one-byte
// registers, 2 KiB per group, standard error 1.04 / sqrt(2048) = 2.3%).

namespace tessera {

enum class AggregateKind {
  kCountStar,
  kCount,
  kSum,
  kAvg,
  kMin,
  kMax,
  kQuantileCont,
  kQuantileDisc,
  kStringAgg,
  kApproxCountDistinct,
};

}  // namespace tessera
