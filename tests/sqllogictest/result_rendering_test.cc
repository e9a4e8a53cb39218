#include "tests/sqllogictest/result_rendering.h"

#include <limits>

#include "gtest/gtest.h"

namespace tessera::sqllogictest {
namespace {

TEST(RenderCellTest, NullIsNullInEveryColumnType) {
  for (char type : {'I', 'R', 'T', 'B'}) EXPECT_EQ(RenderCell(ResultCell::Null(), type), "NULL");
}

TEST(RenderCellTest, EmptyTextIsMarked) {
  EXPECT_EQ(RenderCell(ResultCell::Text(""), 'T'), "(empty)");
  EXPECT_EQ(RenderCell(ResultCell::Text(""), 'I'), "(empty)");
  EXPECT_EQ(RenderCell(ResultCell::Text(" "), 'T'), " ");
  EXPECT_EQ(RenderCell(ResultCell::Text("NULL"), 'T'), "NULL");  // the string, indistinguishable by design
}

TEST(RenderCellTest, Integers) {
  EXPECT_EQ(RenderCell(ResultCell::Integer(-42), 'I'), "-42");
  EXPECT_EQ(RenderCell(ResultCell::Integer(42), 'R'), "42");
  EXPECT_EQ(RenderCell(ResultCell::Integer(42), 'T'), "42");
  EXPECT_EQ(RenderCell(ResultCell::Integer(std::numeric_limits<int64_t>::min()), 'I'), "-9223372036854775808");
}

TEST(RenderCellTest, DoubleInIntegerColumnIsTruncated) {
  EXPECT_EQ(RenderCell(ResultCell::Real(2.9), 'I'), "2");
  EXPECT_EQ(RenderCell(ResultCell::Real(-2.9), 'I'), "-2");
  EXPECT_EQ(RenderCell(ResultCell::Real(-0.5), 'I'), "0");
  EXPECT_EQ(RenderCell(ResultCell::Real(1e300), 'I'), "1e+300");
  EXPECT_EQ(RenderCell(ResultCell::Real(std::numeric_limits<double>::infinity()), 'I'), "inf");
}

TEST(RenderCellTest, DoubleInRealColumnIsShortestRoundTrip) {
  EXPECT_EQ(RenderCell(ResultCell::Real(0.1), 'R'), "0.1");
  EXPECT_EQ(RenderCell(ResultCell::Real(3.0), 'R'), "3");
  EXPECT_EQ(RenderCell(ResultCell::Real(0.1 + 0.2), 'R'), "0.30000000000000004");
}

TEST(RenderCellTest, DoubleInTextColumnUsesEngineText) {
  ResultCell cell = ResultCell::Real(0.5);
  cell.text = "0.500";  // as the engine's ToString might print it
  EXPECT_EQ(RenderCell(cell, 'T'), "0.500");
  EXPECT_EQ(RenderCell(cell, 'R'), "0.5");
}

TEST(RenderCellTest, DecimalKeepsExactTextAndTruncatesForIntegerColumns) {
  EXPECT_EQ(RenderCell(ResultCell::Decimal("12.50"), 'R'), "12.50");
  EXPECT_EQ(RenderCell(ResultCell::Decimal("12.50"), 'T'), "12.50");
  EXPECT_EQ(RenderCell(ResultCell::Decimal("12.50"), 'I'), "12");
  EXPECT_EQ(RenderCell(ResultCell::Decimal("-12.99"), 'I'), "-12");
  EXPECT_EQ(RenderCell(ResultCell::Decimal("-0.50"), 'I'), "0");
  EXPECT_EQ(RenderCell(ResultCell::Decimal("100"), 'I'), "100");
  EXPECT_EQ(RenderCell(ResultCell::Decimal("12345678901234567890123.45"), 'I'), "12345678901234567890123");
  EXPECT_DOUBLE_EQ(ResultCell::Decimal("-12.5").real, -12.5);
}

TEST(RenderCellTest, TextLikeValuesInNumericColumnsKeepTheirText) {
  EXPECT_EQ(RenderCell(ResultCell::Text("true"), 'I'), "true");
  EXPECT_EQ(RenderCell(ResultCell::Text("1995-03-15"), 'R'), "1995-03-15");
}

}  // namespace
}  // namespace tessera::sqllogictest
