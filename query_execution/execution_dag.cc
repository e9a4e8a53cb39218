#include "query_execution/execution_dag.h"

#include "glog/logging.h"
#include "query_execution/memory_estimate.h"

namespace tessera {

int ExecutionDag::AddOperator(std::unique_ptr<RelationalOperator> op, std::string detail) {
  int index = static_cast<int>(operators_.size());
  op->set_index(index);
  names_.push_back(op->name());
  operators_.push_back(std::move(op));
  details_.push_back(std::move(detail));
  estimates_.emplace_back();
  return index;
}

void ExecutionDag::AddEdge(int producer, int consumer, int consumer_input, bool pipelining) {
  CHECK(producer >= 0 && producer < size() && consumer >= 0 && consumer < size() && producer != consumer);
  edges_.push_back(DagEdge{producer, consumer, consumer_input, pipelining});
}

void ExecutionDag::MakeAllEdgesBlocking() {
  for (DagEdge& edge : edges_) edge.pipelining = false;
  memory_estimate_ = EstimateQueryMemory(*this);  // nothing is streamed any more
}

int64_t ExecutionDag::CurrentMemoryBytes() const {
  return memory_account_ == nullptr ? 0 : static_cast<int64_t>(memory_account_->Usage().used_bytes);
}

int64_t ExecutionDag::PeakMemoryBytes() const {
  return memory_account_ == nullptr ? 0 : static_cast<int64_t>(memory_account_->Usage().peak_used_bytes);
}

}  // namespace tessera
