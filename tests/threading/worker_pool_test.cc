#include "threading/worker_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "threading/cpu_affinity.h"

namespace tessera {
namespace {

// Records what it ran and where.
class RecordingTask final : public Task {
 public:
  RecordingTask(int id, int64_t spin_ns) : id_(id), spin_ns_(spin_ns) {}
  void Run(const WorkerContext& context) override {
    const int64_t until = MonotonicNanos() + spin_ns_;
    while (MonotonicNanos() < until) {
    }
    ran_on_worker_ = context.worker_id;
    ran_on_cpu_ = CurrentCpu();
    context_cpu_ = context.cpu;
    node_ = context.node;
  }
  int id_;
  int64_t spin_ns_;
  int ran_on_worker_ = -1;
  int ran_on_cpu_ = -1;
  int context_cpu_ = -1;
  int node_ = -1;
};

// Collects completions and retire notices; events are numbered so tests can check their order.
class RecordingSink final : public TaskCompletionSink {
 public:
  struct Done {
    int task_id;
    int worker_id;
    int ran_on_worker;
    int ran_on_cpu;
    int context_cpu;
    int node;
    int64_t start_ns;
    int64_t end_ns;
    int64_t event;
  };
  void OnTasksFinished(std::span<TaskCompletion> completions) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (TaskCompletion& c : completions) {
      auto* task = static_cast<RecordingTask*>(c.task.get());
      done_.push_back(Done{task->id_, c.worker_id, task->ran_on_worker_, task->ran_on_cpu_, task->context_cpu_,
                           task->node_, c.start_ns, c.end_ns, next_event_++});
      c.task.reset();
    }
    cv_.notify_all();
  }
  void OnWorkerRetired(int worker_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    retired_.emplace_back(worker_id, next_event_++);
    cv_.notify_all();
  }
  // Waits until `count` completions arrived (generous timeout; a failure shows up as a count mismatch).
  std::vector<Done> WaitForCompletions(size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return done_.size() >= count; });
    return done_;
  }
  std::vector<std::pair<int, int64_t>> WaitForRetired(size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return retired_.size() >= count; });
    return retired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Done> done_;
  std::vector<std::pair<int, int64_t>> retired_;
  int64_t next_event_ = 0;
};

std::vector<std::unique_ptr<Task>> MakeTasks(int first_id, int count, int64_t spin_ns) {
  std::vector<std::unique_ptr<Task>> tasks;
  for (int i = 0; i < count; ++i) tasks.push_back(std::make_unique<RecordingTask>(first_id + i, spin_ns));
  return tasks;
}

TEST(WorkerPoolTest, StartsOneWorkerPerCpuByDefaultAndRunsEverything) {
  RecordingSink sink;
  absl::StatusOr<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(WorkerPoolOptions{}, &sink);
  ASSERT_TRUE(pool.ok()) << pool.status();
  const std::vector<WorkerInfo> workers = (*pool)->Workers();
  ASSERT_EQ(workers.size(), AllowedCpus().size());
  int next_id = 0;
  for (const WorkerInfo& worker : workers) {
    auto tasks = MakeTasks(next_id, 100, 0);
    next_id += 100;
    ASSERT_TRUE((*pool)->Submit(worker.worker_id, &tasks));
  }
  std::vector<RecordingSink::Done> done = sink.WaitForCompletions(next_id);
  ASSERT_EQ(done.size(), static_cast<size_t>(next_id));
  std::vector<int> seen(next_id, 0);
  for (const auto& d : done) {
    ++seen[d.task_id];
    EXPECT_EQ(d.worker_id, d.ran_on_worker);
    EXPECT_LE(d.start_ns, d.end_ns);
    // Task ids were handed out per worker in blocks of 100.
    EXPECT_EQ(workers[d.task_id / 100].worker_id, d.worker_id);
  }
  for (int count : seen) EXPECT_EQ(count, 1);
}

TEST(WorkerPoolTest, PinnedWorkersRunOnTheirCpuAndKnowTheirNode) {
  RecordingSink sink;
  WorkerPoolOptions options;
  options.cpus = AllowedCpus();
  options.num_workers = static_cast<int>(options.cpus.size());
  options.node_of_cpu = [](int cpu) { return cpu % 2 == 0 ? 10 : 11; };
  absl::StatusOr<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(options, &sink);
  ASSERT_TRUE(pool.ok()) << pool.status();
  std::vector<WorkerInfo> workers = (*pool)->Workers();
  for (size_t i = 0; i < workers.size(); ++i) {
    auto tasks = MakeTasks(static_cast<int>(i), 1, 0);
    ASSERT_TRUE((*pool)->Submit(workers[i].worker_id, &tasks));
  }
  std::vector<RecordingSink::Done> done = sink.WaitForCompletions(workers.size());
  ASSERT_EQ(done.size(), workers.size());
  for (const auto& d : done) {
    const WorkerInfo& worker = workers[d.task_id];
    EXPECT_EQ(worker.cpu, options.cpus[d.task_id]);
    EXPECT_EQ(d.node, worker.cpu % 2 == 0 ? 10 : 11);
    if (worker.pinned) {
      EXPECT_EQ(d.context_cpu, worker.cpu);
      EXPECT_EQ(d.ran_on_cpu, worker.cpu);
    }
  }
}

