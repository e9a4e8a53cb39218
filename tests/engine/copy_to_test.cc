// COPY t TO 'file' (engine/data_statements.cc, storage/delimited_file.h): what it writes loads back with COPY FROM
// and the same options (every type, NULLs, empty strings, delimiters and quotes inside strings); it replaces the
// target atomically without following a symbolic link planted where it writes its temporary file (the server's
// --allowed-directories and data-directory rules hold for that file too); concurrent COPY TOs of one target from
// several sessions each write a whole file.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "test_database.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

class CopyToTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / absl::StrCat("copy_to_test_", getpid(), "_",
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    allowed_ = root_ / "allowed";
    outside_ = root_ / "outside";
    fs::create_directories(allowed_);
    fs::create_directories(outside_);
  }

  void TearDown() override {
    sessions_.clear();
    database_.reset();
    fs::remove_all(root_);
  }

  // A database whose data directory lies inside the allowed directory; `restricted`: as tessera-server opens it.
  void OpenDatabase(bool restricted) {
    DatabaseOptions options;
    options.data_directory = (allowed_ / "db").string();
    options.sync_writes = false;
    options.worker_threads = 2;
    options.file_access.restricted = restricted;
    options.file_access.allowed_directories = {allowed_.string()};
    absl::StatusOr<std::unique_ptr<Database>> database = Database::Open(options);
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
  }

  Session& NewSession() {
    sessions_.push_back(std::make_unique<Session>(database_.get()));
    return *sessions_.back();
  }

  static void Run(Session& session, const std::string& sql) {
    absl::StatusOr<QueryResult> result = session.Execute(sql);
    ASSERT_TRUE(result.ok()) << sql << ": " << result.status();
  }

  // The names in `directory`, sorted.
  static std::vector<std::string> Names(const fs::path& directory) {
    std::vector<std::string> names;
    for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // COPY src TO a file with `options`, a new table with `columns` loaded from it with the same options, and the
  // two compared value by value.
  void ExpectRoundTrip(Session& session, const std::string& columns, const std::string& options, int table_number) {
    SCOPED_TRACE(options);
    const std::string file = (outside_ / absl::StrCat("round_", table_number, ".csv")).string();
    const std::string copy = absl::StrCat("dst", table_number);
    absl::StatusOr<QueryResult> expected = session.Execute("SELECT * FROM src ORDER BY i, v");
    ASSERT_TRUE(expected.ok()) << expected.status();
    absl::StatusOr<QueryResult> out = session.Execute(absl::StrCat("COPY src TO '", file, "'", options));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->rows_affected, static_cast<int64_t>(expected->rows.size()));
    absl::StatusOr<QueryResult> in = session.Execute(
        absl::StrCat("CREATE TABLE ", copy, " ", columns, "; COPY ", copy, " FROM '", file, "'", options));
    ASSERT_TRUE(in.ok()) << in.status() << "\n" << ReadAll(file);
    EXPECT_EQ(in->rows_affected, static_cast<int64_t>(expected->rows.size()));
    absl::StatusOr<QueryResult> actual = session.Execute(absl::StrCat("SELECT * FROM ", copy, " ORDER BY i, v"));
    ASSERT_TRUE(actual.ok()) << actual.status();
    ASSERT_EQ(actual->rows.size(), expected->rows.size());
    for (size_t r = 0; r < expected->rows.size(); ++r) {
      for (size_t c = 0; c < expected->rows[r].size(); ++c) {
        const Value& want = expected->rows[r][c];
        const Value& got = actual->rows[r][c];
        ASSERT_EQ(want.is_null(), got.is_null()) << "row " << r << " column " << c << "\n" << ReadAll(file);
        if (!want.is_null()) {
          EXPECT_EQ(want.Compare(got), 0)
              << "row " << r << " column " << c << ": " << want.ToString() << " vs " << got.ToString() << "\n"
              << ReadAll(file);
        }
      }
    }
  }

  fs::path root_, allowed_, outside_;
  std::unique_ptr<Database> database_;
  std::vector<std::unique_ptr<Session>> sessions_;
};

