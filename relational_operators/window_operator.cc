#include "relational_operators/window_operator.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "common/bitmap.h"
#include "common/status_macros.h"
#include "expressions/decimal_arithmetic.h"
#include "expressions/vector_kernels.h"
#include "relational_operators/key_hashing.h"
#include "relational_operators/sort_column.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {
namespace {

using Kind = WindowFunctionKind;
using BoundKind = WindowFrameBound::Kind;

// How a function's values are held until they are written: 64-bit integers, doubles, 128-bit decimals, or the
// position (in sorted order) of the row whose argument value is the result (value functions, MIN / MAX):
// kNoRow for NULL, kDefaultRow for lag / lead's default.
enum class ResultForm { kInteger, kDouble, kWide, kSourceRow };
constexpr int64_t kNoRow = -1;
constexpr int64_t kDefaultRow = -2;

ResultForm FormOf(const WindowFunctionSpec& function) {
  switch (function.kind) {
    case Kind::kPercentRank:
    case Kind::kCumeDist:
    case Kind::kAvg:
      return ResultForm::kDouble;
    case Kind::kLag:
    case Kind::kLead:
    case Kind::kFirstValue:
    case Kind::kLastValue:
    case Kind::kNthValue:
    case Kind::kMin:
    case Kind::kMax:
      return ResultForm::kSourceRow;
    case Kind::kSum:
      if (function.result_type.id() == TypeId::kDouble) return ResultForm::kDouble;
      return function.result_type.IsWideDecimal() ? ResultForm::kWide : ResultForm::kInteger;
    default:
      return ResultForm::kInteger;
  }
}

struct FunctionResult {
  ResultForm form = ResultForm::kInteger;
  PoolArray<int64_t> integers;  // kInteger values, or kSourceRow positions
  PoolArray<double> doubles;
  PoolArray<int128> wide;
  PoolArray<uint8_t> nulls;  // kInteger / kDouble / kWide
};

// [start, end) of row s's frame within its partition [begin, end_of_partition), empty when the bounds cross.
void FrameOf(const WindowFunctionSpec& function, uint32_t s, uint32_t begin, uint32_t end_of_partition,
             const uint32_t* peer_start, const uint32_t* peer_end, uint32_t* start, uint32_t* end) {
  const int64_t limit = static_cast<int64_t>(end_of_partition) + 1;  // offsets beyond the partition saturate
  auto offset = [&](const WindowFrameBound& bound) { return std::min<int64_t>(bound.offset, limit); };
  const int64_t row = s;
  int64_t first = begin;
  switch (function.frame.start.kind) {
    case BoundKind::kUnboundedPreceding:
      first = begin;
      break;
    case BoundKind::kPreceding:
      first = row - offset(function.frame.start);
      break;
    case BoundKind::kCurrentRow:
      first = function.frame.rows ? row : peer_start[s];
      break;
    case BoundKind::kFollowing:
      first = row + offset(function.frame.start);
      break;
    case BoundKind::kUnboundedFollowing:
      first = end_of_partition;
      break;
  }
  int64_t last = end_of_partition;
  switch (function.frame.end.kind) {
    case BoundKind::kUnboundedPreceding:
      last = begin;
      break;
    case BoundKind::kPreceding:
      last = row - offset(function.frame.end) + 1;
      break;
    case BoundKind::kCurrentRow:
      last = function.frame.rows ? row + 1 : peer_end[s];
      break;
    case BoundKind::kFollowing:
      last = row + offset(function.frame.end) + 1;
      break;
    case BoundKind::kUnboundedFollowing:
      last = end_of_partition;
      break;
  }
  first = std::clamp<int64_t>(first, begin, end_of_partition);
  last = std::clamp<int64_t>(last, begin, end_of_partition);
  *start = static_cast<uint32_t>(first);
  *end = static_cast<uint32_t>(std::max(first, last));
}

// ntile(buckets) of the row at 0-based position k of a partition of n rows: the first n % buckets buckets
// hold one row more than the others.
int64_t NtileBucket(int64_t k, int64_t n, int64_t buckets) {
  if (buckets >= n) return k + 1;
  const int64_t size = n / buckets;
  const int64_t larger = n % buckets;
  const int64_t in_larger = larger * (size + 1);
  if (k < in_larger) return k / (size + 1) + 1;
  return (k - in_larger) / size + larger + 1;
}

}  // namespace

// Lists one input block's rows by partition group (hash of the PARTITION BY keys).
class WindowOperator::PartitionWorkOrder : public WorkOrder {
 public:
  PartitionWorkOrder(WindowOperator* op, uint32_t block) : WorkOrder(op->index(), -1), op_(op), block_(block) {}

