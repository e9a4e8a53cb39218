// Streamed SELECT results (Session::Execute with a ResultSink, engine/result_sink.h): the same rows as a collected
// result, a slow client pauses the query instead of growing its result, a result too large to collect under the
// memory limit still streams, and a sink that fails cancels the query and frees what it held.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/result_sink.h"
#include "engine/session.h"
#include "engine/statement_handlers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/buffer_pool.h"
#include "test_database.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

constexpr size_t kBudget = size_t{64} << 20;

// Collects what it is sent; optionally slow, optionally failing at a given batch.
class RecordingSink : public ResultSink {
 public:
  RecordingSink(BufferPool* pool, std::chrono::microseconds delay = {}, int fail_at_batch = -1)
      : pool_(pool), delay_(delay), fail_at_batch_(fail_at_batch) {}

  absl::Status BeginRows(const std::vector<ResultColumn>& columns) override {
    ++begins_;
    columns_ = columns;
    return absl::OkStatus();
  }
  absl::Status AddRows(std::vector<std::vector<Value>> rows) override {
    if (batches_++ == fail_at_batch_) return absl::CancelledError("the test client went away");
    EXPECT_FALSE(rows.empty());
    peak_temporary_ = std::max(peak_temporary_, pool_->Usage().by_kind[static_cast<int>(MemoryKind::kTemporaryBlock)]);
    std::move(rows.begin(), rows.end(), std::back_inserter(rows_));
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    return absl::OkStatus();
  }

  BufferPool* pool_;
  std::chrono::microseconds delay_;
  int fail_at_batch_;
  int begins_ = 0;
  int batches_ = 0;
  size_t peak_temporary_ = 0;
  std::vector<ResultColumn> columns_;
  std::vector<std::vector<Value>> rows_;
};

class ResultStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("result_stream_test_", getpid());
    std::filesystem::remove_all(directory_);
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_, kBudget);
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    session_ = std::make_unique<Session>(database_.get());
    // 1,000,000 rows (k = 0 .. 999999, g = k % 10) in 20 loads, so at least 20 blocks: a query over it has
    // work orders enough for the scheduler to pause it between them.
    for (const std::string& sql : MillionRowTablesSql(20)) {
      absl::StatusOr<QueryResult> result = session_->Execute(sql);
      ASSERT_TRUE(result.ok()) << sql << ": " << result.status();
    }
  }
  void TearDown() override {
    session_.reset();
    database_.reset();
    std::filesystem::remove_all(directory_);
  }

  size_t TemporaryBytes() const {
    return database_->buffer_pool().Usage().by_kind[static_cast<int>(MemoryKind::kTemporaryBlock)];
  }

  std::filesystem::path directory_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<Session> session_;
};

TEST_F(ResultStreamTest, StreamedRowsEqualCollectedRowsInOrder) {
  const std::string sql = "SELECT k, g, k * 2 AS twice FROM big WHERE k % 7 = 0 ORDER BY g, k DESC";
  absl::StatusOr<QueryResult> collected = session_->Execute(sql);
  ASSERT_TRUE(collected.ok()) << collected.status();
  RecordingSink sink(&database_->buffer_pool());
  absl::StatusOr<QueryResult> streamed = session_->Execute(sql, &sink);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_TRUE(streamed->returns_rows);
  EXPECT_TRUE(streamed->rows.empty());
  EXPECT_EQ(streamed->streamed_rows, static_cast<int64_t>(collected->rows.size()));
  EXPECT_EQ(sink.begins_, 1);
  ASSERT_EQ(sink.columns_.size(), 3u);
  EXPECT_EQ(sink.columns_[2].name, "twice");
  ASSERT_EQ(sink.rows_.size(), collected->rows.size());
  EXPECT_EQ(sink.rows_.size(), 142858u);
  for (size_t r = 0; r < sink.rows_.size(); ++r) {
    ASSERT_EQ(sink.rows_[r][0].AsInt64(), collected->rows[r][0].AsInt64()) << "row " << r;
    ASSERT_EQ(sink.rows_[r][2].AsInt64(), collected->rows[r][2].AsInt64()) << "row " << r;
  }
}