constexpr char kAllTypes[] =
    "(b BOOLEAN, i INTEGER, bi BIGINT, d DOUBLE, dec DECIMAL(15,2), wide DECIMAL(38,10), c CHAR(4), "
    "v VARCHAR(40), dt DATE, ts TIMESTAMP, iv INTERVAL)";

// Every type and NULL; strings with the delimiters, a quote character inside (not first), a quote character alone
// in an unquoted field, the empty string beside NULL, and the NULL marker as a value.
TEST_F(CopyToTest, OutputLoadsBackWithTheSameOptions) {
  OpenDatabase(/*restricted=*/false);
  Session& session = NewSession();
  Run(session, absl::StrCat("CREATE TABLE src ", kAllTypes));
  Run(session,
      "INSERT INTO src VALUES "
      "(true, -2147483647, 9223372036854775807, 0.1, -12345.67, 1234567890123456789012345678.0123456789, 'ab', "
      "'a,b|c;d\tx', DATE '2000-02-29', TIMESTAMP '1999-12-31 23:59:59', INTERVAL '3' MONTH), "
      "(false, 0, -1, -1.5e300, 0.01, -0.0000000001, 'x\"y', 'it''s x\"y', DATE '1970-01-01', "
      "TIMESTAMP '2024-02-29 12:00:00.123456', INTERVAL '2' DAY), "
      "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "
      "(true, 1, 2, 3.141592653589793, 0, 0, '', '', DATE '9999-12-31', TIMESTAMP '1900-01-01 00:00:00', "
      "INTERVAL '90' MINUTE), "
      "(true, 5, 6, 7, 8, 9, 'NA', 'NA', NULL, NULL, NULL)");
  const std::vector<std::string> option_sets = {"", " (HEADER true)", " (DELIMITER '|', NULL 'NA')",
                                                " (DELIMITER ';', HEADER true, NULL 'NA')",
                                                " (DELIMITER '\t', NULL '\\N')"};
  for (size_t k = 0; k < option_sets.size(); ++k)
    ExpectRoundTrip(session, kAllTypes, option_sets[k], static_cast<int>(k));
}

// A string that needs quoting and holds the quote character is written with the quote doubled ("say ""hi"", x");
// the reader must undo that. (ChunkParser::ParseLine used to free the unescaped fields' buffers before converting
// them, so such a field loaded as freed memory: the previous field's bytes and NULs.)
TEST_F(CopyToTest, QuotesInsideQuotedFieldsLoadBack) {
  OpenDatabase(/*restricted=*/false);
  Session& session = NewSession();
  Run(session, absl::StrCat("CREATE TABLE src ", kAllTypes));
  Run(session,
      "INSERT INTO src (i, c, v) VALUES (1, '\"', 'say \"hi\", then ''bye'''), (2, 'a,\"b', '\"quoted start'), "
      "(3, '\"\"', 'a\"\"b,c')");
  ExpectRoundTrip(session, kAllTypes, "", 0);
  ExpectRoundTrip(session, kAllTypes, " (DELIMITER ';', QUOTE '''')", 1);
}

