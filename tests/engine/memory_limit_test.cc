// A query that needs more memory than the buffer pool's budget fails with a clear error, gives back everything
// it held, and leaves the stored data and the next queries untouched.

#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/buffer_pool.h"
#include "test_database.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

constexpr size_t kBudget = size_t{96} << 20;

class MemoryLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("memory_limit_test_", getpid());
    std::filesystem::remove_all(directory_);
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_, kBudget);
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    session_ = std::make_unique<Session>(database_.get());
    // 1,000,000 rows, 10 distinct values of g.
    for (const std::string& sql : MillionRowTablesSql(1)) {
      absl::StatusOr<QueryResult> result = session_->Execute(sql);
      ASSERT_TRUE(result.ok()) << sql << ": " << result.status();
    }
  }
  void TearDown() override {
    session_.reset();
    database_.reset();
    std::filesystem::remove_all(directory_);
  }

  int64_t Count(const std::string& sql) {
    absl::StatusOr<QueryResult> result = session_->Execute(sql);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok() || result->rows.size() != 1) return -1;
    return result->rows[0][0].AsInt64();
  }

  std::filesystem::path directory_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<Session> session_;
};

TEST_F(MemoryLimitTest, OversizedQueryFailsCleanlyAndFreesItsMemory) {
  ASSERT_EQ(Count("SELECT count(*) FROM big"), 1000000);
  const size_t before = database_->buffer_pool().Usage().used_bytes;

  // Every g matches 100,000 rows: 10^11 joined rows, sorted, cannot fit in the budget.
  absl::StatusOr<QueryResult> result =
      session_->Execute("SELECT a.k, b.k FROM big a JOIN big b ON a.g = b.g ORDER BY 1, 2 LIMIT 3");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("buffer pool budget exceeded"));

  // Everything the query held is back: temporary blocks and hash tables.
  const MemoryUsage after = database_->buffer_pool().Usage();
  EXPECT_LE(after.used_bytes, before) << "before " << before << ", after " << after.used_bytes;
  EXPECT_EQ(after.by_kind[static_cast<int>(MemoryKind::kTemporaryBlock)], 0u);
  EXPECT_EQ(after.by_kind[static_cast<int>(MemoryKind::kBlob)], 0u);

  // The data and the next queries are untouched.
  EXPECT_EQ(Count("SELECT count(*) FROM big"), 1000000);
  EXPECT_EQ(Count("SELECT count(*) FROM big a JOIN small s ON a.k = s.k WHERE a.g = 3"), 100);
  EXPECT_EQ(Count("SELECT sum(k) FROM small"), 499500);
}

TEST_F(MemoryLimitTest, AggregationTablesCountAgainstTheBudget) {
  // 4 million groups: the per-worker aggregation tables need far more than the 96 MiB budget.
  absl::StatusOr<QueryResult> result = session_->Execute(
      "SELECT count(*) FROM (SELECT a.k * 10000 + c.k * 1000 + b.k AS x, count(*) FROM small a, small b, small c "
      "WHERE c.k < 4 GROUP BY 1) s");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("for a blob"));
  const MemoryUsage after = database_->buffer_pool().Usage();
  EXPECT_EQ(after.by_kind[static_cast<int>(MemoryKind::kBlob)], 0u);
  EXPECT_EQ(after.by_kind[static_cast<int>(MemoryKind::kTemporaryBlock)], 0u);
  // A grouping that fits runs.
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT g, count(*) FROM big GROUP BY g) s"), 10);
}

TEST_F(MemoryLimitTest, AResultTooLargeToHoldFailsItsQueryAlone) {
  // 1,000,000 rows of two columns materialized as Values: about 70 MiB on top of the relation, more than the
  // 96 MiB budget leaves beside the table itself.
  absl::StatusOr<QueryResult> result = session_->Execute("SELECT k, g FROM big");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("the result (1000000 rows) needs about"));
  EXPECT_EQ(database_->buffer_pool().Usage().by_kind[static_cast<int>(MemoryKind::kBlob)], 0u);

  // A result that fits is returned; the data and the next queries are untouched.
  result = session_->Execute("SELECT k FROM big WHERE k < 1000");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->rows.size(), 1000u);
  EXPECT_EQ(Count("SELECT count(*) FROM big"), 1000000);
}

TEST_F(MemoryLimitTest, LimitOverACrossJoinReturnsItsRows) {
  // 10^12 pairs: without a cap each probe work order would write a block's rows times a million.
  for (const std::string& sql : {std::string("SELECT a.k, b.k FROM big a, big b LIMIT 10"),
                                 std::string("SELECT a.k, b.g FROM big a CROSS JOIN big b LIMIT 7 OFFSET 3"),
                                 std::string("SELECT a.k FROM big a JOIN big b ON a.g = b.g LIMIT 5"),
                                 std::string("SELECT a.k, b.k FROM big a LEFT JOIN big b ON a.g = b.g LIMIT 4")}) {
    absl::StatusOr<QueryResult> result = session_->Execute(sql);
    ASSERT_TRUE(result.ok()) << sql << ": " << result.status();
    const size_t expected = sql.find("LIMIT 10") != std::string::npos  ? 10
                            : sql.find("LIMIT 7") != std::string::npos ? 7
                            : sql.find("LIMIT 5") != std::string::npos ? 5
                                                                       : 4;
    EXPECT_EQ(result->rows.size(), expected) << sql;
  }
  EXPECT_EQ(database_->buffer_pool().Usage().by_kind[static_cast<int>(MemoryKind::kTemporaryBlock)], 0u);
}

}  // namespace
}  // namespace tessera
