// Hash aggregation on TPC-H-shaped inputs: the engine's AggregationTable (per-worker partial tables, then the
// partitioned merge that writes the groups, exactly as AggregationOperator runs them) against one shared
// concurrent table that all threads update (built here, for this comparison only), with 1 and 2 threads.
// A Google Benchmark program: rows/s of each table side by side, with vs_engine (rate over the engine table's in
// the same run) and a check that every table gives the engine's groups (exit status 1 otherwise); see README.md
// here, and docs/decisions/0003-hash-aggregation.md for the figures.
//
// The shapes avg and median (engine table alone) measure the holistic aggregates' value lists against AVG over
// the same input: vs_avg is median's rows/s over avg's in the same run.
//
// Usage: aggregation_benchmark [--repeats=R] [--threads=1,2] [--shapes=q1,q1-char,q18,q13,avg,median] [--scale=1.0]
//          [--benchmark_filter=...] (--help lists all flags)

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/google_benchmark_flags.h"
#include "common/bitmap.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "relational_operators/aggregation_table.h"
#include "relational_operators/key_hashing.h"
#include "relational_operators/vector_block_writer.h"
#include "storage/buffer_pool.h"
#include "storage/topology.h"

DEFINE_int32(repeats, 3, "iterations of each benchmark (each one aggregates the whole input)");
DEFINE_string(threads, "1,2", "comma-separated thread counts");
DEFINE_string(shapes, "q1,q1-char,q18,q13,avg,median",
              "comma-separated input shapes: q1, q1-char, q18, q13, avg, median");
DEFINE_double(scale, 1.0, "input size relative to TPC-H SF1 (q1: 6M rows at 1.0)");

