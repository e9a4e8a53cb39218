#include "storage/column_encoding.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/cord.h"
#include "gtest/gtest.h"
#include "storage/block_builder.h"
#include "storage/block_layout.h"

namespace tessera {
namespace {

// The SIMD kernels (where built) and the portable ones, into 64- and 32-bit values.
TEST(ColumnEncodingTest, PackedCodesRoundTripAtEveryWidthAndOffset) {
  std::mt19937_64 random(7);
  constexpr uint32_t kCount = 1000;
  for (int width = 0; width <= kMaxPackedBitWidth; ++width) {
    const uint64_t mask = width == 0 ? 0 : (uint64_t{1} << width) - 1;
    std::vector<uint64_t> codes(kCount);
    for (uint64_t& code : codes) code = random() & mask;
    codes[0] = mask;  // the widest code
    std::vector<uint8_t> packed(PackedBytes(kCount, width));
    PackCodes(codes.data(), kCount, width, packed.data());
    for (uint32_t first : {0u, 8u, 3u, 992u}) {  // group-aligned, unaligned, and a tail shorter than a group
      const uint32_t count = kCount - first;
      std::vector<int64_t> decoded(count);
      std::vector<int64_t> scalar(count);
      std::vector<int32_t> narrow(count);
      UnpackCodes<int64_t>(packed.data(), width, -5, first, count, decoded.data());
      UnpackCodesScalar<int64_t>(packed.data(), width, -5, first, count, scalar.data());
      if (width <= 31) UnpackCodes<int32_t>(packed.data(), width, -5, first, count, narrow.data());
      for (uint32_t i = 0; i < count; ++i) {
        ASSERT_EQ(decoded[i], static_cast<int64_t>(codes[first + i]) - 5) << "width " << width << " row " << first + i;
        ASSERT_EQ(scalar[i], decoded[i]) << "width " << width << " row " << first + i;
        if (width <= 31) {
          ASSERT_EQ(narrow[i], decoded[i]) << "width " << width << " row " << first + i;
        }
        ASSERT_EQ(UnpackCode(packed.data(), width, first + i), codes[first + i]);
      }
    }
  }
}

// SelectCodesInRange / SelectCodesInSet / SelectCodesInBitmap against a row-by-row reference at every width: whole vectors (several
// chunks), dense, one-in-eight and sparse input selections (in place), ranges past the widest code, empty ones.
TEST(ColumnEncodingTest, SelectCodesMatchesRowByRow) {
  std::mt19937_64 random(11);
  constexpr uint32_t kCount = 2048;
  constexpr uint32_t kFirst = 4096;  // the vector's first code in the stream
  for (int width = 0; width <= kMaxPackedBitWidth; ++width) {
    const uint64_t mask = width == 0 ? 0 : (uint64_t{1} << width) - 1;
    std::vector<uint64_t> codes(kFirst + kCount);
    for (uint64_t& code : codes) code = random() & mask;
    std::vector<uint8_t> packed(PackedBytes(kFirst + kCount, width));
    PackCodes(codes.data(), kFirst + kCount, width, packed.data());
    std::vector<uint32_t> dense;
    std::vector<uint32_t> eighth;  // chunks with fewer than 16 selected rows, and some with none
    std::vector<uint32_t> sparse;
    for (uint32_t r = 0; r < kCount; ++r) {
      if (random() % 3 != 0) dense.push_back(r);
      if (random() % 8 == 0 && (r < 900 || r >= 1200)) eighth.push_back(r);
      if (random() % 100 == 0) sparse.push_back(r);
    }
    const uint64_t a = codes[kFirst + 5];
    const uint64_t b = codes[kFirst + 77];
    const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
        {std::min(a, b), std::max(a, b)}, {0, mask}, {a, a}, {0, ~uint64_t{0}}, {mask / 2, mask + 100}, {5, 4}};
    const std::vector<uint64_t> set = [&] {
      std::vector<uint64_t> values = {a, b, mask, 0};
      for (int i = 0; i < 8; ++i) values.push_back(random() & mask);
      std::sort(values.begin(), values.end());
      values.erase(std::unique(values.begin(), values.end()), values.end());
      return values;
    }();
    const std::vector<const std::vector<uint32_t>*> selections = {nullptr, &dense, &eighth, &sparse};
    for (const std::vector<uint32_t>* rows : selections) {
      auto reference = [&](const std::function<bool(uint64_t)>& keep) {
        std::vector<uint32_t> kept;
        const uint32_t n = rows != nullptr ? static_cast<uint32_t>(rows->size()) : kCount;
        for (uint32_t s = 0; s < n; ++s) {
          const uint32_t row = rows != nullptr ? (*rows)[s] : s;
          if (keep(codes[kFirst + row])) kept.push_back(row);
        }
        return kept;
      };
      for (const auto& [low, high] : ranges) {
        std::vector<uint32_t> out = rows != nullptr ? *rows : std::vector<uint32_t>();
        out.resize(kCount);  // in place over the input selection
        const uint32_t n =
            SelectCodesInRange(packed.data(), width, kFirst, kCount, rows != nullptr ? out.data() : nullptr,
                               rows != nullptr ? static_cast<uint32_t>(rows->size()) : 0, low, high, out.data());
        out.resize(n);
        EXPECT_EQ(out, reference([&](uint64_t code) { return code >= low && code <= high; }))
            << "width " << width << " range " << low << ".." << high << " rows " << (rows ? rows->size() : kCount);
      }
      std::vector<uint32_t> out = rows != nullptr ? *rows : std::vector<uint32_t>();
      out.resize(kCount);
      const uint32_t n = SelectCodesInSet(packed.data(), width, kFirst, kCount, rows != nullptr ? out.data() : nullptr,
                                          rows != nullptr ? static_cast<uint32_t>(rows->size()) : 0, set.data(),
                                          static_cast<uint32_t>(set.size()), out.data());
      out.resize(n);
      EXPECT_EQ(out, reference([&](uint64_t code) { return std::binary_search(set.begin(), set.end(), code); }))
          << "width " << width << " set of " << set.size();
      // Bit vectors (dense key filters): code ranges inside and past the codes, bit offsets in and across words.
      for (const auto& [low, span, base] : std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>{
               {0, std::min<uint64_t>(mask, 300000), 0},
               {std::min(a, b), std::min<uint64_t>(std::max(a, b) - std::min(a, b), 300000), 69},
               {a, 0, 5},
               {mask / 2, 100, 1000}}) {
        std::vector<uint64_t> bits((base + span + 1 + 63) / 64);
        for (uint64_t& word : bits) word = random() & random();  // about a quarter of the bits set
        std::vector<uint32_t> out = rows != nullptr ? *rows : std::vector<uint32_t>();
        out.resize(kCount);
        const uint32_t n = SelectCodesInBitmap(
            packed.data(), width, kFirst, kCount, rows != nullptr ? out.data() : nullptr,
            rows != nullptr ? static_cast<uint32_t>(rows->size()) : 0, low, span, bits.data(), base, out.data());
        out.resize(n);
        EXPECT_EQ(out, reference([&](uint64_t code) {
                    if (code < low || code - low > span) return false;
                    const uint64_t bit = base + (code - low);
                    return ((bits[bit / 64] >> (bit % 64)) & 1) != 0;
                  }))
            << "width " << width << " bitmap codes " << low << "+" << span << " at bit " << base;
      }
    }
  }
}

// SelectCodesAllOf against a row-by-row reference: one to four conjuncts over streams of different widths (up to
// kMaxFusedBitWidth), with and without a bitmap test (placed anywhere in the list: it runs last), selective and
// unselective ones, a vector length that leaves a tail shorter than 16 rows; the bitmap test's counts are those of
// evaluating it after the range tests.
TEST(ColumnEncodingTest, SelectCodesAllOfMatchesRowByRow) {
  std::mt19937_64 random(23);
  constexpr uint32_t kFirst = 2048;  // a multiple of 16
  for (uint32_t count : {1024u, 1000u, 7u, 2048u}) {
    for (int round = 0; round < 60; ++round) {
      const int test_count = 1 + round % 4;
      const int bitmap_at = round % 3 == 0 ? -1 : static_cast<int>(random() % test_count);
      std::vector<std::vector<uint64_t>> codes(test_count);
      std::vector<std::vector<uint8_t>> packed(test_count);
      std::vector<std::vector<uint64_t>> bits(test_count);
      std::vector<PackedCodeTest> tests(test_count);
      for (int k = 0; k < test_count; ++k) {
        const int width = static_cast<int>(random() % (kMaxFusedBitWidth + 1));
        const uint64_t mask = width == 0 ? 0 : (uint64_t{1} << width) - 1;
        codes[k].resize(kFirst + count);
        for (uint64_t& code : codes[k]) code = random() & mask;
        packed[k].resize(PackedBytes(kFirst + count, width));
        PackCodes(codes[k].data(), kFirst + count, width, packed[k].data());
        uint64_t low = random() & mask;
        uint64_t high = random() & mask;
        if (low > high) std::swap(low, high);
        if (round % 5 == 0) low = 0, high = mask;  // passes every row
        PackedCodeTest& test = tests[k];
        test.packed = packed[k].data();
        test.bit_width = width;
        test.low = static_cast<uint32_t>(low);
        test.span = static_cast<uint32_t>(high - low);
        if (k == bitmap_at) {
          test.span = static_cast<uint32_t>(std::min<uint64_t>(high - low, 100000));
          test.bit_base = static_cast<uint32_t>(random() % 100);
          bits[k].resize((test.bit_base + test.span + 1 + 63) / 64);
          for (uint64_t& word : bits[k]) word = random() | random();  // about three quarters set
          test.bits = bits[k].data();
        }
      }
      // The reference: range tests in order, then the bitmap test.
      std::vector<int> order;
      for (int k = 0; k < test_count; ++k) {
        if (k != bitmap_at) order.push_back(k);
      }
      if (bitmap_at >= 0) order.push_back(bitmap_at);
      std::vector<uint64_t> tested(test_count);
      std::vector<uint64_t> passed(test_count);
      std::vector<uint32_t> expected;
      for (uint32_t row = 0; row < count; ++row) {
        bool keep = true;
        for (int k : order) {
          tested[k] += k == bitmap_at;
          const PackedCodeTest& test = tests[k];
          const uint64_t code = codes[k][kFirst + row];
          keep = code >= test.low && code - test.low <= test.span;
          if (keep && test.bits != nullptr) {
            const uint64_t bit = test.bit_base + (code - test.low);
            keep = ((test.bits[bit / 64] >> (bit % 64)) & 1) != 0;
          }
          if (!keep) break;
          passed[k] += k == bitmap_at;
        }
        if (keep) expected.push_back(row);
      }
      std::vector<uint32_t> out(count);
      out.resize(SelectCodesAllOf(tests.data(), test_count, kFirst, count, out.data()));
      ASSERT_EQ(out, expected) << "count " << count << " round " << round;
      for (int k = 0; k < test_count; ++k) {
        EXPECT_EQ(tests[k].tested, tested[k]) << "count " << count << " round " << round << " test " << k;
        EXPECT_EQ(tests[k].passed, passed[k]) << "count " << count << " round " << round << " test " << k;
      }
    }
  }
}

TEST(ColumnEncodingTest, BitWidths) {
  EXPECT_EQ(BitWidthFor(0), 0);
  EXPECT_EQ(BitWidthFor(1), 1);
  EXPECT_EQ(BitWidthFor(255), 8);
  EXPECT_EQ(BitWidthFor(256), 9);
  EXPECT_EQ(PackedBytes(8, 3), 3u + 8u);
}

// Builds the same rows twice, plain and compressed, and checks that every cell reads the same through every
// read path of the compressed block (GetValue, GetFixed / GetString, the vector decoders).
class EncodedBlock {
 public:
  EncodedBlock(std::vector<ColumnSchema> columns, uint32_t rows,
               const std::function<void(BlockBuilder&, uint32_t row)>& append_row)
      : columns_(std::move(columns)) {
    BlockBuilder plain(columns_, 64 << 20);
    BlockBuilder compressed(columns_, 64 << 20);
    for (uint32_t r = 0; r < rows; ++r) {
      append_row(plain, r);
      append_row(compressed, r);
      EXPECT_TRUE(plain.CommitRow());
      EXPECT_TRUE(compressed.CommitRow());
    }
    plain_.resize(plain.EncodedSize());
    plain.Finish(plain_.data());
    compressed_.resize(compressed.PlanCompressed());
    compressed.FinishCompressed(compressed_.data());
  }

