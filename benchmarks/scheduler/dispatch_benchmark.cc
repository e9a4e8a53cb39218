// How many work orders per second the scheduler can push through, measured with empty work orders so that
// only scheduling overhead is timed, against baselines from the same run:
//   - call cost of the task abstraction itself (virtual Task vs std::function),
//   - the same synthetic query driven by a plain single-thread loop (no scheduler, no threads),
//   - the queue hand-off between two threads,
//   - the Foreman with 1 and 2 workers, several pending-depth settings and query counts.
// Goal (scheduler issue): >= 500,000 work orders/s, stretch 1,000,000/s.
//
// Usage: dispatch_benchmark [--work-orders=N] [--repeats=R] [--pin=0|1]

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "scheduler/foreman.h"
#include "scheduler/synthetic_query.h"
#include "threading/message_queue.h"

namespace tessera {
namespace {

int64_t g_work_orders = 2'000'000;
int g_repeats = 3;
bool g_pin = true;

struct Row {
  std::string name;
  double per_second;
};

void Print(const Row& row, double baseline) {
  std::printf("%-58s %14.0f %10.1f ns %8.2fx\n", row.name.c_str(), row.per_second, 1e9 / row.per_second,
              row.per_second / baseline);
}

template <typename Body>
double BestRate(int64_t items, Body body) {
  double best = 0;
  for (int r = 0; r < g_repeats; ++r) {
    const int64_t start = MonotonicNanos();
    body();
    const int64_t elapsed = MonotonicNanos() - start;
    best = std::max(best, static_cast<double>(items) * 1e9 / static_cast<double>(elapsed));
  }
  return best;
}

class EmptyTask final : public Task {
 public:
  void Run(const WorkerContext& context) override { sink_ += context.worker_id; }
  int64_t sink_ = 0;
};

double VirtualTaskRate() {
  return BestRate(g_work_orders, [] {
    WorkerContext context{0, -1, 0};
    for (int64_t i = 0; i < g_work_orders; ++i) {
      std::unique_ptr<Task> task = std::make_unique<EmptyTask>();
      task->Run(context);
    }
  });
}

double FunctionRate(bool large_capture) {
  return BestRate(g_work_orders, [large_capture] {
    int64_t sink = 0;
    char pad[64] = {};
    for (int64_t i = 0; i < g_work_orders; ++i) {
      std::function<void()> fn;
      if (large_capture) {
        fn = [&sink, pad] { sink += pad[0]; };  // too big for the small-buffer: one allocation
      } else {
        fn = [&sink] { ++sink; };
      }
      fn();
    }
    if (sink == -1) std::printf("%c", pad[0]);
  });
}

// The same synthetic query the Foreman runs, driven inline: NextWorkOrder -> two clock reads around Run ->
// OnWorkOrderFinished -> destroy. What a scheduler-free single thread costs per work order.
double InlineLoopRate() {
  return BestRate(g_work_orders, [] {
    SyntheticQueryOptions options = SimpleSyntheticQuery(1, g_work_orders, 0);
    options.track_executions = false;
    SyntheticQuery query(options);
    WorkerContext context{0, -1, 0};
    while (query.HasReadyWorkOrder()) {
      std::unique_ptr<WorkOrderTask> task = query.NextWorkOrder();
      const int64_t start = MonotonicNanos();
      task->Run(context);
      const int64_t end = MonotonicNanos();
      query.OnWorkOrderFinished(WorkOrderCompletion{1, task->operator_id(), 0, start, end, task->rows()});
    }
  });
}

double QueueRate(int batch) {
  return BestRate(g_work_orders, [batch] {
    MessageQueue<std::unique_ptr<Task>> queue;
    std::thread consumer([&] {
      std::vector<std::unique_ptr<Task>> out;
      int64_t received = 0;
      while (received < g_work_orders) {
        out.clear();
        if (!queue.PopAll(&out)) break;
        received += static_cast<int64_t>(out.size());
      }
    });
    std::vector<std::unique_ptr<Task>> pending;
    for (int64_t i = 0; i < g_work_orders; ++i) {
      pending.push_back(std::make_unique<EmptyTask>());
      if (static_cast<int>(pending.size()) >= batch) queue.PushBatch(&pending);
    }
    queue.PushBatch(&pending);
    consumer.join();
  });
}

struct ForemanConfig {
  int workers;
  int queries;
  int min_pending;
  int max_pending;
  const char* policy;
};

double ForemanRate(const ForemanConfig& config) {
  ForemanOptions options;
  options.pool.num_workers = config.workers;
  options.pool.pin_to_cpus = g_pin;
  options.min_pending_per_worker = config.min_pending;
  options.max_pending_per_worker = config.max_pending;
  options.policy = *ParsePolicy(config.policy);
  absl::StatusOr<std::unique_ptr<Foreman>> foreman = Foreman::Create(options);
  if (!foreman.ok()) {
    std::fprintf(stderr, "%s\n", std::string(foreman.status().message()).c_str());
    std::exit(1);
  }
  QueryId next_id = 1;
  return BestRate(g_work_orders, [&] {
    std::vector<QueryHandle> handles;
    for (int q = 0; q < config.queries; ++q) {
      SyntheticQueryOptions spec = SimpleSyntheticQuery(next_id++, g_work_orders / config.queries, 0);
      spec.track_executions = false;
      handles.push_back(*(*foreman)->Submit(std::make_shared<SyntheticQuery>(spec)));
    }
    for (QueryHandle& handle : handles) handle.Wait();
  });
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  using namespace tessera;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--work-orders=", 14) == 0) g_work_orders = std::atoll(argv[i] + 14);
    if (std::strncmp(argv[i], "--repeats=", 10) == 0) g_repeats = std::atoi(argv[i] + 10);
    if (std::strncmp(argv[i], "--pin=", 6) == 0) g_pin = std::atoi(argv[i] + 6) != 0;
  }
  std::printf("empty work orders: %lld per measurement, best of %d; %u hardware threads; workers %s\n\n",
              static_cast<long long>(g_work_orders), g_repeats, std::thread::hardware_concurrency(),
              g_pin ? "pinned" : "unpinned");
  std::printf("%-58s %14s %13s %9s\n", "what", "per second", "per item", "vs loop");

