#pragma once
// The Foreman's view of its workers: how many work orders each holds (dispatched, not yet reported finished),
// their predicted time, its NUMA node, and whether it may receive more. Chooses the worker for the next work order.
//
// Choice rule: the least-loaded dispatchable worker on the work order's preferred node if one has room;
// otherwise the least-loaded dispatchable worker anywhere with room (a remote worker is better than an idle one,
// like the submission-time stealing of the IF-SRPT thesis). Ties go to the lowest position in the table, so equal
// work spreads evenly. Room and load are either counts (Choose(node, target): fewer than `target` work orders,
// load = the count) or predicted time (Choose(node, PendingLimit): see PendingLimit, load = the predicted time).
//
// Threading: not thread-safe; Foreman thread only.

#include <vector>

namespace tessera {

// Room by predicted time: a worker takes another work order while it holds fewer than `max_pending` and either
// fewer than `min_pending` or less than `queued_ns` of predicted work. What is queued on a worker is what a query
// that becomes the policy's choice waits for, so a bound in time (rather than a count from a mean over every
// query) keeps that wait short when one query's work orders are long.
struct PendingLimit {
  int min_pending = 1;
  int max_pending = 64;
  double queued_ns = 200'000;
};

class WorkerLoadTable {
 public:
  explicit WorkerLoadTable(int max_workers);

  void AddWorker(int worker_id, int node);
  // Stops choosing the worker; its pending count is still tracked until RemoveWorker.
  void DisableWorker(int worker_id);
  void RemoveWorker(int worker_id);

  // `predicted_ns`: the work order's predicted time (the same value at dispatch and at its finish).
  void OnDispatched(int worker_id, double predicted_ns = 0) {
    ++pending_[worker_id];
    queued_ns_[worker_id] += predicted_ns;
  }
  void OnFinished(int worker_id, double predicted_ns = 0) {
    queued_ns_[worker_id] = --pending_[worker_id] == 0 ? 0 : queued_ns_[worker_id] - predicted_ns;
  }

  // See the class comment; `preferred_node` < 0 means any. Returns -1 if no dispatchable worker has room.
  int Choose(int preferred_node, int target) const;
  int Choose(int preferred_node, const PendingLimit& limit) const;

  int pending(int worker_id) const { return pending_[worker_id]; }
  double queued_ns(int worker_id) const { return queued_ns_[worker_id]; }
  bool known(int worker_id) const { return known_[worker_id]; }
  bool dispatchable(int worker_id) const;
  // Dispatchable worker ids in table order.
  const std::vector<int>& dispatchable_ids() const { return ids_; }
  int num_dispatchable() const { return static_cast<int>(ids_.size()); }
  // Workers known but disabled (being removed).
  int num_disabled() const { return num_known_ - num_dispatchable(); }

 private:
  std::vector<int> ids_;           // dispatchable workers
  std::vector<int> nodes_;         // parallel to ids_
  std::vector<int> pending_;       // by worker id
  std::vector<double> queued_ns_;  // by worker id: Σ predicted time of its pending work orders
  std::vector<bool> known_;        // by worker id
  int num_known_ = 0;
};

}  // namespace tessera
