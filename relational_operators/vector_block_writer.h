#pragma once
// Writes rows held in column vectors into blocks, column at a time: temporary blocks of a relation, or any other
// destination that takes a full BlockBuilder (the base blocks of a load). One writer per work order (not
// thread-safe); the relation itself is thread-safe. Full blocks go to the destination as they fill; Flush() writes
// the last, partial one.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "expressions/column_vector.h"
#include "relational_operators/temporary_relation.h"
#include "storage/block_builder.h"

namespace tessera {

// Block builders reused by the work orders of one operator: a builder's staging buffers grow to a block's size
// once and are kept, instead of every work order allocating (and zeroing) them again for its output block. A
// writer takes one when it starts and gives it back, empty, when it has written its last block. Keeps at most
// one builder per concurrently running writer. Thread-safe.
class BlockBuilderPool {
 public:
  explicit BlockBuilderPool(const TemporaryRelation* relation) : relation_(relation) {}

  // An empty builder for the relation's blocks.
  std::unique_ptr<BlockBuilder> Take();
  void Give(std::unique_ptr<BlockBuilder> builder);
  // Frees the idle builders (their staging buffers are heap memory outside the buffer pool's accounting), e.g.
  // once the operator's last work order has finished.
  void Clear();

 private:
  const TemporaryRelation* const relation_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<BlockBuilder>> idle_;
};

class VectorBlockWriter {
 public:
  // With `builders`, uses one of its builders and gives it back on Flush().
  explicit VectorBlockWriter(TemporaryRelation* relation, BlockBuilderPool* builders = nullptr);
  // Blocks of `schema` with at most `block_size_bytes` go to `take_block`, which empties the builder. A row that
  // does not fit into an empty block fails with InvalidArgument `row_too_large`.
  using TakeBlock = std::function<absl::Status(BlockBuilder&)>;
  VectorBlockWriter(const std::vector<ColumnSchema>& schema, uint32_t block_size_bytes, TakeBlock take_block,
                    std::string row_too_large);

  // Appends the selected rows (all rows 0..size-1 when `selection` is null) of `columns`, which match the
  // relation's schema in order and type.
  absl::Status Append(const std::vector<const ColumnVector*>& columns, const SelectionVector* selection, uint32_t size);
  // Call once, at the end.
  absl::Status Flush();
  int64_t rows_written() const { return rows_written_; }

 private:
  BlockBuilderPool* builders_ = nullptr;
  std::unique_ptr<BlockBuilder> builder_;
  const TakeBlock take_block_;
  const std::string row_too_large_;
  int64_t rows_written_ = 0;
  std::vector<uint32_t> string_bytes_;  // per row of the current Append: total string bytes
};

}  // namespace tessera
