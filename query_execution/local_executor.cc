#include "query_execution/local_executor.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace tessera {
namespace {

struct Completion {
  std::unique_ptr<WorkOrder> work_order;
  absl::Status status;
  int64_t elapsed_ns;
};

}  // namespace

absl::Status RunQueryLocally(QueryManager& query, int threads) {
  threads = std::max(1, threads);
  std::mutex mutex;
  std::condition_variable work_available, completion_available;
  std::deque<std::unique_ptr<WorkOrder>> queue;
  std::deque<Completion> completions;
  bool shutting_down = false;

  auto worker = [&](int worker_index) {
    WorkOrderContext context{worker_index, threads};
    while (true) {
      std::unique_ptr<WorkOrder> work_order;
      {
        std::unique_lock<std::mutex> lock(mutex);
        work_available.wait(lock, [&] { return shutting_down || !queue.empty(); });
        if (queue.empty()) return;
        work_order = std::move(queue.front());
        queue.pop_front();
      }
      int64_t start = MonotonicNanos();
      absl::Status status = work_order->Execute(context);
      int64_t elapsed = MonotonicNanos() - start;
      {
        std::lock_guard<std::mutex> lock(mutex);
        completions.push_back(Completion{std::move(work_order), std::move(status), elapsed});
      }
      completion_available.notify_one();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);

  int64_t in_flight = 0;
  while (!query.IsFinished()) {
    std::vector<std::unique_ptr<WorkOrder>> batch;
    while (in_flight + static_cast<int64_t>(batch.size()) < 2 * threads && query.HasReadyWorkOrder()) {
      batch.push_back(query.NextWorkOrder());
    }
    std::deque<Completion> done;
    {
      std::unique_lock<std::mutex> lock(mutex);
      for (auto& work_order : batch) queue.push_back(std::move(work_order));
      in_flight += static_cast<int64_t>(batch.size());
      if (!batch.empty()) work_available.notify_all();
      if (in_flight == 0) break;  // nothing running and nothing ready: the DAG cannot progress
      completion_available.wait(lock, [&] { return !completions.empty(); });
      done.swap(completions);
    }
    for (Completion& completion : done) {
      --in_flight;
      query.OnWorkOrderFinished(*completion.work_order, completion.status, completion.elapsed_ns);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    shutting_down = true;
  }
  work_available.notify_all();
  for (std::thread& thread : pool) thread.join();
  if (query.status().ok() && !query.IsFinished()) {
    return absl::InternalError("query stalled: no work order is ready or running but the plan is not finished");
  }
  return query.status();
}

}  // namespace tessera
