#pragma once
// DenseGroupIndex: the group numbers of an aggregation table's keys when every key column has a tiny domain
// (BOOLEAN, or a string of declared length 1: TPC-H Q1's l_returnflag and l_linestatus), looked up in a
// directly indexed array instead of encoding, comparing and hashing keys.
//
// It is a cache in front of the table's hash lookup, not a second table: each column's values (NULL, a
// BOOLEAN's byte, an empty string, a one-byte string) are numbered in the order the index first learns them,
// up to kValuesPerColumn per column, and the numbers of a row's columns index an array of group numbers. Find
// answers a batch only when every row's combination has been learned; the caller then finds the groups the
// usual way and hands them to Learn. Since the index maps values (decoded vectors), it is indifferent to how
// each block stored the column (plain, or a dictionary of its own) and to whether the batch came from a scan
// or a fused probe. A column with more values than kValuesPerColumn, or a value of more than one byte (a
// VARCHAR(1) holding a multi-byte character), makes Learn fail, and the caller drops the index for good.
//
// Threading: one per aggregation table, used by the thread that updates that table.

#include <array>
#include <cstdint>
#include <vector>

#include "catalog/types.h"
#include "expressions/column_vector.h"

namespace tessera {

class DenseGroupIndex {
 public:
  static constexpr uint32_t kValuesPerColumn = 16;
  static constexpr size_t kMaxColumns = 3;

  // Whether group columns of these types can be indexed: 1 to kMaxColumns of them, each BOOLEAN or a CHAR /
  // VARCHAR of declared length 1.
  static bool Applies(const std::vector<Type>& key_types);

  explicit DenseGroupIndex(size_t columns);

  // Writes the group of each of the `selected` rows (`selection`, or rows 0.. without one) of the key
  // vectors `keys` (one per column, the types given to Applies) to group_of_row[s], and returns true; or
  // returns false, with group_of_row unspecified, when some row's values have not all been learned together.
  bool Find(const std::vector<const ColumnVector*>& keys, const SelectionVector* selection, uint32_t selected,
            uint32_t* group_of_row);

  // Records that row s of the batch (as for Find) belongs to group group_of_row[s]. Returns false when a
  // column has more values than the index can number (or a string value of more than one byte); the index
  // must not be used any more then.
  bool Learn(const std::vector<const ColumnVector*>& keys, const SelectionVector* selection, uint32_t selected,
             const uint32_t* group_of_row);

 private:
  // Per column value: 0 NULL, 1 + byte for BOOLEAN, 1 for '', 2 + byte for a one-byte string, kLongString for
  // a longer string (never numbered).
  static constexpr uint32_t kSymbols = 259;
  static constexpr uint32_t kLongString = kSymbols - 1;
  static constexpr uint8_t kUnnumbered = 0xFF;

  // The symbols of column `column`'s selected rows into symbols_.
  void ComputeSymbols(const ColumnVector& key, const SelectionVector* selection, uint32_t selected);

  size_t columns_;
  std::vector<std::array<uint8_t, kSymbols>> numbers_;  // per column: symbol -> its number, or kUnnumbered
  std::vector<uint32_t> next_number_;                   // per column
  std::vector<uint32_t> groups_;                        // combined number -> group + 1 (0: not learned)
  std::vector<uint16_t> symbols_;                       // per-batch scratch
  std::vector<uint32_t> combined_;                      // per-batch scratch
};

}  // namespace tessera
