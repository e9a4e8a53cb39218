#pragma once
// The pool of worker threads that run Tasks: one per core by default, each pinned to its core, each with its
// own queue. It can grow and shrink while running without losing work: a removed worker finishes (and
// reports) every task already queued to it before it exits.
//
// Worker ids are slot numbers in [0, max_workers). A slot is reused by a later AddWorker only after its
// previous worker has exited and reported OnWorkerRetired, so a sink never sees completions of two workers
// under one id interleaved.
//
// Threading: every method may be called from any thread. Submit is lock-free with respect to the pool (it
// only takes the target worker's queue lock). The caller must not Submit to an id after RemoveWorker(id) and
// must learn ids through AddWorker/Workers (which synchronize with the worker's creation).

#include <glog/logging.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "threading/task.h"
#include "threading/worker.h"

namespace tessera {

struct WorkerPoolOptions {
  // Workers started by Create; 0 means one per CPU in `cpus`.
  int num_workers = 0;
  // CPUs to pin workers to, in order (a worker goes to the CPU with the fewest workers); empty means
  // AllowedCpus().
  std::vector<int> cpus;
  // Pin each worker to its CPU. Failures are logged and the worker runs unpinned.
  bool pin_to_cpus = true;
  // The NUMA node of a CPU (e.g. from storage's Topology); null means every CPU is on node 0.
  std::function<int(int cpu)> node_of_cpu;
  // Capacity of worker ids.
  int max_workers = 1024;
  // See worker.h.
  int64_t completion_flush_ns = 10'000;
  size_t max_completion_batch = 256;
};

struct WorkerInfo {
  int worker_id = -1;
  int cpu = -1;
  int node = 0;
  bool pinned = false;
};

class WorkerPool {
 public:
  // Starts the workers. `sink` (may be null) receives every finished task and must outlive the pool.
  static absl::StatusOr<std::unique_ptr<WorkerPool>> Create(const WorkerPoolOptions& options, TaskCompletionSink* sink);
  // Shutdown().
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts one more worker on `cpu` (-1: the least-used CPU of the pool's list) and returns its id.
  // ResourceExhausted when all max_workers ids are in use (or still draining); FailedPrecondition after
  // Shutdown.
  absl::StatusOr<int> AddWorker(int cpu = -1);

  // Stops giving `worker_id` new tasks. Non-blocking: the worker finishes its queue, then the sink gets
  // OnWorkerRetired(worker_id). NotFound if the id is not a live worker.
  absl::Status RemoveWorker(int worker_id);

  // Queues tasks on one worker, moving them out of `*tasks`. Returns false (tasks untouched) if that worker
  // was removed. Hot path: no allocation in steady state, one queue lock.
  bool Submit(int worker_id, std::vector<std::unique_ptr<Task>>* tasks) {
    DCHECK(worker_id >= 0 && worker_id < max_workers_ && slots_[worker_id].worker != nullptr) << worker_id;
    return slots_[worker_id].worker->Submit(tasks);
  }

  // Live workers (not removed), by id.
  std::vector<WorkerInfo> Workers() const;
  int NumWorkers() const;
  // Tasks queued on a worker and not yet taken by it (stale by the time it returns).
  size_t QueueLength(int worker_id) const { return slots_[worker_id].worker->QueueLength(); }
  int max_workers() const { return max_workers_; }

  // Retires every worker, waits until all have finished their queues and exited. Idempotent.
  void Shutdown();

 private:
  enum class SlotState { kFree, kLive, kRemoved };
  struct Slot {
    SlotState state = SlotState::kFree;
    int cpu = -1;  // assigned CPU, also when not pinned
    std::unique_ptr<Worker> worker;
  };

  WorkerPool(const WorkerPoolOptions& options, std::vector<int> cpus, TaskCompletionSink* sink);
  int ChooseCpuLocked() const;

  const WorkerPoolOptions options_;
  const std::vector<int> cpus_;
  const int max_workers_;
  TaskCompletionSink* const sink_;
  mutable std::mutex mu_;  // guards slot states and the worker pointers' lifetime changes
  std::unique_ptr<Slot[]> slots_;
  bool shut_down_ = false;
};

}  // namespace tessera
