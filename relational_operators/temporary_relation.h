#pragma once
// A query intermediate: an append-only list of temporary blocks (buffer-pool memory of kind kTemporaryBlock),
// freed when the relation is destroyed, i.e. as soon as its last consumer has finished, or one by one earlier
// (ReleaseBlock) once every consumer has read a block for the last time.
//
// Thread-safe: work orders append concurrently; readers read blocks that were appended before they were told
// about them (the QueryManager feeds a block to consumers only after AppendBlock returned its index).
//
// Streaming readers (a query's result sent to its client while the query runs, engine/query_statement.cc): an
// append listener, set before any append, runs after every AppendBlock on the appending thread; a block whose
// index is below block_count() is complete and may be read and released by the reader while work orders append.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/schema.h"
#include "catalog/value.h"
#include "storage/block_builder.h"
#include "storage/block_layout.h"
#include "storage/buffer_pool.h"

namespace tessera {

class TemporaryRelation {
 public:
  TemporaryRelation(std::vector<ColumnSchema> schema, BufferPool* pool, uint32_t block_size_bytes = 2u << 20)
      : schema_(std::move(schema)), pool_(pool), block_size_bytes_(block_size_bytes) {}
  ~TemporaryRelation();
  TemporaryRelation(const TemporaryRelation&) = delete;
  TemporaryRelation& operator=(const TemporaryRelation&) = delete;

  const std::vector<ColumnSchema>& schema() const { return schema_; }
  uint32_t block_size_bytes() const { return block_size_bytes_; }

  // Finishes `builder` (non-empty) into a new temporary block; returns the block's index.
  absl::StatusOr<uint32_t> AppendBlock(BlockBuilder& builder);
  // Appends one row of values (of the schema's types) to `builder`, first moving the builder's rows into a new
  // block of this relation when the row does not fit. Row-at-a-time: for small results (aggregates, sorts,
  // constants), not for bulk data.
  absl::Status AppendValueRow(BlockBuilder& builder, const std::vector<Value>& row);
  // Appends a block built elsewhere (received from another rank, distributed/gather_operator.h): `data` holds
  // `bytes` bytes that pool()->Allocate(kTemporaryBlock, bytes) returned, a validated block of this schema; the
  // relation owns (and frees) it from now on. Returns the block's index.
  uint32_t AdoptBlock(void* data, size_t bytes);
  BufferPool* pool() const { return pool_; }

  // Runs `listener` after each AppendBlock (on the appending thread, no lock held). Set before the first append;
  // the listener must be cheap and must outlive the relation's appends.
  void set_append_listener(std::function<void()> listener) { append_listener_ = std::move(listener); }
  // Bytes of the blocks appended and not released: what a streaming reader has not yet consumed.
  size_t live_bytes() const { return live_bytes_.load(std::memory_order_relaxed); }

  // Frees block `index` now; nobody may read it afterwards (block(index) CHECK-fails). Idempotent. Block indexes
  // and row_count() are unchanged.
  void ReleaseBlock(uint32_t index);

  // The memory of the blocks not released yet, e.g. for a spill to leave alone while a streaming reader may read
  // them (BufferPool::SpillTo's `keep`).
  std::vector<const void*> LiveBlockAddresses() const;

  // Blocks appended so far, released ones included.
  uint32_t block_count() const;
  // Rows in blocks [0, index), released ones included (O(index), for error messages that number rows).
  int64_t RowsBefore(uint32_t index) const;
  BlockView block(uint32_t index) const;
  int64_t row_count() const;

 private:
  struct Entry {
    void* data;  // null once released
    size_t bytes;
    uint32_t rows;
  };
  const std::vector<ColumnSchema> schema_;
  BufferPool* const pool_;
  const uint32_t block_size_bytes_;
  mutable std::mutex mutex_;
  std::vector<Entry> blocks_;
  int64_t rows_ = 0;
  std::atomic<size_t> live_bytes_{0};
  std::function<void()> append_listener_;
};

}  // namespace tessera
