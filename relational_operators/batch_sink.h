#pragma once
// A consumer fused into its producer's work orders. Instead of writing its output rows into temporary blocks that
// the consumer's own work orders read back (a write, a block seal and a scan per block), a producer that feeds a
// sink hands each output vector to it inside the producer's work order. The plan builder fuses them
// (query_execution/plan_builder.cc); today a hash aggregation fed by an inner-join probe chain.
//
// The consumer stays an operator of the DAG, connected to the producer as before: it receives no blocks, and its
// input is done when the producer's last work order has finished, so that what follows (an aggregation's finalize)
// waits for every vector.

#include <memory>

#include "absl/status/status.h"
#include "expressions/batch.h"

namespace tessera {

// A worker's way into a sink, used by one producer work order at a time (the worker's current one). Not
// thread-safe.
class BatchSinkWriter {
 public:
  virtual ~BatchSinkWriter() = default;
  // Consumes rows 0 .. batch.size-1 of `batch`, whose columns are the sink's input columns in order.
  virtual absl::Status Consume(const Batch& batch) = 0;
  // Ends a work order's use (e.g. charges what the consumer's state grew by). Called once per work order that
  // opened the writer, also after an error.
  virtual absl::Status Finish() = 0;
};

class BatchSink {
 public:
  virtual ~BatchSink() = default;
  // The writer of worker `worker_index` (WorkOrderContext), owned by the sink and reused by that worker's work
  // orders (no set-up per work order); valid until the consumer's work orders have all finished. Thread-safe; work
  // orders of one worker run one at a time, so per-worker state needs no locks.
  virtual BatchSinkWriter* OpenWriter(int worker_index) = 0;
};

}  // namespace tessera
