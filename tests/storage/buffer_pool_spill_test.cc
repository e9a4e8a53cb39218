// Spilling a buffer-pool account (BufferPool::SpillTo / RestoreSpilled): what a suspended query's memory does.

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_faults.h"
#include "gtest/gtest.h"
#include "storage/buffer_pool.h"

namespace tessera {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

size_t Used(const BufferPool& pool, MemoryKind kind) { return pool.Usage().by_kind[static_cast<int>(kind)]; }

void Fill(void* memory, size_t bytes, uint8_t seed) {
  auto* out = static_cast<uint8_t*>(memory);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(seed + i * 131);
}

bool Holds(const void* memory, size_t bytes, uint8_t seed) {
  const auto* in = static_cast<const uint8_t*>(memory);
  for (size_t i = 0; i < bytes; ++i) {
    if (in[i] != static_cast<uint8_t>(seed + i * 131)) return false;
  }
  return true;
}

class BufferPoolSpillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("buffer_pool_spill_test_", getpid());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  std::string SpillPath() const { return (directory_ / "query_1.spill").string(); }

  std::filesystem::path directory_;
  BufferPool pool_{64 * kMiB, nullptr};
};

TEST_F(BufferPoolSpillTest, SpilledMemoryLeavesThePoolAndComesBackWithItsContentsAtTheSameAddresses) {
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool_);
  void* table = *account->Allocate(MemoryKind::kBlob, 6 * kMiB);
  void* block = *account->Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB);
  void* small = *account->Allocate(MemoryKind::kBlob, 1000);  // small: stays resident
  Fill(table, 6 * kMiB, 1);
  Fill(block, 2 * kMiB, 2);
  Fill(small, 1000, 3);
  EXPECT_EQ(account->SpillableBytes(), 8 * kMiB);
  const size_t used_before = pool_.Usage().used_bytes;

  absl::StatusOr<size_t> spilled = account->SpillTo(SpillPath(), {});
  ASSERT_TRUE(spilled.ok()) << spilled.status();
  EXPECT_EQ(*spilled, 8 * kMiB);
  EXPECT_EQ(pool_.Usage().used_bytes, used_before - 8 * kMiB) << "the pool's budget has the memory back";
  EXPECT_EQ(account->Usage().used_bytes, 1024u) << "only the small allocation is left (charged in 64 B units)";
  EXPECT_EQ(Used(*account, MemoryKind::kTemporaryBlock), 0u);
  EXPECT_EQ(account->spilled_bytes(), 8 * kMiB);
  EXPECT_EQ(account->SpillableBytes(), 0u);
  EXPECT_EQ(std::filesystem::file_size(SpillPath()), 8 * kMiB);
  EXPECT_TRUE(Holds(small, 1000, 3));

  // Another allocation may use the freed budget meanwhile.
  void* other = *pool_.Allocate(MemoryKind::kBlob, 56 * kMiB);
  EXPECT_FALSE(account->RestoreSpilled().ok()) << "no room to come back while the other allocation holds it";
  EXPECT_EQ(account->spilled_bytes(), 8 * kMiB) << "a failed restore leaves everything spilled";
  pool_.Free(other, MemoryKind::kBlob, 56 * kMiB);

  ASSERT_TRUE(account->RestoreSpilled().ok());
  EXPECT_EQ(pool_.Usage().used_bytes, used_before);
  EXPECT_EQ(account->Usage().used_bytes, 8 * kMiB + 1024);
  EXPECT_EQ(account->spilled_bytes(), 0u);
  EXPECT_FALSE(std::filesystem::exists(SpillPath())) << "the restore removes the file";
  EXPECT_TRUE(Holds(table, 6 * kMiB, 1));
  EXPECT_TRUE(Holds(block, 2 * kMiB, 2));

  account->Free(table, MemoryKind::kBlob, 6 * kMiB);
  account->Free(block, MemoryKind::kTemporaryBlock, 2 * kMiB);
  account->Free(small, MemoryKind::kBlob, 1000);
  EXPECT_EQ(pool_.Usage().used_bytes, 0u);
}