namespace tessera {
namespace {

double g_scale = 1.0;
std::vector<int> g_threads = {1, 2};
std::vector<std::string> g_shapes = {"q1", "q1-char", "q18", "q13", "avg", "median"};

// Rows handed to a thread at a time: about one 2 MiB lineitem block, so that, as in the engine, a worker sees
// contiguous runs of the input.
constexpr uint32_t kRowsPerGrab = 16 * kVectorSize;

// One input: columns of `rows` values, a key column (BIGINT, INTEGER or two CHAR(1)) and the arguments.
struct Shape {
  std::string name;
  std::string description;
  size_t rows = 0;
  size_t groups = 0;  // distinct keys (the shared table is sized from it)
  Type key_type;
  int key_columns = 1;
  std::vector<int64_t> keys64;
  std::vector<int32_t> keys32;
  std::vector<std::string_view> char_keys[2];
  std::vector<AggregateKind> kinds;
  std::vector<Type> argument_types;             // per call (unused for COUNT(*))
  std::vector<std::vector<int64_t>> arguments;  // per call, int64 physical values (empty for COUNT(*))
  std::vector<std::vector<uint8_t>> validity;   // per call: empty = no NULLs
};

uint64_t g_random = 0x9E3779B97F4A7C15ULL;
uint64_t NextRandom() {
  g_random ^= g_random << 13;
  g_random ^= g_random >> 7;
  g_random ^= g_random << 17;
  return g_random;
}

// TPC-H Q1: GROUP BY l_returnflag, l_linestatus (4 groups in the proportions of lineitem) over 6M rows;
// SUM(l_quantity), SUM(l_extendedprice), AVG(l_discount), COUNT(*). With one BIGINT key (the two flags
// packed), so that the shared table has a single 64-bit key, or with the two CHAR(1) columns as the engine
// sees them.
Shape MakeQ1(bool char_keys) {
  Shape s;
  s.name = char_keys ? "q1-char" : "q1";
  s.description = char_keys ? "Q1: 4 groups, 2 CHAR(1) keys" : "Q1: 4 groups, BIGINT key";
  s.rows = static_cast<size_t>(6'000'000 * g_scale);
  s.groups = 4;
  s.key_type = char_keys ? Type::Char(1) : Type::BigInt();
  s.key_columns = char_keys ? 2 : 1;
  s.kinds = {AggregateKind::kSum, AggregateKind::kSum, AggregateKind::kAvg, AggregateKind::kCountStar};
  const Type money = Type::Decimal(15, 2);
  s.argument_types = {money, money, money, Type::BigInt()};
  s.arguments.resize(4);
  s.validity.resize(4);
  static const std::string_view kFlags[4][2] = {{"A", "F"}, {"N", "F"}, {"N", "O"}, {"R", "F"}};
  for (size_t r = 0; r < s.rows; ++r) {
    const uint64_t x = NextRandom() % 1000;
    const int group = x < 247 ? 0 : x < 254 ? 1 : x < 754 ? 2 : 3;
    if (char_keys) {
      s.char_keys[0].push_back(kFlags[group][0]);
      s.char_keys[1].push_back(kFlags[group][1]);
    } else {
      s.keys64.push_back(group);
    }
    const int64_t quantity = 1 + static_cast<int64_t>(NextRandom() % 50);
    s.arguments[0].push_back(quantity * 100);
    s.arguments[1].push_back(quantity * (90000 + static_cast<int64_t>(NextRandom() % 20000)));
    s.arguments[2].push_back(static_cast<int64_t>(NextRandom() % 11));
  }
  return s;
}

// TPC-H Q18's inner aggregation: GROUP BY l_orderkey over lineitem (6M rows, 1.5M orders of 1 to 7 lines,
// rows clustered by order as in lineitem), SUM(l_quantity).
Shape MakeQ18() {
  Shape s;
  s.name = "q18";
  s.description = "Q18: 1.5M groups, BIGINT key";
  s.key_type = Type::BigInt();
  s.kinds = {AggregateKind::kSum};
  s.argument_types = {Type::Decimal(15, 2)};
  s.arguments.resize(1);
  s.validity.resize(1);
  const size_t orders = static_cast<size_t>(1'500'000 * g_scale);
  for (size_t o = 0; o < orders; ++o) {
    const int lines = 1 + static_cast<int>(NextRandom() % 7);
    for (int l = 0; l < lines; ++l) {
      s.keys64.push_back(static_cast<int64_t>(o / 8 * 32 + o % 8 + 1));  // TPC-H's sparse order keys
      s.arguments[0].push_back((1 + static_cast<int64_t>(NextRandom() % 50)) * 100);
    }
  }
  s.rows = s.keys64.size();
  s.groups = orders;
  return s;
}

// TPC-H Q13's inner aggregation: GROUP BY c_custkey over customer LEFT JOIN orders (1.5M orders of 100k of
// the 150k customers, in order-key order, i.e. customers in random order; then the 50k customers without
// orders with a NULL o_orderkey), COUNT(o_orderkey).
Shape MakeQ13() {
  Shape s;
  s.name = "q13";
  s.description = "Q13: 150k groups, INTEGER key";
  s.key_type = Type::Integer();
  s.kinds = {AggregateKind::kCount};
  s.argument_types = {Type::BigInt()};
  s.arguments.resize(1);
  s.validity.resize(1);
  const int32_t customers = static_cast<int32_t>(150'000 * g_scale);
  const size_t orders = static_cast<size_t>(1'500'000 * g_scale);
  for (size_t o = 0; o < orders; ++o) {
    int32_t customer = 1 + static_cast<int32_t>(NextRandom() % customers);
    if (customer % 3 == 0) customer = customer == customers ? 1 : customer + 1;  // a third have no orders
    s.keys32.push_back(customer);
    s.arguments[0].push_back(static_cast<int64_t>(o + 1));
  }
  for (int32_t c = 3; c <= customers; c += 3) {
    s.keys32.push_back(c);
    s.arguments[0].push_back(0);
  }
  s.rows = s.keys32.size();
  s.groups = static_cast<size_t>(customers);
  std::vector<uint8_t>& validity = s.validity[0];
  validity.assign((s.rows + 7) / 8 + 8, 0);
  for (size_t r = 0; r < orders; ++r) SetBit(validity.data(), r);
  return s;
}

// AVG or MEDIAN of a DECIMAL(15,2) price (lineitem's l_extendedprice range) over 6M rows in 10k groups of one
// BIGINT key in random order: a median keeps every value of its group (600 on average), AVG a sum and a count.
Shape MakeValueAggregate(AggregateKind kind) {
  Shape s;
  s.name = kind == AggregateKind::kAvg ? "avg" : "median";
  s.description = kind == AggregateKind::kAvg ? "AVG(DECIMAL(15,2)), 10k groups" : "MEDIAN(DECIMAL(15,2)), 10k groups";
  s.key_type = Type::BigInt();
  s.kinds = {kind};
  s.argument_types = {Type::Decimal(15, 2)};
  s.arguments.resize(1);
  s.validity.resize(1);
  s.rows = static_cast<size_t>(6'000'000 * g_scale);
  s.groups = std::max<size_t>(1, static_cast<size_t>(10'000 * g_scale));
  uint64_t saved = g_random;  // both shapes get the same rows
  g_random = 0x2545F4914F6CDD1DULL;
  for (size_t r = 0; r < s.rows; ++r) {
    s.keys64.push_back(static_cast<int64_t>(NextRandom() % s.groups));
    s.arguments[0].push_back(90000 + static_cast<int64_t>(NextRandom() % 10'000'000));
  }
  g_random = saved;
  return s;
}

AggregationSpec MakeSpec(const Shape& s) {
  AggregationSpec spec;
  for (int k = 0; k < s.key_columns; ++k) {
    spec.group_by.push_back(MakeColumn(k, s.key_type));
    spec.output_names.push_back("k" + std::to_string(k));
  }
  for (size_t c = 0; c < s.kinds.size(); ++c) {
    AggregationSpec::Call call;
    call.kind = s.kinds[c];
    const Type& type = s.argument_types[c];
    if (call.kind != AggregateKind::kCountStar) call.argument = MakeColumn(static_cast<int>(c), type);
    switch (call.kind) {
      case AggregateKind::kCountStar:
      case AggregateKind::kCount:
        call.result_type = Type::BigInt();
        break;
      case AggregateKind::kSum:
        call.result_type = Type::Decimal(38, type.scale());
        break;
      case AggregateKind::kAvg:
        call.result_type = Type::Decimal(38, std::max(type.scale(), 6));
        break;
      case AggregateKind::kQuantileCont:  // MEDIAN as the binder makes it: quantile_cont(x, 0.5), x's type
        call.result_type = type;
        call.fraction = Value::Decimal(5, Type::Decimal(2, 1));
        break;
      default:
        call.result_type = type;
        break;
    }
    spec.calls.push_back(std::move(call));
    spec.output_names.push_back("a" + std::to_string(c));
  }
  return spec;
}

// The vectors of one batch [first, first + count) of a shape, borrowed from its columns.
struct BatchVectors {
  std::vector<ColumnVector> keys;
  std::vector<ColumnVector> arguments;
  std::vector<const ColumnVector*> key_pointers;
  std::vector<const ColumnVector*> argument_pointers;

  explicit BatchVectors(const Shape& s) {
    for (int k = 0; k < s.key_columns; ++k) keys.emplace_back(s.key_type);
    for (size_t c = 0; c < s.kinds.size(); ++c) arguments.emplace_back(s.argument_types[c]);
    for (ColumnVector& v : keys) key_pointers.push_back(&v);
    for (size_t c = 0; c < s.kinds.size(); ++c) {
      argument_pointers.push_back(s.kinds[c] == AggregateKind::kCountStar ? nullptr : &arguments[c]);
    }
  }

  void Set(const Shape& s, size_t first, uint32_t count) {
    for (int k = 0; k < s.key_columns; ++k) {
      if (s.key_type.IsString()) {
        keys[k].BorrowStrings(s.char_keys[k].data() + first, nullptr, 0, count);
      } else if (s.key_type.id() == TypeId::kInteger) {
        keys[k].BorrowFixed(s.keys32.data() + first, nullptr, 0, count);
      } else {
        keys[k].BorrowFixed(s.keys64.data() + first, nullptr, 0, count);
      }
    }
    for (size_t c = 0; c < s.kinds.size(); ++c) {
      if (s.kinds[c] == AggregateKind::kCountStar) continue;
      const uint8_t* validity = s.validity[c].empty() ? nullptr : s.validity[c].data() + first / 8;
      arguments[c].BorrowFixed(s.arguments[c].data() + first, validity, static_cast<uint32_t>(first % 8), count);
    }
  }
};

// Runs `body(first_row, rows)` over the shape's rows in grabs of kRowsPerGrab from `threads` threads.
void ForEachGrab(const Shape& s, int threads, const std::function<void(int thread, size_t, uint32_t)>& body) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (true) {
        const size_t first = next.fetch_add(kRowsPerGrab);
        if (first >= s.rows) return;
        body(t, first, static_cast<uint32_t>(std::min<size_t>(kRowsPerGrab, s.rows - first)));
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
}

void ForEachTask(int tasks, int threads, const std::function<void(int task)>& body) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int task = next.fetch_add(1); task < tasks; task = next.fetch_add(1)) body(task);
    });
  }
  for (std::thread& thread : pool) thread.join();
}

