#pragma once
// Column encodings of base blocks (block_layout.h), chosen per block and per column when a load finishes a block
// (BlockBuilder::PlanCompressed), from the block's own values. The choices and their measurements are in
// docs/decisions/0009-column-encodings.md.
//
//   kPlain             the values as they are (block_layout.h). Temporary blocks are always plain.
//   kFrameOfReference  integers, dates, timestamps and DECIMALs: value = zone_min + code, each code `bit_width`
//                      bits (0..kMaxPackedBitWidth) of a little-endian bit stream; NULL rows have code 0.
//   kDictionary        strings: the block's distinct non-NULL values, sorted (so code order is value order), in
//                      the heap section as uint32 count, uint32 offsets[count + 1], bytes; codes bit-packed in
//                      the values section; NULL rows have code 0.
//
// Packed code streams carry 8 bytes of zero padding (PackedBytes) so that every code is read with one
// unaligned 64-bit load. Decoding is a vector at a time, by a kernel specialised per bit width (groups of eight
// codes fill exactly bit_width bytes, so every shift is a constant the compiler folds), or eight codes per
// AVX-512 step where the build has it (below).
//
// All functions are pure and thread-safe.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "catalog/types.h"

namespace tessera {

enum class ColumnEncoding : uint8_t { kPlain = 0, kFrameOfReference = 1, kDictionary = 2 };

// "plain", "for<width>", "dict<width>" style names are built by the caller; this is the bare name.
const char* ColumnEncodingName(ColumnEncoding encoding);

// Wider ranges stay plain: a 57..64-bit code saves at most an eighth and needs two loads per code.
constexpr int kMaxPackedBitWidth = 56;

// Bits needed for codes 0..max_code (0 for max_code 0).
int BitWidthFor(uint64_t max_code);
// Bytes of a packed stream of `count` codes of `bit_width` bits, padding included.
size_t PackedBytes(uint32_t count, int bit_width);

// Packs codes[0..count) into `out` (PackedBytes(count, bit_width) bytes, written in full, padding zeroed).
void PackCodes(const uint64_t* codes, uint32_t count, int bit_width, uint8_t* out);

// Codes first..first+count of a packed stream, plus `base`: out[i] = base + code(first + i), in T's arithmetic
// (wrapping: a frame of reference is exact for every value the encoder saw). T: int32_t, int64_t, int128,
// uint32_t (dictionary codes, base 0).
template <typename T>
void UnpackCodes(const uint8_t* packed, int bit_width, T base, uint32_t first, uint32_t count, T* out);

// UnpackCodes uses AVX-512 (VBMI byte permutes: eight codes per step) when the build targets a CPU with it
// (-march=native, as bloom_filter.cc's paths), else the portable kernels; UnpackCodesScalar is the portable
// kernels alone, for tests and the benchmark that compares the two.
template <typename T>
void UnpackCodesScalar(const uint8_t* packed, int bit_width, T base, uint32_t first, uint32_t count, T* out);
bool UnpackCodesHasSimd();

// Predicates on frame-of-reference codes: keeps the rows of `rows[0..row_count)` (null: rows 0..count-1) whose
// code (stream index first + row) lies in [low, high], writes them ascending to `out_rows` (which may be `rows`)
// and returns how many; `out_rows` has room for `count` rows. Rows are offsets in the vector of `count` codes
// starting at `first`. A sparse `rows` reads only the selected codes; otherwise the vector is unpacked (AVX-512
// where the build has it) and compared. NULL rows (code 0) are the caller's to drop.
uint32_t SelectCodesInRange(const uint8_t* packed, int bit_width, uint32_t first, uint32_t count, const uint32_t* rows,
                            uint32_t row_count, uint64_t low, uint64_t high, uint32_t* out_rows);
// The same for a set of codes: `codes[0..code_count)` ascending.
uint32_t SelectCodesInSet(const uint8_t* packed, int bit_width, uint32_t first, uint32_t count, const uint32_t* rows,
                          uint32_t row_count, const uint64_t* codes, uint32_t code_count, uint32_t* out_rows);

// A set of values given as a bit vector, tested on codes: keeps the rows (as SelectCodesInRange) whose code c lies
// in [code_low, code_low + code_span] and whose bit `bit_base + (c - code_low)` of `bits` is set (the bit of
// value zone_min + c in a dense key filter whose first bit stands for zone_min + code_low - bit_base). `bits` is
// little-endian 64-bit words holding at least bit_base + code_span + 1 bits. A code_span below 2^32 with codes
// of up to 32 bits tests 16 codes per step where the build has AVX-512 (a gather of 32-bit words); NULL rows are
// the caller's to drop.
uint32_t SelectCodesInBitmap(const uint8_t* packed, int bit_width, uint32_t first, uint32_t count, const uint32_t* rows,
                             uint32_t row_count, uint64_t code_low, uint64_t code_span, const uint64_t* bits,
                             uint64_t bit_base, uint32_t* out_rows);

// One conjunct of SelectCodesAllOf: the code c of a row of one packed stream passes when c - low <= span (unsigned)
// and, with `bits`, bit `bit_base + (c - low)` of `bits` is set (SelectCodesInBitmap's test). For the bitmap test,
// `tested` / `passed` count the rows it was evaluated on (those the range tests kept) and kept, as evaluating it
// after them would (a runtime filter's counters); the caller zeroes them. Range tests leave them alone.
struct PackedCodeTest {
  const uint8_t* packed = nullptr;
  int bit_width = 0;  // at most kMaxFusedBitWidth
  uint32_t low = 0;
  uint32_t span = 0;
  const uint64_t* bits = nullptr;
  uint32_t bit_base = 0;  // bit_base + span < 2^32
  uint64_t tested = 0;
  uint64_t passed = 0;
};
constexpr int kMaxFusedBitWidth = 25;
constexpr int kMaxFusedRangeTests = 4;
constexpr int kMaxFusedTests = kMaxFusedRangeTests + 1;  // and a bitmap test

// The conjunction of `tests[0..test_count)` (at most kMaxFusedRangeTests without `bits` and at most one with them) on rows 0..count-1 of a vector whose codes start at stream index `first` (a multiple of 16) in each
// test's stream, in one pass: writes the passing rows ascending to `out_rows` (room for `count`) and returns how
// many. The bitmap test runs last, on the rows the others kept. With AVX-512 VBMI, 16 rows per step with every
// code unpacked and compared in registers (no vector of decoded codes is written), the bitmap test gathering 16
// of the rows left at a time; else row by row. NULL rows (code 0) are the caller's to drop.
uint32_t SelectCodesAllOf(PackedCodeTest* tests, int test_count, uint32_t first, uint32_t count, uint32_t* out_rows);

// One code; for row-at-a-time readers (COPY TO, statistics, result printing).
inline uint64_t UnpackCode(const uint8_t* packed, int bit_width, uint32_t row) {
  if (bit_width == 0) return 0;
  const uint64_t bit = static_cast<uint64_t>(row) * bit_width;
  uint64_t word;
  __builtin_memcpy(&word, packed + (bit >> 3), sizeof(word));
  return (word >> (bit & 7)) & ((uint64_t{1} << bit_width) - 1);
}

// Reads of scattered codes (a sparse selection) miss the cache on every new line of a stream that is far larger
// than it: their loops prefetch the code kPrefetchRows selected rows ahead.
constexpr uint32_t kPrefetchRows = 16;
inline void PrefetchCode(const uint8_t* packed, int bit_width, uint32_t row) {
  __builtin_prefetch(packed + ((static_cast<uint64_t>(row) * bit_width) >> 3));
}

// A dictionary of a kDictionary column: the heap section of its chunk.
class StringDictionary {
 public:
  StringDictionary() = default;
  // `heap`: the 4-byte-aligned heap section (block sections are 8-byte aligned).
  explicit StringDictionary(const uint8_t* heap)
      : size_(*reinterpret_cast<const uint32_t*>(heap)),
        offsets_(reinterpret_cast<const uint32_t*>(heap) + 1),
        bytes_(reinterpret_cast<const char*>(heap) + HeaderBytes(size_)) {}
  static size_t HeaderBytes(uint32_t count) { return sizeof(uint32_t) * (count + 2); }

  uint32_t size() const { return size_; }
  std::string_view operator[](uint32_t code) const {
    return {bytes_ + offsets_[code], offsets_[code + 1] - offsets_[code]};
  }
  // The first code whose value is >= `value` (size() if none): translates a constant into code space.
  uint32_t LowerBound(std::string_view value) const;

 private:
  uint32_t size_ = 0;
  const uint32_t* offsets_ = nullptr;
  const char* bytes_ = nullptr;
};

// CRC-32C (Castagnoli) of `bytes` bytes, continuing from `crc` (0 to start); SSE4.2 when the CPU has it.
uint32_t Crc32c(const void* data, size_t bytes, uint32_t crc = 0);

}  // namespace tessera
