// AggregationTable: partial tables that share groups, merged by hash partition or all at once, give the same
// groups as a direct computation; for fixed-width keys, short strings stored in fixed keys, strings too long
// for their inline width (the table switches to serialized keys midway, the merge mixes both forms),
// serialized string keys, and keys with NULLs. SQL cannot choose which worker sees which rows, so the overlap
// of partial tables is tested here.

#include "relational_operators/aggregation_table.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/bitmap.h"
#include "gtest/gtest.h"
#include "storage/buffer_pool.h"
#include "storage/topology.h"

namespace tessera {
namespace {

constexpr int kRows = 20000;
constexpr int kKeys = 15000;  // values of the first key column: each partial table has groups the other lacks

// The second key column: INTEGER, VARCHAR(3) (inline), VARCHAR(2) (inline, but "yes" has 3 bytes: from row
// 12000 on, the table must switch to serialized keys), VARCHAR (serialized).
enum class SecondKey { kInteger, kInlineString, kOverflowingString, kString };

Type SecondKeyType(SecondKey kind) {
  switch (kind) {
    case SecondKey::kInteger:
      return Type::Integer();
    case SecondKey::kInlineString:
      return Type::Varchar(3);
    case SecondKey::kOverflowingString:
      return Type::Varchar(2);
    case SecondKey::kString:
      return Type::Varchar();
  }
  return Type::Integer();
}

// key2's three values: 0 = "no", 1 = "ye", 2 = "yes".
int Key2(int r) { return r % 3 != 0 ? 0 : r < 12000 ? 1 : 2; }
const char* const kKey2Text[3] = {"no", "ye", "yes"};

// Row r of the input: key1 = r % kKeys (NULL when r % kKeys == 5), key2 = Key2(r), amount = r cents,
// value = r % 100 (NULL when r % 10 == 0).
struct Input {
  std::vector<int64_t> key1;
  std::vector<uint8_t> key1_valid;
  std::vector<std::string> key2_text;
  std::vector<std::string_view> key2_strings;
  std::vector<int32_t> key2_int;
  std::vector<int64_t> amount;
  std::vector<int32_t> value;
  std::vector<uint8_t> value_valid;

