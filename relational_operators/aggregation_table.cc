#include "relational_operators/aggregation_table.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "catalog/column_statistics.h"
#include "catalog/text_conversion.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "expressions/vector_kernels.h"
#include "glog/logging.h"
#include "relational_operators/dense_group_index.h"
#include "relational_operators/key_hashing.h"
#include "relational_operators/vector_block_writer.h"
#include "storage/pool_array.h"

namespace tessera {

namespace {

constexpr size_t kSlotBytes = 32;
// The key of a scalar aggregate's one group (zero key words).
constexpr uint64_t kScalarKey[1] = {0};
constexpr uint32_t kMergePartitions = AggregationTable::kPartitions;
// While a table has at most this many groups, Update compares a key with each of them instead of hashing it.
constexpr uint32_t kScannedGroups = 8;
// How many look-ups ahead Update prefetches a hash slot.
constexpr uint32_t kLookupPrefetchDistance = 48;
// The merge partition of a group's hash (bits far from the ones that pick hash-table slots).
inline uint32_t MergePartition(uint64_t hash) { return static_cast<uint32_t>((hash >> 40) % kMergePartitions); }

// per aggregate call: 16 bytes of value, 8 of count / flags, 8 spare

struct Slot {
  int128 value;   // SUM / AVG (integers and decimals), MIN / MAX raw value, or a string / set index
  int64_t count;  // rows counted (COUNT, SUM/AVG non-NULL inputs, MIN/MAX: whether a value is set)
  int64_t spare;
};
static_assert(sizeof(Slot) == kSlotBytes);

double SlotDouble(const Slot& slot) {
  double d;
  std::memcpy(&d, &slot.value, sizeof(d));
  return d;
}
void SetSlotDouble(Slot& slot, double d) { std::memcpy(&slot.value, &d, sizeof(d)); }

// Widens a fixed-width physical value of an exact type to int128 (for SUM/AVG and ordering).
int128 ExactValue(const ColumnVector& v, uint32_t row) {
  const Type& type = v.type();
  switch (type.id()) {
    case TypeId::kInteger:
    case TypeId::kDate:
      return v.values<int32_t>()[row];
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
      return v.values<int64_t>()[row];
    case TypeId::kBoolean:
      return v.values<uint8_t>()[row];
    case TypeId::kDecimal:
      return type.IsWideDecimal() ? v.values<int128>()[row] : int128{v.values<int64_t>()[row]};
    default:
      return 0;
  }
}

void AppendKeyPart(const ColumnVector& v, uint32_t row, std::string* key) {
  if (v.IsNull(row)) {
    key->push_back('\0');
    return;
  }
  key->push_back('\1');
  const Type& type = v.type();
  if (type.IsString()) {
    std::string_view s = v.strings()[row];
    uint32_t size = static_cast<uint32_t>(s.size());
    key->append(reinterpret_cast<const char*>(&size), sizeof(size));
    key->append(s.data(), s.size());
    return;
  }
  if (type.id() == TypeId::kDouble) {  // -0.0 and 0.0 are one value (and one group)
    const double d = v.values<double>()[row] == 0.0 ? 0.0 : v.values<double>()[row];
    key->append(reinterpret_cast<const char*>(&d), sizeof(d));
    return;
  }
  const int width = type.FixedWidth();
  key->append(reinterpret_cast<const char*>(v.values<uint8_t>() + static_cast<size_t>(row) * width), width);
}

// Decodes one key column starting at `*p`.
Value DecodeKeyPart(const char** p, const Type& type) {
  const char flag = *(*p)++;
  if (flag == '\0') return Value::Null(type);
  if (type.IsString()) {
    uint32_t size;
    std::memcpy(&size, *p, sizeof(size));
    *p += sizeof(size);
    Value v = Value::String(std::string(*p, size), type);
    *p += size;
    return v;
  }
  const int width = type.FixedWidth();
  uint8_t raw[16] = {0};
  std::memcpy(raw, *p, width);
  *p += width;
  switch (type.id()) {
    case TypeId::kBoolean:
      return Value::Boolean(raw[0] != 0);
    case TypeId::kInteger: {
      int32_t v;
      std::memcpy(&v, raw, 4);
      return Value::Integer(v);
    }
    case TypeId::kDate: {
      int32_t v;
      std::memcpy(&v, raw, 4);
      return Value::Date(v);
    }
    case TypeId::kBigInt: {
      int64_t v;
      std::memcpy(&v, raw, 8);
      return Value::BigInt(v);
    }
    case TypeId::kTimestamp: {
      int64_t v;
      std::memcpy(&v, raw, 8);
      return Value::Timestamp(v);
    }
    case TypeId::kDouble: {
      double v;
      std::memcpy(&v, raw, 8);
      return Value::Double(v);
    }
    case TypeId::kDecimal: {
      if (type.IsWideDecimal()) {
        int128 v;
        std::memcpy(&v, raw, 16);
        return Value::Decimal(v, type);
      }
      int64_t v;
      std::memcpy(&v, raw, 8);
      return Value::Decimal(v, type);
    }
    case TypeId::kInterval: {
      Interval v;
      std::memcpy(&v, raw, 16);
      return Value::IntervalValue(v);
    }
    default:
      return Value::Null(type);
  }
}

}  // namespace

// Groups and their aggregate states for one worker (or the merged result). Not thread-safe.
//
// Each group is one row of a single growing buffer: [hash][key][states: one Slot per call], so that a new
// group costs no allocation of its own (the buffer doubles). The row buffer, the slot array and the merge
// partitions' group lists are PoolArrays of the table's buffer pool, so the table is charged to the pool (the
// query's account) exactly as it grows; they grow only in ReserveGroups, before a batch is folded in, so that
// inserting a group cannot fail and the hot loop has no growth checks. Serialized keys, MIN/MAX strings and
// DISTINCT sets stay on the heap (HeapBytes). When every group column is
// fixed-width or a string of a declared length up to kMaxInlineStringBytes, the key is stored in the row
// itself ("fixed keys"), as key_words_ zero-padded 64-bit words (per column a NULL flag byte, then the value,
// or a string's length byte and bytes: KeyColumn), built a vector at a time and compared word by word.
// Otherwise the row holds the offset and size of the serialized key (AppendKeyPart's form) in keys_. A table
// with fixed keys switches to serialized keys for good when a string does not fit (ConvertToSerializedKeys).
// How a quantile keeps the values of a group: numbers, dates and timestamps in typed arrays (appended a vector
// at a time, no allocation per value beyond the arrays' doubling, compared as numbers when the group is
// written); other types (strings, booleans, intervals) and string_agg as serialized values (AppendKeyPart).
enum class ValueListKind { kSerialized, kInt64, kDouble, kInt128 };

ValueListKind ListKindOf(const AggregationSpec::Call& call) {
  if (call.distinct || (call.kind != AggregateKind::kQuantileCont && call.kind != AggregateKind::kQuantileDisc)) {
    return ValueListKind::kSerialized;
  }
  const Type& type = call.argument->result_type;
  switch (type.id()) {
    case TypeId::kInteger:
    case TypeId::kDate:
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
      return ValueListKind::kInt64;
    case TypeId::kDouble:
      return ValueListKind::kDouble;
    case TypeId::kDecimal:
      return type.IsWideDecimal() ? ValueListKind::kInt128 : ValueListKind::kInt64;
    default:
      return ValueListKind::kSerialized;
  }
}

class GroupTable {
 public:
  // `pool` (not owned) must outlive the table.
  GroupTable(const AggregationSpec& spec, BufferPool* pool)
      : spec_(spec),
        pool_(pool),
        slots_(pool),
        rows_(pool),
        group_of_row_(kVectorSize),
        hashes_(kVectorSize),
        lookup_positions_(kVectorSize) {
    lookup_rows_.rows.resize(kVectorSize);
    for (PartitionList& list : partition_groups_) list.groups = PoolArray<uint32_t>(pool);
    fixed_keys_ = true;
    size_t key_bytes = 0;
    for (const auto& g : spec.group_by) {
      const Type& type = g->result_type;
      KeyColumn column{key_bytes, 0, type.IsString()};
      if (type.IsString() && type.length() > 0 && type.length() <= kMaxInlineStringBytes) {
        column.width = 1 + type.length();  // a length byte, then the bytes (a value with more is handled apart)
      } else if (!type.IsString() && type.id() != TypeId::kNull && type.FixedWidth() > 0) {
        column.width = type.FixedWidth();
      } else {
        fixed_keys_ = false;
      }
      key_columns_.push_back(column);
      key_bytes += 1 + column.width;
    }
    key_words_ = fixed_keys_ ? (key_bytes + 7) / 8 : kSerializedKeyWords;
    std::vector<Type> key_types;
    for (const auto& g : spec.group_by) key_types.push_back(g->result_type);
    if (DenseGroupIndex::Applies(key_types)) dense_index_ = std::make_unique<DenseGroupIndex>(key_types.size());
    for (const AggregationSpec::Call& call : spec.calls) list_kinds_.push_back(ListKindOf(call));
    SetRowLayout();
    if (fixed_keys_) batch_keys_.resize(static_cast<size_t>(kVectorSize) * key_words_ + 1);
  }

  // Where a group column's part of a fixed key lies: a NULL flag byte at `offset`, then `width` bytes (for an
  // inline string: its length byte and up to width - 1 bytes, zero-padded).
  struct KeyColumn {
    size_t offset;
    int width;
    bool string;
  };
  const std::vector<KeyColumn>& key_columns() const { return key_columns_; }
  static bool SameWords(const uint64_t* a, const uint64_t* b, size_t words) {
    for (size_t w = 0; w < words; ++w) {
      if (a[w] != b[w]) return false;
    }
    return true;
  }

