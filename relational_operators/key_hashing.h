#pragma once
// Hashing and equality of join / grouping keys held in column vectors (probe side) or in block columns (build
// side). Both sides of a key pair have the same type (the binder guarantees it), so equal values hash equally.

#include <cstdint>

#include "common/hash.h"
#include "expressions/column_vector.h"
#include "storage/block_layout.h"

namespace tessera {

// The hash HashVectorRows gives a non-NULL INTEGER, DATE, BIGINT or TIMESTAMP value (one key column).
inline uint64_t HashIntegerKey(int64_t value) { return HashInt64(static_cast<uint64_t>(value)); }

// hashes[i] = Combine(hashes[i], hash of row i) for every row i of the vector (all rows 0..size-1); when `first`,
// hashes[i] = hash of row i. NULL rows hash to a fixed value (callers skip NULL keys anyway).
void HashVectorRows(const ColumnVector& vector, uint32_t size, bool first, uint64_t* hashes);
// The same for the rows of `selection` only (all rows 0..size-1 when null); other hashes[i] are left alone.
void HashSelectedRows(const ColumnVector& vector, const SelectionVector* selection, uint32_t size, bool first,
                      uint64_t* hashes);

// Whether row `row` of `vector` equals row `block_row` of column `column` of `block` (both non-NULL).
bool VectorValueEqualsBlockValue(const ColumnVector& vector, uint32_t row, const BlockView& block, int column,
                                 uint32_t block_row);

// Gathers rows into an owned vector `to` of the same type (rows 0..count-1; strings are referenced, not copied,
// so the sources must outlive the vector's use; NULLs stay NULL):
// to[i] = from[rows[i]], and to[i] = column `column` of *blocks[i] at row block_rows[i].
void GatherVectorValues(const ColumnVector& from, const uint32_t* rows, uint32_t count, ColumnVector* to);
void GatherBlockValues(const BlockView* const* blocks, const uint32_t* block_rows, uint32_t count, int column,
                       ColumnVector* to);

}  // namespace tessera
