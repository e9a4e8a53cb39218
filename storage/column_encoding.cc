#include "storage/column_encoding.h"

#include <immintrin.h>
#include <nmmintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

namespace tessera {
namespace {

// Unsigned twin of each decoded type: the frame-of-reference addition wraps instead of overflowing.
template <typename T>
struct Unsigned;
template <>
struct Unsigned<int32_t> {
  using type = uint32_t;
};
template <>
struct Unsigned<uint32_t> {
  using type = uint32_t;
};
template <>
struct Unsigned<int64_t> {
  using type = uint64_t;
};
template <>
struct Unsigned<int128> {
  using type = unsigned __int128;
};

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VBMI__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // gcc 12's intrinsic headers (_mm512_undefined_epi32)
// Eight codes per step: one masked 64-byte load covers the group (W bytes) and the last code's 8-byte window,
// a byte permute puts each code's window in its own 64-bit lane, then a per-lane shift, mask and add. Reads no
// byte past the group's last code window (inside the stream or its 8 bytes of padding). Returns the codes done.
template <typename T, int W>
uint32_t UnpackGroupsAvx512(const uint8_t* group, T base, uint32_t groups, T* out) {
  alignas(64) uint8_t index[64];
  alignas(64) uint64_t shifts[8];
  for (int j = 0; j < 8; ++j) {
    shifts[j] = static_cast<uint64_t>((j * W) & 7);
    for (int k = 0; k < 8; ++k) index[j * 8 + k] = static_cast<uint8_t>(((j * W) >> 3) + k);
  }
  constexpr int kWindowBytes = ((7 * W) >> 3) + 8;
  constexpr __mmask64 kLoadMask = kWindowBytes == 64 ? ~__mmask64{0} : (__mmask64{1} << kWindowBytes) - 1;
  const __m512i permute = _mm512_load_si512(index);
  const __m512i shift = _mm512_load_si512(shifts);
  const __m512i mask = _mm512_set1_epi64(static_cast<int64_t>((uint64_t{1} << W) - 1));
  const __m512i offset = _mm512_set1_epi64(static_cast<int64_t>(base));  // 32-bit results keep the low half
  for (uint32_t g = 0; g < groups; ++g, group += W, out += 8) {
    const __m512i bytes = _mm512_maskz_loadu_epi8(kLoadMask, group);
    __m512i values = _mm512_permutexvar_epi8(permute, bytes);
    values = _mm512_add_epi64(_mm512_and_si512(_mm512_srlv_epi64(values, shift), mask), offset);
    if constexpr (sizeof(T) == 8) {
      _mm512_storeu_si512(out, values);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi64_epi32(values));
    }
  }
  return groups * 8;
}
#pragma GCC diagnostic pop
#endif

template <typename T, int W, bool kSimd>
void UnpackWidth(const uint8_t* packed, T base, uint32_t first, uint32_t count, T* out) {
  using U = typename Unsigned<T>::type;
  const U unsigned_base = static_cast<U>(base);
  if constexpr (W == 0) {
    for (uint32_t i = 0; i < count; ++i) out[i] = base;
  } else {
    constexpr uint64_t kMask = (uint64_t{1} << W) - 1;
    uint32_t i = 0;
    if ((first & 7) == 0) {
      // Eight codes fill exactly W bytes: code j of a group starts at bit j * W, a constant.
      const uint8_t* group = packed + static_cast<size_t>(first / 8) * W;
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VBMI__)
      if constexpr (kSimd && sizeof(T) <= 8) {
        i = UnpackGroupsAvx512<T, W>(group, base, count / 8, out);
        group += static_cast<size_t>(i / 8) * W;
      }
#endif
      for (; i + 8 <= count; i += 8, group += W) {
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
          uint64_t word;
          std::memcpy(&word, group + (j * W) / 8, sizeof(word));
          out[i + j] = static_cast<T>(unsigned_base + static_cast<U>((word >> ((j * W) % 8)) & kMask));
        }
      }
    }
    for (; i < count; ++i) out[i] = static_cast<T>(unsigned_base + static_cast<U>(UnpackCode(packed, W, first + i)));
  }
}

