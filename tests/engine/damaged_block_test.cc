// A damaged block file (storage/block_layout.h checksums): a query over it fails with an error that names the
// table, the column and the file, and the database keeps answering queries over its other tables.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "storage/block_layout.h"
#include "test_database.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

class DamagedBlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / absl::StrCat("damaged_block_test_", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
    WriteNumbers(root_ / "numbers.csv", 3000);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Run(Session& session, const std::string& sql) {
    absl::StatusOr<QueryResult> result = session.Execute(sql);
    ASSERT_TRUE(result.ok()) << sql << ": " << result.status();
  }

  // The only segment file of the data directory that is not `except`.
  fs::path NewestSegment(const std::vector<fs::path>& except) {
    fs::path found;
    for (const auto& entry : fs::directory_iterator(root_ / "data" / "segments")) {
      if (std::find(except.begin(), except.end(), entry.path()) == except.end()) found = entry.path();
    }
    return found;
  }

  fs::path root_;
};

TEST_F(DamagedBlockTest, QueryFailsNamingTableColumnAndFileAndTheDatabaseStaysUp) {
  fs::path damaged_file;
  {
    auto database = OpenTestDatabase(root_ / "data");
    ASSERT_TRUE(database.ok()) << database.status();
    Session session(database->get());
    Run(session, "CREATE TABLE healthy (x BIGINT)");
    Run(session, absl::StrCat("COPY healthy FROM '", (root_ / "numbers.csv").string(), "'"));
    const fs::path healthy_file = NewestSegment({});
    Run(session, "CREATE TABLE t (a INTEGER, b BIGINT)");
    Run(session, "INSERT INTO t SELECT x, x * 3 FROM healthy");
    damaged_file = NewestSegment({healthy_file});
  }
  // Flip one bit of column b's packed values in the first block of t's segment.
  {
    std::fstream file(damaged_file, std::ios::in | std::ios::out | std::ios::binary);
    std::vector<char> head(sizeof(BlockHeader) + 2 * sizeof(ColumnChunk));
    file.read(head.data(), static_cast<std::streamsize>(head.size()));
    ASSERT_TRUE(file.good());
    const BlockView block(head.data());
    ASSERT_EQ(block.column_count(), 2);
    ASSERT_EQ(block.encoding(1), ColumnEncoding::kFrameOfReference);
    const std::streamoff at = block.chunk(1).values_offset + 3;
    char byte = 0;
    file.seekg(at);
    file.read(&byte, 1);
    byte ^= 0x04;
    file.seekp(at);
    file.write(&byte, 1);
  }
  auto database = OpenTestDatabase(root_ / "data");
  ASSERT_TRUE(database.ok()) << database.status();
  Session session(database->get());
  absl::StatusOr<QueryResult> damaged = session.Execute("SELECT sum(b) FROM t");
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
  const std::string message(damaged.status().message());
  EXPECT_NE(message.find("table 't', column 'b'"), std::string::npos) << message;
  EXPECT_NE(message.find("checksum mismatch"), std::string::npos) << message;
  EXPECT_NE(message.find(damaged_file.filename().string()), std::string::npos) << message;
  // The same session and database go on answering over undamaged data.
  absl::StatusOr<QueryResult> healthy = session.Execute("SELECT count(*), sum(x) FROM healthy");
  ASSERT_TRUE(healthy.ok()) << healthy.status();
  ASSERT_EQ(healthy->rows.size(), 1u);
  EXPECT_EQ(healthy->rows[0][0].ToString(), "3000");
  EXPECT_EQ(healthy->rows[0][1].ToString(), "4498500");
  // And the damaged query fails the same way again (nothing half-loaded stays behind).
  EXPECT_EQ(session.Execute("SELECT sum(b) FROM t").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace tessera
