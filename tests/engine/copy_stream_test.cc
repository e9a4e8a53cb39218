// COPY ... FROM STDIN / TO STDOUT through a CopyChannel (engine/copy_channel.h, engine/copy_stream_statements.cc):
// data in pieces whose borders fall anywhere loads as the whole text would; PostgreSQL's text format (escapes, \N)
// and CSV with a header and a column list; a bad line is named by its line and column and leaves the table
// unchanged, as do a client that fails the COPY and a cancel; COPY TO STDOUT of a table and of a query loads back;
// without a channel such a COPY fails with a clear error. COPY FROM a named pipe streams the same way.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/copy_channel.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "test_database.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// A client's side of the stream: input given as pieces, output collected.
class FakeChannel : public CopyChannel {
 public:
  explicit FakeChannel(std::vector<std::string> pieces = {}) : pieces_(std::move(pieces)) {}

  absl::Status BeginCopyIn(const CopyStreamShape& shape) override {
    began_in_ = true;
    shape_ = shape;
    return absl::OkStatus();
  }
  absl::StatusOr<bool> ReadCopyData(std::string* data) override {
    if (before_read_) before_read_(next_);
    if (next_ == fail_at_) return absl::InvalidArgumentError("COPY from stdin failed: the client gave up");
    if (next_ >= pieces_.size()) return false;
    *data = pieces_[next_++];
    return true;
  }
  absl::Status BeginCopyOut(const CopyStreamShape& shape) override {
    began_out_ = true;
    shape_ = shape;
    return absl::OkStatus();
  }
  absl::Status WriteCopyData(std::string_view data) override {
    output_.append(data);
    return absl::OkStatus();
  }

  // `text` cut into pieces of 1, 2, ... `max_piece` bytes, round and round.
  static std::vector<std::string> Cut(std::string_view text, size_t max_piece) {
    std::vector<std::string> pieces;
    for (size_t at = 0, size = 1; at < text.size(); size = size % max_piece + 1) {
      pieces.emplace_back(text.substr(at, size));
      at += pieces.back().size();
    }
    return pieces;
  }

  std::vector<std::string> pieces_;
  size_t next_ = 0;
  size_t fail_at_ = SIZE_MAX;
  std::function<void(size_t)> before_read_;
  bool began_in_ = false;
  bool began_out_ = false;
  CopyStreamShape shape_;
  std::string output_;
};

class CopyStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        fs::temp_directory_path() / absl::StrCat("copy_stream_test_", getpid(), "_",
                                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_);
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    session_ = std::make_unique<Session>(database_.get());
  }
  void TearDown() override {
    session_.reset();
    database_.reset();
    fs::remove_all(directory_);
  }

  void Run(const std::string& sql) {
    absl::StatusOr<QueryResult> result = session_->Execute(sql);
    ASSERT_TRUE(result.ok()) << sql << ": " << result.status();
  }
  // The rows of `sql`, one string per row, values joined by '|', NULL as "NULL".
  std::vector<std::string> Rows(const std::string& sql) {
    absl::StatusOr<QueryResult> result = session_->Execute(sql);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
    std::vector<std::string> rows;
    if (!result.ok()) return rows;
    for (const std::vector<Value>& row : result->rows) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) absl::StrAppend(&line, c > 0 ? "|" : "", row[c].ToString());
      rows.push_back(line);
    }
    return rows;
  }

  fs::path directory_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<Session> session_;
};

// PostgreSQL's text format: tabs between fields, \N for NULL, backslash escapes (a tab, a newline and a backslash
// inside values; \x and octal escapes), a final line without a newline, and the \. end marker.
constexpr char kTextRows[] =
    "1\tplain\t2024-01-02\n"
    "2\t\\N\t\\N\n"
    "3\ttab\\there\t1999-12-31\n"
    "4\tline\\nbreak and back\\\\slash\t2000-02-29\n"
    "5\t\\x41\\102\\\\N\t2001-01-01\n"
    "\\.\n"
    "6\tlast\t2002-02-02";

