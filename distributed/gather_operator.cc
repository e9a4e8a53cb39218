#include "distributed/gather_operator.h"

#include "absl/strings/str_cat.h"
#include "distributed/block_stream.h"

namespace tessera::distributed {

struct GatherOperator::RemoteStream {
  int peer = 0;
  absl::StatusOr<int> tag;  // the started stream (inputs sent), or why it could not start
  std::atomic<bool> received{false};
};

namespace {

class GatherWorkOrder : public WorkOrder {
 public:
  GatherWorkOrder(int operator_index, Cluster* cluster, GatherOperator::RemoteStream* stream,
                  TemporaryRelation* output, std::atomic<int64_t>* blocks, std::atomic<int64_t>* bytes)
      : WorkOrder(operator_index, /*preferred_node=*/-1),
        cluster_(cluster),
        stream_(stream),
        output_(output),
        blocks_(blocks),
        bytes_(bytes) {}

  absl::Status Execute(const WorkOrderContext& context) override {
    stream_->received.store(true);
    if (!stream_->tag.ok()) return stream_->tag.status();
    StreamTotals totals;
    absl::Status status =
        ReceiveBlockStream(*cluster_, stream_->peer, StreamTags::Same(*stream_->tag), output_, context.cancelled, &totals);
    blocks_->fetch_add(totals.blocks, std::memory_order_relaxed);
    bytes_->fetch_add(totals.bytes, std::memory_order_relaxed);
    rows_out_ = output_->row_count();
    return status;
  }

 private:
  Cluster* const cluster_;
  GatherOperator::RemoteStream* const stream_;
  TemporaryRelation* const output_;
  std::atomic<int64_t>* const blocks_;
  std::atomic<int64_t>* const bytes_;
};

}  // namespace

GatherOperator::GatherOperator(std::string fragment, std::vector<ColumnSchema> output_schema, Cluster* cluster,
                               BufferPool* pool, std::vector<std::shared_ptr<TemporaryRelation>> inputs)
    : RelationalOperator("gather"),
      request_(std::move(fragment)),
      cluster_(cluster),
      output_(std::make_shared<TemporaryRelation>(std::move(output_schema), pool)),
      inputs_(std::move(inputs)) {}

GatherOperator::~GatherOperator() {
  for (const auto& stream : streams_) {
    if (stream->tag.ok() && !stream->received.load()) AbandonBlockStream(*cluster_, stream->peer, StreamTags::Same(*stream->tag));
  }
}

bool GatherOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!streams_.empty()) return true;
  // Every rank starts its fragment now, while this rank's workers run the rest of the query; each work order
  // then only drains a rank's (by then mostly computed) result.
  for (int peer = 0; peer < cluster_->size(); ++peer) {
    if (peer == cluster_->rank()) continue;
    auto stream = std::make_unique<RemoteStream>();
    stream->peer = peer;
    stream->tag = StartBlockStream(*cluster_, peer, request_);
    // The broadcast inputs go at once too (they are complete: the operator is active), so the rank can start;
    // MPI sends block this thread until the rank takes each message (it polls every millisecond at most).
    for (size_t i = 0; i < inputs_.size() && stream->tag.ok(); ++i) {
      int64_t sent_bytes = 0;
      absl::Status sent = SendRelation(*cluster_, peer, *stream->tag, inputs_[i], &sent_bytes);
      broadcast_bytes_ += sent_bytes;
      if (!sent.ok()) stream->tag = absl::Status(sent.code(), absl::StrCat("rank ", peer, ": ", sent.message()));
    }
    out->push_back(
        std::make_unique<GatherWorkOrder>(index(), cluster_, stream.get(), output_.get(), &blocks_, &bytes_));
    streams_.push_back(std::move(stream));
  }
  return true;
}

std::string GatherOperator::RuntimeDetail() const {
  std::string detail = absl::StrCat("received ", blocks_.load(), " blocks, ", bytes_.load(), " bytes from ",
                                    cluster_->size() - 1, " ranks");
  if (!inputs_.empty()) absl::StrAppend(&detail, "; broadcast ", broadcast_bytes_, " bytes");
  return detail;
}

}  // namespace tessera::distributed
