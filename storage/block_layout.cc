#include "storage/block_layout.h"

#include <algorithm>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

template <typename T>
T Load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

Value FixedValue(const uint8_t* p, const Type& type) {
  switch (type.id()) {
    case TypeId::kBoolean:
      return Value::Boolean(*p != 0);
    case TypeId::kInteger:
      return Value::Integer(Load<int32_t>(p));
    case TypeId::kDate:
      return Value::Date(Load<int32_t>(p));
    case TypeId::kBigInt:
      return Value::BigInt(Load<int64_t>(p));
    case TypeId::kTimestamp:
      return Value::Timestamp(Load<int64_t>(p));
    case TypeId::kDouble:
      return Value::Double(Load<double>(p));
    case TypeId::kDecimal:
      return Value::Decimal(type.IsWideDecimal() ? Load<int128>(p) : int128{Load<int64_t>(p)}, type);
    case TypeId::kInterval:
      return Value::IntervalValue(Load<Interval>(p));
    default:
      return Value::Null(type);
  }
}

}  // namespace

namespace {

bool IsFrameOfReferenceType(TypeId type) {
  switch (type) {
    case TypeId::kInteger:
    case TypeId::kDate:
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
    case TypeId::kDecimal:
      return true;
    default:
      return false;
  }
}

uint32_t HeaderChecksum(const uint8_t* data, size_t directory_end) {
  BlockHeader header;
  std::memcpy(&header, data, sizeof(header));
  header.checksum = 0;
  const uint32_t crc = Crc32c(&header, sizeof(header));
  return Crc32c(data + sizeof(BlockHeader), directory_end - sizeof(BlockHeader), crc);
}

uint32_t ColumnChecksum(const uint8_t* data, const ColumnChunk& chunk, uint32_t rows) {
  uint32_t crc = Crc32c(data + chunk.values_offset, chunk.values_bytes);
  if (chunk.validity_offset != 0) crc = Crc32c(data + chunk.validity_offset, (rows + 7) / 8, crc);
  if (chunk.heap_bytes > 0) crc = Crc32c(data + chunk.heap_offset, chunk.heap_bytes, crc);
  return crc;
}

}  // namespace

void BlockView::Seal(void* data) {
  auto* bytes = static_cast<uint8_t*>(data);
  auto* header = reinterpret_cast<BlockHeader*>(bytes);
  auto* chunks = reinterpret_cast<ColumnChunk*>(bytes + sizeof(BlockHeader));
  for (int c = 0; c < header->column_count; ++c) {
    chunks[c].checksum = ColumnChecksum(bytes, chunks[c], header->row_count);
  }
  header->flags |= kBlockChecksummed;
  header->checksum = HeaderChecksum(bytes, sizeof(BlockHeader) + header->column_count * sizeof(ColumnChunk));
}