  absl::Status Execute(const WorkOrderContext&) override {
    const BlockView& block = op_->blocks_[block_];
    const uint32_t rows = block.row_count();
    const uint32_t groups = op_->group_count();
    std::vector<uint64_t> hashes(rows);
    std::vector<const BlockView*> chunk_blocks(kVectorSize, &block);
    std::vector<uint32_t> chunk_rows(kVectorSize);
    std::vector<ColumnVector> keys;
    for (int column : op_->spec_.partition_columns) keys.emplace_back(op_->input_->schema()[column].type);
    for (uint32_t start = 0; start < rows; start += kVectorSize) {
      const uint32_t count = std::min(kVectorSize, rows - start);
      std::iota(chunk_rows.begin(), chunk_rows.begin() + count, start);
      for (size_t k = 0; k < keys.size(); ++k) {
        keys[k].ResetOwned(count);
        GatherBlockValues(chunk_blocks.data(), chunk_rows.data(), count, op_->spec_.partition_columns[k], &keys[k]);
        HashVectorRows(keys[k], count, k == 0, hashes.data() + start);
      }
    }
    // Counting sort of the rows by group.
    BlockPartitions& partitions = op_->partitions_[block_];
    partitions.offsets.assign(groups + 1, 0);
    auto group_of = [groups](uint64_t hash) { return (hash >> 40) % groups; };
    for (uint32_t r = 0; r < rows; ++r) ++partitions.offsets[group_of(hashes[r]) + 1];
    for (uint32_t g = 0; g < groups; ++g) partitions.offsets[g + 1] += partitions.offsets[g];
    TESSERA_ASSIGN_OR_RETURN(partitions.rows, PoolArray<uint32_t>::Allocate(op_->pool_, std::max<uint32_t>(rows, 1)));
    std::vector<uint32_t> next(partitions.offsets.begin(), partitions.offsets.end() - 1);
    TESSERA_ASSIGN_OR_RETURN(partitions.hashes, PoolArray<uint64_t>::Allocate(op_->pool_, std::max<uint32_t>(rows, 1)));
    for (uint32_t r = 0; r < rows; ++r) {
      const uint32_t slot = next[group_of(hashes[r])]++;
      partitions.rows[slot] = r;
      partitions.hashes[slot] = hashes[r];
    }
    rows_in_ = rows;
    op_->partitions_finished_.fetch_add(1);
    return absl::OkStatus();
  }

 private:
  WindowOperator* op_;
  const uint32_t block_;
};

// Sorts one partition group's rows, computes the functions over each partition, writes the output.
class WindowOperator::ComputeWorkOrder : public WorkOrder {
 public:
  ComputeWorkOrder(WindowOperator* op, uint32_t group) : WorkOrder(op->index(), -1), op_(op), group_(group) {}

  absl::Status Execute(const WorkOrderContext& context) override {
    const WindowSpec& spec = op_->spec_;
    // The group's rows, in input order (block, then row).
    const bool partitioned = !spec.partition_columns.empty();
    size_t total = 0;
    for (uint32_t b = 0; b < op_->blocks_.size(); ++b) {
      total += partitioned ? op_->partitions_[b].offsets[group_ + 1] - op_->partitions_[b].offsets[group_]
                           : op_->blocks_[b].row_count();
    }
    if (total > std::numeric_limits<uint32_t>::max() / 2) {
      return absl::ResourceExhaustedError("window partition group too large");
    }
    uint32_t n = static_cast<uint32_t>(total);
    rows_in_ = partitioned ? 0 : n;  // partitioned: the partition work orders counted them
    if (n == 0) return absl::OkStatus();
    // The work order's arrays are buffer-pool memory: charged to the query, and warm slots are reused (fresh
    // heap pages for them cost a third of the time in page clearing).
    BufferPool* pool = op_->pool_;
    TESSERA_ASSIGN_OR_RETURN(row_blocks_, PoolArray<const BlockView*>::Allocate(pool, n));
    TESSERA_ASSIGN_OR_RETURN(row_numbers_, PoolArray<uint32_t>::Allocate(pool, n));
    const bool top_n = spec.limit_function >= 0 && static_cast<uint64_t>(spec.limit) < n;
    PoolArray<uint64_t> hashes;  // each element's partition hash (PARTITION BY keys)
    if (partitioned) {
      TESSERA_ASSIGN_OR_RETURN(hashes, PoolArray<uint64_t>::Allocate(pool, n));
    }
    uint32_t next = 0;
    for (uint32_t b = 0; b < op_->blocks_.size(); ++b) {
      const BlockView* block = &op_->blocks_[b];
      if (partitioned) {
        const BlockPartitions& partitions = op_->partitions_[b];
        for (uint32_t i = partitions.offsets[group_]; i < partitions.offsets[group_ + 1]; ++i) {
          hashes[next] = partitions.hashes[i];
          row_blocks_[next] = block;
          row_numbers_[next++] = partitions.rows[i];
        }
      } else {
        for (uint32_t r = 0; r < block->row_count(); ++r) {
          row_blocks_[next] = block;
          row_numbers_[next++] = r;
        }
      }
    }
    if (top_n) {
      TESSERA_ASSIGN_OR_RETURN(n, KeepTopN(n, partitioned ? hashes.data() : nullptr));
      if (n == 0) {
        row_blocks_ = {};
        row_numbers_ = {};
        return absl::OkStatus();
      }
    }
    TESSERA_ASSIGN_OR_RETURN(order_, PoolArray<uint32_t>::Allocate(pool, n));
    TESSERA_ASSIGN_OR_RETURN(peer_start_, PoolArray<uint32_t>::Allocate(pool, n));
    TESSERA_ASSIGN_OR_RETURN(peer_end_, PoolArray<uint32_t>::Allocate(pool, n));
    n_ = n;

    // Sort by PARTITION BY keys (any fixed order) and ORDER BY keys; ties by input position. Then the
    // partition starts and each sorted position's peer group start.
    std::vector<uint32_t> partition_starts{0};
    peer_start_[0] = 0;
    TESSERA_ASSIGN_OR_RETURN(const bool sorted,
                             SortEncoded(n, partitioned ? hashes.data() : nullptr, &partition_starts));
    hashes = {};
    if (!sorted) SortGeneric(n, &partition_starts);
    if (context.Cancelled()) return absl::CancelledError("query cancelled");
    partition_starts.push_back(n);
    for (uint32_t s = n; s-- > 0;) {
      peer_end_[s] = s + 1 < n && peer_start_[s + 1] == peer_start_[s] ? peer_end_[s + 1] : s + 1;
    }

    std::vector<FunctionResult> results(spec.functions.size());
    for (size_t f = 0; f < spec.functions.size(); ++f) {
      FunctionResult& result = results[f];
      result.form = FormOf(spec.functions[f]);
      switch (result.form) {
        case ResultForm::kInteger:
        case ResultForm::kSourceRow: {
          TESSERA_ASSIGN_OR_RETURN(result.integers, PoolArray<int64_t>::Allocate(pool, n));
          break;
        }
        case ResultForm::kDouble: {
          TESSERA_ASSIGN_OR_RETURN(result.doubles, PoolArray<double>::Allocate(pool, n));
          break;
        }
        case ResultForm::kWide: {
          TESSERA_ASSIGN_OR_RETURN(result.wide, PoolArray<int128>::Allocate(pool, n));
          break;
        }
      }
      if (result.form != ResultForm::kSourceRow) {
        TESSERA_ASSIGN_OR_RETURN(result.nulls, PoolArray<uint8_t>::AllocateZeroed(pool, n));
      }
      for (size_t p = 0; p + 1 < partition_starts.size(); ++p) {
        TESSERA_RETURN_IF_ERROR(Compute(spec.functions[f], partition_starts[p], partition_starts[p + 1], &result));
      }
    }
    if (context.Cancelled()) return absl::CancelledError("query cancelled");
    TESSERA_RETURN_IF_ERROR(Write(results, context));
    rows_out_ = n;
    // Give the memory back now rather than when the scheduler destroys the work order.
    row_blocks_ = {};
    row_numbers_ = {};
    order_ = {};
    peer_start_ = {};
    peer_end_ = {};
    return absl::OkStatus();
  }

