#include "relational_operators/bloom_filter.h"

#include <cstring>

#include "common/status_macros.h"
#include "glog/logging.h"
#include "relational_operators/key_hashing.h"

namespace tessera {
namespace {

// Combined hashes of the key columns for the candidate rows, as the join hash table computes them.
void HashKeys(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
              uint64_t* hashes) {
  for (size_t k = 0; k < keys.size(); ++k) HashSelectedRows(*keys[k], in, size, k == 0, hashes);
}

bool AnyNull(const std::vector<const ColumnVector*>& keys, uint32_t row) {
  bool null = false;
  for (const ColumnVector* key : keys) null |= key->IsNull(row);
  return null;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BlockedBloomFilter>> BlockedBloomFilter::Create(int64_t expected_keys,
                                                                                BufferPool* pool) {
  const int64_t keys = std::max<int64_t>(expected_keys, 1);
  const uint64_t word_count = static_cast<uint64_t>((keys * kBitsPerKey + 63) / 64);
  const size_t bytes = word_count * sizeof(uint64_t);
  TESSERA_ASSIGN_OR_RETURN(void* memory, pool->Allocate(MemoryKind::kBlob, bytes));
  std::memset(memory, 0, bytes);
  return std::unique_ptr<BlockedBloomFilter>(
      new BlockedBloomFilter(static_cast<uint64_t*>(memory), word_count, bytes, pool));
}

BlockedBloomFilter::~BlockedBloomFilter() { pool_->Free(words_, MemoryKind::kBlob, bytes_); }

absl::Status LipFilter::Build(int64_t keys, BufferPool* pool) {
  TESSERA_ASSIGN_OR_RETURN(bloom_, BlockedBloomFilter::Create(keys, pool));
  return absl::OkStatus();
}

template <typename T>
void LipFilter::KeepIntegerMembers(const ColumnVector& key, const SelectionVector* in, uint32_t size,
                                   SelectionVector* out) const {
  const T* values = key.values<T>();
  const uint32_t candidates = in != nullptr ? in->count : size;
  uint32_t kept = 0;
  for (uint32_t s = 0; s < candidates; ++s) {
    const uint32_t row = in != nullptr ? in->rows[s] : s;
    out->rows[kept] = row;
    kept += bloom_->MayContain(HashIntegerKey(values[row]));
  }
  out->count = kept;
}

void LipFilter::KeepMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in,
                            uint32_t size, SelectionVector* out) const {
  // The common case, one integer key without NULLs: hash inline, no intermediate hash vector.
  if (keys.size() == 1 && !keys[0]->has_nulls()) {
    switch (keys[0]->type().id()) {
      case TypeId::kInteger:
      case TypeId::kDate:
        return KeepIntegerMembers<int32_t>(*keys[0], in, size, out);
      case TypeId::kBigInt:
      case TypeId::kTimestamp:
        return KeepIntegerMembers<int64_t>(*keys[0], in, size, out);
      default:
        break;
    }
  }
  uint64_t hashes[kVectorSize];
  HashKeys(keys, in, size, hashes);
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
