#include "relational_operators/exact_filter.h"

#include <atomic>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tessera {
namespace {

bool IsWide(const Type& type) { return type.id() == TypeId::kBigInt || type.id() == TypeId::kTimestamp; }

// Bytes of buffer-pool budget reserved at a time for the duplicate-key map (rare path).
constexpr size_t kDuplicateMapChunkBytes = 64 << 10;
constexpr size_t kDuplicateEntryBytes = 32;

}  // namespace

absl::StatusOr<std::unique_ptr<ExactFilter>> ExactFilter::Create(Type key_type, int64_t min, int64_t max,
                                                                 bool counts_duplicates, BufferPool* pool) {
  const TypeId id = key_type.id();
  if (id != TypeId::kInteger && id != TypeId::kBigInt && id != TypeId::kDate && id != TypeId::kTimestamp) {
    return absl::InternalError(absl::StrCat("exact filter on a key of type ", key_type.ToString()));
  }
  if (max < min || static_cast<uint64_t>(max) - static_cast<uint64_t>(min) >= static_cast<uint64_t>(kMaxBits)) {
    return absl::InternalError(absl::StrCat("exact filter over the range [", min, ", ", max, "] is too large"));
  }
  const uint64_t bits = static_cast<uint64_t>(max) - static_cast<uint64_t>(min) + 1;
  const size_t bytes = ((bits + 63) / 64) * sizeof(uint64_t);
  TESSERA_ASSIGN_OR_RETURN(void* memory, pool->Allocate(MemoryKind::kBlob, bytes));
  std::memset(memory, 0, bytes);
  return std::unique_ptr<ExactFilter>(
      new ExactFilter(key_type, min, max, counts_duplicates, static_cast<uint64_t*>(memory), bytes, pool));
}

ExactFilter::ExactFilter(Type key_type, int64_t min, int64_t max, bool counts_duplicates, uint64_t* words, size_t bytes,
                         BufferPool* pool)
    : key_type_(key_type),
      wide_(IsWide(key_type)),
      min_(min),
      max_(max),
      bits_(static_cast<uint64_t>(max) - static_cast<uint64_t>(min) + 1),
      counts_duplicates_(counts_duplicates),
      words_(words),
      bytes_(bytes),
      pool_(pool) {}

ExactFilter::~ExactFilter() {
  pool_->Free(words_, MemoryKind::kBlob, bytes_);
  if (reserved_map_bytes_ > 0) pool_->Release(MemoryKind::kBlob, reserved_map_bytes_);
}

absl::Status ExactFilter::InsertKeys(const ColumnVector& keys, const SelectionVector* in, uint32_t size) {
  return wide_ ? InsertTyped<int64_t>(keys, in, size) : InsertTyped<int32_t>(keys, in, size);
}

template <typename T>
absl::Status ExactFilter::InsertTyped(const ColumnVector& keys, const SelectionVector* in, uint32_t size) {
  const T* values = keys.values<T>();
  const uint32_t candidates = in != nullptr ? in->count : size;
  int64_t duplicates = 0;
  for (uint32_t s = 0; s < candidates; ++s) {
    const uint32_t row = in != nullptr ? in->rows[s] : s;
    if (keys.IsNull(row)) continue;
    const int64_t key = values[row];
    const uint64_t offset = static_cast<uint64_t>(key) - static_cast<uint64_t>(min_);
    if (offset >= bits_) {
      return absl::InternalError(absl::StrCat("exact filter: build key ", key, " lies outside [", min_, ", ", max_,
                                              "] (table statistics out of date)"));
    }
    const uint64_t mask = uint64_t{1} << (offset & 63);
    const uint64_t before = std::atomic_ref<uint64_t>(words_[offset >> 6]).fetch_or(mask, std::memory_order_relaxed);
    if ((before & mask) == 0) continue;
    // A semi / anti join's filter only needs membership: count its duplicates without the lock (TPC-H Q4 builds
    // on lineitem, about 2.4 M duplicate order keys).
    ++duplicates;
    if (counts_duplicates_) TESSERA_RETURN_IF_ERROR(RecordDuplicate(key));
  }
  if (duplicates > 0) duplicate_keys_.fetch_add(duplicates, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::Status ExactFilter::RecordDuplicate(int64_t key) {
  std::lock_guard<std::mutex> lock(duplicates_mutex_);
  ++extra_copies_[key];
  if (extra_copies_.size() * kDuplicateEntryBytes > reserved_map_bytes_) {
    TESSERA_RETURN_IF_ERROR(pool_->Reserve(MemoryKind::kBlob, kDuplicateMapChunkBytes));
    reserved_map_bytes_ += kDuplicateMapChunkBytes;
  }
  return absl::OkStatus();
}

template <typename T, bool kMember>
void ExactFilter::KeepTyped(const ColumnVector& keys, const SelectionVector* in, uint32_t size,
                            SelectionVector* out) const {
  const T* values = keys.values<T>();
  const uint32_t candidates = in != nullptr ? in->count : size;
  uint32_t kept = 0;
  if (!keys.has_nulls()) {
    for (uint32_t s = 0; s < candidates; ++s) {
      const uint32_t row = in != nullptr ? in->rows[s] : s;
      out->rows[kept] = row;
      kept += Contains(values[row]) == kMember;
    }
  } else {
    for (uint32_t s = 0; s < candidates; ++s) {
      const uint32_t row = in != nullptr ? in->rows[s] : s;
      out->rows[kept] = row;
      const bool member = !keys.IsNull(row) && Contains(values[row]);
      kept += member == kMember;
    }
  }
  out->count = kept;
}

void ExactFilter::KeepMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                              SelectionVector* out) const {
  if (wide_) {
    KeepTyped<int64_t, true>(*keys[0], in, size, out);
  } else {
    KeepTyped<int32_t, true>(*keys[0], in, size, out);
  }
}

void ExactFilter::KeepNonMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                                 SelectionVector* out) const {
  if (wide_) {
    KeepTyped<int64_t, false>(*keys[0], in, size, out);
  } else {
    KeepTyped<int32_t, false>(*keys[0], in, size, out);
  }
}

int64_t ExactFilter::KeyAt(const ColumnVector& keys, uint32_t row) const {
  return wide_ ? keys.values<int64_t>()[row] : keys.values<int32_t>()[row];
}

uint32_t ExactFilter::Multiplicity(const std::vector<const ColumnVector*>& keys, uint32_t row) const {
  auto it = extra_copies_.find(KeyAt(*keys[0], row));
  return it == extra_copies_.end() ? 1 : 1 + it->second;
}

}  // namespace tessera