 private:
  // Numbers the partitions of the n elements 0, 1, ... in order of first appearance into `partition_of` and
  // returns each one's element count. Elements with equal `hashes` (null: one partition) are compared on the
  // PARTITION BY keys, so colliding hashes make two partitions.
  std::vector<uint32_t> NumberPartitions(uint32_t n, const uint64_t* hashes, uint32_t* partition_of) const {
    if (hashes == nullptr) {
      std::fill(partition_of, partition_of + n, 0u);
      return {n};
    }
    const WindowSpec& spec = op_->spec_;
    const std::vector<ColumnSchema>& schema = op_->input_->schema();
    std::vector<SortColumn> keys;
    keys.reserve(spec.partition_columns.size());
    for (int column : spec.partition_columns) {
      keys.emplace_back(row_blocks_.data(), row_numbers_.data(), n, SortKey{column, true, false}, schema[column].type);
    }
    auto same_partition = [&](uint32_t a, uint32_t b) {
      for (const SortColumn& key : keys) {
        if (key.Compare(a, b) != 0) return false;
      }
      return true;
    };
    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> rows;   // per partition: its elements
    std::vector<uint32_t> first;  // per partition: its first element
    std::vector<uint32_t> next;   // per partition: the next partition of the same hash
    auto add = [&](uint32_t e) {
      rows.push_back(0);
      first.push_back(e);
      next.push_back(kNone);
      return static_cast<uint32_t>(rows.size() - 1);
    };
    absl::flat_hash_map<uint64_t, uint32_t> by_hash;
    for (uint32_t e = 0; e < n; ++e) {
      auto [it, inserted] = by_hash.try_emplace(hashes[e], static_cast<uint32_t>(rows.size()));
      uint32_t p = inserted ? add(e) : it->second;
      while (!same_partition(first[p], e)) {
        if (next[p] == kNone) next[p] = add(e);
        p = next[p];
      }
      partition_of[e] = p;
      ++rows[p];
    }
    return rows;
  }