  // Switches to serialized keys, re-encoding the groups' keys (used when a string does not fit its inline
  // width, and by the merge to bring tables to one key form). Group indexes, hashes and states stay as they
  // are. Errors: ResourceExhausted (the table is then unchanged).
  absl::Status ConvertToSerializedKeys() {
    if (!fixed_keys_) return absl::OkStatus();
    const size_t old_row_bytes = row_bytes_, old_state_offset = state_offset_;
    // The same capacity: room reserved by ReserveGroups stays reserved.
    const size_t capacity = std::max<size_t>(row_capacity_, 64);
    TESSERA_ASSIGN_OR_RETURN(PoolArray<uint8_t> rows,
                             PoolArray<uint8_t>::Allocate(pool_, capacity * RowBytes(kSerializedKeyWords)));
    PoolArray<uint8_t> old_rows = std::move(rows_);
    rows_ = std::move(rows);
    row_capacity_ = capacity;
    fixed_keys_ = false;
    key_words_ = kSerializedKeyWords;
    SetRowLayout();
    std::string key;
    for (uint32_t g = 0; g < group_count_; ++g) {
      const uint8_t* old_row = old_rows.data() + static_cast<size_t>(g) * old_row_bytes;
      key.clear();
      SerializeFixedKey(old_row + sizeof(uint64_t), &key);
      uint64_t* words = RowWords(g);
      std::memcpy(words, old_row, sizeof(uint64_t));  // the hash
      words[1] = keys_.size();
      words[2] = key.size();
      keys_.append(key);
      std::memcpy(Row(g) + state_offset_, old_row + old_state_offset, spec_.calls.size() * kSlotBytes);
    }
    return absl::OkStatus();
  }

  // Appends group `group`'s key in serialized form (the form of AppendKeyPart) to `out`.
  void SerializeKey(uint32_t group, std::string* out) const {
    if (fixed_keys_) {
      SerializeFixedKey(reinterpret_cast<const uint8_t*>(key_words(group)), out);
    } else {
      out->append(key(group));
    }
  }

  const AggregationSpec& spec() const { return spec_; }
  // The call whose state call `call` reads (AggregationTable::StateSources).
  size_t state_source(size_t call) const { return state_sources_[call]; }
  bool fixed_keys() const { return fixed_keys_; }
  // The direct index of tiny-domain keys (dense_group_index.h) in front of the lookups; null when the keys do
  // not allow one or it was dropped (a column had too many values).
  DenseGroupIndex* dense_index() { return dense_index_.get(); }
  void DropDenseIndex() { dense_index_.reset(); }
  size_t key_words() const { return key_words_; }
  // Per-batch scratch of Update, kept here so that it allocates once per table.
  uint32_t* group_of_row() { return group_of_row_.data(); }
  uint64_t* hashes() { return hashes_.data(); }
  // The rows of a batch to look up by hash, and the position (in the batch's selection) of each.
  SelectionVector& lookup_rows() { return lookup_rows_; }
  uint32_t* lookup_positions() { return lookup_positions_.data(); }
  uint64_t* batch_keys() { return batch_keys_.data(); }
  std::string& key_buffer() { return key_buffer_; }
  std::string& previous_key_buffer() { return previous_key_buffer_; }

  size_t group_count() const { return group_count_; }
  Slot* state(uint32_t group) { return reinterpret_cast<Slot*>(Row(group) + state_offset_); }
  uint64_t hash(uint32_t group) const { return RowWords(group)[0]; }
  // Fixed keys only: the key's words.
  const uint64_t* key_words(uint32_t group) const { return RowWords(group) + 1; }
  // Serialized keys: the key. Fixed keys: the key's words as bytes, which are the serialized key followed by
  // zero padding when no column is an inline string (WriteColumns relies on that).
  std::string_view key(uint32_t group) const {
    const uint64_t* words = RowWords(group) + 1;
    if (fixed_keys_) return std::string_view(reinterpret_cast<const char*>(words), key_words_ * sizeof(uint64_t));
    return std::string_view(keys_.data() + words[0], words[1]);
  }
  std::vector<std::string>& strings() { return strings_; }
  std::vector<std::unordered_set<std::string>>& sets() { return sets_; }
  std::vector<std::vector<std::string>>& lists() { return lists_; }
  // The typed value arrays of quantiles (ValueListKind); slot.value indexes the one of the call's kind.
  std::vector<std::vector<int64_t>>& int64_lists() { return int64_lists_; }
  std::vector<std::vector<double>>& double_lists() { return double_lists_; }
  std::vector<std::vector<int128>>& int128_lists() { return int128_lists_; }
  template <typename T>
  std::vector<std::vector<T>>& typed_lists() {
    if constexpr (std::is_same_v<T, int64_t>) return int64_lists_;
    else if constexpr (std::is_same_v<T, double>) return double_lists_;
    else return int128_lists_;
  }
  ValueListKind list_kind(size_t call) const { return list_kinds_[call]; }
  // Counts the bytes by which a typed value array grew (HeapBytes).
  void CountListGrowth(size_t bytes) { heap_value_bytes_ += bytes; }
  std::vector<DistinctSketch>& sketches() { return sketches_; }
  // A reusable buffer for serializing one value (DISTINCT), so the hot loop does not allocate.
  std::string& scratch() { return scratch_; }
  // Makes room for `groups` more groups (rows, hash slots at a load of at most one half, partition lists):
  // up to that many FindOrInsert* calls then neither allocate nor fail. `key_bytes` more serialized key bytes
  // are reserved on the heap (serialized keys only), so that filling a table of known size (the merge) does
  // not grow it step by step. Errors: ResourceExhausted (the table stays valid, possibly partly grown).
  absl::Status ReserveGroups(size_t groups, size_t key_bytes = 0) {
    const size_t needed = group_count_ + groups;
    TESSERA_RETURN_IF_ERROR(ReserveRows(needed));
    for (PartitionList& list : partition_groups_) {
      if (list.size + groups <= list.groups.size()) continue;
      TESSERA_RETURN_IF_ERROR(list.groups.Resize(std::max({list.groups.size() * 2, list.size + groups, size_t{64}})));
    }
    if (!fixed_keys_ && key_bytes > 0) keys_.reserve(keys_.size() + key_bytes);
    size_t slots = std::max<size_t>(slots_.size(), kMinSlots);
    while (needed * 2 > slots) slots *= 2;
    if (slots != slots_.size()) TESSERA_RETURN_IF_ERROR(Rehash(slots));
    return absl::OkStatus();
  }

  // AggregationTable::Presize.
  absl::Status Presize(size_t groups) {
    if (group_count_ > 0 || groups <= row_capacity_) return absl::OkStatus();
    TESSERA_ASSIGN_OR_RETURN(rows_, PoolArray<uint8_t>::Allocate(pool_, groups * row_bytes_));
    row_capacity_ = groups;
    // Hash bits spread the groups evenly over the merge partitions; a list that gets more grows as usual.
    const size_t per_partition = groups / kMergePartitions + groups / (4 * kMergePartitions) + 64;
    for (PartitionList& list : partition_groups_) {
      if (list.groups.size() < per_partition) TESSERA_RETURN_IF_ERROR(list.groups.Resize(per_partition));
    }
    size_t slots = std::max<size_t>(slots_.size(), kMinSlots);
    while (groups * 2 > slots) slots *= 2;
    if (slots != slots_.size()) TESSERA_RETURN_IF_ERROR(Rehash(slots));
    return absl::OkStatus();
  }

  // Fixed keys: `key` points at key_words() words.
  uint32_t FindOrInsertFixed(const uint64_t* key, uint64_t hash) {
    return FindOrInsertWith(
        hash, [&](uint32_t group) { return SameWords(key_words(group), key, key_words_); },
        [&](uint32_t group) {
          if (key_words_ > 0) std::memcpy(RowWords(group) + 1, key, key_words_ * sizeof(uint64_t));
        });
  }
  // Serialized keys (not fixed_keys()).
  uint32_t FindOrInsertSerialized(std::string_view key, uint64_t hash) {
    return FindOrInsertWith(
        hash, [&](uint32_t group) { return this->key(group) == key; },
        [&](uint32_t group) {
          uint64_t* words = RowWords(group) + 1;
          words[0] = keys_.size();
          words[1] = key.size();
          keys_.append(key.data(), key.size());
        });
  }
  static constexpr uint32_t kNotFound = UINT32_MAX;
  // The group with this key, or kNotFound; never inserts (so threads may look up concurrently while nobody
  // inserts). Fixed keys: key_words() words; serialized keys: the bytes.
  uint32_t FindFixed(const uint64_t* key, uint64_t hash) const {
    return FindWith(hash, [&](uint32_t group) { return SameWords(key_words(group), key, key_words_); });
  }
  uint32_t FindSerialized(std::string_view key, uint64_t hash) const {
    return FindWith(hash, [&](uint32_t group) { return this->key(group) == key; });
  }
  // The groups whose hash falls into merge partition `partition`, in insertion order.
  std::span<const uint32_t> groups_in_partition(uint32_t partition) const {
    const PartitionList& list = partition_groups_[partition];
    return std::span<const uint32_t>(list.groups.data(), list.size);
  }
  // A hint for reading group `group` a little later (its hash, key and states: up to two cache lines).
  void PrefetchGroup(uint32_t group) const {
    const uint8_t* row = rows_.data() + static_cast<size_t>(group) * row_bytes_;
    __builtin_prefetch(row);
    __builtin_prefetch(row + row_bytes_ - 1);
  }
  // A hint for a FindOrInsert*(_, hash) a little later.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]); }

  // Bytes held on the heap, outside the pool: serialized keys, MIN/MAX strings and DISTINCT sets (an
  // estimate for the last two: their bytes plus a per-entry overhead).
  size_t HeapBytes() const {
    return keys_.size() + strings_.capacity() * sizeof(std::string) + sets_.capacity() * kSetBytes +
           lists_.capacity() * sizeof(std::vector<std::string>) + sketches_.capacity() * sizeof(DistinctSketch) +
           (int64_lists_.capacity() + double_lists_.capacity() + int128_lists_.capacity()) *
               sizeof(std::vector<int64_t>) +
           heap_value_bytes_;
  }
  // Counts `bytes` of a value just stored in a MIN/MAX string or a DISTINCT set (HeapBytes).
  void CountHeapValue(size_t bytes) { heap_value_bytes_ += bytes + kHeapEntryOverheadBytes; }

