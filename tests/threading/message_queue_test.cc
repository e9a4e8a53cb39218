#include "threading/message_queue.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tessera {
namespace {

TEST(MessageQueueTest, PopAllReturnsEverythingInOrder) {
  MessageQueue<int> queue;
  EXPECT_TRUE(queue.Push(1));
  std::vector<int> batch = {2, 3};
  EXPECT_TRUE(queue.PushBatch(&batch));
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(queue.ApproximateSize(), 3u);
  std::vector<int> out;
  ASSERT_TRUE(queue.PopAll(&out));
  EXPECT_EQ(out, (std::vector<int>{1, 2, 3}));
  out.clear();
  EXPECT_FALSE(queue.TryPopAll(&out));
}

TEST(MessageQueueTest, CloseDrainsThenFails) {
  MessageQueue<int> queue;
  queue.Push(7);
  queue.Close();
  int rejected = 8;
  EXPECT_FALSE(queue.Push(std::move(rejected)));
  std::vector<int> more = {9};
  EXPECT_FALSE(queue.PushBatch(&more));
  EXPECT_EQ(more.size(), 1u);  // untouched
  std::vector<int> out;
  ASSERT_TRUE(queue.PopAll(&out));
  EXPECT_EQ(out, std::vector<int>{7});
  out.clear();
  EXPECT_FALSE(queue.PopAll(&out));
}

TEST(MessageQueueTest, CloseWakesABlockedConsumer) {
  MessageQueue<int> queue;
  std::thread consumer([&] {
    std::vector<int> out;
    EXPECT_FALSE(queue.PopAll(&out));
  });
  queue.Close();
  consumer.join();
}

TEST(MessageQueueTest, ManyProducersLoseNothingAndKeepPerProducerOrder) {
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 20000;
  MessageQueue<std::pair<int, int>> queue;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::vector<std::pair<int, int>> batch;
      for (int i = 0; i < kPerProducer; ++i) {
        if (i % 3 == 0) {
          batch.emplace_back(p, i);
          ASSERT_TRUE(queue.PushBatch(&batch));
        } else {
          ASSERT_TRUE(queue.Push({p, i}));
        }
      }
    });
  }
  std::vector<int> next(kProducers, 0);
  int received = 0;
  std::vector<std::pair<int, int>> out;
  while (received < kProducers * kPerProducer) {
    out.clear();
    ASSERT_TRUE(queue.PopAll(&out));
    for (auto [producer, index] : out) {
      ASSERT_EQ(index, next[producer]) << "producer " << producer;
      ++next[producer];
    }
    received += static_cast<int>(out.size());
  }
  for (std::thread& t : producers) t.join();
  EXPECT_EQ(received, kProducers * kPerProducer);
}

}  // namespace
}  // namespace tessera
