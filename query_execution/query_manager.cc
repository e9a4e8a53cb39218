#include "query_execution/query_manager.h"

#include <algorithm>
#include <cmath>

#include "glog/logging.h"
#include "relational_operators/block_input.h"

namespace tessera {

QueryManager::QueryManager(std::unique_ptr<ExecutionDag> dag) : dag_(std::move(dag)) {
  operators_ = std::vector<OperatorRuntime>(dag_->size());
  for (int i = 0; i < dag_->size(); ++i) {
    operators_[i].status.name = dag_->op(i)->name();
    operators_[i].status.estimated_total = dag_->op(i)->EstimatedWorkOrders();
    std::shared_ptr<TemporaryRelation> output = dag_->op(i)->output();
    if (output != nullptr && dag_->op(i)->WritesOutputBlocks()) {
      operators_[i].writes_output = true;
      const OperatorEstimate& estimate = dag_->estimate(i);
      if (estimate.structure == OperatorEstimate::Structure::kAggregationTable ||
          estimate.structure == OperatorEstimate::Structure::kSortBuffer) {
        operators_[i].planned_output_blocks =
            std::max(1.0, std::ceil(static_cast<double>(estimate.output_bytes) / output->block_size_bytes()));
      }
    }
  }
  const auto& edges = dag_->edges();
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    operators_[edges[e].producer].out_edges.push_back(e);
    operators_[edges[e].consumer].in_edges.push_back(e);
  }
  // Kahn's algorithm: producers before consumers (the DAG is acyclic).
  std::vector<int> waiting(operators_.size(), 0);
  for (const DagEdge& edge : edges) ++waiting[edge.consumer];
  for (int i = 0; i < dag_->size(); ++i) {
    if (waiting[i] == 0) producers_first_.push_back(i);
  }
  for (size_t next = 0; next < producers_first_.size(); ++next) {
    for (int e : operators_[producers_first_[next]].out_edges) {
      if (--waiting[edges[e].consumer] == 0) producers_first_.push_back(edges[e].consumer);
    }
  }
  CHECK_EQ(producers_first_.size(), operators_.size()) << "the execution DAG has a cycle";
  consumers_first_.assign(producers_first_.rbegin(), producers_first_.rend());
  for (const DagEdge& edge : edges) {
    if (edge.consumer_input != DagEdge::kOrderingOnly) ++operators_[edge.producer].feeding_out_edges;
  }
  scratch_output_blocks_.resize(operators_.size());
  CHECK_GE(dag_->result_operator(), 0);
  result_ = dag_->op(dag_->result_operator())->output();
  for (int i = 0; i < dag_->size(); ++i) dag_->op(i)->Start();
  ActivateReadyOperators();
}

QueryManager::~QueryManager() {
  for (OperatorRuntime& runtime : operators_) EndScan(runtime);
}

void QueryManager::ActivateReadyOperators() {
  for (int i = 0; i < dag_->size(); ++i) {
    OperatorRuntime& runtime = operators_[i];
    if (runtime.active || runtime.finished) continue;
    bool ready = true;
    for (int e : runtime.in_edges) {
      const DagEdge& edge = dag_->edges()[e];
      if (!edge.pipelining && !operators_[edge.producer].finished) ready = false;
    }
    if (!ready) continue;
    runtime.active = true;
    CollectWorkOrders(i);
  }
}

void QueryManager::CollectWorkOrders(int index) {
  OperatorRuntime& runtime = operators_[index];
  if (cancelled_ || !runtime.active || runtime.done_generating) return;
  std::vector<std::unique_ptr<WorkOrder>> work_orders;
  runtime.done_generating = dag_->op(index)->GetWorkOrders(&work_orders);
  runtime.status.issued += static_cast<int64_t>(work_orders.size());
  BeginScan(index, &work_orders);
  for (auto& work_order : work_orders) {
    if (const uint64_t key = work_order->shared_scan().block_key) {
      ready_scans_[key].push_back({index, work_order->shared_scan().position});
    }
    runtime.ready.push_back(std::move(work_order));
  }
  ready_count_ += static_cast<int64_t>(work_orders.size());
  if (runtime.done_generating && runtime.status.issued == runtime.status.finished) FinishOperator(index);
}