 private:
  // An empty std::unordered_set, and the assumed allocator overhead of one heap entry (node or buffer).
  static constexpr size_t kSetBytes = sizeof(std::unordered_set<std::string>);
  static constexpr size_t kHeapEntryOverheadBytes = 48;
  // Serialized keys: the key's offset in keys_ and its size.
  static constexpr size_t kSerializedKeyWords = 2;
  // The smallest slot array (a power of two).
  static constexpr size_t kMinSlots = 256;

  // A slot holds (group + 1) in its low 32 bits and the top 32 bits of the group's hash above them, so that a
  // probe skips slots of other groups without reading the group (0 = empty). `equals(group)` compares a
  // group's key with the one looked for (after the hashes matched); `fill(group)` stores the key of a new
  // group.
  template <typename Equals, typename Fill>
  uint32_t FindOrInsertWith(uint64_t hash, Equals equals, Fill fill) {
    const size_t mask = slots_.size() - 1;
    const uint64_t tag = hash & 0xffffffff00000000ULL;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const uint64_t slot = slots_[i];
      if (slot == 0) {
        const uint32_t group = AddGroup(hash, i);
        fill(group);
        return group;
      }
      if ((slot & 0xffffffff00000000ULL) != tag) continue;
      const uint32_t group = static_cast<uint32_t>(slot) - 1;
      if (this->hash(group) == hash && equals(group)) return group;
    }
  }

  template <typename Equals>
  uint32_t FindWith(uint64_t hash, Equals equals) const {
    const size_t mask = slots_.size() - 1;
    const uint64_t tag = hash & 0xffffffff00000000ULL;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const uint64_t slot = slots_[i];
      if (slot == 0) return kNotFound;
      if ((slot & 0xffffffff00000000ULL) != tag) continue;
      const uint32_t group = static_cast<uint32_t>(slot) - 1;
      if (this->hash(group) == hash && equals(group)) return group;
    }
  }

  // A row: the hash, `key_words` key words, the states (16-byte aligned).
  static size_t StateOffset(size_t key_words) { return (sizeof(uint64_t) * (1 + key_words) + 15) / 16 * 16; }
  size_t RowBytes(size_t key_words) const { return StateOffset(key_words) + spec_.calls.size() * kSlotBytes; }
  void SetRowLayout() {
    state_offset_ = StateOffset(key_words_);
    row_bytes_ = RowBytes(key_words_);
  }

  // `key` holds a fixed key (key_columns_ layout); appends its serialized form.
  void SerializeFixedKey(const uint8_t* key, std::string* out) const {
    for (const KeyColumn& column : key_columns_) {
      const uint8_t* part = key + column.offset;
      if (part[0] == 0) {
        out->push_back('\0');
        continue;
      }
      out->push_back('\1');
      if (column.string) {
        const uint32_t size = part[1];
        out->append(reinterpret_cast<const char*>(&size), sizeof(size));
        out->append(reinterpret_cast<const char*>(part + 2), size);
      } else {
        out->append(reinterpret_cast<const char*>(part + 1), column.width);
      }
    }
  }

  uint8_t* Row(uint32_t group) { return rows_.data() + static_cast<size_t>(group) * row_bytes_; }
  uint64_t* RowWords(uint32_t group) { return reinterpret_cast<uint64_t*>(Row(group)); }
  const uint64_t* RowWords(uint32_t group) const {
    return reinterpret_cast<const uint64_t*>(rows_.data() + static_cast<size_t>(group) * row_bytes_);
  }

  absl::Status ReserveRows(size_t groups) {
    if (groups <= row_capacity_) return absl::OkStatus();
    size_t capacity = std::max<size_t>(row_capacity_ * 2, 64);
    while (capacity < groups) capacity *= 2;
    // A new buffer and a copy rather than PoolArray::Resize (remapping the pages into a fresh, larger slot):
    // the pool's slot cache hands back slots of a size freed before with their pages already faulted in, so a
    // query that grows its table through the sizes of an earlier one copies into warm memory instead of
    // zeroing fresh pages, which cost more (TPC-H Q18's aggregation, busy: 496 ms with the heap's realloc,
    // 716 ms with Resize). The pool aligns to 64 bytes (int128 states).
    TESSERA_ASSIGN_OR_RETURN(PoolArray<uint8_t> grown, PoolArray<uint8_t>::Allocate(pool_, capacity * row_bytes_));
    if (group_count_ > 0) std::memcpy(grown.data(), rows_.data(), group_count_ * row_bytes_);
    rows_ = std::move(grown);
    row_capacity_ = capacity;
    return absl::OkStatus();
  }

  // Appends a group with `hash` (its key is the caller's to fill) and points slot `slot` at it. ReserveGroups
  // made room for it.
  uint32_t AddGroup(uint64_t hash, size_t slot) {
    const uint32_t group = static_cast<uint32_t>(group_count_);
    DCHECK_LT(group_count_, row_capacity_);
    ++group_count_;
    RowWords(group)[0] = hash;
    std::memset(Row(group) + state_offset_, 0, spec_.calls.size() * kSlotBytes);
    for (size_t c = 0; c < spec_.calls.size(); ++c) {
      const AggregationSpec::Call& call = spec_.calls[c];
      if (call.distinct) {
        state(group)[c].value = static_cast<int128>(sets_.size());
        sets_.emplace_back();
      } else if (call.kind == AggregateKind::kApproxCountDistinct) {
        state(group)[c].value = static_cast<int128>(sketches_.size());
        sketches_.emplace_back();
      } else if (HasContainerState(call)) {
        switch (list_kinds_[c]) {
          case ValueListKind::kSerialized:
            state(group)[c].value = static_cast<int128>(lists_.size());
            lists_.emplace_back();
            break;
          case ValueListKind::kInt64:
            state(group)[c].value = static_cast<int128>(int64_lists_.size());
            int64_lists_.emplace_back();
            break;
          case ValueListKind::kDouble:
            state(group)[c].value = static_cast<int128>(double_lists_.size());
            double_lists_.emplace_back();
            break;
          case ValueListKind::kInt128:
            state(group)[c].value = static_cast<int128>(int128_lists_.size());
            int128_lists_.emplace_back();
            break;
        }
      }
    }
    slots_[slot] = (hash & 0xffffffff00000000ULL) | (group + 1);
    PartitionList& list = partition_groups_[MergePartition(hash)];
    DCHECK_LT(list.size, list.groups.size());
    list.groups[list.size++] = group;
    DCHECK_LE(group_count_ * 2, slots_.size());
    return group;
  }

  absl::Status Rehash(size_t slot_count) {
    TESSERA_ASSIGN_OR_RETURN(PoolArray<uint64_t> bigger, PoolArray<uint64_t>::AllocateZeroed(pool_, slot_count));
    size_t mask = bigger.size() - 1;
    for (uint32_t g = 0; g < group_count_; ++g) {
      const uint64_t hash = this->hash(g);
      size_t i = hash & mask;
      while (bigger[i] != 0) i = (i + 1) & mask;
      bigger[i] = (hash & 0xffffffff00000000ULL) | (g + 1);
    }
    slots_ = std::move(bigger);
    return absl::OkStatus();
  }

  // Strings of a declared length up to this many bytes are stored in fixed keys.
  static constexpr uint32_t kMaxInlineStringBytes = 32;

  const AggregationSpec& spec_;
  const std::vector<size_t> state_sources_ = AggregationTable::StateSources(spec_);
  BufferPool* const pool_;
  std::vector<KeyColumn> key_columns_;
  std::unique_ptr<DenseGroupIndex> dense_index_;
  bool fixed_keys_;
  size_t key_words_;
  size_t state_offset_;
  size_t row_bytes_;
  PoolArray<uint64_t> slots_;  // empty until the first ReserveGroups, then a power of two
  PoolArray<uint8_t> rows_;    // row_capacity_ rows of row_bytes_
  size_t row_capacity_ = 0;
  size_t group_count_ = 0;
  // The groups of one merge partition, in insertion order: the first `size` of `groups`.
  struct PartitionList {
    PoolArray<uint32_t> groups;
    size_t size = 0;
  };
  PartitionList partition_groups_[kMergePartitions];
  size_t heap_value_bytes_ = 0;                        // CountHeapValue
  std::string keys_;                                   // serialized keys (not fixed_keys_)
  std::vector<std::string> strings_;                   // MIN/MAX of strings: slot.value indexes here
  std::vector<std::unordered_set<std::string>> sets_;  // DISTINCT: slot.value indexes here
  std::vector<std::vector<std::string>> lists_;        // string_agg, other quantiles: slot.value indexes here
  std::vector<ValueListKind> list_kinds_;              // per call
  std::vector<std::vector<int64_t>> int64_lists_;      // quantiles of ValueListKind::kInt64: slot.value indexes here
  std::vector<std::vector<double>> double_lists_;      // ... kDouble
  std::vector<std::vector<int128>> int128_lists_;      // ... kInt128
  std::vector<DistinctSketch> sketches_;               // approx_count_distinct: slot.value indexes here
  std::string scratch_;
  std::vector<uint32_t> group_of_row_;
  std::vector<uint64_t> hashes_;
  SelectionVector lookup_rows_;
  std::vector<uint32_t> lookup_positions_;
  std::vector<uint64_t> batch_keys_;  // fixed keys of one batch, key_words_ per selected row
  std::string key_buffer_;
  std::string previous_key_buffer_;
};

