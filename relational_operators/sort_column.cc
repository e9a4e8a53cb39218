#include "relational_operators/sort_column.h"

#include <cstring>

namespace tessera {

template <typename BlockOf, typename RowOf>
void SortColumn::Load(uint32_t count, BlockOf block_of, RowOf row_of) {
  const int column = key_.column;
  nulls_.resize(count);
  for (uint32_t i = 0; i < count; ++i) nulls_[i] = block_of(i).IsNull(column, row_of(i));
  auto widen = [&]<typename T>(T) {
    integers_.resize(count);
    for (uint32_t i = 0; i < count; ++i) integers_[i] = block_of(i).template Values<T>(column)[row_of(i)];
  };
  switch (type_.id()) {
    case TypeId::kBoolean:
      widen(uint8_t{});
      break;
    case TypeId::kInteger:
    case TypeId::kDate:
      widen(int32_t{});
      break;
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
      widen(int64_t{});
      break;
    case TypeId::kDecimal:
      if (type_.IsWideDecimal()) {
        kind_ = Kind::kWide;
        wide_.resize(count);
        // Block values are only 8-byte aligned: copy bytes (an int128 load may assume 16).
        for (uint32_t i = 0; i < count; ++i) {
          std::memcpy(&wide_[i], block_of(i).template Values<uint8_t>(column) + sizeof(int128) * row_of(i),
                      sizeof(int128));
        }
      } else {
        widen(int64_t{});
      }
      break;
    case TypeId::kDouble:
      kind_ = Kind::kDouble;
      doubles_.resize(count);
      for (uint32_t i = 0; i < count; ++i) doubles_[i] = block_of(i).template Values<double>(column)[row_of(i)];
      break;
    case TypeId::kChar:
    case TypeId::kVarchar:
      kind_ = Kind::kString;
      strings_.resize(count);
      for (uint32_t i = 0; i < count; ++i) {
        if (!nulls_[i]) strings_[i] = block_of(i).GetString(column, row_of(i));
      }
      break;
    default:
      kind_ = Kind::kBlock;
      break;
  }
}

SortColumn::SortColumn(const BlockView& block, const SortKey& key, const Type& type) : key_(key), type_(type) {
  single_block_ = &block;
  Load(
      block.row_count(), [&](uint32_t) -> const BlockView& { return block; }, [](uint32_t i) { return i; });
}

SortColumn::SortColumn(const BlockView* const* blocks, const uint32_t* rows, uint32_t count, const SortKey& key,
                       const Type& type)
    : key_(key), type_(type), blocks_(blocks), rows_(rows) {
  Load(
      count, [&](uint32_t i) -> const BlockView& { return *blocks[i]; }, [&](uint32_t i) { return rows[i]; });
}

int SortColumn::CompareFallback(uint32_t a, uint32_t b) const {
  if (single_block_ != nullptr) return CompareColumnValues(*single_block_, a, *single_block_, b, key_.column, type_);
  return CompareColumnValues(*blocks_[a], rows_[a], *blocks_[b], rows_[b], key_.column, type_);
}

}  // namespace tessera
