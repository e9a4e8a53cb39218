#include "engine/table_compactor.h"

#include <algorithm>
#include <atomic>

#include "engine/session.h"
#include "engine/statement_handlers.h"
#include "glog/logging.h"

namespace tessera {

TableCompactor::~TableCompactor() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void TableCompactor::Request(const std::string& table, bool compress) { Enqueue(Job{table, compress, false}); }

void TableCompactor::RequestAnalyze(const std::string& table) { Enqueue(Job{table, false, true}); }

void TableCompactor::Enqueue(Job job) {
  absl::MutexLock lock(&mutex_);
  if (stopping_) return;
  auto same = [&](const Job& queued) { return queued.table == job.table && queued.analyze == job.analyze; };
  if (std::any_of(queue_.begin(), queue_.end(), same)) return;
  queue_.push_back(std::move(job));
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void TableCompactor::WaitIdle() {
  absl::MutexLock lock(&mutex_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return queue_.empty() && !running_; };
  mutex_.Await(absl::Condition(&idle));
}

int64_t TableCompactor::finished() const {
  absl::MutexLock lock(&mutex_);
  return finished_;
}

int64_t TableCompactor::failed() const {
  absl::MutexLock lock(&mutex_);
  return failed_;
}

void TableCompactor::Loop() {
  while (true) {
    Job job;
    {
      absl::MutexLock lock(&mutex_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return stopping_ || !queue_.empty(); };
      mutex_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, and nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
    }
    std::atomic<QueryId> running_query{0};
    const std::atomic<bool> never_cancelled{false};
    QueryRunOptions options;
    options.running_query = &running_query;
    options.cancel_requested = &never_cancelled;
    options.priority = 1;  // the lowest: every session's queries come first under a priority policy
    options.compress_loads = job.compress;
    const absl::Status status =
        job.analyze ? AnalyzeStaleTable(*database_, job.table) : CompactTable(*database_, job.table, options);
    if (!status.ok()) {
      LOG(WARNING) << "background " << (job.analyze ? "ANALYZE" : "compaction") << " of '" << job.table
                   << "' failed: " << status;
    }
    absl::MutexLock lock(&mutex_);
    running_ = false;
    ++finished_;
    failed_ += !status.ok();
  }
}

}  // namespace tessera
