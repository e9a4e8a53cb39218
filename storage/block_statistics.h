#pragma once
// Folds one block into per-column statistics: null counts, min/max from the block's zone maps, and every non-NULL
// value into the distinct-count sketch. Called once per loaded block.

#include <vector>

#include "catalog/column_statistics.h"
#include "catalog/schema.h"
#include "storage/block_layout.h"

namespace tessera {

void AccumulateBlockStatistics(const BlockView& block, const std::vector<ColumnSchema>& columns,
                               std::vector<ColumnStatistics>* statistics);

}  // namespace tessera
