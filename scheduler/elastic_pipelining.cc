#include "scheduler/elastic_pipelining.h"

#include <algorithm>
#include <cmath>

namespace tessera {

namespace {

constexpr double kMinDepth = 2;
constexpr double kMaxDepth = 64;

}  // namespace

ElasticPipelining::ElasticPipelining(int operators, std::vector<Edge> pipelining_edges, int64_t target_pending_ns)
    : rates_(static_cast<size_t>(operators)),
      edges_(std::move(pipelining_edges)),
      running_(static_cast<size_t>(operators), 0),
      limits_(static_cast<size_t>(operators)),
      target_pending_ns_(target_pending_ns) {}

void ElasticPipelining::Record(int op, int64_t duration_ns, double blocks_written) {
  Rate& rate = rates_[op];
  const double duration = static_cast<double>(std::max<int64_t>(duration_ns, 1));
  if (rate.records == 0) {
    rate.mean_ns = duration;
    rate.blocks_per_work_order = blocks_written;
  } else {
    rate.mean_ns += kWeight * (duration - rate.mean_ns);
    rate.blocks_per_work_order += kWeight * (blocks_written - rate.blocks_per_work_order);
  }
  ++rate.records;
}

double ElasticPipelining::Depth(int op) const {
  return std::clamp(std::ceil(static_cast<double>(target_pending_ns_) / rates_[op].mean_ns), kMinDepth, kMaxDepth);
}

void ElasticPipelining::ComputeLimits(double worker_share) {
  const double share = std::max(worker_share, 1e-3);
  for (Limit& limit : limits_) limit = Limit{};
  // Producers: the share of the query's workers that writes blocks as fast as the running consumers read them.
  for (int op = 0; op < static_cast<int>(rates_.size()); ++op) {
    const Rate& producer = rates_[op];
    if (producer.records < kMinRecords) continue;
    double consume_ns_per_block = 0;
    double consumer_depth = 0;
    bool feeds_running = false;
    bool consumers_known = true;
    for (const Edge& edge : edges_) {
      if (edge.producer != op || !running_[edge.consumer]) continue;
      feeds_running = true;
      if (rates_[edge.consumer].records < kMinRecords) {
        consumers_known = false;
        break;
      }
      consume_ns_per_block += rates_[edge.consumer].mean_ns;
      consumer_depth = std::max(consumer_depth, Depth(edge.consumer));
    }
    if (!feeds_running || !consumers_known) continue;
    const double producer_share =
        share * producer.mean_ns / (producer.mean_ns + producer.blocks_per_work_order * consume_ns_per_block);
    Limit& limit = limits_[op];
    limit.max_in_flight = static_cast<int>(std::max(1.0, std::ceil(producer_share * Depth(op))));
    limit.max_consumer_backlog = static_cast<int>(std::max(2.0, std::ceil(share * consumer_depth)));
  }
}

}  // namespace tessera
