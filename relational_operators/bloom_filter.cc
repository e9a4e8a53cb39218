#include "relational_operators/bloom_filter.h"

#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "common/status_macros.h"
#include "glog/logging.h"
#include "relational_operators/key_hashing.h"

namespace tessera {
namespace {

// Combined hashes of the key columns for the candidate rows, as the join hash table computes them.
void HashKeys(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
              uint64_t* hashes) {
  for (size_t k = 0; k < keys.size(); ++k) HashSelectedRows(*keys[k], in, size, k == 0, hashes);
}

bool AnyNull(const std::vector<const ColumnVector*>& keys, uint32_t row) {
  bool null = false;
  for (const ColumnVector* key : keys) null |= key->IsNull(row);
  return null;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BlockedBloomFilter>> BlockedBloomFilter::Create(int64_t expected_keys,
                                                                               BufferPool* pool) {
  const int64_t keys = std::max<int64_t>(expected_keys, 1);
  const uint64_t word_count = static_cast<uint64_t>((keys * kBitsPerKey + 63) / 64);
  const size_t bytes = word_count * sizeof(uint64_t);
  TESSERA_ASSIGN_OR_RETURN(void* memory, pool->Allocate(MemoryKind::kBlob, bytes));
  std::memset(memory, 0, bytes);
  return std::unique_ptr<BlockedBloomFilter>(
      new BlockedBloomFilter(static_cast<uint64_t*>(memory), word_count, bytes, pool));
}

BlockedBloomFilter::~BlockedBloomFilter() { pool_->Free(words_, MemoryKind::kBlob, bytes_); }

absl::Status LipFilter::Build(int64_t keys, BufferPool* pool) {
  TESSERA_ASSIGN_OR_RETURN(bloom_, BlockedBloomFilter::Create(keys, pool));
  return absl::OkStatus();
}

absl::Status LipFilter::BuildDense(int64_t min, uint64_t span, BufferPool* pool) {
  if (span >= (uint64_t{1} << 40)) return absl::InvalidArgumentError("dense LIP filter range too large");
  dense_min_ = min;
  dense_span_ = span;
  TESSERA_ASSIGN_OR_RETURN(dense_words_, PoolArray<uint64_t>::AllocateZeroed(pool, (span + 1) / 64 + 1));
  return absl::OkStatus();
}

// GCC 12 reports the intrinsics' deliberately undefined pass-through operands as maybe uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace {

// The key of row `row` hashed as HashSelectedRows hashes key columns without NULLs.
uint64_t HashIntegerKeyTuple(const BlockedBloomFilter::IntegerKeyColumn* columns, int key_count, uint32_t row) {
  uint64_t hash = 0;
  for (int k = 0; k < key_count; ++k) {
    const int64_t value = columns[k].wide ? static_cast<const int64_t*>(columns[k].values)[row]
                                          : static_cast<const int32_t*>(columns[k].values)[row];
    hash = k == 0 ? HashIntegerKey(value) : CombineHashes(hash, HashIntegerKey(value));
  }
  return hash;
}

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
// HashInt64 in eight lanes.
inline __m512i HashLanes(__m512i key) {
  const __m512i c1 = _mm512_set1_epi64(static_cast<int64_t>(0xff51afd7ed558ccdULL));
  const __m512i c2 = _mm512_set1_epi64(static_cast<int64_t>(0xc4ceb9fe1a85ec53ULL));
  key = _mm512_xor_si512(key, _mm512_srli_epi64(key, 33));
  key = _mm512_mullo_epi64(key, c1);
  key = _mm512_xor_si512(key, _mm512_srli_epi64(key, 33));
  key = _mm512_mullo_epi64(key, c2);
  return _mm512_xor_si512(key, _mm512_srli_epi64(key, 33));
}

// The next eight candidate rows of a vectorized loop: rows[i..i+8) when gathering (`rows` not null), else the
// running positions (advanced by eight).
inline __m256i NextRowLanes(const uint32_t* rows, uint32_t i, __m256i* positions) {
  const __m256i row = rows != nullptr ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + i)) : *positions;
  *positions = _mm256_add_epi32(*positions, _mm256_set1_epi32(8));
  return row;
}

// Eight values of a key column in 64-bit lanes (sign-extended, as HashIntegerKey sees them): rows `row` when
// gathering, else the eight from `first` on.
template <typename T>
inline __m512i LoadKeyLanes(const void* column_values, bool gather, __m256i row, uint32_t first) {
  const auto* values = static_cast<const T*>(column_values);
  if constexpr (sizeof(T) == 4) {
    return _mm512_cvtepi32_epi64(gather ? _mm256_i32gather_epi32(reinterpret_cast<const int*>(values), row, 4)
                                        : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + first)));
  } else {
    return gather ? _mm512_i32gather_epi64(row, reinterpret_cast<const long long*>(values), 8)
                  : _mm512_loadu_si512(values + first);
  }
}
#endif

}  // namespace