TEST_F(CopyStreamTest, TextFormatLoadsWhateverThePieceBorders) {
  Run("CREATE TABLE t (id INTEGER, s VARCHAR, d DATE)");
  const std::vector<std::string> expected = {"1|plain|2024-01-02",     "2|NULL|NULL",
                                             "3|tab\there|1999-12-31", "4|line\nbreak and back\\slash|2000-02-29",
                                             "5|AB\\N|2001-01-01",     "6|last|2002-02-02"};
  for (size_t max_piece : {1, 3, 7, 1000}) {
    SCOPED_TRACE(max_piece);
    Run("DELETE FROM t");
    FakeChannel channel(FakeChannel::Cut(kTextRows, max_piece));
    absl::StatusOr<QueryResult> copied = session_->Execute("COPY t FROM STDIN", nullptr, &channel);
    ASSERT_TRUE(copied.ok()) << copied.status();
    EXPECT_EQ(copied->rows_affected, 6);
    EXPECT_EQ(copied->status_message, "COPY 6");
    EXPECT_TRUE(channel.began_in_);
    EXPECT_EQ(channel.shape_.column_count, 3);
    EXPECT_TRUE(channel.shape_.text_format);
    EXPECT_EQ(Rows("SELECT * FROM t ORDER BY id"), expected);
  }
}

TEST_F(CopyStreamTest, CsvWithHeaderAndColumnList) {
  Run("CREATE TABLE t (id INTEGER, s VARCHAR, n BIGINT DEFAULT 7)");
  FakeChannel channel(FakeChannel::Cut("s,id\n\"a,b\",1\n,2\n\"\",3\n", 4));
  absl::StatusOr<QueryResult> copied =
      session_->Execute("COPY t (s, id) FROM STDIN WITH (FORMAT csv, HEADER)", nullptr, &channel);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(channel.shape_.column_count, 2);
  EXPECT_FALSE(channel.shape_.text_format);
  EXPECT_EQ(Rows("SELECT * FROM t ORDER BY id"), (std::vector<std::string>{"1|a,b|7", "2|NULL|7", "3||7"}));
}

TEST_F(CopyStreamTest, BadLineNamesLineAndColumnAndLeavesTheTableUnchanged) {
  Run("CREATE TABLE t (id INTEGER, s VARCHAR)");
  Run("INSERT INTO t VALUES (100, 'before')");
  std::string text;
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&text, i, "\tx", i, "\n");
  absl::StrAppend(&text, "oops\ty\n");  // line 5001
  for (int i = 0; i < 100; ++i) absl::StrAppend(&text, i, "\tz\n");
  FakeChannel channel(FakeChannel::Cut(text, 997));
  absl::StatusOr<QueryResult> copied = session_->Execute("COPY t FROM STDIN", nullptr, &channel);
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(copied.status().message().find("COPY t: STDIN line 5001, column id: invalid input for INTEGER: 'oops'"),
            std::string::npos)
      << copied.status();
  EXPECT_LT(channel.next_, channel.pieces_.size());  // stopped reading at the bad line
  EXPECT_EQ(Rows("SELECT count(*), min(id) FROM t"), std::vector<std::string>{"1|100"});
}

TEST_F(CopyStreamTest, WrongFieldCountAndTooLongLineAreErrors) {
  Run("CREATE TABLE t (id INTEGER, s VARCHAR)");
  FakeChannel short_line({"1\ta\n2\n"});
  absl::StatusOr<QueryResult> copied = session_->Execute("COPY t FROM STDIN", nullptr, &short_line);
  ASSERT_FALSE(copied.ok());
  EXPECT_NE(copied.status().message().find("STDIN line 2, expected 2 fields, found 1"), std::string::npos)
      << copied.status();
  FakeChannel endless({std::string(40 << 20, 'a'), std::string(40 << 20, 'a')});
  copied = session_->Execute("COPY t FROM STDIN", nullptr, &endless);
  ASSERT_FALSE(copied.ok());
  EXPECT_NE(copied.status().message().find("line 1 is longer than"), std::string::npos) << copied.status();
  EXPECT_EQ(Rows("SELECT count(*) FROM t"), std::vector<std::string>{"0"});
}

