#include "relational_operators/join_hash_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "relational_operators/key_hashing.h"

namespace tessera {

JoinHashTable::JoinHashTable(std::shared_ptr<TemporaryRelation> build, std::vector<int> key_columns, BufferPool* pool)
    : build_(std::move(build)), key_columns_(std::move(key_columns)), pool_(pool) {
  if (key_columns_.size() == 1) {
    const Type& type = build_->schema()[key_columns_[0]].type;
    switch (type.id()) {
      case TypeId::kBoolean:
        hash_determines_key_ = true;
        break;
      case TypeId::kInteger:
      case TypeId::kDate:
        hash_determines_key_ = true;
        direct_key_width_ = 4;
        break;
      case TypeId::kBigInt:
      case TypeId::kTimestamp:
        hash_determines_key_ = true;
        direct_key_width_ = 8;
        break;
      case TypeId::kDecimal:
        hash_determines_key_ = !type.IsWideDecimal();
        break;
      default:
        break;
    }
  }
  if (key_columns_.size() == 2) {
    keys_are_packed_ = true;
    for (int column : key_columns_) {
      const TypeId id = build_->schema()[column].type.id();
      keys_are_packed_ &= id == TypeId::kInteger || id == TypeId::kDate;
    }
  }
}

void JoinHashTable::PublishLipFilter(std::shared_ptr<LipFilter> filter, std::vector<int> filter_keys) {
  lip_filter_ = std::move(filter);
  // Over all key columns, the entries' hashes are the filter's.
  lip_key_positions_ = filter_keys.size() == key_columns_.size() ? std::vector<int>() : std::move(filter_keys);
}

JoinHashTable::~JoinHashTable() {
  if (reserved_bytes_ > 0) pool_->Release(MemoryKind::kBlob, reserved_bytes_);
}

absl::Status JoinHashTable::AddBlock(uint32_t block_index) {
  BlockView block = build_->block(block_index);
  const uint32_t rows = block.row_count();
  std::vector<Type> types;
  for (int column : key_columns_) types.push_back(build_->schema()[column].type);
  Batch batch;
  std::vector<uint64_t> hashes(kVectorSize);
  std::vector<Entry> entries;
  entries.reserve(rows);
  const std::vector<int>& lip_positions = lip_key_positions_;
  std::vector<uint64_t> lip_hashes(lip_positions.empty() ? 0 : kVectorSize);
  std::vector<uint64_t> lip_entry_hashes;
  if (!lip_positions.empty()) lip_entry_hashes.reserve(rows);
  std::vector<int64_t> entry_keys;  // direct index candidates: the entries' key values
  if (direct_key_width_ > 0) entry_keys.reserve(rows);
  std::vector<uint64_t> packed_keys;
  if (keys_are_packed_) packed_keys.reserve(rows);
  int64_t null_first = 0;
  for (uint32_t first = 0; first < rows; first += kVectorSize) {
    const uint32_t count = std::min(kVectorSize, rows - first);
    LoadBatchFromBlock(block, types, key_columns_, first, count, &batch);
    if (key_columns_.empty()) std::fill(hashes.begin(), hashes.begin() + count, 0);  // nested loop: one chain
    for (size_t k = 0; k < key_columns_.size(); ++k) HashVectorRows(batch.columns[k], count, k == 0, hashes.data());
    for (size_t k = 0; k < lip_positions.size(); ++k) {
      HashVectorRows(batch.columns[lip_positions[k]], count, k == 0, lip_hashes.data());
    }
    for (uint32_t i = 0; i < count; ++i) {
      bool has_null = false;
      for (size_t k = 0; k < key_columns_.size(); ++k) has_null |= batch.columns[k].IsNull(i);
      if (has_null) {
        null_first += key_columns_.empty() ? 0 : batch.columns[0].IsNull(i);
        continue;
      }
      entries.push_back(Entry{hashes[i], block_index, first + i});
      if (!lip_positions.empty()) lip_entry_hashes.push_back(lip_hashes[i]);
      if (direct_key_width_ == 4) entry_keys.push_back(batch.columns[0].values<int32_t>()[i]);
      if (direct_key_width_ == 8) entry_keys.push_back(batch.columns[0].values<int64_t>()[i]);
      if (keys_are_packed_) {
        packed_keys.push_back(PackKey(batch.columns[0].values<int32_t>()[i], batch.columns[1].values<int32_t>()[i]));
      }
    }
  }
  int64_t key_min = INT64_MAX;
  int64_t key_max = INT64_MIN;
  for (int64_t key : entry_keys) {
    key_min = std::min(key_min, key);
    key_max = std::max(key_max, key);
  }
  null_first_key_rows_.fetch_add(null_first);
  const size_t bytes = (entries.size() * sizeof(Entry)) + (lip_entry_hashes.size() * sizeof(uint64_t)) +
                       (entry_keys.size() * sizeof(int64_t)) + (packed_keys.size() * sizeof(uint64_t));
  TESSERA_RETURN_IF_ERROR(pool_->Reserve(MemoryKind::kBlob, bytes));
  std::lock_guard<std::mutex> lock(mutex_);
  reserved_bytes_ += bytes;
  parts_.push_back(std::move(entries));
  if (direct_key_width_ > 0) {
    key_parts_.push_back(std::move(entry_keys));
    key_min_ = std::min(key_min_, key_min);
    key_max_ = std::max(key_max_, key_max);
  }
  if (!lip_positions.empty()) lip_hash_parts_.push_back(std::move(lip_entry_hashes));
  if (keys_are_packed_) packed_key_parts_.push_back(std::move(packed_keys));
  return absl::OkStatus();
}

absl::Status JoinHashTable::Finalize() {
  size_t total = 0;
  for (const auto& part : parts_) total += part.size();
  if (total >= UINT32_MAX) return absl::ResourceExhaustedError("hash join build side has too many rows");
  uint64_t buckets = 16;
  while (buckets < 2 * total) buckets <<= 1;
  TESSERA_ASSIGN_OR_RETURN(bucket_starts_, PoolArray<uint32_t>::AllocateZeroed(pool_, buckets + 1));
  TESSERA_ASSIGN_OR_RETURN(entries_, PoolArray<Entry>::Allocate(pool_, total));
  mask_ = buckets - 1;
  // Counting sort by bucket, in place of the offsets: count, turn counts into bucket ends (inclusive prefix
  // sum), then place each entry at --end of its bucket, which leaves every offset at its bucket's start.
  for (const auto& part : parts_) {
    for (const Entry& entry : part) ++bucket_starts_[entry.hash & mask_];
  }
  for (uint64_t b = 1; b < buckets; ++b) bucket_starts_[b] += bucket_starts_[b - 1];
  bucket_starts_[buckets] = static_cast<uint32_t>(total);
  // The direct index, when the keys' range is small enough, is filled while placing the entries; a key seen
  // twice drops it.
  const uint64_t key_span = total > 0 ? static_cast<uint64_t>(key_max_) - static_cast<uint64_t>(key_min_) : 0;
  bool direct = direct_key_width_ > 0 && total > 0 && key_span < std::max<uint64_t>(4 * total, uint64_t{1} << 18);
  if (direct) {
    // Optional: when the pool cannot hold the array, the table probes by hash as without one.
    absl::StatusOr<PoolArray<uint32_t>> array = PoolArray<uint32_t>::Allocate(pool_, key_span + 1);
    direct = array.ok();
    if (direct) {
      direct_entries_ = std::move(*array);
      std::fill(direct_entries_.begin(), direct_entries_.end(), kNoDirectEntry);
    }
  }
  // With packed keys the entries' hashes are overwritten below: a Bloom filter over all key columns (no direct
  // index and no exact key filter for two columns) takes them from the parts first.
  const bool bloom_from_parts = keys_are_packed_ && lip_filter_ != nullptr && lip_key_positions_.empty();
  if (bloom_from_parts) {
    TESSERA_RETURN_IF_ERROR(lip_filter_->Build(static_cast<int64_t>(total), pool_));
    for (const auto& part : parts_) {
      for (const Entry& entry : part) lip_filter_->Insert(entry.hash);
    }
  }
  for (size_t p = 0; p < parts_.size(); ++p) {
    std::vector<Entry>& part = parts_[p];
    for (size_t i = 0; i < part.size(); ++i) {
      const uint32_t entry = --bucket_starts_[part[i].hash & mask_];
      entries_[entry] = part[i];
      if (keys_are_packed_) entries_[entry].hash = packed_key_parts_[p][i];
      if (!direct) continue;
      uint32_t& slot = direct_entries_[static_cast<uint64_t>(key_parts_[p][i]) - static_cast<uint64_t>(key_min_)];
      direct = slot == kNoDirectEntry;
      slot = entry;
    }
    std::vector<Entry>().swap(part);
    if (keys_are_packed_) std::vector<uint64_t>().swap(packed_key_parts_[p]);
  }
  parts_.clear();
  packed_key_parts_.clear();
  if (!direct) direct_entries_.Reset();
  for (uint32_t b = 0; b < build_->block_count(); ++b) blocks_.push_back(build_->block(b));
  if (track_matches_) {
    uint64_t rows = 0;
    for (const BlockView& block : blocks_) {
      block_row_starts_.push_back(rows);
      rows += block.row_count();
    }
    TESSERA_ASSIGN_OR_RETURN(matched_, PoolArray<uint8_t>::AllocateZeroed(pool_, rows));
  }
  // An exact bit vector over the keys' range is the key filter, and also the LIP filter: with a direct index, and
  // without one (a key seen twice, or a range too sparse for 4 bytes per value) while the range is at most
  // max(64 bits per indexed row, 1 MiB). A probe's scan tests it before hashing: SSB SF10 Q2.1's 4% of parts span
  // 800K keys, and without it every fact row that passed the other filters was hashed and looked up.
  const bool exact_keys =
      direct || (direct_key_width_ > 0 && total > 0 && key_span < std::max<uint64_t>(64 * total, uint64_t{1} << 23));
  if (exact_keys) {
    key_filter_ = lip_filter_ != nullptr && lip_key_positions_.empty() ? lip_filter_
                                                                       : std::make_shared<LipFilter>("direct index");
    TESSERA_RETURN_IF_ERROR(key_filter_->BuildDense(key_min_, key_span, pool_));
    for (const std::vector<int64_t>& keys : key_parts_) {
      for (int64_t key : keys) key_filter_->InsertDenseKey(key);
    }
  }
  std::vector<std::vector<int64_t>>().swap(key_parts_);
  if (lip_filter_ != nullptr && lip_filter_ != key_filter_ && !bloom_from_parts) {  // a Bloom filter
    TESSERA_RETURN_IF_ERROR(lip_filter_->Build(static_cast<int64_t>(entries_.size()), pool_));
    if (lip_key_positions_.empty()) {
      for (const Entry& entry : entries_) lip_filter_->Insert(entry.hash);
    } else {
      for (const auto& part : lip_hash_parts_) {
        for (uint64_t hash : part) lip_filter_->Insert(hash);
      }
      std::vector<std::vector<uint64_t>>().swap(lip_hash_parts_);
    }
  }
  // The parts (and their LIP hashes) are gone; the table's arrays are charged by themselves.
  pool_->Release(MemoryKind::kBlob, reserved_bytes_);
  reserved_bytes_ = 0;
  return absl::OkStatus();
}

void JoinHashTable::LookUpDirect(const ColumnVector& keys, const SelectionVector* selection, uint32_t count,
                                 EntryRange* buckets) const {
  if (direct_key_width_ == 4) {
    LookUpDirectTyped<int32_t>(keys, selection, count, buckets);
  } else {
    LookUpDirectTyped<int64_t>(keys, selection, count, buckets);
  }
}

template <typename T>
void JoinHashTable::LookUpDirectTyped(const ColumnVector& keys, const SelectionVector* selection, uint32_t count,
                                      EntryRange* buckets) const {
  const T* values = keys.values<T>();
  const uint32_t* direct = direct_entries_.data();
  const uint64_t span = direct_entries_.size();
  const uint64_t min = static_cast<uint64_t>(key_min_);
  const bool nulls = keys.has_nulls();
  for (uint32_t s = 0; s < count; ++s) {
    const uint32_t row = selection != nullptr ? selection->rows[s] : s;
    const uint64_t offset = static_cast<uint64_t>(static_cast<int64_t>(values[row])) - min;
    uint32_t entry = offset < span ? direct[offset] : kNoDirectEntry;
    if (nulls && keys.IsNull(row)) entry = kNoDirectEntry;
    buckets[s] = EntryRange{entry, entry + static_cast<uint32_t>(entry != kNoDirectEntry)};  // empty: {e, e}
  }
}

}  // namespace tessera