// (a) The engine's way: per-thread partial tables, then the partitioned merge writing the output.
void RunPartialTables(const Shape& s, const AggregationSpec& spec, int threads, BufferPool* pool,
                      TemporaryRelation* output, double* update_seconds) {
  std::vector<std::unique_ptr<AggregationTable>> tables;
  for (int t = 0; t < threads; ++t) tables.push_back(std::make_unique<AggregationTable>(spec, pool));
  const int64_t start = MonotonicNanos();
  ForEachGrab(s, threads, [&](int t, size_t first, uint32_t rows) {
    BatchVectors batch(s);
    for (uint32_t done = 0; done < rows; done += kVectorSize) {
      const uint32_t count = std::min(kVectorSize, rows - done);
      batch.Set(s, first + done, count);
      const absl::Status status = tables[t]->Update(batch.key_pointers, batch.argument_pointers, nullptr, count, count);
      if (!status.ok()) std::fprintf(stderr, "update failed: %s\n", status.ToString().c_str());
    }
  });
  *update_seconds = static_cast<double>(MonotonicNanos() - start) * 1e-9;
  size_t groups = 0;
  for (const auto& table : tables) groups += table->group_count();
  // The operator's rule (aggregation_operator.cc): one merge work order below 50,000 groups.
  const int partitions = groups < 50000 ? 1 : static_cast<int>(AggregationTable::kPartitions);
  ForEachTask(partitions, threads, [&](int p) {
    int64_t written = 0;
    const absl::Status status =
        AggregationTable::MergeAndWrite(spec, tables, partitions == 1 ? -1 : p, pool, output, &written);
    if (!status.ok()) std::fprintf(stderr, "merge failed: %s\n", status.ToString().c_str());
  });
}

