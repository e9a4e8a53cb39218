#pragma once
// The gather exchange on the master: every other rank runs a plan fragment (query_execution/plan_fragment.h: a
// scan of its part of a partitioned table, joins with replicated or co-located tables, partial or whole
// aggregation, under its own Foreman) and the result blocks are received into one temporary relation (with the
// fragment's output columns) that the rest of the plan reads beside the master's own part. The operator sends every
// rank its fragment as soon as it is activated (the query's start, or once its broadcast inputs are complete;
// they go with it, on the scheduler thread), so the ranks compute while the master runs its own part. A thread
// per remote rank then receives that rank's stream (block_stream.h) under credit-based flow control, so no worker
// waits for a rank. Every received block wakes the scheduler (RelationalOperator::SetWakeUp, the Foreman's
// "message arrived" event), which feeds it to the gather's pipelining consumers at once (QueryManager::
// PollOperators: blocks an operator appended outside its work orders), so the master's operators above read a
// rank's first blocks while later ones are on their way (a streaming gather); when the last stream has ended the
// operator hands out one work order that reports the streams' outcome and the rows received, and is done. A
// stream that fails wakes the scheduler at once, which fails the query with its error (ExternalFailure) without
// waiting for the other streams or for a worker.
// The plan builder places it (query_execution/plan_builder.cc, distributed/README.md).
//
// Threading: the operator is used on the scheduler thread; its receiver threads share the output relation
// (thread-safe), the totals and the count of ended streams (atomics), and the wake-up (under a mutex). The
// destructor closes the streams still open and joins the receivers (a rank still computing its fragment is
// waited for).

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "catalog/catalog.h"
#include "distributed/cluster.h"
#include "distributed/repartition_operator.h"
#include "relational_operators/relational_operator.h"

namespace tessera::distributed {

class GatherOperator : public RelationalOperator {
 public:
  // Runs `fragment` (encoded, EncodePlanFragment) on every rank of `cluster` but this one and receives the
  // results into a relation of `output_schema` (the fragment's columns) in buffer pool `pool`.
  // `inputs`: the fragment's broadcast inputs (block_stream.h, SendRelation), complete when the operator is
  // activated (the plan builder adds ordering edges from their producers); each rank receives them first.
  // `partitions`: the hash splits whose partitions the fragment reads (the ranks sent the fragment are noted).
  GatherOperator(std::string fragment, std::vector<ColumnSchema> output_schema, Cluster* cluster, BufferPool* pool,
                 std::vector<std::shared_ptr<TemporaryRelation>> inputs = {},
                 std::vector<std::shared_ptr<PartitionRelease>> partitions = {});

  // Closes the streams still open (a failed or cancelled query) and joins the receivers.
  ~GatherOperator() override;

  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  void SetWakeUp(std::function<void()> wake_up) override;
  // The first stream that failed (its error names the rank): the query fails at once, without waiting for the
  // other streams or for a worker to run the outcome work order.
  absl::Status ExternalFailure() const override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }

  int64_t EstimatedWorkOrders() const override { return 1; }
  // "received N blocks, B bytes from R ranks, the first after F ms, all after A ms" (and "; broadcast B bytes in
  // S ms" with inputs), times from the operator's activation: where a fragment's wall time goes.
  std::string RuntimeDetail() const override;

  struct RemoteStream;  // a started stream of one rank (gather_operator.cc)

 private:
  // A receiver thread (or a stream that could not start) ended with `status`; a failed one and the last one wake
  // the scheduler.
  void StreamEnded(const absl::Status& status);
  // Asks the scheduler to look at the operator again (any thread).
  void WakeUp();

  const std::string request_;  // the encoded fragment
  Cluster* const cluster_;
  std::shared_ptr<TemporaryRelation> output_;
  const std::vector<std::shared_ptr<TemporaryRelation>> inputs_;
  const std::vector<std::shared_ptr<PartitionRelease>> partitions_;
  std::vector<std::unique_ptr<RemoteStream>> streams_;  // one per remote rank, once started
  std::vector<std::thread> receivers_;
  std::atomic<size_t> streams_ended_{0};
  std::atomic<bool> stop_{false};  // closes the open streams (destructor)
  bool outcome_issued_ = false;
  std::mutex wake_up_mutex_;
  std::function<void()> wake_up_;
  mutable std::mutex failure_mutex_;
  absl::Status failure_;  // the first failed stream's status (ExternalFailure)
  std::atomic<int64_t> blocks_{0};
  std::atomic<int64_t> bytes_{0};
  int64_t broadcast_bytes_ = 0;  // sent: the inputs, to every rank (on the scheduler thread)
  // For RuntimeDetail: when the streams started, how long the broadcast took, and when the first block arrived
  // and the last stream ended (microseconds after `started_`, -1 until then).
  std::chrono::steady_clock::time_point started_;
  int64_t broadcast_micros_ = 0;
  std::atomic<int64_t> first_block_micros_{-1};
  std::atomic<int64_t> ended_micros_{-1};
  int64_t MicrosSinceStart() const;
};

// On a rank: a broadcast input the gather sent with the fragment (block_stream.h, ReceiveRelation), already
// complete. It has no work orders; when the QueryManager finds it finished it feeds the relation's blocks to its
// consumers like any producer's.
class BroadcastInputOperator : public RelationalOperator {
 public:
  explicit BroadcastInputOperator(std::shared_ptr<TemporaryRelation> relation)
      : RelationalOperator("broadcast input"), relation_(std::move(relation)) {}

  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override { return true; }
  std::shared_ptr<TemporaryRelation> output() const override { return relation_; }
  int64_t EstimatedWorkOrders() const override { return 0; }

 private:
  const std::shared_ptr<TemporaryRelation> relation_;
};

}  // namespace tessera::distributed
