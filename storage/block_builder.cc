#include "storage/block_builder.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_map.h"
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
  // A row of no columns (a FROM-less SELECT's one row, a semi-join's probe side that keeps no column) takes no
  // bytes; counting it as one keeps such a block's row count bounded like that of one-byte rows.
  fixed_bytes_per_row_ = std::max<size_t>(fixed_bytes_per_row_, 1);
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
    staging.encoding = ColumnEncoding::kPlain;
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
    case TypeId::kBoolean:
      Append<uint8_t>(column, value.AsBool() ? 1 : 0);
      break;
    case TypeId::kInteger:
    case TypeId::kDate:
      Append<int32_t>(column, static_cast<int32_t>(value.AsInt64()));
      break;
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
      Append<int64_t>(column, value.AsInt64());
      break;
    case TypeId::kDouble:
      Append<double>(column, value.AsDouble());
      break;
    case TypeId::kDecimal:
      if (type.IsWideDecimal()) {
        Append<int128>(column, value.AsInt128());
      } else {
        Append<int64_t>(column, static_cast<int64_t>(value.AsInt128()));
      }
      break;
    case TypeId::kInterval:
      Append<Interval>(column, value.AsInterval());
      break;
    case TypeId::kChar:
    case TypeId::kVarchar:
      AppendString(column, value.AsString());
      break;
    case TypeId::kNull:
      AppendNull(column);
      break;
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
    for (uint32_t i = 0; i < count; ++i)
      std::memcpy(out + i * width, values + static_cast<size_t>(rows[i]) * width, width);
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

