#include "relational_operators/vector_block_writer.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tessera {

VectorBlockWriter::VectorBlockWriter(TemporaryRelation* relation)
    : relation_(relation), builder_(relation->schema(), relation->block_size_bytes()) {}

void VectorBlockWriter::AppendRow(const std::vector<const ColumnVector*>& columns, uint32_t row) {
  for (size_t c = 0; c < columns.size(); ++c) {
    const ColumnVector& vector = *columns[c];
    const int column = static_cast<int>(c);
    if (vector.IsNull(row)) {
      builder_.AppendNull(column);
      continue;
    }
    const Type& type = vector.type();
    if (type.IsString()) {
      builder_.AppendString(column, vector.strings()[row]);
      continue;
    }
    const int width = type.FixedWidth();
    std::memcpy(builder_.AppendFixed(column), vector.values<uint8_t>() + static_cast<size_t>(row) * width, width);
  }
}

absl::Status VectorBlockWriter::Append(const std::vector<const ColumnVector*>& columns,
                                       const SelectionVector* selection, uint32_t size) {
  const uint32_t count = selection != nullptr ? selection->count : size;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t row = selection != nullptr ? selection->rows[i] : i;
    AppendRow(columns, row);
    if (!builder_.CommitRow()) {
      if (builder_.empty()) return absl::ResourceExhaustedError("a result row is larger than a block");
      TESSERA_RETURN_IF_ERROR(relation_->AppendBlock(builder_).status());
      AppendRow(columns, row);
      if (!builder_.CommitRow()) return absl::ResourceExhaustedError("a result row is larger than a block");
    }
    ++rows_written_;
  }
  return absl::OkStatus();
}

absl::Status VectorBlockWriter::Flush() {
  if (builder_.empty()) return absl::OkStatus();
  return relation_->AppendBlock(builder_).status();
}

}  // namespace tessera
