#pragma once
// The hash table of a hash join: an index over the rows of the build side's temporary relation. Built in two
// phases: AddBlock (one work order per build block, concurrent) computes each row's key hash; Finalize (one work
// order) sorts the entries by bucket (a counting sort), so that a bucket's entries lie next to each other and a
// probe reads one contiguous range instead of chasing a chain through memory. Probing is lock-free and read-only
// (concurrent probe work orders).
//
// For a single integer-like key (BOOLEAN, INTEGER, DATE, BIGINT, TIMESTAMP, DECIMAL up to 18 digits) the hash is
// a bijection of the value (HashIntegerKey), so equal hashes mean equal keys and probes need not read the build
// row's key at all (HashDeterminesKey).
//
// Packed keys: for two key columns of 4-byte integers (INTEGER, DATE: TPC-H's (partkey, suppkey)), each entry
// holds the key itself, both values packed into one word, in place of its hash (the entry is still placed by the
// hash). A probe compares that word with its own row's packed key: no read of the build row in the build
// relation's blocks, which at TPC-H SF10's partsupp were two cache misses per candidate (KeysArePacked).
//
// Direct index (dense unique keys, a perfect hash): when the key is one INTEGER, DATE, BIGINT or TIMESTAMP column,
// no two indexed rows share a key, and the keys span at most max(4 x indexed rows, 2^18) values, Finalize also
// maps key - min to the key's entry. Probes then find their entry with one read of that array, without hashing
// or walking a bucket, and the entry found holds the key (dimension tables' primary keys: SSB's date, customer,
// supplier, part). Whether the keys are unique is known only after the build; otherwise probes hash as usual.
// The array (4 bytes per value of the range, at most 16 bytes per indexed row above the 1 MiB floor) comes from
// the buffer pool; when the pool refuses it, there is no direct index. The exact key filter over the keys' range
// (key_filter) is built with a direct index, and also without one while the range is at most max(64 bits per
// indexed row, 2^23 bits), so that probes whose keys are sparse still drop rows without a match in the scan.
//
// Memory: while building, each AddBlock's entries are heap vectors reserved against the buffer pool; Finalize moves
// them into the table's arrays, which are buffer-pool memory (PoolArray: huge-page slots for large tables, which
// the probes' random reads need), and gives the reservation back.
//
// Entries reference rows of the build relation (block, row), so the relation stays alive with the table. Rows
// whose key has a NULL never match and are not indexed (they are counted for NOT IN semantics). Without key
// columns every row lands in one chain, which turns the probe into a nested-loop join (for joins without an
// equality, e.g. a comparison with an uncorrelated scalar subquery's single row).

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "expressions/batch.h"
#include "relational_operators/bloom_filter.h"
#include "relational_operators/temporary_relation.h"
#include "storage/buffer_pool.h"
#include "storage/pool_array.h"

namespace tessera {

class JoinHashTable {
 public:
  // `key_columns` are columns of `build` that form the key.
  JoinHashTable(std::shared_ptr<TemporaryRelation> build, std::vector<int> key_columns, BufferPool* pool);
  ~JoinHashTable();

  // Indexes the rows of build block `block`. Thread-safe.
  absl::Status AddBlock(uint32_t block);
  // Links all entries; call once after every AddBlock finished. Also fills the LIP filter, if one was given.
  absl::Status Finalize();

  // Makes Finalize set up one match flag per build row (NULL keys included), for joins that keep unmatched build
  // rows (right and full outer). Call before Finalize.
  void TrackMatches() { track_matches_ = true; }
  // Marks the build row of `entry` as matched. Thread-safe (concurrent probes); only with TrackMatches().
  void MarkMatched(uint32_t entry) const {
    std::atomic_ref<uint8_t> flag(matched_[block_row_starts_[entries_[entry].block] + entries_[entry].row]);
    if (flag.load(std::memory_order_relaxed) == 0) flag.store(1, std::memory_order_relaxed);
  }
  // Whether row `row` of build block `block` matched a probe row; valid once every probe finished.
  bool IsMatched(uint32_t block, uint32_t row) const {
    return std::atomic_ref<uint8_t>(matched_[block_row_starts_[block] + row]).load(std::memory_order_relaxed) != 0;
  }

  // Finalize also inserts every indexed row's key hash into `filter` (sized for the indexed rows), so that scans
  // on the probe side can drop rows that cannot match (bloom_filter.h). The filter's key is the key columns
  // key_columns()[p] for p in `filter_keys` (ascending positions; all of them, or some of a multi-column key
  // when only those come from the probe-side scan). Call before building.
  void PublishLipFilter(std::shared_ptr<LipFilter> filter, std::vector<int> filter_keys);

