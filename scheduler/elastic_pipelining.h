#pragma once
// Elastic pipelining (seed 004, CLAIMS; ../shared/research/scan-sharing-and-elastic-pipelining.md Part B and D):
// per-operator limits of one query, decided from the measured rates of its operators, so that a pipelined producer
// runs only as fast as its consumers read its blocks.
//
// In a work-order engine the seed's "expand / shrink a segment's parallelism" becomes a cap on how many of a
// producer's work orders may be handed out and unfinished (running or queued on workers). For a producer P with
// running consumers C along pipelining edges, the share of the query's workers that balances P's block rate
// against the consumers' (P writes b_P blocks per work order of t_P; each block costs each consumer a work order
// of t_C):
//
//   W          = the query's worker share (SetWorkerShare: the pool's workers times the policy's share)
//   depth(op)  = clamp(ceil(target_pending_ns / t_op), 2, 64)   the work orders one worker keeps queued (as the
//                                                               Foreman's pending target, scheduler/README.md)
//   w_P        = W × t_P / (t_P + b_P × Σ_C t_C)
//   cap(P)     = max(1, ceil(w_P × depth(P)))                   work orders of P handed out and unfinished
//   backlog(P) = max(2, ceil(W × max_C depth(C)))              P waits while a consumer has this many work
//                                                               orders ready or in flight (blocks fed, not read)
//
// Operators that feed no running consumer have no limit: capping them by the worker share held a query below its
// share (the cap counts work orders queued on workers, which the Foreman fills by the global mean work-order time),
// and the policy's share is the Foreman's business (time slices), not the query's.
//
// t and b are exponentially weighted means (weight 1/4 for the newest) of the operator's completed work orders, so
// the limits follow phase changes (a filter whose selectivity flips, a consumer that slows down); an operator with
// fewer than 2 records has no limit, nor does a producer whose consumers have none. The limits are recomputed
// after every completion and whenever the worker share changes (a query arrives or leaves).
//
// Threading: single-threaded (the Foreman's, through ExecutionQuery). Allocation-free after construction.

#include <cstdint>
#include <vector>

namespace tessera {

class ElasticPipelining {
 public:
  struct Edge {
    int producer = 0;
    int consumer = 0;
  };
  struct Limit {
    int max_in_flight = 0;         // 0 = none
    int max_consumer_backlog = 0;  // 0 = none
  };

  // `operators`: the query's operator count; `pipelining_edges`: its pipelining edges that feed blocks.
  ElasticPipelining(int operators, std::vector<Edge> pipelining_edges, int64_t target_pending_ns = 200'000);

  // A finished work order of `op` that ran `duration_ns` and after which the operator's output held
  // `blocks_written` more blocks.
  void Record(int op, int64_t duration_ns, double blocks_written);
  // Recomputes every operator's limit for a query with `worker_share` workers (> 0) whose running operators are
  // those `running(op)` says; returns the limits, indexed by operator.
  template <typename Running>
  const std::vector<Limit>& Compute(double worker_share, Running running) {
    for (int op = 0; op < static_cast<int>(rates_.size()); ++op) running_[op] = running(op);
    ComputeLimits(worker_share);
    return limits_;
  }
  const std::vector<Limit>& limits() const { return limits_; }
  // The exponentially weighted mean work-order time of `op` (0 before its first record).
  double mean_ns(int op) const { return rates_[op].mean_ns; }

 private:
  struct Rate {
    double mean_ns = 0;
    double blocks_per_work_order = 0;
    int64_t records = 0;
  };
  static constexpr int64_t kMinRecords = 2;
  static constexpr double kWeight = 0.25;

  void ComputeLimits(double worker_share);
  double Depth(int op) const;

  std::vector<Rate> rates_;
  std::vector<Edge> edges_;
  std::vector<uint8_t> running_;
  std::vector<Limit> limits_;
  const int64_t target_pending_ns_;
};

}  // namespace tessera
