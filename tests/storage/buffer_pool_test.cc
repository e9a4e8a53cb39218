#include "storage/buffer_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

constexpr size_t kMiB = size_t{1} << 20;

size_t Used(const BufferPool& pool, MemoryKind kind) { return pool.Usage().by_kind[static_cast<int>(kind)]; }

bool IsAligned(void* address, size_t alignment) { return reinterpret_cast<uintptr_t>(address) % alignment == 0; }

TEST(BufferPoolTest, MemoryKindNames) {
  EXPECT_STREQ(MemoryKindName(MemoryKind::kBaseBlock), "base block");
  EXPECT_STREQ(MemoryKindName(MemoryKind::kTemporaryBlock), "temporary block");
  EXPECT_STREQ(MemoryKindName(MemoryKind::kBlob), "blob");
}

TEST(BufferPoolTest, DefaultBudgetIsAPartOfPhysicalMemory) { EXPECT_GT(BufferPool::DefaultBudgetBytes(), 0u); }

TEST(BufferPoolTest, BudgetFromMeminfoLeavesRoomForThePageCacheAndOtherProcesses) {
  constexpr size_t kGiB = size_t{1} << 30;
  // This machine at rest: 24 GiB, 22 GiB available -> 60% of the total.
  EXPECT_EQ(BufferPool::BudgetFromMeminfo("MemTotal:       25165824 kB\nMemFree:        1048576 kB\n"
                                          "MemAvailable:   23068672 kB\nBuffers:            1024 kB\n"),
            24 * kGiB / 5 * 3);
  // 8 GiB available of 24: 80% of what is available.
  EXPECT_EQ(BufferPool::BudgetFromMeminfo("MemTotal: 25165824 kB\nMemAvailable: 8388608 kB\n"), 8 * kGiB / 5 * 4);
  // Nearly nothing available: still a quarter of the total.
  EXPECT_EQ(BufferPool::BudgetFromMeminfo("MemTotal: 25165824 kB\nMemAvailable: 1048576 kB\n"), 24 * kGiB / 4);
  // No MemAvailable (old kernels): 60% of the total; a field name inside another is not taken for it.
  EXPECT_EQ(BufferPool::BudgetFromMeminfo("MemTotal: 10485760 kB\nXMemAvailable: 1 kB\n"), 10 * kGiB / 5 * 3);
  EXPECT_EQ(BufferPool::BudgetFromMeminfo(""), 0u);
  EXPECT_EQ(BufferPool::BudgetFromMeminfo("MemFree: 1024 kB\n"), 0u);
}

TEST(BufferPoolTest, UsageByKind) {
  BufferPool pool(64 * kMiB, nullptr);
  void* base = *pool.Allocate(MemoryKind::kBaseBlock, 2 * kMiB);
  void* temporary = *pool.Allocate(MemoryKind::kTemporaryBlock, 3 * kMiB);  // rounded up to 4 MiB
  void* blob = *pool.Allocate(MemoryKind::kBlob, 1000);                     // rounded up to 1024 bytes
  MemoryUsage usage = pool.Usage();
  EXPECT_EQ(usage.budget_bytes, 64 * kMiB);
  EXPECT_EQ(Used(pool, MemoryKind::kBaseBlock), 2 * kMiB);
  EXPECT_EQ(Used(pool, MemoryKind::kTemporaryBlock), 4 * kMiB);
  EXPECT_EQ(Used(pool, MemoryKind::kBlob), 1024u);
  EXPECT_EQ(usage.used_bytes, 6 * kMiB + 1024);
  EXPECT_LE(usage.huge_page_bytes, 6 * kMiB);

  pool.Free(temporary, MemoryKind::kTemporaryBlock, 3 * kMiB);
  EXPECT_EQ(Used(pool, MemoryKind::kTemporaryBlock), 0u);
  pool.Free(base, MemoryKind::kBaseBlock, 2 * kMiB);
  pool.Free(blob, MemoryKind::kBlob, 1000);
  usage = pool.Usage();
  EXPECT_EQ(usage.used_bytes, 0u);
  EXPECT_EQ(usage.huge_page_bytes, 0u);
}