  Input() {
    key1_valid.assign(kRows / 8 + 8, 0);
    value_valid.assign(kRows / 8 + 8, 0);
    key2_text.reserve(kRows);
    for (int r = 0; r < kRows; ++r) {
      key1.push_back(r % kKeys);
      if (r % kKeys != 5) SetBit(key1_valid.data(), r);
      key2_int.push_back(Key2(r));
      key2_text.push_back(kKey2Text[Key2(r)]);
      amount.push_back(r);
      value.push_back(r % 100);
      if (r % 10 != 0) SetBit(value_valid.data(), r);
    }
    for (const std::string& s : key2_text) key2_strings.push_back(s);
  }
};

AggregationSpec MakeSpec(SecondKey kind) {
  AggregationSpec spec;
  spec.group_by.push_back(MakeColumn(0, Type::BigInt()));
  spec.group_by.push_back(MakeColumn(1, SecondKeyType(kind)));
  spec.output_names = {"k1",        "k2",         "sum_amount",   "count_star",   "count_value",
                       "min_value", "avg_amount", "median_value", "median_amount"};
  const Type money = Type::Decimal(15, 2);
  spec.calls.push_back({AggregateKind::kSum, false, MakeColumn(2, money), Type::Decimal(38, 2)});
  spec.calls.push_back({AggregateKind::kCountStar, false, nullptr, Type::BigInt()});
  spec.calls.push_back({AggregateKind::kCount, false, MakeColumn(3, Type::Integer()), Type::BigInt()});
  spec.calls.push_back({AggregateKind::kMin, false, MakeColumn(3, Type::Integer()), Type::Integer()});
  spec.calls.push_back({AggregateKind::kAvg, false, MakeColumn(2, money), Type::Decimal(38, 6)});
  // Quantiles keep each group's values in typed arrays that the merge concatenates.
  spec.calls.push_back({AggregateKind::kQuantileDisc, false, MakeColumn(3, Type::Integer()), Type::Integer()});
  spec.calls.push_back({AggregateKind::kQuantileCont, false, MakeColumn(2, money), money});
  spec.calls[5].fraction = Value::Decimal(5, Type::Decimal(2, 1));
  spec.calls[6].fraction = Value::Decimal(5, Type::Decimal(2, 1));
  return spec;
}

// Feeds rows [first, last) to `table` in vectors; every third vector with a selection of its even rows.
void Feed(const Input& in, SecondKey kind, int first, int last, AggregationTable* table, int* vector_count) {
  ColumnVector key1(Type::BigInt()), key2(SecondKeyType(kind));
  ColumnVector amount(Type::Decimal(15, 2)), value(Type::Integer());
  SelectionVector selection;
  selection.rows.resize(kVectorSize);
  for (int start = first; start < last; start += kVectorSize) {
    const uint32_t size = static_cast<uint32_t>(std::min<int>(kVectorSize, last - start));
    key1.BorrowFixed(in.key1.data() + start, in.key1_valid.data() + start / 8, start % 8, size);
    if (kind == SecondKey::kInteger) {
      key2.BorrowFixed(in.key2_int.data() + start, nullptr, 0, size);
    } else {
      key2.BorrowStrings(in.key2_strings.data() + start, nullptr, 0, size);
    }
    amount.BorrowFixed(in.amount.data() + start, nullptr, 0, size);
    value.BorrowFixed(in.value.data() + start, in.value_valid.data() + start / 8, start % 8, size);
    const bool selective = (*vector_count)++ % 3 == 2;
    selection.count = 0;
    if (selective) {
      for (uint32_t r = 0; r < size; r += 2) selection.rows[selection.count++] = r;
    }
    ASSERT_TRUE(table
                    ->Update({&key1, &key2}, {&amount, nullptr, &value, &value, &amount, &value, &amount},
                             selective ? &selection : nullptr, size, selective ? selection.count : size)
                    .ok());
  }
}

using Row = std::vector<std::string>;

std::map<Row, Row> Expected(SecondKey kind, const std::vector<std::pair<int, int>>& ranges) {
  struct State {
    int64_t sum = 0, rows = 0, values = 0, min = INT64_MAX;
    std::vector<int64_t> value_list, amount_list;
  };
  std::map<std::pair<int64_t, int>, State> groups;  // key1 = -1 for NULL
  int vector_count = 0;
  for (auto [first, last] : ranges) {
    for (int start = first; start < last; start += kVectorSize) {
      const int size = std::min<int>(kVectorSize, last - start);
      const bool selective = vector_count++ % 3 == 2;
      for (int i = 0; i < size; i += selective ? 2 : 1) {
        const int r = start + i;
        State& s = groups[{r % kKeys == 5 ? -1 : r % kKeys, Key2(r)}];
        s.sum += r;
        ++s.rows;
        s.amount_list.push_back(r);
        if (r % 10 != 0) {
          ++s.values;
          s.min = std::min<int64_t>(s.min, r % 100);
          s.value_list.push_back(r % 100);
        }
      }
    }
  }
  std::map<Row, Row> rows;
  for (auto& [key, s] : groups) {
    const std::string k1 = key.first < 0 ? "NULL" : std::to_string(key.first);
    const std::string k2 = kind == SecondKey::kInteger ? std::to_string(key.second) : kKey2Text[key.second];
    const Value avg = Value::Decimal((static_cast<int128>(s.sum) * 10000 * 2 + s.rows) / (2 * s.rows),
                                     Type::Decimal(38, 6));  // sums are positive: half up
    // quantile_disc(0.5): the value at ceil(n / 2) - 1; quantile_cont(0.5): halfway between the values at
    // floor and ceil of (n - 1) / 2, truncated to the scale (amounts are positive).
    std::sort(s.value_list.begin(), s.value_list.end());
    std::sort(s.amount_list.begin(), s.amount_list.end());
    const size_t n = s.amount_list.size();
    const int64_t median_amount = (s.amount_list[(n - 1) / 2] + s.amount_list[n / 2]) / 2;
    rows[{k1, k2}] = {Value::Decimal(s.sum, Type::Decimal(38, 2)).ToString(),
                      std::to_string(s.rows),
                      std::to_string(s.values),
                      s.values == 0 ? "NULL" : std::to_string(s.min),
                      avg.ToString(),
                      s.values == 0 ? "NULL" : std::to_string(s.value_list[(s.value_list.size() + 1) / 2 - 1]),
                      Value::Decimal(median_amount, Type::Decimal(15, 2)).ToString()};
  }
  return rows;
}

std::map<Row, Row> Read(const TemporaryRelation& relation) {
  std::map<Row, Row> rows;
  for (uint32_t b = 0; b < relation.block_count(); ++b) {
    BlockView block = relation.block(b);
    for (uint32_t r = 0; r < block.row_count(); ++r) {
      Row key, values;
      for (size_t c = 0; c < relation.schema().size(); ++c) {
        const std::string text = block.GetValue(static_cast<int>(c), r, relation.schema()[c].type).ToString();
        (c < 2 ? key : values).push_back(text);
      }
      EXPECT_TRUE(rows.emplace(key, values).second) << "group written twice: " << key[0] << "," << key[1];
    }
  }
  return rows;
}

class AggregationTableTest : public ::testing::TestWithParam<std::tuple<SecondKey, bool>> {
 protected:
  AggregationTableTest() : topology_(MakeFakeTopology(1, 2)), pool_(256 << 20, topology_.get()) {}