// (b) One table shared by all threads, and (c) the same table as per-thread partial tables merged afterwards,
// which tells the layout's gain apart from the sharing's. Open addressing over a fixed capacity (at least
// twice the number of groups, known here in advance; the engine would have to estimate it or grow the table
// under a lock); keys: one 64-bit integer (BIGINT or INTEGER), never INT64_MIN (the empty marker). Shared: a
// slot is claimed by a compare-and-swap on its key, states are updated with relaxed atomic adds. A 128-bit
// sum is two 64-bit words: the low word takes the addend's low half with fetch_add, the high word the
// addend's high half plus the carry out of that add; every add is exact, so the words hold the exact sum once
// all threads are done.
class FixedKeyTable {
 public:
  explicit FixedKeyTable(const Shape& s) : shape_(s), calls_(s.kinds.size()), entry_words_(1 + 3 * calls_) {
    size_t capacity = 16;
    while (capacity < 2 * s.groups) capacity *= 2;
    mask_ = capacity - 1;
    words_.reset(new uint64_t[capacity * entry_words_]);
    for (size_t e = 0; e < capacity; ++e) {
      uint64_t* entry = &words_[e * entry_words_];
      entry[0] = kEmpty;
      std::fill(entry + 1, entry + entry_words_, 0);
    }
  }
  size_t capacity() const { return mask_ + 1; }

