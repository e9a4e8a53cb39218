// How many work orders per second the scheduler can push through, measured with empty work orders so that
// only scheduling overhead is timed, against baselines from the same run (Google Benchmark):
//   - BM_InlineLoop (the baseline): the same synthetic query driven by a plain single-thread loop (no scheduler,
//     no threads); every other benchmark's vs_loop counter is its rate over this one's, from the same run,
//   - call cost of the task abstraction itself (virtual Task vs std::function),
//   - the queue hand-off between two threads,
//   - the Foreman with 1 and 2 workers, several pending-depth settings, query counts and policies.
// Goal (scheduler issue): >= 500,000 work orders/s, stretch 1,000,000/s.
//
// Usage: dispatch_benchmark [--work_orders=N] [--pin=0|1] [--benchmark_filter=Foreman]
//          [--benchmark_repetitions=3] (--help lists all flags)

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/google_benchmark_flags.h"
#include "common/clock.h"
#include "scheduler/foreman.h"
#include "scheduler/synthetic_query.h"
#include "threading/message_queue.h"

DEFINE_int64(work_orders, 2'000'000, "work orders per iteration of the inline-loop, queue and Foreman benchmarks");
DEFINE_int32(pin, 1, "1: the Foreman's workers pinned to cores; 0: not pinned");
DEFINE_int64(time_slice_us, 0,
             "the Foreman's time slice in us (ForemanOptions::dispatch_run_ns; the database default is 1000)");

