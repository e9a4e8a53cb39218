#pragma once
// The facade that ties parser -> (binder, optimizer) -> execution together for one client.
//
// A Database owns everything shared (catalog, storage, buffer pool) for one data directory; it is thread-safe.
// A Session is one client's connection to it (settings such as priority); a Session is used by one thread at a time.

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/file_access.h"
#include "engine/query_result.h"
#include "engine/settings.h"
#include "scheduler/foreman.h"

namespace tessera {
namespace distributed {
class Cluster;
}

class Catalog;
class StorageManager;
class BufferPool;
class Topology;
class ResultSink;
class CopyChannel;
class ActivityProvider;
class TableCompactor;
struct QueryRunOptions;

// A database's scheduler defaults: ForemanOptions' with 1 ms time slices (ForemanOptions::dispatch_run_ns; with 8-16
// concurrent SSB streams +8-10% queries per second and fairer 500 ms CPU shares than one draw per work order,
// docs/decisions/0001-shared-scans.md). The work queued per worker stays ForemanOptions' 200 µs: 1 ms
// (`--worker-queue-us 1000`) wakes the scheduler thread 4x less often at 8 SSB SF10 streams (-7 to -11% CPU per
// query), but queues more of a query's work orders whose time is mispredicted, and a short query then waits behind
// seconds of them (decision 0001).
inline ForemanOptions DefaultDatabaseScheduler() {
  ForemanOptions options;
  options.dispatch_run_ns = 1'000'000;
  return options;
}

struct DatabaseOptions {
  std::string data_directory;
  // Buffer-pool budget in bytes for everything large; 0 = the default (BufferPool::DefaultBudgetBytes: from
  // /proc/meminfo, about 60% of physical memory).
  size_t memory_budget_bytes = 0;
  // Worker threads of the Foreman's pool, on which every work order runs; 0 = one per core.
  int worker_threads = 0;
  // fsync block files and the catalog at every commit.
  bool sync_writes = true;
  // The scheduler: policy, learning agent, work-order log. Its worker count comes from worker_threads; its
  // load controller's memory gauge is the buffer pool.
  ForemanOptions scheduler = DefaultDatabaseScheduler();
  // The load controller admits queries while their estimated memory fits under this fraction of the buffer-pool
  // budget (scheduler/load_controller.h); 0 turns admission control off.
  double admission_threshold = 0.9;
  // At most this many queries run at once; more wait in the policy's order (arrival, or shortest estimated first
  // under srpt / ifsrpt; LoadControlOptions::max_admitted). -1: two
  // per worker thread (on 2 cores, 16 concurrent SSB SF10 streams run 16-27% more queries per second with 4 than
  // with all 16 admitted); 0: no cap.
  int max_active_queries = -1;
  // A query the load controller suspends moves its temporary blocks and hash / aggregation tables to spill files
  // in the data directory's temp/ folder until it resumes, so that its memory goes to the query it was suspended
  // for (scheduler/load_controller.h). Off: suspended queries keep their memory resident.
  bool spill_suspended_queries = true;
  // Shared scans for sessions that do not SET scan_sharing (scheduler/schedulable_query.h, scheduler/README.md):
  // full by default (16 SSB streams: +25% queries per second, the same fair shares, nothing lost alone).
  ScanSharing scan_sharing = ScanSharing::kFull;
  // Which files COPY may read and write (engine/file_access.h): unrestricted unless a server restricts it.
  FileAccessPolicy file_access;
  // A `tessera-server --distributed` rank (distributed/README.md): its MPI world, null for a single server. On the
  // master (rank 0), DDL and INSERT into replicated tables also run on every other rank, COPY FROM routes rows to
  // their ranks, and scans of partitioned tables gather the other ranks' parts (engine/distributed_statements.h).
  distributed::Cluster* cluster = nullptr;
  // With `cluster`: the directory (outside the data directory, and allowed by `file_access`) where this rank
  // keeps the rows COPY routes to it while it loads them.
  std::string cluster_incoming_directory;
};

class Database {
 public:
  // Opens (creating if needed) the data directory, loads the catalog, and removes leftovers of interrupted loads.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const DatabaseOptions& options);
  ~Database();

  Catalog& catalog();
  StorageManager& storage();
  BufferPool& buffer_pool();
  // The scheduler that runs every query's work orders (one per database, shared by all sessions).
  Foreman& foreman();
  int64_t NextQueryId() { return next_query_id_.fetch_add(1); }
  // The server's sessions, for SHOW QUERIES and CANCEL QUERY (engine/query_activity.h); null: none. The provider
  // must outlive its installation (set it back to null before it goes).
  void set_activity_provider(ActivityProvider* provider) { activity_provider_.store(provider); }
  ActivityProvider* activity_provider() const { return activity_provider_.load(); }
  const DatabaseOptions& options() const { return options_; }
  // Background compaction of tables with many deleted rows (engine/table_compactor.h).
  TableCompactor& compactor() { return *compactor_; }

 private:
  explicit Database(DatabaseOptions options);

  DatabaseOptions options_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<BufferPool> buffer_pool_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<StorageManager> storage_;
  std::unique_ptr<Foreman> foreman_;
  std::unique_ptr<TableCompactor> compactor_;  // its compaction runs on the Foreman: goes first
  std::atomic<int64_t> next_query_id_{1};
  std::atomic<ActivityProvider*> activity_provider_{nullptr};
};

class Session {
 public:
  explicit Session(Database* database);
  ~Session();

  // Executes every ';'-separated statement in `sql` in order and returns the result of the last one. Stops at the
  // first error, whose message names the statement position (parser errors carry a caret). After Cancel() it
  // returns Cancelled and runs no further statement. With `sink`, the rows of a last statement that is a SELECT are
  // streamed to it as the query produces them (engine/result_sink.h; QueryResult::streamed_rows counts them);
  // every other statement's rows are returned in the result as without. With `copy`, COPY ... FROM STDIN reads its
  // data from it and COPY ... TO STDOUT writes to it (engine/copy_channel.h); without, they fail.
  absl::StatusOr<QueryResult> Execute(std::string_view sql, ResultSink* sink = nullptr, CopyChannel* copy = nullptr);

  // Thread-safe (any thread, e.g. a Ctrl-C watcher or an RPC): cancels the query Execute is running now and the
  // statements after it in the same call. A no-op when Execute is not running.
  void Cancel();
  // Thread-safe: progress of the query Execute is running now; NotFound when no query is running.
  absl::StatusOr<QueryProgress> RunningQueryProgress();
  // Thread-safe: the scheduler id of the query Execute is running now, 0 when none.
  QueryId running_query() const { return running_query_.load(); }

  Database& database() { return *database_; }
  // The priority of this session's queries under the scheduler's policy (SET priority = N; default 1).
  int priority() const;

 private:
  absl::StatusOr<QueryResult> ExecuteStatements(std::string_view sql, ResultSink* sink, CopyChannel* copy);
  // The settings and cancellation handles a query of this session runs with.
  QueryRunOptions RunOptions();

  Database* database_;
  // Session settings from SET, shown by SHOW name / SHOW ALL (engine/settings.h).
  SessionSettings settings_;
  // Set by ExecuteQuery while a query runs under the scheduler; read by Cancel/RunningQueryProgress.
  std::atomic<QueryId> running_query_{0};
  // Whether Execute is running, and whether Cancel was called during this Execute.
  std::atomic<bool> executing_{false};
  std::atomic<bool> cancel_requested_{false};
};

}  // namespace tessera
