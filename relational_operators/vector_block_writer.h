#pragma once
// Writes rows held in column vectors into temporary blocks of a relation, column at a time. One writer per work
// order (not thread-safe); the relation itself is thread-safe. Full blocks go to the relation as they fill;
// Flush() writes the last, partial one.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "expressions/column_vector.h"
#include "relational_operators/temporary_relation.h"
#include "storage/block_builder.h"

namespace tessera {

class VectorBlockWriter {
 public:
  explicit VectorBlockWriter(TemporaryRelation* relation);

  // Appends the selected rows (all rows 0..size-1 when `selection` is null) of `columns`, which match the
  // relation's schema in order and type.
  absl::Status Append(const std::vector<const ColumnVector*>& columns, const SelectionVector* selection,
                      uint32_t size);
  absl::Status Flush();
  int64_t rows_written() const { return rows_written_; }

 private:
  TemporaryRelation* relation_;
  BlockBuilder builder_;
  int64_t rows_written_ = 0;
  std::vector<uint32_t> string_bytes_;  // per row of the current Append: total string bytes
};

}  // namespace tessera
