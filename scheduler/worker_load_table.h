#pragma once
// The Foreman's view of its workers: how many work orders each holds (dispatched, not yet reported finished),
// its NUMA node, and whether it may receive more. Chooses the worker for the next work order.
//
// Choice rule: the least-loaded dispatchable worker on the work order's preferred node if one is below the
// target depth; otherwise the least-loaded dispatchable worker anywhere below the target (a remote worker is
// better than an idle one, like the submission-time stealing of the IF-SRPT thesis). Ties go to the lowest
// position in the table, so equal work spreads evenly.
//
// Threading: not thread-safe; Foreman thread only.

#include <vector>

namespace tessera {

class WorkerLoadTable {
 public:
  explicit WorkerLoadTable(int max_workers);

  void AddWorker(int worker_id, int node);
  // Stops choosing the worker; its pending count is still tracked until RemoveWorker.
  void DisableWorker(int worker_id);
  void RemoveWorker(int worker_id);

  void OnDispatched(int worker_id) { ++pending_[worker_id]; }
  void OnFinished(int worker_id) { --pending_[worker_id]; }

  // See the class comment; `preferred_node` < 0 means any. Returns -1 if every dispatchable worker holds
  // `target` or more work orders.
  int Choose(int preferred_node, int target) const;

  int pending(int worker_id) const { return pending_[worker_id]; }
  bool known(int worker_id) const { return known_[worker_id]; }
  bool dispatchable(int worker_id) const;
  // Dispatchable worker ids in table order.
  const std::vector<int>& dispatchable_ids() const { return ids_; }
  int num_dispatchable() const { return static_cast<int>(ids_.size()); }
  // Workers known but disabled (being removed).
  int num_disabled() const { return num_known_ - num_dispatchable(); }

 private:
  std::vector<int> ids_;      // dispatchable workers
  std::vector<int> nodes_;    // parallel to ids_
  std::vector<int> pending_;  // by worker id
  std::vector<bool> known_;   // by worker id
  int num_known_ = 0;
};

}  // namespace tessera