namespace tessera {
namespace {

// The inline loop's work orders/s, measured first in the run; 0 until then.
double g_loop_rate = 0;

// Work orders/s (items_per_second) and the rate relative to the inline-loop baseline of the same run (vs_loop).
// Every benchmark here uses wall-clock time (UseRealTime), as the ones that hand work to other threads must.
// `loop_start`: MonotonicNanos() just before the benchmark's timed loop.
void SetRates(benchmark::State& state, int64_t work_orders_per_iteration, int64_t loop_start) {
  const int64_t elapsed = MonotonicNanos() - loop_start;
  const int64_t items = static_cast<int64_t>(state.iterations()) * work_orders_per_iteration;
  state.SetItemsProcessed(items);
  const double rate = static_cast<double>(items) * 1e9 / static_cast<double>(std::max<int64_t>(1, elapsed));
  if (g_loop_rate == 0) g_loop_rate = rate;  // BM_InlineLoop, the first benchmark of the run
  state.counters["vs_loop"] = rate / g_loop_rate;
}

class EmptyTask final : public Task {
 public:
  void Run(const WorkerContext& context) override { sink_ += context.worker_id; }
  int64_t sink_ = 0;
};

// One make_unique<Task> + virtual Run per iteration.
void BM_TaskCallVirtual(benchmark::State& state) {
  WorkerContext context{0, -1, 0};
  const int64_t loop_start = MonotonicNanos();
  for (auto _ : state) {
    std::unique_ptr<Task> task = std::make_unique<EmptyTask>();
    task->Run(context);
    benchmark::DoNotOptimize(task.get());
  }
  SetRates(state, 1, loop_start);
}

// One std::function built and called per iteration; Arg 0: small capture, 1: a 64-byte capture, too big for the
// small buffer (one allocation).
void BM_TaskCallStdFunction(benchmark::State& state) {
  const bool large_capture = state.range(0) != 0;
  int64_t sink = 0;
  char pad[64] = {};
  const int64_t loop_start = MonotonicNanos();
  for (auto _ : state) {
    std::function<void()> fn;
    if (large_capture) {
      fn = [&sink, pad] { sink += pad[0]; };
    } else {
      fn = [&sink] { ++sink; };
    }
    fn();
    benchmark::DoNotOptimize(sink);
  }
  SetRates(state, 1, loop_start);
}

// The same synthetic query the Foreman runs, driven inline: NextWorkOrder -> two clock reads around Run ->
// OnWorkOrderFinished -> destroy. What a scheduler-free single thread costs per work order.
// The baseline; registered first, so that the other benchmarks of the run can report vs_loop.
void BM_InlineLoop(benchmark::State& state) {
  const int64_t work_orders = state.range(0);
  const int64_t loop_start = MonotonicNanos();
  for (auto _ : state) {
    SyntheticQueryOptions options = SimpleSyntheticQuery(1, work_orders, 0);
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
  }
  g_loop_rate = 0;
  SetRates(state, work_orders, loop_start);
}

// Arg: tasks per push; range(1): tasks per iteration.
void BM_QueueHandOff(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  const int64_t work_orders = state.range(1);
  const int64_t loop_start = MonotonicNanos();
  for (auto _ : state) {
    MessageQueue<std::unique_ptr<Task>> queue;
    std::thread consumer([&] {
      std::vector<std::unique_ptr<Task>> out;
      int64_t received = 0;
      while (received < work_orders) {
        out.clear();
        if (!queue.PopAll(&out)) break;
        received += static_cast<int64_t>(out.size());
      }
    });
    std::vector<std::unique_ptr<Task>> pending;
    for (int64_t i = 0; i < work_orders; ++i) {
      pending.push_back(std::make_unique<EmptyTask>());
      if (static_cast<int>(pending.size()) >= batch) queue.PushBatch(&pending);
    }
    queue.PushBatch(&pending);
    consumer.join();
  }
  SetRates(state, work_orders, loop_start);
}

constexpr const char* kPolicies[] = {"fair", "static", "pp"};

// Args: workers, queries, min and max pending work orders per worker, policy (index into kPolicies), work
// orders per iteration (split evenly over the queries).
void BM_Foreman(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  const int queries = static_cast<int>(state.range(1));
  const int64_t work_orders = state.range(5);
  ForemanOptions options;
  options.pool.num_workers = workers;
  options.pool.pin_to_cpus = FLAGS_pin != 0;
  options.min_pending_per_worker = static_cast<int>(state.range(2));
  options.max_pending_per_worker = static_cast<int>(state.range(3));
  options.policy = *ParsePolicy(kPolicies[state.range(4)]);
  options.dispatch_run_ns = FLAGS_time_slice_us * 1000;
  absl::StatusOr<std::unique_ptr<Foreman>> foreman = Foreman::Create(options);
  if (!foreman.ok()) {
    state.SkipWithError(std::string(foreman.status().message()).c_str());
    return;
  }
  QueryId next_id = 1;
  const int64_t loop_start = MonotonicNanos();
  for (auto _ : state) {
    std::vector<QueryHandle> handles;
    for (int q = 0; q < queries; ++q) {
      SyntheticQueryOptions spec = SimpleSyntheticQuery(next_id++, work_orders / queries, 0);
      spec.track_executions = false;
      handles.push_back(*(*foreman)->Submit(std::make_shared<SyntheticQuery>(spec)));
    }
    for (QueryHandle& handle : handles) handle.Wait();
  }
  SetRates(state, work_orders / queries * queries, loop_start);
  state.SetLabel(kPolicies[state.range(4)]);
}

void RegisterBenchmarks() {
  const int64_t n = FLAGS_work_orders;
  benchmark::RegisterBenchmark("BM_InlineLoop", BM_InlineLoop)->Arg(n)->UseRealTime();
  benchmark::RegisterBenchmark("BM_TaskCallVirtual", BM_TaskCallVirtual)->UseRealTime();
  benchmark::RegisterBenchmark("BM_TaskCallStdFunction", BM_TaskCallStdFunction)
      ->ArgName("large_capture")
      ->Arg(0)
      ->Arg(1)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_QueueHandOff", BM_QueueHandOff)
      ->ArgNames({"per_push", "work_orders"})
      ->Args({1, n})
      ->Args({16, n})
      ->UseRealTime();
  // {workers, queries, min pending, max pending, policy}
  const int64_t configs[][5] = {
      {1, 1, 2, 64, 0},  {2, 1, 2, 64, 0}, {1, 1, 2, 2, 0},  {2, 1, 2, 2, 0},  {1, 1, 16, 16, 0},
      {2, 1, 16, 16, 0}, {2, 4, 2, 64, 0}, {2, 4, 2, 64, 1}, {2, 4, 2, 64, 2}, {2, 16, 2, 64, 0},
  };
  benchmark::internal::Benchmark* foreman = benchmark::RegisterBenchmark("BM_Foreman", BM_Foreman);
  foreman->ArgNames({"workers", "queries", "min_pending", "max_pending", "policy", "work_orders"});
  for (const auto& c : configs) foreman->Args({c[0], c[1], c[2], c[3], c[4], n});
  foreman->UseRealTime();
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  tessera::bench::ParseBenchmarkCommandLine(
      &argc, &argv,
      "empty work orders through the Foreman, the task abstraction and the queue, against an inline loop.\n"
      "usage: dispatch_benchmark [--work_orders=N] [--pin=0|1] [--benchmark_* flags]",
      __FILE__);
  if (argc > 1) {
    std::fprintf(stderr, "dispatch_benchmark: unexpected argument %s (see --help)\n", argv[1]);
    return 2;
  }
  if (FLAGS_work_orders < 16) {
    std::fprintf(stderr, "dispatch_benchmark: --work_orders must be at least 16\n");
    return 2;
  }
  benchmark::AddCustomContext("workers", FLAGS_pin != 0 ? "pinned" : "unpinned");
  tessera::RegisterBenchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