  BlockView plain() const { return BlockView(plain_.data()); }
  BlockView compressed() const { return BlockView(compressed_.data()); }
  std::vector<uint8_t>& compressed_bytes() { return compressed_; }

  void ExpectSameValues() const {
    ASSERT_TRUE(BlockView::Validate(compressed_.data(), compressed_.size(), columns_.size()).ok());
    const BlockView a = plain();
    const BlockView b = compressed();
    ASSERT_EQ(a.row_count(), b.row_count());
    for (size_t c = 0; c < columns_.size(); ++c) {
      const int column = static_cast<int>(c);
      const Type& type = columns_[c].type;
      EXPECT_EQ(a.NullCount(column), b.NullCount(column));
      EXPECT_EQ(a.chunk(column).has_zone_map, b.chunk(column).has_zone_map);
      EXPECT_EQ(a.ZoneMin(column, type).ToString(), b.ZoneMin(column, type).ToString()) << columns_[c].name;
      EXPECT_EQ(a.ZoneMax(column, type).ToString(), b.ZoneMax(column, type).ToString()) << columns_[c].name;
      for (uint32_t r = 0; r < a.row_count(); ++r) {
        ASSERT_EQ(a.GetValue(column, r, type).ToString(), b.GetValue(column, r, type).ToString())
            << columns_[c].name << " row " << r;
      }
      if (!b.IsEncoded(column)) continue;
      const uint32_t rows = b.row_count();
      if (type.IsString()) {
        std::vector<std::string_view> decoded(rows);
        b.DecodeStrings(column, 0, rows, decoded.data());
        for (uint32_t r = 0; r < rows; ++r) ASSERT_EQ(decoded[r], a.GetString(column, r)) << "row " << r;
        ExpectSameDecodedStringRows(a, b, column);
        continue;
      }
      switch (type.FixedWidth()) {
        case 4:
          ExpectSameDecoded<int32_t>(a, b, column);
          break;
        case 8:
          ExpectSameDecoded<int64_t>(a, b, column);
          break;
        default:
          ExpectSameDecoded<int128>(a, b, column);
          break;
      }
    }
  }