namespace {

// Folds row `row` of `argument` (non-NULL) into `slot` for `call`.
void UpdateSlot(const AggregationSpec::Call& call, GroupTable& table, Slot& slot, const ColumnVector& argument,
                uint32_t row) {
  const Type& type = argument.type();
  if (call.distinct) {
    std::string& key = table.scratch();
    key.clear();
    AppendKeyPart(argument, row, &key);
    auto& set = table.sets()[static_cast<size_t>(slot.value)];
    if (set.find(key) == set.end()) {  // copies only values not seen before
      set.insert(key);
      table.CountHeapValue(key.size());
    }
    return;
  }
  switch (call.kind) {
    case AggregateKind::kQuantileCont:
    case AggregateKind::kQuantileDisc:
    case AggregateKind::kStringAgg: {
      DCHECK(ListKindOf(call) == ValueListKind::kSerialized);  // typed values: AppendQuantileValues
      std::vector<std::string>& list = table.lists()[static_cast<size_t>(slot.value)];
      list.emplace_back();
      AppendKeyPart(argument, row, &list.back());
      table.CountHeapValue(list.back().size());
      return;
    }
    case AggregateKind::kApproxCountDistinct: {
      std::string& key = table.scratch();
      key.clear();
      AppendKeyPart(argument, row, &key);
      table.sketches()[static_cast<size_t>(slot.value)].AddHash(HashString(key));
      return;
    }
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
      ++slot.count;
      return;
    case AggregateKind::kSum:
    case AggregateKind::kAvg:
      if (type.id() == TypeId::kDouble) {
        SetSlotDouble(slot, SlotDouble(slot) + argument.values<double>()[row]);
      } else {
        slot.value += ExactValue(argument, row);
      }
      ++slot.count;
      return;
    case AggregateKind::kMin:
    case AggregateKind::kMax: {
      const bool is_min = call.kind == AggregateKind::kMin;
      if (type.IsString()) {
        std::string_view s = argument.strings()[row];
        if (slot.count == 0) {
          slot.value = static_cast<int128>(table.strings().size());
          table.strings().emplace_back(s);
          table.CountHeapValue(s.size());
          slot.count = 1;
        } else {
          std::string& current = table.strings()[static_cast<size_t>(slot.value)];
          if (is_min ? s < current : s > current) {
            if (s.size() > current.capacity()) table.CountHeapValue(s.size() - current.capacity());
            current.assign(s.data(), s.size());
          }
        }
      } else if (type.id() == TypeId::kDouble) {
        double d = argument.values<double>()[row];
        if (slot.count == 0 || (is_min ? d < SlotDouble(slot) : d > SlotDouble(slot))) SetSlotDouble(slot, d);
        slot.count = 1;
      } else {
        int128 v = ExactValue(argument, row);
        if (slot.count == 0 || (is_min ? v < slot.value : v > slot.value)) slot.value = v;
        slot.count = 1;
      }
      return;
    }
  }
}

// Moves the typed values of `source` (in `from`) to the end of those of `target` (in `into`).
template <typename T>
void MoveValues(GroupTable& into, const Slot& target, GroupTable& from, const Slot& source) {
  std::vector<T>& target_values = into.typed_lists<T>()[static_cast<size_t>(target.value)];
  std::vector<T>& source_values = from.typed_lists<T>()[static_cast<size_t>(source.value)];
  if (target_values.empty()) {
    target_values.swap(source_values);
    return;
  }
  target_values.insert(target_values.end(), source_values.begin(), source_values.end());
  std::vector<T>().swap(source_values);
}

void MergeSlot(const AggregationSpec::Call& call, const Type& argument_type, GroupTable& into, Slot& target,
               GroupTable& from, const Slot& source) {
  if (call.distinct) {
    auto& target_set = into.sets()[static_cast<size_t>(target.value)];
    for (const std::string& v : from.sets()[static_cast<size_t>(source.value)]) target_set.insert(v);
    return;
  }
  switch (call.kind) {
    case AggregateKind::kQuantileCont:
    case AggregateKind::kQuantileDisc:
      switch (ListKindOf(call)) {
        case ValueListKind::kInt64:
          return MoveValues<int64_t>(into, target, from, source);
        case ValueListKind::kDouble:
          return MoveValues<double>(into, target, from, source);
        case ValueListKind::kInt128:
          return MoveValues<int128>(into, target, from, source);
        case ValueListKind::kSerialized:
          break;
      }
      [[fallthrough]];
    case AggregateKind::kStringAgg: {
      std::vector<std::string>& target_list = into.lists()[static_cast<size_t>(target.value)];
      std::vector<std::string>& source_list = from.lists()[static_cast<size_t>(source.value)];
      target_list.insert(target_list.end(), std::make_move_iterator(source_list.begin()),
                         std::make_move_iterator(source_list.end()));
      source_list.clear();
      return;
    }
    case AggregateKind::kApproxCountDistinct:
      into.sketches()[static_cast<size_t>(target.value)].Merge(from.sketches()[static_cast<size_t>(source.value)]);
      return;
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
      target.count += source.count;
      return;
    case AggregateKind::kSum:
    case AggregateKind::kAvg:
      if (argument_type.id() == TypeId::kDouble) {
        SetSlotDouble(target, SlotDouble(target) + SlotDouble(source));
      } else {
        target.value += source.value;
      }
      target.count += source.count;
      return;
    case AggregateKind::kMin:
    case AggregateKind::kMax: {
      if (source.count == 0) return;
      const bool is_min = call.kind == AggregateKind::kMin;
      if (argument_type.IsString()) {
        const std::string& s = from.strings()[static_cast<size_t>(source.value)];
        if (target.count == 0) {
          target.value = static_cast<int128>(into.strings().size());
          into.strings().push_back(s);
          target.count = 1;
        } else {
          std::string& current = into.strings()[static_cast<size_t>(target.value)];
          if (is_min ? s < current : s > current) current = s;
        }
      } else if (argument_type.id() == TypeId::kDouble) {
        double d = SlotDouble(source);
        if (target.count == 0 || (is_min ? d < SlotDouble(target) : d > SlotDouble(target))) SetSlotDouble(target, d);
        target.count = 1;
      } else {
        if (target.count == 0 || (is_min ? source.value < target.value : source.value > target.value)) {
          target.value = source.value;
        }
        target.count = 1;
      }
      return;
    }
  }
}

// quantile_disc's position among n > 0 values: ceil(f * n) - 1, exact for a DECIMAL fraction (DuckDB's rule).
int64_t DiscretePosition(const Value& fraction, int64_t n) {
  int64_t position = 0;
  if (fraction.type().id() == TypeId::kDecimal) {
    const int128 scale = PowerOfTen(fraction.type().scale());
    const int128 scaled = fraction.AsInt128() * n;
    position = static_cast<int64_t>((scaled + scale - 1) / scale) - 1;
  } else {
    position = static_cast<int64_t>(std::ceil(fraction.AsDouble() * static_cast<double>(n))) - 1;
  }
  return std::clamp<int64_t>(position, 0, n - 1);
}

// quantile_cont's rank f * (n - 1) among n > 0 values and the positions around it.
struct ContinuousRank {
  double rank;
  int64_t lower;
  int64_t upper;
};
ContinuousRank ContinuousRankOf(const Value& fraction, int64_t n) {
  const double rank = fraction.AsDouble() * static_cast<double>(n - 1);
  return {rank, std::clamp<int64_t>(static_cast<int64_t>(std::floor(rank)), 0, n - 1),
          std::clamp<int64_t>(static_cast<int64_t>(std::ceil(rank)), 0, n - 1)};
}

// Orders doubles as Value::Compare does: NaN above every number.
inline bool ValueLess(double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; }
inline bool ValueLess(int64_t a, int64_t b) { return a < b; }
inline bool ValueLess(int128 a, int128 b) { return a < b; }

// A quantile over a group's typed values (ValueListKind; reordered in place), as FinalizeList computes it.
template <typename T>
Value TypedQuantile(const AggregationSpec::Call& call, const Type& argument_type, std::vector<T>& values) {
  const Type& result = call.result_type;
  if (values.empty()) return Value::Null(result);
  const int64_t n = static_cast<int64_t>(values.size());
  const bool descending = call.descending;
  auto before = [descending](T a, T b) { return descending ? ValueLess(b, a) : ValueLess(a, b); };
  auto nth = [&](int64_t position) {
    std::nth_element(values.begin(), values.begin() + position, values.end(), before);
    return values[position];
  };
  auto typed_value = [&](T v) {
    if constexpr (std::is_same_v<T, double>) {
      return Value::Double(v);
    } else {
      return Value::FromExact(v, argument_type);
    }
  };
  if (call.kind == AggregateKind::kQuantileDisc) return typed_value(nth(DiscretePosition(call.fraction, n)));
  const ContinuousRank at = ContinuousRankOf(call.fraction, n);
  const T low = nth(at.lower);  // then the next order statistic is the least of the values after it
  const T high = at.upper == at.lower ? low : *std::min_element(values.begin() + at.upper, values.end(), before);
  if constexpr (!std::is_same_v<T, double>) {
    if (result.id() == TypeId::kDecimal) {
      // On the unscaled values, truncated toward zero (DuckDB: the median of 1.25 and 2.50 is 1.87).
      const double step = static_cast<double>(static_cast<int128>(high) - static_cast<int128>(low)) *
                          (at.rank - static_cast<double>(at.lower));
      if (step == 0) return Value::Decimal(low, result);
      return Value::Decimal(static_cast<int128>(static_cast<double>(low) + step), result);
    }
  }
  const double low_double = static_cast<double>(low);
  return Value::Double(at.lower == at.upper ? low_double
                                            : low_double + (static_cast<double>(high) - low_double) *
                                                               (at.rank - static_cast<double>(at.lower)));
}

// The result of a quantile or string_agg over a group's serialized values (AppendKeyPart's form, non-NULL).
absl::StatusOr<Value> FinalizeList(const AggregationSpec::Call& call, const Type& argument_type,
                                   const std::vector<std::string>& values) {
  const Type& result = call.result_type;
  if (values.empty()) return Value::Null(result);
  std::vector<Value> decoded;
  decoded.reserve(values.size());
  for (const std::string& serialized : values) {
    const char* p = serialized.data();
    decoded.push_back(DecodeKeyPart(&p, argument_type));
  }
  const int64_t n = static_cast<int64_t>(decoded.size());
  const bool descending = call.descending;
  auto before = [descending](const Value& a, const Value& b) {
    return descending ? b.Compare(a) < 0 : a.Compare(b) < 0;
  };
  if (call.kind == AggregateKind::kStringAgg) {
    if (call.ordered) std::stable_sort(decoded.begin(), decoded.end(), before);
    std::string text;
    for (int64_t i = 0; i < n; ++i) {
      if (i > 0) text += call.separator;
      text += decoded[i].AsString();
    }
    return Value::String(std::move(text), result);
  }
  // Quantiles need one or two order statistics, not a sorted group: nth_element is linear.
  auto nth = [&](int64_t position) -> const Value& {
    std::nth_element(decoded.begin(), decoded.begin() + position, decoded.end(), before);
    return decoded[position];
  };
  if (call.kind == AggregateKind::kQuantileDisc) return nth(DiscretePosition(call.fraction, n));
  // Continuous: interpolate between the values around f * (n - 1).
  const auto [rank, lower, upper] = ContinuousRankOf(call.fraction, n);
  nth(lower);  // then the next order statistic is the least of the values after it
  if (upper != lower) {
    std::iter_swap(decoded.begin() + upper, std::min_element(decoded.begin() + upper, decoded.end(), before));
  }
  if (result.id() == TypeId::kDecimal) {
    // On the unscaled values, truncated toward zero (DuckDB: the median of 1.25 and 2.50 is 1.87).
    const int128 low = decoded[lower].AsInt128();
    const double step = static_cast<double>(decoded[upper].AsInt128() - low) * (rank - static_cast<double>(lower));
    if (step == 0) return Value::Decimal(low, result);
    return Value::Decimal(static_cast<int128>(static_cast<double>(low) + step), result);
  }
  const double low = decoded[lower].AsDouble();
  return Value::Double(lower == upper ? low : low + (decoded[upper].AsDouble() - low) * (rank - lower));
}

absl::StatusOr<Value> FinalizeSlot(const AggregationSpec::Call& call, const Type& argument_type, GroupTable& table,
                                   const Slot& slot) {
  const Type& result = call.result_type;
  if (call.distinct) {
    const auto& set = table.sets()[static_cast<size_t>(slot.value)];
    if (call.kind == AggregateKind::kCount) return Value::BigInt(static_cast<int64_t>(set.size()));
    // SUM / AVG (DISTINCT x) (Create rejects the others): each distinct value folded once into a plain state.
    AggregationSpec::Call plain;
    plain.kind = call.kind;
    plain.result_type = call.result_type;
    Slot folded{};
    for (const std::string& serialized : set) {
      const char* p = serialized.data();
      const Value value = DecodeKeyPart(&p, argument_type);
      if (argument_type.id() == TypeId::kDouble) {
        SetSlotDouble(folded, SlotDouble(folded) + value.AsDouble());
      } else {
        folded.value += value.AsInt128();
      }
      ++folded.count;
    }
    return FinalizeSlot(plain, argument_type, table, folded);
  }
  switch (call.kind) {
    case AggregateKind::kQuantileCont:
    case AggregateKind::kQuantileDisc:
      switch (ListKindOf(call)) {
        case ValueListKind::kInt64:
          return TypedQuantile(call, argument_type, table.int64_lists()[static_cast<size_t>(slot.value)]);
        case ValueListKind::kDouble:
          return TypedQuantile(call, argument_type, table.double_lists()[static_cast<size_t>(slot.value)]);
        case ValueListKind::kInt128:
          return TypedQuantile(call, argument_type, table.int128_lists()[static_cast<size_t>(slot.value)]);
        case ValueListKind::kSerialized:
          break;
      }
      return FinalizeList(call, argument_type, table.lists()[static_cast<size_t>(slot.value)]);
    case AggregateKind::kStringAgg:
      return FinalizeList(call, argument_type, table.lists()[static_cast<size_t>(slot.value)]);
    case AggregateKind::kApproxCountDistinct:
      return Value::BigInt(table.sketches()[static_cast<size_t>(slot.value)].Estimate());
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
      return Value::BigInt(slot.count);
    case AggregateKind::kSum:
      if (slot.count == 0) return Value::Null(result);
      if (argument_type.id() == TypeId::kDouble) return Value::Double(SlotDouble(slot));
      if (result.id() == TypeId::kBigInt) {
        if (slot.value > INT64_MAX || slot.value < INT64_MIN)
          return absl::OutOfRangeError("SUM out of range for BIGINT");
        return Value::BigInt(static_cast<int64_t>(slot.value));
      }
      if (result.id() == TypeId::kDecimal) {
        int128 v = slot.value;
        int scale_up = result.scale() - (argument_type.id() == TypeId::kDecimal ? argument_type.scale() : 0);
        if (scale_up > 0) v *= PowerOfTen(scale_up);
        return Value::Decimal(v, result);
      }
      return Value::Double(static_cast<double>(slot.value));
    case AggregateKind::kAvg: {
      if (slot.count == 0) return Value::Null(result);
      if (argument_type.id() == TypeId::kDouble) return Value::Double(SlotDouble(slot) / slot.count);
      const int input_scale = argument_type.id() == TypeId::kDecimal ? argument_type.scale() : 0;
      if (result.id() == TypeId::kDouble) {
        // Divide exactly first, so the only rounding is the final conversion: quotient + remainder / count.
        const int128 quotient = slot.value / slot.count;
        const int128 remainder = slot.value % slot.count;
        const double average =
            static_cast<double>(quotient) + static_cast<double>(remainder) / static_cast<double>(slot.count);
        return Value::Double(average / static_cast<double>(PowerOfTen(input_scale)));
      }
      // Exact: sum * 10^(result scale - input scale) / count, rounded half away from zero.
      int128 numerator = slot.value * PowerOfTen(result.scale() - input_scale);
      int128 quotient = numerator / slot.count;
      int128 remainder = numerator % slot.count;
      if (remainder != 0 && 2 * (remainder < 0 ? -remainder : remainder) >= slot.count) {
        quotient += numerator < 0 ? -1 : 1;
      }
      return Value::Decimal(quotient, result);
    }
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      if (slot.count == 0) return Value::Null(result);
      if (argument_type.IsString()) return Value::String(table.strings()[static_cast<size_t>(slot.value)], result);
      if (argument_type.id() == TypeId::kDouble) return Value::Double(SlotDouble(slot));
      return Value::FromExact(slot.value, argument_type);
  }
  return Value::Null(result);
}

}  // namespace

