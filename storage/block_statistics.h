#pragma once
// Folds one block into per-column statistics: null counts, min/max from the block's zone maps, and every non-NULL
// value into the distinct-count sketch. Called once per loaded block, and by ANALYZE.
//
// `deleted` (ANALYZE of a block with deleted rows): a bitmap of the rows to leave out (bit r % 64 of word r / 64);
// min and max then come from the live rows' values, not from the zone maps (which still cover deleted rows).

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/column_statistics.h"
#include "catalog/schema.h"
#include "storage/block_layout.h"

namespace tessera {

void AccumulateBlockStatistics(const BlockView& block, const std::vector<ColumnSchema>& columns,
                               std::vector<ColumnStatistics>* statistics, const uint64_t* deleted = nullptr);

// How one column of a table is stored (SHOW STATS): the bytes of its sections in its blocks, what they would take
// plain, and how many blocks use each encoding (column_encoding.h).
struct ColumnStorage {
  int64_t stored_bytes = 0;
  int64_t plain_bytes = 0;
  int64_t blocks_by_encoding[3] = {0, 0, 0};
  // "frame-of-reference" when every block agrees, else the encodings by block count: "dictionary 40, plain 2".
  std::string EncodingSummary() const;
};
// Folds one block into `storage` (one entry per column). Reads each dictionary-coded row once.
void AccumulateColumnStorage(const BlockView& block, const std::vector<ColumnSchema>& columns,
                             std::vector<ColumnStorage>* storage);

}  // namespace tessera
