#include "scheduler/worker_load_table.h"

#include <glog/logging.h>

#include <algorithm>

namespace tessera {

WorkerLoadTable::WorkerLoadTable(int max_workers)
    : pending_(max_workers, 0), queued_ns_(max_workers, 0), known_(max_workers, false) {}

void WorkerLoadTable::AddWorker(int worker_id, int node) {
  CHECK(!known_[worker_id]) << "worker " << worker_id << " added twice";
  known_[worker_id] = true;
  ++num_known_;
  pending_[worker_id] = 0;
  queued_ns_[worker_id] = 0;
  ids_.push_back(worker_id);
  nodes_.push_back(node);
}

void WorkerLoadTable::DisableWorker(int worker_id) {
  auto it = std::find(ids_.begin(), ids_.end(), worker_id);
  if (it == ids_.end()) return;
  nodes_.erase(nodes_.begin() + (it - ids_.begin()));
  ids_.erase(it);
}

void WorkerLoadTable::RemoveWorker(int worker_id) {
  DisableWorker(worker_id);
  if (!known_[worker_id]) return;
  known_[worker_id] = false;
  --num_known_;
  DCHECK_EQ(pending_[worker_id], 0);
}

bool WorkerLoadTable::dispatchable(int worker_id) const {
  return std::find(ids_.begin(), ids_.end(), worker_id) != ids_.end();
}

int WorkerLoadTable::Choose(int preferred_node, int target) const {
  int best = -1;
  int best_pending = target;
  int best_local = -1;
  int best_local_pending = target;
  for (size_t i = 0; i < ids_.size(); ++i) {
    const int pending = pending_[ids_[i]];
    if (pending < best_pending) {
      best = ids_[i];
      best_pending = pending;
    }
    if (nodes_[i] == preferred_node && pending < best_local_pending) {
      best_local = ids_[i];
      best_local_pending = pending;
    }
  }
  return best_local >= 0 ? best_local : best;
}

int WorkerLoadTable::Choose(int preferred_node, const PendingLimit& limit) const {
  int best = -1;
  int best_local = -1;
  for (size_t i = 0; i < ids_.size(); ++i) {
    const int id = ids_[i];
    const int pending = pending_[id];
    if (pending >= limit.max_pending || (pending >= limit.min_pending && queued_ns_[id] >= limit.queued_ns)) continue;
    if (best < 0 || queued_ns_[id] < queued_ns_[best]) best = id;
    if (nodes_[i] == preferred_node && (best_local < 0 || queued_ns_[id] < queued_ns_[best_local])) best_local = id;
  }
  return best_local >= 0 ? best_local : best;
}

}  // namespace tessera