template <typename T>
using UnpackFn = void (*)(const uint8_t*, T, uint32_t, uint32_t, T*);

template <typename T, bool kSimd, size_t... W>
constexpr std::array<UnpackFn<T>, sizeof...(W)> MakeUnpackTable(std::index_sequence<W...>) {
  return {&UnpackWidth<T, static_cast<int>(W), kSimd>...};
}

template <typename T, bool kSimd>
constexpr auto kUnpackTable = MakeUnpackTable<T, kSimd>(std::make_index_sequence<kMaxPackedBitWidth + 1>());

uint32_t Crc32cSoftware(const uint8_t* p, size_t bytes, uint32_t crc) {
  for (size_t i = 0; i < bytes; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return crc;
}

__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(const uint8_t* p, size_t bytes, uint32_t crc) {
  uint64_t state = crc;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, sizeof(word));
    state = _mm_crc32_u64(state, word);
  }
  uint32_t tail = static_cast<uint32_t>(state);
  for (; i < bytes; ++i) tail = _mm_crc32_u8(tail, p[i]);
  return tail;
}

// Rows whose codes a predicate keeps (SelectCodesInRange / SelectCodesInSet). A selection with fewer than one row in
// kSparseRows of the vector reads its codes one by one; otherwise the codes are unpacked a chunk at a time.
constexpr uint32_t kSparseRows = 16;
constexpr uint32_t kSelectChunk = 1024;  // a multiple of 8: every chunk starts a group of eight codes

// The dense case of a range without an input selection: 16 codes per step where the build has AVX-512.
uint32_t SelectChunkInRange(const uint32_t* codes, uint32_t n, uint32_t row_offset, uint32_t low, uint32_t span,
                            uint32_t* out_rows) {
  uint32_t kept = 0;
  uint32_t i = 0;
#if defined(__AVX512F__)
  const __m512i low_lanes = _mm512_set1_epi32(static_cast<int>(low));
  const __m512i span_lanes = _mm512_set1_epi32(static_cast<int>(span));
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i row = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                 _mm512_set1_epi32(static_cast<int>(row_offset)));
  for (; i + 16 <= n; i += 16, row = _mm512_add_epi32(row, sixteen)) {
    const __m512i code = _mm512_loadu_si512(codes + i);
    const __mmask16 hit = _mm512_cmple_epu32_mask(_mm512_sub_epi32(code, low_lanes), span_lanes);
    // A compress into a register and a full store (kept <= row_offset + i: the slots written are free).
    _mm512_storeu_si512(out_rows + kept, _mm512_maskz_compress_epi32(hit, row));
    kept += static_cast<uint32_t>(__builtin_popcount(hit));
  }
#endif
  for (; i < n; ++i) {
    out_rows[kept] = row_offset + i;
    kept += codes[i] - low <= span;
  }
  return kept;
}