TEST(BufferPoolTest, LargeAllocationsAre2MiBAlignedAndWritable) {
  BufferPool pool(256 * kMiB, nullptr);
  for (size_t bytes : {kMiB, 2 * kMiB, 3 * kMiB + 17, 16 * kMiB}) {
    absl::StatusOr<void*> address = pool.Allocate(MemoryKind::kTemporaryBlock, bytes);
    ASSERT_TRUE(address.ok()) << address.status();
    EXPECT_TRUE(IsAligned(*address, BufferPool::kSlotAlignment)) << bytes;
    std::memset(*address, 0xab, bytes);
    EXPECT_EQ(Used(pool, MemoryKind::kTemporaryBlock) % BufferPool::kSlotAlignment, 0u);
    pool.Free(*address, MemoryKind::kTemporaryBlock, bytes);
  }
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

// Compressed base blocks of 1 to 2 MiB are charged their pages, not a whole 2 MiB slot (in the pool and in an
// account alike); they are still 2 MiB-aligned slots.
TEST(BufferPoolTest, BaseBlocksAreChargedInPages) {
  BufferPool pool(256 * kMiB, nullptr);
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool);
  const size_t page = BufferPool::kBaseBlockGranularity;
  for (size_t bytes : {kMiB, kMiB + 1, 3 * kMiB / 2 + 17, 2 * kMiB, 3 * kMiB + 17}) {
    absl::StatusOr<void*> address = account->Allocate(MemoryKind::kBaseBlock, bytes);
    ASSERT_TRUE(address.ok()) << address.status();
    EXPECT_TRUE(IsAligned(*address, BufferPool::kSlotAlignment)) << bytes;
    std::memset(*address, 0xab, bytes);
    const size_t pages = (bytes + page - 1) / page * page;
    EXPECT_EQ(Used(pool, MemoryKind::kBaseBlock), pages) << bytes;
    EXPECT_EQ(account->Usage().by_kind[static_cast<int>(MemoryKind::kBaseBlock)], pages) << bytes;
    account->Free(*address, MemoryKind::kBaseBlock, bytes);
  }
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
  EXPECT_EQ(account->Usage().used_bytes, 0u);
}

TEST(BufferPoolTest, SmallAllocationsAreCacheLineAligned) {
  BufferPool pool(2 * kMiB, nullptr);
  std::vector<std::pair<void*, size_t>> allocations;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{64}, size_t{65}, size_t{4096}, kMiB - 1}) {
    absl::StatusOr<void*> address = pool.Allocate(MemoryKind::kBlob, bytes);
    ASSERT_TRUE(address.ok()) << bytes << ": " << address.status();
    EXPECT_TRUE(IsAligned(*address, 64)) << bytes;
    std::memset(*address, 1, bytes);
    allocations.emplace_back(*address, bytes);
    if (bytes == kMiB - 1) break;
  }
  pool.Free(allocations.back().first, MemoryKind::kBlob, allocations.back().second);
  allocations.pop_back();
  EXPECT_EQ(pool.Usage().used_bytes, 64u + 64u + 64u + 128u + 4096u);
  for (auto [address, bytes] : allocations) pool.Free(address, MemoryKind::kBlob, bytes);
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

TEST(BufferPoolTest, BudgetExceededIsResourceExhaustedWithAClearMessage) {
  BufferPool pool(10 * kMiB, nullptr);
  void* base = *pool.Allocate(MemoryKind::kBaseBlock, 6 * kMiB);
  void* temporary = *pool.Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB);
  absl::StatusOr<void*> failed = pool.Allocate(MemoryKind::kTemporaryBlock, 4 * kMiB);
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(failed.status()));
  EXPECT_EQ(failed.status().message(),
            "buffer pool budget exceeded: cannot allocate 4.0 MiB for a temporary block; 8.0 MiB of 10.0 MiB in "
            "use (base blocks 6.0 MiB, temporary blocks 2.0 MiB, blobs 0.0 MiB)");
  // Nothing was charged for the failed request; exactly filling the budget still works.
  EXPECT_EQ(pool.Usage().used_bytes, 8 * kMiB);
  absl::StatusOr<void*> last = pool.Allocate(MemoryKind::kBlob, 2 * kMiB);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_FALSE(pool.Allocate(MemoryKind::kBlob, 1).ok());
  pool.Free(*last, MemoryKind::kBlob, 2 * kMiB);
  pool.Free(temporary, MemoryKind::kTemporaryBlock, 2 * kMiB);
  pool.Free(base, MemoryKind::kBaseBlock, 6 * kMiB);
}

