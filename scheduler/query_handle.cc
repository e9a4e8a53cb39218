#include "scheduler/query_handle.h"

namespace tessera {

void QueryHandle::State::Complete(QueryOutcome result) {
  {
    std::lock_guard<std::mutex> lock(mu);
    outcome = std::move(result);
    done = true;
  }
  cv.notify_all();
}

bool QueryHandle::done() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done;
}

const QueryOutcome& QueryHandle::Wait() const {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [this] { return state_->done; });
  return state_->outcome;
}

bool QueryHandle::WaitFor(std::chrono::nanoseconds timeout) const {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [this] { return state_->done; });
}

}  // namespace tessera
