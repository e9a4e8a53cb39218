#include "storage/lru2_replacer.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

void AccessEvictable(Lru2Replacer& replacer, uint64_t id) {
  replacer.RecordAccess(id);
  replacer.SetEvictable(id, true);
}

TEST(Lru2ReplacerTest, EmptyHasNoVictim) {
  Lru2Replacer replacer;
  EXPECT_EQ(replacer.PickVictim(), std::nullopt);
}

// The classic LRU-2 case: a block referenced twice long ago is "hot" by LRU-1 standards only if recent, but
// LRU-2 prefers to keep it over a block referenced once (a scan) even more recently.
TEST(Lru2ReplacerTest, SingleRecentAccessGoesBeforeTwoOldAccesses) {
  Lru2Replacer replacer;
  AccessEvictable(replacer, 1);  // t=1
  replacer.RecordAccess(1);      // t=2: id 1 has two accesses, long ago
  for (uint64_t filler = 100; filler < 110; ++filler) replacer.RecordAccess(filler);  // time passes; not evictable
  AccessEvictable(replacer, 2);                                                       // one access, recent
  EXPECT_EQ(replacer.PickVictim(), 2u);
  EXPECT_EQ(replacer.PickVictim(), 1u);
  EXPECT_EQ(replacer.PickVictim(), std::nullopt);
}

TEST(Lru2ReplacerTest, InfiniteDistanceTiesBrokenByOldestLastAccess) {
  Lru2Replacer replacer;
  AccessEvictable(replacer, 7);
  AccessEvictable(replacer, 3);
  AccessEvictable(replacer, 5);
  EXPECT_EQ(replacer.PickVictim(), 7u);
  EXPECT_EQ(replacer.PickVictim(), 3u);
  EXPECT_EQ(replacer.PickVictim(), 5u);
}

TEST(Lru2ReplacerTest, LargestBackwardTwoDistanceFirst) {
  Lru2Replacer replacer;
  // With a=10, b=20, c=30, accesses: a(1) b(2) a(3) b(4) c(5) c(6) a(7).
  // Second-most-recent: a=3, b=2, c=5 -> LRU-2 order b, a, c (plain LRU would give b, c, a).
  for (uint64_t id : {10, 20, 10, 20, 30, 30, 10}) replacer.RecordAccess(id);
  for (uint64_t id : {10, 20, 30}) replacer.SetEvictable(id, true);
  EXPECT_EQ(replacer.PickVictim(), 20u);
  EXPECT_EQ(replacer.PickVictim(), 10u);
  EXPECT_EQ(replacer.PickVictim(), 30u);
}

TEST(Lru2ReplacerTest, OnlyTheLastTwoAccessesCount) {
  Lru2Replacer replacer;
  // id 1: accesses 1, 2, 5 -> K-distance from 2.  id 2: accesses 3, 4 -> from 3.  id 1 goes first.
  for (uint64_t id : {1, 1, 2, 2, 1}) replacer.RecordAccess(id);
  replacer.SetEvictable(1, true);
  replacer.SetEvictable(2, true);
  EXPECT_EQ(replacer.PickVictim(), 1u);
  // One more access moves 1's second-most-recent to 5, after 2's.
  Lru2Replacer other;
  for (uint64_t id : {1, 1, 2, 2, 1, 1}) other.RecordAccess(id);
  other.SetEvictable(1, true);
  other.SetEvictable(2, true);
  EXPECT_EQ(other.PickVictim(), 2u);
}

TEST(Lru2ReplacerTest, NewIdsAreNotEvictableUntilMarked) {
  Lru2Replacer replacer;
  replacer.RecordAccess(1);
  replacer.RecordAccess(2);
  EXPECT_EQ(replacer.NumTracked(), 2u);
  EXPECT_EQ(replacer.NumEvictable(), 0u);
  EXPECT_EQ(replacer.PickVictim(), std::nullopt);
  replacer.SetEvictable(2, true);
  EXPECT_EQ(replacer.NumEvictable(), 1u);
  EXPECT_EQ(replacer.PickVictim(), 2u);
  EXPECT_EQ(replacer.PickVictim(), std::nullopt);
  EXPECT_EQ(replacer.NumTracked(), 1u);
}

TEST(Lru2ReplacerTest, PinnedIdIsSkipped) {
  Lru2Replacer replacer;
  AccessEvictable(replacer, 1);  // would be the victim
  AccessEvictable(replacer, 2);
  replacer.SetEvictable(1, false);  // pinned again
  EXPECT_EQ(replacer.PickVictim(), 2u);
  EXPECT_EQ(replacer.PickVictim(), std::nullopt);
  replacer.SetEvictable(1, true);
  EXPECT_EQ(replacer.PickVictim(), 1u);
}

TEST(Lru2ReplacerTest, AccessWhileEvictableReordersVictims) {
  Lru2Replacer replacer;
  AccessEvictable(replacer, 1);
  AccessEvictable(replacer, 2);
  replacer.RecordAccess(1);  // 1 now has two accesses: finite distance, goes after 2
  EXPECT_EQ(replacer.PickVictim(), 2u);
  EXPECT_EQ(replacer.PickVictim(), 1u);
}

TEST(Lru2ReplacerTest, RemoveForgetsTheId) {
  Lru2Replacer replacer;
  AccessEvictable(replacer, 1);
  AccessEvictable(replacer, 2);
  replacer.RecordAccess(3);
  replacer.Remove(1);
  replacer.Remove(3);               // not evictable: still removed
  replacer.Remove(42);              // unknown: ignored
  replacer.SetEvictable(42, true);  // unknown: ignored
  EXPECT_EQ(replacer.NumTracked(), 1u);
  EXPECT_EQ(replacer.PickVictim(), 2u);
  EXPECT_EQ(replacer.PickVictim(), std::nullopt);
}

TEST(Lru2ReplacerTest, ConcurrentUseLosesNoIds) {
  Lru2Replacer replacer;
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&replacer, t] {
      for (uint64_t i = 0; i < kPerThread; ++i) {
        const uint64_t id = t * kPerThread + i;
        replacer.RecordAccess(id);
        replacer.RecordAccess(id);
        replacer.SetEvictable(id, true);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(replacer.NumEvictable(), kThreads * kPerThread);
  size_t victims = 0;
  while (replacer.PickVictim().has_value()) ++victims;
  EXPECT_EQ(victims, kThreads * kPerThread);
  EXPECT_EQ(replacer.NumTracked(), 0u);
}

}  // namespace
}  // namespace tessera
