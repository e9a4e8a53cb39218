#include "catalog/column_statistics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace tessera {

void DistinctSketch::Merge(const DistinctSketch& other) {
  for (int i = 0; i < kRegisters; ++i) registers_[i] = std::max(registers_[i], other.registers_[i]);
}

int64_t DistinctSketch::Estimate() const {
  // Registers counted by rank first, then sum 2^-rank once per rank: the optimizer asks for estimates many
  // times per plan, and one ldexp per register made them most of TPC-H Q2's planning time.
  std::array<int, 256> registers_by_rank{};
  for (uint8_t r : registers_) ++registers_by_rank[r];
  double sum = 0;
  for (int rank = 0; rank < static_cast<int>(registers_by_rank.size()); ++rank) {
    if (registers_by_rank[rank] != 0) sum += registers_by_rank[rank] * std::ldexp(1.0, -rank);
  }
  const int zeros = registers_by_rank[0];
  const double m = kRegisters;
  const double alpha = 0.7213 / (1 + 1.079 / m);
  double estimate = alpha * m * m / sum;
  if (estimate <= 2.5 * m && zeros > 0) estimate = m * std::log(m / zeros);  // linear counting for small sets
  return static_cast<int64_t>(std::llround(estimate));
}

std::string DistinctSketch::Serialize() const {
  return std::string(reinterpret_cast<const char*>(registers_.data()), registers_.size());
}

bool DistinctSketch::Deserialize(std::string_view bytes) {
  if (bytes.size() != registers_.size()) return false;
  std::memcpy(registers_.data(), bytes.data(), bytes.size());
  return true;
}

void ColumnStatistics::UpdateMinMax(const Value& value) {
  if (value.is_null()) return;
  if (min.is_null() || value.Compare(min) < 0) min = value;
  if (max.is_null() || value.Compare(max) > 0) max = value;
}

void ColumnStatistics::Merge(const ColumnStatistics& other) {
  null_count += other.null_count;
  UpdateMinMax(other.min);
  UpdateMinMax(other.max);
  distinct.Merge(other.distinct);
}

int64_t ColumnStatistics::DistinctEstimate(int64_t non_null_rows) const {
  return std::min(distinct.Estimate(), non_null_rows);
}

}  // namespace tessera