namespace {

// With few groups (at most kScannedGroups), the rows of one group follow each other closely, and folding row
// after row into the group's state waits each time for the previous row's store to it. The few-group folds
// below fold row s into lane s % kLanes of local copies of the states instead, so kLanes chains of additions
// run side by side, and add the lanes into the table after the batch. (Exact types and counts only: adding
// doubles in another order could change a SUM's last bits.)
constexpr int kLanes = 4;

// Adds `lanes` (per lane, one state per group) into call `call`'s states of the table's groups.
void AddLanes(const Slot (&lanes)[kLanes][kScannedGroups], size_t call, GroupTable& table) {
  for (uint32_t g = 0; g < table.group_count(); ++g) {
    Slot& slot = table.state(g)[call];
    for (int lane = 0; lane < kLanes; ++lane) {
      slot.value += lanes[lane][g].value;
      slot.count += lanes[lane][g].count;
    }
  }
}

// COUNT(*) over the selected rows.
void CountRows(uint32_t selected, const uint32_t* group_of_row, size_t call, GroupTable& table) {
  if (table.group_count() <= kScannedGroups) {
    Slot lanes[kLanes][kScannedGroups] = {};
    for (uint32_t s = 0; s < selected; ++s) ++lanes[s % kLanes][group_of_row[s]].count;
    AddLanes(lanes, call, table);
    return;
  }
  for (uint32_t s = 0; s < selected; ++s) ++table.state(group_of_row[s])[call].count;
}

template <typename T, typename Accumulate>
void FoldTyped(const ColumnVector& argument, const SelectionVector* selection, uint32_t selected,
               const uint32_t* group_of_row, size_t call, GroupTable& table, Accumulate accumulate) {
  const T* values = argument.values<T>();
  const bool nulls = argument.has_nulls();
  if constexpr (!std::is_same_v<T, double>) {
    if (table.group_count() <= kScannedGroups) {
      Slot lanes[kLanes][kScannedGroups] = {};
      for (uint32_t s = 0; s < selected; ++s) {
        const uint32_t row = selection != nullptr ? selection->rows[s] : s;
        if (nulls && argument.IsNull(row)) continue;
        Slot& slot = lanes[s % kLanes][group_of_row[s]];
        accumulate(slot, values[row]);
        ++slot.count;
      }
      AddLanes(lanes, call, table);
      return;
    }
  }
  for (uint32_t s = 0; s < selected; ++s) {
    const uint32_t row = selection != nullptr ? selection->rows[s] : s;
    if (nulls && argument.IsNull(row)) continue;
    Slot& slot = table.state(group_of_row[s])[call];
    accumulate(slot, values[row]);
    ++slot.count;
  }
}

// Appends the non-NULL selected values of `argument` (physical type Physical) to their groups' typed value arrays
// of call `call` (stored as Stored). The arrays grow by doubling, counted for HeapBytes.
template <typename Stored, typename Physical>
void AppendValues(const ColumnVector& argument, const SelectionVector* selection, uint32_t selected,
                  const uint32_t* group_of_row, size_t call, GroupTable& table) {
  const Physical* values = argument.values<Physical>();
  const bool nulls = argument.has_nulls();
  std::vector<std::vector<Stored>>& lists = table.typed_lists<Stored>();
  size_t grown_bytes = 0;
  for (uint32_t s = 0; s < selected; ++s) {
    const uint32_t row = selection != nullptr ? selection->rows[s] : s;
    if (nulls && argument.IsNull(row)) continue;
    std::vector<Stored>& list = lists[static_cast<size_t>(table.state(group_of_row[s])[call].value)];
    if (list.size() == list.capacity()) {
      const size_t before = list.capacity();
      list.reserve(std::max<size_t>(8, before * 2));
      grown_bytes += (list.capacity() - before) * sizeof(Stored);
    }
    list.push_back(static_cast<Stored>(values[row]));
  }
  table.CountListGrowth(grown_bytes);
}

// A quantile's values over a whole vector, into its typed value arrays (ValueListKind other than kSerialized).
void AppendQuantileValues(ValueListKind kind, const ColumnVector& argument, const SelectionVector* selection,
                          uint32_t selected, const uint32_t* group_of_row, size_t call, GroupTable& table) {
  switch (kind) {
    case ValueListKind::kInt64:
      if (argument.type().FixedWidth() == 4) {  // INTEGER, DATE
        AppendValues<int64_t, int32_t>(argument, selection, selected, group_of_row, call, table);
      } else {
        AppendValues<int64_t, int64_t>(argument, selection, selected, group_of_row, call, table);
      }
      return;
    case ValueListKind::kDouble:
      AppendValues<double, double>(argument, selection, selected, group_of_row, call, table);
      return;
    case ValueListKind::kInt128:
      AppendValues<int128, int128>(argument, selection, selected, group_of_row, call, table);
      return;
    case ValueListKind::kSerialized:
      LOG(FATAL) << "serialized values are folded row by row";
  }
}

// COUNT(x), SUM(x) and AVG(x) over a whole vector.
void FoldSums(AggregateKind kind, const ColumnVector& argument, const SelectionVector* selection, uint32_t selected,
              const uint32_t* group_of_row, size_t call, GroupTable& table) {
  auto add_exact = [](Slot& slot, auto v) { slot.value += v; };
  if (kind == AggregateKind::kCount) {
    FoldTyped<uint8_t>(argument, selection, selected, group_of_row, call, table, [](Slot&, uint8_t) {});
    return;
  }
  const Type& type = argument.type();
  switch (type.id()) {
    case TypeId::kDouble:
      FoldTyped<double>(argument, selection, selected, group_of_row, call, table,
                        [](Slot& slot, double v) { SetSlotDouble(slot, SlotDouble(slot) + v); });
      return;
    case TypeId::kInteger:
      FoldTyped<int32_t>(argument, selection, selected, group_of_row, call, table, add_exact);
      return;
    case TypeId::kBigInt:
      FoldTyped<int64_t>(argument, selection, selected, group_of_row, call, table, add_exact);
      return;
    case TypeId::kDecimal:
      if (type.IsWideDecimal()) {
        FoldTyped<int128>(argument, selection, selected, group_of_row, call, table, add_exact);
      } else {
        FoldTyped<int64_t>(argument, selection, selected, group_of_row, call, table, add_exact);
      }
      return;
    default:
      FoldTyped<uint8_t>(argument, selection, selected, group_of_row, call, table, [](Slot&, uint8_t) {});
      return;
  }
}

}  // namespace
namespace {

// Whether every aggregate result is fixed-width (no strings, no COUNT(DISTINCT) sets) and every key column a
// string or fixed-width, so that groups can be written a vector at a time instead of row by row through Values.
bool HasColumnOutput(const AggregationSpec& spec, const std::vector<Type>& key_types) {
  for (const Type& type : key_types) {
    if (type.id() == TypeId::kNull || (!type.IsString() && type.FixedWidth() <= 0)) return false;
  }
  for (const AggregationSpec::Call& call : spec.calls) {
    if (HasContainerState(call) || call.result_type.IsString()) return false;
  }
  return true;
}

// Groups to write: `count` groups of `table`, listed in `groups` or (null) its groups 0..count-1.
struct GroupRun {
  GroupTable* table;
  const uint32_t* groups;
  uint32_t count;
};

// How many groups ahead the merge and the writing prefetch: groups of a partition are scattered over the
// partial table, so without it every group is a cache miss.
constexpr uint32_t kPrefetchDistance = 16;

template <typename Fn>
absl::Status ForEachGroup(const std::vector<GroupRun>& runs, Fn fn) {
  for (const GroupRun& run : runs) {
    for (uint32_t i = 0; i < run.count; ++i) {
      if (run.groups != nullptr && i + kPrefetchDistance < run.count) {
        run.table->PrefetchGroup(run.groups[i + kPrefetchDistance]);
      }
      TESSERA_RETURN_IF_ERROR(fn(*run.table, run.groups ? run.groups[i] : i));
    }
  }
  return absl::OkStatus();
}

// How a call's result is written: copied from the state, or through FinalizeSlot's Value.
enum class ResultCopy { kCount, kWideSum, kValue };

ResultCopy ResultCopyOf(const AggregationSpec::Call& call, const Type& argument_type) {
  if (HasContainerState(call)) return ResultCopy::kValue;
  if (call.kind == AggregateKind::kCountStar || call.kind == AggregateKind::kCount) return ResultCopy::kCount;
  const Type& result = call.result_type;
  const bool exact_argument = argument_type.id() == TypeId::kBigInt || argument_type.id() == TypeId::kDecimal;
  const int argument_scale = argument_type.id() == TypeId::kDecimal ? argument_type.scale() : 0;
  if (call.kind == AggregateKind::kSum && exact_argument && result.id() == TypeId::kDecimal && result.IsWideDecimal() &&
      result.scale() == argument_scale) {
    return ResultCopy::kWideSum;  // the 128-bit sum is the result's representation
  }
  return ResultCopy::kValue;
}

// Stores group `g`'s key in row `row` of the key columns `columns[0..]`: fixed keys in the KeyColumn layout,
// serialized keys in AppendKeyPart's. Strings are views into the table, valid while it is not changed.
void StoreKey(const GroupTable& table, uint32_t g, uint32_t row, const std::vector<Type>& key_types,
              std::vector<ColumnVector>& columns) {
  const std::string_view key = table.key(g);
  if (table.fixed_keys()) {
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(key.data());
    for (size_t k = 0; k < key_types.size(); ++k) {
      const GroupTable::KeyColumn& column = table.key_columns()[k];
      const uint8_t* part = bytes + column.offset;
      if (part[0] == 0) {
        columns[k].SetNull(row);
      } else if (column.string) {
        columns[k].mutable_strings()[row] = std::string_view(reinterpret_cast<const char*>(part + 2), part[1]);
      } else {
        std::memcpy(columns[k].mutable_values<uint8_t>() + static_cast<size_t>(row) * column.width, part + 1,
                    column.width);
      }
    }
    return;
  }
  const char* p = key.data();
  for (size_t k = 0; k < key_types.size(); ++k) {
    if (*p++ == '\0') {
      columns[k].SetNull(row);
      continue;
    }
    if (key_types[k].IsString()) {
      uint32_t size;
      std::memcpy(&size, p, sizeof(size));
      p += sizeof(size);
      columns[k].mutable_strings()[row] = std::string_view(p, size);
      p += size;
      continue;
    }
    const int width = key_types[k].FixedWidth();
    std::memcpy(columns[k].mutable_values<uint8_t>() + static_cast<size_t>(row) * width, p, width);
    p += width;
  }
}

// Writes the groups of `runs` column-wise: key columns copied from the keys, aggregate results stored per
// vector of groups.
absl::Status WriteColumns(const AggregationSpec& spec, const std::vector<GroupRun>& runs,
                          const std::vector<Type>& key_types, const std::vector<Type>& argument_types,
                          const std::vector<size_t>& sources, TemporaryRelation* output) {
  std::vector<ColumnVector> columns;
  for (const Type& type : key_types) columns.emplace_back(type);
  for (const AggregationSpec::Call& call : spec.calls) columns.emplace_back(call.result_type);
  std::vector<const ColumnVector*> column_pointers;
  for (const ColumnVector& column : columns) column_pointers.push_back(&column);
  std::vector<ResultCopy> copies;
  for (size_t c = 0; c < spec.calls.size(); ++c) copies.push_back(ResultCopyOf(spec.calls[c], argument_types[c]));
  VectorBlockWriter writer(output);
  uint32_t filled = 0;
  for (ColumnVector& column : columns) column.ResetOwned(kVectorSize);
  TESSERA_RETURN_IF_ERROR(ForEachGroup(runs, [&](GroupTable& table, uint32_t g) -> absl::Status {
    StoreKey(table, g, filled, key_types, columns);
    const Slot* states = table.state(g);
    for (size_t c = 0; c < spec.calls.size(); ++c) {
      ColumnVector& column = columns[key_types.size() + c];
      const Slot& slot = states[sources[c]];
      switch (copies[c]) {
        case ResultCopy::kCount:
          column.mutable_values<int64_t>()[filled] = slot.count;
          break;
        case ResultCopy::kWideSum:
          if (slot.count == 0) {
            column.SetNull(filled);
          } else {
            column.mutable_values<int128>()[filled] = slot.value;
          }
          break;
        case ResultCopy::kValue: {
          TESSERA_ASSIGN_OR_RETURN(Value v, FinalizeSlot(spec.calls[c], argument_types[c], table, slot));
          SetRowValue(v, filled, &column);
          break;
        }
      }
    }
    if (++filled < kVectorSize) return absl::OkStatus();
    TESSERA_RETURN_IF_ERROR(writer.Append(column_pointers, nullptr, filled));
    for (ColumnVector& column : columns) column.ResetOwned(kVectorSize);
    filled = 0;
    return absl::OkStatus();
  }));
  if (filled > 0) TESSERA_RETURN_IF_ERROR(writer.Append(column_pointers, nullptr, filled));
  return writer.Flush();
}

}  // namespace

