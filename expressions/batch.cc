#include "expressions/batch.h"

#include <algorithm>
#include <cstring>

#include "glog/logging.h"

namespace tessera {
namespace {

// Base blocks are compressed (storage/column_encoding.h): their columns are decoded into the vector's own buffer.
void DecodeColumn(const BlockView& block, int column, uint32_t first_row, uint32_t count, ColumnVector* vector) {
  vector->ResetOwned(count);
  if (block.encoding(column) == ColumnEncoding::kDictionary) {
    block.DecodeStrings(column, first_row, count, vector->mutable_strings());
    return;
  }
  switch (vector->type().FixedWidth()) {
    case 4:
      block.DecodeFixed<int32_t>(column, first_row, count, vector->mutable_values<int32_t>());
      break;
    case 8:
      block.DecodeFixed<int64_t>(column, first_row, count, vector->mutable_values<int64_t>());
      break;
    default:
      block.DecodeFixed<int128>(column, first_row, count, vector->mutable_values<int128>());
      break;
  }
}

}  // namespace

void LoadBatchColumn(const BlockView& block, const Type& type, int column, uint32_t first_row, uint32_t count,
                     ColumnVector* out) {
  ColumnVector& vector = *out;
  vector.set_type(type);
  const uint8_t* validity = block.Validity(column);
  if (block.IsEncoded(column)) {
    DecodeColumn(block, column, first_row, count, &vector);
    vector.BorrowValidity(validity, first_row);
    return;
  }
  if (type.IsString()) {
    vector.ResetOwned(count);
    std::string_view* strings = vector.mutable_strings();
    const uint32_t* offsets = block.StringOffsets(column) + first_row;
    const char* heap = block.StringHeap(column);
    for (uint32_t r = 0; r < count; ++r) strings[r] = std::string_view(heap + offsets[r], offsets[r + 1] - offsets[r]);
    vector.BorrowValidity(validity, first_row);
    return;
  }
  const size_t width = static_cast<size_t>(type.FixedWidth());
  const uint8_t* values = block.Values<uint8_t>(column) + width * first_row;
  if (type.IsWideDecimal() && (reinterpret_cast<uintptr_t>(values) & 15) != 0) {
    // Block sections are 8-byte aligned; __int128 kernels may use aligned 16-byte loads.
    vector.ResetOwned(count);
    std::memcpy(vector.mutable_values<uint8_t>(), values, width * count);
    vector.BorrowValidity(validity, first_row);
    return;
  }
  vector.BorrowFixed(values, validity, first_row, count);
}

void LoadBatchColumnRows(const BlockView& block, const Type& type, int column, uint32_t first_row, uint32_t count,
                         const uint32_t* rows, uint32_t row_count, ColumnVector* out) {
  const ColumnEncoding encoding = block.encoding(column);
  if (encoding != ColumnEncoding::kFrameOfReference && encoding != ColumnEncoding::kDictionary) {
    LoadBatchColumn(block, type, column, first_row, count, out);
    return;
  }
  ColumnVector& vector = *out;
  vector.set_type(type);
  vector.ResetOwned(count);
  if (encoding == ColumnEncoding::kDictionary) {
    // The other rows read as '' (not stale views into another block) for a kernel that runs over every row.
    std::string_view* strings = vector.mutable_strings();
    std::fill_n(strings, count, std::string_view());
    block.DecodeStringsRows(column, first_row, rows, row_count, strings);
    vector.BorrowValidity(block.Validity(column), first_row);
    return;
  }
  switch (type.FixedWidth()) {
    case 4:
      block.DecodeFixedRows<int32_t>(column, first_row, rows, row_count, vector.mutable_values<int32_t>());
      break;
    case 8:
      block.DecodeFixedRows<int64_t>(column, first_row, rows, row_count, vector.mutable_values<int64_t>());
      break;
    default:
      block.DecodeFixedRows<int128>(column, first_row, rows, row_count, vector.mutable_values<int128>());
      break;
  }
  vector.BorrowValidity(block.Validity(column), first_row);
}

void LoadBatchFromBlock(const BlockView& block, const std::vector<Type>& types, const std::vector<int>& block_columns,
                        uint32_t first_row, uint32_t count, Batch* out) {
  DCHECK_EQ(types.size(), block_columns.size());
  DCHECK_LE(count, kVectorSize);
  DCHECK_LE(first_row + count, block.row_count());
  if (out->columns.size() != types.size()) out->columns.resize(types.size());
  out->size = count;
  for (size_t i = 0; i < types.size(); ++i) {
    LoadBatchColumn(block, types[i], block_columns[i], first_row, count, &out->columns[i]);
  }
}

}  // namespace tessera
