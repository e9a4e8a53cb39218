#pragma once
// The new segment that one load (INSERT ... SELECT, COPY FROM) writes into a base table, shared by the load
// operator's work orders, and its commit.
//
// Each load work order builds base blocks with its own LoadBlockWriter over writer() (blocks are written to the
// segment file as they are built) and hands what it built to AddPart under the ordinal of its input (the input
// block or the file chunk), so the segment lists its blocks in input order whatever order the work orders finish
// in. After the last of them the operator issues one CommitWorkOrder, which installs the rows through the
// CommitFunction (catalog version + StorageManager::RegisterSegment) exactly once. A load destroyed without a
// successful commit (a work order failed, the query was cancelled) removes its segment file and frees its blocks:
// the table is unchanged.
//
// Threading: AddPart and the accessors from any thread; Commit once, after every AddPart has returned.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "absl/status/status.h"
#include "catalog/catalog.h"
#include "relational_operators/work_order.h"
#include "storage/delimited_file.h"
#include "storage/storage_manager.h"

namespace tessera {

class TableLoad {
 public:
  // Installs `rows` (every part, in ordinal order) written by `writer` (not yet finished) as a new segment of the
  // table; with no rows it changes nothing. Runs on a worker thread.
  using CommitFunction = std::function<absl::Status(std::unique_ptr<SegmentWriter> writer, LoadedRows rows)>;

  TableLoad(std::shared_ptr<const TableDescriptor> table, StorageManager* storage,
            std::unique_ptr<SegmentWriter> writer, CommitFunction commit);

  // The table version the load was planned against (its columns, types, block size).
  const TableDescriptor& table() const { return *table_; }
  StorageManager& storage() const { return *storage_; }
  SegmentWriter& writer() const { return *writer_; }
  // Whether the load's blocks are compressed (SET compression; default on). Before the first work order.
  bool compress() const { return compress_; }
  void set_compress(bool compress) { compress_ = compress; }

  // Records the rows one work order loaded. Each ordinal at most once.
  void AddPart(uint64_t ordinal, LoadedRows rows);
  // Parts recorded so far.
  int64_t parts() const { return parts_.load(std::memory_order_acquire); }

  // Commits every part. Call once, after the last AddPart.
  absl::Status Commit();
  // Frees the parts and removes the segment file unless the load committed; later calls do nothing. The load
  // operator calls it when it is destroyed, so that blocks counted in its query's memory account are freed before
  // the account goes, whoever else still holds the TableLoad.
  void Abandon();
  bool committed() const { return committed_.load(std::memory_order_acquire); }
  // Rows the load committed (0 before the commit).
  int64_t committed_rows() const { return committed_rows_.load(std::memory_order_acquire); }

 private:
  const std::shared_ptr<const TableDescriptor> table_;
  StorageManager* const storage_;
  std::unique_ptr<SegmentWriter> writer_;
  const CommitFunction commit_;
  std::mutex mutex_;
  std::map<uint64_t, LoadedRows> parts_by_ordinal_;
  std::atomic<int64_t> parts_{0};
  std::atomic<bool> committed_{false};
  std::atomic<int64_t> committed_rows_{0};
  bool compress_ = true;
};

// The last work order of a load operator: TableLoad::Commit. rows_out() is the rows committed.
class CommitWorkOrder : public WorkOrder {
 public:
  CommitWorkOrder(int operator_index, std::shared_ptr<TableLoad> load)
      : WorkOrder(operator_index, -1), load_(std::move(load)) {}
  absl::Status Execute(const WorkOrderContext& context) override;

 private:
  std::shared_ptr<TableLoad> load_;
};

}  // namespace tessera