absl::Status BlockView::Validate(const void* data, size_t bytes, size_t column_count, bool from_disk,
                                 const std::vector<Type>* types) {
  auto corrupt = [](std::string_view why) {
    return absl::DataLossError(absl::StrCat("corrupt block: ", std::string(why)));
  };
  if (bytes < sizeof(BlockHeader)) return corrupt("shorter than its header");
  BlockView view(data);
  const BlockHeader& header = view.header();
  if (header.magic != kBlockMagic) return corrupt("bad magic number");
  if (header.version < kOldestBlockFormatVersion || header.version > kBlockFormatVersion) {
    return corrupt(absl::StrCat("block format version ", header.version, " is not readable by this build (it reads ",
                                "versions ", kOldestBlockFormatVersion, " to ", kBlockFormatVersion, ")"));
  }
  if (header.column_count != column_count) return corrupt("column count does not match the table");
  if (header.used_bytes > bytes) return corrupt("used size larger than the block");
  size_t directory_end = sizeof(BlockHeader) + column_count * sizeof(ColumnChunk);
  if (directory_end > header.used_bytes) return corrupt("column directory outside the block");
  const bool checksummed = (header.flags & kBlockChecksummed) != 0;
  // Every block of format 2 on disk is sealed (LoadBlockWriter): there a cleared flag is damage, not a block
  // without checksums, and must not switch the verification off.
  if (from_disk && !checksummed && header.version >= 2) {
    return corrupt("no checksums in a block of format 2 or later");
  }
  if (checksummed && HeaderChecksum(view.data(), directory_end) != header.checksum) {
    return corrupt("checksum mismatch in the block header or column directory");
  }
  const size_t rows = header.row_count;
  for (size_t c = 0; c < column_count; ++c) {
    auto damaged = [&](std::string_view why) {
      absl::Status status = corrupt(absl::StrCat(std::string(why), " in column ", c));
      status.SetPayload(kDamagedColumnPayload, absl::Cord(absl::StrCat(c)));
      return status;
    };
    const ColumnChunk& chunk = view.chunk(static_cast<int>(c));
    auto inside = [&](uint64_t offset, uint64_t length) {
      return offset >= directory_end && offset + length <= header.used_bytes;
    };
    if (!inside(chunk.values_offset, chunk.values_bytes)) return damaged("values outside the block");
    if (chunk.validity_offset != 0 && !inside(chunk.validity_offset, (rows + 7) / 8)) {
      return damaged("validity bitmap outside the block");
    }
    if (chunk.heap_bytes > 0 && !inside(chunk.heap_offset, chunk.heap_bytes)) return damaged("heap outside the block");
    if (checksummed && ColumnChecksum(view.data(), chunk, header.row_count) != chunk.checksum) {
      return damaged("checksum mismatch");
    }
    TypeId type = static_cast<TypeId>(chunk.type_id);
    if (types != nullptr && header.version >= 2 && (*types)[c].id() != type) {
      return damaged(absl::StrCat("type ", chunk.type_id, " where the table has ", (*types)[c].ToString()));
    }
    const bool is_string = type == TypeId::kChar || type == TypeId::kVarchar;
    const ColumnEncoding encoding = static_cast<ColumnEncoding>(chunk.encoding);
    if (encoding != ColumnEncoding::kPlain) {
      if (chunk.bit_width > kMaxPackedBitWidth) return damaged("bit width out of range");
      if (chunk.values_bytes != PackedBytes(header.row_count, chunk.bit_width)) return damaged("packed size mismatch");
    }
    switch (encoding) {
      case ColumnEncoding::kPlain:
        // Fixed-width values: at least a value per row of the chunk's type (a DECIMAL's width, 8 or 16 bytes,
        // depends on its precision, which only the table knows: at least 8).
        if (!is_string) {
          int width = 0;
          switch (type) {
            case TypeId::kBoolean:
              width = 1;
              break;
            case TypeId::kInteger:
            case TypeId::kDate:
              width = 4;
              break;
            case TypeId::kBigInt:
            case TypeId::kDouble:
            case TypeId::kTimestamp:
            case TypeId::kDecimal:
              width = 8;
              break;
            case TypeId::kInterval:
              width = 16;
              break;
            default:
              break;
          }
          if (types != nullptr && (*types)[c].FixedWidth() > 0) width = (*types)[c].FixedWidth();
          if (width == 0) return damaged(absl::StrCat("unknown type ", chunk.type_id));
          if (chunk.values_bytes < rows * static_cast<uint64_t>(width)) return damaged("values shorter than the rows");
        }
        break;
      case ColumnEncoding::kFrameOfReference:
        if (!IsFrameOfReferenceType(type)) return damaged("frame of reference on a type without one");
        continue;
      case ColumnEncoding::kDictionary: {
        if (!is_string) return damaged("dictionary on a non-string column");
        if (chunk.heap_bytes < sizeof(uint32_t)) return damaged("dictionary outside the heap");
        const StringDictionary dictionary = view.Dictionary(static_cast<int>(c));
        const uint32_t size = dictionary.size();
        if (size == 0 || StringDictionary::HeaderBytes(size) > chunk.heap_bytes) {
          return damaged("dictionary outside the heap");
        }
        const uint8_t* heap = view.data() + chunk.heap_offset;
        uint32_t previous = 0;
        for (uint32_t i = 0; i <= size; ++i) {
          uint32_t offset;
          std::memcpy(&offset, heap + sizeof(uint32_t) * (1 + i), sizeof(offset));
          if (offset < previous) return damaged("dictionary offsets out of order");
          previous = offset;
        }
        if (StringDictionary::HeaderBytes(size) + previous != chunk.heap_bytes)
          return damaged("dictionary size mismatch");
        const uint8_t* packed = view.data() + chunk.values_offset;
        for (uint32_t r = 0; r < header.row_count; ++r) {
          if (UnpackCode(packed, chunk.bit_width, r) >= size) return damaged("dictionary code out of range");
        }
        continue;
      }
      default:
        return damaged(absl::StrCat("unknown encoding ", chunk.encoding));
    }
    if (is_string) {
      if (chunk.values_bytes != (rows + 1) * sizeof(uint32_t)) return damaged("string offsets size mismatch");
      const uint32_t* offsets = view.StringOffsets(static_cast<int>(c));
      uint32_t previous = 0;
      for (size_t i = 0; i <= rows; ++i) {
        if (offsets[i] < previous || offsets[i] > chunk.heap_bytes) return damaged("string offsets out of order");
        previous = offsets[i];
      }
    }
  }
  return absl::OkStatus();
}

