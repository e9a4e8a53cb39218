#pragma once
// A query's physical plan as the scheduler runs it: relational operators (nodes) and producer -> consumer edges,
// each pipelining (the consumer gets every block as soon as the producer wrote it) or blocking (the consumer
// starts only after the producer finished executing). Built once by the plan builder; then owned by the
// QueryManager.

#include <memory>
#include <vector>

#include "relational_operators/relational_operator.h"

namespace tessera {

struct DagEdge {
  int producer = -1;
  int consumer = -1;
  int consumer_input = 0;  // the consumer's input index this edge feeds
  bool pipelining = true;
};

class ExecutionDag {
 public:
  // Returns the operator's index (also stored in the operator).
  int AddOperator(std::unique_ptr<RelationalOperator> op);
  void AddEdge(int producer, int consumer, int consumer_input, bool pipelining);
  // The operator whose output relation is the query's result.
  void set_result_operator(int index) { result_operator_ = index; }

  int size() const { return static_cast<int>(operators_.size()); }
  RelationalOperator* op(int index) const { return operators_[index].get(); }
  std::unique_ptr<RelationalOperator>& owned(int index) { return operators_[index]; }
  const std::vector<DagEdge>& edges() const { return edges_; }
  int result_operator() const { return result_operator_; }

 private:
  std::vector<std::unique_ptr<RelationalOperator>> operators_;
  std::vector<DagEdge> edges_;
  int result_operator_ = -1;
};

}  // namespace tessera