int QueryManager::NextWorkOrderOperator() const {
  if (ready_count_ == 0) return -1;
  for (int index : consumers_first_) {
    if (!operators_[index].ready.empty() && !(limited_ && HeldBack(index))) return index;
  }
  return -1;
}

void QueryManager::SetOperatorLimits(int index, int max_in_flight, int max_consumer_backlog) {
  OperatorRuntime& runtime = operators_[index];
  runtime.max_in_flight = std::max(0, max_in_flight);
  runtime.max_consumer_backlog = std::max(0, max_consumer_backlog);
  limited_ = limited_ || runtime.max_in_flight > 0 || runtime.max_consumer_backlog > 0;
}

bool QueryManager::HeldBack(int index) const {
  const OperatorRuntime& runtime = operators_[index];
  if (runtime.max_in_flight > 0 && runtime.in_flight >= runtime.max_in_flight) return true;
  if (runtime.max_consumer_backlog <= 0) return false;
  for (int e : runtime.out_edges) {
    const DagEdge& edge = dag_->edges()[e];
    if (!edge.pipelining || edge.consumer_input == DagEdge::kOrderingOnly) continue;
    const OperatorRuntime& consumer = operators_[edge.consumer];
    if (!consumer.active || consumer.finished) continue;
    if (static_cast<int64_t>(consumer.ready.size()) + consumer.in_flight >= runtime.max_consumer_backlog) return true;
  }
  return false;
}

void QueryManager::BeginScan(int index, std::vector<std::unique_ptr<WorkOrder>>* work_orders) {
  OperatorRuntime& runtime = operators_[index];
  if (runtime.scan_cursor != nullptr || work_orders->empty()) return;
  ScanCursor* cursor = work_orders->front()->shared_scan().cursor;
  if (cursor == nullptr) return;
  int own_scans = 0;
  for (const OperatorRuntime& other : operators_) own_scans += other.scan_cursor == cursor ? 1 : 0;
  if (cursor->scans() > own_scans) {
    const uint32_t position = cursor->position();
    auto first = std::find_if(work_orders->begin(), work_orders->end(), [&](const auto& work_order) {
      return work_order->shared_scan().cursor == cursor && work_order->shared_scan().position >= position;
    });
    if (first != work_orders->end() && (*first)->shared_scan().cursor == cursor) {
      std::rotate(work_orders->begin(), first, work_orders->end());
    }
  }
  cursor->BeginScan();
  runtime.scan_cursor = cursor;
}

void QueryManager::EndScan(OperatorRuntime& runtime) {
  if (runtime.scan_cursor == nullptr) return;
  runtime.scan_cursor->EndScan();
  runtime.scan_cursor = nullptr;
}

std::unique_ptr<WorkOrder> QueryManager::HandOut(int index, std::unique_ptr<WorkOrder> work_order) {
  OperatorRuntime& runtime = operators_[index];
  --ready_count_;
  ++runtime.in_flight;
  ++in_flight_;
  runtime.status.state = OperatorStatus::State::kRunning;
  const SharedScanTag& tag = work_order->shared_scan();
  if (tag.cursor != nullptr) tag.cursor->Advance(tag.position);
  return work_order;
}

std::unique_ptr<WorkOrder> QueryManager::NextWorkOrder() {
  const int index = NextWorkOrderOperator();
  if (index < 0) return nullptr;
  OperatorRuntime& runtime = operators_[index];
  std::unique_ptr<WorkOrder> work_order = std::move(runtime.ready.front());
  runtime.ready.pop_front();
  if (const uint64_t key = work_order->shared_scan().block_key) ForgetReadyScan(key, index);
  return HandOut(index, std::move(work_order));
}

void QueryManager::ForgetReadyScan(uint64_t block_key, int index) {
  auto it = ready_scans_.find(block_key);
  if (it == ready_scans_.end()) return;
  auto& scans = it->second;
  auto found = std::find_if(scans.begin(), scans.end(), [&](const ReadyScan& scan) { return scan.op == index; });
  if (found != scans.end()) scans.erase(found);
  if (scans.empty()) ready_scans_.erase(it);
}