 private:
  // DecodeStringsRows of every row, every third and every 37th from a vector start and an unaligned one; NULL
  // rows read as '', the other slots of `out` keep their value.
  static void ExpectSameDecodedStringRows(const BlockView& a, const BlockView& b, int column) {
    const uint32_t rows = b.row_count();
    for (uint32_t first : {0u, 5u}) {
      if (first >= rows) continue;
      for (uint32_t step : {1u, 3u, 37u}) {
        std::vector<uint32_t> selected;
        for (uint32_t offset = 0; first + offset < rows; offset += step) selected.push_back(offset);
        std::vector<std::string_view> out(rows - first, "untouched");
        b.DecodeStringsRows(column, first, selected.data(), static_cast<uint32_t>(selected.size()), out.data());
        for (uint32_t offset = 0; first + offset < rows; ++offset) {
          const uint32_t r = first + offset;
          const std::string_view expected = offset % step == 0 ? a.GetString(column, r) : "untouched";
          ASSERT_EQ(out[offset], expected) << "row " << r << " step " << step;
        }
      }
    }
  }

  template <typename T>
  static void ExpectSameDecoded(const BlockView& a, const BlockView& b, int column) {
    const uint32_t rows = b.row_count();
    for (uint32_t first : {0u, 5u}) {  // a vector start and an unaligned one
      if (first >= rows) continue;
      std::vector<T> decoded(rows - first);
      b.DecodeFixed<T>(column, first, rows - first, decoded.data());
      for (uint32_t r = first; r < rows; ++r) {
        ASSERT_TRUE(decoded[r - first] == a.GetFixed<T>(column, r)) << "row " << r;  // NULL rows: zero in both
        ASSERT_TRUE(b.GetFixed<T>(column, r) == a.GetFixed<T>(column, r)) << "row " << r;
      }
      // DecodeFixedRows of every row, every third and every 37th (whole SIMD steps and tails); the other slots of
      // `out` keep their value.
      for (uint32_t step : {1u, 3u, 37u}) {
        std::vector<uint32_t> selected;
        for (uint32_t offset = 0; first + offset < rows; offset += step) selected.push_back(offset);
        std::vector<T> out(rows - first, T{7});
        b.DecodeFixedRows<T>(column, first, selected.data(), static_cast<uint32_t>(selected.size()), out.data());
        for (uint32_t offset = 0; first + offset < rows; ++offset) {
          const T expected = offset % step == 0 ? a.GetFixed<T>(column, first + offset) : T{7};
          ASSERT_TRUE(out[offset] == expected) << "row " << first + offset << " of every " << step;
        }
      }
    }
  }