TEST(BufferPoolTest, MessageUsesGiBForLargeBudgets) {
  BufferPool pool(size_t{4} << 30, nullptr);
  ASSERT_TRUE(pool.Reserve(MemoryKind::kBaseBlock, size_t{3} << 30).ok());
  ASSERT_TRUE(pool.Reserve(MemoryKind::kBlob, 512 * kMiB).ok());
  absl::Status status = pool.Reserve(MemoryKind::kTemporaryBlock, kMiB * 1024);
  EXPECT_TRUE(absl::IsResourceExhausted(status));
  EXPECT_EQ(status.message(),
            "buffer pool budget exceeded: cannot reserve 1.0 GiB for a temporary block; 3.5 GiB of 4.0 GiB in use "
            "(base blocks 3.0 GiB, temporary blocks 0.0 GiB, blobs 0.5 GiB)");
  pool.Release(MemoryKind::kBaseBlock, size_t{3} << 30);
  pool.Release(MemoryKind::kBlob, 512 * kMiB);
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

TEST(BufferPoolTest, ReservationsCountAgainstTheBudget) {
  BufferPool pool(8 * kMiB, nullptr);
  ASSERT_TRUE(pool.Reserve(MemoryKind::kBlob, 7 * kMiB).ok());
  EXPECT_EQ(Used(pool, MemoryKind::kBlob), 7 * kMiB);
  EXPECT_TRUE(absl::IsResourceExhausted(pool.Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB).status()));
  pool.Release(MemoryKind::kBlob, 6 * kMiB);
  absl::StatusOr<void*> block = pool.Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB);
  ASSERT_TRUE(block.ok()) << block.status();
  pool.Free(*block, MemoryKind::kTemporaryBlock, 2 * kMiB);
  pool.Release(MemoryKind::kBlob, kMiB);
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

TEST(BufferPoolTest, AnAccountCountsOnlyWhatWentThroughItWithinItsPoolsBudget) {
  BufferPool pool(16 * kMiB, nullptr);
  std::unique_ptr<BufferPool> first = BufferPool::NewAccount(&pool);
  std::unique_ptr<BufferPool> second = BufferPool::NewAccount(&pool);
  absl::StatusOr<void*> block = first->Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB);
  ASSERT_TRUE(block.ok());
  absl::StatusOr<void*> small = second->Allocate(MemoryKind::kBlob, 100);
  ASSERT_TRUE(small.ok());
  ASSERT_TRUE(second->Reserve(MemoryKind::kBlob, 3 * kMiB).ok());
  absl::StatusOr<void*> direct = pool.Allocate(MemoryKind::kBaseBlock, 4 * kMiB);
  ASSERT_TRUE(direct.ok());

  EXPECT_EQ(first->Usage().used_bytes, 2 * kMiB);
  EXPECT_EQ(Used(*first, MemoryKind::kTemporaryBlock), 2 * kMiB);
  EXPECT_EQ(second->Usage().used_bytes, 3 * kMiB + 128);  // the small allocation is charged at 64-byte steps
  EXPECT_EQ(pool.Usage().used_bytes, 9 * kMiB + 128);
  EXPECT_EQ(first->budget_bytes(), 16 * kMiB);
  EXPECT_EQ(first->Usage().budget_bytes, 16 * kMiB);

  // The pool's budget binds the accounts: 7 MiB are left.
  absl::StatusOr<void*> too_much = first->Allocate(MemoryKind::kTemporaryBlock, 8 * kMiB);
  EXPECT_EQ(too_much.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(first->Usage().used_bytes, 2 * kMiB) << "a failed allocation is not counted";

  first->Free(*block, MemoryKind::kTemporaryBlock, 2 * kMiB);
  second->Free(*small, MemoryKind::kBlob, 100);
  second->Release(MemoryKind::kBlob, 3 * kMiB);
  EXPECT_EQ(first->Usage().used_bytes, 0u);
  EXPECT_EQ(second->Usage().used_bytes, 0u);
  EXPECT_EQ(pool.Usage().used_bytes, 4 * kMiB);
  // Peaks stay after the memory went.
  EXPECT_EQ(first->Usage().peak_used_bytes, 2 * kMiB);
  EXPECT_EQ(second->Usage().peak_used_bytes, 3 * kMiB + 128);
  EXPECT_EQ(pool.Usage().peak_used_bytes, 9 * kMiB + 128);
  pool.Free(*direct, MemoryKind::kBaseBlock, 4 * kMiB);
}