  std::unique_ptr<Topology> topology_;
  BufferPool pool_;
};

TEST_P(AggregationTableTest, OverlappingPartialTablesMergeToTheDirectAnswer) {
  const auto [kind, by_partition] = GetParam();
  const Input in;
  const AggregationSpec spec = MakeSpec(kind);
  // Four partial tables (one unused: null) whose inputs overlap in keys: rows 0..12000 and 8000..20000 (the
  // rows from 12000 on last, so that a table that switches to serialized keys already has groups), and a third.
  std::vector<std::unique_ptr<AggregationTable>> partials;
  partials.push_back(std::make_unique<AggregationTable>(spec, &pool_));
  partials.push_back(nullptr);
  partials.push_back(std::make_unique<AggregationTable>(spec, &pool_));
  partials.push_back(std::make_unique<AggregationTable>(spec, &pool_));
  // Presized tables: the first for fewer groups than it gets (it grows past the room), the second for more.
  ASSERT_TRUE(partials[0]->Presize(4000).ok());
  ASSERT_TRUE(partials[2]->Presize(30000).ok());
  int vectors = 0;
  Feed(in, kind, 0, 12000, partials[0].get(), &vectors);
  Feed(in, kind, 8000, 12000, partials[2].get(), &vectors);  // these rows a second time
  Feed(in, kind, 12000, kRows, partials[2].get(), &vectors);
  // A third time, in a table merged last: its groups are in the first table, the second, or both, so some
  // are found in the base, some among the groups that the merge copied from the other table.
  Feed(in, kind, 2000, 6000, partials[3].get(), &vectors);
  Feed(in, kind, 16000, 17000, partials[3].get(), &vectors);
  std::vector<ColumnSchema> schema;
  schema.push_back({"k1", Type::BigInt(), true, {}});
  schema.push_back({"k2", SecondKeyType(kind), true, {}});
  for (size_t c = 0; c < spec.calls.size(); ++c)
    schema.push_back({spec.output_names[2 + c], spec.calls[c].result_type, true, {}});
  TemporaryRelation output(schema, &pool_);
  int64_t written = 0;
  if (by_partition) {
    for (int p = 0; p < static_cast<int>(AggregationTable::kPartitions); ++p) {
      int64_t groups = 0;
      ASSERT_TRUE(AggregationTable::MergeAndWrite(spec, partials, p, &pool_, &output, &groups).ok());
      written += groups;
    }
  } else {
    ASSERT_TRUE(AggregationTable::MergeAndWrite(spec, partials, -1, &pool_, &output, &written).ok());
  }
  const std::map<Row, Row> expected =
      Expected(kind, {{0, 12000}, {8000, 12000}, {12000, kRows}, {2000, 6000}, {16000, 17000}});
  const std::map<Row, Row> actual = Read(output);
  EXPECT_EQ(written, static_cast<int64_t>(expected.size()));
  ASSERT_EQ(actual.size(), expected.size());
  EXPECT_EQ(actual, expected);
}

std::string ParamName(const ::testing::TestParamInfo<std::tuple<SecondKey, bool>>& info) {
  static const char* const kNames[] = {"Integer", "InlineString", "OverflowingString", "String"};
  return std::string(kNames[static_cast<int>(std::get<0>(info.param))]) +
         (std::get<1>(info.param) ? "ByPartition" : "AllAtOnce");
}

INSTANTIATE_TEST_SUITE_P(KeysAndMerges, AggregationTableTest,
                         ::testing::Combine(::testing::Values(SecondKey::kInteger, SecondKey::kInlineString,
                                                              SecondKey::kOverflowingString, SecondKey::kString),
                                            ::testing::Bool()),
                         ParamName);

TEST(AggregationTableScalarTest, ScalarAggregateWithoutInputWritesOneRow) {
  auto topology = MakeFakeTopology(1, 2);
  BufferPool pool(64 << 20, topology.get());
  AggregationSpec spec;
  spec.output_names = {"n", "total"};
  spec.calls.push_back({AggregateKind::kCountStar, false, nullptr, Type::BigInt()});
  spec.calls.push_back({AggregateKind::kSum, false, MakeColumn(0, Type::BigInt()), Type::Decimal(38, 0)});
  std::vector<std::unique_ptr<AggregationTable>> partials;
  partials.push_back(std::make_unique<AggregationTable>(spec, &pool));
  TemporaryRelation output({{"n", Type::BigInt(), true, {}}, {"total", Type::Decimal(38, 0), true, {}}}, &pool);
  int64_t written = 0;
  ASSERT_TRUE(AggregationTable::MergeAndWrite(spec, partials, -1, &pool, &output, &written).ok());
  ASSERT_EQ(written, 1);
  ASSERT_EQ(output.row_count(), 1);
  BlockView block = output.block(0);
  EXPECT_EQ(block.GetValue(0, 0, Type::BigInt()).ToString(), "0");
  EXPECT_TRUE(block.GetValue(1, 0, Type::Decimal(38, 0)).is_null());
}

size_t BlobBytes(const BufferPool& pool) { return pool.Usage().by_kind[static_cast<int>(MemoryKind::kBlob)]; }

// The table's rows, hash slots and partition lists are pool memory: charged as the table grows (at least a
// row of hash, key and five states per group) and freed with the table.
TEST(AggregationTableMemoryTest, TableIsChargedToItsPoolAsItGrowsAndFreedWithIt) {
  auto topology = MakeFakeTopology(1, 2);
  BufferPool pool(256 << 20, topology.get());
  const Input in;
  const AggregationSpec spec = MakeSpec(SecondKey::kInteger);
  {
    AggregationTable table(spec, &pool);
    EXPECT_EQ(BlobBytes(pool), 0u);
    int vectors = 0;
    Feed(in, SecondKey::kInteger, 0, 2000, &table, &vectors);
    const size_t small = BlobBytes(pool);
    EXPECT_GE(small, table.group_count() * (3 + 5 * 4) * sizeof(uint64_t));
    Feed(in, SecondKey::kInteger, 2000, kRows, &table, &vectors);
    EXPECT_GT(table.group_count(), 10000u);
    EXPECT_GE(BlobBytes(pool), table.group_count() * (3 + 5 * 4) * sizeof(uint64_t));
    EXPECT_GT(BlobBytes(pool), small);
    // Fixed keys, no strings or sets: outside the pool only the quantiles' value arrays, 8 bytes per value
    // (every row's amount, nine in ten rows' value) plus the arrays' spare capacity.
    EXPECT_GE(table.HeapBytes(), (kRows + kRows / 10 * 9) * sizeof(int64_t));
    EXPECT_LE(table.HeapBytes(), 4 * (kRows + kRows / 10 * 9) * sizeof(int64_t) + table.group_count() * 2 * 64);
  }
  EXPECT_EQ(BlobBytes(pool), 0u);
}

// Over the budget, Update fails with ResourceExhausted instead of growing, and the table still frees all it
// holds; the merge of a table that does not fit fails the same way.
TEST(AggregationTableMemoryTest, GrowthOverTheBudgetFailsCleanly) {
  auto topology = MakeFakeTopology(1, 2);
  BufferPool pool(1 << 20, topology.get());
  const Input in;
  const AggregationSpec spec = MakeSpec(SecondKey::kInteger);
  ColumnVector key1(Type::BigInt()), key2(Type::Integer()), amount(Type::Decimal(15, 2)), value(Type::Integer());
  absl::Status status;
  {
    AggregationTable table(spec, &pool);
    for (int start = 0; start + kVectorSize <= kRows && status.ok(); start += kVectorSize) {
      key1.BorrowFixed(in.key1.data() + start, nullptr, 0, kVectorSize);
      key2.BorrowFixed(in.key2_int.data() + start, nullptr, 0, kVectorSize);
      amount.BorrowFixed(in.amount.data() + start, nullptr, 0, kVectorSize);
      value.BorrowFixed(in.value.data() + start, nullptr, 0, kVectorSize);
      status = table.Update({&key1, &key2}, {&amount, nullptr, &value, &value, &amount, &value, &amount}, nullptr,
                            kVectorSize, kVectorSize);
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_GT(BlobBytes(pool), 0u);
    EXPECT_LE(pool.Usage().used_bytes, pool.budget_bytes());
  }
  EXPECT_EQ(BlobBytes(pool), 0u);
}

// Presize over the budget fails with ResourceExhausted and leaves a table that still takes groups and frees
// everything.
TEST(AggregationTableMemoryTest, PresizeOverTheBudgetFailsAndTheTableGrowsAsUsual) {
  auto topology = MakeFakeTopology(1, 2);
  BufferPool pool(8 << 20, topology.get());
  const Input in;
  const AggregationSpec spec = MakeSpec(SecondKey::kInteger);
  {
    AggregationTable table(spec, &pool);
    EXPECT_EQ(table.Presize(1 << 20).code(), absl::StatusCode::kResourceExhausted);
    int vectors = 0;
    Feed(in, SecondKey::kInteger, 0, 4000, &table, &vectors);
    EXPECT_GT(table.group_count(), 2000u);
  }
  EXPECT_EQ(BlobBytes(pool), 0u);
}

}  // namespace
}  // namespace tessera
