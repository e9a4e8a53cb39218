// JoinHashTable's direct index (join_hash_table.h): made for unique integer keys over a small range, found by
// LookUpDirect exactly where the hash buckets hold the key; not made for duplicates, wide ranges or other types.
// With one, the published LIP filter is an exact bit vector (bloom_filter.h); without, a Bloom filter.

#include "relational_operators/join_hash_table.h"

#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "relational_operators/bloom_filter.h"
#include "relational_operators/key_hashing.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {
namespace {

constexpr size_t kSmallPoolBytes = 768 << 10;

// A one-column build relation of `type` (INTEGER or BIGINT) holding `keys` (nullopt: NULL), `per_block` rows a
// block.
std::shared_ptr<TemporaryRelation> BuildRelation(Type type, const std::vector<std::optional<int64_t>>& keys,
                                                 size_t per_block, BufferPool* pool) {
  auto relation =
      std::make_shared<TemporaryRelation>(std::vector<ColumnSchema>{ColumnSchema{"k", type, true, {}}}, pool);
  for (size_t first = 0; first < keys.size(); first += per_block) {
    const uint32_t count = static_cast<uint32_t>(std::min(per_block, keys.size() - first));
    ColumnVector vector(type);
    vector.ResetOwned(count);
    for (uint32_t i = 0; i < count; ++i) {
      const std::optional<int64_t>& key = keys[first + i];
      if (!key.has_value()) {
        vector.SetNull(i);
      } else if (type.id() == TypeId::kBigInt) {
        vector.mutable_values<int64_t>()[i] = *key;
      } else {
        vector.mutable_values<int32_t>()[i] = static_cast<int32_t>(*key);
      }
    }
    VectorBlockWriter writer(relation.get());  // one block per writer
    EXPECT_TRUE(writer.Append({&vector}, nullptr, count).ok());
    EXPECT_TRUE(writer.Flush().ok());
  }
  return relation;
}

std::unique_ptr<JoinHashTable> Build(Type type, const std::vector<std::optional<int64_t>>& keys, BufferPool* pool,
                                     size_t per_block = 1000, std::shared_ptr<LipFilter> lip_filter = nullptr) {
  auto table = std::make_unique<JoinHashTable>(BuildRelation(type, keys, per_block, pool), std::vector<int>{0}, pool);
  if (lip_filter != nullptr) table->PublishLipFilter(lip_filter, {0});
  for (uint32_t b = 0; b < table->build().block_count(); ++b) EXPECT_TRUE(table->AddBlock(b).ok());
  EXPECT_TRUE(table->Finalize().ok());
  return table;
}

// The key a build entry holds.
int64_t EntryKey(const JoinHashTable& table, uint32_t entry, Type type) {
  const BlockView& block = table.blocks()[table.Block(entry)];
  return type.id() == TypeId::kBigInt ? block.Values<int64_t>(0)[table.Row(entry)]
                                      : block.Values<int32_t>(0)[table.Row(entry)];
}

// Probes `probes` through LookUpDirect (every other row selected when `every_other`) and checks each answer
// against the hash buckets: the entry found holds the key, and a key without entry has none in its bucket.
void ExpectDirectMatchesBuckets(const JoinHashTable& table, Type type,
                                const std::vector<std::optional<int64_t>>& probes, bool every_other) {
  ColumnVector keys(type);
  keys.ResetOwned(static_cast<uint32_t>(probes.size()));
  for (uint32_t i = 0; i < probes.size(); ++i) {
    if (!probes[i].has_value()) {
      keys.SetNull(i);
    } else if (type.id() == TypeId::kBigInt) {
      keys.mutable_values<int64_t>()[i] = *probes[i];
    } else {
      keys.mutable_values<int32_t>()[i] = static_cast<int32_t>(*probes[i]);
    }
  }
  SelectionVector selection;
  for (uint32_t i = 0; i < probes.size(); i += every_other ? 2 : 1) selection.rows.push_back(i);
  selection.count = static_cast<uint32_t>(selection.rows.size());
  std::vector<JoinHashTable::EntryRange> found(selection.count);
  table.LookUpDirect(keys, &selection, selection.count, found.data());
  std::vector<uint64_t> hashes(probes.size());
  HashVectorRows(keys, static_cast<uint32_t>(probes.size()), true, hashes.data());
  for (uint32_t s = 0; s < selection.count; ++s) {
    const uint32_t row = selection.rows[s];
    std::optional<uint32_t> expected;
    if (probes[row].has_value()) {
      const JoinHashTable::EntryRange bucket = table.Bucket(hashes[row]);
      for (uint32_t e = bucket.begin; e < bucket.end; ++e) {
        if (table.Hash(e) == hashes[row]) expected = e;
      }
    }
    if (!expected.has_value()) {
      EXPECT_EQ(found[s].begin, found[s].end) << "row " << row;
      continue;
    }
    ASSERT_EQ(found[s].end, found[s].begin + 1) << "row " << row;
    EXPECT_EQ(found[s].begin, *expected) << "row " << row;
    EXPECT_EQ(EntryKey(table, found[s].begin, type), *probes[row]);
  }
}

TEST(JoinHashTableDirectIndexTest, UniqueDenseIntegerKeysAcrossBlocksAreFoundByOneLookUp) {
  BufferPool pool(64 << 20, nullptr);
  // Keys -500, -497, ..., 2998 (step 3), a NULL, spread over blocks of 300 rows.
  std::vector<std::optional<int64_t>> keys;
  for (int64_t k = -500; k < 3000; k += 3) keys.push_back(k);
  keys.push_back(std::nullopt);
  std::unique_ptr<JoinHashTable> table = Build(Type::Integer(), keys, &pool, 300);
  ASSERT_TRUE(table->HasDirectIndex());
  // Probes inside the range (present and absent), at its ends, outside it on both sides, extreme values, NULL.
  std::vector<std::optional<int64_t>> probes = {
      -500, -499, 0, 1, 2998, 2999, 3001, -501, -100000, INT32_MIN, INT32_MAX, std::nullopt, 7, 1000, 1001};
  ExpectDirectMatchesBuckets(*table, Type::Integer(), probes, false);
  ExpectDirectMatchesBuckets(*table, Type::Integer(), probes, true);
}

TEST(JoinHashTableDirectIndexTest, BigIntKeysFarFromZero) {
  BufferPool pool(64 << 20, nullptr);
  const int64_t base = int64_t{1} << 40;
  std::vector<std::optional<int64_t>> keys;
  for (int64_t k = 0; k < 1000; ++k) keys.push_back(base + 2 * k);
  std::unique_ptr<JoinHashTable> table = Build(Type::BigInt(), keys, &pool);
  ASSERT_TRUE(table->HasDirectIndex());
  ExpectDirectMatchesBuckets(
      *table, Type::BigInt(),
      {base, base + 1, base + 1998, base + 2000, base - 2, -base, 0, INT64_MIN, INT64_MAX, std::nullopt}, false);
}

TEST(JoinHashTableDirectIndexTest, NoDirectIndexForDuplicateKeysWideRangesOrOtherTypes) {
  BufferPool pool(64 << 20, nullptr);
  // A duplicate in a later block than its first occurrence.
  std::vector<std::optional<int64_t>> duplicates;
  for (int64_t k = 0; k < 500; ++k) duplicates.push_back(k);
  duplicates.push_back(3);
  EXPECT_FALSE(Build(Type::Integer(), duplicates, &pool, 100)->HasDirectIndex());
  // 1000 keys spread over more than max(4 x 1000, 2^18) values.
  std::vector<std::optional<int64_t>> wide;
  for (int64_t k = 0; k < 1000; ++k) wide.push_back(k * 300);
  EXPECT_FALSE(Build(Type::BigInt(), wide, &pool)->HasDirectIndex());
  // Just inside the limit: 2^18 values.
  std::vector<std::optional<int64_t>> narrow = {0, (int64_t{1} << 18) - 1};
  EXPECT_TRUE(Build(Type::BigInt(), narrow, &pool)->HasDirectIndex());
  // Only NULL keys: nothing indexed.
  EXPECT_FALSE(Build(Type::Integer(), {std::nullopt, std::nullopt}, &pool)->HasDirectIndex());
  // DOUBLE keys hash.
  auto doubles = std::make_shared<TemporaryRelation>(
      std::vector<ColumnSchema>{ColumnSchema{"k", Type::Double(), true, {}}}, &pool);
  ColumnVector vector(Type::Double());
  vector.ResetOwned(2);
  vector.mutable_values<double>()[0] = 1;
  vector.mutable_values<double>()[1] = 2;
  VectorBlockWriter writer(doubles.get());
  ASSERT_TRUE(writer.Append({&vector}, nullptr, 2).ok());
  ASSERT_TRUE(writer.Flush().ok());
  JoinHashTable table(doubles, {0}, &pool);
  ASSERT_TRUE(table.AddBlock(0).ok());
  ASSERT_TRUE(table.Finalize().ok());
  EXPECT_FALSE(table.HasDirectIndex());
}

TEST(JoinHashTableDirectIndexTest, APoolWithoutRoomForTheArrayLeavesTheTableWithoutOne) {
  // Room for the build relation and the hash table, not for the direct index's 1 MiB array (2^18 values).
  BufferPool pool(kSmallPoolBytes, nullptr);
  std::unique_ptr<JoinHashTable> table = Build(Type::Integer(), {0, (int64_t{1} << 18) - 1}, &pool);
  EXPECT_FALSE(table->HasDirectIndex());
  EXPECT_EQ(table->indexed_rows(), 2);
}

// The rows of `probes` (INTEGER keys, nullopt: NULL) that `filter` keeps, every other row a candidate when
// `every_other`.
std::vector<uint32_t> KeptRows(const LipFilter& filter, const std::vector<std::optional<int64_t>>& probes,
                               bool every_other) {
  ColumnVector keys(Type::Integer());
  keys.ResetOwned(static_cast<uint32_t>(probes.size()));
  for (uint32_t i = 0; i < probes.size(); ++i) {
    if (probes[i].has_value()) {
      keys.mutable_values<int32_t>()[i] = static_cast<int32_t>(*probes[i]);
    } else {
      keys.SetNull(i);
    }
  }
  SelectionVector in;
  for (uint32_t i = 0; i < probes.size(); i += every_other ? 2 : 1) in.rows.push_back(i);
  in.count = static_cast<uint32_t>(in.rows.size());
  SelectionVector out;
  out.rows.resize(probes.size());
  filter.KeepMembers({&keys}, every_other ? &in : nullptr, static_cast<uint32_t>(probes.size()), &out);
  return std::vector<uint32_t>(out.rows.begin(), out.rows.begin() + out.count);
}

TEST(JoinHashTableDirectIndexTest, TheLipFilterOfADirectIndexIsExact) {
  BufferPool pool(64 << 20, nullptr);
  std::vector<std::optional<int64_t>> keys = {-5, 0, 3, 64, 65, 127, 128, 200, std::nullopt};
  auto filter = std::make_shared<LipFilter>("k");
  std::unique_ptr<JoinHashTable> table = Build(Type::Integer(), keys, &pool, 4, filter);
  ASSERT_TRUE(table->HasDirectIndex());
  EXPECT_TRUE(filter->is_dense());
  // Every value from -70 to 270 (rows 0..340), then extremes and a NULL: exactly the build keys pass.
  std::vector<std::optional<int64_t>> probes;
  for (int64_t k = -70; k <= 270; ++k) probes.push_back(k);
  probes.push_back(INT32_MIN);
  probes.push_back(INT32_MAX);
  probes.push_back(std::nullopt);
  std::vector<uint32_t> expected;
  for (std::optional<int64_t> key : keys) {
    if (key.has_value()) expected.push_back(static_cast<uint32_t>(*key + 70));
  }
  EXPECT_EQ(KeptRows(*filter, probes, false), expected);
  std::vector<uint32_t> expected_even;
  for (uint32_t row : expected) {
    if (row % 2 == 0) expected_even.push_back(row);
  }
  EXPECT_EQ(KeptRows(*filter, probes, true), expected_even);
  // Without the NULL (the vectorized path where the build has one).
  probes.pop_back();
  EXPECT_EQ(KeptRows(*filter, probes, false), expected);
  EXPECT_EQ(KeptRows(*filter, probes, true), expected_even);
}

TEST(JoinHashTableDirectIndexTest, WithoutADirectIndexOverANarrowRangeTheLipFilterIsTheExactKeyFilter) {
  BufferPool pool(64 << 20, nullptr);
  auto filter = std::make_shared<LipFilter>("k");
  std::unique_ptr<JoinHashTable> table = Build(Type::Integer(), {1, 2, 2, 3}, &pool, 1000, filter);
  EXPECT_FALSE(table->HasDirectIndex());  // a key seen twice
  EXPECT_TRUE(filter->is_dense());
  EXPECT_EQ(table->key_filter(), filter);
  EXPECT_TRUE(table->LipFilterIsExact());
  EXPECT_EQ(KeptRows(*filter, {1, 2, 3, 4, 0, std::nullopt}, false), (std::vector<uint32_t>{0, 1, 2}));
}

TEST(JoinHashTableDirectIndexTest, OverARangeWiderThanTheKeyFilterAllowsTheLipFilterIsABloomFilter) {
  BufferPool pool(64 << 20, nullptr);
  auto filter = std::make_shared<LipFilter>("k");
  // 4 keys over 50 M values: more than max(64 bits per key, 2^23 bits).
  std::unique_ptr<JoinHashTable> table = Build(Type::Integer(), {1, 2, 3, 50000000}, &pool, 1000, filter);
  EXPECT_FALSE(table->HasDirectIndex());
  EXPECT_FALSE(filter->is_dense());
  EXPECT_EQ(table->key_filter(), nullptr);
  EXPECT_EQ(KeptRows(*filter, {1, 2, 3, std::nullopt}, false), (std::vector<uint32_t>{0, 1, 2}));
}

// Two INTEGER key columns: the entries hold the packed keys, each in the bucket of its row's hash over both
// columns, and a LIP filter over both columns (filled from the hashes before they are overwritten) keeps every
// build key.
TEST(JoinHashTablePackedKeysTest, EntriesHoldPackedKeysInTheirHashBuckets) {
  BufferPool pool(64 << 20, nullptr);
  const Type type = Type::Integer();
  auto relation = std::make_shared<TemporaryRelation>(
      std::vector<ColumnSchema>{ColumnSchema{"a", type, true, {}}, ColumnSchema{"b", type, true, {}}}, &pool);
  std::vector<std::pair<int32_t, int32_t>> keys;
  for (int32_t i = 0; i < 1500; ++i) keys.push_back({i % 400 - 200, i / 400 - 2});  // duplicates of a and of b
  keys.push_back({INT32_MIN, INT32_MAX});
  keys.push_back({INT32_MAX, INT32_MIN});
  keys.push_back({-1, 0});
  keys.push_back({0, -1});
  ColumnVector a(type), b(type);
  a.ResetOwned(static_cast<uint32_t>(keys.size()) + 1);
  b.ResetOwned(static_cast<uint32_t>(keys.size()) + 1);
  for (size_t i = 0; i < keys.size(); ++i) {
    a.mutable_values<int32_t>()[i] = keys[i].first;
    b.mutable_values<int32_t>()[i] = keys[i].second;
  }
  a.mutable_values<int32_t>()[keys.size()] = 5;
  b.SetNull(static_cast<uint32_t>(keys.size()));  // not indexed
  VectorBlockWriter writer(relation.get());
  ASSERT_TRUE(writer.Append({&a, &b}, nullptr, static_cast<uint32_t>(keys.size()) + 1).ok());
  ASSERT_TRUE(writer.Flush().ok());
  auto filter = std::make_shared<LipFilter>("a, b");
  JoinHashTable table(relation, {0, 1}, &pool);
  table.PublishLipFilter(filter, {0, 1});
  for (uint32_t block = 0; block < relation->block_count(); ++block) ASSERT_TRUE(table.AddBlock(block).ok());
  ASSERT_TRUE(table.Finalize().ok());
  ASSERT_TRUE(table.KeysArePacked());
  EXPECT_FALSE(table.HashDeterminesKey());
  ASSERT_EQ(table.indexed_rows(), static_cast<int64_t>(keys.size()));
  std::vector<uint64_t> hashes(keys.size() + 1);
  HashVectorRows(a, static_cast<uint32_t>(keys.size()), true, hashes.data());
  HashVectorRows(b, static_cast<uint32_t>(keys.size()), false, hashes.data());
  std::vector<int> found(keys.size(), 0);
  for (uint32_t row = 0; row < keys.size(); ++row) {
    const uint64_t packed = JoinHashTable::PackKey(keys[row].first, keys[row].second);
    const JoinHashTable::EntryRange bucket = table.Bucket(hashes[row]);
    for (uint32_t e = bucket.begin; e < bucket.end; ++e) {
      const BlockView& block = table.blocks()[table.Block(e)];
      const uint64_t stored =
          JoinHashTable::PackKey(block.Values<int32_t>(0)[table.Row(e)], block.Values<int32_t>(1)[table.Row(e)]);
      EXPECT_EQ(table.PackedKey(e), stored);
      if (table.Row(e) == row) {
        EXPECT_EQ(table.PackedKey(e), packed);
        ++found[row];
      }
    }
  }
  EXPECT_EQ(found, std::vector<int>(keys.size(), 1));
  // Packing keeps the columns apart: (-1, 0) and (0, -1) differ, as do the two extreme pairs.
  EXPECT_NE(JoinHashTable::PackKey(-1, 0), JoinHashTable::PackKey(0, -1));
  EXPECT_NE(JoinHashTable::PackKey(INT32_MIN, INT32_MAX), JoinHashTable::PackKey(INT32_MAX, INT32_MIN));
  ASSERT_NE(filter->bloom(), nullptr);
  SelectionVector kept;
  kept.rows.resize(kVectorSize);
  filter->KeepMembers({&a, &b}, nullptr, static_cast<uint32_t>(keys.size()), &kept);
  EXPECT_EQ(kept.count, keys.size());
}

}  // namespace
}  // namespace tessera