  template <bool kShared>
  void Update(size_t first, uint32_t count) {
    const int64_t* keys64 = shape_.key_type.id() == TypeId::kBigInt ? shape_.keys64.data() + first : nullptr;
    const int32_t* keys32 = shape_.key_type.id() == TypeId::kInteger ? shape_.keys32.data() + first : nullptr;
    uint64_t* entry = nullptr;
    int64_t previous = 0;
    for (uint32_t r = 0; r < count; ++r) {
      const int64_t key = keys64 != nullptr ? keys64[r] : keys32[r];
      if (entry == nullptr || key != previous) {
        entry = FindOrInsert<kShared>(static_cast<uint64_t>(key));
        previous = key;
      }
      for (size_t c = 0; c < calls_; ++c) {
        uint64_t* state = entry + 1 + 3 * c;
        switch (shape_.kinds[c]) {
          case AggregateKind::kCountStar:
            Add<kShared>(state[2], 1);
            break;
          case AggregateKind::kCount:
            if (shape_.validity[c].empty() || GetBit(shape_.validity[c].data(), first + r)) {
              Add<kShared>(state[2], 1);
            }
            break;
          default: {
            const int64_t v = shape_.arguments[c][first + r];
            AddWide<kShared>(state, static_cast<uint64_t>(v), v < 0 ? ~uint64_t{0} : 0, 1);
          }
        }
      }
    }
  }

  // Adds the groups in entries [first, first + count) of `other` to this table; several threads may merge
  // disjoint ranges at the same time.
  void MergeFrom(const FixedKeyTable& other, size_t first, size_t count) {
    for (size_t e = first; e < first + count; ++e) {
      const uint64_t* from = &other.words_[e * entry_words_];
      if (from[0] == kEmpty) continue;
      uint64_t* entry = FindOrInsert<true>(from[0]);
      for (size_t c = 0; c < calls_; ++c)
        AddWide<true>(entry + 1 + 3 * c, from[1 + 3 * c], from[2 + 3 * c], from[3 + 3 * c]);
    }
  }

  // Writes the entries [first, first + count) that hold a group.
  absl::Status Write(size_t first, size_t count, const AggregationSpec& spec, TemporaryRelation* output) const {
    std::vector<ColumnVector> columns;
    columns.emplace_back(shape_.key_type);
    for (const auto& call : spec.calls) columns.emplace_back(call.result_type);
    std::vector<const ColumnVector*> pointers;
    for (const ColumnVector& column : columns) pointers.push_back(&column);
    VectorBlockWriter writer(output);
    uint32_t filled = 0;
    for (ColumnVector& column : columns) column.ResetOwned(kVectorSize);
    for (size_t e = first; e < first + count; ++e) {
      const uint64_t* entry = &words_[e * entry_words_];
      if (entry[0] == kEmpty) continue;
      if (shape_.key_type.id() == TypeId::kInteger) {
        columns[0].mutable_values<int32_t>()[filled] = static_cast<int32_t>(entry[0]);
      } else {
        columns[0].mutable_values<int64_t>()[filled] = static_cast<int64_t>(entry[0]);
      }
      for (size_t c = 0; c < calls_; ++c) {
        const uint64_t* state = entry + 1 + 3 * c;
        const int64_t rows = static_cast<int64_t>(state[2]);
        ColumnVector& out = columns[1 + c];
        const int128 sum = static_cast<int128>((static_cast<unsigned __int128>(state[1]) << 64) | state[0]);
        switch (shape_.kinds[c]) {
          case AggregateKind::kCountStar:
          case AggregateKind::kCount:
            out.mutable_values<int64_t>()[filled] = rows;
            break;
          case AggregateKind::kSum:
            out.mutable_values<int128>()[filled] = sum;
            break;
          case AggregateKind::kAvg: {  // sum * 10^(6 - 2) / rows, rounded half away from zero
            const int128 numerator = sum * 10000;
            int128 quotient = numerator / rows;
            const int128 remainder = numerator % rows;
            if (remainder != 0 && 2 * (remainder < 0 ? -remainder : remainder) >= rows) {
              quotient += numerator < 0 ? -1 : 1;
            }
            out.mutable_values<int128>()[filled] = quotient;
            break;
          }
          default:
            break;
        }
      }
      if (++filled == kVectorSize) {
        TESSERA_RETURN_IF_ERROR(writer.Append(pointers, nullptr, filled));
        for (ColumnVector& column : columns) column.ResetOwned(kVectorSize);
        filled = 0;
      }
    }
    if (filled > 0) {
      for (ColumnVector& column : columns) column.ResetOwned(filled);  // keeps the values (same buffer)
      TESSERA_RETURN_IF_ERROR(writer.Append(pointers, nullptr, filled));
    }
    return writer.Flush();
  }