// COPY TO writes a temporary file before renaming it over the target. A symbolic link planted under the name of
// that file (predictable: beside the target) must not be followed: the server would otherwise write wherever it
// points, its own catalog included, although the target itself passed the --allowed-directories check.
TEST_F(CopyToTest, ALinkPlantedAtTheTemporaryNameIsNotFollowed) {
  OpenDatabase(/*restricted=*/true);
  Session& session = NewSession();
  Run(session, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)");
  const fs::path catalog = allowed_ / "db" / "catalog.tcat";
  const std::string catalog_before = ReadAll(catalog);
  std::ofstream(outside_ / "victim") << "keep me\n";
  const fs::path target = allowed_ / "out.csv";
  // The names a writer beside the target could pick: the ones the implementation used (target.tessera-PID.tmp),
  // to the catalog and to a file outside the allowed directory.
  fs::create_symlink(catalog, absl::StrCat(target.string(), ".tessera-", getpid(), ".tmp"));
  fs::create_symlink(outside_ / "victim", allowed_ / absl::StrCat(".out.csv.tessera-", getpid(), ".tmp"));
  absl::StatusOr<QueryResult> written = session.Execute(absl::StrCat("COPY t TO '", target.string(), "'"));
  EXPECT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(ReadAll(catalog), catalog_before);
  EXPECT_EQ(ReadAll(outside_ / "victim"), "keep me\n");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_EQ(ReadAll(target), "1\n2\n");
  // The database still opens with its tables.
  sessions_.clear();
  database_.reset();
  OpenDatabase(/*restricted=*/true);
  absl::StatusOr<QueryResult> count = NewSession().Execute("SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->rows[0][0].AsInt64(), 2);
}

// Sessions of one server COPY different tables TO the same file at once: every statement succeeds, and the file
// is always one of them whole, never a mix, never missing.
TEST_F(CopyToTest, ConcurrentCopiesToOneFileEachWriteAWholeFile) {
  OpenDatabase(/*restricted=*/false);
  WriteNumbers(outside_ / "numbers.csv", 200000);
  Session& loader = NewSession();
  Run(loader, absl::StrCat("CREATE TABLE a (x BIGINT); COPY a FROM '", (outside_ / "numbers.csv").string(),
                           "'; CREATE TABLE b (x BIGINT); INSERT INTO b SELECT x + 1000000 FROM a"));
  const fs::path target = outside_ / "shared.csv";
  Run(loader,
      absl::StrCat("COPY a TO '", (outside_ / "a.csv").string(), "'; COPY b TO '", (outside_ / "b.csv").string(), "'"));
  const std::string a = ReadAll(outside_ / "a.csv");
  const std::string b = ReadAll(outside_ / "b.csv");
  Session& first = NewSession();
  Session& second = NewSession();
  for (int round = 0; round < 5; ++round) {
    absl::Status first_status, second_status;
    std::thread other(
        [&] { second_status = second.Execute(absl::StrCat("COPY b TO '", target.string(), "'")).status(); });
    first_status = first.Execute(absl::StrCat("COPY a TO '", target.string(), "'")).status();
    other.join();
    EXPECT_TRUE(first_status.ok()) << first_status;
    EXPECT_TRUE(second_status.ok()) << second_status;
    const std::string written = ReadAll(target);
    EXPECT_TRUE(written == a || written == b) << "round " << round << ": a mix of " << written.size() << " bytes";
  }
  EXPECT_EQ(Names(outside_), (std::vector<std::string>{"a.csv", "b.csv", "numbers.csv", "shared.csv"}));
}

// A COPY TO that fails leaves the old file as it was and nothing beside it.
TEST_F(CopyToTest, AFailedCopyLeavesNoFileBehind) {
  OpenDatabase(/*restricted=*/false);
  Session& session = NewSession();
  Run(session, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7)");
  std::ofstream(outside_ / "t.csv") << "old\n";
  fs::create_directories(outside_ / "a_dir");
  EXPECT_FALSE(session.Execute(absl::StrCat("COPY t TO '", (outside_ / "a_dir").string(), "'")).ok());
  EXPECT_FALSE(session.Execute(absl::StrCat("COPY no_such_table TO '", (outside_ / "t.csv").string(), "'")).ok());
  EXPECT_FALSE(session.Execute(absl::StrCat("COPY t TO '", (outside_ / "no_dir" / "t.csv").string(), "'")).ok());
  EXPECT_EQ(Names(outside_), (std::vector<std::string>{"a_dir", "t.csv"}));
  EXPECT_EQ(ReadAll(outside_ / "t.csv"), "old\n");
  Run(session, absl::StrCat("COPY t TO '", (outside_ / "t.csv").string(), "'"));
  EXPECT_EQ(ReadAll(outside_ / "t.csv"), "7\n");
  EXPECT_EQ(Names(outside_), (std::vector<std::string>{"a_dir", "t.csv"}));
  const fs::perms perms = fs::status(outside_ / "t.csv").permissions();
  EXPECT_NE(perms & fs::perms::others_read, fs::perms::none);
}

}  // namespace
}  // namespace tessera
