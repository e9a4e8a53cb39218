#pragma once
// The hash-split (repartitioning) exchange (distributed/README.md): every rank splits the rows of an input by the
// rank their key places them on (distributed/partitioning.h: the placement of PARTITION BY HASH tables), sends
// each part to its rank and receives the other ranks' parts, so that a join or an aggregation on that key runs on
// every rank over the rows that meet there (query_execution/plan_distribution.h decides where).
//
// On the master, RepartitionOperator: when its query starts (Start, before its own inputs are done) it sends every
// other rank a kShuffle command (rank_protocol.h) with the input's plan fragment, the key column and the
// exchange's two tags; the rank runs the
// fragment under its Foreman, splits each result block as the fragment writes it on a service thread and streams
// the parts as they fill (ExchangeParts with GrowingRelations; engine/distributed_statements.cc, Shuffle), and keeps its own partition for the plan fragment that reads
// it (ExchangeResults). The master's own part of the input arrives as the operator's input: one split work order
// per block; once they have run, a thread of the operator sends the master's parts (a thread per rank) and
// receives every rank's part for the master, holding no worker, and wakes the scheduler (SetWakeUp) when every
// stream has ended; then one work order reports the outcome. The operator's output is the master's partition. Every pair of ranks streams under
// credits (block_stream.h), blocks on the exchange's data tag and credits on its credit tag, so a rank never
// holds more than kInitialCredits unread blocks of one sender. The input's fragment may read the partitions of
// other hash splits (a nested split, query_execution/plan_distribution.h): a rank's split then waits for them
// (ExchangeResults::Take) on its service thread.
//
// The ranks' parts never wait for the master's workers (they run on the ranks' own Foremen and service threads),
// and the master's exchange waits on its own thread, so a master with one worker computes the rest of its query
// (e.g. another split's input, or the part of a gather) while the parts arrive. The gather
// that reads the ranks' partitions sends its fragment at once (it holds no worker while it waits); a rank's
// fragment waits for its partition (ExchangeResults::Take) on the rank's stream thread, not on a worker.
//
// Threading: the operator is used on the scheduler thread; its work orders run on workers and write the
// thread-safe relations; ExchangeParts and ExchangeResults are thread-safe.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "distributed/block_stream.h"
#include "distributed/cluster.h"
#include "expressions/batch.h"
#include "relational_operators/block_input.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/relational_operator.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera::distributed {

// What the master asks a rank to do for one hash-split exchange (the kShuffle command's text).
struct ShuffleRequest {
  StreamTags tags;
  int key_column = 0;    // the fragment's output column that places a row
  std::string fragment;  // query_execution/plan_fragment.h
};
std::string EncodeShuffleRequest(const ShuffleRequest& request);
absl::StatusOr<ShuffleRequest> DecodeShuffleRequest(std::string_view text);

// Splits rows into one relation per rank by the rank of their key column (RankOfIntegerKey / RankOfStringKey;
// NULL keys to rank 0). One splitter per work order or thread; the relations are thread-safe.
class HashSplitter {
 public:
  // `parts[r]`: where the rows of rank r go (all of the same schema); `key_column`: a batch column of an
  // INTEGER, BIGINT, CHAR or VARCHAR type (PlaceableKeyType).
  HashSplitter(const std::vector<TemporaryRelation*>& parts, int key_column);

  // The selected rows (all when `selection` is null) of the first `width` columns of `batch`.
  absl::Status Add(const Batch& batch, const SelectionVector* selection, size_t width);
  absl::Status Flush();
  int64_t rows() const { return rows_; }

 private:
  const int key_column_;
  std::vector<std::unique_ptr<VectorBlockWriter>> writers_;  // per rank
  std::vector<SelectionVector> selections_;                  // per rank, reused per batch
  std::vector<const ColumnVector*> columns_;
  int64_t rows_ = 0;
};

// Sends `parts[r]` to every rank r but this one (a thread per rank) and receives every other rank's part for this
// rank into `out`, on the exchange's tags; returns once every stream has ended. `cancelled` (may be null) closes
// the incoming streams early. The first error is returned, naming its rank (a peer's cancellation only when no
// other stream failed); every stream is still ended, so the other ranks are not left waiting. Adds what it sent and received to the totals.
// With `growing` (may be null: the parts are complete), the parts are still being written: each is sent as its
// blocks appear (SendGrowingStream, releasing them once sent) until `growing` finishes.
absl::Status ExchangeParts(Cluster& cluster, StreamTags tags,
                           const std::vector<std::shared_ptr<TemporaryRelation>>& parts, TemporaryRelation* out,
                           const std::atomic<bool>* cancelled, StreamTotals* sent, StreamTotals* received,
                           GrowingRelations* growing = nullptr);

// Ends this rank's side of an exchange that cannot run: every other rank's stream to this one is closed and
// drained, and every stream from this one ends with `failure`, which the other ranks report.
void FailExchange(Cluster& cluster, StreamTags tags, const absl::Status& failure, BufferPool* pool);

// On a rank: the partitions its hash-split exchanges received, by data tag, until the plan fragment that reads
// one takes it or the master releases it (kRelease). Thread-safe.
class ExchangeResults {
 public:
  void Put(int tag, absl::StatusOr<std::shared_ptr<TemporaryRelation>> result);
  // Waits for the partition of `tag` and removes it; DeadlineExceeded after `timeout`.
  absl::StatusOr<std::shared_ptr<TemporaryRelation>> Take(int tag, std::chrono::milliseconds timeout);
  // No fragment will read the partition of `tag`: it is dropped now, or by Put if it has not arrived yet (the
  // master sends kRelease only to ranks that got the split and not the fragment, so a Put follows).
  void Release(int tag);
  // Partitions held (for tests).
  size_t size();