// The dense case of a bitmap test without an input selection (SelectCodesInBitmap): 16 codes per step where the
// build has AVX-512; a code's bit is `bit_base + (code - low)` when code - low <= span (all of it in 32 bits).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // gcc 12's intrinsic headers (_mm512_undefined_epi32)
uint32_t SelectChunkInBitmap(const uint32_t* codes, uint32_t n, uint32_t row_offset, uint32_t low, uint32_t span,
                             const uint64_t* bits, uint32_t bit_base, uint32_t* out_rows) {
  uint32_t kept = 0;
  uint32_t i = 0;
#if defined(__AVX512F__)
  // Clamping the offset to the span keeps the gather inside the bitmap; the range compare drops those rows.
  const __m512i low_lanes = _mm512_set1_epi32(static_cast<int>(low));
  const __m512i span_lanes = _mm512_set1_epi32(static_cast<int>(span));
  const __m512i base_lanes = _mm512_set1_epi32(static_cast<int>(bit_base));
  const __m512i low5 = _mm512_set1_epi32(31);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i sixteen = _mm512_set1_epi32(16);
  const int* words = reinterpret_cast<const int*>(bits);  // little-endian: bit b is bit b % 32 of dword b / 32
  __m512i row = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                 _mm512_set1_epi32(static_cast<int>(row_offset)));
  for (; i + 16 <= n; i += 16, row = _mm512_add_epi32(row, sixteen)) {
    const __m512i offset = _mm512_sub_epi32(_mm512_loadu_si512(codes + i), low_lanes);
    const __mmask16 in_range = _mm512_cmple_epu32_mask(offset, span_lanes);
    const __m512i bit = _mm512_add_epi32(_mm512_min_epu32(offset, span_lanes), base_lanes);
    const __m512i word = _mm512_i32gather_epi32(_mm512_srli_epi32(bit, 5), words, 4);
    const __mmask16 hit =
        _mm512_mask_test_epi32_mask(in_range, _mm512_srlv_epi32(word, _mm512_and_si512(bit, low5)), one);
    _mm512_storeu_si512(out_rows + kept, _mm512_maskz_compress_epi32(hit, row));
    kept += static_cast<uint32_t>(__builtin_popcount(hit));
  }
#endif
  for (; i < n; ++i) {
    const uint32_t offset = codes[i] - low;
    const uint64_t bit = static_cast<uint64_t>(bit_base) + std::min(offset, span);
    out_rows[kept] = row_offset + i;
    kept += static_cast<uint32_t>(offset <= span) & static_cast<uint32_t>(bits[bit >> 6] >> (bit & 63));
  }
  return kept;
}

// The selected rows of an unpacked chunk: `rows[0..m)` (ascending, each in [chunk_start, chunk_start + 1024)) whose
// code `codes[row - chunk_start]` passes the range or bitmap test of the two functions above; 16 rows per step where
// the build has AVX-512 (a gather of their codes). `out` may be `rows`: a step stores its 16 lanes at or before the
// rows it read.
template <bool kBitmap>
uint32_t SelectRowsInChunk(const uint32_t* codes, uint32_t chunk_start, const uint32_t* rows, uint32_t m, uint32_t low,
                           uint32_t span, const uint64_t* bits, uint32_t bit_base, uint32_t* out) {
  uint32_t kept = 0;
  uint32_t i = 0;
#if defined(__AVX512F__)
  const __m512i start_lanes = _mm512_set1_epi32(static_cast<int>(chunk_start));
  const __m512i low_lanes = _mm512_set1_epi32(static_cast<int>(low));
  const __m512i span_lanes = _mm512_set1_epi32(static_cast<int>(span));
  const __m512i base_lanes = _mm512_set1_epi32(static_cast<int>(bit_base));
  const __m512i low5 = _mm512_set1_epi32(31);
  const __m512i one = _mm512_set1_epi32(1);
  const int* words = reinterpret_cast<const int*>(bits);
  for (; i + 16 <= m; i += 16) {
    const __m512i row = _mm512_loadu_si512(rows + i);
    const __m512i code = _mm512_i32gather_epi32(_mm512_sub_epi32(row, start_lanes), codes, 4);
    const __m512i offset = _mm512_sub_epi32(code, low_lanes);
    __mmask16 hit = _mm512_cmple_epu32_mask(offset, span_lanes);
    if constexpr (kBitmap) {
      const __m512i bit = _mm512_add_epi32(_mm512_min_epu32(offset, span_lanes), base_lanes);
      const __m512i word = _mm512_i32gather_epi32(_mm512_srli_epi32(bit, 5), words, 4);
      hit = _mm512_mask_test_epi32_mask(hit, _mm512_srlv_epi32(word, _mm512_and_si512(bit, low5)), one);
    }
    _mm512_storeu_si512(out + kept, _mm512_maskz_compress_epi32(hit, row));
    kept += static_cast<uint32_t>(__builtin_popcount(hit));
  }
#endif
  for (; i < m; ++i) {
    const uint32_t row = rows[i];
    const uint32_t offset = codes[row - chunk_start] - low;
    uint32_t hit = offset <= span;
    if constexpr (kBitmap) {
      const uint32_t bit = bit_base + std::min(offset, span);
      hit &= static_cast<uint32_t>(bits[bit >> 6] >> (bit & 63));
    }
    out[kept] = row;
    kept += hit;
  }
  return kept;
}

