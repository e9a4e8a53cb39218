#pragma once
// The unit of work a worker thread runs, and how finished work is reported.
//
// A worker knows nothing about queries or work orders: it runs opaque Tasks and hands each finished one, with
// its start and end times, to a TaskCompletionSink (the scheduler's inbox). A small virtual interface is used
// rather than std::function: a Task is already one heap object per work order, carries its own result fields,
// and is handed back to the sink, which a std::function cannot do (see
// benchmarks/scheduler/dispatch_benchmark.cc for the call-cost comparison).

#include <cstdint>
#include <memory>
#include <span>

namespace tessera {

// Where a task runs; passed to Task::Run. Plain value, valid only during that call.
struct WorkerContext {
  int worker_id = -1;
  int cpu = -1;  // the CPU the worker is pinned to, or -1 when pinning is off or failed
  int node = 0;  // the NUMA node of `cpu` (from WorkerPoolOptions::node_of_cpu), 0 when unknown
};

class Task {
 public:
  virtual ~Task() = default;
  // Runs to completion on a worker thread; never preempted by the pool. Must not throw. May write result
  // fields of *this: the sink reads them after the worker hands the task over (the hand-off is a
  // synchronizing queue).
  virtual void Run(const WorkerContext& context) = 0;
};

// One finished task with its monotonic start/end times (common/clock.h MonotonicNanos).
struct TaskCompletion {
  std::unique_ptr<Task> task;
  int worker_id = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Receives finished tasks from workers. Implementations must be thread-safe: every worker calls them.
class TaskCompletionSink {
 public:
  virtual ~TaskCompletionSink() = default;
  // Takes ownership of the completions (moves out of the span). Completions of one worker arrive in the order
  // the worker ran them. Must not block for long: the worker waits for it.
  virtual void OnTasksFinished(std::span<TaskCompletion> completions) = 0;
  // Called by a removed worker as its very last action, after its final OnTasksFinished: every task ever
  // submitted to that worker has been reported before this call.
  virtual void OnWorkerRetired(int worker_id) = 0;
};

}  // namespace tessera