namespace {

// Writes column `vector`'s part of the fixed keys of the selected rows: at byte `offset` of each row's
// `key_words` words in `keys` (zeroed before), a NULL flag byte (1 = a value) and the value's `Width` bytes.
template <int Width>
void EncodeKeyColumn(const ColumnVector& vector, const SelectionVector* selection, uint32_t selected, size_t offset,
                     size_t key_words, uint64_t* keys) {
  const uint8_t* values = vector.values<uint8_t>();
  uint8_t* out = reinterpret_cast<uint8_t*>(keys) + offset;
  const size_t stride = key_words * sizeof(uint64_t);
  const bool normalize_zero = vector.type().id() == TypeId::kDouble;  // -0.0 and 0.0 are one value (and group)
  for (uint32_t s = 0; s < selected; ++s, out += stride) {
    const uint32_t row = selection != nullptr ? selection->rows[s] : s;
    if (vector.IsNull(row)) continue;
    out[0] = 1;
    if constexpr (Width == 8) {
      if (normalize_zero) {
        double d;
        std::memcpy(&d, values + static_cast<size_t>(row) * 8, 8);
        if (d == 0.0) d = 0.0;
        std::memcpy(out + 1, &d, 8);
        continue;
      }
    }
    std::memcpy(out + 1, values + static_cast<size_t>(row) * Width, Width);
  }
}

// The inline-string part of fixed keys (see EncodeKeyColumn): a NULL flag byte, the length byte and the
// bytes. Returns false, leaving the keys incomplete, when a value has more than `max_bytes` bytes.
bool EncodeStringKeyColumn(const ColumnVector& vector, const SelectionVector* selection, uint32_t selected,
                           size_t offset, size_t max_bytes, size_t key_words, uint64_t* keys) {
  const std::string_view* values = vector.strings();
  uint8_t* out = reinterpret_cast<uint8_t*>(keys) + offset;
  const size_t stride = key_words * sizeof(uint64_t);
  for (uint32_t s = 0; s < selected; ++s, out += stride) {
    const uint32_t row = selection != nullptr ? selection->rows[s] : s;
    if (vector.IsNull(row)) continue;
    const std::string_view value = values[row];
    if (value.size() > max_bytes) return false;
    out[0] = 1;
    out[1] = static_cast<uint8_t>(value.size());
    for (size_t i = 0; i < value.size(); ++i) out[2 + i] = static_cast<uint8_t>(value[i]);  // short: no memcpy call
  }
  return true;
}

// The groups of the selected rows whose fixed keys are in table.batch_keys() (one pass over the keys, then
// lookups of the rest): a row whose key equals the previous row's joins its group (rows of one group often
// come in runs: input sorted or clustered by the key, as lineitem by l_orderkey, or few groups); while the
// table has at most kScannedGroups groups, a key is compared with each of them. Only the remaining rows are
// hashed (column by column, as a selection) and looked up in (or inserted into) the hash table.
void FindFixedKeyGroups(const std::vector<const ColumnVector*>& keys, const SelectionVector* selection,
                        uint32_t batch_size, uint32_t selected, GroupTable& table, uint32_t* group_of_row) {
  constexpr uint32_t kSameAsPrevious = UINT32_MAX;  // never a group (a slot stores group + 1 in 32 bits)
  const size_t words = table.key_words();
  const uint64_t* batch_keys = table.batch_keys();
  SelectionVector& lookups = table.lookup_rows();
  uint32_t* lookup_positions = table.lookup_positions();  // the s of each lookup
  lookups.count = 0;
  const uint32_t scanned = table.group_count() <= kScannedGroups ? static_cast<uint32_t>(table.group_count()) : 0;
  for (uint32_t s = 0; s < selected; ++s) {
    const uint64_t* key = batch_keys + s * words;
    if (s > 0 && GroupTable::SameWords(key, key - words, words)) {
      group_of_row[s] = kSameAsPrevious;
      continue;
    }
    uint32_t g = 0;
    while (g < scanned && !GroupTable::SameWords(table.key_words(g), key, words)) ++g;
    if (g < scanned) {
      group_of_row[s] = g;
      continue;
    }
    lookups.rows[lookups.count] = selection != nullptr ? selection->rows[s] : s;
    lookup_positions[lookups.count++] = s;
  }
  uint64_t* hashes = table.hashes();
  // Every row to look up (distinct keys): the input's selection, which may be none (a dense pass).
  const SelectionVector* hashed = lookups.count == selected ? selection : &lookups;
  for (size_t k = 0; k < keys.size(); ++k) HashSelectedRows(*keys[k], hashed, batch_size, k == 0, hashes);
  // Slots are prefetched a fixed distance ahead: a whole batch of prefetches at once would overrun the
  // outstanding misses a core can track, and most would be dropped.
  for (uint32_t i = 0; i < std::min(lookups.count, kLookupPrefetchDistance); ++i)
    table.Prefetch(hashes[lookups.rows[i]]);
  for (uint32_t i = 0; i < lookups.count; ++i) {
    if (i + kLookupPrefetchDistance < lookups.count) table.Prefetch(hashes[lookups.rows[i + kLookupPrefetchDistance]]);
    const uint32_t s = lookup_positions[i];
    group_of_row[s] = table.FindOrInsertFixed(batch_keys + s * words, hashes[lookups.rows[i]]);
  }
  for (uint32_t s = 1; s < selected; ++s) {
    if (group_of_row[s] == kSameAsPrevious) group_of_row[s] = group_of_row[s - 1];
  }
}

// Builds the fixed keys of the selected rows into `out` (key_words per row). Returns false when a string does
// not fit its inline width (the table must then switch to serialized keys).
bool EncodeFixedKeys(const std::vector<const ColumnVector*>& keys, const std::vector<GroupTable::KeyColumn>& columns,
                     const SelectionVector* selection, uint32_t selected, size_t key_words, uint64_t* out) {
  std::memset(out, 0, static_cast<size_t>(selected) * key_words * sizeof(uint64_t));
  for (size_t k = 0; k < keys.size(); ++k) {
    const ColumnVector& key = *keys[k];
    const GroupTable::KeyColumn& column = columns[k];
    if (column.string) {
      if (!EncodeStringKeyColumn(key, selection, selected, column.offset, column.width - 1, key_words, out)) {
        return false;
      }
      continue;
    }
    switch (column.width) {
      case 1:
        EncodeKeyColumn<1>(key, selection, selected, column.offset, key_words, out);
        break;
      case 2:
        EncodeKeyColumn<2>(key, selection, selected, column.offset, key_words, out);
        break;
      case 4:
        EncodeKeyColumn<4>(key, selection, selected, column.offset, key_words, out);
        break;
      case 8:
        EncodeKeyColumn<8>(key, selection, selected, column.offset, key_words, out);
        break;
      case 16:
        EncodeKeyColumn<16>(key, selection, selected, column.offset, key_words, out);
        break;
      default:
        LOG(FATAL) << "no fixed-width key encoding for " << key.type().ToString();
    }
  }
  return true;
}

}  // namespace