#pragma GCC diagnostic pop

// Keeps the rows whose code `keep(code)` accepts. `dense(codes, n, row_offset, out)` handles a chunk of unpacked
// codes without an input selection, and `selected(codes, chunk_start, rows, m, out)` (or nullptr: `keep` row by
// row) the selected rows of one.
template <typename Keep, typename Dense, typename Selected = std::nullptr_t>
uint32_t SelectCodes(const uint8_t* packed, int bit_width, uint32_t first, uint32_t count, const uint32_t* rows,
                     uint32_t row_count, uint32_t* out_rows, const Keep& keep, const Dense& dense,
                     const Selected& selected = nullptr) {
  uint32_t kept = 0;
  if (bit_width > 32 || (rows != nullptr && static_cast<uint64_t>(row_count) * kSparseRows < count)) {
    const uint32_t candidates = rows != nullptr ? row_count : count;
    for (uint32_t s = 0; s < candidates; ++s) {
      const uint32_t row = rows != nullptr ? rows[s] : s;
      if (rows != nullptr && s + kPrefetchRows < candidates)
        PrefetchCode(packed, bit_width, first + rows[s + kPrefetchRows]);
      out_rows[kept] = row;  // in place when out_rows is rows: kept never passes s
      kept += keep(UnpackCode(packed, bit_width, first + row));
    }
    return kept;
  }
  uint32_t codes[kSelectChunk];
  uint32_t s = 0;
  for (uint32_t done = 0; done < count; done += kSelectChunk) {
    const uint32_t n = std::min(kSelectChunk, count - done);
    if (rows != nullptr && (s == row_count || rows[s] >= done + n)) continue;  // no selected row in this chunk
    UnpackCodes<uint32_t>(packed, bit_width, 0, first + done, n, codes);
    if (rows == nullptr) {
      kept += dense(codes, n, done, out_rows + kept);
      continue;
    }
    if constexpr (!std::is_same_v<Selected, std::nullptr_t>) {
      const uint32_t* end = std::lower_bound(rows + s, rows + row_count, done + n);
      const uint32_t m = static_cast<uint32_t>(end - (rows + s));
      kept += selected(codes, done, rows + s, m, out_rows + kept);
      s += m;
    } else {
      for (; s < row_count && rows[s] < done + n; ++s) {
        const uint32_t row = rows[s];
        out_rows[kept] = row;
        kept += keep(codes[row - done]);
      }
    }
  }
  return kept;
}

// One row of SelectCodesAllOf, the conjuncts in `order` (with `bitmap`, the last is the bitmap test, whose rows
// in and out it counts).
bool TestRowCodes(PackedCodeTest* tests, const int* order, int test_count, uint32_t first, uint32_t row, bool bitmap) {
  for (int k = 0; k < test_count; ++k) {
    PackedCodeTest& test = tests[order[k]];
    const bool counted = bitmap && k == test_count - 1;
    test.tested += counted;
    const uint32_t offset = static_cast<uint32_t>(UnpackCode(test.packed, test.bit_width, first + row)) - test.low;
    bool hit = offset <= test.span;
    if (hit && test.bits != nullptr) {
      const uint64_t bit = static_cast<uint64_t>(test.bit_base) + offset;
      hit = (test.bits[bit >> 6] >> (bit & 63)) & 1;
    }
    if (!hit) return false;
    test.passed += counted;
  }
  return true;
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VBMI__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // gcc 12's intrinsic headers (_mm512_undefined_epi32)
// Sixteen codes of at most kMaxFusedBitWidth bits from a byte-aligned group (16 codes fill 2 * width bytes): a
// masked load of the bytes up to the last code's 4-byte window, a byte permute that gives code j its window in
// 32-bit lane j, a per-lane shift and mask. Reads no byte past the last code's window.
struct Unpack16 {
  __m512i permute;
  __m512i shift;
  __m512i mask;
  __mmask64 load_mask;

  Unpack16() = default;
  explicit Unpack16(int width) {
    alignas(64) uint8_t index[64];
    alignas(64) uint32_t shifts[16];
    for (int j = 0; j < 16; ++j) {
      shifts[j] = static_cast<uint32_t>((j * width) & 7);
      for (int k = 0; k < 4; ++k) index[j * 4 + k] = static_cast<uint8_t>(((j * width) >> 3) + k);
    }
    permute = _mm512_load_si512(index);
    shift = _mm512_load_si512(shifts);
    mask = _mm512_set1_epi32(static_cast<int>(width == 0 ? 0u : (1u << width) - 1));
    load_mask = (__mmask64{1} << (((15 * width) >> 3) + 4)) - 1;
  }
  __m512i operator()(const uint8_t* group) const {
    const __m512i bytes = _mm512_maskz_loadu_epi8(load_mask, group);
    return _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutexvar_epi8(permute, bytes), shift), mask);
  }
};