  const Row loop{"baseline: inline loop over the same query (1 thread)", InlineLoopRate()};
  const double baseline = loop.per_second;
  Print(loop, baseline);
  Print({"task call: make_unique<Task> + virtual Run", VirtualTaskRate()}, baseline);
  Print({"task call: std::function, small capture", FunctionRate(false)}, baseline);
  Print({"task call: std::function, 64-byte capture (allocates)", FunctionRate(true)}, baseline);
  Print({"queue hand-off between 2 threads, 1 per push", QueueRate(1)}, baseline);
  Print({"queue hand-off between 2 threads, 16 per push", QueueRate(16)}, baseline);

  const ForemanConfig configs[] = {
      {1, 1, 2, 64, "fair"},  {2, 1, 2, 64, "fair"},  {1, 1, 2, 2, "fair"},  {2, 1, 2, 2, "fair"},
      {1, 1, 16, 16, "fair"}, {2, 1, 16, 16, "fair"}, {2, 4, 2, 64, "fair"}, {2, 4, 2, 64, "static"},
      {2, 4, 2, 64, "pp"},    {2, 16, 2, 64, "fair"},
  };
  for (const ForemanConfig& c : configs) {
    char name[128];
    std::snprintf(name, sizeof(name), "Foreman: %d worker%s, %2d quer%s, depth %d-%d, %s", c.workers,
                  c.workers == 1 ? " " : "s", c.queries, c.queries == 1 ? "y  " : "ies", c.min_pending,
                  c.max_pending, c.policy);
    Print({name, ForemanRate(c)}, baseline);
  }
  return 0;
}