  // The entries [begin, end) of `hash`'s bucket. Callers compare the stored hash and (unless
  // HashDeterminesKey()) the keys.
  struct EntryRange {
    uint32_t begin;
    uint32_t end;
  };
  EntryRange Bucket(uint64_t hash) const {
    if (bucket_starts_.empty()) return {0, 0};
    const uint64_t bucket = hash & mask_;
    return {bucket_starts_[bucket], bucket_starts_[bucket + 1]};
  }
  // Prefetch hints for batched probes: the bucket offsets of `hash`, then the first entry of a range.
  void PrefetchBucket(uint64_t hash) const {
    if (!bucket_starts_.empty()) __builtin_prefetch(&bucket_starts_[hash & mask_]);
  }
  void PrefetchEntry(uint32_t entry) const { __builtin_prefetch(&entries_[entry]); }
  // Whether Finalize made a direct index (see the file comment). Probes then use LookUpDirect, not Bucket.
  bool HasDirectIndex() const { return !direct_entries_.empty(); }
  // An exact filter over the indexed keys (a bit vector over their range, bloom_filter.h's dense LipFilter): with
  // HasDirectIndex(), and without one for a single integer-like key whose range is at most max(64 bits per indexed
  // row, 2^23 bits); null otherwise. A probe side that drops rows without a match (inner, semi) can apply it in
  // its scan before the scan's filter predicate.
  std::shared_ptr<const RuntimeFilter> key_filter() const { return key_filter_; }
  // Whether the published LIP filter (PublishLipFilter) became the exact key filter instead of a Bloom filter.
  bool LipFilterIsExact() const { return lip_filter_ != nullptr && lip_filter_ == key_filter_; }
  // With HasDirectIndex(): buckets[s] = the entry holding row r's key as a range {e, e + 1}, or an empty range
  // (no such key, or a NULL), for r = selection->rows[s] (r = s without a selection), s < count. `keys` is a
  // vector of the key's type.
  void LookUpDirect(const ColumnVector& keys, const SelectionVector* selection, uint32_t count,
                    EntryRange* buckets) const;
  // Whether equal hashes imply equal keys (a single integer-like key column).
  bool HashDeterminesKey() const { return hash_determines_key_; }
  // Whether the entries hold their packed keys (PackKey of the key columns' values) instead of their hashes
  // (see the file comment); Hash() is then not available, and a probe row matches an entry of its bucket exactly
  // when PackKey of its own key values equals PackedKey(entry).
  bool KeysArePacked() const { return keys_are_packed_; }
  static uint64_t PackKey(int32_t first, int32_t second) {
    return static_cast<uint32_t>(first) | (static_cast<uint64_t>(static_cast<uint32_t>(second)) << 32);
  }
  uint64_t PackedKey(uint32_t entry) const { return entries_[entry].hash; }
  uint64_t Hash(uint32_t entry) const { return entries_[entry].hash; }
  uint32_t Block(uint32_t entry) const { return entries_[entry].block; }
  uint32_t Row(uint32_t entry) const { return entries_[entry].row; }

  const TemporaryRelation& build() const { return *build_; }
  const std::vector<int>& key_columns() const { return key_columns_; }
  // Block views of the build relation, indexed by block number (valid after Finalize).
  const std::vector<BlockView>& blocks() const { return blocks_; }
  int64_t indexed_rows() const { return static_cast<int64_t>(entries_.size()); }
  // Build rows with a NULL in the first key column (for null-aware anti joins).
  int64_t rows_with_null_first_key() const { return null_first_key_rows_.load(); }
  int64_t total_build_rows() const { return build_->row_count(); }

 private:
  struct Entry {
    uint64_t hash;  // with keys_are_packed_ (in entries_, not in parts_), the packed key
    uint32_t block;
    uint32_t row;
  };

  std::shared_ptr<TemporaryRelation> build_;
  const std::vector<int> key_columns_;
  BufferPool* pool_;
  std::mutex mutex_;
  std::vector<std::vector<Entry>> parts_;
  // With a LIP filter over some key columns only: their positions in key_columns_, and per part the hashes of
  // the part's entries over them (AddBlock computes them; Finalize inserts them).
  std::vector<int> lip_key_positions_;
  std::vector<std::vector<uint64_t>> lip_hash_parts_;
  std::atomic<int64_t> null_first_key_rows_{0};
  // Direct index: whether the key's type allows one (int32 or int64 values), per part the entries' key values,
  // and their range over all parts (under mutex_ while building).
  int direct_key_width_ = 0;
  std::vector<std::vector<int64_t>> key_parts_;
  int64_t key_min_ = INT64_MAX;
  int64_t key_max_ = INT64_MIN;
  // Entry of key key_min_ + i, or kNoDirectEntry.
  static constexpr uint32_t kNoDirectEntry = UINT32_MAX;
  PoolArray<uint32_t> direct_entries_;
  std::shared_ptr<LipFilter> key_filter_;
  PoolArray<Entry> entries_;
  // Entries of bucket b are entries_[bucket_starts_[b], bucket_starts_[b + 1]).
  PoolArray<uint32_t> bucket_starts_;
  bool hash_determines_key_ = false;
  bool keys_are_packed_ = false;
  std::vector<std::vector<uint64_t>> packed_key_parts_;  // with keys_are_packed_: per part, its entries' keys
  std::vector<BlockView> blocks_;
  std::shared_ptr<LipFilter> lip_filter_;
  bool track_matches_ = false;
  // With TrackMatches(): the flag of build row (b, r) is matched_[block_row_starts_[b] + r].
  std::vector<uint64_t> block_row_starts_;
  mutable PoolArray<uint8_t> matched_;  // written through std::atomic_ref by concurrent probes
  uint64_t mask_ = 0;
  size_t reserved_bytes_ = 0;

  template <typename T>
  void LookUpDirectTyped(const ColumnVector& keys, const SelectionVector* selection, uint32_t count,
                         EntryRange* buckets) const;  // the building parts' reservation, until Finalize frees them
};

}  // namespace tessera
