#pragma once
// The catalog: tables (schema, storage segments, statistics) and views, persisted in the data directory.
//
// Table descriptors are immutable snapshots held by shared_ptr: a reader takes a snapshot and keeps a consistent
// view for the whole query while a loader installs a new descriptor (copy-on-write). Installing a descriptor
// rewrites the catalog file atomically, which is the commit point of DDL, COPY and INSERT: a process killed before
// it leaves the old catalog, and the loader's half-written segment files are removed as orphans at the next start.
//
// Thread-safe: every public method may be called from any thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "catalog/column_statistics.h"
#include "catalog/row_deletions.h"
#include "catalog/schema.h"

namespace tessera {

// Where one block of a segment file lives and what it holds.
struct BlockLocation {
  uint64_t file_offset = 0;
  uint32_t bytes = 0;
  uint32_t rows = 0;
};

// A segment is one immutable block file written by one load (COPY or INSERT): data/segment_<id>.blk.
struct SegmentDescriptor {
  uint64_t segment_id = 0;
  std::vector<BlockLocation> blocks;
  int64_t row_count = 0;  // rows stored in the file, deleted ones included
  // The deleted rows of each block (row_deletions.h): empty when none is deleted, else one entry per block, null
  // for a block without deletions.
  std::vector<std::shared_ptr<const DeletedRows>> deleted;

  // Shared by every copy of this descriptor, i.e. by every table version that lists the segment: it expires when
  // no version does, which is when VACUUM may delete a segment it replaced (engine/dml_statements.cc).
  std::shared_ptr<const char> listed = std::make_shared<const char>(0);

  const DeletedRows* DeletedIn(size_t block) const { return deleted.empty() ? nullptr : deleted[block].get(); }
};

constexpr uint32_t kDefaultBlockSizeBytes = 2u << 20;
constexpr uint32_t kMinBlockSizeBytes = 64u << 10;
constexpr uint32_t kMaxBlockSizeBytes = 256u << 20;

struct TableDescriptor {
  uint32_t table_id = 0;
  std::string name;
  std::vector<ColumnSchema> columns;
  uint32_t block_size_bytes = kDefaultBlockSizeBytes;
  std::vector<SegmentDescriptor> segments;
  int64_t row_count = 0;                     // live rows (deleted ones not counted)
  std::vector<ColumnStatistics> statistics;  // one per column
  // Rows deleted (DELETE, UPDATE's old rows) since ANALYZE last described the live rows alone. While it is not
  // zero, min / max and the distinct estimates of `statistics` are estimates that may still cover deleted rows
  // (bounds); row_count and the null counts are exact either way (a DELETE or UPDATE subtracts its deleted rows'
  // NULLs at its commit).
  int64_t stale_rows = 0;
  // CREATE TABLE ... PARTITION BY HASH (column): in a distributed cluster (distributed/README.md) each rank holds
  // the rows whose column value hashes to it; -1: replicated (every rank holds every row), and every table of a
  // single server is read whole whatever this says.
  int partition_column = -1;

  int64_t BlockCount() const;
};

struct ViewDescriptor {
  std::string name;
  std::vector<std::string> column_names;
  std::string query_text;
};

class Catalog {
 public:
  // Opens the catalog in `data_directory` (creating an empty one if there is none). `sync` controls fsync on
  // every commit. The catalog holds an exclusive flock on `<data_directory>/LOCK` (which records the holder's pid)
  // until it is destroyed: a second opener, in this process or another, gets FailedPrecondition "data directory
  // '...' is in use by another server or shell (pid N); ..." instead of two writers losing each other's commits.
  static absl::StatusOr<std::unique_ptr<Catalog>> Open(const std::string& data_directory, bool sync);

  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // Errors: NotFound "table 'x' does not exist" (with "did you mean 'y'?" when a name is close).
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> GetTable(const std::string& name) const;
  absl::StatusOr<std::shared_ptr<const ViewDescriptor>> GetView(const std::string& name) const;
  bool HasTable(const std::string& name) const;
  bool HasView(const std::string& name) const;
  std::vector<std::shared_ptr<const TableDescriptor>> ListTables() const;  // sorted by name
  std::vector<std::shared_ptr<const ViewDescriptor>> ListViews() const;    // sorted by name

  // Creates a table from `table` (its id, statistics and segments are filled in here). Errors: AlreadyExists.
  absl::Status CreateTable(TableDescriptor table);
  // Removes the table and returns its last descriptor (so the caller can release its segments).
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> DropTable(const std::string& name);
  absl::Status CreateView(ViewDescriptor view, bool or_replace);
  absl::Status DropView(const std::string& name);

  // Commits `updated` as the new version of its table iff the current version is still `expected` (the snapshot
  // the caller started from); otherwise returns Aborted (a concurrent change won). Persists before returning.
  absl::Status ReplaceTable(const std::shared_ptr<const TableDescriptor>& expected,
                            std::shared_ptr<const TableDescriptor> updated);

  // Unique ids for new segment files; never reused, persisted with the catalog.
  uint64_t AllocateSegmentId();

  // Every segment id referenced by some table (to find orphaned files at startup).
  std::vector<uint64_t> LiveSegmentIds() const;

  const std::string& data_directory() const { return data_directory_; }

 private:
  Catalog(std::string data_directory, bool sync) : data_directory_(std::move(data_directory)), sync_(sync) {}
  absl::Status Load();
  absl::Status LockDirectory();
  absl::Status PersistLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::Status NotFoundWithHint(const std::string& kind, const std::string& name) const
      ABSL_SHARED_LOCKS_REQUIRED(mutex_);

  const std::string data_directory_;
  const bool sync_;
  int lock_fd_ = -1;  // holds the flock on the LOCK file
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<const TableDescriptor>> tables_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, std::shared_ptr<const ViewDescriptor>> views_ ABSL_GUARDED_BY(mutex_);
  uint32_t next_table_id_ ABSL_GUARDED_BY(mutex_) = 1;
  uint64_t next_segment_id_ ABSL_GUARDED_BY(mutex_) = 1;
};

}  // namespace tessera