// SelectCodesAllOf's 16-row steps over rows [0, groups * 16) of its vector, with kRanges range tests
// (`tests[order[0..kRanges)]`) and, with kBitmap, the bitmap test `tests[order[kRanges]]` after them. The range
// tests narrow a lane mask in registers (their count a constant, so every test's constants stay in registers);
// with a bitmap test the rows left and their codes are compressed into a chunk's candidates, whose bits are then
// gathered 16 at a time. Returns the rows kept.
// How far ahead of its current group each stream is prefetched (the streams are read once, from memory).
constexpr size_t kFusedPrefetchBytes = 1024;

template <int kRanges, bool kBitmap>
uint32_t SelectGroupsAllOf(PackedCodeTest* tests, const int* order, uint32_t first, uint32_t groups,
                           uint32_t* out_rows) {
  constexpr int kTests = kRanges + (kBitmap ? 1 : 0);
  Unpack16 unpack[kTests];
  __m512i low[kTests];
  __m512i span[kTests];
  const uint8_t* group[kTests];  // the current group's first byte in each stream
  size_t group_bytes[kTests];    // 16 codes of w bits: 2 * w bytes
#pragma GCC unroll 8
  for (int k = 0; k < kTests; ++k) {
    const PackedCodeTest& test = tests[order[k]];
    unpack[k] = Unpack16(test.bit_width);
    low[k] = _mm512_set1_epi32(static_cast<int>(test.low));
    span[k] = _mm512_set1_epi32(static_cast<int>(test.span));
    group[k] = test.packed + ((static_cast<uint64_t>(first) * test.bit_width) >> 3);  // first % 16 == 0
    group_bytes[k] = static_cast<size_t>(2 * test.bit_width);
  }
  const __m512i sixteen = _mm512_set1_epi32(16);
  uint32_t kept = 0;
  uint64_t tested = 0;
  constexpr uint32_t kChunkGroups = kSelectChunk / 16;
  alignas(64) uint32_t candidate_rows[kBitmap ? kSelectChunk : 1];
  alignas(64) uint32_t candidate_codes[kBitmap ? kSelectChunk : 1];
  __m512i row = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (uint32_t chunk = 0; chunk < groups; chunk += kChunkGroups) {
    const uint32_t end = std::min(groups, chunk + kChunkGroups);
    uint32_t candidates = 0;
    for (uint32_t g = chunk; g < end; ++g, row = _mm512_add_epi32(row, sixteen)) {
      __mmask16 hit = 0xFFFF;
#pragma GCC unroll 8
      for (int k = 0; k < kRanges; ++k) {
        __builtin_prefetch(group[k] + kFusedPrefetchBytes);
        const __m512i code = unpack[k](group[k]);
        group[k] += group_bytes[k];
        hit = _mm512_mask_cmple_epu32_mask(hit, _mm512_sub_epi32(code, low[k]), span[k]);
      }
      // A compress into a register and a full store: the 16 slots from the count so far are free.
      if constexpr (kBitmap) {
        __builtin_prefetch(group[kRanges] + kFusedPrefetchBytes);
        const __m512i code = unpack[kRanges](group[kRanges]);
        group[kRanges] += group_bytes[kRanges];
        _mm512_storeu_si512(candidate_codes + candidates, _mm512_maskz_compress_epi32(hit, code));
        _mm512_storeu_si512(candidate_rows + candidates, _mm512_maskz_compress_epi32(hit, row));
        candidates += static_cast<uint32_t>(__builtin_popcount(hit));
      } else {
        _mm512_storeu_si512(out_rows + kept, _mm512_maskz_compress_epi32(hit, row));
        kept += static_cast<uint32_t>(__builtin_popcount(hit));
      }
    }
    if constexpr (kBitmap) {
      const PackedCodeTest& test = tests[order[kRanges]];
      tested += candidates;
      const __m512i bit_base = _mm512_set1_epi32(static_cast<int>(test.bit_base));
      const __m512i low5 = _mm512_set1_epi32(31);
      const __m512i one = _mm512_set1_epi32(1);
      const int* words = reinterpret_cast<const int*>(test.bits);  // little-endian: bit b is bit b % 32 of dword b / 32
      uint32_t c = 0;
      for (; c + 16 <= candidates; c += 16) {
        // Clamping the offset to the span keeps the gather inside the bitmap; the range compare drops those rows.
        const __m512i offset = _mm512_sub_epi32(_mm512_load_si512(candidate_codes + c), low[kRanges]);
        const __mmask16 in_range = _mm512_cmple_epu32_mask(offset, span[kRanges]);
        const __m512i bit = _mm512_add_epi32(_mm512_min_epu32(offset, span[kRanges]), bit_base);
        const __m512i word = _mm512_i32gather_epi32(_mm512_srli_epi32(bit, 5), words, 4);
        const __mmask16 hit =
            _mm512_mask_test_epi32_mask(in_range, _mm512_srlv_epi32(word, _mm512_and_si512(bit, low5)), one);
        _mm512_storeu_si512(out_rows + kept, _mm512_maskz_compress_epi32(hit, _mm512_load_si512(candidate_rows + c)));
        kept += static_cast<uint32_t>(__builtin_popcount(hit));
      }
      for (; c < candidates; ++c) {
        const uint32_t offset = candidate_codes[c] - test.low;
        const uint64_t bit = static_cast<uint64_t>(test.bit_base) + std::min(offset, test.span);
        out_rows[kept] = candidate_rows[c];
        kept += static_cast<uint32_t>(offset <= test.span) & static_cast<uint32_t>(test.bits[bit >> 6] >> (bit & 63));
      }
    }
  }
  if constexpr (kBitmap) {
    tests[order[kRanges]].tested += tested;
    tests[order[kRanges]].passed += kept;
  }
  return kept;
}