  // A partition (or release) older than this belongs to a query the master could not release (the tags cycle far
  // more slowly than that).
  static constexpr std::chrono::hours kAbandoned{1};

 private:
  struct Entry {
    absl::StatusOr<std::shared_ptr<TemporaryRelation>> result;
    std::chrono::steady_clock::time_point stored;
  };
  void DropAbandoned(std::chrono::steady_clock::time_point now);  // mutex_ held

  std::mutex mutex_;
  std::condition_variable changed_;
  absl::flat_hash_map<int, Entry> entries_;
  absl::flat_hash_map<int, std::chrono::steady_clock::time_point> released_;  // released before their Put
};

// The master's record of where the partitions of one hash split wait (ExchangeResults): the split notes the ranks
// it sent kShuffle to, the gather whose fragment reads the partitions notes the ranks it sent that fragment to (a
// rank's fragment takes its partition even when it cannot run). Shared by both operators; when the last of them
// is dropped (the query ended, failed or was cancelled), every rank that got the split and not the fragment is
// sent kRelease, so its partition is freed now instead of after kAbandoned.
// Threading: noted on the scheduler thread; destroyed on the thread that drops the query's DAG.
class PartitionRelease {
 public:
  PartitionRelease(Cluster* cluster, int data_tag)
      : cluster_(cluster), tag_(data_tag), shuffled_(cluster->size(), false), read_(cluster->size(), false) {}
  ~PartitionRelease();
  PartitionRelease(const PartitionRelease&) = delete;
  PartitionRelease& operator=(const PartitionRelease&) = delete;

  void Shuffled(int rank) { shuffled_[rank] = true; }
  void Read(int rank) { read_[rank] = true; }

 private:
  Cluster* const cluster_;
  const int tag_;
  std::vector<bool> shuffled_;
  std::vector<bool> read_;
};

class RepartitionOperator : public RelationalOperator {
 public:
  // `fragment`: the input subtree encoded (EncodePlanFragment), run by every other rank; `input` read through
  // `scan` (whose first batch columns are `schema`'s): the master's own part; `key_column`: the column of
  // `schema` that places a row; `tags`: two tags of this process (Cluster::NewRequestTag), the data tag also
  // naming the exchange in the plan fragment that reads the ranks' partitions; `release`: shared with that
  // fragment's gather (the ranks sent kShuffle are noted in it); `reads`: the records of the hash splits whose
  // partitions `fragment` itself reads (a nested split: the ranks sent kShuffle are noted as their readers).
  RepartitionOperator(std::string fragment, BlockInput input, ScanSpec scan, int key_column,
                      std::vector<ColumnSchema> schema, StreamTags tags, Cluster* cluster, BufferPool* pool,
                      std::shared_ptr<PartitionRelease> release,
                      std::vector<std::shared_ptr<PartitionRelease>> reads = {});
  // Ends the streams of an exchange that never ran (a failed or cancelled query), so the ranks do not wait;
  // closes the streams of one still running and joins its thread.
  ~RepartitionOperator() override;
  void SetWakeUp(std::function<void()> wake_up) override;
  // The exchange's error once its thread has ended (the query fails without waiting for a worker).
  absl::Status ExternalFailure() const override;

  void FeedInputBlock(int input, uint32_t block_index) override { pending_.push_back(block_index); }
  void DoneFeedingInput(int input) override { input_done_ = true; }
  bool ReleasesInputBlocks(int input) const override { return true; }
  // Sends every other rank its part (kShuffle) when the query starts: the ranks' fragments read nothing of the
  // master's, so they run while the master's own part still waits for its blocking inputs (TPC-H Q18's split of
  // orders waits for the master's aggregation of lineitem, which rank 1 then no longer waits for).
  void Start() override;
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return parts_[cluster_->rank()]; }
  // "split N rows; sent B bytes, received B bytes" (bytes between every pair of ranks that include this one).
  std::string RuntimeDetail() const override;

 private:
  class SplitWorkOrder;
  // The exchange, on exchanger_: flushes the splitters, streams with every rank, then wakes the scheduler.
  void Exchange();

  const std::string request_;
  const BlockInput input_;
  ScanSpec scan_;
  const int key_column_;
  Cluster* const cluster_;
  std::vector<std::shared_ptr<TemporaryRelation>> parts_;  // per rank; this rank's is the output
  const StreamTags tags_;
  const std::shared_ptr<PartitionRelease> release_;
  const std::vector<std::shared_ptr<PartitionRelease>> reads_;
  bool started_ = false;    // kShuffle sent to the other ranks (Start)
  bool activated_ = false;  // GetWorkOrders asked once: the master's own part is issued
  bool input_done_ = false;
  bool exchange_started_ = false;
  bool outcome_issued_ = false;
  std::thread exchanger_;
  std::atomic<bool> stop_{false};            // closes the incoming streams early (destructor)
  std::atomic<bool> exchange_ended_{false};  // exchange_status_ and rows_received_ are written
  absl::Status exchange_status_;
  int64_t rows_received_ = 0;
  std::mutex wake_up_mutex_;
  std::function<void()> wake_up_;
  // One splitter per worker, kept across its split work orders (flushed by the exchange work order), so that a
  // selective input still fills whole blocks instead of sending a small block per input block and rank.
  HashSplitter* SplitterOf(int worker);
  std::mutex splitters_mutex_;
  absl::flat_hash_map<int, std::unique_ptr<HashSplitter>> splitters_;
  std::deque<uint32_t> pending_;
  int64_t splits_issued_ = 0;
  std::atomic<int64_t> splits_finished_{0};
  std::atomic<int64_t> rows_split_{0};
  StreamTotals sent_, received_;  // written by the exchange, read once it ended
};

}  // namespace tessera::distributed