  // Top-N per partition (WindowSpec::limit_function, limit < n): keeps the elements whose limited function can
  // be at most `limit`, in input order (row_blocks_ / row_numbers_ and `hashes`, null without PARTITION BY,
  // compacted), and returns how many. Per partition (NumberPartitions) a max-heap holds the `limit` best
  // elements by ORDER BY keys, then input position, as the sort orders them; row_number keeps exactly those,
  // rank also the elements tied with the worst of them. Every element better than a kept one is kept, so
  // row_number, rank and dense_rank computed over the rows kept are their values over all rows.
  absl::StatusOr<uint32_t> KeepTopN(uint32_t n, uint64_t* hashes) {
    const WindowSpec& spec = op_->spec_;
    const uint32_t limit = static_cast<uint32_t>(spec.limit);
    if (limit == 0) return 0;
    const std::vector<ColumnSchema>& schema = op_->input_->schema();
    std::vector<SortColumn> order_keys;
    order_keys.reserve(spec.order_keys.size());
    for (const SortKey& key : spec.order_keys) {
      order_keys.emplace_back(row_blocks_.data(), row_numbers_.data(), n, key, schema[key.column].type);
    }
    auto compare_order = [&](uint32_t a, uint32_t b) {
      for (const SortColumn& key : order_keys) {
        const int c = key.Compare(a, b);
        if (c != 0) return c;
      }
      return 0;
    };
    auto better = [&](uint32_t a, uint32_t b) {
      const int c = compare_order(a, b);
      return c != 0 ? c < 0 : a < b;
    };
    TESSERA_ASSIGN_OR_RETURN(PoolArray<uint32_t> partition_of, PoolArray<uint32_t>::Allocate(op_->pool_, n));
    const std::vector<uint32_t> rows = NumberPartitions(n, hashes, partition_of.data());
    // Partitions of more than `limit` elements get a heap of `limit` slots in `heaps`.
    std::vector<uint32_t> heap_start(rows.size());
    std::vector<uint32_t> heap_size(rows.size(), 0);
    size_t slots = 0;
    for (size_t p = 0; p < rows.size(); ++p) {
      if (rows[p] <= limit) continue;
      heap_start[p] = static_cast<uint32_t>(slots);
      slots += limit;
    }
    if (slots == 0) return n;
    TESSERA_ASSIGN_OR_RETURN(PoolArray<uint32_t> heaps, PoolArray<uint32_t>::Allocate(op_->pool_, slots));
    for (uint32_t e = 0; e < n; ++e) {
      const uint32_t p = partition_of[e];
      if (rows[p] <= limit) continue;
      uint32_t* heap = heaps.data() + heap_start[p];
      if (heap_size[p] < limit) {
        heap[heap_size[p]++] = e;
        std::push_heap(heap, heap + heap_size[p], better);
      } else if (better(e, heap[0])) {
        std::pop_heap(heap, heap + limit, better);
        heap[limit - 1] = e;
        std::push_heap(heap, heap + limit, better);
      }
    }
    // Decide every element before moving any (a SortColumn of INTERVALs reads the row arrays when comparing).
    constexpr uint32_t kDropped = std::numeric_limits<uint32_t>::max();
    const bool ties = spec.functions[spec.limit_function].kind == Kind::kRank;
    for (uint32_t e = 0; e < n; ++e) {
      const uint32_t p = partition_of[e];
      if (rows[p] <= limit) continue;
      const uint32_t worst = heaps[heap_start[p]];
      if (ties ? compare_order(e, worst) > 0 : better(worst, e)) partition_of[e] = kDropped;
    }
    uint32_t kept = 0;
    for (uint32_t e = 0; e < n; ++e) {
      if (partition_of[e] == kDropped) continue;
      if (hashes != nullptr) hashes[kept] = hashes[e];
      row_blocks_[kept] = row_blocks_[e];
      row_numbers_[kept++] = row_numbers_[e];
    }
    return kept;
  }