void BlockBuilder::AppendStringColumn(int column, const std::string_view* values, const uint32_t* rows, uint32_t count,
                                      const uint8_t* validity, uint32_t validity_offset) {
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

size_t BlockBuilder::EncodedSize() const { return SizeOf(/*plain=*/false); }

size_t BlockBuilder::SizeOf(bool plain) const {
  size_t size = sizeof(BlockHeader) + columns_.size() * sizeof(ColumnChunk);
  for (const ColumnStaging& staging : columns_) {
    if (!plain && staging.encoding != ColumnEncoding::kPlain) {
      size += Align8(staging.encoded_values_bytes) + Align8(staging.encoded_heap_bytes);
    } else {
      size += Align8(staging.width > 0 ? staging.values_size : staging.offsets.size() * sizeof(uint32_t));
      size += Align8(staging.heap.size());
    }
    if (staging.null_count > 0) size += Align8((row_count_ + 7) / 8);
  }
  return size;
}

namespace {

// The value range of a frame-of-reference column, as an unsigned width; false when it has no values or no
// frame of reference.
template <typename T, typename U>
bool RangeOf(const uint8_t* values, uint32_t rows, const uint8_t* validity, U* range) {
  T min{}, max{};
  bool any = false;
  MinMaxOf<T>(values, rows, validity, &min, &max, &any);
  *range = any ? static_cast<U>(static_cast<U>(max) - static_cast<U>(min)) : 0;
  return true;
}

// Codes of a frame-of-reference column: value - base, 0 for NULL rows.
template <typename T, typename U>
void FrameCodes(const uint8_t* values, uint32_t rows, const uint8_t* validity, const uint8_t* zone_min,
                uint64_t* codes) {
  T base;
  std::memcpy(&base, zone_min, sizeof(T));
  const T* typed = reinterpret_cast<const T*>(values);
  for (uint32_t i = 0; i < rows; ++i) codes[i] = static_cast<uint64_t>(static_cast<U>(typed[i]) - static_cast<U>(base));
  if (validity == nullptr) return;
  for (uint32_t i = 0; i < rows; ++i) {
    if (!GetBit(validity, i)) codes[i] = 0;
  }
}

}  // namespace

void BlockBuilder::PlanFrameOfReference(ColumnStaging& staging) {
  const uint8_t* validity = staging.null_count > 0 ? staging.validity.data() : nullptr;
  unsigned __int128 range = 0;
  switch (staging.width) {
    case 4: {
      uint32_t r = 0;
      RangeOf<int32_t, uint32_t>(staging.values.data(), row_count_, validity, &r);
      range = r;
      break;
    }
    case 8: {
      uint64_t r = 0;
      RangeOf<int64_t, uint64_t>(staging.values.data(), row_count_, validity, &r);
      range = r;
      break;
    }
    case 16:
      RangeOf<int128, unsigned __int128>(staging.values.data(), row_count_, validity, &range);
      break;
    default:
      return;
  }
  if (range >> kMaxPackedBitWidth != 0) return;
  const int bit_width = BitWidthFor(static_cast<uint64_t>(range));
  const size_t packed = PackedBytes(row_count_, bit_width);
  if (packed >= staging.values_size) return;
  staging.encoding = ColumnEncoding::kFrameOfReference;
  staging.bit_width = bit_width;
  staging.encoded_values_bytes = packed;
  staging.encoded_heap_bytes = 0;
}

void BlockBuilder::PlanDictionary(ColumnStaging& staging) {
  if (staging.null_count == row_count_) return;  // nothing to put in a dictionary
  const uint8_t* validity = staging.null_count > 0 ? staging.validity.data() : nullptr;
  const uint32_t* offsets = staging.offsets.data();
  // A dictionary pays only where values repeat; past half the rows distinct it cannot win by enough to matter.
  const uint32_t limit = std::max<uint32_t>(1, row_count_ / 2);
  absl::flat_hash_map<std::string_view, uint32_t> ids;
  staging.dictionary_ids.resize(row_count_);
  staging.dictionary.clear();
  size_t dictionary_bytes = 0;
  for (uint32_t i = 0; i < row_count_; ++i) {
    if (validity != nullptr && !GetBit(validity, i)) {
      staging.dictionary_ids[i] = 0;
      continue;
    }
    const std::string_view value(staging.heap.data() + offsets[i], offsets[i + 1] - offsets[i]);
    auto [it, inserted] = ids.try_emplace(value, static_cast<uint32_t>(staging.dictionary.size()));
    if (inserted) {
      if (staging.dictionary.size() == limit) return;
      staging.dictionary.push_back(value);
      dictionary_bytes += value.size();
    }
    staging.dictionary_ids[i] = it->second;
  }
  const uint32_t size = static_cast<uint32_t>(staging.dictionary.size());
  const int bit_width = BitWidthFor(size - 1);
  const size_t packed = PackedBytes(row_count_, bit_width);
  const size_t heap = StringDictionary::HeaderBytes(size) + dictionary_bytes;
  if (Align8(packed) + Align8(heap) >=
      Align8(staging.offsets.size() * sizeof(uint32_t)) + Align8(staging.heap.size())) {
    return;
  }
  // Sorted, so that code order is value order: comparisons translate into code ranges.
  std::vector<uint32_t> order(size);
  for (uint32_t i = 0; i < size; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return staging.dictionary[a] < staging.dictionary[b]; });
  staging.dictionary_codes.resize(size);
  std::vector<std::string_view> sorted(size);
  for (uint32_t code = 0; code < size; ++code) {
    staging.dictionary_codes[order[code]] = code;
    sorted[code] = staging.dictionary[order[code]];
  }
  staging.dictionary = std::move(sorted);
  staging.encoding = ColumnEncoding::kDictionary;
  staging.bit_width = bit_width;
  staging.encoded_values_bytes = packed;
  staging.encoded_heap_bytes = heap;
}

size_t BlockBuilder::PlanCompressed() {
  for (ColumnStaging& staging : columns_) {
    staging.encoding = ColumnEncoding::kPlain;
    switch (staging.type.id()) {
      case TypeId::kInteger:
      case TypeId::kDate:
      case TypeId::kBigInt:
      case TypeId::kTimestamp:
      case TypeId::kDecimal:
        PlanFrameOfReference(staging);
        break;
      case TypeId::kChar:
      case TypeId::kVarchar:
        PlanDictionary(staging);
        break;
      default:
        break;  // BOOLEAN, DOUBLE, INTERVAL stay plain
    }
  }
  return EncodedSize();
}

size_t BlockBuilder::PlanPlain() {
  for (ColumnStaging& staging : columns_) staging.encoding = ColumnEncoding::kPlain;
  return EncodedSize();
}

