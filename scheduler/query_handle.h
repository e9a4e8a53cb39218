#pragma once
// What Foreman::Submit returns: a handle to wait for a query's outcome.
//
// Threading: every method may be called from any thread, any number of times; copies share one state.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/status/status.h"
#include "scheduler/learning_agent.h"
#include "scheduler/schedulable_query.h"

namespace tessera {

struct QueryOutcome {
  QueryId query_id = 0;
  // OK; Cancelled after Foreman::Cancel; Aborted when the Foreman stopped first.
  absl::Status status;
  int64_t submit_ns = 0;           // monotonic
  int64_t first_dispatch_ns = -1;  // -1 if no work order was dispatched
  int64_t finish_ns = 0;
  int64_t work_orders_executed = 0;
  int64_t work_orders_skipped = 0;  // dispatched but dropped unexecuted after cancellation
  int64_t busy_ns = 0;              // sum of executed work-order durations (CPU time given to the query)
  int64_t memory_wait_ns = 0;       // time waiting for admission or suspended by the LoadController
  int suspensions = 0;              // times the LoadController suspended the query
  QueryProgress final_progress;
  QueryLearningStats learning;  // prediction errors for this query
};

class QueryHandle {
 public:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    QueryOutcome outcome;

    // Advanced by Notify (e.g. a block of the query's result was written), for WaitForEventOrDone.
    uint64_t events = 0;

    // Called once by the Foreman.
    void Complete(QueryOutcome result);
    // Thread-safe, any number of times: advances `events` and wakes the waiters.
    void Notify();
  };

  QueryHandle() = default;
  QueryHandle(QueryId query_id, std::shared_ptr<State> state) : query_id_(query_id), state_(std::move(state)) {}

  QueryId query_id() const { return query_id_; }
  bool valid() const { return state_ != nullptr; }
  bool done() const;
  // Blocks until the query has finished, been cancelled or aborted. The reference stays valid while any copy
  // of the handle lives.
  const QueryOutcome& Wait() const;
  // True if the outcome is available within `timeout`.
  bool WaitFor(std::chrono::nanoseconds timeout) const;
  // Streaming (a reader of the query's result while it runs): the count of State::Notify calls so far, and a wait
  // until the query is done or that count differs from `seen` (an earlier events()), or until `deadline`.
  // Returns done().
  uint64_t events() const;
  bool WaitForEventOrDone(uint64_t seen) const;
  bool WaitForEventOrDone(uint64_t seen, std::chrono::steady_clock::time_point deadline) const;

 private:
  QueryId query_id_ = 0;
  std::shared_ptr<State> state_;
};

}  // namespace tessera
