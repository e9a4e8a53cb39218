#pragma once
// Where an operator's blocks come from: a base table (its blocks are pinned through the storage manager while a
// work order reads them) or an upstream operator's temporary relation.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/catalog.h"
#include "relational_operators/temporary_relation.h"
#include "storage/storage_manager.h"

namespace tessera {

// A block readable by one work order; keeps a base block pinned while alive.
struct PinnedBlock {
  BlockView view;
  BlockHandle pin;  // empty for temporary blocks
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

  // Pins base-table block `i`, or returns temporary block `i`.
  absl::StatusOr<PinnedBlock> Pin(size_t i) const;

 private:
  std::shared_ptr<const TableDescriptor> table_;
  StorageManager* storage_ = nullptr;
  std::vector<BlockId> table_blocks_;
  std::shared_ptr<TemporaryRelation> relation_;
};

// The blocks an operator still has to hand out as work orders, one per block: all blocks of a base table at the
// first call, or the blocks of an upstream relation as they are fed. Used on the scheduler thread only.
class BlockWorkQueue {
 public:
  void Feed(uint32_t block) { pending_.push_back(block); }
  void DoneFeeding() { done_feeding_ = true; }
  // Calls `issue(block, home NUMA node or -1)` once for every block of `input` not handed out yet; returns true
  // when every block has been handed out and no more will come.
  bool IssueAll(const BlockInput& input, const std::function<void(uint32_t, int)>& issue);

 private:
  std::deque<uint32_t> pending_;
  bool done_feeding_ = false;
  bool table_blocks_issued_ = false;
};

}  // namespace tessera
