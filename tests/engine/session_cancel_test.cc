// Session::Cancel() from another thread (what the shell's Ctrl-C and the server's Cancel RPC do).

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/connection.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "test_database.h"

namespace tessera {
namespace {

// A cross join of `probe` (20 loads of 5000 rows: 20 blocks, so 20 probe work orders) with `build` (10000 rows):
// 10^9 row pairs, many seconds of work, where each work order is a twentieth of it (Cancel takes effect when the
// work orders in flight finish).
constexpr char kLongQuery[] = "SELECT count(*) FROM probe, build WHERE probe.x + build.x = 17";

class SessionCancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("session_cancel_test_", getpid());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_ / "db");
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    session_ = std::make_unique<Session>(database_.get());
    absl::StatusOr<QueryResult> loaded = session_->Execute(ProbeAndBuildTablesSql(directory_));
    ASSERT_TRUE(loaded.ok()) << loaded.status();
  }

  void TearDown() override {
    session_.reset();
    database_.reset();
    std::filesystem::remove_all(directory_);
  }

  // Waits until the session runs a query under the scheduler and its progress can be read (bounded).
  bool WaitUntilRunning() {
    for (int i = 0; i < 6000; ++i) {
      if (session_->running_query() != 0 && session_->RunningQueryProgress().ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  int64_t CountRows(const std::string& table) {
    absl::StatusOr<QueryResult> result = session_->Execute(absl::StrCat("SELECT count(*) FROM ", table));
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok() || result->rows.size() != 1) return -1;
    return result->rows[0][0].AsInt64();
  }

  std::filesystem::path directory_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<Session> session_;
};

TEST_F(SessionCancelTest, CancelFromAnotherThreadStopsTheRunningQuery) {
  absl::StatusOr<QueryResult> result;
  std::thread runner([&] { result = session_->Execute(kLongQuery); });
  ASSERT_TRUE(WaitUntilRunning());
  absl::StatusOr<QueryProgress> progress = session_->RunningQueryProgress();
  ASSERT_TRUE(progress.ok()) << progress.status();
  EXPECT_FALSE(progress->operators.empty());
  session_->Cancel();
  runner.join();
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsCancelled(result.status())) << result.status();
  // Nothing is left running, and the session runs the next query.
  EXPECT_EQ(session_->running_query(), 0);
  EXPECT_TRUE(absl::IsNotFound(session_->RunningQueryProgress().status()));
  EXPECT_EQ(CountRows("probe"), 100000);
}

TEST_F(SessionCancelTest, AStatementsPriorityOptionOverridesTheSessionsPriority) {
  ASSERT_TRUE(session_->Execute("SET priority = 3").ok());
  for (const auto& [suffix, expected] : {std::pair<std::string, int>{"", 3}, {" OPTION (PRIORITY 6)", 6}}) {
    absl::StatusOr<QueryResult> result;
    std::thread runner([&] { result = session_->Execute(absl::StrCat(kLongQuery, suffix)); });
    ASSERT_TRUE(WaitUntilRunning());
    absl::StatusOr<QueryProgress> progress = session_->RunningQueryProgress();
    ASSERT_TRUE(progress.ok()) << progress.status();
    EXPECT_EQ(progress->priority, expected) << suffix;
    EXPECT_EQ(progress->admission, "admitted");
    session_->Cancel();
    runner.join();
    EXPECT_TRUE(absl::IsCancelled(result.status())) << result.status();
  }
}

TEST_F(SessionCancelTest, CancelAlsoSkipsTheRestOfTheStatements) {
  absl::StatusOr<QueryResult> result;
  std::thread runner(
      [&] { result = session_->Execute(absl::StrCat(kLongQuery, "; CREATE TABLE after_cancel (x INT);")); });
  ASSERT_TRUE(WaitUntilRunning());
  session_->Cancel();
  runner.join();
  EXPECT_TRUE(absl::IsCancelled(result.status())) << result.status();
  absl::StatusOr<QueryResult> tables = session_->Execute("DESCRIBE after_cancel");
  EXPECT_FALSE(tables.ok());
  EXPECT_EQ(CountRows("build"), 10000);
}

TEST_F(SessionCancelTest, CancelStopsExplainAnalyze) {
  absl::StatusOr<QueryResult> result;
  std::thread runner([&] { result = session_->Execute(absl::StrCat("EXPLAIN ANALYZE ", kLongQuery)); });
  ASSERT_TRUE(WaitUntilRunning());
  session_->Cancel();
  runner.join();
  EXPECT_TRUE(absl::IsCancelled(result.status())) << result.status();
  EXPECT_EQ(session_->running_query(), 0);
  EXPECT_EQ(CountRows("build"), 10000);
}

TEST_F(SessionCancelTest, CancelWhileIdleDoesNotAffectTheNextQuery) {
  session_->Cancel();
  EXPECT_EQ(CountRows("build"), 10000);
}

TEST_F(SessionCancelTest, InProcessConnectionForwardsCancel) {
  InProcessConnection connection(database_.get());
  EXPECT_TRUE(absl::IsNotFound(connection.Progress().status()));
  absl::StatusOr<QueryResult> result;
  std::thread runner([&] { result = connection.Execute(kLongQuery); });
  absl::StatusOr<QueryProgress> progress = absl::NotFoundError("not yet");
  for (int i = 0; i < 6000 && !progress.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    progress = connection.Progress();
  }
  ASSERT_TRUE(progress.ok()) << progress.status();
  connection.Cancel();
  runner.join();
  EXPECT_TRUE(absl::IsCancelled(result.status())) << result.status();
  absl::StatusOr<QueryResult> next = connection.Execute("SELECT count(*) FROM build");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->rows[0][0].AsInt64(), 10000);
}

TEST_F(SessionCancelTest, AStatementTimeoutCancelsALongQueryAndTheSessionGoesOn) {
  ASSERT_TRUE(session_->Execute("SET statement_timeout = 200").ok());
  absl::StatusOr<QueryResult> result = session_->Execute(kLongQuery);  // many seconds of work
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_NE(result.status().message().find("statement timeout (200 ms"), std::string::npos) << result.status();
  EXPECT_EQ(CountRows("build"), 10000);  // short queries still run under the timeout
  ASSERT_TRUE(session_->Execute("SET statement_timeout = 0").ok());
  EXPECT_FALSE(session_->Execute("SET statement_timeout = 'soon'").ok());
}

}  // namespace
}  // namespace tessera
