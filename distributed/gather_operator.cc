#include "distributed/gather_operator.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "distributed/block_stream.h"
#include "distributed/exchange_outcome.h"

namespace tessera::distributed {

struct GatherOperator::RemoteStream {
  int peer = 0;
  absl::StatusOr<int> tag;  // the started stream (inputs sent), or why it could not start
  absl::Status status;      // how it ended (written by its receiver before it counts as ended)
};

GatherOperator::GatherOperator(std::string fragment, std::vector<ColumnSchema> output_schema, Cluster* cluster,
                               BufferPool* pool, std::vector<std::shared_ptr<TemporaryRelation>> inputs,
                               std::vector<std::shared_ptr<PartitionRelease>> partitions)
    : RelationalOperator("gather"),
      request_(std::move(fragment)),
      cluster_(cluster),
      output_(std::make_shared<TemporaryRelation>(std::move(output_schema), pool)),
      inputs_(std::move(inputs)),
      partitions_(std::move(partitions)) {}

GatherOperator::~GatherOperator() {
  stop_.store(true);
  for (std::thread& receiver : receivers_) receiver.join();
}

void GatherOperator::SetWakeUp(std::function<void()> wake_up) {
  std::lock_guard<std::mutex> lock(wake_up_mutex_);
  wake_up_ = std::move(wake_up);
}

void GatherOperator::StreamEnded(const absl::Status& status) {
  bool first_failure = false;
  if (!status.ok()) {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    first_failure = failure_.ok();
    if (first_failure) failure_ = status;
  }
  const bool last = streams_ended_.fetch_add(1) + 1 == static_cast<size_t>(cluster_->size() - 1);
  if (last) ended_micros_.store(MicrosSinceStart(), std::memory_order_relaxed);
  if (!last && !first_failure) return;
  WakeUp();
}

absl::Status GatherOperator::ExternalFailure() const {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  return failure_;
}

void GatherOperator::WakeUp() {
  std::lock_guard<std::mutex> lock(wake_up_mutex_);
  if (wake_up_) wake_up_();
}

bool GatherOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (streams_.empty()) {
    started_ = std::chrono::steady_clock::now();
    // Every rank starts its fragment now, while this rank's workers run the rest of the query.
    for (int peer = 0; peer < cluster_->size(); ++peer) {
      if (peer == cluster_->rank()) continue;
      auto stream = std::make_unique<RemoteStream>();
      stream->peer = peer;
      stream->tag = StartBlockStream(*cluster_, peer, request_);
      if (stream->tag.ok()) {
        for (const auto& partition : partitions_) partition->Read(peer);
      }
      // The broadcast inputs go at once too (they are complete: the operator is active), so the rank can start;
      // MPI sends block this thread until the rank takes each message (it polls every millisecond at most).
      for (size_t i = 0; i < inputs_.size() && stream->tag.ok(); ++i) {
        int64_t sent_bytes = 0;
        absl::Status sent = SendRelation(*cluster_, peer, *stream->tag, inputs_[i], &sent_bytes);
        broadcast_bytes_ += sent_bytes;
        if (!sent.ok()) stream->tag = absl::Status(sent.code(), absl::StrCat("rank ", peer, ": ", sent.message()));
      }
      streams_.push_back(std::move(stream));
    }
    broadcast_micros_ = inputs_.empty() ? 0 : MicrosSinceStart();
    for (const auto& stream : streams_) {
      if (!stream->tag.ok()) {
        stream->status = stream->tag.status();
        StreamEnded(stream->status);
        continue;
      }
      receivers_.emplace_back([this, remote = stream.get()] {
        StreamTotals totals;
        // Every block wakes the scheduler, which feeds it to the consumers (QueryManager::PollOperators) while
        // the other blocks are still on their way.
        remote->status = ReceiveBlockStream(*cluster_, remote->peer, StreamTags::Same(*remote->tag), output_.get(),
                                            &stop_, &totals, [this] {
                                              int64_t none = -1;
                                              first_block_micros_.compare_exchange_strong(none, MicrosSinceStart());
                                              WakeUp();
                                            });
        blocks_.fetch_add(totals.blocks, std::memory_order_relaxed);
        bytes_.fetch_add(totals.bytes, std::memory_order_relaxed);
        StreamEnded(remote->status);
      });
    }
  }
  if (streams_ended_.load() < streams_.size()) return false;  // a receiver's wake-up asks again
  if (!outcome_issued_) {
    outcome_issued_ = true;
    absl::Status status;
    for (const auto& stream : streams_) {
      if (status.ok()) status = stream->status;
    }
    out->push_back(std::make_unique<ExchangeOutcomeWorkOrder>(index(), std::move(status), output_->row_count()));
  }
  return true;
}

int64_t GatherOperator::MicrosSinceStart() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started_).count();
}

std::string GatherOperator::RuntimeDetail() const {
  std::string detail = absl::StrCat("received ", blocks_.load(), " blocks, ", bytes_.load(), " bytes from ",
                                    cluster_->size() - 1, " ranks");
  const auto ms = [](int64_t micros) { return absl::StrFormat("%.1f", static_cast<double>(micros) / 1000); };
  if (const int64_t first = first_block_micros_.load(); first >= 0) {
    absl::StrAppend(&detail, ", the first after ", ms(first), " ms");
  }
  if (const int64_t ended = ended_micros_.load(); ended >= 0)
    absl::StrAppend(&detail, ", all after ", ms(ended), " ms");
  if (!inputs_.empty())
    absl::StrAppend(&detail, "; broadcast ", broadcast_bytes_, " bytes in ", ms(broadcast_micros_), " ms");
  return detail;
}

}  // namespace tessera::distributed