std::deque<std::unique_ptr<WorkOrder>>::iterator QueryManager::FindReadyScan(int index, uint64_t block_key,
                                                                             uint32_t position) {
  std::deque<std::unique_ptr<WorkOrder>>& ready = operators_[index].ready;
  auto is_block = [&](const auto& work_order) { return work_order->shared_scan().block_key == block_key; };
  // A scan's ready work orders are in block order from where the scan began (BeginScan rotates them to the
  // cursor), and taking some out of the middle keeps that order, so the distance of a block's position from the
  // front one's (modulo 2^32) grows along the queue and a binary search finds the block in a queue of thousands
  // (SF10). A queue in another order falls back to a linear search.
  if (!ready.empty()) {
    const uint32_t front = ready.front()->shared_scan().position;
    auto guess =
        std::lower_bound(ready.begin(), ready.end(), position - front, [&](const auto& work_order, uint32_t distance) {
          return work_order->shared_scan().position - front < distance;
        });
    if (guess != ready.end() && is_block(*guess)) return guess;
  }
  return std::find_if(ready.begin(), ready.end(), is_block);
}

std::unique_ptr<WorkOrder> QueryManager::TakeSharedScanWorkOrder(uint64_t block_key) {
  auto it = ready_scans_.find(block_key);
  if (it == ready_scans_.end()) return nullptr;
  const int index = it->second.back().op;
  const uint32_t position = it->second.back().position;
  if (limited_ && HeldBack(index)) return nullptr;
  it->second.pop_back();
  if (it->second.empty()) ready_scans_.erase(it);
  std::deque<std::unique_ptr<WorkOrder>>& ready = operators_[index].ready;
  auto found = FindReadyScan(index, block_key, position);
  DCHECK(found != ready.end());
  std::unique_ptr<WorkOrder> work_order = std::move(*found);
  ready.erase(found);
  return HandOut(index, std::move(work_order));
}

void QueryManager::OnWorkOrderFinished(const WorkOrder& work_order, const absl::Status& status, int64_t elapsed_ns,
                                       bool shared) {
  const int index = work_order.operator_index();
  OperatorRuntime& runtime = operators_[index];
  --runtime.in_flight;
  --in_flight_;
  ++runtime.status.finished;
  runtime.status.rows_in += work_order.rows_in();
  runtime.status.rows_out += work_order.rows_out();
  runtime.status.busy_ns += elapsed_ns;
  runtime.status.shared += shared ? 1 : 0;
  if (!status.ok()) {
    Cancel(status);
    return;
  }
  if (cancelled_) return;
  CountConsumedBlock(work_order);
  FeedNewBlocks(index, /*producer_finished=*/false);
  CollectWorkOrders(index);
  if (!runtime.finished && runtime.done_generating && runtime.status.issued == runtime.status.finished) {
    FinishOperator(index);
  }
}

void QueryManager::PollOperators() {
  if (cancelled_) return;
  for (int i = 0; i < dag_->size(); ++i) {
    OperatorRuntime& runtime = operators_[i];
    if (!runtime.active || runtime.finished) continue;
    // An exchange whose stream failed on its own thread fails the query now, not when a worker runs the work order
    // that reports its outcome (RelationalOperator::ExternalFailure).
    if (absl::Status failure = dag_->op(i)->ExternalFailure(); !failure.ok()) {
      Cancel(std::move(failure));
      return;
    }
    if (runtime.done_generating) continue;
    // Blocks the operator appended outside its work orders (a gather's received blocks) go on now.
    const std::shared_ptr<TemporaryRelation> output = dag_->op(i)->output();
    if (output != nullptr && output->block_count() > runtime.fed_blocks_pipelined) FeedNewBlocks(i, false);
    CollectWorkOrders(i);
  }
}

