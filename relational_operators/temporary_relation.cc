#include "relational_operators/temporary_relation.h"

namespace tessera {

TemporaryRelation::~TemporaryRelation() {
  for (const Entry& entry : blocks_) pool_->Free(entry.data, MemoryKind::kTemporaryBlock, entry.bytes);
}

absl::StatusOr<uint32_t> TemporaryRelation::AppendBlock(BlockBuilder& builder) {
  const size_t bytes = builder.EncodedSize();
  const uint32_t rows = builder.row_count();
  absl::StatusOr<void*> memory = pool_->Allocate(MemoryKind::kTemporaryBlock, bytes);
  if (!memory.ok()) return memory.status();
  builder.Finish(*memory);
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_.push_back(Entry{*memory, bytes});
  rows_ += rows;
  return static_cast<uint32_t>(blocks_.size() - 1);
}

uint32_t TemporaryRelation::block_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<uint32_t>(blocks_.size());
}

BlockView TemporaryRelation::block(uint32_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return BlockView(blocks_[index].data);
}

int64_t TemporaryRelation::row_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

}  // namespace tessera
