#pragma once
// Exact filters (Quickstep D§2.5.2): the build side of a semi or anti join on one integer key whose values lie
// in a small range [min, max] (a dense key such as SSB's p_partkey, known from catalog statistics) becomes a
// bit vector with one bit per possible key instead of a hash table. Probing is one bit test; the probe-side
// scan applies it like a filter (runtime_filter.h), so the semi join needs no operator of its own.
//
// An inner join whose build side contributes no output columns is turned into such a semi join only when the
// statistics say its build key is unique. Statistics are estimates, so the filter checks: a key inserted twice
// is counted, and when the filter was made for such an inner join (`counts_duplicates`), those keys' extra
// occurrences are remembered and the scan repeats each probe row Multiplicity() times, which gives exactly the
// inner join's result. (This costs a mutex and a hash map on the duplicate path only.)
//
// Keys are INTEGER, BIGINT, DATE or TIMESTAMP values (their int32 / int64 representation). A build key outside
// [min, max] means the statistics did not bound the data: Insert reports it and the query fails with Internal.
//
// Insert is thread-safe (atomic bit sets); probing is read-only after the build completed. Memory: a blob of
// the buffer pool, (max - min + 1) / 8 bytes.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "catalog/types.h"
#include "relational_operators/runtime_filter.h"
#include "storage/buffer_pool.h"

namespace tessera {

class ExactFilter final : public RuntimeFilter {
 public:
  // Ranges larger than this are refused (the optimizer stays far below: a small multiple of the row count).
  static constexpr int64_t kMaxBits = int64_t{1} << 33;

  // A filter over [min, max] for keys of `key_type`, allocated zeroed from `pool`.
  static absl::StatusOr<std::unique_ptr<ExactFilter>> Create(Type key_type, int64_t min, int64_t max,
                                                             bool counts_duplicates, BufferPool* pool);
  ~ExactFilter() override;

  // Adds every non-NULL key of the candidate rows (`in`, or 0..size-1). Thread-safe. Internal error when a key
  // lies outside [min, max].
  absl::Status InsertKeys(const ColumnVector& keys, const SelectionVector* in, uint32_t size);

  bool Contains(int64_t key) const {
    const uint64_t offset = static_cast<uint64_t>(key) - static_cast<uint64_t>(min_);
    return offset < bits_ && ((words_[offset >> 6] >> (offset & 63)) & 1) != 0;
  }

  void KeepMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                   SelectionVector* out) const override;
  void KeepNonMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                      SelectionVector* out) const override;
  bool expands_rows() const override { return counts_duplicates_ && duplicate_keys() > 0; }
  uint32_t Multiplicity(const std::vector<const ColumnVector*>& keys, uint32_t row) const override;
  bool dense_key_bits(DenseKeyBits* out) const override {
    *out = {words_, min_, bits_};
    return true;
  }

  // Number of inserted keys that were already present (after the build).
  int64_t duplicate_keys() const { return duplicate_keys_.load(std::memory_order_relaxed); }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  size_t size_bytes() const { return bytes_; }

 private:
  ExactFilter(Type key_type, int64_t min, int64_t max, bool counts_duplicates, uint64_t* words, size_t bytes,
              BufferPool* pool);
  template <typename T>
  absl::Status InsertTyped(const ColumnVector& keys, const SelectionVector* in, uint32_t size);
  template <typename T, bool kMember>
  void KeepTyped(const ColumnVector& keys, const SelectionVector* in, uint32_t size, SelectionVector* out) const;
  absl::Status RecordDuplicate(int64_t key);
  int64_t KeyAt(const ColumnVector& keys, uint32_t row) const;

  const Type key_type_;
  const bool wide_;  // int64 representation
  const int64_t min_;
  const int64_t max_;
  const uint64_t bits_;
  const bool counts_duplicates_;
  uint64_t* const words_;
  const size_t bytes_;
  BufferPool* const pool_;
  std::mutex duplicates_mutex_;
  std::atomic<int64_t> duplicate_keys_{0};
  absl::flat_hash_map<int64_t, uint32_t> extra_copies_;  // key -> occurrences beyond the first
  size_t reserved_map_bytes_ = 0;                        // budget charged for extra_copies_
};

}  // namespace tessera