bool HasContainerState(const AggregationSpec::Call& call) {
  return call.distinct || call.kind == AggregateKind::kQuantileCont || call.kind == AggregateKind::kQuantileDisc ||
         call.kind == AggregateKind::kStringAgg || call.kind == AggregateKind::kApproxCountDistinct;
}

std::vector<size_t> AggregationTable::StateSources(const AggregationSpec& spec) {
  std::vector<size_t> sources(spec.calls.size());
  std::vector<std::string> arguments(spec.calls.size());
  auto sum_or_avg = [](const AggregationSpec::Call& call) {
    return !call.distinct && (call.kind == AggregateKind::kSum || call.kind == AggregateKind::kAvg) &&
           call.argument != nullptr;
  };
  for (size_t c = 0; c < spec.calls.size(); ++c) {
    sources[c] = c;
    if (!sum_or_avg(spec.calls[c])) continue;
    arguments[c] = spec.calls[c].argument->ToString();
    for (size_t e = 0; e < c; ++e) {
      if (sources[e] == e && sum_or_avg(spec.calls[e]) && arguments[e] == arguments[c] &&
          spec.calls[e].argument->result_type == spec.calls[c].argument->result_type) {
        sources[c] = e;
        break;
      }
    }
  }
  return sources;
}

AggregationTable::AggregationTable(const AggregationSpec& spec, BufferPool* pool)
    : table_(std::make_unique<GroupTable>(spec, pool)) {}
AggregationTable::~AggregationTable() = default;
size_t AggregationTable::group_count() const { return table_->group_count(); }
size_t AggregationTable::HeapBytes() const { return table_->HeapBytes(); }
absl::Status AggregationTable::Presize(size_t groups) { return table_->Presize(groups); }

absl::Status AggregationTable::Update(const std::vector<const ColumnVector*>& keys,
                                      const std::vector<const ColumnVector*>& arguments,
                                      const SelectionVector* selection, uint32_t batch_size, uint32_t selected) {
  GroupTable& table = *table_;
  const AggregationSpec& spec = table.spec();
  // Room for every selected row to be a new group, so that the inserts below cannot fail.
  TESSERA_RETURN_IF_ERROR(table.ReserveGroups(keys.empty() ? 1 : selected));
  uint32_t* group_of_row = table.group_of_row();
  uint64_t* hashes = table.hashes();
  // Pass 1: the group of every selected row (inserting groups may move states, so no pointers yet).
  if (keys.empty()) {
    if (table.group_count() == 0) table.FindOrInsertFixed(kScalarKey, 0);
    std::fill(group_of_row, group_of_row + selected, 0);
  } else if (DenseGroupIndex* dense = table.dense_index();
             dense == nullptr || !dense->Find(keys, selection, selected, group_of_row)) {
    if (table.fixed_keys() &&
        !EncodeFixedKeys(keys, table.key_columns(), selection, selected, table.key_words(), table.batch_keys())) {
      // A string longer than its inline width (not valid UTF-8, or a CAST).
      TESSERA_RETURN_IF_ERROR(table.ConvertToSerializedKeys());
    }
    if (table.fixed_keys()) {
      FindFixedKeyGroups(keys, selection, batch_size, selected, table, group_of_row);
    } else {
      for (size_t g = 0; g < keys.size(); ++g) {
        HashSelectedRows(*keys[g], selection, batch_size, g == 0, hashes);  // only the rows used below
      }
      for (uint32_t s = 0; s < selected; ++s) table.Prefetch(hashes[selection != nullptr ? selection->rows[s] : s]);
      // Runs of one key (see FindFixedKeyGroups) join the previous row's group without a lookup.
      std::string& key = table.key_buffer();
      std::string& previous_key = table.previous_key_buffer();
      previous_key.clear();
      for (uint32_t s = 0; s < selected; ++s) {
        const uint32_t row = selection != nullptr ? selection->rows[s] : s;
        key.clear();
        for (const ColumnVector* k : keys) AppendKeyPart(*k, row, &key);
        if (s > 0 && key == previous_key) {
          group_of_row[s] = group_of_row[s - 1];
          continue;
        }
        group_of_row[s] = table.FindOrInsertSerialized(key, hashes[row]);
        previous_key.swap(key);
      }
    }
    // `dense` missed this batch (a new combination of values): it learns the groups just found.
    if (dense != nullptr && !dense->Learn(keys, selection, selected, group_of_row)) table.DropDenseIndex();
  }
  // Pass 2: fold the arguments in, one aggregate at a time, with the type dispatch outside the row loop.
  for (size_t c = 0; c < spec.calls.size(); ++c) {
    if (table.state_source(c) != c) continue;  // folded into an earlier call's state
    const AggregationSpec::Call& call = spec.calls[c];
    if (call.kind == AggregateKind::kCountStar) {
      CountRows(selected, group_of_row, c, table);
      continue;
    }
    const ColumnVector& argument = *arguments[c];
    if (!call.distinct &&
        (call.kind == AggregateKind::kSum || call.kind == AggregateKind::kAvg || call.kind == AggregateKind::kCount)) {
      FoldSums(call.kind, argument, selection, selected, group_of_row, c, table);
      continue;
    }
    if (table.list_kind(c) != ValueListKind::kSerialized) {
      AppendQuantileValues(table.list_kind(c), argument, selection, selected, group_of_row, c, table);
      continue;
    }
    for (uint32_t s = 0; s < selected; ++s) {
      const uint32_t row = selection != nullptr ? selection->rows[s] : s;
      if (argument.IsNull(row)) continue;
      UpdateSlot(call, table, table.state(group_of_row[s])[c], argument, row);
    }
  }
  return absl::OkStatus();
}

