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

void QueryHandle::State::Notify() {
  {
    std::lock_guard<std::mutex> lock(mu);
    ++events;
  }
  cv.notify_all();
}

uint64_t QueryHandle::events() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->events;
}

bool QueryHandle::WaitForEventOrDone(uint64_t seen) const {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [&] { return state_->done || state_->events != seen; });
  return state_->done;
}

bool QueryHandle::WaitForEventOrDone(uint64_t seen, std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait_until(lock, deadline, [&] { return state_->done || state_->events != seen; });
  return state_->done;
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
