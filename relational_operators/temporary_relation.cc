#include "relational_operators/temporary_relation.h"

#include "glog/logging.h"

namespace tessera {

TemporaryRelation::~TemporaryRelation() {
  for (const Entry& entry : blocks_) {
    if (entry.data != nullptr) pool_->Free(entry.data, MemoryKind::kTemporaryBlock, entry.bytes);
  }
}

void TemporaryRelation::ReleaseBlock(uint32_t index) {
  Entry released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CHECK_LT(index, blocks_.size());
    released = blocks_[index];
    blocks_[index].data = nullptr;
  }
  if (released.data != nullptr) {
    live_bytes_.fetch_sub(released.bytes, std::memory_order_relaxed);
    pool_->Free(released.data, MemoryKind::kTemporaryBlock, released.bytes);
  }
}

absl::StatusOr<uint32_t> TemporaryRelation::AppendBlock(BlockBuilder& builder) {
  const size_t bytes = builder.EncodedSize();
  const uint32_t rows = builder.row_count();
  absl::StatusOr<void*> memory = pool_->Allocate(MemoryKind::kTemporaryBlock, bytes);
  if (!memory.ok()) return memory.status();
  builder.Finish(*memory, /*string_zone_maps=*/false);
  uint32_t index;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_.push_back(Entry{*memory, bytes, rows});
    rows_ += rows;
    index = static_cast<uint32_t>(blocks_.size() - 1);
  }
  live_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (append_listener_) append_listener_();
  return index;
}

uint32_t TemporaryRelation::AdoptBlock(void* data, size_t bytes) {
  const uint32_t rows = BlockView(data).row_count();
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_.push_back(Entry{data, bytes, rows});
  rows_ += rows;
  return static_cast<uint32_t>(blocks_.size() - 1);
}

std::vector<const void*> TemporaryRelation::LiveBlockAddresses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const void*> addresses;
  for (const Entry& entry : blocks_) {
    if (entry.data != nullptr) addresses.push_back(entry.data);
  }
  return addresses;
}

int64_t TemporaryRelation::RowsBefore(uint32_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t rows = 0;
  for (uint32_t b = 0; b < index && b < blocks_.size(); ++b) rows += blocks_[b].rows;
  return rows;
}

absl::Status TemporaryRelation::AppendValueRow(BlockBuilder& builder, const std::vector<Value>& row) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (size_t c = 0; c < row.size(); ++c) builder.AppendValue(static_cast<int>(c), row[c]);
    if (builder.CommitRow()) return absl::OkStatus();
    if (attempt == 1 || builder.empty()) break;
    absl::StatusOr<uint32_t> appended = AppendBlock(builder);
    if (!appended.ok()) return appended.status();
  }
  return absl::ResourceExhaustedError("a result row is larger than a block");
}

uint32_t TemporaryRelation::block_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<uint32_t>(blocks_.size());
}

BlockView TemporaryRelation::block(uint32_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  CHECK(blocks_[index].data != nullptr) << "temporary block " << index << " read after it was released";
  return BlockView(blocks_[index].data);
}

int64_t TemporaryRelation::row_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

}  // namespace tessera
