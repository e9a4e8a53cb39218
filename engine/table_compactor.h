#pragma once
// Background compaction of tables with many deleted rows, and their automatic ANALYZE (#19). A DELETE or UPDATE
// that leaves more than the session's compaction_threshold of a table's stored rows deleted asks its database's
// TableCompactor to compact the table, one past auto_analyze_threshold to analyze it, and returns at once; one
// thread per database (started at the first request) runs the requests one after another through CompactTable
// (statement_handlers.h), VACUUM's path: the live rows of the segments with deletions copied into a new segment on
// that thread (not under the Foreman: its policy does not see it), committed atomically in one catalog commit. Readers
// are never blocked (they keep the version they started with); DELETE / UPDATE / VACUUM wait while it runs
// (statements and compactions run one at a time), loads do not.
//
// Thread-safe.

#include <cstdint>
#include <deque>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace tessera {

class Database;

class TableCompactor {
 public:
  explicit TableCompactor(Database* database) : database_(database) {}
  // Runs the requests still queued and waits for them: a compaction requested is done before the database closes
  // (each is atomic, so a process that dies meanwhile leaves every table as before or as after its compaction).
  ~TableCompactor();
  TableCompactor(const TableCompactor&) = delete;
  TableCompactor& operator=(const TableCompactor&) = delete;

  // Queues a compaction of `table` (once: a table already queued is not queued again). `compress`: whether the new
  // blocks are compressed (SET compression of the requesting session).
  void Request(const std::string& table, bool compress);
  // Queues an ANALYZE of `table` (once), run after the compactions queued so far; skipped when the table's
  // statistics are exact by then (stale_rows = 0: a compaction of all its segments made them so).
  void RequestAnalyze(const std::string& table);
  // Blocks until no compaction is queued or running (tests, benchmarks).
  void WaitIdle();
  // Jobs (compactions and ANALYZEs) finished so far (failed ones included), and of those the failures.
  int64_t finished() const;
  int64_t failed() const;

 private:
  struct Job {
    std::string table;
    bool compress;
    bool analyze;  // an ANALYZE, not a compaction
  };
  void Enqueue(Job job);
  void Loop();

  Database* const database_;
  mutable absl::Mutex mutex_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mutex_);
  bool running_ ABSL_GUARDED_BY(mutex_) = false;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  int64_t finished_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t failed_ ABSL_GUARDED_BY(mutex_) = 0;
  std::thread thread_;  // started by the first Request
};

}  // namespace tessera
