#include "relational_operators/dense_group_index.h"

#include <string_view>

namespace tessera {

bool DenseGroupIndex::Applies(const std::vector<Type>& key_types) {
  if (key_types.empty() || key_types.size() > kMaxColumns) return false;
  for (const Type& type : key_types) {
    const bool one_byte_string = type.IsString() && type.length() == 1;
    if (!one_byte_string && type.id() != TypeId::kBoolean) return false;
  }
  return true;
}

DenseGroupIndex::DenseGroupIndex(size_t columns)
    : columns_(columns), numbers_(columns), next_number_(columns, 0), symbols_(kVectorSize), combined_(kVectorSize) {
  for (auto& numbers : numbers_) numbers.fill(kUnnumbered);
  size_t combinations = 1;
  for (size_t c = 0; c < columns; ++c) combinations *= kValuesPerColumn;
  groups_.assign(combinations, 0);
}

void DenseGroupIndex::ComputeSymbols(const ColumnVector& key, const SelectionVector* selection, uint32_t selected) {
  uint16_t* out = symbols_.data();
  const bool nulls = key.has_nulls();
  if (key.type().IsString()) {
    const std::string_view* values = key.strings();
    for (uint32_t s = 0; s < selected; ++s) {
      const uint32_t row = selection != nullptr ? selection->rows[s] : s;
      const std::string_view value = values[row];
      uint32_t symbol = value.size() == 0 ? 1 : value.size() == 1 ? 2 + static_cast<uint8_t>(value[0]) : kLongString;
      if (nulls && key.IsNull(row)) symbol = 0;
      out[s] = static_cast<uint16_t>(symbol);
    }
    return;
  }
  const uint8_t* values = key.values<uint8_t>();  // BOOLEAN
  for (uint32_t s = 0; s < selected; ++s) {
    const uint32_t row = selection != nullptr ? selection->rows[s] : s;
    uint32_t symbol = 1 + values[row];
    if (nulls && key.IsNull(row)) symbol = 0;
    out[s] = static_cast<uint16_t>(symbol);
  }
}

bool DenseGroupIndex::Find(const std::vector<const ColumnVector*>& keys, const SelectionVector* selection,
                           uint32_t selected, uint32_t* group_of_row) {
  uint32_t* combined = combined_.data();
  // Any unnumbered value (0xFF) sets bits above the 4 of a number; they are collected in `unknown`.
  uint32_t unknown = 0;
  for (size_t c = 0; c < columns_; ++c) {
    ComputeSymbols(*keys[c], selection, selected);
    const uint8_t* numbers = numbers_[c].data();
    const uint16_t* symbols = symbols_.data();
    if (c == 0) {
      for (uint32_t s = 0; s < selected; ++s) {
        const uint32_t number = numbers[symbols[s]];
        unknown |= number;
        combined[s] = number & (kValuesPerColumn - 1);
      }
    } else {
      for (uint32_t s = 0; s < selected; ++s) {
        const uint32_t number = numbers[symbols[s]];
        unknown |= number;
        combined[s] = combined[s] * kValuesPerColumn + (number & (kValuesPerColumn - 1));
      }
    }
  }
  if (unknown >= kValuesPerColumn) return false;
  const uint32_t* groups = groups_.data();
  uint32_t missing = 0;
  for (uint32_t s = 0; s < selected; ++s) {
    const uint32_t group = groups[combined[s]];
    missing |= group == 0;
    group_of_row[s] = group - 1;
  }
  return missing == 0;
}

bool DenseGroupIndex::Learn(const std::vector<const ColumnVector*>& keys, const SelectionVector* selection,
                            uint32_t selected, const uint32_t* group_of_row) {
  uint32_t* combined = combined_.data();
  for (size_t c = 0; c < columns_; ++c) {
    ComputeSymbols(*keys[c], selection, selected);
    std::array<uint8_t, kSymbols>& numbers = numbers_[c];
    for (uint32_t s = 0; s < selected; ++s) {
      const uint16_t symbol = symbols_[s];
      if (numbers[symbol] == kUnnumbered) {
        if (symbol == kLongString || next_number_[c] == kValuesPerColumn) return false;
        numbers[symbol] = static_cast<uint8_t>(next_number_[c]++);
      }
      combined[s] = (c == 0 ? 0 : combined[s] * kValuesPerColumn) + numbers[symbol];
    }
  }
  for (uint32_t s = 0; s < selected; ++s) groups_[combined[s]] = group_of_row[s] + 1;
  return true;
}

}  // namespace tessera