TEST_F(BufferPoolSpillTest, KeptAndBaseBlockMemoryStaysResident) {
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool_);
  void* kept = *account->Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB);
  void* base = *account->Allocate(MemoryKind::kBaseBlock, 2 * kMiB);  // a load's pending block
  void* table = *account->Allocate(MemoryKind::kBlob, 4 * kMiB);
  Fill(kept, 2 * kMiB, 5);
  absl::StatusOr<size_t> spilled = account->SpillTo(SpillPath(), {kept});
  ASSERT_TRUE(spilled.ok()) << spilled.status();
  EXPECT_EQ(*spilled, 4 * kMiB);
  EXPECT_EQ(account->Usage().used_bytes, 4 * kMiB);
  EXPECT_TRUE(Holds(kept, 2 * kMiB, 5)) << "kept memory may be read while the rest is spilled";
  EXPECT_EQ(account->SpillTo(SpillPath(), {}).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(account->RestoreSpilled().ok());
  account->Free(kept, MemoryKind::kTemporaryBlock, 2 * kMiB);
  account->Free(base, MemoryKind::kBaseBlock, 2 * kMiB);
  account->Free(table, MemoryKind::kBlob, 4 * kMiB);
  EXPECT_EQ(pool_.Usage().used_bytes, 0u);
}

TEST_F(BufferPoolSpillTest, FreeingSpilledMemoryAndDestroyingTheAccountRemoveTheFile) {
  // A query cancelled while spilled: its structures are freed spilled, then its account goes.
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool_);
  void* first = *account->Allocate(MemoryKind::kBlob, 2 * kMiB);
  void* second = *account->Allocate(MemoryKind::kBlob, 2 * kMiB);
  ASSERT_TRUE(account->SpillTo(SpillPath(), {}).ok());
  account->Free(first, MemoryKind::kBlob, 2 * kMiB);
  EXPECT_EQ(account->spilled_bytes(), 2 * kMiB);
  EXPECT_TRUE(std::filesystem::exists(SpillPath()));
  account->Free(second, MemoryKind::kBlob, 2 * kMiB);
  EXPECT_FALSE(std::filesystem::exists(SpillPath())) << "nothing spilled is left";
  EXPECT_EQ(pool_.Usage().used_bytes, 0u) << "spilled memory is not uncharged twice";

  void* third = *account->Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB);
  ASSERT_TRUE(account->SpillTo(SpillPath(), {}).ok());
  EXPECT_TRUE(std::filesystem::exists(SpillPath()));
  account->Free(third, MemoryKind::kTemporaryBlock, 2 * kMiB);
  account.reset();
  EXPECT_FALSE(std::filesystem::exists(SpillPath()));
  EXPECT_EQ(pool_.Usage().used_bytes, 0u);
}

TEST_F(BufferPoolSpillTest, GrownAllocationsAreSpilledAtTheirNewSize) {
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool_);
  void* table = *account->Allocate(MemoryKind::kBlob, 2 * kMiB);
  Fill(table, 2 * kMiB, 7);
  table = *account->Reallocate(MemoryKind::kBlob, table, 2 * kMiB, 8 * kMiB);
  Fill(static_cast<char*>(table) + 2 * kMiB, 6 * kMiB, 9);
  EXPECT_EQ(account->SpillableBytes(), 8 * kMiB);
  ASSERT_TRUE(account->SpillTo(SpillPath(), {}).ok());
  EXPECT_EQ(account->Usage().used_bytes, 0u);
  ASSERT_TRUE(account->RestoreSpilled().ok());
  EXPECT_TRUE(Holds(table, 2 * kMiB, 7));
  EXPECT_TRUE(Holds(static_cast<char*>(table) + 2 * kMiB, 6 * kMiB, 9));
  account->Free(table, MemoryKind::kBlob, 8 * kMiB);
  EXPECT_EQ(pool_.Usage().used_bytes, 0u);
}