  // Sorts with SortColumn comparisons: any key types.
  void SortGeneric(uint32_t n, std::vector<uint32_t>* partition_starts) {
    const WindowSpec& spec = op_->spec_;
    const std::vector<ColumnSchema>& schema = op_->input_->schema();
    std::vector<SortColumn> partition_keys;
    std::vector<SortColumn> order_keys;
    partition_keys.reserve(spec.partition_columns.size());
    order_keys.reserve(spec.order_keys.size());
    for (int column : spec.partition_columns) {
      partition_keys.emplace_back(row_blocks_.data(), row_numbers_.data(), n, SortKey{column, true, false},
                                  schema[column].type);
    }
    for (const SortKey& key : spec.order_keys) {
      order_keys.emplace_back(row_blocks_.data(), row_numbers_.data(), n, key, schema[key.column].type);
    }
    std::iota(order_.begin(), order_.end(), 0u);
    std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
      for (const SortColumn& key : partition_keys) {
        const int c = key.Compare(a, b);
        if (c != 0) return c < 0;
      }
      for (const SortColumn& key : order_keys) {
        const int c = key.Compare(a, b);
        if (c != 0) return c < 0;
      }
      return a < b;
    });
    auto differs = [&](const std::vector<SortColumn>& keys, uint32_t s) {
      for (const SortColumn& key : keys) {
        if (key.Compare(order_[s - 1], order_[s]) != 0) return true;
      }
      return false;
    };
    for (uint32_t s = 1; s < n; ++s) {
      const bool new_partition = differs(partition_keys, s);
      if (new_partition) partition_starts->push_back(s);
      peer_start_[s] = new_partition || differs(order_keys, s) ? s : peer_start_[s - 1];
    }
  }

  // Each key as one order-preserving 64-bit word (direction and NULL placement applied): fixed-width keys
  // whose NULLs can take a code below (NULLS FIRST) or above (NULLS LAST) every value of this group. False
  // when a key does not fit (strings, intervals, a NULL beside the extreme code).
  bool EncodeKey(uint32_t n, int column, const Type& type, bool ascending, bool nulls_first, uint64_t* words,
                 size_t stride) const {
    auto encode = [&](auto read) {
      bool nulls = false;
      uint64_t low = ~uint64_t{0}, high = 0;
      for (uint32_t e = 0; e < n; ++e) {
        const BlockView& block = *row_blocks_[e];
        const uint32_t row = row_numbers_[e];
        if (block.IsNull(column, row)) {
          nulls = true;
          continue;
        }
        uint64_t word = read(block, row);
        if (!ascending) word = ~word;
        low = std::min(low, word);
        high = std::max(high, word);
        words[static_cast<size_t>(e) * stride] = word;
      }
      if (!nulls) return true;
      if (nulls_first ? low == 0 : high == ~uint64_t{0}) return false;
      const uint64_t null_word = nulls_first ? 0 : ~uint64_t{0};
      for (uint32_t e = 0; e < n; ++e) {
        if (row_blocks_[e]->IsNull(column, row_numbers_[e])) words[static_cast<size_t>(e) * stride] = null_word;
      }
      return true;
    };
    constexpr uint64_t kSign = uint64_t{1} << 63;
    auto signed_word = [](int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); };
    switch (type.id()) {
      case TypeId::kBoolean:
        return encode([&](const BlockView& b, uint32_t r) { return uint64_t{b.Values<uint8_t>(column)[r]}; });
      case TypeId::kInteger:
      case TypeId::kDate:
        return encode([&](const BlockView& b, uint32_t r) { return signed_word(b.Values<int32_t>(column)[r]); });
      case TypeId::kBigInt:
      case TypeId::kTimestamp:
        return encode([&](const BlockView& b, uint32_t r) { return signed_word(b.Values<int64_t>(column)[r]); });
      case TypeId::kDecimal:
        if (type.IsWideDecimal()) return false;
        return encode([&](const BlockView& b, uint32_t r) { return signed_word(b.Values<int64_t>(column)[r]); });
      case TypeId::kDouble:
        return encode([&](const BlockView& b, uint32_t r) {
          const double value = b.Values<double>(column)[r];
          uint64_t bits;
          std::memcpy(&bits, &value, sizeof(bits));
          // Negative numbers: all bits flipped; others: the sign bit set. (-0.0 orders before 0.0.)
          return (bits & kSign) != 0 ? ~bits : bits | kSign;
        });
      default:
        return false;
    }
  }

  template <size_t kKeys>
  struct Encoded {
    std::array<uint64_t, kKeys> words;
    uint32_t element;
  };

  // `partition_ids` (null: the PARTITION BY keys are encoded) stand for the PARTITION BY keys as one word.
  template <size_t kKeys>
  absl::StatusOr<bool> SortEncodedWith(uint32_t n, const uint32_t* partition_ids,
                                       std::vector<uint32_t>* partition_starts) {
    const WindowSpec& spec = op_->spec_;
    const std::vector<ColumnSchema>& schema = op_->input_->schema();
    TESSERA_ASSIGN_OR_RETURN(PoolArray<Encoded<kKeys>> entries, PoolArray<Encoded<kKeys>>::Allocate(op_->pool_, n));
    constexpr size_t stride = sizeof(Encoded<kKeys>) / sizeof(uint64_t);
    static_assert(sizeof(Encoded<kKeys>) % sizeof(uint64_t) == 0);
    uint64_t* base = reinterpret_cast<uint64_t*>(entries.data());
    size_t k = 0;
    if (partition_ids != nullptr) {
      for (uint32_t e = 0; e < n; ++e) base[static_cast<size_t>(e) * stride] = partition_ids[e];
      k = 1;
    } else {
      for (int column : spec.partition_columns) {
        if (!EncodeKey(n, column, schema[column].type, true, false, base + k++, stride)) return false;
      }
    }
    for (const SortKey& key : spec.order_keys) {
      if (!EncodeKey(n, key.column, schema[key.column].type, key.ascending, key.nulls_first, base + k++, stride)) {
        return false;
      }
    }
    for (uint32_t e = 0; e < n; ++e) entries[e].element = e;
    // Word by word (std::array's operators call memcmp, which was half of the sort's time).
    std::sort(entries.begin(), entries.end(), [](const Encoded<kKeys>& a, const Encoded<kKeys>& b) {
      for (size_t i = 0; i < kKeys; ++i) {
        if (a.words[i] != b.words[i]) return a.words[i] < b.words[i];
      }
      return a.element < b.element;
    });
    for (uint32_t s = 0; s < n; ++s) order_[s] = entries[s].element;
    const size_t partition_words = partition_ids != nullptr ? 1 : spec.partition_columns.size();
    for (uint32_t s = 1; s < n; ++s) {
      const auto& previous = entries[s - 1].words;
      const auto& current = entries[s].words;
      size_t first_difference = 0;
      while (first_difference < kKeys && previous[first_difference] == current[first_difference]) ++first_difference;
      const bool new_partition = first_difference < partition_words;
      if (new_partition) partition_starts->push_back(s);
      peer_start_[s] = first_difference < kKeys ? s : peer_start_[s - 1];
    }
    return true;
  }

  // The sort on encoded keys (Encoded entries: the keys and the element, compared as words), for up to four
  // fixed-width keys: about 3x faster than SortColumn comparisons on lineitem (no indirection per compare).
  // PARTITION BY keys that do not encode (strings, more than four keys in all) are numbered by NumberPartitions
  // from `hashes` (null without PARTITION BY) and sorted as one word: the partitions need only be contiguous.
  // False when the keys do not fit either way (the ORDER BY keys).
  absl::StatusOr<bool> SortEncoded(uint32_t n, const uint64_t* hashes, std::vector<uint32_t>* partition_starts) {
    const size_t order_keys = op_->spec_.order_keys.size();
    const size_t keys = op_->spec_.partition_columns.size() + order_keys;
    if (keys == 0) {  // one partition of peers, in input order
      std::iota(order_.begin(), order_.end(), 0u);
      std::fill(peer_start_.begin(), peer_start_.end(), 0u);
      return true;
    }
    TESSERA_ASSIGN_OR_RETURN(bool sorted, SortEncodedWords(keys, n, nullptr, partition_starts));
    if (sorted || hashes == nullptr || order_keys + 1 > 4) return sorted;
    TESSERA_ASSIGN_OR_RETURN(PoolArray<uint32_t> partition_ids, PoolArray<uint32_t>::Allocate(op_->pool_, n));
    NumberPartitions(n, hashes, partition_ids.data());
    return SortEncodedWords(order_keys + 1, n, partition_ids.data(), partition_starts);
  }

  absl::StatusOr<bool> SortEncodedWords(size_t words, uint32_t n, const uint32_t* partition_ids,
                                        std::vector<uint32_t>* partition_starts) {
    switch (words) {
      case 1:
        return SortEncodedWith<1>(n, partition_ids, partition_starts);
      case 2:
        return SortEncodedWith<2>(n, partition_ids, partition_starts);
      case 3:
        return SortEncodedWith<3>(n, partition_ids, partition_starts);
      case 4:
        return SortEncodedWith<4>(n, partition_ids, partition_starts);
      default:
        return false;
    }
  }

  // The argument of `function` at sorted position s as an exact integer (INTEGER, BIGINT, DECIMAL).
  int128 ExactArgument(const WindowFunctionSpec& function, const Type& type, uint32_t s) const {
    const uint32_t e = order_[s];
    const BlockView& block = *row_blocks_[e];
    const uint32_t row = row_numbers_[e];
    switch (type.id()) {
      case TypeId::kInteger:
      case TypeId::kDate:
        return block.Values<int32_t>(function.argument)[row];
      case TypeId::kDecimal:
        if (type.IsWideDecimal()) {  // block values are only 8-byte aligned
          int128 value;
          std::memcpy(&value, block.Values<uint8_t>(function.argument) + sizeof(int128) * row, sizeof(value));
          return value;
        }
        return block.Values<int64_t>(function.argument)[row];
      default:
        return block.Values<int64_t>(function.argument)[row];
    }
  }
  bool ArgumentIsNull(const WindowFunctionSpec& function, uint32_t s) const {
    const uint32_t e = order_[s];
    return row_blocks_[e]->IsNull(function.argument, row_numbers_[e]);
  }
  double DoubleArgument(const WindowFunctionSpec& function, uint32_t s) const {
    const uint32_t e = order_[s];
    return row_blocks_[e]->Values<double>(function.argument)[row_numbers_[e]];
  }

  // Computes `function` for the sorted positions [begin, end), one partition.
  absl::Status Compute(const WindowFunctionSpec& function, uint32_t begin, uint32_t end, FunctionResult* result) {
    const int64_t rows = end - begin;
    int64_t* integers = result->integers.data();
    switch (function.kind) {
      case Kind::kRowNumber:
        for (uint32_t s = begin; s < end; ++s) integers[s] = s - begin + 1;
        return absl::OkStatus();
      case Kind::kRank:
        for (uint32_t s = begin; s < end; ++s) integers[s] = peer_start_[s] - begin + 1;
        return absl::OkStatus();
      case Kind::kDenseRank: {
        int64_t rank = 0;
        for (uint32_t s = begin; s < end; ++s) {
          if (peer_start_[s] == s) ++rank;
          integers[s] = rank;
        }
        return absl::OkStatus();
      }
      case Kind::kPercentRank:
        for (uint32_t s = begin; s < end; ++s) {
          result->doubles[s] =
              rows > 1 ? static_cast<double>(peer_start_[s] - begin) / static_cast<double>(rows - 1) : 0.0;
        }
        return absl::OkStatus();
      case Kind::kCumeDist:
        for (uint32_t s = begin; s < end; ++s) {
          result->doubles[s] = static_cast<double>(peer_end_[s] - begin) / static_cast<double>(rows);
        }
        return absl::OkStatus();
      case Kind::kNtile:
        for (uint32_t s = begin; s < end; ++s) integers[s] = NtileBucket(s - begin, rows, function.parameter);
        return absl::OkStatus();
      case Kind::kLag:
      case Kind::kLead: {
        const int64_t offset = std::min<int64_t>(function.parameter, rows);
        const int64_t outside = function.default_value.is_null() ? kNoRow : kDefaultRow;
        for (uint32_t s = begin; s < end; ++s) {
          const int64_t source =
              function.kind == Kind::kLag ? static_cast<int64_t>(s) - offset : static_cast<int64_t>(s) + offset;
          integers[s] = source >= begin && source < end ? source : outside;
        }
        return absl::OkStatus();
      }
      case Kind::kFirstValue:
      case Kind::kLastValue:
      case Kind::kNthValue:
        for (uint32_t s = begin; s < end; ++s) {
          uint32_t first, last;
          FrameOf(function, s, begin, end, peer_start_.data(), peer_end_.data(), &first, &last);
          int64_t source = kNoRow;
          if (function.kind == Kind::kFirstValue) {
            if (first < last) source = first;
          } else if (function.kind == Kind::kLastValue) {
            if (first < last) source = last - 1;
          } else if (function.parameter <= static_cast<int64_t>(last - first)) {
            source = first + function.parameter - 1;
          }
          integers[s] = source;
        }
        return absl::OkStatus();
      case Kind::kCountStar:
      case Kind::kCount:
      case Kind::kSum:
      case Kind::kAvg:
        return ComputeSums(function, begin, end, result);
      case Kind::kMin:
      case Kind::kMax:
        return ComputeExtremes(function, begin, end, result);
    }
    return absl::OkStatus();
  }

  // COUNT / SUM / AVG over each row's frame from prefix sums: O(1) per row however wide the frame. A frame
  // that starts at the partition's first row (the default frame) reads prefix[end] alone, so its sums are
  // accumulated in row order.
  absl::Status ComputeSums(const WindowFunctionSpec& function, uint32_t begin, uint32_t end, FunctionResult* result) {
    const uint32_t rows = end - begin;
    const bool star = function.kind == Kind::kCountStar;
    const Type argument_type = star ? Type::BigInt() : op_->input_->schema()[function.argument].type;
    const bool floating = !star && argument_type.id() == TypeId::kDouble;
    const bool summing = function.kind == Kind::kSum || function.kind == Kind::kAvg;
    counts_.resize(rows + 1);
    counts_[0] = 0;
    if (summing && floating) {
      double_sums_.resize(rows + 1);
      double_sums_[0] = 0;
    } else if (summing) {
      exact_sums_.resize(rows + 1);
      exact_sums_[0] = 0;
    }
    for (uint32_t i = 0; i < rows; ++i) {
      const uint32_t s = begin + i;
      const bool present = star || !ArgumentIsNull(function, s);
      counts_[i + 1] = counts_[i] + (present ? 1 : 0);
      if (!summing) continue;
      if (floating) {
        double_sums_[i + 1] = double_sums_[i] + (present ? DoubleArgument(function, s) : 0.0);
      } else {
        exact_sums_[i + 1] = exact_sums_[i] + (present ? ExactArgument(function, argument_type, s) : 0);
      }
    }
    const int scale = argument_type.id() == TypeId::kDecimal ? argument_type.scale() : 0;
    const double scale_factor = static_cast<double>(PowerOfTen(scale));
    const Type& result_type = function.result_type;
    for (uint32_t s = begin; s < end; ++s) {
      uint32_t first, last;
      FrameOf(function, s, begin, end, peer_start_.data(), peer_end_.data(), &first, &last);
      const int64_t count = counts_[last - begin] - counts_[first - begin];
      if (!summing) {
        result->integers[s] = count;
        continue;
      }
      if (count == 0) {
        result->nulls[s] = 1;
        continue;
      }
      if (floating) {
        const double sum = double_sums_[last - begin] - double_sums_[first - begin];
        result->doubles[s] = function.kind == Kind::kAvg ? sum / static_cast<double>(count) : sum;
        continue;
      }
      const int128 sum = exact_sums_[last - begin] - exact_sums_[first - begin];
      if (function.kind == Kind::kAvg) {
        // As the aggregate: divide exactly first, so the only rounding is the final conversion.
        const int128 quotient = sum / count;
        const int128 remainder = sum % count;
        const double average =
            static_cast<double>(quotient) + static_cast<double>(remainder) / static_cast<double>(count);
        result->doubles[s] = average / scale_factor;
      } else if (result_type.id() == TypeId::kBigInt) {
        if (sum > std::numeric_limits<int64_t>::max() || sum < std::numeric_limits<int64_t>::min()) {
          return absl::OutOfRangeError("BIGINT out of range");
        }
        result->integers[s] = static_cast<int64_t>(sum);
      } else {
        if (!FitsDecimalPrecision(sum, result_type.precision())) return absl::OutOfRangeError("DECIMAL overflow");
        if (result->form == ResultForm::kWide) {
          result->wide[s] = sum;
        } else {
          result->integers[s] = static_cast<int64_t>(sum);
        }
      }
    }
    return absl::OkStatus();
  }

  // MIN / MAX: the frame's start and end only move forward, so a deque of positions whose values are
  // monotonic (the best at the front) gives each row's extreme in amortized O(1).
  absl::Status ComputeExtremes(const WindowFunctionSpec& function, uint32_t begin, uint32_t end,
                               FunctionResult* result) {
    const uint32_t rows = end - begin;
    // The argument values of this partition, decoded once; index i is sorted position begin + i.
    extreme_blocks_.resize(rows);
    extreme_rows_.resize(rows);
    for (uint32_t i = 0; i < rows; ++i) {
      extreme_blocks_[i] = row_blocks_[order_[begin + i]];
      extreme_rows_[i] = row_numbers_[order_[begin + i]];
    }
    const SortColumn values(extreme_blocks_.data(), extreme_rows_.data(), rows,
                            SortKey{function.argument, function.kind == Kind::kMin, false},
                            op_->input_->schema()[function.argument].type);
    // Compare(a, b) < 0: a is the better extreme (MIN ascending, MAX descending).
    deque_.resize(rows);
    uint32_t head = 0, tail = 0;  // deque_[head, tail)
    uint32_t entered = 0;         // positions [0, entered) have been offered to the deque
    for (uint32_t s = begin; s < end; ++s) {
      uint32_t first, last;
      FrameOf(function, s, begin, end, peer_start_.data(), peer_end_.data(), &first, &last);
      for (; entered < last - begin; ++entered) {
        if (values.IsNull(entered)) continue;
        while (tail > head && values.Compare(entered, deque_[tail - 1]) <= 0) --tail;
        deque_[tail++] = entered;
      }
      while (tail > head && deque_[head] < first - begin) ++head;
      result->integers[s] = tail > head ? static_cast<int64_t>(begin + deque_[head]) : kNoRow;
    }
    return absl::OkStatus();
  }

  // Writes the input columns and the function results in sorted order, a vector of rows at a time.
  absl::Status Write(const std::vector<FunctionResult>& results, const WorkOrderContext& context) {
    const WindowSpec& spec = op_->spec_;
    const std::vector<ColumnSchema>& output_schema = op_->output_->schema();
    const size_t input_width = spec.output_columns.size();
    VectorBlockWriter writer(op_->output_.get());
    std::vector<ColumnVector> columns;
    for (const ColumnSchema& column : output_schema) columns.emplace_back(column.type);
    std::vector<const ColumnVector*> column_pointers;
    for (const ColumnVector& column : columns) column_pointers.push_back(&column);
    std::vector<const BlockView*> chunk_blocks(kVectorSize);
    std::vector<uint32_t> chunk_rows(kVectorSize);
    std::vector<const BlockView*> source_blocks(kVectorSize);
    std::vector<uint32_t> source_rows(kVectorSize);
    const uint32_t n = n_;
    for (uint32_t start = 0; start < n; start += kVectorSize) {
      if (context.Cancelled()) return absl::CancelledError("query cancelled");
      const uint32_t count = std::min(kVectorSize, n - start);
      for (uint32_t i = 0; i < count; ++i) {
        chunk_blocks[i] = row_blocks_[order_[start + i]];
        chunk_rows[i] = row_numbers_[order_[start + i]];
      }
      for (size_t c = 0; c < input_width; ++c) {
        columns[c].ResetOwned(count);
        GatherBlockValues(chunk_blocks.data(), chunk_rows.data(), count, spec.output_columns[c], &columns[c]);
      }
      for (size_t f = 0; f < results.size(); ++f) {
        const FunctionResult& result = results[f];
        ColumnVector& out = columns[input_width + f];
        out.ResetOwned(count);
        switch (result.form) {
          case ResultForm::kInteger: {
            int64_t* values = out.mutable_values<int64_t>();
            for (uint32_t i = 0; i < count; ++i) values[i] = result.integers[start + i];
            break;
          }
          case ResultForm::kDouble: {
            double* values = out.mutable_values<double>();
            for (uint32_t i = 0; i < count; ++i) values[i] = result.doubles[start + i];
            break;
          }
          case ResultForm::kWide: {
            int128* values = out.mutable_values<int128>();
            for (uint32_t i = 0; i < count; ++i) values[i] = result.wide[start + i];
            break;
          }
          case ResultForm::kSourceRow: {
            // Gather the argument from the source rows (the row itself stands in where there is none).
            for (uint32_t i = 0; i < count; ++i) {
              const int64_t source = result.integers[start + i];
              source_blocks[i] = source >= 0 ? row_blocks_[order_[source]] : chunk_blocks[i];
              source_rows[i] = source >= 0 ? row_numbers_[order_[source]] : chunk_rows[i];
            }
            GatherBlockValues(source_blocks.data(), source_rows.data(), count, spec.functions[f].argument, &out);
            for (uint32_t i = 0; i < count; ++i) {
              const int64_t source = result.integers[start + i];
              if (source == kNoRow) out.SetNull(i);
              if (source == kDefaultRow) {  // the stand-in row's NULL flag may have come along
                SetRowValue(spec.functions[f].default_value, i, &out);
                if (out.IsNull(i)) SetBit(out.MutableValidity(), i);
              }
            }
            break;
          }
        }
        if (result.nulls.size() > 0) {
          for (uint32_t i = 0; i < count; ++i) {
            if (result.nulls[start + i]) out.SetNull(i);
          }
        }
      }
      TESSERA_RETURN_IF_ERROR(writer.Append(column_pointers, nullptr, count));
    }
    return writer.Flush();
  }

  WindowOperator* op_;
  const uint32_t group_;
  // Element e (input order) is row row_numbers_[e] of *row_blocks_[e]; order_[s] is the element at sorted
  // position s.
  uint32_t n_ = 0;  // the group's rows
  PoolArray<const BlockView*> row_blocks_;
  PoolArray<uint32_t> row_numbers_;
  PoolArray<uint32_t> order_;
  PoolArray<uint32_t> peer_start_;  // first sorted position of s's peer group (its partition's rows with equal
  PoolArray<uint32_t> peer_end_;    // ORDER BY keys), and one past its last
  // Scratch of ComputeSums / ComputeExtremes, reused across partitions.
  std::vector<int64_t> counts_;
  std::vector<int128> exact_sums_;
  std::vector<double> double_sums_;
  std::vector<const BlockView*> extreme_blocks_;
  std::vector<uint32_t> extreme_rows_;
  std::vector<uint32_t> deque_;
};

