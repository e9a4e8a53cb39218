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

// One producer work order's use of a sink. Not thread-safe: one per work order.
class BatchSinkWriter {
 public:
  virtual ~BatchSinkWriter() = default;
  // Consumes rows 0 .. batch.size-1 of `batch`, whose columns are the sink's input columns in order.
  virtual absl::Status Consume(const Batch& batch) = 0;
  // Ends the work order's use (e.g. charges what the consumer's state grew by). Called once, also after an error.
  virtual absl::Status Finish() = 0;
};

class BatchSink {
 public:
  virtual ~BatchSink() = default;
  // A writer for a work order on worker `worker_index` (WorkOrderContext). Thread-safe; work orders of one worker
  // run one at a time, so per-worker state needs no locks.
  virtual absl::StatusOr<std::unique_ptr<BatchSinkWriter>> OpenWriter(int worker_index) = 0;
};

}  // namespace tessera
