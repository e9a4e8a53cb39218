#pragma once
// The hash table of a hash join: an index over the rows of the build side's temporary relation. Built in two
// phases: AddBlock (one work order per build block, concurrent) computes each row's key hash; Finalize (one work
// order) links the entries into buckets. Probing is lock-free and read-only (concurrent probe work orders).
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

  // Finalize also inserts every indexed key's hash into `filter` (sized for the indexed rows), so that scans
  // on the probe side can drop rows that cannot match (bloom_filter.h). Call before building.
  void PublishLipFilter(std::shared_ptr<LipFilter> filter) { lip_filter_ = std::move(filter); }

  static constexpr uint32_t kEnd = UINT32_MAX;
  // The first entry whose hash equals `hash`'s bucket, then Next() along the chain (kEnd at the end). Callers
  // compare the stored hash and the keys.
  uint32_t First(uint64_t hash) const { return heads_.empty() ? kEnd : heads_[hash & mask_]; }
  uint32_t Next(uint32_t entry) const { return entries_[entry].next; }
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
    uint64_t hash;
    uint32_t block;
    uint32_t row;
    uint32_t next;
  };

  std::shared_ptr<TemporaryRelation> build_;
  const std::vector<int> key_columns_;
  BufferPool* pool_;
  std::mutex mutex_;
  std::vector<std::vector<Entry>> parts_;
  std::atomic<int64_t> null_first_key_rows_{0};
  std::vector<Entry> entries_;
  std::vector<uint32_t> heads_;
  std::vector<BlockView> blocks_;
  std::shared_ptr<LipFilter> lip_filter_;
  uint64_t mask_ = 0;
  size_t reserved_bytes_ = 0;
};

}  // namespace tessera
