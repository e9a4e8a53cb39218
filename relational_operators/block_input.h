#pragma once
// Where an operator's blocks come from: a base table (its blocks are pinned through the storage manager while a
// work order reads them) or an upstream operator's temporary relation.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/catalog.h"
#include "relational_operators/temporary_relation.h"
#include "relational_operators/work_order.h"
#include "storage/storage_manager.h"

namespace tessera {

// Where the scans of one base table are, shared by every query of the process (circular scans,
// scheduler/README.md): the QueryManager registers each running scan of the table and moves the cursor to the
// block of every scan work order it hands out. A scan that starts while scans of other queries run begins at the
// cursor's block and wraps around, so it first reads the blocks the running scans are reading (and shares them),
// then the ones it missed: every block exactly once. A lone scan reads in storage order.
// Threading: any thread; relaxed atomics (a stale value only moves where a scan begins).
class ScanCursor {
 public:
  // The cursor of table `table_id` of `storage`; lives as long as the process.
  static ScanCursor* For(const StorageManager* storage, uint32_t table_id);

  void BeginScan() { scans_.fetch_add(1, std::memory_order_relaxed); }
  void EndScan() { scans_.fetch_sub(1, std::memory_order_relaxed); }
  int scans() const { return scans_.load(std::memory_order_relaxed); }
  void Advance(uint32_t position) { position_.store(position, std::memory_order_relaxed); }
  uint32_t position() const { return position_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> scans_{0};
  std::atomic<uint32_t> position_{0};
};

// A block readable by one work order; keeps a base block pinned while alive.
struct PinnedBlock {
  BlockView view;
  BlockHandle pin;  // empty for temporary blocks
  // Base blocks: the rows the table snapshot has deleted (null: none; BlockScanner::SetBlockRows) and the block's
  // ordinal in the snapshot (for row ids, catalog/row_deletions.h).
  const DeletedRows* deleted = nullptr;
  uint32_t ordinal = 0;
};

class BlockInput {
 public:
  // A base table: every block of the snapshot, in storage order.
  static BlockInput FromTable(std::shared_ptr<const TableDescriptor> table, StorageManager* storage);
  // An upstream operator's output; blocks arrive through FeedInputBlock.
  static BlockInput FromRelation(std::shared_ptr<TemporaryRelation> relation);

  bool is_table() const { return table_ != nullptr; }
  const std::vector<ColumnSchema>& schema() const { return is_table() ? table_->columns : relation_->schema(); }
  // For base tables: the number of blocks (all known up front).
  size_t table_block_count() const { return table_blocks_.size(); }
  // Home NUMA node of base-table block `i`; -1 for temporary blocks and on single-node machines.
  int HomeNode(size_t i) const;

  // Rows in the blocks before block `i` (O(i); for error messages that number rows across blocks), also for
  // blocks of a relation already released.
  int64_t RowsBefore(size_t i) const;

  // Pins base-table block `i`, or returns temporary block `i`. A damaged block file (DataLoss) fails with a
  // message that names the table and, when known, the column, besides the storage manager's file and offset.
  absl::StatusOr<PinnedBlock> Pin(size_t i) const;

  // For base-table block `i`: its shared-scan tag (work_order.h); empty for temporary blocks.
  SharedScanTag SharedScanTagFor(size_t i) const;
  // The table's scan cursor; null for temporary relations.
  ScanCursor* cursor() const { return cursor_; }

 private:
  absl::Status NameDamage(const absl::Status& status) const;

  std::shared_ptr<const TableDescriptor> table_;
  StorageManager* storage_ = nullptr;
  std::vector<BlockId> table_blocks_;
  std::vector<const DeletedRows*> table_deleted_;  // per block of table_blocks_; owned by table_
  ScanCursor* cursor_ = nullptr;
  std::shared_ptr<TemporaryRelation> relation_;
};

// The blocks an operator still has to hand out as work orders, one per block: all blocks of a base table at the
// first call, or the blocks of an upstream relation as they are fed. Used on the scheduler thread only.
class BlockWorkQueue {
 public:
  void Feed(uint32_t block) { pending_.push_back(block); }
  void DoneFeeding() { done_feeding_ = true; }
  using MakeWorkOrder = std::function<std::unique_ptr<WorkOrder>(uint32_t block, int node)>;
  // Appends `make(block, home NUMA node or -1)` to `out` once for every block of `input` not handed out yet;
  // returns true when every block has been handed out and no more will come. Base-table blocks come in storage
  // order, each work order tagged for shared scans (SharedScanTagFor).
  bool IssueAll(const BlockInput& input, std::vector<std::unique_ptr<WorkOrder>>* out, const MakeWorkOrder& make);

 private:
  std::deque<uint32_t> pending_;
  bool done_feeding_ = false;
  bool table_blocks_issued_ = false;
};

}  // namespace tessera