template <typename T>
void LipFilter::KeepDenseMembers(const ColumnVector& key, const SelectionVector* in, uint32_t size,
                                 SelectionVector* out) const {
  const T* values = key.values<T>();
  const uint64_t* words = dense_words_.data();
  const uint64_t min = static_cast<uint64_t>(dense_min_);
  const uint64_t outside = dense_span_ + 1;  // a bit never set
  const uint32_t candidates = in != nullptr ? in->count : size;
  const uint32_t* rows = in != nullptr ? in->rows.data() : nullptr;
  uint32_t* kept_rows = out->rows.data();
  const bool nulls = key.has_nulls();
  uint32_t kept = 0;
  uint32_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
  // The scalar loop below, eight lanes wide, for keys without NULLs (as in KeepIntegerKeys: the passing rows
  // are compressed in a register; each store writes eight slots at kept <= i).
  if (!nulls) {
    const __m512i min_lanes = _mm512_set1_epi64(static_cast<int64_t>(min));
    const __m512i outside_lanes = _mm512_set1_epi64(static_cast<int64_t>(outside));
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i low6 = _mm512_set1_epi64(63);
    __m256i positions = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (; i + 8 <= candidates; i += 8) {
      const __m256i row = NextRowLanes(rows, i, &positions);
      const __m512i value = LoadKeyLanes<T>(values, rows != nullptr, row, i);
      const __m512i offset = _mm512_min_epu64(_mm512_sub_epi64(value, min_lanes), outside_lanes);
      const __m512i word =
          _mm512_i64gather_epi64(_mm512_srli_epi64(offset, 6), reinterpret_cast<const long long*>(words), 8);
      const __mmask8 hit = _mm512_test_epi64_mask(_mm512_srlv_epi64(word, _mm512_and_si512(offset, low6)), one);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(kept_rows + kept), _mm256_maskz_compress_epi32(hit, row));
      kept += static_cast<uint32_t>(__builtin_popcount(hit));
    }
  }
#endif
  for (; i < candidates; ++i) {
    const uint32_t row = rows != nullptr ? rows[i] : i;
    uint64_t offset = static_cast<uint64_t>(static_cast<int64_t>(values[row])) - min;
    offset = offset < outside ? offset : outside;
    const bool member = ((words[offset >> 6] >> (offset & 63)) & 1) != 0;
    kept_rows[kept] = row;
    kept += static_cast<uint32_t>(member & !(nulls && key.IsNull(row)));
  }
  out->count = kept;
}

template <typename T>
uint32_t BlockedBloomFilter::KeepIntegerKeys(const T* values, const uint32_t* rows, uint32_t count,
                                             uint32_t* kept_rows) const {
  const IntegerKeyColumn column{values, sizeof(T) == 8};
  return KeepKeys<T, /*kMoreColumns=*/false>(&column, 1, rows, count, kept_rows);
}

uint32_t BlockedBloomFilter::KeepIntegerKeyTuples(const IntegerKeyColumn* columns, int key_count, const uint32_t* rows,
                                                  uint32_t count, uint32_t* kept_rows) const {
  return columns[0].wide ? KeepKeys<int64_t, /*kMoreColumns=*/true>(columns, key_count, rows, count, kept_rows)
                         : KeepKeys<int32_t, /*kMoreColumns=*/true>(columns, key_count, rows, count, kept_rows);
}

template <typename FirstColumn, bool kMoreColumns>
uint32_t BlockedBloomFilter::KeepKeys(const IntegerKeyColumn* columns, int key_count, const uint32_t* rows,
                                      uint32_t count, uint32_t* kept_rows) const {
  uint32_t kept = 0;
  uint32_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
  // The scalar loop below, eight lanes wide: the key hash per lane (CombineHashes for the columns after the
  // first), WordOf and Mask, a gather of the filter words, and the passing rows compressed in a register (a
  // compressing store to memory is slow on some CPUs). Each store writes eight slots at kept <= i, so it never
  // overtakes the rows still to be read.
  const __m512i word_count = _mm512_set1_epi64(static_cast<int64_t>(word_count_));
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i low6 = _mm512_set1_epi64(63);
  const __m512i golden = _mm512_set1_epi64(static_cast<int64_t>(0x9e3779b97f4a7c15ULL));
  __m256i positions = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const bool gather = rows != nullptr;
  for (; i + 8 <= count; i += 8) {
    const __m256i row = NextRowLanes(rows, i, &positions);
    __m512i hash = HashLanes(LoadKeyLanes<FirstColumn>(columns[0].values, gather, row, i));
    if constexpr (kMoreColumns) {
      for (int k = 1; k < key_count; ++k) {  // CombineHashes(hash, key hash)
        const __m512i key_hash = HashLanes(columns[k].wide ? LoadKeyLanes<int64_t>(columns[k].values, gather, row, i)
                                                           : LoadKeyLanes<int32_t>(columns[k].values, gather, row, i));
        hash = HashLanes(
            _mm512_xor_si512(hash, _mm512_add_epi64(_mm512_add_epi64(key_hash, golden), _mm512_slli_epi64(hash, 6))));
      }
    }
    const __m512i word = _mm512_srli_epi64(_mm512_mullo_epi64(_mm512_srli_epi64(hash, 32), word_count), 32);
    __m512i mask = _mm512_sllv_epi64(one, _mm512_and_si512(hash, low6));
    for (int b = 1; b < kBitsSet; ++b) {
      mask = _mm512_or_si512(mask, _mm512_sllv_epi64(one, _mm512_and_si512(_mm512_srli_epi64(hash, 6 * b), low6)));
    }
    const __m512i words = _mm512_i64gather_epi64(word, reinterpret_cast<const long long*>(words_), 8);
    const __mmask8 hit = _mm512_cmpeq_epi64_mask(_mm512_and_si512(words, mask), mask);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(kept_rows + kept), _mm256_maskz_compress_epi32(hit, row));
    kept += static_cast<uint32_t>(__builtin_popcount(hit));
  }