WindowOperator::WindowOperator(std::shared_ptr<TemporaryRelation> input, WindowSpec spec, BufferPool* pool)
    : RelationalOperator("Window"), input_(std::move(input)), spec_(std::move(spec)), pool_(pool) {
  std::vector<ColumnSchema> schema;
  for (int column : spec_.output_columns) schema.push_back(input_->schema()[column]);
  for (size_t f = 0; f < spec_.functions.size(); ++f) {
    schema.push_back({absl::StrCat("window_", f), spec_.functions[f].result_type, false, {}});
  }
  output_ = std::make_shared<TemporaryRelation>(std::move(schema), pool);
}

WindowOperator::~WindowOperator() = default;

int64_t WindowOperator::EstimatedWorkOrders() const {
  return (spec_.partition_columns.empty() ? 0 : static_cast<int64_t>(blocks_fed_)) + group_count();
}

bool WindowOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!input_done_ || compute_issued_) return compute_issued_;
  const bool partitioned = !spec_.partition_columns.empty();
  if (!partitions_issued_) {
    for (uint32_t b = 0; b < input_->block_count(); ++b) blocks_.push_back(input_->block(b));
    partitions_.resize(blocks_.size());
    if (partitioned) {
      for (uint32_t b = 0; b < blocks_.size(); ++b) out->push_back(std::make_unique<PartitionWorkOrder>(this, b));
    }
    partitions_issued_ = true;
  }
  if (partitioned && partitions_finished_.load() < blocks_.size()) return false;
  for (uint32_t g = 0; g < group_count(); ++g) out->push_back(std::make_unique<ComputeWorkOrder>(this, g));
  compute_issued_ = true;
  return true;
}

void WindowOperator::OnAllWorkOrdersFinished() { std::vector<BlockPartitions>().swap(partitions_); }

}  // namespace tessera