TEST_F(BufferPoolSpillTest, AnUnwritableDirectoryIsAnErrorAndNothingIsSpilled) {
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool_);
  void* table = *account->Allocate(MemoryKind::kBlob, 2 * kMiB);
  absl::StatusOr<size_t> spilled = account->SpillTo((directory_ / "missing" / "query_1.spill").string(), {});
  EXPECT_FALSE(spilled.ok());
  EXPECT_NE(spilled.status().message().find("spill file"), std::string::npos) << spilled.status();
  EXPECT_EQ(account->Usage().used_bytes, 2 * kMiB);
  EXPECT_EQ(account->spilled_bytes(), 0u);
  account->Free(table, MemoryKind::kBlob, 2 * kMiB);
}

// A disk on which the spill's first write sets the spill's cancel flag (as the Foreman does when the query resumes or
// is cancelled while its spill runs) and then succeeds.
class CancelAtFirstWrite : public FileFaultInjector {
 public:
  explicit CancelAtFirstWrite(std::atomic<bool>* cancel) : cancel_(cancel) {}
  int Before(FileOperation operation, const std::string&) override {
    if (operation == FileOperation::kWrite) {
      writes_.fetch_add(1);
      cancel_->store(true);
    }
    return 0;
  }
  int writes() const { return writes_.load(); }

 private:
  std::atomic<bool>* cancel_;
  std::atomic<int> writes_{0};
};

TEST_F(BufferPoolSpillTest, ACancelledSpillStopsBetweenAllocationsAndLeavesTheMemoryResident) {
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool_);
  void* first = *account->Allocate(MemoryKind::kBlob, 2 * kMiB);
  void* second = *account->Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB);
  void* third = *account->Allocate(MemoryKind::kBlob, 4 * kMiB);
  Fill(first, 2 * kMiB, 1);
  Fill(second, 2 * kMiB, 2);
  Fill(third, 4 * kMiB, 3);
  std::atomic<bool> cancel{false};
  CancelAtFirstWrite disk(&cancel);
  {
    ScopedFileFaultInjector installed(&disk);
    absl::StatusOr<size_t> spilled = account->SpillTo(SpillPath(), {}, &cancel);
    EXPECT_TRUE(absl::IsCancelled(spilled.status())) << spilled.status();
  }
  EXPECT_EQ(disk.writes(), 1) << "the flag is checked before each allocation's write";
  EXPECT_FALSE(std::filesystem::exists(SpillPath()));
  EXPECT_EQ(account->spilled_bytes(), 0u);
  EXPECT_EQ(account->Usage().used_bytes, 8 * kMiB);
  EXPECT_EQ(account->SpillableBytes(), 8 * kMiB);
  EXPECT_TRUE(Holds(first, 2 * kMiB, 1));
  EXPECT_TRUE(Holds(second, 2 * kMiB, 2));
  EXPECT_TRUE(Holds(third, 4 * kMiB, 3));

  // Set before the spill: nothing is written. A later spill without the flag runs as usual.
  EXPECT_TRUE(absl::IsCancelled(account->SpillTo(SpillPath(), {}, &cancel).status()));
  cancel.store(false);
  absl::StatusOr<size_t> spilled = account->SpillTo(SpillPath(), {}, &cancel);
  ASSERT_TRUE(spilled.ok()) << spilled.status();
  EXPECT_EQ(*spilled, 8 * kMiB);
  ASSERT_TRUE(account->RestoreSpilled().ok());
  EXPECT_TRUE(Holds(third, 4 * kMiB, 3));
  account->Free(first, MemoryKind::kBlob, 2 * kMiB);
  account->Free(second, MemoryKind::kTemporaryBlock, 2 * kMiB);
  account->Free(third, MemoryKind::kBlob, 4 * kMiB);
  EXPECT_EQ(pool_.Usage().used_bytes, 0u);
}

}  // namespace
}  // namespace tessera
