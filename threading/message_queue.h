#pragma once
// An unbounded multi-producer, single-consumer message queue with batch hand-off.
//
// Producers append under a mutex; the one consumer takes *everything* queued in one swap of two std::vectors,
// so in steady state no call allocates and one lock acquisition moves a whole batch. The condition variable
// is signalled only while the consumer is actually asleep, so a busy consumer costs producers no futex call.
//
// Why not a lock-free ring: the consumer needs to sleep when idle (a pinned worker on a shared 2-core machine
// must not spin), and with batch hand-off the lock is taken once per batch, not once per message; the
// dispatch benchmark shows the scheduler thread, not this queue, bounds the dispatch rate.
//
// Threading: Push/PushBatch/Close/ApproximateSize from any thread; PopAll/TryPopAll from one consumer thread
// at a time.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace tessera {

template <typename T>
class MessageQueue {
 public:
  MessageQueue() = default;
  MessageQueue(const MessageQueue&) = delete;
  MessageQueue& operator=(const MessageQueue&) = delete;

  // Appends one item. Returns false (and leaves `item` untouched) if the queue is closed.
  bool Push(T&& item) {
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return false;
      items_.push_back(std::move(item));
      size_.store(items_.size(), std::memory_order_relaxed);
      wake = consumer_waiting_;
      consumer_waiting_ = false;
    }
    if (wake) cv_.notify_one();
    return true;
  }

  // Moves every element of `*items` to the queue and clears `*items`. Returns false (leaving `*items`
  // untouched) if the queue is closed.
  bool PushBatch(std::vector<T>* items) {
    if (items->empty()) return true;
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return false;
      if (items_.empty()) {
        items_.swap(*items);  // keeps the producer's capacity circulating; no element moves
      } else {
        for (T& item : *items) items_.push_back(std::move(item));
      }
      size_.store(items_.size(), std::memory_order_relaxed);
      wake = consumer_waiting_;
      consumer_waiting_ = false;
    }
    items->clear();
    if (wake) cv_.notify_one();
    return true;
  }

  // Blocks until at least one item is queued or the queue is closed, then moves all queued items into `*out`
  // (which must be empty; its capacity is recycled). Returns false only when the queue is closed and empty.
  bool PopAll(std::vector<T>* out) {
    std::unique_lock<std::mutex> lock(mu_);
    while (items_.empty() && !closed_) {
      consumer_waiting_ = true;
      cv_.wait(lock);
    }
    consumer_waiting_ = false;
    if (items_.empty()) return false;
    items_.swap(*out);
    size_.store(0, std::memory_order_relaxed);
    return true;
  }

  // Non-blocking PopAll: returns false if nothing is queued.
  bool TryPopAll(std::vector<T>* out) {
    if (size_.load(std::memory_order_relaxed) == 0) {
      // Cheap early exit; a racing Push is picked up by the next call (or by PopAll, which re-checks under
      // lock).
      return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.empty()) return false;
    items_.swap(*out);
    size_.store(0, std::memory_order_relaxed);
    return true;
  }

  // After Close, pushes fail; the consumer still receives what was queued before, then PopAll returns false.
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }

  bool closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

  // Number of queued items, possibly stale by the time the caller looks at it.
  size_t ApproximateSize() const { return size_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<T> items_;
  bool closed_ = false;
  bool consumer_waiting_ = false;
  std::atomic<size_t> size_{0};
};

}  // namespace tessera