TEST(BufferPoolTest, LoweringTheBudgetFailsLaterAllocations) {
  BufferPool pool(8 * kMiB, nullptr);
  void* block = *pool.Allocate(MemoryKind::kBaseBlock, 4 * kMiB);
  pool.SetBudgetBytes(2 * kMiB);
  EXPECT_EQ(pool.budget_bytes(), 2u * kMiB);
  EXPECT_TRUE(absl::IsResourceExhausted(pool.Allocate(MemoryKind::kBlob, 64).status()));
  pool.Free(block, MemoryKind::kBaseBlock, 4 * kMiB);
  absl::StatusOr<void*> blob = pool.Allocate(MemoryKind::kBlob, 2 * kMiB);
  ASSERT_TRUE(blob.ok()) << blob.status();
  pool.Free(*blob, MemoryKind::kBlob, 2 * kMiB);
}

// Evicts base blocks it was given, oldest first, like the storage manager's evictor over clean blocks.
class BlockListEvictor : public Evictor {
 public:
  explicit BlockListEvictor(BufferPool* pool) : pool_(pool) {}

  void Add(void* block, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_.emplace_back(block, bytes);
  }

  size_t EvictAtLeast(size_t bytes) override {
    std::vector<std::pair<void*, size_t>> victims;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++calls_;
      size_t chosen = 0;
      while (chosen < bytes && !blocks_.empty()) {
        victims.push_back(blocks_.front());
        chosen += blocks_.front().second;
        blocks_.erase(blocks_.begin());
      }
    }
    size_t freed = 0;
    for (auto [block, block_bytes] : victims) {
      pool_->Free(block, MemoryKind::kBaseBlock, block_bytes);
      freed += block_bytes;
    }
    return freed;
  }

  int calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

 private:
  BufferPool* const pool_;
  std::mutex mutex_;
  std::vector<std::pair<void*, size_t>> blocks_;
  int calls_ = 0;
};

