#include "storage/block_builder.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/block_layout.h"

namespace tessera {
namespace {

std::vector<ColumnSchema> MixedColumns() {
  return {{"id", Type::Integer(), true, {}},          {"big", Type::BigInt(), false, {}},
          {"price", Type::Decimal(15, 2), false, {}}, {"wide", Type::Decimal(30, 4), false, {}},
          {"name", Type::Varchar(20), false, {}},     {"day", Type::Date(), false, {}},
          {"ratio", Type::Double(), false, {}},       {"flag", Type::Boolean(), false, {}}};
}

TEST(BlockBuilderTest, RoundTripsValuesNullsAndZoneMaps) {
  std::vector<ColumnSchema> columns = MixedColumns();
  BlockBuilder builder(columns, 1 << 20);
  for (int i = 0; i < 100; ++i) {
    builder.Append<int32_t>(0, i);
    if (i % 10 == 0) builder.AppendNull(1);
    else builder.Append<int64_t>(1, int64_t{i} * 1000000000LL);
    builder.Append<int64_t>(2, 1000 - i);
    builder.Append<int128>(3, int128{i} * 10000);
    if (i % 3 == 0) builder.AppendNull(4);
    else builder.AppendString(4, "name" + std::to_string(i));
    builder.Append<int32_t>(5, 9000 + i);
    builder.Append<double>(6, i / 4.0);
    builder.Append<uint8_t>(7, i % 2);
    ASSERT_TRUE(builder.CommitRow());
  }
  std::vector<uint8_t> memory(builder.EncodedSize());
  size_t size = builder.EncodedSize();
  builder.Finish(memory.data());
  EXPECT_TRUE(builder.empty());
  BlockView::Seal(memory.data());  // as blocks on disk are
  ASSERT_TRUE(BlockView::Validate(memory.data(), size, columns.size()).ok());

  BlockView block(memory.data());
  EXPECT_EQ(block.row_count(), 100u);
  EXPECT_EQ(block.used_bytes(), size);
  EXPECT_EQ(block.Validity(0), nullptr);  // no NULLs: no bitmap
  EXPECT_EQ(block.NullCount(1), 10u);
  EXPECT_EQ(block.NullCount(4), 34u);
  EXPECT_TRUE(block.IsNull(1, 20));
  EXPECT_FALSE(block.IsNull(1, 21));
  EXPECT_EQ(block.Values<int32_t>(0)[42], 42);
  EXPECT_EQ(block.Values<int64_t>(1)[21], 21000000000LL);
  EXPECT_EQ(block.GetString(4, 5), "name5");
  EXPECT_EQ(block.GetString(4, 6), "");
  EXPECT_EQ(block.GetValue(2, 0, columns[2].type).ToString(), "10.00");
  EXPECT_EQ(block.GetValue(3, 3, columns[3].type).ToString(), "3.0000");
  EXPECT_TRUE(block.GetValue(4, 3, columns[4].type).is_null());

  EXPECT_EQ(block.ZoneMin(0, columns[0].type).ToString(), "0");
  EXPECT_EQ(block.ZoneMax(0, columns[0].type).ToString(), "99");
  EXPECT_EQ(block.ZoneMin(1, columns[1].type).ToString(), "1000000000");  // NULL rows are ignored
  EXPECT_EQ(block.ZoneMin(2, columns[2].type).ToString(), "9.01");
  EXPECT_EQ(block.ZoneMax(2, columns[2].type).ToString(), "10.00");
  EXPECT_EQ(block.ZoneMin(4, columns[4].type).ToString(), "name1");
  EXPECT_EQ(block.ZoneMax(4, columns[4].type).ToString(), "name98");
  EXPECT_EQ(block.ZoneMax(6, columns[6].type).ToString(), "24.75");
}

TEST(BlockBuilderTest, IntermediatesSkipOnlyTheStringZoneMaps) {
  std::vector<ColumnSchema> columns = MixedColumns();
  BlockBuilder builder(columns, 1 << 20);
  for (int i = 0; i < 10; ++i) {
    builder.Append<int32_t>(0, i);
    builder.Append<int64_t>(1, i);
    builder.Append<int64_t>(2, i);
    builder.Append<int128>(3, i);
    builder.AppendString(4, "name" + std::to_string(i));
    builder.Append<int32_t>(5, i);
    builder.Append<double>(6, i);
    builder.Append<uint8_t>(7, i % 2);
    ASSERT_TRUE(builder.CommitRow());
  }
  std::vector<uint8_t> memory(builder.EncodedSize());
  builder.Finish(memory.data(), /*string_zone_maps=*/false);
  BlockView block(memory.data());
  EXPECT_FALSE(block.chunk(4).has_zone_map);
  EXPECT_EQ(block.GetString(4, 7), "name7");
  EXPECT_TRUE(block.chunk(0).has_zone_map);
  EXPECT_EQ(block.ZoneMax(0, columns[0].type).ToString(), "9");
}

TEST(BlockBuilderTest, RejectsTheRowThatDoesNotFitAndRollsItBack) {
  std::vector<ColumnSchema> columns = {{"k", Type::BigInt(), false, {}}, {"s", Type::Varchar(), false, {}}};
  const uint32_t block_size = 64 << 10;
  BlockBuilder builder(columns, block_size);
  std::string payload(100, 'x');
  int accepted = 0;
  while (true) {
    builder.Append<int64_t>(0, accepted);
    builder.AppendString(1, payload);
    if (!builder.CommitRow()) break;
    ++accepted;
  }
  EXPECT_GT(accepted, 500);
  EXPECT_EQ(builder.row_count(), static_cast<uint32_t>(accepted));
  EXPECT_LE(builder.EncodedSize(), block_size);
  EXPECT_TRUE(builder.RowFitsEmptyBlock());
  std::vector<uint8_t> memory(builder.EncodedSize());
  builder.Finish(memory.data());
  BlockView::Seal(memory.data());
  BlockView block(memory.data());
  ASSERT_TRUE(BlockView::Validate(memory.data(), memory.size(), 2).ok());
  EXPECT_EQ(block.Values<int64_t>(0)[accepted - 1], accepted - 1);
  EXPECT_EQ(block.GetString(1, accepted - 1), payload);
}

TEST(BlockBuilderTest, ValidateRejectsCorruptBlocks) {
  std::vector<ColumnSchema> columns = {{"s", Type::Varchar(), false, {}}};
  BlockBuilder builder(columns, 1 << 16);
  builder.AppendString(0, "hello");
  ASSERT_TRUE(builder.CommitRow());
  std::vector<uint8_t> memory(builder.EncodedSize());
  builder.Finish(memory.data());
  BlockView::Seal(memory.data());
  ASSERT_TRUE(BlockView::Validate(memory.data(), memory.size(), 1).ok());
  EXPECT_FALSE(BlockView::Validate(memory.data(), memory.size(), 2).ok());  // wrong column count
  EXPECT_FALSE(BlockView::Validate(memory.data(), 10, 1).ok());             // truncated
  std::vector<uint8_t> broken = memory;
  reinterpret_cast<BlockHeader*>(broken.data())->magic = 0;
  EXPECT_FALSE(BlockView::Validate(broken.data(), broken.size(), 1).ok());
  broken = memory;
  auto* chunk = reinterpret_cast<ColumnChunk*>(broken.data() + sizeof(BlockHeader));
  chunk->heap_bytes = 1 << 20;
  EXPECT_FALSE(BlockView::Validate(broken.data(), broken.size(), 1).ok());
}

TEST(BlockBuilderTest, ValidateRefusesAFormat2BlockWithoutChecksumsAndValuesShorterThanTheRows) {
  std::vector<ColumnSchema> columns = {{"k", Type::BigInt(), false, {}}, {"d", Type::Decimal(12, 2), true, {}}};
  BlockBuilder builder(columns, 1 << 16);
  for (int i = 0; i < 100; ++i) {
    builder.Append<int64_t>(0, i);
    builder.Append<int64_t>(1, i * 100);
    ASSERT_TRUE(builder.CommitRow());
  }
  std::vector<uint8_t> memory(builder.EncodedSize());
  builder.Finish(memory.data());
  BlockView::Seal(memory.data());
  ASSERT_TRUE(BlockView::Validate(memory.data(), memory.size(), 2).ok());
  // One flipped bit in the flags must not switch the checksums off: a format 2 block without them is damaged.
  std::vector<uint8_t> broken = memory;
  reinterpret_cast<BlockHeader*>(broken.data())->flags &= ~kBlockChecksummed;
  const absl::Status unsealed = BlockView::Validate(broken.data(), broken.size(), 2, /*from_disk=*/true);
  EXPECT_EQ(unsealed.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(unsealed.message().find("no checksums in a block of format 2"), std::string::npos) << unsealed;
  // Temporary blocks (another rank's, in a message) are never sealed.
  EXPECT_TRUE(BlockView::Validate(broken.data(), broken.size(), 2).ok());
  // Format 1 blocks (older data directories) never had checksums and are still read.
  reinterpret_cast<BlockHeader*>(broken.data())->version = 1;
  EXPECT_TRUE(BlockView::Validate(broken.data(), broken.size(), 2, /*from_disk=*/true).ok());
  // Against the table's types: the chunks' types must be the table's, and a plain column must hold a value of the
  // table's width per row (column 1 read as DECIMAL(30, 2), 16 bytes a value, would run past its 8-byte values).
  const std::vector<Type> table = {Type::BigInt(), Type::Decimal(12, 2)};
  EXPECT_TRUE(BlockView::Validate(memory.data(), memory.size(), 2, true, &table).ok());
  const std::vector<Type> retyped = {Type::Integer(), Type::Decimal(12, 2)};
  const absl::Status type = BlockView::Validate(memory.data(), memory.size(), 2, true, &retyped);
  EXPECT_NE(type.message().find("type 3 where the table has INTEGER in column 0"), std::string::npos) << type;
  const std::vector<Type> wider = {Type::BigInt(), Type::Decimal(30, 2)};
  const absl::Status wide = BlockView::Validate(memory.data(), memory.size(), 2, true, &wider);
  EXPECT_NE(wide.message().find("values shorter than the rows in column 1"), std::string::npos) << wide;
  // A plain fixed-width column whose values do not cover the rows (checksums recomputed over the damage).
  for (int column : {0, 1}) {
    broken = memory;
    auto* chunk = reinterpret_cast<ColumnChunk*>(broken.data() + sizeof(BlockHeader)) + column;
    chunk->values_bytes = 99 * 8;
    BlockView::Seal(broken.data());
    const absl::Status shorter = BlockView::Validate(broken.data(), broken.size(), 2);
    EXPECT_NE(shorter.message().find(absl::StrCat("values shorter than the rows in column ", column)),
              std::string::npos)
        << shorter;
  }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(BlockBuilderTest, ColumnWiseAppendsMatchRowWiseAppends) {
  std::vector<ColumnSchema> columns = {{"k", Type::BigInt(), false, {}}, {"s", Type::Varchar(), false, {}}};
  const uint32_t block_size = 64 << 10;
  std::vector<int64_t> keys(5000);
  std::vector<std::string> texts(5000);
  std::vector<std::string_view> views(5000);
  std::vector<uint32_t> string_bytes(5000);
  std::vector<uint8_t> validity((5000 + 7) / 8, 0xff);
  for (int i = 0; i < 5000; ++i) {
    keys[i] = i * 7;
    texts[i] = std::string(i % 50, 'a' + i % 26);
    views[i] = texts[i];
    string_bytes[i] = static_cast<uint32_t>(texts[i].size());
    if (i % 13 == 0) ClearBit(validity.data(), i);  // NULL key
  }
  BlockBuilder bulk(columns, block_size);
  const uint32_t fit = bulk.RowsThatFit(5000, string_bytes.data());
  ASSERT_GT(fit, 100u);
  ASSERT_LT(fit, 5000u);  // 64 KiB cannot hold all of them
  bulk.AppendFixedColumn(0, reinterpret_cast<const uint8_t*>(keys.data()), nullptr, fit, validity.data(), 0);
  bulk.AppendStringColumn(1, views.data(), nullptr, fit, nullptr, 0);
  size_t bytes = 0;
  for (uint32_t i = 0; i < fit; ++i) bytes += string_bytes[i];
  bulk.EndRows(fit, bytes);
  EXPECT_LE(bulk.EncodedSize(), block_size);

  BlockBuilder rows(columns, block_size);
  for (uint32_t i = 0; i < fit; ++i) {
    if (i % 13 == 0) rows.AppendNull(0);
    else rows.Append<int64_t>(0, keys[i]);
    rows.AppendString(1, views[i]);
    ASSERT_TRUE(rows.CommitRow());
  }
  std::vector<uint8_t> a(bulk.EncodedSize()), b(rows.EncodedSize());
  ASSERT_EQ(a.size(), b.size());
  bulk.Finish(a.data());
  rows.Finish(b.data());
  EXPECT_EQ(a, b);  // byte-identical blocks
}

// Rows of no columns (a FROM-less SELECT's one row, a semi-join probe side keeping no column) are legal: both append
// paths bound the block's row count as for one-byte rows instead of dividing by a zero row width.
TEST(BlockBuilderTest, RowsOfNoColumnsFillABoundedBlock) {
  const std::vector<ColumnSchema> none;
  const uint32_t block_size = 64 << 10;
  BlockBuilder bulk(none, block_size);
  const uint32_t fit = bulk.RowsThatFit(1000000, nullptr);
  EXPECT_GT(fit, block_size / 2);
  EXPECT_LT(fit, block_size);
  bulk.EndRows(3, 0);
  EXPECT_EQ(bulk.RowsThatFit(1000000, nullptr), fit - 3);
  EXPECT_EQ(bulk.row_count(), 3u);
  std::vector<uint8_t> memory(bulk.EncodedSize());
  bulk.Finish(memory.data());
  ASSERT_TRUE(BlockView::Validate(memory.data(), memory.size(), 0).ok());
  BlockView view(memory.data());
  EXPECT_EQ(view.row_count(), 3u);
  EXPECT_EQ(view.column_count(), 0);

  BlockBuilder rows(none, block_size);
  uint32_t committed = 0;
  while (rows.CommitRow()) ++committed;
  EXPECT_EQ(committed, fit);  // the row-at-a-time path agrees with RowsThatFit
  EXPECT_TRUE(rows.RowFitsEmptyBlock());
}

}  // namespace
}  // namespace tessera
