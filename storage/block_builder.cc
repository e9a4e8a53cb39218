#include "storage/block_builder.h"

#include <algorithm>
#include <cstring>

#include "glog/logging.h"
#include "storage/block_layout.h"

namespace tessera {
namespace {

constexpr size_t Align8(size_t n) { return (n + 7) & ~size_t{7}; }

// Orders raw physical values of one fixed-width type; used to compute zone maps.
template <typename T>
void MinMaxOf(const uint8_t* values, uint32_t rows, const uint8_t* validity, T* min, T* max, bool* any) {
  const T* typed = reinterpret_cast<const T*>(values);
  for (uint32_t i = 0; i < rows; ++i) {
    if (validity != nullptr && !GetBit(validity, i)) continue;
    T v = typed[i];
    if (!*any) {
      *min = *max = v;
      *any = true;
    } else {
      if (v < *min) *min = v;
      if (*max < v) *max = v;
    }
  }
}

template <typename T>
void ZoneMapFixed(const uint8_t* values, uint32_t rows, const uint8_t* validity, ColumnChunk* chunk) {
  T min{}, max{};
  bool any = false;
  MinMaxOf<T>(values, rows, validity, &min, &max, &any);
  chunk->has_zone_map = any ? 1 : 0;
  if (any) {
    std::memcpy(chunk->zone_min, &min, sizeof(T));
    std::memcpy(chunk->zone_max, &max, sizeof(T));
  }
}

}  // namespace

BlockBuilder::BlockBuilder(const std::vector<ColumnSchema>& columns, uint32_t block_size_bytes)
    : block_size_bytes_(block_size_bytes), columns_(columns.size()) {
  for (size_t i = 0; i < columns.size(); ++i) {
    columns_[i].type = columns[i].type;
    columns_[i].width = columns[i].type.FixedWidth();
    fixed_bytes_per_row_ += columns_[i].width > 0 ? columns_[i].width : sizeof(uint32_t);
  }
  Reset();
}

void BlockBuilder::Reset() {
  for (ColumnStaging& staging : columns_) {
    staging.rows = 0;
    staging.null_count = 0;
    staging.values_size = 0;
    staging.offsets.assign(1, 0);
    staging.heap.clear();
    std::fill(staging.validity.begin(), staging.validity.end(), 0);
  }
  row_count_ = 0;
  heap_bytes_ = 0;
  pending_heap_bytes_ = 0;
}

void BlockBuilder::AppendNull(int column) {
  ColumnStaging& staging = columns_[column];
  if (staging.width > 0) {
    std::memset(AppendFixed(column), 0, staging.width);
    --staging.rows;  // AppendFixed counted the row as valid; it is redone below as NULL
  } else {
    staging.offsets.push_back(static_cast<uint32_t>(staging.heap.size()));
  }
  if ((staging.rows >> 3) >= staging.validity.size()) SetBit(staging.validity, staging.rows);  // grow
  staging.validity[staging.rows >> 3] &= static_cast<uint8_t>(~(1u << (staging.rows & 7)));
  ++staging.rows;
  ++staging.null_count;
}

void BlockBuilder::AppendValue(int column, const Value& value) {
  if (value.is_null()) {
    AppendNull(column);
    return;
  }
  const Type& type = columns_[column].type;
  switch (type.id()) {
    case TypeId::kBoolean: Append<uint8_t>(column, value.AsBool() ? 1 : 0); break;
    case TypeId::kInteger:
    case TypeId::kDate: Append<int32_t>(column, static_cast<int32_t>(value.AsInt64())); break;
    case TypeId::kBigInt:
    case TypeId::kTimestamp: Append<int64_t>(column, value.AsInt64()); break;
    case TypeId::kDouble: Append<double>(column, value.AsDouble()); break;
    case TypeId::kDecimal:
      if (type.IsWideDecimal()) {
        Append<int128>(column, value.AsInt128());
      } else {
        Append<int64_t>(column, static_cast<int64_t>(value.AsInt128()));
      }
      break;
    case TypeId::kInterval: Append<Interval>(column, value.AsInterval()); break;
    case TypeId::kChar:
    case TypeId::kVarchar: AppendString(column, value.AsString()); break;
    case TypeId::kNull: AppendNull(column); break;
  }
}

size_t BlockBuilder::FixedOverhead() const {
  // Header, chunk directory, per-column alignment slack (3 sections) and the extra string offset.
  return sizeof(BlockHeader) + columns_.size() * (sizeof(ColumnChunk) + 3 * 7 + sizeof(uint32_t));
}

size_t BlockBuilder::UpperBoundSize(uint32_t rows, size_t heap_bytes) const {
  return FixedOverhead() + rows * fixed_bytes_per_row_ + columns_.size() * ((rows + 7) / 8) + heap_bytes;
}

bool BlockBuilder::CommitRow() {
  size_t heap = heap_bytes_ + pending_heap_bytes_;
  if (UpperBoundSize(row_count_ + 1, heap) > block_size_bytes_) {
    last_rejected_row_bytes_ = fixed_bytes_per_row_ + columns_.size() + pending_heap_bytes_;
    RollBackRow();
    return false;
  }
  heap_bytes_ = heap;
  pending_heap_bytes_ = 0;
  ++row_count_;
  return true;
}

uint32_t BlockBuilder::RowsThatFit(uint32_t count, const uint32_t* string_bytes) const {
  if (string_bytes == nullptr) {
    const size_t base = UpperBoundSize(row_count_, heap_bytes_);
    if (base >= block_size_bytes_) return 0;
    // Each row adds its fixed bytes plus at most one validity byte per column (a conservative bound).
    const size_t per_row = fixed_bytes_per_row_ + columns_.size();
    return static_cast<uint32_t>(std::min<size_t>(count, (block_size_bytes_ - base) / per_row));
  }
  size_t heap = heap_bytes_;
  uint32_t n = 0;
  while (n < count && UpperBoundSize(row_count_ + n + 1, heap + string_bytes[n]) <= block_size_bytes_) {
    heap += string_bytes[n];
    ++n;
  }
  return n;
}

void BlockBuilder::AppendFixedColumn(int column, const uint8_t* values, const uint32_t* rows, uint32_t count,
                                     const uint8_t* validity, uint32_t validity_offset) {
  ColumnStaging& staging = columns_[column];
  const int width = staging.width;
  const size_t old_size = staging.values_size;
  staging.values_size += static_cast<size_t>(count) * width;
  if (staging.values_size > staging.values.size()) {
    staging.values.resize(std::max<size_t>(4096, 2 * staging.values_size));
  }
  uint8_t* out = staging.values.data() + old_size;
  if (rows == nullptr) {
    std::memcpy(out, values, static_cast<size_t>(count) * width);
  } else {
    for (uint32_t i = 0; i < count; ++i) std::memcpy(out + i * width, values + static_cast<size_t>(rows[i]) * width, width);
  }
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t source = rows == nullptr ? i : rows[i];
    if (validity != nullptr && !tessera::GetBit(validity, validity_offset + source)) {
      SetBit(staging.validity, staging.rows);  // grow
      staging.validity[staging.rows >> 3] &= static_cast<uint8_t>(~(1u << (staging.rows & 7)));
      std::memset(out + i * width, 0, width);
      ++staging.null_count;
    } else {
      SetBit(staging.validity, staging.rows);
    }
    ++staging.rows;
  }
}

