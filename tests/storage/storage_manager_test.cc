#include "storage/storage_manager.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "storage/block_builder.h"

namespace tessera {
namespace {

// The columns of the blocks these tests build.
const std::vector<ColumnSchema> kColumns = {{"v", Type::BigInt(), false, {}}};

class StorageManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("tessera_storage_test_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
    auto catalog = Catalog::Open(directory_, /*sync=*/false);
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    catalog_ = *std::move(catalog);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  // Builds `count` single-column blocks of `rows` BIGINTs each, block i holding values i*rows ...
  std::vector<PendingBlock> MakeBlocks(StorageManager& storage, int count, int rows, BufferPool* account = nullptr) {
    BlockBuilder builder(kColumns, 2 << 20);
    std::vector<PendingBlock> blocks;
    for (int b = 0; b < count; ++b) {
      for (int r = 0; r < rows; ++r) {
        builder.Append<int64_t>(0, int64_t{b} * rows + r);
        EXPECT_TRUE(builder.CommitRow());
      }
      auto block = storage.AllocatePendingBlock(builder.EncodedSize(), account);
      EXPECT_TRUE(block.ok()) << block.status();
      builder.Finish(block->data());
      BlockView::Seal(block->data());  // as LoadBlockWriter seals every base block
      blocks.push_back(*std::move(block));
    }
    return blocks;
  }

  std::string directory_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(StorageManagerTest, StripesBlocksRoundRobinOverFakeNodes) {
  auto topology = MakeFakeTopology(4, 1);
  BufferPool pool(64 << 20, topology.get());
  auto storage = StorageManager::Open(directory_, *catalog_, &pool, topology.get(), false);
  ASSERT_TRUE(storage.ok()) << storage.status();
  std::vector<PendingBlock> blocks = MakeBlocks(**storage, 8, 10);
  std::vector<int> nodes;
  for (const PendingBlock& block : blocks) nodes.push_back(block.home_node());
  for (size_t i = 1; i < nodes.size(); ++i) EXPECT_EQ(nodes[i], (nodes[i - 1] + 1) % 4);
}

TEST_F(StorageManagerTest, EvictsUnderPressureAndReloadsTransparently) {
  auto topology = MakeFakeTopology(2, 1);
  // Room for two of the three blocks of ~1.2 MiB (base blocks are charged their pages).
  BufferPool pool(3 << 20, topology.get());
  auto opened = StorageManager::Open(directory_, *catalog_, &pool, topology.get(), false);
  ASSERT_TRUE(opened.ok());
  StorageManager& storage = **opened;
  const int rows = 150000;
  std::vector<SegmentDescriptor> segments;
  for (int s = 0; s < 3; ++s) {
    std::vector<PendingBlock> blocks = MakeBlocks(storage, 1, rows);
    auto segment = storage.WriteSegmentFile(100 + s, blocks);
    ASSERT_TRUE(segment.ok()) << segment.status();
    storage.RegisterSegment(*segment, kColumns, std::move(blocks));
    segments.push_back(*segment);
  }
  // Pinning every block in turn must evict others and read them back intact.
  for (int round = 0; round < 3; ++round) {
    for (int s = 0; s < 3; ++s) {
      auto handle = storage.PinBlock(BlockId{100u + s, 0});
      ASSERT_TRUE(handle.ok()) << handle.status();
      EXPECT_EQ(handle->view().row_count(), static_cast<uint32_t>(rows));
      EXPECT_EQ(handle->view().Values<int64_t>(0)[rows - 1], rows - 1);
    }
  }
  EXPECT_GT(pool.Usage().evictions, 0);
  EXPECT_LE(pool.Usage().used_bytes, pool.budget_bytes());
}

TEST_F(StorageManagerTest, ALoadsBlocksCountInItsAccountUntilTheyAreRegistered) {
  auto topology = MakeFakeTopology(1, 1);
  BufferPool pool(64 << 20, topology.get());
  auto opened = StorageManager::Open(directory_, *catalog_, &pool, topology.get(), false);
  ASSERT_TRUE(opened.ok());
  StorageManager& storage = **opened;
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool);
  std::vector<PendingBlock> blocks = MakeBlocks(storage, 3, 1000, account.get());
  const size_t bytes = account->Usage().by_kind[static_cast<int>(MemoryKind::kBaseBlock)];
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(pool.Usage().by_kind[static_cast<int>(MemoryKind::kBaseBlock)], bytes);
  auto segment = storage.WriteSegmentFile(9, blocks);
  ASSERT_TRUE(segment.ok());
  storage.RegisterSegment(*segment, kColumns, std::move(blocks));
  // The table owns them now: the account is empty (and may go), the pool still holds them until the drop.
  EXPECT_EQ(account->Usage().used_bytes, 0u);
  account.reset();
  EXPECT_EQ(pool.Usage().by_kind[static_cast<int>(MemoryKind::kBaseBlock)], bytes);
  auto pinned = storage.PinBlock(BlockId{9, 2});
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(pinned->view().Values<int64_t>(0)[5], 2005);
  pinned->Reset();
  storage.DropSegment(9);
  EXPECT_EQ(pool.Usage().by_kind[static_cast<int>(MemoryKind::kBaseBlock)], 0u);
}

TEST_F(StorageManagerTest, PinnedBlocksAreNeverEvicted) {
  auto topology = MakeFakeTopology(1, 1);
  BufferPool pool(4 << 20, topology.get());
  auto opened = StorageManager::Open(directory_, *catalog_, &pool, topology.get(), false);
  ASSERT_TRUE(opened.ok());
  StorageManager& storage = **opened;
  std::vector<PendingBlock> blocks = MakeBlocks(storage, 1, 150000);
  auto segment = storage.WriteSegmentFile(7, blocks);
  ASSERT_TRUE(segment.ok());
  storage.RegisterSegment(*segment, kColumns, std::move(blocks));
  auto pinned = storage.PinBlock(BlockId{7, 0});
  ASSERT_TRUE(pinned.ok());
  // The pool is nearly full and the only block is pinned: a temporary allocation must fail cleanly.
  auto more = pool.Allocate(MemoryKind::kTemporaryBlock, 3 << 20);
  EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(pinned->view().Values<int64_t>(0)[5], 5);
}

TEST_F(StorageManagerTest, DroppedSegmentStaysReadableWhilePinned) {
  auto topology = MakeFakeTopology(1, 1);
  BufferPool pool(64 << 20, topology.get());
  auto opened = StorageManager::Open(directory_, *catalog_, &pool, topology.get(), false);
  ASSERT_TRUE(opened.ok());
  StorageManager& storage = **opened;
  std::vector<PendingBlock> blocks = MakeBlocks(storage, 2, 1000);
  auto segment = storage.WriteSegmentFile(9, blocks);
  ASSERT_TRUE(segment.ok());
  storage.RegisterSegment(*segment, kColumns, std::move(blocks));
  auto pinned = storage.PinBlock(BlockId{9, 1});
  ASSERT_TRUE(pinned.ok());
  storage.DropSegment(9);
  EXPECT_FALSE(std::filesystem::exists(storage.SegmentPath(9)));
  EXPECT_EQ(pinned->view().Values<int64_t>(0)[0], 1000);
  EXPECT_EQ(storage.PinBlock(BlockId{9, 0}).status().code(), absl::StatusCode::kNotFound);
  pinned->Reset();
  EXPECT_EQ(pool.Usage().by_kind[static_cast<int>(MemoryKind::kBaseBlock)], 0u);
}

TEST_F(StorageManagerTest, RemovesOrphanedSegmentFilesAtOpen) {
  std::filesystem::create_directories(directory_ + "/segments");
  std::string orphan = directory_ + "/segments/segment_42.blk";
  std::ofstream(orphan) << "half-written";
  auto topology = MakeFakeTopology(1, 1);
  BufferPool pool(16 << 20, topology.get());
  auto opened = StorageManager::Open(directory_, *catalog_, &pool, topology.get(), false);
  ASSERT_TRUE(opened.ok());
  EXPECT_FALSE(std::filesystem::exists(orphan));
}

}  // namespace
}  // namespace tessera