TEST(BufferPoolTest, EvictorMakesRoomAndAllocationSucceeds) {
  BufferPool pool(8 * kMiB, nullptr);
  BlockListEvictor evictor(&pool);
  pool.SetEvictor(&evictor);
  for (int i = 0; i < 4; ++i) evictor.Add(*pool.Allocate(MemoryKind::kBaseBlock, 2 * kMiB), 2 * kMiB);
  EXPECT_EQ(pool.Usage().used_bytes, 8 * kMiB);

  absl::StatusOr<void*> temporary = pool.Allocate(MemoryKind::kTemporaryBlock, 4 * kMiB);
  ASSERT_TRUE(temporary.ok()) << temporary.status();
  EXPECT_EQ(evictor.calls(), 1);
  MemoryUsage usage = pool.Usage();
  EXPECT_EQ(usage.evictions, 1);
  EXPECT_EQ(usage.by_kind[static_cast<int>(MemoryKind::kBaseBlock)], 4 * kMiB);
  EXPECT_EQ(usage.by_kind[static_cast<int>(MemoryKind::kTemporaryBlock)], 4 * kMiB);

  // When nothing more can be evicted the request fails cleanly.
  absl::StatusOr<void*> second = pool.Allocate(MemoryKind::kTemporaryBlock, 4 * kMiB);  // evicts the rest
  ASSERT_TRUE(second.ok()) << second.status();
  absl::StatusOr<void*> failed = pool.Allocate(MemoryKind::kBlob, 2 * kMiB);
  EXPECT_TRUE(absl::IsResourceExhausted(failed.status()));
  EXPECT_THAT(failed.status().message(), HasSubstr("cannot allocate 2.0 MiB for a blob"));
  EXPECT_EQ(pool.Usage().evictions, 2);
  pool.SetEvictor(nullptr);
  pool.Free(*temporary, MemoryKind::kTemporaryBlock, 4 * kMiB);
  pool.Free(*second, MemoryKind::kTemporaryBlock, 4 * kMiB);
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

TEST(BufferPoolTest, ReserveAlsoAsksTheEvictor) {
  BufferPool pool(4 * kMiB, nullptr);
  BlockListEvictor evictor(&pool);
  pool.SetEvictor(&evictor);
  evictor.Add(*pool.Allocate(MemoryKind::kBaseBlock, 4 * kMiB), 4 * kMiB);
  EXPECT_TRUE(pool.Reserve(MemoryKind::kBlob, 3 * kMiB).ok());
  EXPECT_EQ(evictor.calls(), 1);
  EXPECT_EQ(Used(pool, MemoryKind::kBaseBlock), 0u);
  pool.Release(MemoryKind::kBlob, 3 * kMiB);
  pool.SetEvictor(nullptr);
}

TEST(BufferPoolTest, RequestLargerThanTheBudgetDoesNotEvict) {
  BufferPool pool(4 * kMiB, nullptr);
  BlockListEvictor evictor(&pool);
  pool.SetEvictor(&evictor);
  void* block = *pool.Allocate(MemoryKind::kBaseBlock, 2 * kMiB);
  evictor.Add(block, 2 * kMiB);
  EXPECT_TRUE(absl::IsResourceExhausted(pool.Allocate(MemoryKind::kBlob, 6 * kMiB).status()));
  EXPECT_EQ(evictor.calls(), 0);
  EXPECT_EQ(Used(pool, MemoryKind::kBaseBlock), 2 * kMiB);
  pool.SetEvictor(nullptr);
  pool.Free(block, MemoryKind::kBaseBlock, 2 * kMiB);
}

TEST(BufferPoolTest, MmapFailureIsAnErrorNotACrash) {
  BufferPool pool(SIZE_MAX, nullptr);
  // Far beyond any user address space.
  absl::StatusOr<void*> huge = pool.Allocate(MemoryKind::kBlob, size_t{1} << 60);
  EXPECT_TRUE(absl::IsResourceExhausted(huge.status()));
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

TEST(BufferPoolTest, FreedSlotsAreReused) {
  BufferPool pool(64 * kMiB, nullptr);
  void* first = *pool.Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB);
  pool.Free(first, MemoryKind::kTemporaryBlock, 2 * kMiB);
  EXPECT_EQ(pool.Usage().used_bytes, 0u);  // a cached slot is not charged
  void* second = *pool.Allocate(MemoryKind::kBaseBlock, 2 * kMiB);
  EXPECT_EQ(second, first);
  EXPECT_EQ(Used(pool, MemoryKind::kBaseBlock), 2 * kMiB);
  // A different size does not take the cached slot.
  void* bigger = *pool.Allocate(MemoryKind::kBaseBlock, 4 * kMiB);
  EXPECT_NE(bigger, second);
  pool.Free(second, MemoryKind::kBaseBlock, 2 * kMiB);
  pool.Free(bigger, MemoryKind::kBaseBlock, 4 * kMiB);
  EXPECT_EQ(*pool.Allocate(MemoryKind::kBlob, 4 * kMiB), bigger);
  pool.Free(bigger, MemoryKind::kBlob, 4 * kMiB);
}

TEST(BufferPoolTest, CachedSlotsStayOnTheirNode) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(2, 1);
  BufferPool pool(64 * kMiB, topology.get());
  void* on_node1 = *pool.Allocate(MemoryKind::kBaseBlock, 2 * kMiB, /*node=*/1);
  pool.Free(on_node1, MemoryKind::kBaseBlock, 2 * kMiB);
  void* on_node0 = *pool.Allocate(MemoryKind::kBaseBlock, 2 * kMiB, /*node=*/0);
  EXPECT_NE(on_node0, on_node1);
  void* again_node1 = *pool.Allocate(MemoryKind::kBaseBlock, 2 * kMiB, /*node=*/1);
  EXPECT_EQ(again_node1, on_node1);
  pool.Free(on_node0, MemoryKind::kBaseBlock, 2 * kMiB);
  // Any node takes any cached slot.
  void* any_node = *pool.Allocate(MemoryKind::kBaseBlock, 2 * kMiB, /*node=*/-1);
  EXPECT_EQ(any_node, on_node0);
  pool.Free(any_node, MemoryKind::kBaseBlock, 2 * kMiB);
  pool.Free(again_node1, MemoryKind::kBaseBlock, 2 * kMiB);
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

TEST(BufferPoolTest, SlotCacheIsBounded) {
  BufferPool pool(1024 * kMiB, nullptr);
  std::vector<void*> slots;
  for (int i = 0; i < 48; ++i) slots.push_back(*pool.Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB));
  for (void* slot : slots) pool.Free(slot, MemoryKind::kTemporaryBlock, 2 * kMiB);
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
  // Only kMaxCachedSlotBytes worth of them come back from the cache.
  std::vector<void*> again;
  size_t reused = 0;
  for (int i = 0; i < 48; ++i) {
    again.push_back(*pool.Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB));
    if (std::find(slots.begin(), slots.end(), again.back()) != slots.end()) ++reused;
  }
  EXPECT_GE(reused, BufferPool::kMaxCachedSlotBytes / (2 * kMiB));
  for (void* slot : again) pool.Free(slot, MemoryKind::kTemporaryBlock, 2 * kMiB);
}