 private:
  static constexpr uint64_t kEmpty = 0x8000000000000000ULL;

  template <bool kShared>
  static uint64_t Add(uint64_t& word, uint64_t value) {
    if constexpr (kShared) {
      return std::atomic_ref<uint64_t>(word).fetch_add(value, std::memory_order_relaxed);
    } else {
      const uint64_t before = word;
      word = before + value;
      return before;
    }
  }
  // (low, high, count) += the 128-bit (low, high) and count.
  template <bool kShared>
  static void AddWide(uint64_t* state, uint64_t low, uint64_t high, uint64_t count) {
    const uint64_t before = Add<kShared>(state[0], low);
    Add<kShared>(state[1], high + (before + low < before ? 1 : 0));
    Add<kShared>(state[2], count);
  }

  template <bool kShared>
  uint64_t* FindOrInsert(uint64_t key) {
    for (size_t i = HashIntegerKey(static_cast<int64_t>(key)) & mask_;; i = (i + 1) & mask_) {
      uint64_t* entry = &words_[i * entry_words_];
      if constexpr (kShared) {
        std::atomic_ref<uint64_t> slot(entry[0]);
        uint64_t current = slot.load(std::memory_order_acquire);
        if (current == kEmpty &&
            slot.compare_exchange_strong(current, key, std::memory_order_acq_rel, std::memory_order_acquire)) {
          return entry;
        }
        if (current == key) return entry;
      } else {
        if (entry[0] == kEmpty) entry[0] = key;
        if (entry[0] == key) return entry;
      }
    }
  }

  const Shape& shape_;
  const size_t calls_;
  const size_t entry_words_;  // the key, then (low sum, high sum, count) per call
  size_t mask_ = 0;
  std::unique_ptr<uint64_t[]> words_;
};

// Writes `table` in kPartitions ranges of entries, one task each.
void WriteFixedKeyTable(const FixedKeyTable& table, const AggregationSpec& spec, int threads,
                        TemporaryRelation* output) {
  const int parts = static_cast<int>(AggregationTable::kPartitions);
  const size_t per_part = table.capacity() / parts;
  ForEachTask(parts, threads, [&](int p) {
    const absl::Status status = table.Write(p * per_part, per_part, spec, output);
    if (!status.ok()) std::fprintf(stderr, "write failed: %s\n", status.ToString().c_str());
  });
}

void RunSharedTable(const Shape& s, const AggregationSpec& spec, int threads, TemporaryRelation* output,
                    double* update_seconds) {
  FixedKeyTable table(s);  // allocating and clearing it is timed, as creating the partial tables is
  const int64_t start = MonotonicNanos();
  ForEachGrab(s, threads, [&](int, size_t first, uint32_t rows) { table.Update<true>(first, rows); });
  *update_seconds = static_cast<double>(MonotonicNanos() - start) * 1e-9;
  WriteFixedKeyTable(table, spec, threads, output);
}

void RunFixedKeyPartialTables(const Shape& s, const AggregationSpec& spec, int threads, TemporaryRelation* output,
                              double* update_seconds) {
  std::vector<std::unique_ptr<FixedKeyTable>> tables;
  for (int t = 0; t < threads; ++t) tables.push_back(std::make_unique<FixedKeyTable>(s));
  const int64_t start = MonotonicNanos();
  ForEachGrab(s, threads, [&](int t, size_t first, uint32_t rows) { tables[t]->Update<false>(first, rows); });
  *update_seconds = static_cast<double>(MonotonicNanos() - start) * 1e-9;
  const int parts = static_cast<int>(AggregationTable::kPartitions);
  const size_t per_part = tables[0]->capacity() / parts;
  ForEachTask(parts, threads, [&](int p) {
    for (int t = 1; t < threads; ++t) tables[0]->MergeFrom(*tables[t], p * per_part, per_part);
  });
  WriteFixedKeyTable(*tables[0], spec, threads, output);
}

