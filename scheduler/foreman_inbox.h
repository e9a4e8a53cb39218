#pragma once
// The Foreman's single inbox: finished tasks from workers, worker-retired notices, and control messages from
// client threads (query arrived, cancel, priority/policy change, pool resize, progress and stats requests).
//
// One mutex guards three vectors; the Foreman thread swaps all of them out at once (no allocation in steady
// state) and sleeps on a condition variable that producers signal only while it sleeps. Finished tasks and
// the retire notice of one worker keep their order (the Foreman handles a drained batch's completions before
// its retire notices).
//
// Threading: the sink methods and Post from any thread; Drain and Close from the Foreman thread.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/load_controller.h"
#include "scheduler/policy.h"
#include "scheduler/query_handle.h"
#include "scheduler/schedulable_query.h"
#include "threading/task.h"

namespace tessera {

// A one-shot reply slot for a request answered by the Foreman thread.
template <typename T>
class Reply {
 public:
  void Set(absl::StatusOr<T> value) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      value_ = std::move(value);
    }
    cv_.notify_all();
  }
  absl::StatusOr<T> Get() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return value_.has_value(); });
    return *value_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<absl::StatusOr<T>> value_;
};

struct ForemanStats {
  std::string policy;
  int workers = 0;         // dispatchable workers
  int pending_target = 0;  // work orders per worker under ForemanOptions::pending_by_count (else what it would keep)
  int active_queries = 0;
  int64_t dispatched = 0;  // work orders handed to workers since start
  int64_t executed = 0;    // work orders executed (not skipped)
  int64_t shared = 0;      // work orders dispatched in shared scans (each member of a shared block counted)
  PredictionError mean_prediction_error;
  PredictionError autoregression_prediction_error;
  // SRPT / IF-SRPT: how the remaining-time estimates compared with the work-order time that followed, over the
  // finished queries (only estimates made under those policies).
  RemainingEstimateError remaining_estimate_error;
  LoadControlStats load;  // the LoadController's admitted / waiting / suspended queries and memory
  // Over the queries finished since start (QueryOutcome's times summed): the part of their latency the scheduler
  // holds them (Submit -> finish), and of that the wait before their first work order was dispatched (admission
  // and the policy's order). The rest of a client's latency (parsing, planning, returning the result) is outside.
  int64_t finished_queries = 0;
  int64_t sum_submit_to_finish_ns = 0;
  int64_t sum_submit_to_first_dispatch_ns = 0;
};

namespace foreman_message {
struct Submit {
  std::shared_ptr<SchedulableQuery> query;
  std::shared_ptr<QueryHandle::State> handle;
  int64_t submit_ns = 0;
};
struct Cancel {
  QueryId query_id = 0;
};
struct SetPriority {
  QueryId query_id = 0;
  int priority = 1;
};
struct SetPolicy {
  PolicyOptions policy;
};
struct SetLoadControl {
  double threshold_fraction = 0;
  double max_query_fraction = 0;
};
struct ResizePool {
  int num_workers = 0;
};
// A query's readiness changed outside its work orders (a result reader released blocks; an exchange's message
// arrived, RelationalOperator::SetWakeUp): the Foreman asks it again (SchedulableQuery::OnPoke).
struct Poke {
  QueryId query_id = 0;
};
struct GetProgress {
  QueryId query_id = 0;
  std::shared_ptr<Reply<QueryProgress>> reply;
};
struct GetStats {
  std::shared_ptr<Reply<ForemanStats>> reply;
};
struct Shutdown {};
}  // namespace foreman_message

using ControlMessage = std::variant<foreman_message::Submit, foreman_message::Cancel, foreman_message::SetPriority,
                                    foreman_message::SetPolicy, foreman_message::SetLoadControl,
                                    foreman_message::ResizePool, foreman_message::Poke, foreman_message::GetProgress,
                                    foreman_message::GetStats, foreman_message::Shutdown>;

class ForemanInbox final : public TaskCompletionSink {
 public:
  struct Batch {
    std::vector<TaskCompletion> completions;
    std::vector<int> retired_workers;
    std::vector<ControlMessage> controls;
    bool empty() const { return completions.empty() && retired_workers.empty() && controls.empty(); }
    void clear() {
      completions.clear();
      retired_workers.clear();
      controls.clear();
    }
  };

  void OnTasksFinished(std::span<TaskCompletion> completions) override;
  void OnWorkerRetired(int worker_id) override;
  // False (message dropped) once the inbox is closed.
  bool Post(ControlMessage message);

  // Blocks until something is queued, then swaps everything into `*batch` (which must be empty).
  void Drain(Batch* batch);
  // Rejects further Posts; returns the control messages still queued so the caller can answer them.
  std::vector<ControlMessage> Close();

 private:
  void WakeLocked(bool* wake) {
    *wake = foreman_waiting_;
    foreman_waiting_ = false;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  Batch queued_;
  bool foreman_waiting_ = false;
  bool closed_ = false;
};

}  // namespace tessera