// Freed slots stay cached while they fit in the budget beside what is charged; an allocation that maps fresh
// pages first unmaps cached slots beyond kMaxCachedSlotBytes until charged and cached memory fit the budget.
TEST(BufferPoolTest, TheSlotCacheLivesInTheUnusedBudget) {
  BufferPool pool(128 * kMiB, nullptr);
  // A cached slot comes back with what was written into it; fresh pages are zero (an address alone does not tell:
  // the kernel may map a fresh slot where an unmapped one was).
  constexpr uint64_t kMark = 0x5eed5eed5eed5eedull;
  auto reused_of_40 = [&pool] {
    std::vector<void*> slots;
    for (int i = 0; i < 40; ++i) slots.push_back(*pool.Allocate(MemoryKind::kTemporaryBlock, 2 * kMiB));
    int reused = 0;
    for (void* slot : slots) {
      reused += *static_cast<uint64_t*>(slot) == kMark;
      *static_cast<uint64_t*>(slot) = kMark;
      pool.Free(slot, MemoryKind::kTemporaryBlock, 2 * kMiB);
    }
    return reused;
  };
  EXPECT_EQ(reused_of_40(), 0);
  EXPECT_EQ(reused_of_40(), 40);  // 80 MiB cached in 128 MiB of unused budget
  // 100 MiB of another size: charged 100 + cached 80 > 128, so cached slots go down to the 64 MiB floor.
  void* large = *pool.Allocate(MemoryKind::kBlob, 100 * kMiB);
  pool.Free(large, MemoryKind::kBlob, 100 * kMiB);
  EXPECT_EQ(reused_of_40(), static_cast<int>(BufferPool::kMaxCachedSlotBytes / (2 * kMiB)));
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

TEST(BufferPoolTest, ConcurrentAllocateAndFreeKeepExactAccounting) {
  constexpr size_t kBudget = 48 * kMiB;
  std::unique_ptr<Topology> topology = MakeFakeTopology(2, 2);
  BufferPool pool(kBudget, topology.get());
  constexpr int kThreads = 4;
  constexpr int kIterations = 400;
  std::atomic<int> failures{0};
  std::atomic<bool> over_budget{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(t);
      std::vector<std::tuple<void*, MemoryKind, size_t>> held;
      for (int i = 0; i < kIterations; ++i) {
        const MemoryKind kind = static_cast<MemoryKind>(random() % kNumMemoryKinds);
        const size_t bytes = random() % 2 == 0 ? (random() % 3 + 1) * 2 * kMiB : random() % 5000;
        absl::StatusOr<void*> address = pool.Allocate(kind, bytes, static_cast<int>(random() % 3) - 1);
        if (address.ok()) {
          static_cast<char*>(*address)[0] = 1;
          held.emplace_back(*address, kind, bytes);
        } else {
          failures.fetch_add(1);
        }
        if (pool.Usage().used_bytes > kBudget) over_budget = true;
        if (held.size() > 3 || (!held.empty() && random() % 2 == 0)) {
          auto [freed, freed_kind, freed_bytes] = held.front();
          held.erase(held.begin());
          pool.Free(freed, freed_kind, freed_bytes);
        }
      }
      for (auto [address, kind, bytes] : held) pool.Free(address, kind, bytes);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(over_budget);
  MemoryUsage usage = pool.Usage();
  EXPECT_EQ(usage.used_bytes, 0u);
  for (int k = 0; k < kNumMemoryKinds; ++k) EXPECT_EQ(usage.by_kind[k], 0u);
  EXPECT_EQ(usage.huge_page_bytes, 0u);
}

TEST(BufferPoolTest, HugePageBytesFollowLiveSlots) {
  BufferPool pool(64 * kMiB, nullptr);
  void* slot = *pool.Allocate(MemoryKind::kBaseBlock, 4 * kMiB);
  const size_t huge = pool.Usage().huge_page_bytes;
  EXPECT_TRUE(huge == 0 || huge == 4 * kMiB) << huge;  // depends on the kernel's transparent huge page mode
  pool.Free(slot, MemoryKind::kBaseBlock, 4 * kMiB);
  EXPECT_EQ(pool.Usage().huge_page_bytes, 0u);
  // A reused slot keeps its huge-page state.
  slot = *pool.Allocate(MemoryKind::kBaseBlock, 4 * kMiB);
  EXPECT_EQ(pool.Usage().huge_page_bytes, huge);
  pool.Free(slot, MemoryKind::kBaseBlock, 4 * kMiB);
}

}  // namespace
}  // namespace tessera