void QueryManager::FeedNewBlocks(int producer, bool producer_finished) {
  OperatorRuntime& runtime = operators_[producer];
  std::shared_ptr<TemporaryRelation> output = dag_->op(producer)->output();
  if (output == nullptr) return;
  const uint32_t available = output->block_count();
  for (int e : runtime.out_edges) {
    const DagEdge& edge = dag_->edges()[e];
    if (!edge.pipelining && !producer_finished) continue;
    if (edge.consumer_input == DagEdge::kOrderingOnly) continue;
    // A consumer stopped early (StopUpstreamOf) may finish, and be released, before its producers.
    if (operators_[edge.consumer].finished) continue;
    const uint32_t first = edge.pipelining ? runtime.fed_blocks_pipelined : 0;
    RelationalOperator* consumer = dag_->op(edge.consumer);
    for (uint32_t b = first; b < available; ++b) consumer->FeedInputBlock(edge.consumer_input, b);
    if (available > first) operators_[edge.consumer].input_blocks_fed += available - first;
    if (producer_finished) consumer->DoneFeedingInput(edge.consumer_input);
  }
  runtime.fed_blocks_pipelined = available;
  for (int e : runtime.out_edges) {
    const int consumer = dag_->edges()[e].consumer;
    OperatorRuntime& fed = operators_[consumer];
    if (!fed.finished && !fed.upstream_stopped && dag_->op(consumer)->InputSatisfied()) StopUpstreamOf(consumer);
  }
  for (int e : runtime.out_edges) {
    const DagEdge& edge = dag_->edges()[e];
    if (edge.pipelining || producer_finished) CollectWorkOrders(edge.consumer);
  }
}

void QueryManager::StopUpstreamOf(int satisfied) {
  operators_[satisfied].upstream_stopped = true;
  // The operators whose output flows only into `satisfied`: consumers come before their producers in
  // consumers_first_, so one pass finds them.
  std::vector<bool> only_feeds(operators_.size(), false);
  only_feeds[satisfied] = true;
  for (int index : consumers_first_) {
    if (index == satisfied || index == dag_->result_operator() || operators_[index].out_edges.empty()) continue;
    bool all = true;
    for (int e : operators_[index].out_edges) all = all && only_feeds[dag_->edges()[e].consumer];
    only_feeds[index] = all;
  }
  for (int index : producers_first_) {
    OperatorRuntime& runtime = operators_[index];
    if (index == satisfied || !only_feeds[index] || runtime.finished || runtime.stopped) continue;
    runtime.stopped = true;
    // Its ready work orders are dropped as if never issued; it finishes once those in flight have.
    const int64_t dropped = static_cast<int64_t>(runtime.ready.size());
    for (const auto& work_order : runtime.ready) {
      if (const uint64_t key = work_order->shared_scan().block_key) ForgetReadyScan(key, index);
    }
    runtime.ready.clear();
    ready_count_ -= dropped;
    runtime.status.issued -= dropped;
    runtime.done_generating = true;
    runtime.active = true;  // never activated (and asked for work orders) later
  }
  for (int index : producers_first_) {
    OperatorRuntime& runtime = operators_[index];
    if (runtime.stopped && !runtime.finished && runtime.in_flight == 0) FinishOperator(index);
  }
}

void QueryManager::FinishOperator(int index) {
  OperatorRuntime& runtime = operators_[index];
  if (runtime.finished) return;
  runtime.finished = true;
  EndScan(runtime);
  runtime.status.state = OperatorStatus::State::kDone;
  ++finished_operators_;
  runtime.status.runtime_detail = dag_->op(index)->RuntimeDetail();
  dag_->op(index)->OnAllWorkOrdersFinished();
  FeedNewBlocks(index, /*producer_finished=*/true);
  ActivateReadyOperators();
  for (int e : runtime.in_edges) ReleaseIfUnneeded(dag_->edges()[e].producer);
  ReleaseIfUnneeded(index);
}

void QueryManager::ReleaseIfUnneeded(int index) {
  if (index == dag_->result_operator() || dag_->owned(index) == nullptr || !operators_[index].finished) return;
  for (int e : operators_[index].out_edges) {
    if (!operators_[dag_->edges()[e].consumer].finished) return;
  }
  dag_->owned(index).reset();  // drops its output relation (and its references to its inputs)
}