#endif
  for (; i < count; ++i) {
    const uint32_t row = rows != nullptr ? rows[i] : i;
    kept_rows[kept] = row;
    if constexpr (kMoreColumns) {
      kept += MayContain(HashIntegerKeyTuple(columns, key_count, row));
    } else {
      kept += MayContain(HashIntegerKey(static_cast<const FirstColumn*>(columns[0].values)[row]));
    }
  }
  return kept;
}

#pragma GCC diagnostic pop

template uint32_t BlockedBloomFilter::KeepIntegerKeys<int32_t>(const int32_t*, const uint32_t*, uint32_t,
                                                               uint32_t*) const;
template uint32_t BlockedBloomFilter::KeepIntegerKeys<int64_t>(const int64_t*, const uint32_t*, uint32_t,
                                                               uint32_t*) const;

template <typename T>
void LipFilter::KeepIntegerMembers(const ColumnVector& key, const SelectionVector* in, uint32_t size,
                                   SelectionVector* out) const {
  const uint32_t candidates = in != nullptr ? in->count : size;
  out->count =
      bloom_->KeepIntegerKeys(key.values<T>(), in != nullptr ? in->rows.data() : nullptr, candidates, out->rows.data());
}

bool LipFilter::KeepIntegerTupleMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in,
                                        uint32_t size, SelectionVector* out) const {
  BlockedBloomFilter::IntegerKeyColumn columns[kMaxIntegerTupleKeys];
  if (keys.size() > kMaxIntegerTupleKeys) return false;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (keys[k]->has_nulls()) return false;
    switch (keys[k]->type().id()) {
      case TypeId::kInteger:
      case TypeId::kDate:
        columns[k] = {keys[k]->values<int32_t>(), false};
        break;
      case TypeId::kBigInt:
      case TypeId::kTimestamp:
        columns[k] = {keys[k]->values<int64_t>(), true};
        break;
      default:
        return false;
    }
  }
  const uint32_t candidates = in != nullptr ? in->count : size;
  out->count = bloom_->KeepIntegerKeyTuples(columns, static_cast<int>(keys.size()),
                                            in != nullptr ? in->rows.data() : nullptr, candidates, out->rows.data());
  return true;
}

void LipFilter::KeepMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                            SelectionVector* out) const {
  if (is_dense()) {  // one INTEGER, DATE, BIGINT or TIMESTAMP key
    const TypeId type = keys[0]->type().id();
    if (type == TypeId::kInteger || type == TypeId::kDate) return KeepDenseMembers<int32_t>(*keys[0], in, size, out);
    return KeepDenseMembers<int64_t>(*keys[0], in, size, out);
  }
  // The common case, one integer key without NULLs: hash inline, no intermediate hash vector.
  if (keys.size() == 1 && !keys[0]->has_nulls()) {
    switch (keys[0]->type().id()) {
      case TypeId::kInteger:
      case TypeId::kDate:
        return KeepIntegerMembers<int32_t>(*keys[0], in, size, out);
      case TypeId::kBigInt:
      case TypeId::kTimestamp:
        return KeepIntegerMembers<int64_t>(*keys[0], in, size, out);
      default:
        break;
    }
  }
  if (keys.size() > 1 && KeepIntegerTupleMembers(keys, in, size, out)) return;
  uint64_t hashes[kVectorSize];
  HashKeys(keys, in, size, hashes);
  const uint32_t candidates = in != nullptr ? in->count : size;
  uint32_t kept = 0;
  for (uint32_t s = 0; s < candidates; ++s) {
    const uint32_t row = in != nullptr ? in->rows[s] : s;
    out->rows[kept] = row;
    kept += bloom_->MayContain(hashes[row]) && !AnyNull(keys, row);
  }
  out->count = kept;
}

void LipFilter::KeepNonMembers(const std::vector<const ColumnVector*>&, const SelectionVector* in, uint32_t size,
                               SelectionVector* out) const {
  LOG(FATAL) << "a Bloom filter cannot prove that a key is absent (anti joins need an exact filter)";
}

}  // namespace tessera
