#pragma once
// The unit of scheduling: a self-contained piece of one operator's work, typically one input block. A work order
// runs to completion on one worker (no preemption) and touches only its input, the thread-safe structures its
// operator shares between work orders (a join's hash table, an aggregation's per-worker tables, runtime filters),
// and its own output blocks.

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"

namespace tessera {

class ScanCursor;

// The base-table block a work order reads as its main input, for shared scans (scheduler/README.md, Shared
// scans): the scheduler runs work orders of several queries with the same `block_key` back to back on one worker,
// so the block is read from memory once and from the cache by the others. `cursor` is the table's scan position
// (block_input.h), advanced when the work order is handed out; null with block_key 0 for other work orders.
struct SharedScanTag {
  uint64_t block_key = 0;  // BlockId::Packed() + 1 of the block; 0: not a base-table block
  ScanCursor* cursor = nullptr;
  uint32_t position = 0;  // the block's index in its table
};

// What a worker tells a work order about where it runs.
struct WorkOrderContext {
  int worker_index = 0;  // 0 .. worker_count-1, stable for the worker's life (for per-worker partial state)
  int worker_count = 1;
  // The query's cancel flag (set by the scheduler when the query is cancelled or failed), or null. A work order
  // whose loops can run long (nested-loop join probes, COPY chunks) checks it every few thousand rows and then
  // returns Cancelled, so that cancellation takes effect within about 100 ms.
  const std::atomic<bool>* cancelled = nullptr;

  bool Cancelled() const { return cancelled != nullptr && cancelled->load(std::memory_order_relaxed); }
};

class WorkOrder {
 public:
  WorkOrder(int operator_index, int preferred_node)
      : operator_index_(operator_index), preferred_node_(preferred_node) {}
  virtual ~WorkOrder() = default;

  // Does the work. Errors (division by zero, memory exhausted, ...) fail the query; they never crash or throw.
  virtual absl::Status Execute(const WorkOrderContext& context) = 0;

  int operator_index() const { return operator_index_; }
  // NUMA node of the input block, -1 when it does not matter.
  int preferred_node() const { return preferred_node_; }
  int64_t rows_in() const { return rows_in_; }
  int64_t rows_out() const { return rows_out_; }

  // The upstream temporary block this work order reads and is done with when it finishes: block `consumed_block()`
  // of the operator's input `consumed_input()` (-1: none declared). Once every consumer of that block has finished
  // a work order declaring it, the QueryManager frees the block (TemporaryRelation::ReleaseBlock), so a work order
  // that declares a block must keep no pointer into it past Execute.
  int consumed_input() const { return consumed_input_; }
  uint32_t consumed_block() const { return consumed_block_; }

  const SharedScanTag& shared_scan() const { return shared_scan_; }
  void set_shared_scan(const SharedScanTag& tag) { shared_scan_ = tag; }

 protected:
  void DeclareConsumedBlock(int input, uint32_t block) {
    consumed_input_ = input;
    consumed_block_ = block;
  }

  int64_t rows_in_ = 0;
  int64_t rows_out_ = 0;

 private:
  const int operator_index_;
  const int preferred_node_;
  int consumed_input_ = -1;
  uint32_t consumed_block_ = 0;
  SharedScanTag shared_scan_;
};

}  // namespace tessera