TEST_F(CopyStreamTest, ClientFailureAndCancelLeaveTheTableUnchanged) {
  Run("CREATE TABLE t (id INTEGER)");
  std::string text;
  for (int i = 0; i < 200000; ++i) absl::StrAppend(&text, i, "\n");
  FakeChannel failing(FakeChannel::Cut(text, 4096));
  failing.fail_at_ = failing.pieces_.size() - 1;  // after nearly all of it, several blocks already written
  absl::StatusOr<QueryResult> copied = session_->Execute("COPY t FROM STDIN", nullptr, &failing);
  ASSERT_FALSE(copied.ok());
  EXPECT_NE(copied.status().message().find("the client gave up"), std::string::npos) << copied.status();
  EXPECT_EQ(Rows("SELECT count(*) FROM t"), std::vector<std::string>{"0"});

  FakeChannel cancelled(FakeChannel::Cut(text, 4096));
  cancelled.before_read_ = [&](size_t piece) {
    if (piece == 100) session_->Cancel();
  };
  copied = session_->Execute("COPY t FROM STDIN", nullptr, &cancelled);
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kCancelled) << copied.status();
  EXPECT_EQ(Rows("SELECT count(*) FROM t"), std::vector<std::string>{"0"});

  // The data directory keeps no segment of the failed loads: the next load and a reopen see only its rows.
  FakeChannel whole(FakeChannel::Cut(text, 65536));
  ASSERT_TRUE(session_->Execute("COPY t FROM STDIN", nullptr, &whole).ok());
  EXPECT_EQ(Rows("SELECT count(*), sum(id) FROM t"), std::vector<std::string>{"200000|19999900000"});
}

TEST_F(CopyStreamTest, CopyToStdoutLoadsBack) {
  Run("CREATE TABLE src (id INTEGER, s VARCHAR, b BOOLEAN, x DECIMAL(10,2), d DATE)");
  Run("INSERT INTO src VALUES (1, 'tab\there', true, 1.50, DATE '2020-01-01'), (2, NULL, NULL, NULL, NULL), "
      "(3, 'back\\slash \\N and\nnewline', false, -3.25, DATE '1999-01-31'), (4, '', true, 0, DATE '2000-01-01')");
  // CSV last: a quoted CSV field may not span lines (storage/delimited_file.h), so the newline goes before it.
  for (const std::string options : {"", " (FORMAT text, DELIMITER '|')", " WITH (FORMAT csv, HEADER)"}) {
    SCOPED_TRACE(options);
    if (absl::StrContains(options, "csv")) Run("UPDATE src SET s = 'back\\slash \\N' WHERE id = 3");
    const std::vector<std::string> expected = Rows("SELECT * FROM src ORDER BY id");
    FakeChannel out;
    absl::StatusOr<QueryResult> copied = session_->Execute(absl::StrCat("COPY src TO STDOUT", options), nullptr, &out);
    ASSERT_TRUE(copied.ok()) << copied.status();
    EXPECT_EQ(copied->status_message, "COPY 4");
    EXPECT_TRUE(out.began_out_);
    EXPECT_EQ(out.shape_.column_count, 5);
    Run("DROP TABLE IF EXISTS dst; CREATE TABLE dst (id INTEGER, s VARCHAR, b BOOLEAN, x DECIMAL(10,2), d DATE)");
    FakeChannel in(FakeChannel::Cut(out.output_, 5));
    copied = session_->Execute(absl::StrCat("COPY dst FROM STDIN", options), nullptr, &in);
    ASSERT_TRUE(copied.ok()) << copied.status() << "\n" << out.output_;
    EXPECT_EQ(Rows("SELECT * FROM dst ORDER BY id"), expected) << out.output_;
  }
  FakeChannel text;
  ASSERT_TRUE(session_->Execute("COPY src (s, id) TO STDOUT", nullptr, &text).ok());
  // A table's rows come in no particular order (the scan runs on several workers).
  std::vector<std::string> lines = absl::StrSplit(text.output_, '\n');
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"", "\t4", "\\N\t2", "back\\\\slash \\\\N\t3", "tab\\there\t1"}));
}

