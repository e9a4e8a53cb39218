// read_csv in FROM reads its file under the server's file access policy (engine/table_function_files.h): only
// under --allowed-directories, not through a symbolic link that leads out of them, never the data directory's
// files; and at most kMaxTableFunctionFileBytes.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "engine/table_function_files.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

class ReadCsvAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / absl::StrCat("read_csv_access_test_", getpid(), "_",
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "allowed");
    fs::create_directories(root_ / "outside");
    Write(root_ / "allowed" / "in.csv", "a,b\n1,x\n2,y\n");
    Write(root_ / "outside" / "out.csv", "a,b\n3,z\n");
    fs::create_symlink(root_ / "outside" / "out.csv", root_ / "allowed" / "link.csv");
    DatabaseOptions options;
    options.data_directory = (root_ / "allowed" / "db").string();
    options.sync_writes = false;
    options.worker_threads = 2;
    options.file_access.restricted = true;
    options.file_access.allowed_directories = {(root_ / "allowed").string()};
    absl::StatusOr<std::unique_ptr<Database>> database = Database::Open(options);
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    session_ = std::make_unique<Session>(database_.get());
  }
  void TearDown() override {
    session_.reset();
    database_.reset();
    fs::remove_all(root_);
  }
  static void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  absl::StatusOr<QueryResult> ReadCsv(const fs::path& path) {
    return session_->Execute(absl::StrCat("SELECT count(*) FROM read_csv('", path.string(), "')"));
  }

  fs::path root_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<Session> session_;
};

TEST_F(ReadCsvAccessTest, ReadsOnlyUnderTheAllowedDirectories) {
  absl::StatusOr<QueryResult> inside = ReadCsv(root_ / "allowed" / "in.csv");
  ASSERT_TRUE(inside.ok()) << inside.status();
  ASSERT_EQ(inside->rows.size(), 1u);
  EXPECT_EQ(inside->rows[0][0].AsInt64(), 2);

  for (const fs::path& refused :
       {root_ / "outside" / "out.csv", root_ / "allowed" / "link.csv", root_ / "allowed" / "db" / "catalog.tcat"}) {
    absl::StatusOr<QueryResult> result = ReadCsv(refused);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kPermissionDenied) << refused << ": " << result.status();
  }
}

TEST_F(ReadCsvAccessTest, RefusesFilesLargerThanTheLimit) {
  const fs::path big = root_ / "allowed" / "big.csv";
  Write(big, "a\n1\n22\n333\n");
  absl::StatusOr<std::string> text =
      ReadTableFunctionFile(database_->options().file_access, database_->options().data_directory, big.string(), 8);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(text.status().message().find("COPY loads larger files"), std::string::npos) << text.status();
  text = ReadTableFunctionFile(database_->options().file_access, database_->options().data_directory, big.string(),
                               kMaxTableFunctionFileBytes);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "a\n1\n22\n333\n");
}

}  // namespace
}  // namespace tessera