TEST(WorkerPoolTest, RemovedWorkerFinishesItsQueueBeforeRetiring) {
  RecordingSink sink;
  WorkerPoolOptions options;
  options.num_workers = 2;
  options.pin_to_cpus = false;
  auto pool = WorkerPool::Create(options, &sink);
  ASSERT_TRUE(pool.ok());
  const int victim = (*pool)->Workers()[1].worker_id;
  auto tasks = MakeTasks(0, 200, 20'000);  // ~4 ms of queued work
  ASSERT_TRUE((*pool)->Submit(victim, &tasks));
  ASSERT_TRUE((*pool)->RemoveWorker(victim).ok());
  EXPECT_EQ((*pool)->NumWorkers(), 1);
  EXPECT_EQ((*pool)->RemoveWorker(victim).code(), absl::StatusCode::kNotFound);
  auto more = MakeTasks(1000, 1, 0);
  EXPECT_FALSE((*pool)->Submit(victim, &more));
  EXPECT_EQ(more.size(), 1u);

  std::vector<RecordingSink::Done> done = sink.WaitForCompletions(200);
  auto retired = sink.WaitForRetired(1);
  ASSERT_EQ(done.size(), 200u);
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_EQ(retired[0].first, victim);
  for (const auto& d : done) EXPECT_LT(d.event, retired[0].second) << "completion reported after retirement";
}

TEST(WorkerPoolTest, GrowAndShrinkUnderLoadLosesNothing) {
  RecordingSink sink;
  WorkerPoolOptions options;
  options.num_workers = 2;
  options.pin_to_cpus = false;
  options.max_workers = 64;  // removed workers keep their id until they have drained
  auto pool = WorkerPool::Create(options, &sink);
  ASSERT_TRUE(pool.ok());
  int submitted = 0;
  int retired_expected = 0;
  const int sizes[] = {4, 1, 3, 2, 5, 1, 2};
  for (int round = 0; round < 7; ++round) {
    std::vector<WorkerInfo> workers = (*pool)->Workers();
    for (int i = 0; i < 50; ++i) {
      auto tasks = MakeTasks(submitted, 3, 5'000);
      submitted += 3;
      ASSERT_TRUE((*pool)->Submit(workers[i % workers.size()].worker_id, &tasks));
    }
    const int target = sizes[round];
    while ((*pool)->NumWorkers() < target) ASSERT_TRUE((*pool)->AddWorker().ok());
    workers = (*pool)->Workers();
    for (int i = static_cast<int>(workers.size()) - 1; i >= target; --i) {
      ASSERT_TRUE((*pool)->RemoveWorker(workers[i].worker_id).ok());
      ++retired_expected;
    }
    ASSERT_EQ((*pool)->NumWorkers(), target);
  }
  std::vector<RecordingSink::Done> done = sink.WaitForCompletions(submitted);
  ASSERT_EQ(done.size(), static_cast<size_t>(submitted));
  std::vector<int> seen(submitted, 0);
  for (const auto& d : done) ++seen[d.task_id];
  for (int id = 0; id < submitted; ++id) ASSERT_EQ(seen[id], 1) << "task " << id;
  EXPECT_EQ(sink.WaitForRetired(retired_expected).size(), static_cast<size_t>(retired_expected));
  (*pool)->Shutdown();
}

TEST(WorkerPoolTest, ReusesARetiredWorkersIdOnlyAfterItExited) {
  RecordingSink sink;
  WorkerPoolOptions options;
  options.num_workers = 1;
  options.max_workers = 1;
  options.pin_to_cpus = false;
  auto pool = WorkerPool::Create(options, &sink);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ((*pool)->AddWorker().status().code(), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE((*pool)->RemoveWorker(0).ok());
  sink.WaitForRetired(1);
  absl::StatusOr<int> id;
  for (int attempt = 0; attempt < 10000; ++attempt) {  // the thread exits just after reporting
    id = (*pool)->AddWorker();
    if (id.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 0);
  auto tasks = MakeTasks(0, 5, 0);
  ASSERT_TRUE((*pool)->Submit(*id, &tasks));
  EXPECT_EQ(sink.WaitForCompletions(5).size(), 5u);
}

TEST(WorkerPoolTest, RejectsBadOptions) {
  WorkerPoolOptions options;
  options.num_workers = 4;
  options.max_workers = 2;
  EXPECT_EQ(WorkerPool::Create(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  options = WorkerPoolOptions();
  options.cpus = {-3};
  EXPECT_EQ(WorkerPool::Create(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WorkerPoolTest, RunsTasksWithoutASink) {
  std::atomic<int> ran{0};
  class CountingTask final : public Task {
   public:
    explicit CountingTask(std::atomic<int>* ran) : ran_(ran) {}
    void Run(const WorkerContext&) override { ran_->fetch_add(1); }
    std::atomic<int>* ran_;
  };
  WorkerPoolOptions options;
  options.num_workers = 1;
  options.pin_to_cpus = false;
  auto pool = WorkerPool::Create(options, nullptr);
  ASSERT_TRUE(pool.ok());
  std::vector<std::unique_ptr<Task>> tasks;
  for (int i = 0; i < 1000; ++i) tasks.push_back(std::make_unique<CountingTask>(&ran));
  ASSERT_TRUE((*pool)->Submit(0, &tasks));
  (*pool)->Shutdown();  // drains the queue first
  EXPECT_EQ(ran.load(), 1000);
}

}  // namespace
}  // namespace tessera
