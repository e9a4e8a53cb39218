// DeletedRows (catalog/row_deletions.h): the live-row list a scan takes from a deletion bitmap, against one bit
// test per row, for every density of deletions and for ranges that start and end anywhere in a word.

#include "catalog/row_deletions.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

std::vector<uint32_t> LiveRowsOneByOne(const DeletedRows& deleted, uint32_t first, uint32_t count) {
  std::vector<uint32_t> rows;
  for (uint32_t r = 0; r < count; ++r) {
    if (!deleted.IsDeleted(first + r)) rows.push_back(r);
  }
  return rows;
}

std::vector<uint32_t> LiveRows(const DeletedRows& deleted, uint32_t first, uint32_t count) {
  std::vector<uint32_t> rows(count + 1, 0xDEADBEEF);
  const uint32_t live = deleted.LiveRows(first, count, rows.data());
  EXPECT_EQ(rows[count], 0xDEADBEEF) << "wrote past `count` entries";
  rows.resize(live);
  return rows;
}

TEST(DeletedRowsTest, LiveRowsListsTheRowsNotDeletedForEveryDensityAndAlignment) {
  std::mt19937 random(19);
  const uint32_t row_count = 5000;
  for (double density : {0.0, 0.01, 0.1, 0.5, 0.9, 1.0}) {
    DeletedRows deleted(row_count);
    std::bernoulli_distribution deletes(density);
    for (uint32_t r = 0; r < row_count; ++r) {
      if (deletes(random)) deleted.Delete(r);
    }
    const std::vector<std::pair<uint32_t, uint32_t>> ranges = {
        {0, row_count}, {0, 2048},   {2048, 2048}, {4096, row_count - 4096}, {0, 0}, {7, 1}, {63, 2}, {1, 63}, {64, 64},
        {5, 200},       {130, 1000}, {4999, 1}};
    for (const auto& [first, count] : ranges) {
      EXPECT_EQ(LiveRows(deleted, first, count), LiveRowsOneByOne(deleted, first, count))
          << "density " << density << " rows [" << first << ", " << first + count << ")";
    }
    for (int trial = 0; trial < 200; ++trial) {
      const uint32_t first = random() % row_count;
      const uint32_t count = random() % (row_count - first + 1);
      ASSERT_EQ(LiveRows(deleted, first, count), LiveRowsOneByOne(deleted, first, count))
          << "density " << density << " rows [" << first << ", " << first + count << ")";
    }
  }
}

TEST(DeletedRowsTest, LiveRowsOfAFullyDeletedWordAndOfAWordWithoutDeletions) {
  DeletedRows deleted(256);
  for (uint32_t r = 64; r < 128; ++r) deleted.Delete(r);
  deleted.Delete(200);
  EXPECT_EQ(LiveRows(deleted, 64, 64).size(), 0u);
  std::vector<uint32_t> first_word = LiveRows(deleted, 0, 64);
  ASSERT_EQ(first_word.size(), 64u);
  for (uint32_t r = 0; r < 64; ++r) EXPECT_EQ(first_word[r], r);
  std::vector<uint32_t> all = LiveRows(deleted, 0, 256);
  EXPECT_EQ(all.size(), 256u - 65u);
  EXPECT_EQ(all[63], 63u);
  EXPECT_EQ(all[64], 128u);
}

// DeleteAll (a statement's found rows or'ed into a block's deletions) and CountClearAmong (the NULLs among them in
// a validity bitmap) against one bit test per row, for row counts that end anywhere in a byte and a word.
TEST(DeletedRowsTest, DeleteAllAndCountClearAmongAgreeWithOneTestPerRow) {
  std::mt19937 random(19);
  for (uint32_t rows : {1u, 7u, 8u, 63u, 64u, 65u, 200u, 1000u, 4099u}) {
    DeletedRows existing(rows);
    DeletedRows found(rows);
    std::vector<uint8_t> validity((rows + 7) / 8, 0);
    for (uint32_t r = 0; r < rows; ++r) {
      if (random() % 3 == 0) existing.Delete(r);
      if (random() % 2 == 0) found.Delete(r);
      if (random() % 4 != 0) validity[r / 8] |= static_cast<uint8_t>(1u << (r % 8));
    }
    uint32_t newly = 0;
    uint32_t nulls = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      newly += found.IsDeleted(r) && !existing.IsDeleted(r);
      nulls += found.IsDeleted(r) && ((validity[r / 8] >> (r % 8)) & 1) == 0;
    }
    EXPECT_EQ(found.CountClearAmong(validity.data()), nulls) << rows << " rows";
    const DeletedRows original = existing;
    EXPECT_EQ(existing.DeleteAll(found), newly) << rows << " rows";
    EXPECT_EQ(existing.deleted_count(), original.deleted_count() + newly);
    for (uint32_t r = 0; r < rows; ++r) {
      EXPECT_EQ(existing.IsDeleted(r), original.IsDeleted(r) || found.IsDeleted(r)) << "row " << r;
    }
    EXPECT_EQ(existing.DeleteAll(found), 0u) << "nothing new the second time";
  }
}

}  // namespace
}  // namespace tessera
