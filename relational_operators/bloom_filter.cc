#include "relational_operators/bloom_filter.h"

#include <cstring>

#include "common/status_macros.h"
#include "glog/logging.h"
#include "relational_operators/key_hashing.h"

namespace tessera {
namespace {

// Combined hashes of the key columns for rows 0..size-1, as the join hash table computes them.
void HashKeys(const std::vector<const ColumnVector*>& keys, uint32_t size, uint64_t* hashes) {
  for (size_t k = 0; k < keys.size(); ++k) HashVectorRows(*keys[k], size, k == 0, hashes);
}

bool AnyNull(const std::vector<const ColumnVector*>& keys, uint32_t row) {
  bool null = false;
  for (const ColumnVector* key : keys) null |= key->IsNull(row);
  return null;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BlockedBloomFilter>> BlockedBloomFilter::Create(int64_t expected_keys,
                                                                                BufferPool* pool) {
  constexpr int64_t kBitsPerBlock = 32 * kWordsPerBlock;
  const int64_t keys = std::max<int64_t>(expected_keys, 1);
  const uint64_t blocks = static_cast<uint64_t>((keys * kBitsPerKey + kBitsPerBlock - 1) / kBitsPerBlock);
  const size_t bytes = blocks * kWordsPerBlock * sizeof(uint32_t);
  TESSERA_ASSIGN_OR_RETURN(void* memory, pool->Allocate(MemoryKind::kBlob, bytes));
  std::memset(memory, 0, bytes);
  return std::unique_ptr<BlockedBloomFilter>(
      new BlockedBloomFilter(static_cast<uint32_t*>(memory), blocks, bytes, pool));
}

BlockedBloomFilter::~BlockedBloomFilter() { pool_->Free(words_, MemoryKind::kBlob, bytes_); }

absl::Status LipFilter::Build(int64_t keys, BufferPool* pool) {
  TESSERA_ASSIGN_OR_RETURN(bloom_, BlockedBloomFilter::Create(keys, pool));
  return absl::OkStatus();
}

void LipFilter::KeepMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in,
                            uint32_t size, SelectionVector* out) const {
  uint64_t hashes[kVectorSize];
  HashKeys(keys, size, hashes);
  const uint32_t candidates = in != nullptr ? in->count : size;
  uint32_t kept = 0;
  for (uint32_t s = 0; s < candidates; ++s) {
    const uint32_t row = in != nullptr ? in->rows[s] : s;
    out->rows[kept] = row;
    kept += bloom_->MayContain(hashes[row]) && !AnyNull(keys, row);
  }
  out->count = kept;
}

void LipFilter::KeepNonMembers(const std::vector<const ColumnVector*>&, const SelectionVector* in, uint32_t size,
                               SelectionVector* out) const {
  LOG(FATAL) << "a Bloom filter cannot prove that a key is absent (anti joins need an exact filter)";
}

}  // namespace tessera