void BlockBuilder::Finish(void* destination, bool string_zone_maps) {
  for (ColumnStaging& staging : columns_) staging.encoding = ColumnEncoding::kPlain;
  Write(destination, string_zone_maps);
}

void BlockBuilder::FinishCompressed(void* destination) {
  Write(destination, /*string_zone_maps=*/true);
  BlockView::Seal(destination);
}

void BlockBuilder::Write(void* destination, bool string_zone_maps) {
  uint8_t* out = static_cast<uint8_t*>(destination);
  const size_t total = EncodedSize();
  auto* header = reinterpret_cast<BlockHeader*>(out);
  std::memset(header, 0, sizeof(BlockHeader));
  header->magic = kBlockMagic;
  header->version = kBlockFormatVersion;
  header->column_count = static_cast<uint16_t>(columns_.size());
  header->row_count = row_count_;
  header->used_bytes = static_cast<uint32_t>(total);
  header->plain_bytes = static_cast<uint32_t>(SizeOf(/*plain=*/true));
  auto* chunks = reinterpret_cast<ColumnChunk*>(out + sizeof(BlockHeader));
  size_t offset = sizeof(BlockHeader) + columns_.size() * sizeof(ColumnChunk);
  // Reserves an 8-byte-aligned section of `bytes` bytes (its padding zeroed) and returns its offset.
  auto reserve = [&](size_t bytes) {
    uint32_t at = static_cast<uint32_t>(offset);
    std::memset(out + offset + bytes, 0, Align8(bytes) - bytes);
    offset += Align8(bytes);
    return at;
  };
  auto place = [&](const void* source, size_t bytes) {
    uint32_t at = reserve(bytes);
    if (bytes > 0) std::memcpy(out + at, source, bytes);
    return at;
  };
  for (size_t c = 0; c < columns_.size(); ++c) {
    ColumnStaging& staging = columns_[c];
    DCHECK_EQ(staging.rows, row_count_);
    ColumnChunk& chunk = chunks[c];
    std::memset(&chunk, 0, sizeof(chunk));
    chunk.type_id = static_cast<uint8_t>(staging.type.id());
    chunk.null_count = staging.null_count;
    chunk.encoding = static_cast<uint8_t>(staging.encoding);
    chunk.bit_width = static_cast<uint8_t>(staging.bit_width);
    const uint8_t* validity = staging.null_count > 0 ? staging.validity.data() : nullptr;
    // Zone maps come from the staged (plain) values, before any encoding, which may use zone_min as its base.
    const uint8_t* values = staging.values.data();
    switch (staging.type.id()) {
      case TypeId::kBoolean:
        ZoneMapFixed<uint8_t>(values, row_count_, validity, &chunk);
        break;
      case TypeId::kInteger:
      case TypeId::kDate:
        ZoneMapFixed<int32_t>(values, row_count_, validity, &chunk);
        break;
      case TypeId::kBigInt:
      case TypeId::kTimestamp:
        ZoneMapFixed<int64_t>(values, row_count_, validity, &chunk);
        break;
      case TypeId::kDouble:
        ZoneMapFixed<double>(values, row_count_, validity, &chunk);
        break;
      case TypeId::kDecimal:
        if (staging.type.IsWideDecimal()) {
          ZoneMapFixed<int128>(values, row_count_, validity, &chunk);
        } else {
          ZoneMapFixed<int64_t>(values, row_count_, validity, &chunk);
        }
        break;
      case TypeId::kChar:
      case TypeId::kVarchar: {
        if (!string_zone_maps || staging.null_count == row_count_) break;
        chunk.has_zone_map = 1;
        uint32_t min_pair[2];
        uint32_t max_pair[2];
        if (staging.encoding == ColumnEncoding::kDictionary) {
          // The dictionary is sorted: its first and last entries, located inside the heap section.
          const uint32_t size = static_cast<uint32_t>(staging.dictionary.size());
          const uint32_t last_offset =
              static_cast<uint32_t>(staging.encoded_heap_bytes - staging.dictionary.back().size());
          min_pair[0] = static_cast<uint32_t>(StringDictionary::HeaderBytes(size));
          min_pair[1] = static_cast<uint32_t>(staging.dictionary.front().size());
          max_pair[0] = last_offset;
          max_pair[1] = static_cast<uint32_t>(staging.dictionary.back().size());
        } else {
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
          min_pair[0] = offsets[min_row];
          min_pair[1] = static_cast<uint32_t>(min.size());
          max_pair[0] = offsets[max_row];
          max_pair[1] = static_cast<uint32_t>(max.size());
        }
        std::memcpy(chunk.zone_min, min_pair, sizeof(min_pair));
        std::memcpy(chunk.zone_max, max_pair, sizeof(max_pair));
        break;
      }
      case TypeId::kInterval:
      case TypeId::kNull:
        break;  // no natural order for intervals: no zone map
    }
    switch (staging.encoding) {
      case ColumnEncoding::kPlain:
        if (staging.width > 0) {
          chunk.values_bytes = static_cast<uint32_t>(staging.values_size);
          chunk.values_offset = place(staging.values.data(), staging.values_size);
        } else {
          chunk.values_bytes = static_cast<uint32_t>(staging.offsets.size() * sizeof(uint32_t));
          chunk.values_offset = place(staging.offsets.data(), chunk.values_bytes);
        }
        break;
      case ColumnEncoding::kFrameOfReference: {
        codes_.resize(row_count_);
        switch (staging.width) {
          case 4:
            FrameCodes<int32_t, uint32_t>(values, row_count_, validity, chunk.zone_min, codes_.data());
            break;
          case 8:
            FrameCodes<int64_t, uint64_t>(values, row_count_, validity, chunk.zone_min, codes_.data());
            break;
          default:
            FrameCodes<int128, unsigned __int128>(values, row_count_, validity, chunk.zone_min, codes_.data());
            break;
        }
        chunk.values_bytes = static_cast<uint32_t>(staging.encoded_values_bytes);
        chunk.values_offset = reserve(chunk.values_bytes);
        PackCodes(codes_.data(), row_count_, staging.bit_width, out + chunk.values_offset);
        break;
      }
      case ColumnEncoding::kDictionary: {
        codes_.resize(row_count_);
        for (uint32_t i = 0; i < row_count_; ++i) codes_[i] = staging.dictionary_codes[staging.dictionary_ids[i]];
        if (validity != nullptr) {
          for (uint32_t i = 0; i < row_count_; ++i) {
            if (!GetBit(validity, i)) codes_[i] = 0;
          }
        }
        chunk.values_bytes = static_cast<uint32_t>(staging.encoded_values_bytes);
        chunk.values_offset = reserve(chunk.values_bytes);
        PackCodes(codes_.data(), row_count_, staging.bit_width, out + chunk.values_offset);
        break;
      }
    }
    if (validity != nullptr) chunk.validity_offset = place(staging.validity.data(), (row_count_ + 7) / 8);
    if (staging.encoding == ColumnEncoding::kDictionary) {
      chunk.heap_bytes = static_cast<uint32_t>(staging.encoded_heap_bytes);
      chunk.heap_offset = reserve(chunk.heap_bytes);
      uint8_t* heap = out + chunk.heap_offset;
      const uint32_t size = static_cast<uint32_t>(staging.dictionary.size());
      std::memcpy(heap, &size, sizeof(size));
      uint8_t* bytes = heap + StringDictionary::HeaderBytes(size);
      uint32_t at = 0;
      for (uint32_t code = 0; code <= size; ++code) {
        std::memcpy(heap + sizeof(uint32_t) * (1 + code), &at, sizeof(at));
        if (code == size) break;
        std::memcpy(bytes + at, staging.dictionary[code].data(), staging.dictionary[code].size());
        at += static_cast<uint32_t>(staging.dictionary[code].size());
      }
    } else if (staging.width == 0) {
      chunk.heap_bytes = static_cast<uint32_t>(staging.heap.size());
      chunk.heap_offset = place(staging.heap.data(), staging.heap.size());
    }
  }
  DCHECK_EQ(offset, total);
  Reset();
}

}  // namespace tessera