void BlockBuilder::AppendStringColumn(int column, const std::string_view* values, const uint32_t* rows,
                                      uint32_t count, const uint8_t* validity, uint32_t validity_offset) {
  ColumnStaging& staging = columns_[column];
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t source = rows == nullptr ? i : rows[i];
    if (validity != nullptr && !tessera::GetBit(validity, validity_offset + source)) {
      staging.offsets.push_back(static_cast<uint32_t>(staging.heap.size()));
      SetBit(staging.validity, staging.rows);  // grow
      staging.validity[staging.rows >> 3] &= static_cast<uint8_t>(~(1u << (staging.rows & 7)));
      ++staging.null_count;
    } else {
      const std::string_view value = values[source];
      staging.heap.append(value.data(), value.size());
      staging.offsets.push_back(static_cast<uint32_t>(staging.heap.size()));
      SetBit(staging.validity, staging.rows);
    }
    ++staging.rows;
  }
}

void BlockBuilder::EndRows(uint32_t count, size_t string_bytes) {
  row_count_ += count;
  heap_bytes_ += string_bytes;
  DCHECK_EQ(pending_heap_bytes_, 0u);
}

void BlockBuilder::RollBackRow() {
  for (ColumnStaging& staging : columns_) {
    if (staging.rows == row_count_) continue;  // this column was not appended to
    --staging.rows;
    uint32_t row = staging.rows;
    bool was_null = !((staging.validity[row >> 3] >> (row & 7)) & 1);
    if (was_null) --staging.null_count;
    staging.validity[row >> 3] &= static_cast<uint8_t>(~(1u << (row & 7)));
    if (staging.width > 0) {
      staging.values_size -= staging.width;
    } else {
      staging.offsets.pop_back();
      staging.heap.resize(staging.offsets.back());
    }
  }
  pending_heap_bytes_ = 0;
}

