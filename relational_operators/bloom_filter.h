#pragma once
// LIP filters (Quickstep D§2.5.3, "lookahead information passing"): a hash join's build publishes a Bloom
// filter over its build keys, and the probe-side table scan drops rows whose key is not in it before any hash
// probe (together with the filters of the other joins that probe rows of the same scan).
//
// BlockedBloomFilter: a register-blocked Bloom filter: each key owns one 64-bit word and sets kBitsSet bits in
// it, so a probe is one load and one mask test (the LIP filters are probed for every row of the scan; their
// cost is what decides whether they pay). kBitsPerKey bits per key give a false-positive rate of about 2%. It
// works on the 64-bit key hashes of key_hashing.h (the join hash table's hashes): the word comes from the high
// 32 bits, the bit positions from 6-bit fields of the low 32 bits. Its memory is a blob of the buffer pool.
// Insert is single-threaded; MayContain is read-only and thread-safe.
//
// LipFilter: the RuntimeFilter a probe-side scan holds. Empty until the hash join build's Finalize fills it
// (JoinHashTable::Finalize calls Build with the number of keys, then Insert for each); the scan reads it only
// after the build finished (a DAG edge orders them). When the join hash table has a direct index (unique integer
// keys over a small range, join_hash_table.h), Finalize makes the filter an exact bit vector over that range
// instead (BuildDense, then InsertDenseKey for each key): a probe is a subtraction and one bit test, without
// hashing, and no key passes that is not in the build. EXPLAIN's "IN bloom(...)" names the filter as planned;
// which of the two it becomes is decided at run time (EXPLAIN ANALYZE shows it on the build's line).

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "relational_operators/runtime_filter.h"
#include "storage/buffer_pool.h"
#include "storage/pool_array.h"

namespace tessera {

class BlockedBloomFilter {
 public:
  static constexpr int kBitsPerKey = 10;
  static constexpr int kBitsSet = 4;

  // A zeroed filter for about `expected_keys` keys, allocated from `pool` (kind blob).
  static absl::StatusOr<std::unique_ptr<BlockedBloomFilter>> Create(int64_t expected_keys, BufferPool* pool);
  ~BlockedBloomFilter();
  BlockedBloomFilter(const BlockedBloomFilter&) = delete;
  BlockedBloomFilter& operator=(const BlockedBloomFilter&) = delete;

  void Insert(uint64_t hash) { words_[WordOf(hash)] |= Mask(hash); }
  bool MayContain(uint64_t hash) const {
    const uint64_t mask = Mask(hash);
    return (words_[WordOf(hash)] & mask) == mask;
  }
  size_t size_bytes() const { return bytes_; }
  // Writes to `kept_rows` the rows (rows[i], or i without `rows`; i < count) whose integer key (values[row],
  // hashed by HashIntegerKey) may be in the filter, in order; returns how many. T is int32_t or int64_t.
  // `kept_rows` has room for `count` rows and may be `rows` itself. Eight keys at a time with AVX-512 where the
  // build allows it.
  template <typename T>
  uint32_t KeepIntegerKeys(const T* values, const uint32_t* rows, uint32_t count, uint32_t* kept_rows) const;

  // One column of a composite integer key: INTEGER / DATE values (int32_t) or BIGINT / TIMESTAMP ones (int64_t).
  struct IntegerKeyColumn {
    const void* values;
    bool wide;  // int64_t values
  };
  // KeepIntegerKeys for a key of `key_count` integer columns (no NULLs), hashed as the join hash table hashes
  // it (HashIntegerKey per column, combined left to right with CombineHashes); also eight rows at a time.
  uint32_t KeepIntegerKeyTuples(const IntegerKeyColumn* columns, int key_count, const uint32_t* rows, uint32_t count,
                                uint32_t* kept_rows) const;

 private:
  BlockedBloomFilter(uint64_t* words, uint64_t word_count, size_t bytes, BufferPool* pool)
      : words_(words), word_count_(word_count), bytes_(bytes), pool_(pool) {}
  // KeepIntegerKeys (!kMoreColumns: columns[0] only, of type FirstColumn) and KeepIntegerKeyTuples.
  template <typename FirstColumn, bool kMoreColumns>
  uint32_t KeepKeys(const IntegerKeyColumn* columns, int key_count, const uint32_t* rows, uint32_t count,
                    uint32_t* kept_rows) const;
  uint64_t WordOf(uint64_t hash) const { return (hash >> 32) * word_count_ >> 32; }  // fast range reduction
  static uint64_t Mask(uint64_t hash) {
    uint64_t mask = 0;
    for (int i = 0; i < kBitsSet; ++i) mask |= uint64_t{1} << ((hash >> (6 * i)) & 63);
    return mask;
  }

  uint64_t* words_;
  uint64_t word_count_;
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
  // Instead of Build: an exact filter over the integer keys [min, min + span] of a single key column (INTEGER,
  // DATE, BIGINT or TIMESTAMP); called once by the build before InsertDenseKey for each key, which must lie in
  // that range.
  absl::Status BuildDense(int64_t min, uint64_t span, BufferPool* pool);
  void InsertDenseKey(int64_t key) {
    const uint64_t offset = static_cast<uint64_t>(key) - static_cast<uint64_t>(dense_min_);
    dense_words_[offset >> 6] |= uint64_t{1} << (offset & 63);
  }
  bool is_dense() const { return !dense_words_.empty(); }
  bool probes_before_scan_filter() const override { return is_dense(); }
  bool dense_key_bits(DenseKeyBits* out) const override {
    if (!is_dense()) return false;
    *out = {dense_words_.data(), dense_min_, dense_span_ + 1};
    return true;
  }

  void KeepMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                   SelectionVector* out) const override;
  void KeepNonMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                      SelectionVector* out) const override;

  const std::string& description() const { return description_; }
  // Null until Build.
  const BlockedBloomFilter* bloom() const { return bloom_.get(); }

 private:
  template <typename T>
  void KeepIntegerMembers(const ColumnVector& key, const SelectionVector* in, uint32_t size,
                          SelectionVector* out) const;
  // Composite keys of integer columns without NULLs (TPC-H Q9's l_suppkey, l_partkey); false for other keys.
  bool KeepIntegerTupleMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                               SelectionVector* out) const;

  static constexpr size_t kMaxIntegerTupleKeys = 4;
  template <typename T>
  void KeepDenseMembers(const ColumnVector& key, const SelectionVector* in, uint32_t size, SelectionVector* out) const;

  const std::string description_;
  std::unique_ptr<BlockedBloomFilter> bloom_;
  // The dense form: bit k - dense_min_ of key k, for offsets up to dense_span_; bit dense_span_ + 1 is never
  // set, and probes clamp offsets outside the range to it.
  int64_t dense_min_ = 0;
  uint64_t dense_span_ = 0;
  PoolArray<uint64_t> dense_words_;
};

}  // namespace tessera
