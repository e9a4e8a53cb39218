#pragma once
// Shared helpers for the Foreman tests.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "scheduler/foreman.h"
#include "scheduler/synthetic_query.h"

namespace tessera {

// Options for tests on a small, shared machine: few unpinned workers, fixed seed.
inline ForemanOptions TestForemanOptions(int workers, const std::string& policy = "fair") {
  ForemanOptions options;
  options.pool.num_workers = workers;
  options.pool.pin_to_cpus = false;
  options.random_seed = 1234;
  absl::StatusOr<PolicyOptions> parsed = ParsePolicy(policy);
  EXPECT_TRUE(parsed.ok());
  options.policy = *parsed;
  return options;
}

inline std::unique_ptr<Foreman> MakeForeman(const ForemanOptions& options) {
  absl::StatusOr<std::unique_ptr<Foreman>> foreman = Foreman::Create(options);
  EXPECT_TRUE(foreman.ok()) << foreman.status();
  return foreman.ok() ? std::move(*foreman) : nullptr;
}

inline QueryHandle SubmitOrDie(Foreman& foreman, std::shared_ptr<SchedulableQuery> query) {
  absl::StatusOr<QueryHandle> handle = foreman.Submit(std::move(query));
  EXPECT_TRUE(handle.ok()) << handle.status();
  return *handle;
}

// Polls `condition` until true; generous limit, so a slow machine only makes the test slower.
inline bool WaitUntil(const std::function<bool()>& condition, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Work orders each query was given while all of them were active: between the latest first dispatch and the
// earliest last dispatch (global dispatch sequence numbers from a shared dispatch clock).
inline std::vector<int64_t> DispatchCountsWhileAllActive(const std::vector<const SyntheticQuery*>& queries) {
  int64_t start = 0;
  int64_t end = INT64_MAX;
  for (const SyntheticQuery* q : queries) {
    start = std::max(start, q->dispatch_sequence().front());
    end = std::min(end, q->dispatch_sequence().back());
  }
  std::vector<int64_t> counts;
  for (const SyntheticQuery* q : queries) {
    const auto& seq = q->dispatch_sequence();
    counts.push_back(std::count_if(seq.begin(), seq.end(), [&](int64_t s) { return s >= start && s <= end; }));
  }
  return counts;
}

// True if no other query was dispatched between `query`'s first and last dispatch.
inline bool DispatchedContiguously(const SyntheticQuery& query) {
  const auto& seq = query.dispatch_sequence();
  return !seq.empty() && seq.back() - seq.front() + 1 == static_cast<int64_t>(seq.size());
}

}  // namespace tessera