Value BlockView::GetValue(int column, uint32_t row, const Type& type) const {
  if (IsNull(column, row)) return Value::Null(type);
  if (type.IsString()) return Value::String(std::string(GetString(column, row)), type);
  if (encoding(column) == ColumnEncoding::kFrameOfReference) {
    uint8_t raw[16] = {};
    switch (type.FixedWidth()) {
      case 4: {
        const int32_t value = GetFixed<int32_t>(column, row);
        std::memcpy(raw, &value, sizeof(value));
        break;
      }
      case 8: {
        const int64_t value = GetFixed<int64_t>(column, row);
        std::memcpy(raw, &value, sizeof(value));
        break;
      }
      default: {
        const int128 value = GetFixed<int128>(column, row);
        std::memcpy(raw, &value, sizeof(value));
        break;
      }
    }
    return FixedValue(raw, type);
  }
  return FixedValue(data_ + chunk(column).values_offset + static_cast<size_t>(row) * type.FixedWidth(), type);
}

template <typename T>
void BlockView::DecodeFixed(int column, uint32_t first, uint32_t count, T* out) const {
  const ColumnChunk& c = chunk(column);
  T base;
  std::memcpy(&base, c.zone_min, sizeof(T));
  UnpackCodes<T>(data_ + c.values_offset, c.bit_width, base, first, count, out);
  const uint8_t* validity = Validity(column);
  if (validity == nullptr) return;
  for (uint32_t i = 0; i < count; ++i) {
    if (!GetBit(validity, first + i)) out[i] = T{};
  }
}

template void BlockView::DecodeFixed<int32_t>(int, uint32_t, uint32_t, int32_t*) const;
template void BlockView::DecodeFixed<int64_t>(int, uint32_t, uint32_t, int64_t*) const;
template void BlockView::DecodeFixed<int128>(int, uint32_t, uint32_t, int128*) const;

