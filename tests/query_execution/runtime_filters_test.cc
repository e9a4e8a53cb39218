// The run-time join filters of relational_operators/: the blocked Bloom filter (no false negatives, bounded
// false-positive rate, memory from the buffer pool), LipFilter and ExactFilter probing of column vectors
// (NULLs, selections, ranges), duplicate counting of the exact filter, and a BlockScanner applying them (adaptive
// order, anti filters, repeated rows).

#include <numeric>
#include <optional>
#include <random>
#include <thread>
#include <unordered_set>

#include "common/hash.h"
#include "expressions/bound_expression.h"
#include "gtest/gtest.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/bloom_filter.h"
#include "relational_operators/exact_filter.h"
#include "relational_operators/key_hashing.h"
#include "relational_operators/temporary_relation.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {
namespace {

// An owned INTEGER vector; nullopt entries are NULL.
ColumnVector IntegerVector(const std::vector<std::optional<int32_t>>& values) {
  ColumnVector vector(Type::Integer());
  vector.ResetOwned(static_cast<uint32_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].has_value()) {
      vector.mutable_values<int32_t>()[i] = *values[i];
    } else {
      vector.SetNull(static_cast<uint32_t>(i));
    }
  }
  return vector;
}

SelectionVector EmptySelection() {
  SelectionVector selection;
  selection.rows.resize(kVectorSize);
  return selection;
}

std::vector<uint32_t> Rows(const SelectionVector& selection) {
  return std::vector<uint32_t>(selection.rows.begin(), selection.rows.begin() + selection.count);
}

TEST(BlockedBloomFilterTest, NoFalseNegativesAndFewFalsePositives) {
  BufferPool pool(64 << 20, nullptr);
  constexpr int64_t kKeys = 100000;
  auto bloom = BlockedBloomFilter::Create(kKeys, &pool);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  EXPECT_GE(pool.Usage().by_kind[static_cast<int>(MemoryKind::kBlob)], (*bloom)->size_bytes());
  EXPECT_GE((*bloom)->size_bytes() * 8, static_cast<size_t>(kKeys * BlockedBloomFilter::kBitsPerKey));
  for (int64_t key = 0; key < kKeys; ++key) (*bloom)->Insert(HashInt64(static_cast<uint64_t>(key * 7)));
  for (int64_t key = 0; key < kKeys; ++key) {
    ASSERT_TRUE((*bloom)->MayContain(HashInt64(static_cast<uint64_t>(key * 7)))) << key;
  }
  int64_t false_positives = 0;
  constexpr int64_t kProbes = 200000;
  for (int64_t i = 0; i < kProbes; ++i) {
    false_positives += (*bloom)->MayContain(HashInt64(static_cast<uint64_t>(kKeys * 7 + i * 7 + 3)));
  }
  const double rate = static_cast<double>(false_positives) / kProbes;
  EXPECT_LT(rate, 0.05) << "false-positive rate at " << BlockedBloomFilter::kBitsPerKey << " bits per key";
  bloom->reset();
  EXPECT_EQ(pool.Usage().by_kind[static_cast<int>(MemoryKind::kBlob)], 0u);
}