  std::vector<ColumnSchema> columns_;
  std::vector<uint8_t> plain_;
  std::vector<uint8_t> compressed_;
};

std::vector<ColumnSchema> OneColumn(Type type) { return {{"c", type, false, {}}}; }

TEST(ColumnEncodingTest, FrameOfReferenceOnNegativeNumbersWithNulls) {
  EncodedBlock block(OneColumn(Type::Integer()), 5000, [](BlockBuilder& b, uint32_t r) {
    if (r % 7 == 0) {
      b.AppendNull(0);
    } else {
      b.Append<int32_t>(0, -1000 + static_cast<int32_t>(r % 300));
    }
  });
  EXPECT_EQ(block.compressed().encoding(0), ColumnEncoding::kFrameOfReference);
  EXPECT_EQ(block.compressed().chunk(0).bit_width, 9);  // range 299
  block.ExpectSameValues();
  EXPECT_LT(block.compressed().used_bytes(), block.plain().used_bytes() / 3);
}

// Frame of reference at every bit width of INTEGER and BIGINT values, read through every path.
TEST(ColumnEncodingTest, FrameOfReferenceAtEveryWidth) {
  int encoded = 0;
  for (const bool wide : {false, true}) {
    for (int width = 1; width <= (wide ? 63 : 32); ++width) {
      const uint64_t span = (uint64_t{1} << width) - 1;
      EncodedBlock block(OneColumn(wide ? Type::BigInt() : Type::Integer()), 3000, [&](BlockBuilder& b, uint32_t r) {
        // A function of the row (the builder calls this twice per row); rows 0 and 1 make the range `width` bits.
        const uint64_t hashed = (static_cast<uint64_t>(r) + 1) * 0x9e3779b97f4a7c15ull;
        const uint64_t offset = r == 0 ? 0 : r == 1 ? span : (hashed ^ (hashed >> 29)) & span;
        if (wide) {
          b.Append<int64_t>(0, static_cast<int64_t>(offset) - (int64_t{1} << 62));
        } else {
          b.Append<int32_t>(0, static_cast<int32_t>(static_cast<int64_t>(offset) - (int64_t{1} << 31)));
        }
      });
      if (block.compressed().encoding(0) != ColumnEncoding::kFrameOfReference) continue;  // too wide to pay
      ++encoded;
      SCOPED_TRACE(std::string(wide ? "BIGINT" : "INTEGER") + " width " + std::to_string(width));
      block.ExpectSameValues();
    }
  }
  EXPECT_GE(encoded, 25 + 57);  // all but the widest, which may not pay
}

TEST(ColumnEncodingTest, ConstantColumnTakesZeroBits) {
  EncodedBlock block(OneColumn(Type::BigInt()), 3000, [](BlockBuilder& b, uint32_t) { b.Append<int64_t>(0, -42); });
  EXPECT_EQ(block.compressed().encoding(0), ColumnEncoding::kFrameOfReference);
  EXPECT_EQ(block.compressed().chunk(0).bit_width, 0);
  EXPECT_EQ(block.compressed().chunk(0).values_bytes, 8u);
  block.ExpectSameValues();
}

TEST(ColumnEncodingTest, AllNullColumns) {
  EncodedBlock block({{"i", Type::Integer(), false, {}}, {"s", Type::Varchar(10), false, {}}}, 100,
                     [](BlockBuilder& b, uint32_t) {
                       b.AppendNull(0);
                       b.AppendNull(1);
                     });
  EXPECT_EQ(block.compressed().encoding(0), ColumnEncoding::kFrameOfReference);
  EXPECT_EQ(block.compressed().chunk(0).bit_width, 0);
  EXPECT_EQ(block.compressed().encoding(1), ColumnEncoding::kPlain);  // nothing to put in a dictionary
  block.ExpectSameValues();
}

TEST(ColumnEncodingTest, OneRow) {
  EncodedBlock block({{"i", Type::Date(), false, {}}, {"s", Type::Char(3), false, {}}}, 1,
                     [](BlockBuilder& b, uint32_t) {
                       b.Append<int32_t>(0, 10000);
                       b.AppendString(1, "abc");
                     });
  block.ExpectSameValues();
}

TEST(ColumnEncodingTest, ExtremesOfEachType) {
  // INT32 min..max needs 32 bits (no gain: plain); INT64 near its minimum packs; a range over 56 bits stays plain.
  EncodedBlock block(
      {{"full32", Type::Integer(), false, {}},
       {"low64", Type::BigInt(), false, {}},
       {"full64", Type::BigInt(), false, {}},
       {"wide", Type::Decimal(38, 2), false, {}},
       {"widefull", Type::Decimal(38, 0), false, {}}},
      1000, [](BlockBuilder& b, uint32_t r) {
        const bool odd = r % 2 == 1;
        b.Append<int32_t>(0, odd ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min());
        b.Append<int64_t>(1, std::numeric_limits<int64_t>::min() + (r % 5));
        b.Append<int64_t>(2, odd ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min());
        b.Append<int128>(3, -(int128{1} << 100) + r);
        b.Append<int128>(4, odd ? (int128{1} << 120) : -(int128{1} << 120));
      });
  const BlockView compressed = block.compressed();
  EXPECT_EQ(compressed.encoding(0), ColumnEncoding::kPlain);
  EXPECT_EQ(compressed.encoding(1), ColumnEncoding::kFrameOfReference);
  EXPECT_EQ(compressed.chunk(1).bit_width, 3);
  EXPECT_EQ(compressed.encoding(2), ColumnEncoding::kPlain);
  EXPECT_EQ(compressed.encoding(3), ColumnEncoding::kFrameOfReference);  // int128 values, a 10-bit range
  EXPECT_EQ(compressed.encoding(4), ColumnEncoding::kPlain);
  block.ExpectSameValues();
}

TEST(ColumnEncodingTest, DictionaryOfRepeatedAndLongStrings) {
  const std::string long_value(100000, 'x');
  EncodedBlock block({{"flag", Type::Char(1), false, {}}, {"text", Type::Varchar(200000), false, {}}}, 400,
                     [&](BlockBuilder& b, uint32_t r) {
                       const char* flags[] = {"R", "A", "N"};
                       if (r % 11 == 0) {
                         b.AppendNull(0);
                       } else {
                         b.AppendString(0, flags[r % 3]);
                       }
                       b.AppendString(1, r % 2 == 0 ? std::string_view(long_value) : std::string_view("short"));
                     });
  const BlockView compressed = block.compressed();
  ASSERT_EQ(compressed.encoding(0), ColumnEncoding::kDictionary);
  EXPECT_EQ(compressed.chunk(0).bit_width, 2);
  ASSERT_EQ(compressed.encoding(1), ColumnEncoding::kDictionary);
  EXPECT_EQ(compressed.Dictionary(0).size(), 3u);
  EXPECT_EQ(compressed.Dictionary(0)[0], "A");  // sorted: code order is value order
  EXPECT_EQ(compressed.Dictionary(0).LowerBound("B"), 1u);
  EXPECT_EQ(compressed.Dictionary(0).LowerBound("Z"), 3u);
  EXPECT_LT(compressed.used_bytes(), 200000u);  // the long value once, not 200 times
  block.ExpectSameValues();
}

TEST(ColumnEncodingTest, DistinctStringsStayPlain) {
  EncodedBlock block(OneColumn(Type::Varchar(20)), 1000,
                     [](BlockBuilder& b, uint32_t r) { b.AppendString(0, "comment " + std::to_string(r)); });
  EXPECT_EQ(block.compressed().encoding(0), ColumnEncoding::kPlain);
  block.ExpectSameValues();
}

EncodedBlock SmallMixedBlock() {
  return EncodedBlock({{"i", Type::Integer(), false, {}}, {"s", Type::Varchar(10), false, {}}}, 500,
                      [](BlockBuilder& b, uint32_t r) {
                        b.Append<int32_t>(0, static_cast<int32_t>(r));
                        b.AppendString(1, r % 2 == 0 ? "even" : "odd");
                      });
}

TEST(ColumnEncodingTest, ChecksumsNameTheDamagedColumn) {
  EncodedBlock block = SmallMixedBlock();
  std::vector<uint8_t>& bytes = block.compressed_bytes();
  ASSERT_TRUE(BlockView::Validate(bytes.data(), bytes.size(), 2).ok());
  const uint32_t heap = block.compressed().chunk(1).heap_offset;
  bytes[heap + 20] ^= 0x10;  // a dictionary byte of column 1
  const absl::Status damaged = BlockView::Validate(bytes.data(), bytes.size(), 2);
  EXPECT_EQ(damaged.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(damaged.message().find("checksum mismatch in column 1"), std::string::npos) << damaged;
  auto payload = damaged.GetPayload(BlockView::kDamagedColumnPayload);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(std::string(*payload), "1");
  bytes[heap + 20] ^= 0x10;

  bytes[sizeof(BlockHeader) + 4] ^= 1;  // column 0's values_bytes in the directory
  const absl::Status directory = BlockView::Validate(bytes.data(), bytes.size(), 2);
  EXPECT_NE(directory.message().find("header or column directory"), std::string::npos) << directory;
}

TEST(ColumnEncodingTest, FormatVersionsReadAndRefused) {
  EncodedBlock block = SmallMixedBlock();
  // A version 1 block (plain, no checksums: what older data directories hold) is still read.
  std::vector<uint8_t> old(block.plain().data(), block.plain().data() + block.plain().used_bytes());
  reinterpret_cast<BlockHeader*>(old.data())->version = 1;
  EXPECT_TRUE(BlockView::Validate(old.data(), old.size(), 2).ok());
  // A newer version is refused with both versions named.
  reinterpret_cast<BlockHeader*>(old.data())->version = 3;
  const absl::Status newer = BlockView::Validate(old.data(), old.size(), 2);
  EXPECT_NE(newer.message().find("block format version 3 is not readable by this build (it reads versions 1 to 2)"),
            std::string::npos)
      << newer;
}

TEST(ColumnEncodingTest, Crc32cKnownValue) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);  // the CRC-32C check value
  EXPECT_EQ(Crc32c("56789", 5, Crc32c("1234", 4)), 0xE3069283u);
}

}  // namespace
}  // namespace tessera