absl::Status AggregationTable::MergeAndWrite(const AggregationSpec& spec,
                                             const std::vector<std::unique_ptr<AggregationTable>>& partials,
                                             int partition, BufferPool* pool, TemporaryRelation* output,
                                             int64_t* groups_written) {
  std::vector<Type> argument_types;
  for (const auto& call : spec.calls)
    argument_types.push_back(call.argument ? call.argument->result_type : Type::BigInt());
  const std::vector<size_t> sources = StateSources(spec);
  // A group's states can be copied as they are into a group the merge just created, and updated in place in
  // their partial table, unless they index into their table (string MIN/MAX, DISTINCT sets).
  bool copyable_states = true;
  for (size_t c = 0; c < spec.calls.size(); ++c) {
    const bool string_extreme =
        (spec.calls[c].kind == AggregateKind::kMin || spec.calls[c].kind == AggregateKind::kMax) &&
        argument_types[c].IsString();
    if (HasContainerState(spec.calls[c]) || string_extreme) copyable_states = false;
  }
  auto groups_of = [&](GroupTable& table) -> GroupRun {
    if (partition < 0) return {&table, nullptr, static_cast<uint32_t>(table.group_count())};
    const std::span<const uint32_t> groups = table.groups_in_partition(partition);
    return {&table, groups.data(), static_cast<uint32_t>(groups.size())};
  };
  // With copyable states, the partial table with the most groups of the partition is the base: its groups
  // stay where they are, the other partials' groups are looked up in it (read-only: no other merge inserts
  // into a partial table) and folded into its states in place (they belong to this partition only), and only
  // groups it lacks go to a new table. Otherwise every group goes to a new table. Keys are compared in one
  // form: fixed, unless a partial table had to switch to serialized keys (a string longer than its inline
  // width); then groups of fixed-key tables are serialized on the way.
  GroupTable merged(spec, pool);
  for (const auto& partial : partials) {
    if (partial != nullptr && !partial->table_->fixed_keys()) {
      TESSERA_RETURN_IF_ERROR(merged.ConvertToSerializedKeys());
    }
  }
  GroupTable* base = nullptr;
  if (copyable_states) {
    for (const auto& partial : partials) {
      if (partial == nullptr || partial->table_->fixed_keys() != merged.fixed_keys()) continue;
      if (base == nullptr || groups_of(*partial->table_).count > groups_of(*base).count) base = partial->table_.get();
    }
  }
  // With a base, the groups of the last other partial table (in the base's key form) that neither the base nor
  // the tables before it have are written from where they are, not copied into the new table: no later table
  // can add to them. (With two workers, no group is copied at all.)
  GroupTable* last = nullptr;
  if (base != nullptr) {
    for (const auto& partial : partials) {
      if (partial != nullptr && partial->table_.get() != base) last = partial->table_.get();
    }
    if (last != nullptr && last->fixed_keys() != merged.fixed_keys()) last = nullptr;
  }
  PoolArray<uint32_t> in_place(pool);
  uint32_t in_place_count = 0;
  if (last != nullptr) {
    TESSERA_ASSIGN_OR_RETURN(in_place, PoolArray<uint32_t>::Allocate(pool, groups_of(*last).count));
  }
  size_t incoming = 0;
  for (const auto& partial : partials) {
    if (partial != nullptr && partial->table_.get() != base && partial->table_.get() != last)
      incoming += groups_of(*partial->table_).count;
  }
  // Keys are a few bytes per column; an estimate is enough to avoid most regrowth.
  // Room for every incoming group (and a scalar aggregate's one row): the inserts below cannot fail.
  TESSERA_RETURN_IF_ERROR(merged.ReserveGroups(std::max<size_t>(incoming, 1), incoming * (spec.group_by.size() * 9)));
  auto merge_slots = [&](GroupTable& into, uint32_t target, GroupTable& from, uint32_t g) {
    for (size_t c = 0; c < spec.calls.size(); ++c) {
      if (sources[c] != c) continue;
      MergeSlot(spec.calls[c], argument_types[c], into, into.state(target)[c], from, from.state(g)[c]);
    }
  };
  std::string serialized;
  for (const auto& partial : partials) {
    if (partial == nullptr || partial->table_.get() == base) continue;
    GroupTable& table = *partial->table_;
    const bool same_form = table.fixed_keys() == merged.fixed_keys();
    const GroupRun run = groups_of(table);
    for (uint32_t i = 0; i < run.count; ++i) {
      // Two stages: the group's row kPrefetchDistance ahead, then (its hash now cached) the base's slot for
      // the group half as far ahead.
      if (run.groups != nullptr && i + kPrefetchDistance < run.count) {
        table.PrefetchGroup(run.groups[i + kPrefetchDistance]);
      }
      if (i + kPrefetchDistance / 2 < run.count) {
        const uint64_t ahead =
            table.hash(run.groups != nullptr ? run.groups[i + kPrefetchDistance / 2] : i + kPrefetchDistance / 2);
        if (base != nullptr) base->Prefetch(ahead);
        merged.Prefetch(ahead);
      }
      const uint32_t g = run.groups != nullptr ? run.groups[i] : i;
      const uint64_t hash = table.hash(g);
      std::string_view key;  // serialized keys only
      if (!merged.fixed_keys()) {
        if (same_form) {
          key = table.key(g);
        } else {
          serialized.clear();
          table.SerializeKey(g, &serialized);
          key = serialized;
        }
      }
      if (base != nullptr) {
        const uint32_t found =
            merged.fixed_keys() ? base->FindFixed(table.key_words(g), hash) : base->FindSerialized(key, hash);
        if (found != GroupTable::kNotFound) {
          merge_slots(*base, found, table, g);
          continue;
        }
      }
      if (&table == last) {
        const uint32_t found = merged.group_count() == 0 ? GroupTable::kNotFound
                               : merged.fixed_keys()     ? merged.FindFixed(table.key_words(g), hash)
                                                         : merged.FindSerialized(key, hash);
        if (found != GroupTable::kNotFound) {
          merge_slots(merged, found, table, g);
        } else {
          in_place[in_place_count++] = g;
        }
        continue;
      }
      const size_t groups_before = merged.group_count();
      const uint32_t target = merged.fixed_keys() ? merged.FindOrInsertFixed(table.key_words(g), hash)
                                                  : merged.FindOrInsertSerialized(key, hash);
      if (copyable_states && merged.group_count() > groups_before) {
        std::memcpy(merged.state(target), table.state(g), spec.calls.size() * kSlotBytes);
      } else {
        merge_slots(merged, target, table, g);
      }
    }
  }
  std::vector<GroupRun> runs;
  if (base != nullptr) runs.push_back(groups_of(*base));
  if (in_place_count > 0) runs.push_back(GroupRun{last, in_place.data(), in_place_count});
  if (spec.group_by.empty() && merged.group_count() == 0 && (base == nullptr || base->group_count() == 0)) {
    merged.FindOrInsertFixed(kScalarKey, 0);  // a scalar aggregate's one row, also without input
  }
  runs.push_back(GroupRun{&merged, nullptr, static_cast<uint32_t>(merged.group_count())});
  std::vector<Type> key_types;
  for (const auto& g : spec.group_by) key_types.push_back(g->result_type);
  *groups_written = 0;
  for (const GroupRun& run : runs) *groups_written += run.count;
  if (HasColumnOutput(spec, key_types)) return WriteColumns(spec, runs, key_types, argument_types, sources, output);
  BlockBuilder builder(output->schema(), output->block_size_bytes());
  std::vector<Value> row;
  TESSERA_RETURN_IF_ERROR(ForEachGroup(runs, [&](GroupTable& table, uint32_t g) -> absl::Status {
    row.clear();
    serialized.clear();
    table.SerializeKey(g, &serialized);
    const char* p = serialized.data();
    for (const Type& type : key_types) row.push_back(DecodeKeyPart(&p, type));
    for (size_t c = 0; c < spec.calls.size(); ++c) {
      TESSERA_ASSIGN_OR_RETURN(Value v,
                               FinalizeSlot(spec.calls[c], argument_types[c], table, table.state(g)[sources[c]]));
      row.push_back(std::move(v));
    }
    return output->AppendValueRow(builder, row);
  }));
  if (!builder.empty()) TESSERA_RETURN_IF_ERROR(output->AppendBlock(builder).status());
  return absl::OkStatus();
}

}  // namespace tessera
