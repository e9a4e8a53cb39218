#include "expressions/batch.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/block_builder.h"
#include "storage/block_layout.h"
#include "tests/expressions/test_batch.h"

namespace tessera {
namespace {

using namespace ::tessera::testing;  // NOLINT

TEST(ColumnVectorTest, SetNullCopiesABorrowedBitmapFirst) {
  uint8_t bitmap[2] = {0xFF, 0xFF};
  ClearBit(bitmap, 3);
  ColumnVector vector(Type::Integer());
  vector.ResetOwned(10);
  vector.BorrowValidity(bitmap, 2);  // row 1 is bit 3
  EXPECT_TRUE(vector.IsNull(1));
  EXPECT_FALSE(vector.IsNull(0));
  vector.SetNull(5);
  EXPECT_TRUE(vector.IsNull(1));
  EXPECT_TRUE(vector.IsNull(5));
  EXPECT_FALSE(vector.IsNull(6));
  EXPECT_EQ(bitmap[0], 0xF7);  // the borrowed bitmap is untouched
  EXPECT_EQ(bitmap[1], 0xFF);
  // ResetOwned clears the NULLs.
  vector.ResetOwned(10);
  EXPECT_FALSE(vector.has_nulls());
}

TEST(ColumnVectorTest, ArenaStringsStayValidWhileTheArenaGrows) {
  ColumnVector vector(Type::Varchar());
  vector.ResetOwned(kVectorSize);
  std::vector<std::string> expected;
  for (uint32_t r = 0; r < kVectorSize; ++r) {
    expected.push_back(std::string(r % 97, static_cast<char>('a' + r % 26)));
    vector.mutable_strings()[r] = vector.AppendToArena(expected.back());
  }
  for (uint32_t r = 0; r < kVectorSize; ++r) ASSERT_EQ(vector.strings()[r], expected[r]);
}

TEST(ColumnVectorTest, GetValueForEveryType) {
  ColumnVector wide = MakeVector(Type::Decimal(30, 2), {Dec("-123456789012345678901.25", 30, 2)});
  EXPECT_EQ(wide.GetValue(0).ToString(), "-123456789012345678901.25");
  ColumnVector interval = MakeVector(Type::IntervalType(), {IntervalOf("1 day")});
  EXPECT_EQ(interval.GetValue(0).ToString(), "1 day");
  ColumnVector nulls = MakeVector(Type::Varchar(), {Null(Type::Varchar())});
  EXPECT_TRUE(nulls.GetValue(0).is_null());
}

struct TestBlock {
  std::vector<ColumnSchema> schema;
  std::vector<uint8_t> memory;
  BlockView view() const { return BlockView(memory.data()); }
  std::vector<Type> types() const {
    std::vector<Type> out;
    for (const ColumnSchema& c : schema) out.push_back(c.type);
    return out;
  }
};

// 1000 rows: #0 id INTEGER, #1 price DECIMAL(15,2) (NULL every 10th row), #2 name VARCHAR (NULL every 7th),
// #3 wide DECIMAL(30,4), #4 day DATE, #5 ratio DOUBLE, #6 flag BOOLEAN.
TestBlock MakeTestBlock(uint32_t rows = 1000) {
  TestBlock block;
  block.schema = {{"id", Type::Integer(), true, {}},      {"price", Type::Decimal(15, 2), false, {}},
                  {"name", Type::Varchar(20), false, {}}, {"wide", Type::Decimal(30, 4), false, {}},
                  {"day", Type::Date(), false, {}},       {"ratio", Type::Double(), false, {}},
                  {"flag", Type::Boolean(), false, {}}};
  BlockBuilder builder(block.schema, 4 << 20);
  for (uint32_t i = 0; i < rows; ++i) {
    builder.Append<int32_t>(0, static_cast<int32_t>(i));
    if (i % 10 == 0) builder.AppendNull(1);
    else builder.Append<int64_t>(1, int64_t{i} * 101);
    if (i % 7 == 0) builder.AppendNull(2);
    else builder.AppendString(2, "name" + std::to_string(i));
    builder.Append<int128>(3, int128{i} * 1000000000000LL * 10000);
    builder.Append<int32_t>(4, 9000 + static_cast<int32_t>(i % 400));
    builder.Append<double>(5, i / 8.0);
    builder.Append<uint8_t>(6, i % 3 == 0);
    EXPECT_TRUE(builder.CommitRow());
  }
  block.memory.resize(builder.EncodedSize());
  builder.Finish(block.memory.data());
  return block;
}

TEST(BatchTest, LoadsBlockColumnsWithoutCopyingFixedWidthValues) {
  TestBlock block = MakeTestBlock();
  const BlockView view = block.view();
  const std::vector<Type> types = block.types();
  // Columns in a different order, starting at a row whose validity bit is not byte-aligned.
  const std::vector<int> columns = {2, 0, 1, 3, 4, 5, 6};
  std::vector<Type> batch_types;
  for (int c : columns) batch_types.push_back(types[c]);
  Batch batch;
  const uint32_t first = 13, count = 50;
  LoadBatchFromBlock(view, batch_types, columns, first, count, &batch);
  ASSERT_EQ(batch.size, count);
  ASSERT_EQ(batch.columns.size(), columns.size());
  EXPECT_EQ(batch.columns[1].raw_values(), view.Values<int32_t>(0) + first);  // zero-copy
  EXPECT_EQ(batch.columns[2].raw_values(), view.Values<int64_t>(1) + first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(batch.columns[3].raw_values()) % 16, 0u);  // __int128 aligned
  for (size_t i = 0; i < columns.size(); ++i) {
    EXPECT_EQ(batch.columns[i].type(), batch_types[i]);
    for (uint32_t r = 0; r < count; ++r) {
      ASSERT_EQ(batch.columns[i].GetValue(r).ToString(),
                view.GetValue(columns[i], first + r, batch_types[i]).ToString())
          << "column " << columns[i] << " row " << first + r;
    }
  }
  // Reloading the same batch with other rows reuses it.
  LoadBatchFromBlock(view, batch_types, columns, 990, 10, &batch);
  EXPECT_EQ(batch.columns[0].GetValue(1).ToString(), "name991");
  EXPECT_TRUE(batch.columns[0].GetValue(4).is_null());  // 994 = 7 * 142
}

// A filter and a projection over a whole block, a vector at a time, against a row-at-a-time computation.
TEST(BatchTest, EvaluatesOverRealBlocksVectorAtATime) {
  const uint32_t rows = 5000;
  TestBlock block = MakeTestBlock(rows);
  const BlockView view = block.view();
  const std::vector<Type> types = block.types();
  const std::vector<int> columns = {0, 1, 2, 3, 4, 5, 6};
  // WHERE price > 100.00 AND name LIKE '%7%' AND flag; SELECT price * 2 + wide
  auto filter = Conj(ExpressionKind::kAnd, Cmp(ComparisonOp::kGreater, Col(1, types[1]), Lit(Dec("100.00", 15, 2))),
                     MakeLike(Col(2, types[2]), Str("%7%")), Col(6, Type::Boolean()));
  auto projection = Arith(ArithmeticOp::kAdd,
                          Arith(ArithmeticOp::kMultiply, Col(1, types[1]), Lit(Dec("2", 1, 0)), Type::Decimal(17, 2)),
                          Col(3, types[3]), Type::Decimal(31, 4));
  ExpressionEvaluator filter_evaluator(*filter);
  ExpressionEvaluator projection_evaluator(*projection);
  Batch batch;
  SelectionVector selection;
  std::vector<std::string> got;
  for (uint32_t first = 0; first < rows; first += kVectorSize) {
    const uint32_t count = std::min(kVectorSize, rows - first);
    LoadBatchFromBlock(view, types, columns, first, count, &batch);
    ASSERT_TRUE(filter_evaluator.Filter(batch, nullptr, &selection).ok());
    absl::StatusOr<const ColumnVector*> result = projection_evaluator.Evaluate(batch, &selection);
    ASSERT_TRUE(result.ok()) << result.status();
    for (uint32_t i = 0; i < selection.count; ++i) {
      got.push_back(std::to_string(first + selection.rows[i]) + ":" +
                    (*result)->GetValue(selection.rows[i]).ToString());
    }
  }
  std::vector<std::string> expected;
  for (uint32_t i = 0; i < rows; ++i) {
    const bool keep =
        i % 10 != 0 && i * 101 > 10000 && i % 7 != 0 && std::to_string(i).find('7') != std::string::npos && i % 3 == 0;
    if (!keep) continue;
    const Value price = view.GetValue(1, i, types[1]);
    const Value wide = view.GetValue(3, i, types[3]);
    const int128 sum = price.AsInt128() * 2 * 100 + wide.AsInt128();
    expected.push_back(std::to_string(i) + ":" + Value::Decimal(sum, Type::Decimal(31, 4)).ToString());
  }
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace tessera
