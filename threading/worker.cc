#include "threading/worker.h"

#include <glog/logging.h>
#include <pthread.h>

#include <string>

#include "common/clock.h"
#include "threading/cpu_affinity.h"

namespace tessera {

Worker::Worker(const WorkerOptions& options, TaskCompletionSink* sink)
    : context_{options.worker_id, options.cpu, options.node},
      completion_flush_ns_(options.completion_flush_ns),
      max_completion_batch_(options.max_completion_batch == 0 ? 1 : options.max_completion_batch),
      sink_(sink) {
  thread_ = std::thread([this] { Loop(); });
}

Worker::~Worker() {
  Retire();
  Join();
}

void Worker::Join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::Flush(std::vector<TaskCompletion>* done) {
  if (done->empty()) return;
  if (sink_ != nullptr) sink_->OnTasksFinished(std::span<TaskCompletion>(*done));
  done->clear();  // destroys tasks the sink did not take (null sink)
}

void Worker::Loop() {
  pthread_setname_np(pthread_self(), ("tessera-w" + std::to_string(context_.worker_id)).substr(0, 15).c_str());
  if (context_.cpu >= 0) {
    absl::Status pinned = PinCurrentThreadToCpu(context_.cpu);
    if (pinned.ok()) {
      pinned_.store(true, std::memory_order_release);
    } else {
      LOG(WARNING) << "worker " << context_.worker_id << " runs unpinned: " << pinned.message();
    }
  }
  std::vector<std::unique_ptr<Task>> batch;
  std::vector<TaskCompletion> done;
  batch.reserve(64);
  done.reserve(max_completion_batch_);
  int64_t oldest_unreported_ns = 0;
  while (true) {
    if (!queue_.TryPopAll(&batch)) {
      Flush(&done);  // never sleep on unreported work
      if (!queue_.PopAll(&batch)) break;
    }
    for (std::unique_ptr<Task>& task : batch) {
      const int64_t start = MonotonicNanos();
      task->Run(context_);
      const int64_t end = MonotonicNanos();
      if (done.empty()) oldest_unreported_ns = end;
      done.push_back(TaskCompletion{std::move(task), context_.worker_id, start, end});
      if (end - start >= completion_flush_ns_ || end - oldest_unreported_ns >= completion_flush_ns_ ||
          done.size() >= max_completion_batch_) {
        Flush(&done);
      }
    }
    batch.clear();
  }
  Flush(&done);
  if (sink_ != nullptr) sink_->OnWorkerRetired(context_.worker_id);
  exited_.store(true, std::memory_order_release);
}

}  // namespace tessera
