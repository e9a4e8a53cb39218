#include "distributed/cluster_layout.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "distributed/partitioning.h"
#include "distributed/rank_protocol.h"
#include "gtest/gtest.h"

namespace tessera::distributed {
namespace {

class ClusterLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() / ("tessera_layout_test_" + std::to_string(::getpid()) + "_" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(base_);
  }
  void TearDown() override { std::filesystem::remove_all(base_); }

  std::string base_;
};

TEST_F(ClusterLayoutTest, EachRankGetsItsDirectoryAndKeepsIt) {
  absl::StatusOr<std::string> rank0 = PrepareRankDirectory(base_, 0, 2);
  absl::StatusOr<std::string> rank1 = PrepareRankDirectory(base_, 1, 2);
  ASSERT_TRUE(rank0.ok()) << rank0.status();
  ASSERT_TRUE(rank1.ok()) << rank1.status();
  EXPECT_EQ(*rank0, base_ + "/rank-0");
  EXPECT_EQ(*rank1, base_ + "/rank-1");
  // The same layout opens again.
  EXPECT_TRUE(PrepareRankDirectory(base_, 1, 2).ok());
  // A single server refuses a rank's part; the base directory itself is no rank's.
  EXPECT_EQ(CheckNotRankDirectory(*rank1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(CheckNotRankDirectory(base_).ok());
}

TEST_F(ClusterLayoutTest, AnotherLayoutIsRefused) {
  ASSERT_TRUE(PrepareRankDirectory(base_, 0, 2).ok());
  ASSERT_TRUE(PrepareRankDirectory(base_, 1, 2).ok());
  absl::StatusOr<std::string> three = PrepareRankDirectory(base_, 0, 3);
  ASSERT_EQ(three.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(three.status().message().find("belongs to rank 0 of a 2-rank cluster, but this is rank 0 of 3"),
            std::string::npos)
      << three.status();
  // A file corrupted by hand is not guessed at.
  std::ofstream(base_ + "/rank-1/CLUSTER") << "ranks two\n";
  EXPECT_EQ(PrepareRankDirectory(base_, 1, 2).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(ClusterLayoutTest, SingleServerDatabasesAreNotTakenOver) {
  std::filesystem::create_directories(base_ + "/rank-0");
  std::ofstream(base_ + "/rank-0/catalog.tcat") << "x";
  EXPECT_EQ(PrepareRankDirectory(base_, 0, 2).status().code(), absl::StatusCode::kFailedPrecondition);
  std::ofstream(base_ + "/catalog.tcat") << "x";
  absl::StatusOr<std::string> refused = PrepareRankDirectory(base_, 1, 2);
  EXPECT_NE(refused.status().message().find("holds a single server's database"), std::string::npos) << refused.status();
}

TEST(PartitioningTest, IntegerKeysPlaceTheSameValueOnTheSameRankWhateverTheirType) {
  int counts[3] = {0, 0, 0};
  for (int key = 1; key <= 3000; ++key) {
    const std::string text = std::to_string(key);
    absl::StatusOr<int> as_integer = RankOfKeyText(text, false, Type::Integer(), 3);
    absl::StatusOr<int> as_bigint = RankOfKeyText(" " + text, false, Type::BigInt(), 3);
    ASSERT_TRUE(as_integer.ok() && as_bigint.ok());
    EXPECT_EQ(*as_integer, *as_bigint);
    ASSERT_GE(*as_integer, 0);
    ASSERT_LT(*as_integer, 3);
    ++counts[*as_integer];
  }
  for (int count : counts) EXPECT_NEAR(count, 1000, 150);  // spread evenly
}

TEST(PartitioningTest, NullsStringsAndBadKeys) {
  EXPECT_EQ(*RankOfKeyText("", true, Type::Integer(), 4), 0);
  EXPECT_EQ(*RankOfKeyText("abc  ", false, Type::Char(10), 4), *RankOfKeyText("abc", false, Type::Char(10), 4));
  EXPECT_EQ(*RankOfKeyText("1995-03-15", false, Type::Date(), 4), *RankOfKeyText("1995-03-15", false, Type::Date(), 4));
  EXPECT_EQ(*RankOfKeyText("anything", false, Type::Integer(), 1), 0);
  absl::StatusOr<int> bad = RankOfKeyText("12x", false, Type::Integer(), 2);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("partition key '12x' is not a valid INTEGER"), std::string::npos)
      << bad.status();
}

TEST(RankProtocolTest, CommandsRepliesAndStatisticsRoundTrip) {
  absl::StatusOr<Command> command = DecodeCommand(EncodeCommand({CommandKind::kCopyIn, 1234, "t.tbl\nCOPY t"}));
  ASSERT_TRUE(command.ok());
  EXPECT_EQ(command->kind, CommandKind::kCopyIn);
  EXPECT_EQ(command->tag, 1234);
  EXPECT_EQ(command->text, "t.tbl\nCOPY t");
  EXPECT_FALSE(DecodeCommand("garbage").ok());

  EXPECT_EQ(*DecodeReply(EncodeReply(absl::OkStatus(), 42), 1), 42);
  absl::StatusOr<int64_t> failed = DecodeReply(EncodeReply(absl::InvalidArgumentError("bad line 3"), 0), 2);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.status().message(), "rank 2: bad line 3");

  std::vector<ColumnStatistics> statistics(2);
  statistics[0].UpdateMinMax(Value::BigInt(5));
  statistics[0].UpdateMinMax(Value::BigInt(2000));
  statistics[1].null_count = 7;
  int64_t rows = 0;
  std::vector<ColumnStatistics> decoded;
  ASSERT_TRUE(DecodeTableStatistics(EncodeTableStatistics(99, statistics), &rows, &decoded).ok());
  EXPECT_EQ(rows, 99);
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0].max.AsInt64(), 2000);
  EXPECT_EQ(decoded[1].null_count, 7);
}

}  // namespace
}  // namespace tessera::distributed