template <bool kBitmap>
uint32_t SelectGroupsAllOf(PackedCodeTest* tests, const int* order, int range_tests, uint32_t first, uint32_t groups,
                           uint32_t* out_rows) {
  switch (range_tests) {
    case 0:
      return SelectGroupsAllOf<0, kBitmap>(tests, order, first, groups, out_rows);
    case 1:
      return SelectGroupsAllOf<1, kBitmap>(tests, order, first, groups, out_rows);
    case 2:
      return SelectGroupsAllOf<2, kBitmap>(tests, order, first, groups, out_rows);
    case 3:
      return SelectGroupsAllOf<3, kBitmap>(tests, order, first, groups, out_rows);
    default:
      return SelectGroupsAllOf<4, kBitmap>(tests, order, first, groups, out_rows);
  }
}
#pragma GCC diagnostic pop
#endif

}  // namespace

const char* ColumnEncodingName(ColumnEncoding encoding) {
  switch (encoding) {
    case ColumnEncoding::kPlain:
      return "plain";
    case ColumnEncoding::kFrameOfReference:
      return "frame-of-reference";
    case ColumnEncoding::kDictionary:
      return "dictionary";
  }
  return "unknown";
}

int BitWidthFor(uint64_t max_code) { return max_code == 0 ? 0 : 64 - __builtin_clzll(max_code); }

