#include "relational_operators/vector_block_writer.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tessera {

std::unique_ptr<BlockBuilder> BlockBuilderPool::Take() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<BlockBuilder> builder = std::move(idle_.back());
      idle_.pop_back();
      return builder;
    }
  }
  return std::make_unique<BlockBuilder>(relation_->schema(), relation_->block_size_bytes());
}

void BlockBuilderPool::Give(std::unique_ptr<BlockBuilder> builder) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(builder));
}

void BlockBuilderPool::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.clear();
}

VectorBlockWriter::VectorBlockWriter(TemporaryRelation* relation, BlockBuilderPool* builders)
    : builders_(builders),
      builder_(builders != nullptr ? builders->Take()
                                   : std::make_unique<BlockBuilder>(relation->schema(), relation->block_size_bytes())),
      take_block_([relation](BlockBuilder& builder) { return relation->AppendBlock(builder).status(); }) {}

VectorBlockWriter::VectorBlockWriter(const std::vector<ColumnSchema>& schema, uint32_t block_size_bytes,
                                     TakeBlock take_block, std::string row_too_large)
    : builder_(std::make_unique<BlockBuilder>(schema, block_size_bytes)),
      take_block_(std::move(take_block)),
      row_too_large_(std::move(row_too_large)) {}

absl::Status VectorBlockWriter::Append(const std::vector<const ColumnVector*>& columns,
                                       const SelectionVector* selection, uint32_t size) {
  const uint32_t count = selection != nullptr ? selection->count : size;
  const uint32_t* rows = selection != nullptr ? selection->rows.data() : nullptr;
  bool has_strings = false;
  for (const ColumnVector* column : columns) has_strings |= column->type().IsString();
  if (has_strings) {
    string_bytes_.assign(count, 0);
    for (const ColumnVector* column : columns) {
      if (!column->type().IsString()) continue;
      const std::string_view* strings = column->strings();
      for (uint32_t i = 0; i < count; ++i) {
        const uint32_t row = rows != nullptr ? rows[i] : i;
        if (!column->IsNull(row)) string_bytes_[i] += static_cast<uint32_t>(strings[row].size());
      }
    }
  }
  uint32_t done = 0;
  while (done < count) {
    const uint32_t fit = builder_->RowsThatFit(count - done, has_strings ? string_bytes_.data() + done : nullptr);
    if (fit == 0) {
      if (builder_->empty()) {
        if (row_too_large_.empty()) return absl::ResourceExhaustedError("a result row is larger than a block");
        return absl::InvalidArgumentError(row_too_large_);
      }
      TESSERA_RETURN_IF_ERROR(take_block_(*builder_));
      continue;
    }
    const uint32_t* chunk_rows = rows != nullptr ? rows + done : nullptr;
    // Without a selection, rows done.. are contiguous: shift the sources instead of passing row numbers.
    for (size_t c = 0; c < columns.size(); ++c) {
      const ColumnVector& vector = *columns[c];
      const uint32_t offset = rows != nullptr ? 0 : done;
      if (vector.type().IsString()) {
        builder_->AppendStringColumn(static_cast<int>(c), vector.strings() + offset, chunk_rows, fit, vector.validity(),
                                     vector.validity_bit_offset() + offset);
      } else {
        const int width = vector.type().FixedWidth();
        builder_->AppendFixedColumn(static_cast<int>(c), vector.values<uint8_t>() + static_cast<size_t>(offset) * width,
                                    chunk_rows, fit, vector.validity(), vector.validity_bit_offset() + offset);
      }
    }
    size_t bytes = 0;
    if (has_strings) {
      for (uint32_t i = 0; i < fit; ++i) bytes += string_bytes_[done + i];
    }
    builder_->EndRows(fit, bytes);
    done += fit;
    rows_written_ += fit;
  }
  return absl::OkStatus();
}

absl::Status VectorBlockWriter::Flush() {
  if (!builder_->empty()) TESSERA_RETURN_IF_ERROR(take_block_(*builder_));
  if (builders_ != nullptr) builders_->Give(std::move(builder_));
  return absl::OkStatus();
}

}  // namespace tessera
