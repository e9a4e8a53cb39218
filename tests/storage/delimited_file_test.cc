// DelimitedFileChunks reads with pread: a file truncated while COPY reads it is an error, not a SIGBUS, and a
// named pipe is refused at once instead of blocking.

#include "storage/delimited_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace tessera {
namespace {

class DelimitedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("tessera_delimited_file_test_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
    topology_ = MakeFakeTopology(1, 1);
    pool_ = std::make_unique<BufferPool>(256 << 20, topology_.get());
    catalog_ = *Catalog::Open(directory_.string(), false);
    storage_ = *StorageManager::Open(directory_.string(), *catalog_, pool_.get(), topology_.get(), false);
    table_.name = "t";
    table_.columns = {{"a", Type::BigInt(), true, {}}, {"b", Type::Varchar(20), false, {}}};
  }
  void TearDown() override {
    storage_.reset();
    catalog_.reset();
    std::filesystem::remove_all(directory_);
  }

  std::filesystem::path directory_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<StorageManager> storage_;
  TableDescriptor table_;
};

TEST_F(DelimitedFileTest, AFileTruncatedWhileBeingReadIsAnErrorNotASigbus) {
  const std::string path = (directory_ / "t.csv").string();
  {
    std::ofstream out(path);
    for (int i = 0; i < 200000; ++i) out << i << ",row" << i << "\n";
  }
  ChunkSizing sizing;
  sizing.min_bytes = 64 << 10;
  sizing.target_chunks = 16;
  auto chunks = DelimitedFileChunks::Open(path, table_, {}, DelimitedFormat{}, sizing);
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  ASSERT_GT((*chunks)->chunk_count(), 4u);
  auto writer = *storage_->CreateSegmentWriter(catalog_->AllocateSegmentId());
  LoadBlockWriter out(table_.columns, *storage_, *writer);
  std::atomic<bool> abandon{false};
  ASSERT_TRUE((*chunks)->ParseChunk(0, out, abandon).ok());
  ASSERT_EQ(::truncate(path.c_str(), 1000), 0);
  absl::Status status = (*chunks)->ParseChunk((*chunks)->chunk_count() - 1, out, abandon);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_NE(status.message().find("changed while being read"), std::string::npos) << status;
}

TEST_F(DelimitedFileTest, ANamedPipeIsRefusedWithoutWaitingForAWriter) {
  const std::string path = (directory_ / "pipe").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto chunks = DelimitedFileChunks::Open(path, table_, {}, DelimitedFormat{}, ChunkSizing{});
  EXPECT_EQ(chunks.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(chunks.status().message().find("not a regular file"), std::string::npos) << chunks.status();
}

}  // namespace
}  // namespace tessera