TEST_F(CopyStreamTest, CopyQueryToStdout) {
  Run("CREATE TABLE t (id INTEGER, s VARCHAR)");
  Run("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, NULL)");
  FakeChannel out;
  absl::StatusOr<QueryResult> copied = session_->Execute(
      "COPY (SELECT id * 10 AS tens, s FROM t WHERE id > 1 ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)", nullptr,
      &out);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(copied->rows_affected, 2);
  EXPECT_EQ(out.output_, "tens,s\n20,b\n30,\n");
}

TEST_F(CopyStreamTest, WithoutAChannelTheStatementFails) {
  Run("CREATE TABLE t (id INTEGER)");
  absl::StatusOr<QueryResult> copied = session_->Execute("COPY t FROM STDIN");
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(copied.status().message().find("needs a client that streams the data"), std::string::npos);
  copied = session_->Execute("COPY (SELECT 1) TO '/tmp/x.csv'");
  ASSERT_FALSE(copied.ok());
  EXPECT_NE(copied.status().message().find("COPY (query) TO a file is not supported"), std::string::npos);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// COPY FROM a named pipe: read as a stream until the last writer closes it (waiting for a writer), and cancellable
// and bounded by statement_timeout while nothing comes (it used to be refused, and before that to block forever).
class CopyFromPipeTest : public CopyStreamTest {
 protected:
  std::string MakePipe() {
    const std::string path = (directory_ / "pipe").string();
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
    Run("CREATE TABLE t (id INTEGER, s VARCHAR)");
    return path;
  }
};

TEST_F(CopyFromPipeTest, LoadsWhatAWriterWritesInPiecesUntilItClosesThePipe) {
  const std::string path = MakePipe();
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // COPY waits for the writer
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    for (const std::string piece : {"1,one\n2,t", "wo\n", "3,three\n"}) {
      ASSERT_EQ(::write(fd, piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(150));  // more than one poll slice between pieces
    }
    ::close(fd);
  });
  absl::StatusOr<QueryResult> copied = session_->Execute(absl::StrCat("COPY t FROM '", path, "' (FORMAT csv)"));
  writer.join();
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(copied->rows_affected, 3);
  EXPECT_EQ(Rows("SELECT id, s FROM t ORDER BY id"), (std::vector<std::string>{"1|one", "2|two", "3|three"}));
}

TEST_F(CopyFromPipeTest, ACancelEndsItWhileNoWriterCameAndTheTableStaysEmpty) {
  const std::string path = MakePipe();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    session_->Cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<QueryResult> copied = session_->Execute(absl::StrCat("COPY t FROM '", path, "' (FORMAT csv)"));
  const auto waited = std::chrono::steady_clock::now() - start;
  canceller.join();
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kCancelled) << copied.status();
  EXPECT_NE(copied.status().message().find(absl::StrCat("FROM pipe '", path, "' cancelled")), std::string::npos)
      << copied.status();
  EXPECT_LT(waited, std::chrono::seconds(10));  // not a timing claim: only that it did not wait for a writer
  EXPECT_EQ(Rows("SELECT count(*) FROM t"), (std::vector<std::string>{"0"}));
}

TEST_F(CopyFromPipeTest, AStatementTimeoutEndsItAndABadLineNamesThePipe) {
  const std::string path = MakePipe();
  Run("SET statement_timeout = 200");
  absl::StatusOr<QueryResult> copied = session_->Execute(absl::StrCat("COPY t FROM '", path, "' (FORMAT csv)"));
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kDeadlineExceeded) << copied.status();
  Run("SET statement_timeout = 0");
  std::thread writer([&] {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    const std::string text = "1,one\nnot a number,two\n";
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
  });
  copied = session_->Execute(absl::StrCat("COPY t FROM '", path, "' (FORMAT csv)"));
  writer.join();
  ASSERT_FALSE(copied.ok());
  EXPECT_NE(copied.status().message().find(absl::StrCat("pipe '", path, "' line 2")), std::string::npos)
      << copied.status();
  EXPECT_EQ(Rows("SELECT count(*) FROM t"), (std::vector<std::string>{"0"}));
}

}  // namespace
}  // namespace tessera
