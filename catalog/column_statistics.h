#pragma once
// Per-column statistics kept current on every load: null count, min, max and a distinct-count estimate.
// Statistics of two loads merge exactly (min/max/nulls) or as a sketch union (distinct count), so a COPY only
// computes statistics of its own rows and merges them into the table's.
//
// Not thread-safe; loaders keep one accumulator per thread and merge.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "catalog/value.h"

namespace tessera {

// HyperLogLog with 2^11 one-byte registers (standard error about 2.3%).
class DistinctSketch {
 public:
  static constexpr int kPrecision = 11;
  static constexpr int kRegisters = 1 << kPrecision;

  void AddHash(uint64_t hash) {
    uint32_t index = static_cast<uint32_t>(hash >> (64 - kPrecision));
    uint64_t rest = (hash << kPrecision) | (uint64_t{1} << (kPrecision - 1));
    uint8_t rank = static_cast<uint8_t>(__builtin_clzll(rest) + 1);
    if (rank > registers_[index]) registers_[index] = rank;
  }
  void Merge(const DistinctSketch& other);
  int64_t Estimate() const;
  std::string Serialize() const;
  bool Deserialize(std::string_view bytes);

 private:
  std::array<uint8_t, kRegisters> registers_{};
};

struct ColumnStatistics {
  int64_t null_count = 0;
  Value min;  // NULL when the column has no non-NULL value
  Value max;
  DistinctSketch distinct;

  // Widens min/max with `value` (non-NULL, of the column's type).
  void UpdateMinMax(const Value& value);
  void Merge(const ColumnStatistics& other);
  // The estimate never exceeds `non_null_rows`.
  int64_t DistinctEstimate(int64_t non_null_rows) const;
};

}  // namespace tessera
