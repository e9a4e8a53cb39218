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

}  // namespace
}  // namespace tessera
