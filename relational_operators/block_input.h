#pragma once
// Where an operator's blocks come from: a base table (its blocks are pinned through the storage manager while a
// work order reads them) or an upstream operator's temporary relation.

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

  // Pins base-table block `i`, or returns temporary block `i`.
  absl::StatusOr<PinnedBlock> Pin(size_t i) const;

 private:
  std::shared_ptr<const TableDescriptor> table_;
  StorageManager* storage_ = nullptr;
  std::vector<BlockId> table_blocks_;
  std::shared_ptr<TemporaryRelation> relation_;
};

}  // namespace tessera
