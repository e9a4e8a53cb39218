#pragma once
// A query's physical plan as the scheduler runs it: relational operators (nodes) and producer -> consumer edges,
// each pipelining (the consumer gets every block as soon as the producer wrote it) or blocking (the consumer
// starts only after the producer finished executing). Built once by the plan builder; then owned by the
// QueryManager.
//
// The plan builder also attaches, per operator, a short description for EXPLAIN and what it expects the operator to
// hold in memory (from the optimizer's cardinality estimates), and for the whole query the memory estimate of
// query_execution/memory_estimate.h, which the scheduler's load controller can read before admitting the query.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "relational_operators/relational_operator.h"
#include "storage/buffer_pool.h"

namespace tessera {

struct DagEdge {
  // consumer_input of a blocking edge that only orders the two operators (the consumer starts after the
  // producer finished, e.g. a scan applying a filter the producer builds) and feeds the consumer nothing.
  static constexpr int kOrderingOnly = -1;

  int producer = -1;
  int consumer = -1;
  int consumer_input = 0;  // the consumer's input index this edge feeds
  bool pipelining = true;
};

// What the plan builder expects of one operator, from the optimizer's cardinality estimates.
struct OperatorEstimate {
  // The memory the operator holds until its last consumer has finished: its own structure, if any, plus the
  // relation it writes.
  enum class Structure { kNone, kHashTable, kAggregationTable, kSortBuffer };
  Structure structure = Structure::kNone;
  double output_rows = 0;
  int64_t structure_bytes = 0;
  int64_t output_bytes = 0;
  // The operator keeps its producers' relations alive as long as itself (a hash table references its build rows).
  bool retains_inputs = false;

  // Saturates like EstimatedBytes (memory_estimate.h) rather than overflowing.
  int64_t bytes() const {
    return structure_bytes > kMaxEstimateBytes - output_bytes ? kMaxEstimateBytes : structure_bytes + output_bytes;
  }
  static constexpr int64_t kMaxEstimateBytes = 9'000'000'000'000'000'000;
};

// The memory a query needs, in bytes (model in memory_estimate.h). min <= max.
struct QueryMemoryEstimate {
  int64_t min_bytes = 0;  // the largest set of structures that must be resident together (one pipeline's)
  int64_t max_bytes = 0;  // every structure and intermediate result at once
};

class ExecutionDag {
 public:
  // Returns the operator's index (also stored in the operator). `detail` is a few words for EXPLAIN (the table
  // it scans, the join type, ...).
  int AddOperator(std::unique_ptr<RelationalOperator> op, std::string detail = "");
  void AddEdge(int producer, int consumer, int consumer_input, bool pipelining);
  // The non-pipelined strategy: every consumer waits until its producers have finished. Re-estimates the query's
  // memory (no output is streamed any more).
  void MakeAllEdgesBlocking();
  // The operator whose output relation is the query's result.
  void set_result_operator(int index) { result_operator_ = index; }

  int size() const { return static_cast<int>(operators_.size()); }
  RelationalOperator* op(int index) const { return operators_[index].get(); }
  std::unique_ptr<RelationalOperator>& owned(int index) { return operators_[index]; }
  const std::vector<DagEdge>& edges() const { return edges_; }
  int result_operator() const { return result_operator_; }

  // The operator's name, kept after the QueryManager released the operator itself.
  const std::string& name(int index) const { return names_[index]; }
  const std::string& detail(int index) const { return details_[index]; }
  void set_detail(int index, std::string detail) { details_[index] = std::move(detail); }
  void set_estimate(int index, OperatorEstimate estimate) { estimates_[index] = estimate; }
  const OperatorEstimate& estimate(int index) const { return estimates_[index]; }
  void set_memory_estimate(QueryMemoryEstimate estimate) { memory_estimate_ = estimate; }
  const QueryMemoryEstimate& memory_estimate() const { return memory_estimate_; }

  // The buffer-pool account every operator of this DAG allocates through (BufferPool::NewAccount); the DAG owns
  // it so that it outlives the operators and their results. Null for DAGs built without one (tests).
  void set_memory_account(std::unique_ptr<BufferPool> account) { memory_account_ = std::move(account); }
  BufferPool* memory_account() const { return memory_account_.get(); }
  // Bytes the query's operators hold now (temporary blocks, hash and aggregation tables, sort buffers, filters);
  // 0 without an account. Thread-safe.
  int64_t CurrentMemoryBytes() const;
  // The most the query's operators have held at once so far (EXPLAIN ANALYZE prints it next to the estimate); 0
  // without an account. Thread-safe.
  int64_t PeakMemoryBytes() const;

 private:
  std::unique_ptr<BufferPool> memory_account_;  // first: destroyed after everything allocated through it
  std::vector<std::unique_ptr<RelationalOperator>> operators_;
  std::vector<std::string> names_;
  std::vector<std::string> details_;
  std::vector<OperatorEstimate> estimates_;
  QueryMemoryEstimate memory_estimate_;
  std::vector<DagEdge> edges_;
  int result_operator_ = -1;
};

}  // namespace tessera