size_t BlockBuilder::EncodedSize() const {
  size_t size = sizeof(BlockHeader) + columns_.size() * sizeof(ColumnChunk);
  for (const ColumnStaging& staging : columns_) {
    size += Align8(staging.width > 0 ? staging.values_size : staging.offsets.size() * sizeof(uint32_t));
    if (staging.null_count > 0) size += Align8((row_count_ + 7) / 8);
    size += Align8(staging.heap.size());
  }
  return size;
}

void BlockBuilder::Finish(void* destination, bool string_zone_maps) {
  uint8_t* out = static_cast<uint8_t*>(destination);
  const size_t total = EncodedSize();
  auto* header = reinterpret_cast<BlockHeader*>(out);
  std::memset(header, 0, sizeof(BlockHeader));
  header->magic = kBlockMagic;
  header->version = kBlockFormatVersion;
  header->column_count = static_cast<uint16_t>(columns_.size());
  header->row_count = row_count_;
  header->used_bytes = static_cast<uint32_t>(total);
  auto* chunks = reinterpret_cast<ColumnChunk*>(out + sizeof(BlockHeader));
  size_t offset = sizeof(BlockHeader) + columns_.size() * sizeof(ColumnChunk);
  auto place = [&](const void* source, size_t bytes) {
    uint32_t at = static_cast<uint32_t>(offset);
    if (bytes > 0) std::memcpy(out + offset, source, bytes);
    std::memset(out + offset + bytes, 0, Align8(bytes) - bytes);
    offset += Align8(bytes);
    return at;
  };
  for (size_t c = 0; c < columns_.size(); ++c) {
    ColumnStaging& staging = columns_[c];
    DCHECK_EQ(staging.rows, row_count_);
    ColumnChunk& chunk = chunks[c];
    std::memset(&chunk, 0, sizeof(chunk));
    chunk.type_id = static_cast<uint8_t>(staging.type.id());
    chunk.null_count = staging.null_count;
    if (staging.width > 0) {
      chunk.values_bytes = static_cast<uint32_t>(staging.values_size);
      chunk.values_offset = place(staging.values.data(), staging.values_size);
    } else {
      chunk.values_bytes = static_cast<uint32_t>(staging.offsets.size() * sizeof(uint32_t));
      chunk.values_offset = place(staging.offsets.data(), chunk.values_bytes);
    }
    const uint8_t* validity = nullptr;
    if (staging.null_count > 0) {
      chunk.validity_offset = place(staging.validity.data(), (row_count_ + 7) / 8);
      validity = out + chunk.validity_offset;
    }
    if (staging.width == 0) {
      chunk.heap_bytes = static_cast<uint32_t>(staging.heap.size());
      chunk.heap_offset = place(staging.heap.data(), staging.heap.size());
    }
    const uint8_t* values = out + chunk.values_offset;
    switch (staging.type.id()) {
      case TypeId::kBoolean: ZoneMapFixed<uint8_t>(values, row_count_, validity, &chunk); break;
      case TypeId::kInteger:
      case TypeId::kDate: ZoneMapFixed<int32_t>(values, row_count_, validity, &chunk); break;
      case TypeId::kBigInt:
      case TypeId::kTimestamp: ZoneMapFixed<int64_t>(values, row_count_, validity, &chunk); break;
      case TypeId::kDouble: ZoneMapFixed<double>(values, row_count_, validity, &chunk); break;
      case TypeId::kDecimal:
        if (staging.type.IsWideDecimal()) {
          ZoneMapFixed<int128>(values, row_count_, validity, &chunk);
        } else {
          ZoneMapFixed<int64_t>(values, row_count_, validity, &chunk);
        }
        break;
      case TypeId::kChar:
      case TypeId::kVarchar: {
        if (!string_zone_maps) break;
        const uint32_t* offsets = staging.offsets.data();
        std::string_view min, max;
        uint32_t min_row = 0, max_row = 0;
        bool any = false;
        for (uint32_t i = 0; i < row_count_; ++i) {
          if (validity != nullptr && !GetBit(validity, i)) continue;
          std::string_view v(staging.heap.data() + offsets[i], offsets[i + 1] - offsets[i]);
          if (!any || v < min) min = v, min_row = i;
          if (!any || v > max) max = v, max_row = i;
          any = true;
        }
        chunk.has_zone_map = any ? 1 : 0;
        if (any) {
          uint32_t min_pair[2] = {offsets[min_row], static_cast<uint32_t>(min.size())};
          uint32_t max_pair[2] = {offsets[max_row], static_cast<uint32_t>(max.size())};
          std::memcpy(chunk.zone_min, min_pair, sizeof(min_pair));
          std::memcpy(chunk.zone_max, max_pair, sizeof(max_pair));
        }
        break;
      }
      case TypeId::kInterval:
      case TypeId::kNull: break;  // no natural order for intervals: no zone map
    }
  }
  DCHECK_EQ(offset, total);
  Reset();
}

}  // namespace tessera
