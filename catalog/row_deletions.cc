#include "catalog/row_deletions.h"

#include <algorithm>
#include <bit>
#include <cstring>

#ifdef __AVX2__
#include <immintrin.h>
#endif

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

namespace {

// For each byte of a live-row mask, the positions of its set bits in increasing order (the rest zero), so that
// LiveRows writes 8 offsets at once without a branch and advances by the byte's popcount.
struct BytePositions {
  alignas(8) uint8_t positions[256][8] = {};
  constexpr BytePositions() {
    for (int byte = 0; byte < 256; ++byte) {
      int n = 0;
      for (int bit = 0; bit < 8; ++bit) {
        if ((byte >> bit) & 1) positions[byte][n++] = static_cast<uint8_t>(bit);
      }
    }
  }
};
constexpr BytePositions kBytePositions;

}  // namespace

uint32_t DeletedRows::LiveRows(uint32_t first, uint32_t count, uint32_t* rows) const {
  uint32_t live = 0;
  uint32_t offset = 0;  // of the next row to classify, from `first`
  // Rows before the next word boundary, and the tail after the last whole word: one bit test each.
  auto rowwise = [&](uint32_t until) {
    for (; offset < until; ++offset) {
      rows[live] = offset;
      live += !IsDeleted(first + offset);
    }
  };
  rowwise(std::min(count, (64 - (first & 63)) & 63));
  // Whole words: a word without deletions is a run of 64 offsets; the others go a byte at a time through
  // kBytePositions. Writing all 8 entries of a byte never passes `count`: live <= offset and offset + 8 <= count.
  for (; offset + 64 <= count; offset += 64) {
    const uint64_t live_bits = ~words_[(first + offset) >> 6];
#ifdef __AVX2__
    if (live_bits == ~uint64_t{0}) {
      const __m256i step = _mm256_set1_epi32(8);
      __m256i run =
          _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(offset)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      for (uint32_t i = 0; i < 64; i += 8, run = _mm256_add_epi32(run, step)) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows + live + i), run);
      }
      live += 64;
      continue;
    }
    for (uint32_t byte = 0; byte < 8; ++byte) {
      const uint32_t bits = static_cast<uint32_t>(live_bits >> (byte * 8)) & 0xFF;
      const __m256i positions =
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kBytePositions.positions[bits])));
      const __m256i base = _mm256_set1_epi32(static_cast<int>(offset + byte * 8));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows + live), _mm256_add_epi32(positions, base));
      live += static_cast<uint32_t>(__builtin_popcount(bits));
    }
#else
    if (live_bits == ~uint64_t{0}) {
      for (uint32_t i = 0; i < 64; ++i) rows[live + i] = offset + i;
      live += 64;
      continue;
    }
    for (uint32_t byte = 0; byte < 8; ++byte) {
      const uint32_t bits = static_cast<uint32_t>(live_bits >> (byte * 8)) & 0xFF;
      const uint8_t* positions = kBytePositions.positions[bits];
      const uint32_t base = offset + byte * 8;
      for (uint32_t i = 0; i < 8; ++i) rows[live + i] = base + positions[i];
      live += static_cast<uint32_t>(__builtin_popcount(bits));
    }
#endif
  }
  rowwise(count);
  return live;
}

bool DeletedRows::Delete(uint32_t row) {
  uint64_t& word = words_[row >> 6];
  const uint64_t bit = uint64_t{1} << (row & 63);
  if (word & bit) return false;
  word |= bit;
  ++deleted_count_;
  return true;
}

uint32_t DeletedRows::DeleteAll(const DeletedRows& rows) {
  uint32_t added = 0;
  const size_t words = std::min(words_.size(), rows.words_.size());
  for (size_t w = 0; w < words; ++w) {
    added += static_cast<uint32_t>(__builtin_popcountll(rows.words_[w] & ~words_[w]));
    words_[w] |= rows.words_[w];
  }
  deleted_count_ += added;
  return added;
}

static_assert(std::endian::native == std::endian::little, "CountClearAmong loads byte bitmaps as words");

uint32_t DeletedRows::CountClearAmong(const uint8_t* bitmap) const {
  uint32_t clear = 0;
  const size_t bytes = (row_count_ + 7) / 8;
  for (size_t w = 0; w < words_.size(); ++w) {
    if (words_[w] == 0) continue;
    // Little-endian bytes: bit r % 64 of the loaded word is row 64 w + r % 64, as in words_. The last word reads
    // only the bitmap's own bytes; bits past row_count() are clear in words_.
    uint64_t set = 0;
    std::memcpy(&set, bitmap + w * 8, std::min<size_t>(8, bytes - w * 8));
    clear += static_cast<uint32_t>(__builtin_popcountll(words_[w] & ~set));
  }
  return clear;
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
