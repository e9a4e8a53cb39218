#include "scheduler/foreman_inbox.h"

namespace tessera {

void ForemanInbox::OnTasksFinished(std::span<TaskCompletion> completions) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (TaskCompletion& completion : completions) queued_.completions.push_back(std::move(completion));
    WakeLocked(&wake);
  }
  if (wake) cv_.notify_one();
}

void ForemanInbox::OnWorkerRetired(int worker_id) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued_.retired_workers.push_back(worker_id);
    WakeLocked(&wake);
  }
  if (wake) cv_.notify_one();
}

bool ForemanInbox::Post(ControlMessage message) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return false;
    queued_.controls.push_back(std::move(message));
    WakeLocked(&wake);
  }
  if (wake) cv_.notify_one();
  return true;
}

void ForemanInbox::Drain(Batch* batch) {
  std::unique_lock<std::mutex> lock(mu_);
  while (queued_.empty()) {
    foreman_waiting_ = true;
    cv_.wait(lock);
  }
  foreman_waiting_ = false;
  batch->completions.swap(queued_.completions);
  batch->retired_workers.swap(queued_.retired_workers);
  batch->controls.swap(queued_.controls);
}

std::vector<ControlMessage> ForemanInbox::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  std::vector<ControlMessage> left;
  left.swap(queued_.controls);
  return left;
}

}  // namespace tessera
