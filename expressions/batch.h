#pragma once
// Batch: up to kVectorSize rows of several columns, the input of expression evaluation. Column i of a batch
// is what BoundExpression column_index i refers to.
//
// LoadBatchFromBlock fills a batch from a block without copying fixed-width values: each column borrows the
// block's value array and validity bitmap (so the batch is valid only while the block stays pinned and until
// the next load into the same batch). String columns become arrays of std::string_view pointing into the
// block's heap. Encoded columns of base blocks (storage/column_encoding.h) are decoded into the vector's own
// buffer instead (dictionary strings still point into the block). A Batch reuses its vectors' buffers across loads; not thread-safe (one per worker).

#include <cstdint>
#include <vector>

#include "catalog/types.h"
#include "expressions/column_vector.h"
#include "storage/block_layout.h"

namespace tessera {

struct Batch {
  std::vector<ColumnVector> columns;
  uint32_t size = 0;
};

// Loads rows [first_row, first_row + count) of `block` into `out`: batch column i is block column
// `block_columns[i]`, of type `types[i]` (the column's schema type). Precondition: count <= kVectorSize and
// the rows exist. Allocates only the first time a string column (or a misaligned DECIMAL(p > 18) column,
// which is copied to keep __int128 loads aligned) is loaded into `out`.
void LoadBatchFromBlock(const BlockView& block, const std::vector<Type>& types, const std::vector<int>& block_columns,
                        uint32_t first_row, uint32_t count, Batch* out);
// One column of LoadBatchFromBlock: rows [first_row, first_row + count) of block column `column` (of `type`) into
// `out`. For scans that load some columns only when rows pass their filter.
void LoadBatchColumn(const BlockView& block, const Type& type, int column, uint32_t first_row, uint32_t count,
                     ColumnVector* out);
// LoadBatchColumn for a consumer that reads only rows `rows[0..row_count)` (ascending offsets from first_row): a
// frame-of-reference column is decoded at those rows alone (the vector's other rows are unspecified), a dictionary
// column too (its other rows read as ''); any other column loads as LoadBatchColumn does. For scans whose filters left few rows of a vector.
void LoadBatchColumnRows(const BlockView& block, const Type& type, int column, uint32_t first_row, uint32_t count,
                         const uint32_t* rows, uint32_t row_count, ColumnVector* out);

}  // namespace tessera
