#include "threading/worker_pool.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "threading/cpu_affinity.h"

namespace tessera {

absl::StatusOr<std::unique_ptr<WorkerPool>> WorkerPool::Create(const WorkerPoolOptions& options,
                                                               TaskCompletionSink* sink) {
  if (options.max_workers < 1) return absl::InvalidArgumentError("max_workers must be at least 1");
  if (options.num_workers < 0) return absl::InvalidArgumentError("num_workers must not be negative");
  std::vector<int> cpus = options.cpus.empty() ? AllowedCpus() : options.cpus;
  for (int cpu : cpus) {
    if (cpu < 0) return absl::InvalidArgumentError(absl::StrCat("invalid CPU ", cpu));
  }
  const int count = options.num_workers == 0 ? static_cast<int>(cpus.size()) : options.num_workers;
  if (count > options.max_workers) {
    return absl::InvalidArgumentError(
        absl::StrCat(count, " workers requested but max_workers is ", options.max_workers));
  }
  std::unique_ptr<WorkerPool> pool(new WorkerPool(options, std::move(cpus), sink));
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<int> id = pool->AddWorker();
    if (!id.ok()) return id.status();
  }
  return pool;
}

WorkerPool::WorkerPool(const WorkerPoolOptions& options, std::vector<int> cpus, TaskCompletionSink* sink)
    : options_(options),
      cpus_(std::move(cpus)),
      max_workers_(options.max_workers),
      sink_(sink),
      slots_(new Slot[options.max_workers]) {}

WorkerPool::~WorkerPool() { Shutdown(); }

int WorkerPool::ChooseCpuLocked() const {
  const int max_cpu = *std::max_element(cpus_.begin(), cpus_.end());
  std::vector<int> workers_on(max_cpu + 1, 0);
  for (int i = 0; i < max_workers_; ++i) {
    if (slots_[i].state == SlotState::kLive && slots_[i].cpu >= 0 && slots_[i].cpu <= max_cpu) {
      ++workers_on[slots_[i].cpu];
    }
  }
  int best_cpu = cpus_.front();
  for (int cpu : cpus_) {
    if (workers_on[cpu] < workers_on[best_cpu]) best_cpu = cpu;
  }
  return best_cpu;
}

absl::StatusOr<int> WorkerPool::AddWorker(int cpu) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return absl::FailedPreconditionError("worker pool is shut down");
  int id = -1;
  for (int i = 0; i < max_workers_ && id < 0; ++i) {
    Slot& slot = slots_[i];
    if (slot.state == SlotState::kFree) id = i;
    if (slot.state == SlotState::kRemoved && slot.worker->exited()) {
      slot.worker->Join();  // returns at once: the thread did its last action
      slot.worker.reset();
      slot.state = SlotState::kFree;
      id = i;
    }
  }
  if (id < 0) return absl::ResourceExhaustedError(absl::StrCat("all ", max_workers_, " worker ids are in use"));
  if (cpu < 0) cpu = ChooseCpuLocked();
  WorkerOptions worker_options;
  worker_options.worker_id = id;
  worker_options.cpu = options_.pin_to_cpus ? cpu : -1;
  worker_options.node = options_.node_of_cpu ? options_.node_of_cpu(cpu) : 0;
  worker_options.completion_flush_ns = options_.completion_flush_ns;
  worker_options.max_completion_batch = options_.max_completion_batch;
  slots_[id].worker = std::make_unique<Worker>(worker_options, sink_);
  slots_[id].cpu = cpu;
  slots_[id].state = SlotState::kLive;
  return id;
}

absl::Status WorkerPool::RemoveWorker(int worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (worker_id < 0 || worker_id >= max_workers_ || slots_[worker_id].state != SlotState::kLive) {
    return absl::NotFoundError(absl::StrCat("no live worker ", worker_id));
  }
  slots_[worker_id].state = SlotState::kRemoved;
  slots_[worker_id].worker->Retire();
  return absl::OkStatus();
}

std::vector<WorkerInfo> WorkerPool::Workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<WorkerInfo> workers;
  for (int i = 0; i < max_workers_; ++i) {
    if (slots_[i].state != SlotState::kLive) continue;
    const Worker& worker = *slots_[i].worker;
    workers.push_back(WorkerInfo{i, slots_[i].cpu, worker.context().node, worker.pinned()});
  }
  return workers;
}

int WorkerPool::NumWorkers() const {
  std::lock_guard<std::mutex> lock(mu_);
  int count = 0;
  for (int i = 0; i < max_workers_; ++i) count += slots_[i].state == SlotState::kLive;
  return count;
}

void WorkerPool::Shutdown() {
  std::vector<std::unique_ptr<Worker>> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
    for (int i = 0; i < max_workers_; ++i) {
      if (!slots_[i].worker) continue;
      slots_[i].worker->Retire();
      workers.push_back(std::move(slots_[i].worker));
      slots_[i].state = SlotState::kFree;
    }
  }
  // Joined without the lock, so a sink may call Workers() while the last tasks drain.
  for (std::unique_ptr<Worker>& worker : workers) worker->Join();
}

}  // namespace tessera
