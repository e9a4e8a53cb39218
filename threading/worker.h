#pragma once
// One worker thread: pinned to a core, owns a MessageQueue of Tasks, runs them in order, and reports each
// finished task to a TaskCompletionSink. Used through WorkerPool; exposed for tests.
//
// Completion batching: a finished task that ran at least `completion_flush_ns` is reported at once; shorter
// ones are collected and reported when the oldest waits `completion_flush_ns`, when `max_completion_batch`
// pile up, or before the worker would block on an empty queue. So real work orders (0.1-10 ms) are reported
// one by one with no delay, while empty ones (benchmarks) cost the scheduler one inbox lock per batch.
//
// Threading: Submit/Retire/QueueLength from any thread; Join from one thread, once, after Retire.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "threading/message_queue.h"
#include "threading/task.h"

namespace tessera {

struct WorkerOptions {
  int worker_id = 0;
  int cpu = -1;  // -1: not pinned
  int node = 0;
  int64_t completion_flush_ns = 10'000;
  size_t max_completion_batch = 256;
};

class Worker {
 public:
  // Starts the thread. `sink` may be null (finished tasks are then destroyed on the worker) and must outlive
  // the thread.
  Worker(const WorkerOptions& options, TaskCompletionSink* sink);
  // Retires and joins if the caller did not.
  ~Worker();

  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Queues tasks (moving them out of `*tasks`). Returns false, leaving `*tasks` untouched, after Retire.
  bool Submit(std::vector<std::unique_ptr<Task>>* tasks) { return queue_.PushBatch(tasks); }

  // Stops accepting tasks. The thread still runs everything already queued, reports it, calls
  // sink->OnWorkerRetired(id) and exits. Non-blocking.
  void Retire() { queue_.Close(); }
  void Join();
  // True once the thread has done its last action (Join then returns at once).
  bool exited() const { return exited_.load(std::memory_order_acquire); }
  // Whether pinning to options.cpu succeeded (false until the thread has tried).
  bool pinned() const { return pinned_.load(std::memory_order_acquire); }

  size_t QueueLength() const { return queue_.ApproximateSize(); }
  const WorkerContext& context() const { return context_; }

 private:
  void Loop();
  void Flush(std::vector<TaskCompletion>* done);

  const WorkerContext context_;
  const int64_t completion_flush_ns_;
  const size_t max_completion_batch_;
  TaskCompletionSink* const sink_;
  MessageQueue<std::unique_ptr<Task>> queue_;
  std::atomic<bool> exited_{false};
  std::atomic<bool> pinned_{false};
  std::thread thread_;
};

}  // namespace tessera
