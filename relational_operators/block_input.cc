#include "relational_operators/block_input.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace tessera {

ScanCursor* ScanCursor::For(const StorageManager* storage, uint32_t table_id) {
  struct Registry {
    absl::Mutex mutex;
    absl::flat_hash_map<std::pair<const StorageManager*, uint32_t>, std::unique_ptr<ScanCursor>> cursors;
  };
  static Registry* const registry = new Registry;  // never destroyed: cursors outlive every query
  absl::MutexLock lock(&registry->mutex);
  std::unique_ptr<ScanCursor>& cursor = registry->cursors[{storage, table_id}];
  if (cursor == nullptr) cursor = std::make_unique<ScanCursor>();
  return cursor.get();
}

BlockInput BlockInput::FromTable(std::shared_ptr<const TableDescriptor> table, StorageManager* storage) {
  BlockInput input;
  input.storage_ = storage;
  for (const SegmentDescriptor& segment : table->segments) {
    for (uint32_t b = 0; b < segment.blocks.size(); ++b) {
      input.table_blocks_.push_back(BlockId{segment.segment_id, b});
      input.table_deleted_.push_back(segment.DeletedIn(b));
    }
  }
  input.cursor_ = ScanCursor::For(storage, table->table_id);
  input.table_ = std::move(table);
  return input;
}

BlockInput BlockInput::FromRelation(std::shared_ptr<TemporaryRelation> relation) {
  BlockInput input;
  input.relation_ = std::move(relation);
  return input;
}

int BlockInput::HomeNode(size_t i) const {
  if (!is_table() || storage_->topology().NumNodes() <= 1) return -1;
  return storage_->HomeNode(table_blocks_[i]);
}

int64_t BlockInput::RowsBefore(size_t i) const {
  if (!is_table()) return relation_->RowsBefore(static_cast<uint32_t>(i));
  int64_t rows = 0;
  size_t seen = 0;
  for (const SegmentDescriptor& segment : table_->segments) {
    for (const BlockLocation& block : segment.blocks) {
      if (seen++ == i) return rows;
      rows += block.rows;
    }
  }
  return rows;
}

absl::StatusOr<PinnedBlock> BlockInput::Pin(size_t i) const {
  PinnedBlock pinned;
  if (is_table()) {
    absl::StatusOr<BlockHandle> handle = storage_->PinBlock(table_blocks_[i]);
    if (!handle.ok()) return NameDamage(handle.status());
    pinned.view = handle->view();
    pinned.pin = *std::move(handle);
    pinned.deleted = table_deleted_[i];
    pinned.ordinal = static_cast<uint32_t>(i);
  } else {
    pinned.view = relation_->block(static_cast<uint32_t>(i));
  }
  return pinned;
}

absl::Status BlockInput::NameDamage(const absl::Status& status) const {
  if (status.code() != absl::StatusCode::kDataLoss) return status;
  std::string where = absl::StrCat("table '", table_->name, "'");
  auto payload = status.GetPayload(BlockView::kDamagedColumnPayload);
  size_t column = 0;
  if (payload.has_value() && absl::SimpleAtoi(std::string(*payload), &column) && column < table_->columns.size()) {
    absl::StrAppend(&where, ", column '", table_->columns[column].name, "'");
  }
  return absl::DataLossError(absl::StrCat(where, ": ", status.message()));
}

SharedScanTag BlockInput::SharedScanTagFor(size_t i) const {
  if (!is_table()) return {};
  return SharedScanTag{table_blocks_[i].Packed() + 1, cursor_, static_cast<uint32_t>(i)};
}

bool BlockWorkQueue::IssueAll(const BlockInput& input, std::vector<std::unique_ptr<WorkOrder>>* out,
                              const MakeWorkOrder& make) {
  if (input.is_table()) {
    if (!table_blocks_issued_) {
      for (size_t i = 0; i < input.table_block_count(); ++i) {
        std::unique_ptr<WorkOrder> work_order = make(static_cast<uint32_t>(i), input.HomeNode(i));
        work_order->set_shared_scan(input.SharedScanTagFor(i));
        out->push_back(std::move(work_order));
      }
      table_blocks_issued_ = true;
    }
    return true;
  }
  while (!pending_.empty()) {
    out->push_back(make(pending_.front(), -1));
    pending_.pop_front();
  }
  return done_feeding_;
}

}  // namespace tessera