void QueryManager::CountConsumedBlock(const WorkOrder& work_order) {
  if (work_order.consumed_input() < 0) return;
  const uint32_t block = work_order.consumed_block();
  for (int e : operators_[work_order.operator_index()].in_edges) {
    const DagEdge& edge = dag_->edges()[e];
    if (edge.consumer_input != work_order.consumed_input()) continue;
    OperatorRuntime& producer = operators_[edge.producer];
    if (producer.block_consumptions.size() <= block) producer.block_consumptions.resize(block + 1, 0);
    if (++producer.block_consumptions[block] < producer.feeding_out_edges) continue;
    RelationalOperator* producer_op = dag_->op(edge.producer);
    if (producer_op == nullptr || edge.producer == dag_->result_operator()) continue;
    if (std::shared_ptr<TemporaryRelation> output = producer_op->output()) output->ReleaseBlock(block);
  }
}

void QueryManager::Cancel(absl::Status reason) {
  if (status_.ok()) status_ = std::move(reason);
  cancelled_ = true;
  for (OperatorRuntime& runtime : operators_) {
    runtime.ready.clear();
    EndScan(runtime);
  }
  ready_scans_.clear();
  ready_count_ = 0;
}

std::vector<OperatorStatus> QueryManager::Progress() const {
  std::vector<OperatorStatus> progress;
  for (const OperatorRuntime& runtime : operators_) progress.push_back(runtime.status);
  return progress;
}

int64_t QueryManager::EstimatedRemainingWorkOrders(std::vector<int64_t>* by_operator) const {
  if (by_operator != nullptr) by_operator->assign(operators_.size(), 0);
  if (cancelled_) return 0;
  const auto& edges = dag_->edges();
  double total_remaining = 0;
  for (int i : producers_first_) {
    const OperatorRuntime& runtime = operators_[i];
    if (runtime.finished) {
      scratch_output_blocks_[i] = 0;  // everything it wrote has been fed already
      continue;
    }
    const RelationalOperator* op = dag_->op(i);
    double expected_total =
        std::max<double>(static_cast<double>(runtime.status.issued), static_cast<double>(op->EstimatedWorkOrders()));
    bool fed = false;
    double expected_input = static_cast<double>(runtime.input_blocks_fed);
    for (int e : runtime.in_edges) {
      const DagEdge& edge = edges[e];
      if (edge.consumer_input == DagEdge::kOrderingOnly) continue;
      fed = true;
      // Blocks the producer still writes (pipelining edges were fed what it wrote so far; a blocking edge
      // gets everything once the producer finishes).
      const OperatorRuntime& producer = operators_[edge.producer];
      const double written = edge.pipelining ? static_cast<double>(producer.fed_blocks_pipelined) : 0.0;
      expected_input += std::max(0.0, scratch_output_blocks_[edge.producer] - written);
    }
    if (fed) expected_total = std::max(expected_total, expected_input);
    const double finished = static_cast<double>(runtime.status.finished);
    const double remaining = std::max(1.0, expected_total - finished);
    total_remaining += remaining;
    if (by_operator != nullptr) (*by_operator)[i] = std::llround(remaining);
    // Expected output blocks over the operator's life: what it wrote so far, extrapolated over its remaining
    // work orders at the observed blocks per finished work order; the plan's estimate before any finished.
    if (!runtime.writes_output) {
      scratch_output_blocks_[i] = 0;
    } else if (finished == 0) {
      scratch_output_blocks_[i] = runtime.planned_output_blocks > 0 ? runtime.planned_output_blocks : remaining;
    } else {
      const double written = static_cast<double>(runtime.fed_blocks_pipelined);
      scratch_output_blocks_[i] = written + remaining * written / finished;
    }
  }
  return static_cast<int64_t>(std::llround(total_remaining));
}

double QueryManager::FractionDone() const {
  double total = 0;
  for (const OperatorRuntime& runtime : operators_) {
    if (runtime.finished) {
      total += 1;
    } else if (runtime.status.estimated_total > 0) {
      total += std::min(1.0, static_cast<double>(runtime.status.finished) / runtime.status.estimated_total);
    } else if (runtime.status.issued > 0) {
      total += 0.5 * runtime.status.finished / runtime.status.issued;
    }
  }
  return dag_->size() == 0 ? 1.0 : total / dag_->size();
}

}  // namespace tessera
