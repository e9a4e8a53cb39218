// What a server lets COPY read and write (engine/file_access.h): only under the allowed directories, never inside
// the data directory, with symbolic links and `..` resolved first.

#include "engine/file_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

class FileAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / absl::StrCat("file_access_test_", getpid());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "allowed" / "sub");
    std::filesystem::create_directories(root_ / "secret");
    std::filesystem::create_directories(root_ / "allowed" / "db");
    std::ofstream(root_ / "secret" / "key") << "x";
    std::filesystem::create_symlink(root_ / "secret", root_ / "allowed" / "escape");
    policy_.restricted = true;
    policy_.allowed_directories = {(root_ / "allowed").string()};
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  absl::Status Check(const std::filesystem::path& path, bool writing = false) {
    return CheckFileAccess(policy_, (root_ / "allowed" / "db").string(), path.string(), writing);
  }

  std::filesystem::path root_;
  FileAccessPolicy policy_;
};

TEST_F(FileAccessTest, AnUnrestrictedPolicyAllowsEveryPath) {
  EXPECT_TRUE(CheckFileAccess(FileAccessPolicy{}, "", "/etc/shadow", false).ok());
}

TEST_F(FileAccessTest, FilesUnderAnAllowedDirectoryMayBeReadAndWritten) {
  EXPECT_TRUE(Check(root_ / "allowed" / "sub" / "in.csv").ok());
  EXPECT_TRUE(Check(root_ / "allowed" / "new" / "out.csv", /*writing=*/true).ok());
}

TEST_F(FileAccessTest, EverythingElseIsRefusedNamingTheFlag) {
  absl::Status refused = Check("/etc/shadow");
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(refused.message().find("--allowed-directories"), std::string::npos) << refused;
  EXPECT_FALSE(Check(root_ / "secret" / "key", /*writing=*/true).ok());
  EXPECT_FALSE(Check(root_ / "allowed-not" / "x.csv").ok());  // a sibling whose name starts the same
  policy_.allowed_directories.clear();
  refused = Check(root_ / "allowed" / "sub" / "in.csv");
  EXPECT_NE(refused.message().find("none given"), std::string::npos) << refused;
}

TEST_F(FileAccessTest, SymbolicLinksAndDotDotDoNotLeadOut) {
  EXPECT_FALSE(Check(root_ / "allowed" / "escape" / "key").ok());
  EXPECT_FALSE(Check(root_ / "allowed" / ".." / "secret" / "key").ok());
  EXPECT_FALSE(Check(root_ / "allowed" / "sub" / ".." / ".." / "secret" / "new.csv", /*writing=*/true).ok());
  EXPECT_TRUE(Check(root_ / "allowed" / "sub" / ".." / "in.csv").ok());
}

TEST_F(FileAccessTest, TheDataDirectoryIsNeverReadOrWrittenEvenInsideAnAllowedOne) {
  absl::Status refused = Check(root_ / "allowed" / "db" / "catalog.tcat", /*writing=*/true);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(refused.message().find("data directory"), std::string::npos) << refused;
  EXPECT_FALSE(Check(root_ / "allowed" / "sub" / ".." / "db" / "x").ok());
}

// COPY FROM checks the file it actually opened (by the descriptor's path in /proc/self/fd), so a path that passed
// the check and was then replaced by a symbolic link to a file outside still cannot be read.
TEST_F(FileAccessTest, TheOpenedFileIsCheckedByWhatTheDescriptorPointsTo) {
  std::ofstream(root_ / "allowed" / "sub" / "in.csv") << "1";
  auto opened_check = [&](const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << path;
    absl::Status status = CheckOpenedFileAccess(policy_, (root_ / "allowed" / "db").string(), path.string(), fd, false);
    ::close(fd);
    return status;
  };
  EXPECT_TRUE(opened_check(root_ / "allowed" / "sub" / "in.csv").ok());
  // The path a client named passes the path check; the file opened through the swapped-in link does not.
  const std::filesystem::path swapped = root_ / "allowed" / "sub" / "data.csv";
  ASSERT_TRUE(Check(swapped).ok());
  std::filesystem::create_symlink(root_ / "secret" / "key", swapped);
  absl::Status refused = opened_check(swapped);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << refused;
  EXPECT_NE(refused.message().find("secret"), std::string::npos) << refused;
  std::ofstream(root_ / "allowed" / "db" / "catalog.tcat") << "x";
  EXPECT_FALSE(opened_check(root_ / "allowed" / "db" / "catalog.tcat").ok());
  EXPECT_TRUE(CheckOpenedFileAccess(FileAccessPolicy{}, "", "/etc/hostname", -1, false).ok());  // unrestricted
}

}  // namespace
}  // namespace tessera
