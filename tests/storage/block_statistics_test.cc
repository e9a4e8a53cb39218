// AccumulateBlockStatistics (storage/block_statistics.h) of blocks with deleted rows, as ANALYZE folds them: the
// null counts, min and max of the typed path (bitmap words, one comparison per live row in the column's physical
// type) and the distinct sketches of strings equal those of one Value per live row, for every type, plain and
// compressed blocks, NULLs, NaN, and deletion densities from none to all rows.

#include "storage/block_statistics.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catalog/column_statistics.h"
#include "catalog/row_deletions.h"
#include "catalog/value.h"
#include "common/hash.h"
#include "gtest/gtest.h"
#include "storage/block_builder.h"

namespace tessera {
namespace {

std::vector<ColumnSchema> Columns() {
  const std::vector<std::pair<std::string, Type>> types = {
      {"b", Type::Boolean()},       {"i", Type::Integer()},      {"l", Type::BigInt()},   {"d", Type::Double()},
      {"m", Type::Decimal(12, 2)},  {"w", Type::Decimal(30, 3)}, {"dt", Type::Date()},    {"ts", Type::Timestamp()},
      {"iv", Type::IntervalType()}, {"c", Type::Char(4)},        {"v", Type::Varchar(12)}};
  std::vector<ColumnSchema> columns;
  for (const auto& [name, type] : types) columns.push_back({name, type, false, {}});
  return columns;
}

Value RandomValue(const Type& type, std::mt19937_64& random) {
  const int64_t small = static_cast<int64_t>(random() % 2001) - 1000;
  switch (type.id()) {
    case TypeId::kBoolean:
      return Value::Boolean(random() % 2 == 0);
    case TypeId::kInteger:
      return Value::Integer(static_cast<int32_t>(small * 1000));
    case TypeId::kBigInt:
      return Value::BigInt(small * 1'000'000'007LL);
    case TypeId::kDouble: {
      const int kind = static_cast<int>(random() % 50);
      if (kind == 0) return Value::Double(std::numeric_limits<double>::quiet_NaN());
      if (kind == 1) return Value::Double(-0.0);
      return Value::Double(static_cast<double>(small) / 7.0);
    }
    case TypeId::kDecimal:
      return Value::Decimal(static_cast<int128>(small) * 12345, type);
    case TypeId::kDate:
      return Value::Date(static_cast<int32_t>(small) * 3);
    case TypeId::kTimestamp:
      return Value::Timestamp(small * 86'400'000'000LL + 17);
    case TypeId::kInterval:
      return Value::IntervalValue(Interval{static_cast<int32_t>(small % 13), static_cast<int32_t>(small % 40), small});
    default: {
      std::string text = "s" + std::to_string(random() % 300);
      if (random() % 5 == 0) text = "\xC3\xA9" + text;  // a byte above 0x7F: compared unsigned
      return Value::String(text.substr(0, type.id() == TypeId::kChar ? 4 : 12), type);
    }
  }
}

// The statistics of the live rows one Value at a time: the reference.
std::vector<ColumnStatistics> RowByRow(const BlockView& block, const std::vector<ColumnSchema>& columns,
                                       const DeletedRows& deleted) {
  std::vector<ColumnStatistics> statistics(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    for (uint32_t row = 0; row < block.row_count(); ++row) {
      if (deleted.IsDeleted(row)) continue;
      const Value value = block.GetValue(static_cast<int>(c), row, columns[c].type);
      if (value.is_null()) {
        ++statistics[c].null_count;
      } else {
        statistics[c].UpdateMinMax(value);
        if (columns[c].type.IsString()) statistics[c].distinct.AddHash(HashString(value.AsString()));
      }
    }
  }
  return statistics;
}

TEST(BlockStatisticsTest, LiveRowsOfBlocksWithDeletionsAsOneValueAtATime) {
  const std::vector<ColumnSchema> columns = Columns();
  std::mt19937_64 random(12);
  for (bool compressed : {false, true}) {
    for (uint32_t rows : {1u, 63u, 64u, 65u, 700u, 3000u}) {
      BlockBuilder builder(columns, 1 << 20);
      for (uint32_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < columns.size(); ++c) {
          if (random() % 10 == 0) {
            builder.AppendNull(static_cast<int>(c));
          } else {
            builder.AppendValue(static_cast<int>(c), RandomValue(columns[c].type, random));
          }
        }
        ASSERT_TRUE(builder.CommitRow());
      }
      std::vector<uint8_t> bytes(compressed ? builder.PlanCompressed() : builder.EncodedSize());
      if (compressed) {
        builder.FinishCompressed(bytes.data());
      } else {
        builder.Finish(bytes.data());
      }
      const BlockView block(bytes.data());
      if (compressed && rows == 3000) {  // the encoded paths are covered
        ASSERT_EQ(block.encoding(10), ColumnEncoding::kDictionary);
        ASSERT_EQ(block.encoding(1), ColumnEncoding::kFrameOfReference);
      }
      for (int percent : {0, 1, 30, 90, 100}) {
        DeletedRows deleted(rows);
        for (uint32_t r = 0; r < rows; ++r) {
          if (static_cast<int>(random() % 100) < percent) deleted.Delete(r);
        }
        const std::vector<ColumnStatistics> expected = RowByRow(block, columns, deleted);
        std::vector<ColumnStatistics> got(columns.size());
        AccumulateBlockStatistics(block, columns, &got, deleted.words());
        for (size_t c = 0; c < columns.size(); ++c) {
          const std::string where = (compressed ? "compressed, " : "plain, ") + std::to_string(rows) + " rows, " +
                                    std::to_string(percent) + "% deleted, column " + columns[c].name;
          EXPECT_EQ(got[c].null_count, expected[c].null_count) << where;
          if (columns[c].type.IsString()) {  // dictionary blocks sketch the codes live rows use, each once
            EXPECT_EQ(got[c].distinct.Estimate(), expected[c].distinct.Estimate()) << where;
          }
          EXPECT_EQ(got[c].min.is_null(), expected[c].min.is_null()) << where;
          EXPECT_EQ(got[c].max.is_null(), expected[c].max.is_null()) << where;
          if (!expected[c].min.is_null() && !got[c].min.is_null()) {
            EXPECT_EQ(got[c].min.Compare(expected[c].min), 0)
                << where << ": min " << got[c].min.ToString() << ", expected " << expected[c].min.ToString();
            EXPECT_EQ(got[c].max.Compare(expected[c].max), 0)
                << where << ": max " << got[c].max.ToString() << ", expected " << expected[c].max.ToString();
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera
