#include "storage/pool_array.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace tessera {
namespace {

constexpr size_t kMiB = 1 << 20;

TEST(PoolArrayTest, ChargesThePoolWhileItLivesAndMovesOwnership) {
  BufferPool pool(64 * kMiB, nullptr);
  {
    absl::StatusOr<PoolArray<uint64_t>> array = PoolArray<uint64_t>::AllocateZeroed(&pool, 1000);
    ASSERT_TRUE(array.ok()) << array.status();
    EXPECT_EQ(array->size(), 1000u);
    EXPECT_EQ(pool.Usage().by_kind[static_cast<int>(MemoryKind::kBlob)], 8000u);  // 64-byte steps: 8000 exactly
    for (uint64_t value : *array) EXPECT_EQ(value, 0u);
    (*array)[999] = 7;

    PoolArray<uint64_t> moved = std::move(*array);
    EXPECT_TRUE(array->empty());
    EXPECT_EQ(moved[999], 7u);
    EXPECT_EQ(pool.Usage().used_bytes, 8000u);

    PoolArray<uint64_t> other = *PoolArray<uint64_t>::Allocate(&pool, 10);
    moved = std::move(other);  // frees what `moved` held
    EXPECT_EQ(pool.Usage().used_bytes, 128u);
    moved.Reset();
    EXPECT_EQ(pool.Usage().used_bytes, 0u);
  }
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
}

TEST(PoolArrayTest, LargeArraysAreHugePageSlotsAndOverTheBudgetFailCleanly) {
  BufferPool pool(16 * kMiB, nullptr);
  absl::StatusOr<PoolArray<uint32_t>> large = PoolArray<uint32_t>::Allocate(&pool, 3 * kMiB / 4);  // 3 MiB
  ASSERT_TRUE(large.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large->data()) % BufferPool::kSlotAlignment, 0u);
  EXPECT_EQ(pool.Usage().used_bytes, 4 * kMiB);  // rounded up to whole 2 MiB slots

  absl::StatusOr<PoolArray<uint32_t>> too_large = PoolArray<uint32_t>::Allocate(&pool, 4 * kMiB);  // 16 MiB
  EXPECT_EQ(too_large.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(pool.Usage().used_bytes, 4 * kMiB);

  absl::StatusOr<PoolArray<uint32_t>> empty = PoolArray<uint32_t>::Allocate(&pool, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(pool.Usage().used_bytes, 4 * kMiB);
}

// Growing keeps the contents: small arrays by copying, slots by remapping their pages into a larger slot (which
// stays 2 MiB-aligned); the pool and the account count the new size only.
TEST(PoolArrayTest, ResizeKeepsTheContentsAndChargesTheNewSize) {
  BufferPool pool(64 * kMiB, nullptr);
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&pool);
  PoolArray<uint64_t> array = *PoolArray<uint64_t>::Allocate(account.get(), 0);
  size_t size = 0;
  for (size_t next : {size_t{100}, size_t{200'000}, size_t{300'000}, size_t{1'500'000}, size_t{50}}) {
    ASSERT_TRUE(array.Resize(next).ok());
    for (size_t i = size; i < next; ++i) array[i] = i * 7 + 1;
    size = next;
    for (size_t i = 0; i < size; ++i) ASSERT_EQ(array[i], i * 7 + 1) << "size " << size << ", element " << i;
    const size_t bytes = size * sizeof(uint64_t);
    const size_t charged =
        bytes >= BufferPool::kLargeAllocationBytes
            ? (bytes + BufferPool::kSlotAlignment - 1) / BufferPool::kSlotAlignment * BufferPool::kSlotAlignment
            : (bytes + 63) / 64 * 64;
    EXPECT_EQ(account->Usage().used_bytes, charged) << "size " << size;
    EXPECT_EQ(pool.Usage().used_bytes, charged) << "size " << size;
    if (bytes >= BufferPool::kLargeAllocationBytes) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(array.data()) % BufferPool::kSlotAlignment, 0u);
    }
  }
  // Over the budget: an error, and the array is as it was.
  ASSERT_TRUE(array.Resize(2'000'000).ok());
  array[1'999'999] = 5;
  EXPECT_EQ(array.Resize(20'000'000).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(array.size(), 2'000'000u);
  EXPECT_EQ(array[49], 49 * 7 + 1u);
  EXPECT_EQ(array[1'999'999], 5u);
  ASSERT_TRUE(array.Resize(0).ok());
  EXPECT_EQ(pool.Usage().used_bytes, 0u);
  ASSERT_TRUE(array.Resize(10).ok());  // still tied to its pool
  array.Reset();
  EXPECT_EQ(account->Usage().used_bytes, 0u);
}

}  // namespace
}  // namespace tessera
