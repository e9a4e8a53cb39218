#include "storage/block_layout.h"

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
    case TypeId::kBoolean: return Value::Boolean(*p != 0);
    case TypeId::kInteger: return Value::Integer(Load<int32_t>(p));
    case TypeId::kDate: return Value::Date(Load<int32_t>(p));
    case TypeId::kBigInt: return Value::BigInt(Load<int64_t>(p));
    case TypeId::kTimestamp: return Value::Timestamp(Load<int64_t>(p));
    case TypeId::kDouble: return Value::Double(Load<double>(p));
    case TypeId::kDecimal:
      return Value::Decimal(type.IsWideDecimal() ? Load<int128>(p) : int128{Load<int64_t>(p)}, type);
    case TypeId::kInterval: return Value::IntervalValue(Load<Interval>(p));
    default: return Value::Null(type);
  }
}

}  // namespace

absl::Status BlockView::Validate(const void* data, size_t bytes, size_t column_count) {
  auto corrupt = [](std::string_view why) { return absl::DataLossError(absl::StrCat("corrupt block: ", std::string(why))); };
  if (bytes < sizeof(BlockHeader)) return corrupt("shorter than its header");
  BlockView view(data);
  const BlockHeader& header = view.header();
  if (header.magic != kBlockMagic) return corrupt("bad magic number");
  if (header.version != kBlockFormatVersion) return corrupt("unsupported format version");
  if (header.column_count != column_count) return corrupt("column count does not match the table");
  if (header.used_bytes > bytes) return corrupt("used size larger than the block");
  size_t directory_end = sizeof(BlockHeader) + column_count * sizeof(ColumnChunk);
  if (directory_end > header.used_bytes) return corrupt("column directory outside the block");
  const size_t rows = header.row_count;
  for (size_t c = 0; c < column_count; ++c) {
    const ColumnChunk& chunk = view.chunk(static_cast<int>(c));
    auto inside = [&](uint64_t offset, uint64_t length) {
      return offset >= directory_end && offset + length <= header.used_bytes;
    };
    if (!inside(chunk.values_offset, chunk.values_bytes)) return corrupt("values outside the block");
    if (chunk.validity_offset != 0 && !inside(chunk.validity_offset, (rows + 7) / 8)) {
      return corrupt("validity bitmap outside the block");
    }
    if (chunk.heap_bytes > 0 && !inside(chunk.heap_offset, chunk.heap_bytes)) return corrupt("heap outside the block");
    TypeId type = static_cast<TypeId>(chunk.type_id);
    if (type == TypeId::kChar || type == TypeId::kVarchar) {
      if (chunk.values_bytes != (rows + 1) * sizeof(uint32_t)) return corrupt("string offsets size mismatch");
      const uint32_t* offsets = view.StringOffsets(static_cast<int>(c));
      uint32_t previous = 0;
      for (size_t i = 0; i <= rows; ++i) {
        if (offsets[i] < previous || offsets[i] > chunk.heap_bytes) return corrupt("string offsets out of order");
        previous = offsets[i];
      }
    }
  }
  return absl::OkStatus();
}

Value BlockView::GetValue(int column, uint32_t row, const Type& type) const {
  if (IsNull(column, row)) return Value::Null(type);
  if (type.IsString()) return Value::String(std::string(GetString(column, row)), type);
  return FixedValue(data_ + chunk(column).values_offset + static_cast<size_t>(row) * type.FixedWidth(), type);
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