TEST(BlockedBloomFilterTest, FailsWhenThePoolIsExhausted) {
  BufferPool pool(1 << 20, nullptr);
  EXPECT_EQ(BlockedBloomFilter::Create(int64_t{1} << 24, &pool).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(LipFilterTest, KeepsRowsWhoseKeyWasInsertedAndDropsNullKeys) {
  BufferPool pool(64 << 20, nullptr);
  LipFilter filter("k");
  ASSERT_TRUE(filter.Build(3, &pool).ok());
  ColumnVector build = IntegerVector({10, 20, 30});
  uint64_t hashes[3];
  HashVectorRows(build, 3, true, hashes);
  for (uint64_t hash : hashes) filter.Insert(hash);

  ColumnVector probe = IntegerVector({20, std::nullopt, 10, 30, 20});
  SelectionVector out = EmptySelection();
  filter.KeepMembers({&probe}, nullptr, 5, &out);
  // Rows 0, 2, 3, 4 must pass (no false negatives); the NULL row never does.
  std::vector<uint32_t> kept = Rows(out);
  EXPECT_EQ(kept, (std::vector<uint32_t>{0, 2, 3, 4}));

  SelectionVector in = EmptySelection();
  in.rows[0] = 1;
  in.rows[1] = 3;
  in.count = 2;
  filter.KeepMembers({&probe}, &in, 5, &out);
  EXPECT_EQ(Rows(out), (std::vector<uint32_t>{3}));
}

TEST(LipFilterTest, IntegerKeysWithoutNullsTakeTheInlineHashAndMissNothing) {
  BufferPool pool(64 << 20, nullptr);
  LipFilter filter("k");
  ASSERT_TRUE(filter.Build(1000, &pool).ok());
  std::vector<std::optional<int32_t>> build_keys;
  for (int32_t k = 0; k < 1000; ++k) build_keys.push_back(k * 3);
  ColumnVector build = IntegerVector(build_keys);
  uint64_t hashes[1000];
  HashVectorRows(build, 1000, true, hashes);
  for (uint64_t hash : hashes) filter.Insert(hash);
  std::vector<std::optional<int32_t>> probe_keys;
  for (int32_t k = 0; k < static_cast<int32_t>(kVectorSize); ++k) probe_keys.push_back(k);
  ColumnVector probe = IntegerVector(probe_keys);
  ASSERT_FALSE(probe.has_nulls());
  SelectionVector out = EmptySelection();
  filter.KeepMembers({&probe}, nullptr, kVectorSize, &out);
  std::unordered_set<uint32_t> kept(out.rows.begin(), out.rows.begin() + out.count);
  int false_positives = 0;
  for (uint32_t k = 0; k < kVectorSize; ++k) {
    if (k % 3 == 0 && k < 3000) {
      EXPECT_TRUE(kept.contains(k)) << k;
    } else {
      false_positives += kept.contains(k);
    }
  }
  EXPECT_LT(false_positives, 100);  // of about 1,365 non-members
}

// KeepIntegerKeys (eight keys at a time where the build has AVX-512) keeps exactly the rows that MayContain
// passes, in order: INTEGER and BIGINT keys, negative ones, with and without a selection, counts that are no
// multiple of eight, and the selection rewritten in place.
TEST(BlockedBloomFilterTest, KeepIntegerKeysKeepsExactlyTheRowsMayContainPasses) {
  BufferPool pool(64 << 20, nullptr);
  auto bloom = BlockedBloomFilter::Create(500, &pool);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  std::mt19937_64 random(7);
  std::vector<int64_t> wide(kVectorSize);
  std::vector<int32_t> narrow(kVectorSize);
  for (uint32_t i = 0; i < kVectorSize; ++i) {
    wide[i] = static_cast<int64_t>(random() % 4000) - 2000 + (i % 5 == 0 ? (int64_t{1} << 40) : 0);
    narrow[i] = static_cast<int32_t>(random() % 4000) - 2000;
  }
  for (int64_t key = -2000; key < 2000; key += 8) {
    (*bloom)->Insert(HashIntegerKey(key));
    (*bloom)->Insert(HashIntegerKey(key + (int64_t{1} << 40)));
  }
  std::vector<uint32_t> selection;
  for (uint32_t i = 0; i < kVectorSize; i += 1 + static_cast<uint32_t>(random() % 3)) selection.push_back(i);
  for (uint32_t count : {0u, 5u, 8u, 13u, 1000u, static_cast<uint32_t>(selection.size())}) {
    for (bool selected : {false, true}) {
      const uint32_t* rows = selected ? selection.data() : nullptr;
      std::vector<uint32_t> expected_narrow, expected_wide;
      for (uint32_t i = 0; i < count; ++i) {
        const uint32_t row = rows != nullptr ? rows[i] : i;
        if ((*bloom)->MayContain(HashIntegerKey(narrow[row]))) expected_narrow.push_back(row);
        if ((*bloom)->MayContain(HashIntegerKey(wide[row]))) expected_wide.push_back(row);
      }
      ASSERT_LT(expected_narrow.size(), std::max<size_t>(count, 1)) << "the filter should drop some keys";
      std::vector<uint32_t> kept(kVectorSize);
      uint32_t kept_count = (*bloom)->KeepIntegerKeys(narrow.data(), rows, count, kept.data());
      EXPECT_EQ(std::vector<uint32_t>(kept.begin(), kept.begin() + kept_count), expected_narrow)
          << count << " INTEGER keys, selection " << selected;
      kept_count = (*bloom)->KeepIntegerKeys(wide.data(), rows, count, kept.data());
      EXPECT_EQ(std::vector<uint32_t>(kept.begin(), kept.begin() + kept_count), expected_wide)
          << count << " BIGINT keys, selection " << selected;
      if (selected) {  // in place: the selection is also the output
        std::vector<uint32_t> in_place = selection;
        kept_count = (*bloom)->KeepIntegerKeys(wide.data(), in_place.data(), count, in_place.data());
        EXPECT_EQ(std::vector<uint32_t>(in_place.begin(), in_place.begin() + kept_count), expected_wide) << count;
      }
    }
  }
}

// KeepIntegerKeyTuples keeps exactly the rows whose composite key, hashed as HashSelectedRows combines columns,
// MayContain passes: an INTEGER and a BIGINT column, three columns, with and without a selection, counts that
// are no multiple of eight, in place.
TEST(BlockedBloomFilterTest, KeepIntegerKeyTuplesHashesLikeHashSelectedRows) {
  BufferPool pool(64 << 20, nullptr);
  auto bloom = BlockedBloomFilter::Create(300, &pool);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  std::mt19937_64 random(11);
  ColumnVector narrow(Type::Integer());
  ColumnVector wide(Type::BigInt());
  ColumnVector third(Type::Integer());
  narrow.ResetOwned(kVectorSize);
  wide.ResetOwned(kVectorSize);
  third.ResetOwned(kVectorSize);
  for (uint32_t i = 0; i < kVectorSize; ++i) {
    narrow.mutable_values<int32_t>()[i] = static_cast<int32_t>(random() % 40) - 20;
    wide.mutable_values<int64_t>()[i] = static_cast<int64_t>(random() % 30) + (i % 3 == 0 ? (int64_t{1} << 40) : 0);
    third.mutable_values<int32_t>()[i] = static_cast<int32_t>(random() % 4);
  }
  for (const std::vector<const ColumnVector*>& keys :
       {std::vector<const ColumnVector*>{&narrow, &wide}, std::vector<const ColumnVector*>{&wide, &narrow, &third}}) {
    uint64_t all_hashes[kVectorSize];
    for (size_t k = 0; k < keys.size(); ++k) HashVectorRows(*keys[k], kVectorSize, k == 0, all_hashes);
    for (uint32_t i = 0; i < kVectorSize; i += 5) (*bloom)->Insert(all_hashes[i]);  // a fifth of the rows' keys
    std::vector<BlockedBloomFilter::IntegerKeyColumn> columns;
    for (const ColumnVector* key : keys) {
      columns.push_back(key->type().id() == TypeId::kBigInt
                            ? BlockedBloomFilter::IntegerKeyColumn{key->values<int64_t>(), true}
                            : BlockedBloomFilter::IntegerKeyColumn{key->values<int32_t>(), false});
    }
    std::vector<uint32_t> selection;
    for (uint32_t i = 0; i < kVectorSize; i += 1 + static_cast<uint32_t>(random() % 3)) selection.push_back(i);
    for (uint32_t count : {0u, 7u, 8u, 21u, 600u, static_cast<uint32_t>(selection.size())}) {
      ASSERT_LE(count, selection.size());
      for (bool selected : {false, true}) {
        const uint32_t* rows = selected ? selection.data() : nullptr;
        std::vector<uint32_t> expected;
        for (uint32_t i = 0; i < count; ++i) {
          const uint32_t row = rows != nullptr ? rows[i] : i;
          if ((*bloom)->MayContain(all_hashes[row])) expected.push_back(row);
        }
        if (count >= 600) ASSERT_LT(expected.size(), count) << "the filter should drop some keys";
        std::vector<uint32_t> kept(kVectorSize);
        uint32_t kept_count =
            (*bloom)->KeepIntegerKeyTuples(columns.data(), static_cast<int>(columns.size()), rows, count, kept.data());
        EXPECT_EQ(std::vector<uint32_t>(kept.begin(), kept.begin() + kept_count), expected)
            << keys.size() << " keys, " << count << " rows, selection " << selected;
        if (selected) {
          std::vector<uint32_t> in_place = selection;
          kept_count = (*bloom)->KeepIntegerKeyTuples(columns.data(), static_cast<int>(columns.size()), in_place.data(),
                                                      count, in_place.data());
          EXPECT_EQ(std::vector<uint32_t>(in_place.begin(), in_place.begin() + kept_count), expected) << count;
        }
      }
    }
  }
}

TEST(LipFilterTest, MultiColumnKeysHashLikeTheJoinHashTable) {
  BufferPool pool(64 << 20, nullptr);
  LipFilter filter("a, b");
  ASSERT_TRUE(filter.Build(2, &pool).ok());
  ColumnVector a = IntegerVector({1, 2});
  ColumnVector b = IntegerVector({5, 6});
  uint64_t hashes[2];
  HashVectorRows(a, 2, true, hashes);
  HashVectorRows(b, 2, false, hashes);
  for (uint64_t hash : hashes) filter.Insert(hash);
  ColumnVector pa = IntegerVector({1, 2, 1});
  ColumnVector pb = IntegerVector({5, 6, std::nullopt});
  SelectionVector out = EmptySelection();
  filter.KeepMembers({&pa, &pb}, nullptr, 3, &out);
  EXPECT_EQ(Rows(out), (std::vector<uint32_t>{0, 1}));
  ColumnVector pc = IntegerVector({5, 6, 5});  // no NULLs: the integer-tuple path
  ColumnVector pd = IntegerVector({2, 1, 1});
  filter.KeepMembers({&pd, &pc}, nullptr, 3, &out);
  EXPECT_EQ(Rows(out), (std::vector<uint32_t>{2}));
}

TEST(ExactFilterTest, MembershipOverTheRangeWithNullsAndOutOfRangeProbes) {
  BufferPool pool(64 << 20, nullptr);
  auto filter = ExactFilter::Create(Type::Integer(), 100, 199, /*counts_duplicates=*/false, &pool);
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_EQ(pool.Usage().by_kind[static_cast<int>(MemoryKind::kBlob)], 64u);  // 100 bits -> 2 words, 64-byte grain
  ColumnVector build = IntegerVector({100, 150, std::nullopt, 199, 150});
  ASSERT_TRUE((*filter)->InsertKeys(build, nullptr, 5).ok());
  EXPECT_EQ((*filter)->duplicate_keys(), 1);
  EXPECT_FALSE((*filter)->expands_rows());  // duplicates only matter for filters made from inner joins

  ColumnVector probe = IntegerVector({99, 100, 101, 150, std::nullopt, 199, 200, -5});
  SelectionVector out = EmptySelection();
  (*filter)->KeepMembers({&probe}, nullptr, 8, &out);
  EXPECT_EQ(Rows(out), (std::vector<uint32_t>{1, 3, 5}));
  (*filter)->KeepNonMembers({&probe}, nullptr, 8, &out);
  EXPECT_EQ(Rows(out), (std::vector<uint32_t>{0, 2, 4, 6, 7}));  // a NULL key is never a member
}

TEST(ExactFilterTest, BigIntKeysAndBuildKeysOutsideTheRange) {
  BufferPool pool(64 << 20, nullptr);
  auto filter = ExactFilter::Create(Type::BigInt(), int64_t{1} << 40, (int64_t{1} << 40) + 9, false, &pool);
  ASSERT_TRUE(filter.ok());
  ColumnVector build(Type::BigInt());
  build.ResetOwned(2);
  build.mutable_values<int64_t>()[0] = (int64_t{1} << 40) + 3;
  build.mutable_values<int64_t>()[1] = (int64_t{1} << 40) + 10;  // outside
  SelectionVector first = EmptySelection();
  first.rows[0] = 0;
  first.count = 1;
  ASSERT_TRUE((*filter)->InsertKeys(build, &first, 2).ok());
  EXPECT_TRUE((*filter)->Contains((int64_t{1} << 40) + 3));
  EXPECT_FALSE((*filter)->Contains((int64_t{1} << 40) + 4));
  EXPECT_EQ((*filter)->InsertKeys(build, nullptr, 2).code(), absl::StatusCode::kInternal);
}

TEST(ExactFilterTest, RejectsUnsupportedTypesAndHugeRanges) {
  BufferPool pool(64 << 20, nullptr);
  EXPECT_FALSE(ExactFilter::Create(Type::Double(), 0, 10, false, &pool).ok());
  EXPECT_FALSE(ExactFilter::Create(Type::BigInt(), 0, ExactFilter::kMaxBits, false, &pool).ok());
  EXPECT_FALSE(ExactFilter::Create(Type::Integer(), 5, 4, false, &pool).ok());
}

TEST(ExactFilterTest, CountsMultiplicitiesForFiltersMadeFromInnerJoins) {
  BufferPool pool(64 << 20, nullptr);
  auto filter = ExactFilter::Create(Type::Integer(), 1, 10, /*counts_duplicates=*/true, &pool);
  ASSERT_TRUE(filter.ok());
  ColumnVector build = IntegerVector({1, 2, 2, 3, 3, 3});
  ASSERT_TRUE((*filter)->InsertKeys(build, nullptr, 6).ok());
  EXPECT_TRUE((*filter)->expands_rows());
  EXPECT_EQ((*filter)->duplicate_keys(), 3);
  ColumnVector probe = IntegerVector({1, 2, 3});
  EXPECT_EQ((*filter)->Multiplicity({&probe}, 0), 1u);
  EXPECT_EQ((*filter)->Multiplicity({&probe}, 1), 2u);
  EXPECT_EQ((*filter)->Multiplicity({&probe}, 2), 3u);
}

TEST(ExactFilterTest, ConcurrentInsertsSetEveryBit) {
  BufferPool pool(64 << 20, nullptr);
  auto filter = ExactFilter::Create(Type::Integer(), 0, 99999, false, &pool);
  ASSERT_TRUE(filter.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::optional<int32_t>> keys;
      for (int32_t k = t; k < 100000; k += 4) keys.push_back(k);
      for (size_t first = 0; first < keys.size(); first += kVectorSize) {
        std::vector<std::optional<int32_t>> part(keys.begin() + first,
                                                 keys.begin() + std::min(keys.size(), first + kVectorSize));
        ColumnVector vector = IntegerVector(part);
        ASSERT_TRUE((*filter)->InsertKeys(vector, nullptr, static_cast<uint32_t>(part.size())).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int32_t k = 0; k < 100000; ++k) ASSERT_TRUE((*filter)->Contains(k)) << k;
  EXPECT_EQ((*filter)->duplicate_keys(), 0);
}

// A one-column INTEGER block holding keys 0..rows-1.
std::shared_ptr<TemporaryRelation> KeyBlock(int32_t rows, BufferPool* pool) {
  auto relation = std::make_shared<TemporaryRelation>(
      std::vector<ColumnSchema>{ColumnSchema{"k", Type::Integer(), true, {}}}, pool);
  VectorBlockWriter writer(relation.get());
  std::vector<std::optional<int32_t>> keys;
  for (int32_t k = 0; k < rows; ++k) keys.push_back(k);
  ColumnVector vector = IntegerVector(keys);
  EXPECT_TRUE(writer.Append({&vector}, nullptr, static_cast<uint32_t>(rows)).ok());
  EXPECT_TRUE(writer.Flush().ok());
  return relation;
}

// An exact filter over [0, 999] holding `keys`.
std::shared_ptr<ExactFilter> FilterOf(const std::vector<std::optional<int32_t>>& keys, bool counts_duplicates,
                                      BufferPool* pool) {
  auto filter = ExactFilter::Create(Type::Integer(), 0, 999, counts_duplicates, pool);
  EXPECT_TRUE(filter.ok());
  ColumnVector vector = IntegerVector(keys);
  EXPECT_TRUE((*filter)->InsertKeys(vector, nullptr, static_cast<uint32_t>(keys.size())).ok());
  return std::shared_ptr<ExactFilter>(std::move(*filter));
}

// The keys a scanner hands out for the block, in order, each as often as it appears.
std::vector<int32_t> ScanKeys(const ScanSpec& spec, const BlockView& block) {
  BlockScanner scanner(spec);
  std::vector<int32_t> keys;
  while (true) {
    absl::StatusOr<bool> more = scanner.Next(block);
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) break;
    const SelectionVector* selection = scanner.selection();
    for (uint32_t s = 0; s < scanner.selected_count(); ++s) {
      keys.push_back(scanner.batch().columns[0].values<int32_t>()[selection != nullptr ? selection->rows[s] : s]);
    }
  }
  return keys;
}

TEST(BlockScannerRuntimeFiltersTest, AppliesTheMostSelectiveFilterFirstOnceItHasBeenObserved) {
  BufferPool pool(64 << 20, nullptr);
  auto relation = KeyBlock(1000, &pool);
  std::vector<std::optional<int32_t>> most;  // 900 of 1000 keys
  for (int32_t k = 0; k < 900; ++k) most.push_back(k);
  std::vector<std::optional<int32_t>> few;  // 10 keys, 5 of them also in `most`
  for (int32_t k = 895; k < 905; ++k) few.push_back(k);
  ScanSpec spec;
  spec.block_columns = {0};
  spec.types = {Type::Integer()};
  spec.runtime_filters.push_back({FilterOf(most, false, &pool), {0}, /*member=*/true});
  spec.runtime_filters.push_back({FilterOf(few, false, &pool), {0}, /*member=*/true});
  const RuntimeFilterCounters& broad = *spec.runtime_filters[0].counters;
  const RuntimeFilterCounters& narrow = *spec.runtime_filters[1].counters;

  EXPECT_EQ(ScanKeys(spec, relation->block(0)), (std::vector<int32_t>{895, 896, 897, 898, 899}));
  // Nothing observed yet: the filters run in their listed order.
  EXPECT_EQ(broad.rows_in.load(), 1000);
  EXPECT_EQ(broad.rows_out.load(), 900);
  EXPECT_EQ(narrow.rows_in.load(), 900);

  EXPECT_EQ(ScanKeys(spec, relation->block(0)), (std::vector<int32_t>{895, 896, 897, 898, 899}));
  // The narrow filter passed 5 of 900 rows, the broad one 90%: now the narrow one goes first.
  EXPECT_EQ(narrow.rows_in.load(), 900 + 1000);
  EXPECT_EQ(broad.rows_in.load(), 1000 + 10);
}

TEST(BlockScannerRuntimeFiltersTest, AnOptionalFilterThatPassedAlmostEveryRowIsLeftOutAndARequiredOneIsNot) {
  BufferPool pool(64 << 20, nullptr);
  auto relation = KeyBlock(1000, &pool);
  std::vector<std::optional<int32_t>> most;  // 950 of 1000 keys: a 95% pass rate
  for (int32_t k = 0; k < 950; ++k) most.push_back(k);
  std::vector<int32_t> all(1000), kept(950);
  std::iota(all.begin(), all.end(), 0);
  std::iota(kept.begin(), kept.end(), 0);
  for (const bool optional : {true, false}) {
    SCOPED_TRACE(optional ? "optional (a LIP filter)" : "required (a semi join's exact filter)");
    ScanSpec spec;
    spec.block_columns = {0};
    spec.types = {Type::Integer()};
    spec.runtime_filters.push_back({FilterOf(most, false, &pool), {0}, /*member=*/true});
    spec.runtime_filters[0].optional = optional;
    const RuntimeFilterCounters& counters = *spec.runtime_filters[0].counters;
    // Until it has seen kRowsToJudgeAFilter rows, every scanner applies it.
    int64_t scanned = 0;
    while (scanned < BlockScanner::kRowsToJudgeAFilter) {
      ASSERT_EQ(ScanKeys(spec, relation->block(0)), kept);
      scanned += 1000;
    }
    EXPECT_EQ(counters.rows_in.load(), scanned);
    // Then an optional filter is left out (its join would check the 5% it let through again anyway).
    EXPECT_EQ(ScanKeys(spec, relation->block(0)), optional ? all : kept);
    EXPECT_EQ(counters.rows_in.load(), optional ? scanned : scanned + 1000);
  }
}

TEST(BlockScannerRuntimeFiltersTest, BitTestFiltersRunBeforeTheFilterPredicateAndTheOthersAfterIt) {
  BufferPool pool(64 << 20, nullptr);
  auto relation = KeyBlock(1000, &pool);
  // A dense LIP filter (one bit test per row) holding 3, 400, 450, 600 and 999.
  auto dense = std::make_shared<LipFilter>("dense");
  ASSERT_TRUE(dense->BuildDense(0, 999, &pool).ok());
  for (int64_t key : {3, 400, 450, 600, 999}) dense->InsertDenseKey(key);
  ASSERT_TRUE(dense->probes_before_scan_filter());
  // An exact filter holding every key but 450 (not a bit-test LIP filter: it runs after the predicate).
  std::vector<std::optional<int32_t>> all_but_450;
  for (int32_t k = 0; k < 1000; ++k) {
    if (k != 450) all_but_450.push_back(k);
  }
  ScanSpec spec;
  spec.block_columns = {0};
  spec.types = {Type::Integer()};
  spec.filter = MakeComparison(ComparisonOp::kLess, MakeColumn(0, Type::Integer()), MakeConstant(Value::Integer(500)));
  spec.runtime_filters.push_back({FilterOf(all_but_450, false, &pool), {0}, /*member=*/true});
  spec.runtime_filters.push_back({dense, {0}, /*member=*/true});
  spec.Prepare();
  const RuntimeFilterCounters& late = *spec.runtime_filters[0].counters;
  const RuntimeFilterCounters& early = *spec.runtime_filters[1].counters;

  EXPECT_EQ(ScanKeys(spec, relation->block(0)), (std::vector<int32_t>{3, 400}));
  // The dense filter saw every row; the predicate kept 3 of its 5; the exact filter saw those 3.
  EXPECT_EQ(early.rows_in.load(), 1000);
  EXPECT_EQ(early.rows_out.load(), 5);
  EXPECT_EQ(late.rows_in.load(), 3);
  EXPECT_EQ(late.rows_out.load(), 2);

  // Without a predicate the filters run in their observed order as before.
  ScanSpec plain;
  plain.block_columns = {0};
  plain.types = {Type::Integer()};
  plain.runtime_filters.push_back({dense, {0}, /*member=*/true});
  EXPECT_EQ(ScanKeys(plain, relation->block(0)), (std::vector<int32_t>{3, 400, 450, 600, 999}));
}

TEST(BlockScannerRuntimeFiltersTest, AntiFiltersKeepNonMembersAndExpandingFiltersRepeatRows) {
  BufferPool pool(64 << 20, nullptr);
  auto relation = KeyBlock(1000, &pool);
  std::vector<std::optional<int32_t>> all_but_three;
  for (int32_t k = 0; k < 1000; ++k) {
    if (k != 7 && k != 500 && k != 999) all_but_three.push_back(k);
  }
  ScanSpec anti;
  anti.block_columns = {0};
  anti.types = {Type::Integer()};
  anti.runtime_filters.push_back({FilterOf(all_but_three, false, &pool), {0}, /*member=*/false});
  EXPECT_EQ(ScanKeys(anti, relation->block(0)), (std::vector<int32_t>{7, 500, 999}));

  // Key 3 three times, key 900 twice: an inner join would give those probe rows three and two times.
  ScanSpec expanding;
  expanding.block_columns = {0};
  expanding.types = {Type::Integer()};
  auto filter = FilterOf({3, 900, 3, 42, 3, 900}, /*counts_duplicates=*/true, &pool);
  ASSERT_TRUE(filter->expands_rows());
  expanding.runtime_filters.push_back({filter, {0}, /*member=*/true});
  EXPECT_EQ(ScanKeys(expanding, relation->block(0)), (std::vector<int32_t>{3, 3, 3, 42, 900, 900}));
}

TEST(BlockScannerRuntimeFiltersTest, ExpansionBeyondOneVectorComesInSeveralBatches) {
  BufferPool pool(64 << 20, nullptr);
  auto relation = KeyBlock(1000, &pool);
  // Every key three times: 3,000 rows out of 1,000, more than one batch (kVectorSize) holds.
  std::vector<std::optional<int32_t>> twice;
  for (int round = 0; round < 3; ++round) {
    for (int32_t k = 0; k < 1000; ++k) twice.push_back(k);
  }
  ScanSpec spec;
  spec.block_columns = {0};
  spec.types = {Type::Integer()};
  spec.runtime_filters.push_back({FilterOf(twice, true, &pool), {0}, /*member=*/true});
  std::vector<int32_t> keys = ScanKeys(spec, relation->block(0));
  ASSERT_EQ(keys.size(), 3000u);
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(keys[i], static_cast<int32_t>(i / 3)) << i;
}

}  // namespace
}  // namespace tessera
