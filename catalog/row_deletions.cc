#include "catalog/row_deletions.h"

#include <cstring>

#include "catalog/catalog.h"

namespace tessera {

DeletedRows::DeletedRows(uint32_t row_count) : row_count_(row_count), words_((row_count + 63) / 64, 0) {}

bool DeletedRows::AnyDeleted(uint32_t first, uint32_t count) const {
  if (deleted_count_ == 0 || count == 0) return false;
  const uint32_t end = first + count;  // exclusive
  uint32_t word = first >> 6;
  const uint32_t last_word = (end - 1) >> 6;
  for (; word <= last_word; ++word) {
    uint64_t bits = words_[word];
    if (word == first >> 6) bits &= ~uint64_t{0} << (first & 63);
    if (word == last_word && (end & 63) != 0) bits &= (uint64_t{1} << (end & 63)) - 1;
    if (bits != 0) return true;
  }
  return false;
}

bool DeletedRows::Delete(uint32_t row) {
  uint64_t& word = words_[row >> 6];
  const uint64_t bit = uint64_t{1} << (row & 63);
  if (word & bit) return false;
  word |= bit;
  ++deleted_count_;
  return true;
}

std::string DeletedRows::Serialize() const {
  std::string bytes(words_.size() * sizeof(uint64_t), '\0');
  if (!words_.empty()) std::memcpy(bytes.data(), words_.data(), bytes.size());
  return bytes;
}

std::optional<DeletedRows> DeletedRows::Deserialize(std::string_view bytes, uint32_t row_count) {
  DeletedRows rows(row_count);
  if (bytes.size() != rows.words_.size() * sizeof(uint64_t)) return std::nullopt;
  if (!bytes.empty()) std::memcpy(rows.words_.data(), bytes.data(), bytes.size());
  if ((row_count & 63) != 0 && !rows.words_.empty() && (rows.words_.back() >> (row_count & 63)) != 0) {
    return std::nullopt;  // bits past the last row
  }
  for (uint64_t word : rows.words_) rows.deleted_count_ += static_cast<uint32_t>(__builtin_popcountll(word));
  return rows;
}

bool IsRowIdColumn(const ColumnSchema& column) { return column.name == kRowIdColumnName; }

std::shared_ptr<const TableDescriptor> WithRowIdColumn(const TableDescriptor& table) {
  auto copy = std::make_shared<TableDescriptor>(table);
  ColumnSchema row_id;
  row_id.name = kRowIdColumnName;
  row_id.type = Type::BigInt();
  row_id.not_null = true;
  copy->columns.push_back(std::move(row_id));
  copy->statistics.emplace_back();
  return copy;
}

}  // namespace tessera