size_t PackedBytes(uint32_t count, int bit_width) {
  return (static_cast<size_t>(count) * bit_width + 7) / 8 + sizeof(uint64_t);
}

void PackCodes(const uint64_t* codes, uint32_t count, int bit_width, uint8_t* out) {
  std::memset(out, 0, PackedBytes(count, bit_width));
  if (bit_width == 0) return;
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t bit = static_cast<uint64_t>(i) * bit_width;
    uint64_t word;
    std::memcpy(&word, out + (bit >> 3), sizeof(word));
    word |= codes[i] << (bit & 7);  // bit_width <= 56: the code and its shift fit in one word
    std::memcpy(out + (bit >> 3), &word, sizeof(word));
  }
}

template <typename T>
void UnpackCodes(const uint8_t* packed, int bit_width, T base, uint32_t first, uint32_t count, T* out) {
  kUnpackTable<T, /*kSimd=*/true>[bit_width](packed, base, first, count, out);
}

template <typename T>
void UnpackCodesScalar(const uint8_t* packed, int bit_width, T base, uint32_t first, uint32_t count, T* out) {
  kUnpackTable<T, /*kSimd=*/false>[bit_width](packed, base, first, count, out);
}

bool UnpackCodesHasSimd() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VBMI__)
  return true;
#else
  return false;
#endif
}

#define TESSERA_INSTANTIATE_UNPACK(T)                                           \
  template void UnpackCodes<T>(const uint8_t*, int, T, uint32_t, uint32_t, T*); \
  template void UnpackCodesScalar<T>(const uint8_t*, int, T, uint32_t, uint32_t, T*);
TESSERA_INSTANTIATE_UNPACK(int32_t)
TESSERA_INSTANTIATE_UNPACK(uint32_t)
TESSERA_INSTANTIATE_UNPACK(int64_t)
TESSERA_INSTANTIATE_UNPACK(int128)
#undef TESSERA_INSTANTIATE_UNPACK

uint32_t SelectCodesInRange(const uint8_t* packed, int bit_width, uint32_t first, uint32_t count, const uint32_t* rows,
                            uint32_t row_count, uint64_t low, uint64_t high, uint32_t* out_rows) {
  const uint64_t span = high - low;
  auto keep = [low, span](uint64_t code) { return code - low <= span; };
  // Codes of up to 32 bits: low and high fit too once clamped to the widest code.
  const uint64_t widest = bit_width >= 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1;
  const uint32_t low32 = static_cast<uint32_t>(std::min(low, widest));
  const uint32_t span32 = static_cast<uint32_t>(std::min(high, widest)) - low32;
  auto dense = [low32, span32](const uint32_t* codes, uint32_t n, uint32_t row_offset, uint32_t* out) {
    return SelectChunkInRange(codes, n, row_offset, low32, span32, out);
  };
  auto selected = [low32, span32](const uint32_t* codes, uint32_t chunk_start, const uint32_t* chunk_rows, uint32_t m,
                                  uint32_t* out) {
    return SelectRowsInChunk</*kBitmap=*/false>(codes, chunk_start, chunk_rows, m, low32, span32, nullptr, 0, out);
  };
  if (low > high || low > widest) return 0;
  return SelectCodes(packed, bit_width, first, count, rows, row_count, out_rows, keep, dense, selected);
}

