#pragma once
// LIP filters (Quickstep D§2.5.3, "lookahead information passing"): a hash join's build publishes a Bloom
// filter over its build keys, and the probe-side table scan drops rows whose key is not in it before any hash
// probe (together with the filters of the other joins that probe rows of the same scan).
//
// BlockedBloomFilter: a cache-blocked Bloom filter (one 256-bit block per key, 8 bits set in it, one per 32-bit
// word, as in Impala/Kudu): a probe touches one cache line. Sized at kBitsPerKey bits per key, which gives a
// false-positive rate of about 3%. It works on the 64-bit key hashes of key_hashing.h (the join hash table's
// hashes): the block comes from the high 32 bits, the bit positions from the low 32 bits. Its memory is a blob
// of the buffer pool. Insert is single-threaded; MayContain is read-only and thread-safe.
//
// LipFilter: the RuntimeFilter a probe-side scan holds. Empty until the hash join build's Finalize fills it
// (JoinHashTable::Finalize calls Build with the number of keys, then Insert for each); the scan reads it only
// after the build finished (a DAG edge orders them).

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "relational_operators/runtime_filter.h"
#include "storage/buffer_pool.h"

namespace tessera {

class BlockedBloomFilter {
 public:
  static constexpr int kBitsPerKey = 8;

  // A zeroed filter for about `expected_keys` keys, allocated from `pool` (kind blob).
  static absl::StatusOr<std::unique_ptr<BlockedBloomFilter>> Create(int64_t expected_keys, BufferPool* pool);
  ~BlockedBloomFilter();
  BlockedBloomFilter(const BlockedBloomFilter&) = delete;
  BlockedBloomFilter& operator=(const BlockedBloomFilter&) = delete;

  void Insert(uint64_t hash) {
    uint32_t* block = BlockOf(hash);
    const uint32_t low = static_cast<uint32_t>(hash);
    for (int i = 0; i < kWordsPerBlock; ++i) block[i] |= uint32_t{1} << ((low * kSalts[i]) >> 27);
  }
  bool MayContain(uint64_t hash) const {
    const uint32_t* block = BlockOf(hash);
    const uint32_t low = static_cast<uint32_t>(hash);
    bool all = true;
    for (int i = 0; i < kWordsPerBlock; ++i) all &= (block[i] >> ((low * kSalts[i]) >> 27)) & 1;
    return all;
  }
  size_t size_bytes() const { return bytes_; }

 private:
  static constexpr int kWordsPerBlock = 8;
  static constexpr uint32_t kSalts[kWordsPerBlock] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                                      0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};

  BlockedBloomFilter(uint32_t* words, uint64_t blocks, size_t bytes, BufferPool* pool)
      : words_(words), blocks_(blocks), bytes_(bytes), pool_(pool) {}
  uint32_t* BlockOf(uint64_t hash) const {
    return words_ + ((hash >> 32) * blocks_ >> 32) * kWordsPerBlock;  // fast range reduction of the high half
  }

  uint32_t* words_;
  uint64_t blocks_;
  size_t bytes_;
  BufferPool* pool_;
};

class LipFilter final : public RuntimeFilter {
 public:
  // `description` names the build keys for EXPLAIN and messages, e.g. "c_custkey".
  explicit LipFilter(std::string description) : description_(std::move(description)) {}

  // Allocates the Bloom filter for `keys` keys; called once by the build before Insert.
  absl::Status Build(int64_t keys, BufferPool* pool);
  void Insert(uint64_t hash) { bloom_->Insert(hash); }

  void KeepMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                   SelectionVector* out) const override;
  void KeepNonMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                      SelectionVector* out) const override;

  const std::string& description() const { return description_; }
  // Null until Build.
  const BlockedBloomFilter* bloom() const { return bloom_.get(); }

 private:
  const std::string description_;
  std::unique_ptr<BlockedBloomFilter> bloom_;
};

}  // namespace tessera