// An order-independent digest of a relation's rows (their printed values), to check that both variants agree.
uint64_t Digest(const TemporaryRelation& relation) {
  uint64_t digest = static_cast<uint64_t>(relation.row_count());
  for (uint32_t b = 0; b < relation.block_count(); ++b) {
    BlockView block = relation.block(b);
    for (uint32_t r = 0; r < block.row_count(); ++r) {
      std::string row;
      for (size_t c = 0; c < relation.schema().size(); ++c) {
        row += block.GetValue(static_cast<int>(c), r, relation.schema()[c].type).ToString();
        row += '|';
      }
      digest += HashBytes(row.data(), row.size());
    }
  }
  return digest;
}

std::vector<ColumnSchema> OutputSchema(const AggregationSpec& spec, const Shape& s) {
  std::vector<ColumnSchema> schema;
  for (int k = 0; k < s.key_columns; ++k) schema.push_back({spec.output_names[k], s.key_type, false, {}});
  for (size_t c = 0; c < spec.calls.size(); ++c) {
    schema.push_back({spec.output_names[s.key_columns + c], spec.calls[c].result_type, false, {}});
  }
  return schema;
}

// The three tables of the comparison; kEngine is the baseline every other one is reported against.
enum class Variant { kEngine, kShared, kFixedPartial };

const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kEngine:
      return "engine";
    case Variant::kShared:
      return "shared";
    case Variant::kFixedPartial:
      return "fixed_partial";
  }
  return "?";
}

// A shape's input and spec, built once per run and shared by its benchmarks; its engine result (digest and
// group count, the check for the other tables) and the engine's rows/s per thread count, from the same run.
struct Input {
  Shape shape;
  AggregationSpec spec;
  bool have_engine_result = false;
  uint64_t engine_digest = 0;
  int64_t engine_groups = 0;
  std::map<int, double> engine_rate;  // threads -> rows/s
};

BufferPool* Pool() {
  static std::unique_ptr<Topology> topology = MakeFakeTopology(1, 2);
  static BufferPool pool(size_t{8} << 30, topology.get());
  return &pool;
}

Input* GetInput(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Input>> inputs;
  std::unique_ptr<Input>& input = inputs[name];
  if (input == nullptr) {
    input = std::make_unique<Input>();
    input->shape = name == "q1"        ? MakeQ1(false)
                   : name == "q1-char" ? MakeQ1(true)
                   : name == "q18"     ? MakeQ18()
                   : name == "q13"     ? MakeQ13()
                   : name == "avg"     ? MakeValueAggregate(AggregateKind::kAvg)
                                       : MakeValueAggregate(AggregateKind::kQuantileCont);
    input->spec = MakeSpec(input->shape);
  }
  return input.get();
}

void RunVariant(Variant variant, const Shape& s, const AggregationSpec& spec, int threads, TemporaryRelation* out,
                double* update_seconds) {
  switch (variant) {
    case Variant::kEngine:
      return RunPartialTables(s, spec, threads, Pool(), out, update_seconds);
    case Variant::kShared:
      return RunSharedTable(s, spec, threads, out, update_seconds);
    case Variant::kFixedPartial:
      return RunFixedKeyPartialTables(s, spec, threads, out, update_seconds);
  }
}

bool g_different = false;  // a table's groups differed from the engine's: the run fails

