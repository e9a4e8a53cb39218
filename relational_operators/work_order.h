#pragma once
// The unit of scheduling: a self-contained piece of one operator's work, typically one input block. A work order
// runs to completion on one worker (no preemption) and touches only its input, the QueryContext's thread-safe
// structures, and its own output blocks.

#include <cstdint>

#include "absl/status/status.h"

namespace tessera {

// What a worker tells a work order about where it runs.
struct WorkOrderContext {
  int worker_index = 0;  // 0 .. worker_count-1, stable for the worker's life (for per-worker partial state)
  int worker_count = 1;
};

class WorkOrder {
 public:
  WorkOrder(int operator_index, int preferred_node) : operator_index_(operator_index), preferred_node_(preferred_node) {}
  virtual ~WorkOrder() = default;

  // Does the work. Errors (division by zero, memory exhausted, ...) fail the query; they never crash or throw.
  virtual absl::Status Execute(const WorkOrderContext& context) = 0;

  int operator_index() const { return operator_index_; }
  // NUMA node of the input block, -1 when it does not matter.
  int preferred_node() const { return preferred_node_; }
  int64_t rows_in() const { return rows_in_; }
  int64_t rows_out() const { return rows_out_; }

 protected:
  int64_t rows_in_ = 0;
  int64_t rows_out_ = 0;

 private:
  const int operator_index_;
  const int preferred_node_;
};

}  // namespace tessera
