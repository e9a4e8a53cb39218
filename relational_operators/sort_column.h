#pragma once
// SortColumn: the values of one sort key over a set of rows, decoded once into a plain array (integers
// widened to 64 bits, wide decimals, doubles, string views, NULL flags), so that a sort compares array
// entries instead of going through block accessors and a type switch per value. Used by the sort operator
// (the rows of one block) and the window operator (the rows of one partition group, gathered from many
// blocks).
//
// Transient heap memory of one work order; not thread-safe. String views point into the blocks, which must
// outlive the column.

#include <cstdint>
#include <string_view>
#include <vector>

#include "catalog/types.h"
#include "relational_operators/sort_operator.h"
#include "storage/block_layout.h"

namespace tessera {

class SortColumn {
 public:
  // The rows of one block, row r at index r.
  SortColumn(const BlockView& block, const SortKey& key, const Type& type);
  // Row `rows[i]` of `*blocks[i]` at index i (i < count). The arrays must outlive the column.
  SortColumn(const BlockView* const* blocks, const uint32_t* rows, uint32_t count, const SortKey& key,
             const Type& type);

  // <0, 0, >0 as index a orders before, with or after index b on this key (direction and NULL placement
  // applied; NULLs are equal to each other).
  int Compare(uint32_t a, uint32_t b) const {
    if (nulls_[a] || nulls_[b]) {
      if (nulls_[a] && nulls_[b]) return 0;
      return nulls_[a] == key_.nulls_first ? -1 : 1;
    }
    int c = 0;
    switch (kind_) {
      case Kind::kInteger:
        c = Three(integers_[a], integers_[b]);
        break;
      case Kind::kWide:
        c = Three(wide_[a], wide_[b]);
        break;
      case Kind::kDouble:
        c = Three(doubles_[a], doubles_[b]);
        break;
      case Kind::kString:
        c = strings_[a].compare(strings_[b]);
        break;
      case Kind::kBlock:
        c = CompareFallback(a, b);
        break;
    }
    return key_.ascending ? c : -c;
  }
  bool IsNull(uint32_t index) const { return nulls_[index] != 0; }

 private:
  enum class Kind { kInteger, kWide, kDouble, kString, kBlock };
  template <typename T>
  static int Three(const T& x, const T& y) {
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  // Decodes index i from row `row_of(i)` of block `block_of(i)`.
  template <typename BlockOf, typename RowOf>
  void Load(uint32_t count, BlockOf block_of, RowOf row_of);
  int CompareFallback(uint32_t a, uint32_t b) const;

  const SortKey key_;
  const Type type_;
  Kind kind_ = Kind::kInteger;
  std::vector<uint8_t> nulls_;
  std::vector<int64_t> integers_;
  std::vector<int128> wide_;
  std::vector<double> doubles_;
  std::vector<std::string_view> strings_;
  // kBlock (types without a decoded form, e.g. INTERVAL): compared in place.
  const BlockView* single_block_ = nullptr;
  const BlockView* const* blocks_ = nullptr;
  const uint32_t* rows_ = nullptr;
};

}  // namespace tessera