// One iteration aggregates the whole input (update, merge, output). Counters: rows/s (wall clock), upd (share of
// the time spent updating; the rest is merge + output), vs_engine (rows/s over the engine table's, same run),
// groups. The result of the first iteration is checked against the engine table's.
void BM_Aggregate(benchmark::State& state, std::string shape_name, Variant variant, int threads) {
  Input* input = GetInput(shape_name);
  const Shape& s = input->shape;
  if (variant != Variant::kEngine && !input->have_engine_result) {
    TemporaryRelation output(OutputSchema(input->spec, s), Pool());
    double update_seconds = 0;
    RunPartialTables(s, input->spec, threads, Pool(), &output, &update_seconds);
    input->engine_digest = Digest(output);
    input->engine_groups = output.row_count();
    input->have_engine_result = true;
  }
  double update_seconds_total = 0;
  bool checked = false;
  int64_t groups = 0;
  const int64_t loop_start = MonotonicNanos();
  for (auto _ : state) {
    TemporaryRelation output(OutputSchema(input->spec, s), Pool());
    double update_seconds = 0;
    RunVariant(variant, s, input->spec, threads, &output, &update_seconds);
    update_seconds_total += update_seconds;
    if (!checked) {
      state.PauseTiming();
      const uint64_t digest = Digest(output);
      groups = output.row_count();
      if (variant == Variant::kEngine) {
        input->engine_digest = digest;
        input->engine_groups = groups;
        input->have_engine_result = true;
      } else if (digest != input->engine_digest || groups != input->engine_groups) {
        g_different = true;
        state.SkipWithError("groups differ from the engine table's");
      }
      checked = true;
      state.ResumeTiming();
    }
  }
  const double seconds = static_cast<double>(MonotonicNanos() - loop_start) * 1e-9;
  const int64_t rows = static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(s.rows);
  state.SetItemsProcessed(rows);
  state.counters["upd"] = update_seconds_total / seconds;
  state.counters["groups"] = static_cast<double>(groups);
  const double rate = static_cast<double>(rows) / seconds;
  if (variant == Variant::kEngine) input->engine_rate[threads] = rate;
  if (input->engine_rate.count(threads)) state.counters["vs_engine"] = rate / input->engine_rate[threads];
  // The holistic baseline: MEDIAN's rate over AVG's on the same rows and threads, when avg ran before it.
  static std::map<int, double> avg_rates;
  if (shape_name == "avg" && variant == Variant::kEngine) avg_rates[threads] = rate;
  if (shape_name == "median" && avg_rates.count(threads)) state.counters["vs_avg"] = rate / avg_rates[threads];
  state.SetLabel(s.description);
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// For each shape and thread count: the engine table, then the shared and the fixed-key tables (integer keys only).
bool RegisterBenchmarks() {
  for (const std::string& t : SplitCommas(FLAGS_threads)) {
    g_threads.push_back(std::atoi(t.c_str()));
    if (g_threads.back() < 1) return false;
  }
  g_shapes = SplitCommas(FLAGS_shapes);
  for (const std::string& name : g_shapes) {
    if (name != "q1" && name != "q1-char" && name != "q18" && name != "q13" && name != "avg" && name != "median") {
      std::fprintf(stderr, "unknown shape %s\n", name.c_str());
      return false;
    }
    for (int threads : g_threads) {
      for (Variant variant : {Variant::kEngine, Variant::kShared, Variant::kFixedPartial}) {
        // The fixed-key tables take one integer key and sum-like states only.
        if (variant != Variant::kEngine && (name == "q1-char" || name == "median")) continue;
        const std::string bench_name =
            std::string("BM_Aggregate/") + name + "/" + VariantName(variant) + "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(bench_name.c_str(), BM_Aggregate, name, variant, threads)
            ->Iterations(FLAGS_repeats)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
  return true;
}

int Main(int argc, char** argv) {
  bench::ParseBenchmarkCommandLine(
      &argc, &argv,
      "hash aggregation on TPC-H shapes: the engine's partial tables + merge against a shared concurrent table.\n"
      "usage: aggregation_benchmark [--repeats=R] [--threads=1,2] [--shapes=q1,q1-char,q18,q13,avg,median] "
      "[--scale=1.0] "
      "[--benchmark_* flags]",
      __FILE__);
  if (argc > 1 || FLAGS_repeats < 1 || !(FLAGS_scale > 0)) {
    std::fprintf(stderr, "aggregation_benchmark: bad arguments (see --help)\n");
    return 2;
  }
  g_scale = FLAGS_scale;
  g_threads.clear();
  if (!RegisterBenchmarks()) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The last line, which the smoke test (bench/aggregation_smoke) matches.
  std::printf("check: groups of every table against the engine table's: %s\n", g_different ? "DIFFERENT" : "same");
  return g_different ? 1 : 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