TEST_F(ResultStreamTest, OnlyTheLastSelectStreamsAndOtherStatementsReturnTheirRows) {
  RecordingSink sink(&database_->buffer_pool());
  absl::StatusOr<QueryResult> shown = session_->Execute("SHOW TABLES", &sink);
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_EQ(sink.begins_, 0);
  EXPECT_EQ(shown->rows.size(), 2u);
  absl::StatusOr<QueryResult> two = session_->Execute("SELECT count(*) FROM small; SELECT k FROM small", &sink);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(sink.begins_, 1);
  EXPECT_EQ(sink.rows_.size(), 1000u);
  EXPECT_EQ(two->streamed_rows, 1000);
}

TEST_F(ResultStreamTest, SlowClientPausesTheQueryInsteadOfGrowingItsResult) {
  // 1,000,000 rows of 5 BIGINT columns: about 40 MiB of result blocks, five times the backlog a streamed query may
  // hold, more than the budget leaves beside the table.
  const std::string sql =
      "SELECT CAST(k AS BIGINT) AS a, CAST(g AS BIGINT) AS b, CAST(k + 1 AS BIGINT) AS c, CAST(g * 3 AS BIGINT) AS d, "
      "CAST(k * 2 AS BIGINT) AS e FROM big";
  RecordingSink sink(&database_->buffer_pool(), std::chrono::milliseconds(4));
  absl::StatusOr<QueryResult> streamed = session_->Execute(sql, &sink);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_EQ(sink.rows_.size(), 1000000u);
  ASSERT_GE(sink.batches_, 6) << "the result should span several blocks";
  // The backlog, plus what the work orders dispatched before the scheduler saw it full write (16 MiB seen), far
  // below the whole result (about 40 MiB, all of it at once without the pause).
  EXPECT_LE(sink.peak_temporary_, kResultBacklogBytes + size_t{6} * (2u << 20));
  int64_t sum = 0;
  for (const auto& row : sink.rows_) sum += row[0].AsInt64();
  EXPECT_EQ(sum, int64_t{999999} * 1000000 / 2);
  EXPECT_EQ(TemporaryBytes(), 0u);
}

TEST_F(ResultStreamTest, ResultTooLargeToCollectStillStreams) {
  // As Values (a few dozen bytes per field) this result needs more than the 64 MiB budget.
  const std::string sql = "SELECT k, g, k + 1 AS k1, g * 3 AS g3 FROM big";
  absl::StatusOr<QueryResult> collected = session_->Execute(sql);
  ASSERT_FALSE(collected.ok());
  EXPECT_EQ(collected.status().code(), absl::StatusCode::kResourceExhausted) << collected.status();
  EXPECT_THAT(collected.status().message(), HasSubstr("add a LIMIT or aggregate"));
  RecordingSink sink(&database_->buffer_pool());
  absl::StatusOr<QueryResult> streamed = session_->Execute(sql, &sink);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(streamed->streamed_rows, 1000000);
  EXPECT_EQ(TemporaryBytes(), 0u);
}

TEST_F(ResultStreamTest, FailingSinkCancelsTheQueryAndFreesItsMemory) {
  RecordingSink sink(&database_->buffer_pool(), {}, /*fail_at_batch=*/2);
  absl::StatusOr<QueryResult> streamed = session_->Execute("SELECT k, g FROM big", &sink);
  ASSERT_FALSE(streamed.ok());
  EXPECT_EQ(streamed.status().code(), absl::StatusCode::kCancelled) << streamed.status();
  EXPECT_THAT(streamed.status().message(), HasSubstr("the test client went away"));
  EXPECT_EQ(TemporaryBytes(), 0u);
  EXPECT_EQ(database_->buffer_pool().Usage().by_kind[static_cast<int>(MemoryKind::kBlob)], 0u);
  absl::StatusOr<QueryResult> next = session_->Execute("SELECT count(*) FROM big");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->rows[0][0].AsInt64(), 1000000);
}

}  // namespace
}  // namespace tessera
