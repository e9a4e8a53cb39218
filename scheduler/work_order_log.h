#pragma once
// The work-order log: one JSON object per line for every executed work order,
//   {"query":3,"operator":1,"worker":0,"start_ns":123,"end_ns":456,"rows":1000}
// with monotonic nanosecond times (common/clock.h). benchmarks/scheduler/plot_cpu_share.py turns a log into a
// per-query CPU-share timeline; dissertation §3.8.3 measures every policy this way.
//
// Append copies a small record into a buffer under a mutex (no formatting, no I/O); a background thread
// formats and writes batches, so logging costs the Foreman thread a few tens of nanoseconds per work order.
//
// Rotation: with `max_bytes` > 0, once the file has that many bytes the writer renames it to `path`.1 (replacing
// the one before) and starts `path` again, so a live server's log holds between max_bytes and twice that.
//
// Threading: Append and Flush from any thread; Close (or the destructor) once.

#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/schedulable_query.h"

namespace tessera {

class WorkOrderLog {
 public:
  // Creates or truncates `path`; `max_bytes` > 0 rotates it at that size (above).
  static absl::StatusOr<std::unique_ptr<WorkOrderLog>> Open(const std::string& path, size_t max_bytes = 0);
  ~WorkOrderLog();

  WorkOrderLog(const WorkOrderLog&) = delete;
  WorkOrderLog& operator=(const WorkOrderLog&) = delete;

  void Append(const WorkOrderCompletion& record);
  // Blocks until everything appended so far is written to the file.
  void Flush();
  // Flushes and closes; returns the first write error.
  absl::Status Close();

  // The JSON line for one record (without the newline).
  static std::string FormatLine(const WorkOrderCompletion& record);

 private:
  WorkOrderLog(std::FILE* file, std::string path, size_t max_bytes);
  void WriterLoop();
  // The writer thread: `path_` becomes `path_`.1 and a new `path_` is opened; false on failure.
  bool Rotate();

  std::FILE* file_;
  const std::string path_;
  const size_t max_bytes_;
  size_t file_bytes_ = 0;  // written to the current file (the writer thread's)
  std::mutex mu_;
  std::condition_variable cv_;       // wakes the writer
  std::condition_variable flushed_;  // wakes Flush callers
  std::vector<WorkOrderCompletion> pending_;
  uint64_t appended_ = 0;  // records appended so far
  uint64_t written_ = 0;   // records written so far
  bool closing_ = false;
  bool write_failed_ = false;
  bool writer_done_ = false;
  std::thread writer_;
};

}  // namespace tessera