template <typename T>
void BlockView::DecodeFixedRows(int column, uint32_t first, const uint32_t* rows, uint32_t row_count, T* out) const {
  const ColumnChunk& c = chunk(column);
  if (Validity(column) != nullptr) {
    for (uint32_t i = 0; i < row_count; ++i) out[rows[i]] = DecodeFrameOfReference<T>(column, first + rows[i]);
    return;
  }
  T base;
  std::memcpy(&base, c.zone_min, sizeof(T));
  const uint8_t* packed = data_ + c.values_offset;
  const int width = c.bit_width;
  // Unsigned arithmetic, wide enough for T (a wrap in 64 bits truncates to the same 32-bit value).
  using U = std::conditional_t<sizeof(T) == 16, unsigned __int128, uint64_t>;
  for (uint32_t i = 0; i < row_count; ++i) {
    if (i + kPrefetchRows < row_count) PrefetchCode(packed, width, first + rows[i + kPrefetchRows]);
    out[rows[i]] = static_cast<T>(static_cast<U>(base) + static_cast<U>(UnpackCode(packed, width, first + rows[i])));
  }
}

template void BlockView::DecodeFixedRows<int32_t>(int, uint32_t, const uint32_t*, uint32_t, int32_t*) const;
template void BlockView::DecodeFixedRows<int64_t>(int, uint32_t, const uint32_t*, uint32_t, int64_t*) const;
template void BlockView::DecodeFixedRows<int128>(int, uint32_t, const uint32_t*, uint32_t, int128*) const;

void BlockView::DecodeStrings(int column, uint32_t first, uint32_t count, std::string_view* out) const {
  const ColumnChunk& c = chunk(column);
  const StringDictionary dictionary = Dictionary(column);
  constexpr uint32_t kStep = 1024;
  uint32_t codes[kStep];
  for (uint32_t done = 0; done < count; done += kStep) {
    const uint32_t n = std::min(kStep, count - done);
    UnpackCodes<uint32_t>(data_ + c.values_offset, c.bit_width, 0, first + done, n, codes);
    for (uint32_t i = 0; i < n; ++i) out[done + i] = dictionary[codes[i]];
  }
  const uint8_t* validity = Validity(column);
  if (validity == nullptr) return;
  for (uint32_t i = 0; i < count; ++i) {
    if (!GetBit(validity, first + i)) out[i] = std::string_view();
  }
}

void BlockView::DecodeStringsRows(int column, uint32_t first, const uint32_t* rows, uint32_t row_count,
                                  std::string_view* out) const {
  const ColumnChunk& c = chunk(column);
  const StringDictionary dictionary = Dictionary(column);
  const uint8_t* packed = data_ + c.values_offset;
  const int width = c.bit_width;
  for (uint32_t i = 0; i < row_count; ++i) {
    if (i + kPrefetchRows < row_count) PrefetchCode(packed, width, first + rows[i + kPrefetchRows]);
    out[rows[i]] = dictionary[static_cast<uint32_t>(UnpackCode(packed, width, first + rows[i]))];
  }
  const uint8_t* validity = Validity(column);
  if (validity == nullptr) return;
  for (uint32_t i = 0; i < row_count; ++i) {
    if (!GetBit(validity, first + rows[i])) out[rows[i]] = std::string_view();
  }
}

std::string_view BlockView::GetEncodedString(int column, uint32_t row) const {
  if (IsNull(column, row)) return {};
  const ColumnChunk& c = chunk(column);
  return Dictionary(column)[static_cast<uint32_t>(UnpackCode(data_ + c.values_offset, c.bit_width, row))];
}

Value BlockView::ZoneValue(int column, const Type& type, const uint8_t* raw) const {
  if (!chunk(column).has_zone_map) return Value::Null(type);
  if (type.IsString()) {
    uint32_t pair[2];
    std::memcpy(pair, raw, sizeof(pair));
    return Value::String(std::string(StringHeap(column) + pair[0], pair[1]), type);
  }
  return FixedValue(raw, type);
}

Value BlockView::ZoneMin(int column, const Type& type) const { return ZoneValue(column, type, chunk(column).zone_min); }
Value BlockView::ZoneMax(int column, const Type& type) const { return ZoneValue(column, type, chunk(column).zone_max); }

}  // namespace tessera
