// DenseGroupIndex: which key types it takes, Find answering only batches whose every combination of values
// was learned, NULL / empty / one-byte values as distinct values, and Learn failing on a column's
// (kValuesPerColumn + 1)-th value and on a string of more than one byte.

#include "relational_operators/dense_group_index.h"

#include <string>
#include <string_view>
#include <vector>

#include "common/bitmap.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

TEST(DenseGroupIndexTest, AppliesToOneByteStringsAndBooleansOnly) {
  EXPECT_TRUE(DenseGroupIndex::Applies({Type::Char(1), Type::Varchar(1)}));
  EXPECT_TRUE(DenseGroupIndex::Applies({Type::Boolean(), Type::Char(1), Type::Char(1)}));
  EXPECT_FALSE(DenseGroupIndex::Applies({}));
  EXPECT_FALSE(DenseGroupIndex::Applies({Type::Char(1), Type::Char(1), Type::Char(1), Type::Char(1)}));
  EXPECT_FALSE(DenseGroupIndex::Applies({Type::Char(2)}));
  EXPECT_FALSE(DenseGroupIndex::Applies({Type::Varchar()}));
  EXPECT_FALSE(DenseGroupIndex::Applies({Type::Char(1), Type::Integer()}));
}

// A string vector over `values` whose rows in `nulls` are NULL.
struct StringKeys {
  std::vector<std::string_view> values;
  std::vector<uint8_t> validity;
  ColumnVector vector{Type::Varchar(1)};

  StringKeys(std::vector<std::string_view> v, std::vector<uint32_t> nulls) : values(std::move(v)) {
    validity.assign(values.size() / 8 + 1, 0);
    for (uint32_t r = 0; r < values.size(); ++r) SetBit(validity.data(), r);
    for (uint32_t r : nulls) ClearBit(validity.data(), r);
    vector.BorrowStrings(values.data(), nulls.empty() ? nullptr : validity.data(), 0,
                         static_cast<uint32_t>(values.size()));
  }
};

TEST(DenseGroupIndexTest, FindsOnlyLearnedCombinations) {
  // Rows: ("A","F"), ("A",NULL), ("",""), (NULL,"F"), ("A","F").
  StringKeys first({"A", "A", "", "x", "A"}, {3});
  StringKeys second({"F", "y", "", "F", "F"}, {1});
  const std::vector<const ColumnVector*> keys = {&first.vector, &second.vector};
  DenseGroupIndex index(2);
  uint32_t groups[5];
  EXPECT_FALSE(index.Find(keys, nullptr, 5, groups));
  const uint32_t found[5] = {7, 3, 9, 4, 7};
  ASSERT_TRUE(index.Learn(keys, nullptr, 5, found));
  ASSERT_TRUE(index.Find(keys, nullptr, 5, groups));
  for (int s = 0; s < 5; ++s) EXPECT_EQ(groups[s], found[s]) << s;

  // A selection of rows 1 and 3 of another batch: ("A",NULL) and (NULL,"F") are known, ("N","F") is not.
  StringKeys third({"N", "A", "N", "z"}, {3});
  StringKeys fourth({"F", "q", "F", "F"}, {1});
  const std::vector<const ColumnVector*> more = {&third.vector, &fourth.vector};
  SelectionVector selection;
  selection.rows = {1, 3};
  selection.count = 2;
  ASSERT_TRUE(index.Find(more, &selection, 2, groups));
  EXPECT_EQ(groups[0], 3u);
  EXPECT_EQ(groups[1], 4u);
  EXPECT_FALSE(index.Find(more, nullptr, 4, groups));
}

TEST(DenseGroupIndexTest, LearnFailsBeyondTheNumberedValuesOrOnLongerStrings) {
  std::vector<std::string> letters;
  for (uint32_t i = 0; i <= DenseGroupIndex::kValuesPerColumn; ++i) letters.push_back(std::string(1, 'a' + i));
  std::vector<std::string_view> views(letters.begin(), letters.end());
  std::vector<uint32_t> groups(views.size());
  for (uint32_t i = 0; i < groups.size(); ++i) groups[i] = i;
  {
    StringKeys keys(std::vector<std::string_view>(views.begin(), views.end() - 1), {});
    DenseGroupIndex index(1);
    EXPECT_TRUE(index.Learn({&keys.vector}, nullptr, DenseGroupIndex::kValuesPerColumn, groups.data()));
  }
  {
    StringKeys keys(views, {});
    DenseGroupIndex index(1);
    EXPECT_FALSE(index.Learn({&keys.vector}, nullptr, static_cast<uint32_t>(views.size()), groups.data()));
  }
  {
    StringKeys keys({"e", "\xc3\xa9"}, {});  // a two-byte character fits VARCHAR(1)
    DenseGroupIndex index(1);
    EXPECT_FALSE(index.Learn({&keys.vector}, nullptr, 2, groups.data()));
  }
}

TEST(DenseGroupIndexTest, BooleansAndNullsAreDistinctValues) {
  const uint8_t values[4] = {0, 1, 1, 0};
  uint8_t validity[1] = {0b0111};  // row 3 NULL
  ColumnVector flags(Type::Boolean());
  flags.BorrowFixed(values, validity, 0, 4);
  DenseGroupIndex index(1);
  const uint32_t learned[4] = {0, 1, 1, 2};
  ASSERT_TRUE(index.Learn({&flags}, nullptr, 4, learned));
  uint32_t groups[4];
  ASSERT_TRUE(index.Find({&flags}, nullptr, 4, groups));
  EXPECT_EQ(groups[0], 0u);
  EXPECT_EQ(groups[1], 1u);
  EXPECT_EQ(groups[2], 1u);
  EXPECT_EQ(groups[3], 2u);
}

}  // namespace
}  // namespace tessera