uint32_t SelectCodesInSet(const uint8_t* packed, int bit_width, uint32_t first, uint32_t count, const uint32_t* rows,
                          uint32_t row_count, const uint64_t* codes, uint32_t code_count, uint32_t* out_rows) {
  auto keep = [codes, code_count](uint64_t code) {
    if (code_count <= 8) {
      bool hit = false;
      for (uint32_t k = 0; k < code_count; ++k) hit |= codes[k] == code;
      return hit;
    }
    return std::binary_search(codes, codes + code_count, code);
  };
  auto dense = [&keep](const uint32_t* chunk, uint32_t n, uint32_t row_offset, uint32_t* out) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; ++i) {
      out[kept] = row_offset + i;
      kept += keep(chunk[i]);
    }
    return kept;
  };
  if (code_count == 0) return 0;
  return SelectCodes(packed, bit_width, first, count, rows, row_count, out_rows, keep, dense);
}

uint32_t SelectCodesInBitmap(const uint8_t* packed, int bit_width, uint32_t first, uint32_t count, const uint32_t* rows,
                             uint32_t row_count, uint64_t code_low, uint64_t code_span, const uint64_t* bits,
                             uint64_t bit_base, uint32_t* out_rows) {
  auto keep = [=](uint64_t code) {
    const uint64_t offset = code - code_low;
    const uint64_t bit = bit_base + std::min(offset, code_span);
    return static_cast<uint32_t>(offset <= code_span) & static_cast<uint32_t>(bits[bit >> 6] >> (bit & 63));
  };
  const bool narrow = code_low <= UINT32_MAX && code_span < UINT32_MAX && bit_base + code_span <= UINT32_MAX;
  auto dense = [&](const uint32_t* codes, uint32_t n, uint32_t row_offset, uint32_t* out) -> uint32_t {
    if (narrow) {
      return SelectChunkInBitmap(codes, n, row_offset, static_cast<uint32_t>(code_low),
                                 static_cast<uint32_t>(code_span), bits, static_cast<uint32_t>(bit_base), out);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; ++i) {
      out[kept] = row_offset + i;
      kept += keep(codes[i]);
    }
    return kept;
  };
  if (!narrow) return SelectCodes(packed, bit_width, first, count, rows, row_count, out_rows, keep, dense);
  auto selected = [&](const uint32_t* codes, uint32_t chunk_start, const uint32_t* chunk_rows, uint32_t m,
                      uint32_t* out) {
    return SelectRowsInChunk</*kBitmap=*/true>(codes, chunk_start, chunk_rows, m, static_cast<uint32_t>(code_low),
                                               static_cast<uint32_t>(code_span), bits, static_cast<uint32_t>(bit_base),
                                               out);
  };
  return SelectCodes(packed, bit_width, first, count, rows, row_count, out_rows, keep, dense, selected);
}

uint32_t StringDictionary::LowerBound(std::string_view value) const {
  uint32_t low = 0;
  uint32_t high = size();
  while (low < high) {
    const uint32_t middle = low + (high - low) / 2;
    if ((*this)[middle] < value) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

uint32_t Crc32c(const void* data, size_t bytes, uint32_t crc) {
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  const auto* p = static_cast<const uint8_t*>(data);
  return ~(hardware ? Crc32cHardware(p, bytes, ~crc) : Crc32cSoftware(p, bytes, ~crc));
}

uint32_t SelectCodesAllOf(PackedCodeTest* tests, int test_count, uint32_t first, uint32_t count, uint32_t* out_rows) {
  // The range tests in the given order, then the bitmap test.
  int order[kMaxFusedTests];
  int range_tests = 0;
  int bitmap = -1;
  for (int k = 0; k < test_count; ++k) {
    if (tests[k].bits != nullptr) {
      bitmap = k;
    } else {
      order[range_tests++] = k;
    }
  }
  if (bitmap >= 0) order[range_tests] = bitmap;
  uint32_t kept = 0;
  uint32_t row = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VBMI__)
  kept = bitmap >= 0 ? SelectGroupsAllOf<true>(tests, order, range_tests, first, count / 16, out_rows)
                     : SelectGroupsAllOf<false>(tests, order, range_tests, first, count / 16, out_rows);
  row = count / 16 * 16;
#endif
  for (; row < count; ++row) {
    out_rows[kept] = row;
    kept += TestRowCodes(tests, order, test_count, first, row, bitmap >= 0);
  }
  return kept;
}

}  // namespace tessera
