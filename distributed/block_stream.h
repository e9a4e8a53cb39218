#pragma once
// A table's blocks from one rank to another, as MPI messages with credit-based flow control. Blocks travel as
// the storage module's block bytes (storage/block_layout.h: position independent, the same in memory and in block
// files), one block per message, and are checked with BlockView::Validate when they arrive.
//
// The stream of one request tag (rank_protocol.h, kRunFragment):
//   receiver -> sender   the kRunFragment command, then credits: int32 messages, each allowing that many more blocks
//                        (kInitialCredits at first, one more for every block received), and finally -1 (closed);
//   sender -> receiver   one message per block while it holds credits, then an empty message, then a Reply
//                        (rank_protocol.h) with the sender's status; it then drains credits until it reads -1.
// So a receiver never holds more than kInitialCredits unread blocks of one sender, and a receiver that stops
// early (an error, a cancelled query) closes the stream and the sender stops at its next credit.
//
// Threading: each function runs on one thread for its whole stream (a worker, or a rank's service thread); the
// two ends of one stream are the only receivers of its tag.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/cluster.h"
#include "relational_operators/block_input.h"
#include "relational_operators/temporary_relation.h"

namespace tessera::distributed {

inline constexpr int32_t kInitialCredits = 4;

// The tags of one stream: blocks, the end and the Reply travel on `data`, credits on `credits`. A gather's stream
// uses its request tag for both; the streams of a hash split (repartition_operator.h) use two, because both ranks
// of a pair send blocks to each other on the same exchange.
struct StreamTags {
  int data = 0;
  int credits = 0;
  static StreamTags Same(int tag) { return {tag, tag}; }
};

struct StreamTotals {
  int64_t blocks = 0;
  int64_t bytes = 0;
};

// A relation that another thread is still appending to (a hash split's parts on a rank, split block by block as
// the fragment writes its result): a sender waits for each next block or for the end. Thread-safe.
class GrowingRelations {
 public:
  // Blocks were appended: wakes the senders waiting for them.
  void Appended();
  // No block will be appended any more; `status` says why when the relations are incomplete (a failed
  // fragment): the senders then end their streams with it.
  void Finish(absl::Status status);
  // Waits until `relation` holds more than `block` blocks (true) or the writer finished without it (false, or
  // the writer's error).
  absl::StatusOr<bool> WaitForBlock(const TemporaryRelation& relation, size_t block);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool finished_ = false;
  absl::Status status_;
};

// Sender: streams blocks 0 .. `block_count`-1 of `input` (a fragment's result relation on a rank) to `peer` on
// `tag`, then the end of the stream and OK. Errors of the transport are returned; a block that cannot be read
// ends the stream with that error in its Reply.
absl::Status SendBlockStream(Cluster& cluster, int peer, StreamTags tags, const BlockInput& input, size_t block_count);
// Sender: streams the blocks of `relation` while `growing` (its writer) appends them, releasing each once sent,
// then the end of the stream with the writer's status; adds what it sent to `sent`.
absl::Status SendGrowingStream(Cluster& cluster, int peer, StreamTags tags,
                               const std::shared_ptr<TemporaryRelation>& relation, GrowingRelations& growing,
                               StreamTotals* sent);
// Sender: a stream without blocks that ends with `failure` (the fragment could not run).
absl::Status SendFailedStream(Cluster& cluster, int peer, StreamTags tags, const absl::Status& failure);

// Receiver: sends `request` (an encoded plan fragment, query_execution/plan_fragment.h) to rank `peer` as a
// kRunFragment command; returns the stream's tag. The rank starts computing at once; it sends nothing before the
// receiver's first credit (ReceiveBlockStream). Errors name the rank.
absl::StatusOr<int> StartBlockStream(Cluster& cluster, int peer, const std::string& request);
// Receiver: appends every block of started stream `tag` from `peer` to `out` (whose schema is the fragment's
// output), adding to `totals`. `cancelled` (may be null) is checked between blocks; `appended` (may be empty)
// runs on this thread after each block is appended (a streaming gather's wake-up). Errors name the rank.
absl::Status ReceiveBlockStream(Cluster& cluster, int peer, StreamTags tags, TemporaryRelation* out,
                                const std::atomic<bool>* cancelled, StreamTotals* totals,
                                const std::function<void()>& appended = nullptr);
// Broadcast inputs of a fragment (relations the master computed, which every rank's fragment reads whole): after
// the kRunFragment command, the receiver of the stream sends each input as a block count (uint64) and its blocks,
// before its first credit; the rank receives them into `out` (whose schema is the input's) before it runs.
// SendRelation adds the bytes it sent to `*bytes`.
absl::Status SendRelation(Cluster& cluster, int peer, int tag, std::shared_ptr<TemporaryRelation> relation,
                          int64_t* bytes);
absl::Status ReceiveRelation(Cluster& cluster, int peer, int tag, TemporaryRelation* out);

}  // namespace tessera::distributed
