#include "scheduler/elastic_pipelining.h"

#include "gtest/gtest.h"

namespace tessera {
namespace {

// Operator 0 produces for operator 1 (pipelining); operator 2 is on its own.
ElasticPipelining TwoStageQuery() { return ElasticPipelining(3, {{0, 1}}, /*target_pending_ns=*/200'000); }

void RecordTimes(ElasticPipelining& elastic, int op, int64_t ns, double blocks, int times = 4) {
  for (int i = 0; i < times; ++i) elastic.Record(op, ns, blocks);
}

auto AllRunning() {
  return [](int) { return true; };
}

TEST(ElasticPipeliningTest, NoLimitBeforeAnOperatorHasTwoRecords) {
  ElasticPipelining elastic = TwoStageQuery();
  elastic.Record(0, 100'000, 1);
  const auto& limits = elastic.Compute(2, AllRunning());
  for (const auto& limit : limits) {
    EXPECT_EQ(limit.max_in_flight, 0);
    EXPECT_EQ(limit.max_consumer_backlog, 0);
  }
}

TEST(ElasticPipeliningTest, AnOperatorThatFeedsNoRunningConsumerHasNoLimit) {
  ElasticPipelining elastic = TwoStageQuery();
  RecordTimes(elastic, 0, 100'000, 1);
  RecordTimes(elastic, 1, 300'000, 0);
  RecordTimes(elastic, 2, 50'000, 1);
  const auto& limits = elastic.Compute(2, AllRunning());
  EXPECT_EQ(limits[1].max_in_flight, 0);  // the consumer
  EXPECT_EQ(limits[2].max_in_flight, 0);  // feeds nobody
  EXPECT_GT(limits[0].max_in_flight, 0);
}

TEST(ElasticPipeliningTest, AProducerGetsTheShareThatMatchesItsConsumersRate) {
  ElasticPipelining elastic = TwoStageQuery();
  // Producer 100 us per work order writing 1 block; consumer 300 us per block: the producer needs a quarter of the
  // workers (w_P = W * 100 / (100 + 300)).
  RecordTimes(elastic, 0, 100'000, 1);
  RecordTimes(elastic, 1, 300'000, 0);
  auto limits = elastic.Compute(4, AllRunning());
  EXPECT_EQ(limits[0].max_in_flight, 2);         // w_P = 1 worker, depth ceil(200 / 100) = 2
  EXPECT_EQ(limits[0].max_consumer_backlog, 8);  // 4 workers x depth 2 of the consumer
  EXPECT_EQ(limits[1].max_consumer_backlog, 0);  // the consumer feeds nobody
  // A cheap consumer lets the producer have nearly all of them: w_P = 4 * 100 / 110.
  RecordTimes(elastic, 1, 10'000, 0, 40);
  limits = elastic.Compute(4, AllRunning());
  EXPECT_EQ(limits[0].max_in_flight, 8);  // ceil(3.64 x 2)
}

TEST(ElasticPipeliningTest, LimitsFollowRateChangesAndTheWorkerShare) {
  ElasticPipelining elastic = TwoStageQuery();
  RecordTimes(elastic, 0, 100'000, 1);
  RecordTimes(elastic, 1, 100'000, 0);
  EXPECT_EQ(elastic.Compute(4, AllRunning())[0].max_in_flight, 4);  // w_P = 2, depth 2
  // The filter's selectivity flips: the producer now writes 4 blocks per work order; the mean moves over a few
  // records (weight 1/4) and the producer's share shrinks to 4 * 100 / (100 + 400) = 0.8, 1.6 work orders.
  RecordTimes(elastic, 0, 100'000, 4, 30);
  EXPECT_EQ(elastic.Compute(4, AllRunning())[0].max_in_flight, 2);
  // A second query arrives and halves the share: 0.8 work orders, at least 1.
  EXPECT_EQ(elastic.Compute(2, AllRunning())[0].max_in_flight, 1);
  EXPECT_EQ(elastic.Compute(2, AllRunning())[0].max_consumer_backlog, 4);  // 2 workers x the consumer's depth 2
}

TEST(ElasticPipeliningTest, AProducerWhoseConsumerIsNotRunningHasNoLimit) {
  ElasticPipelining elastic = TwoStageQuery();
  RecordTimes(elastic, 0, 100'000, 1);
  RecordTimes(elastic, 1, 300'000, 0);
  const auto& limits = elastic.Compute(4, [](int op) { return op != 1; });
  EXPECT_EQ(limits[0].max_in_flight, 0);
  EXPECT_EQ(limits[0].max_consumer_backlog, 0);
}

}  // namespace
}  // namespace tessera
