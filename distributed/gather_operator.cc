#include "distributed/gather_operator.h"

#include "absl/strings/str_cat.h"
#include "distributed/block_stream.h"

namespace tessera::distributed {

struct GatherOperator::RemoteStream {
  int peer = 0;
  absl::StatusOr<int> tag;  // the started stream, or why it could not start
  std::atomic<bool> received{false};
};

namespace {

class GatherWorkOrder : public WorkOrder {
 public:
  GatherWorkOrder(int operator_index, Cluster* cluster, GatherOperator::RemoteStream* stream,
                  const std::vector<std::shared_ptr<TemporaryRelation>>* inputs, TemporaryRelation* output,
                  std::atomic<int64_t>* blocks, std::atomic<int64_t>* bytes, std::atomic<int64_t>* broadcast_bytes)
      : WorkOrder(operator_index, /*preferred_node=*/-1),
        cluster_(cluster),
        stream_(stream),
        inputs_(inputs),
        output_(output),
        blocks_(blocks),
        bytes_(bytes),
        broadcast_bytes_(broadcast_bytes) {}

  absl::Status Execute(const WorkOrderContext& context) override {
    stream_->received.store(true);
    if (!stream_->tag.ok()) return stream_->tag.status();
    for (const auto& input : *inputs_) {
      int64_t sent_bytes = 0;
      absl::Status sent = SendRelation(*cluster_, stream_->peer, *stream_->tag, input, &sent_bytes);
      broadcast_bytes_->fetch_add(sent_bytes, std::memory_order_relaxed);
      if (!sent.ok()) return absl::Status(sent.code(), absl::StrCat("rank ", stream_->peer, ": ", sent.message()));
    }
    StreamTotals totals;
    absl::Status status =
        ReceiveBlockStream(*cluster_, stream_->peer, *stream_->tag, output_, context.cancelled, &totals);
    blocks_->fetch_add(totals.blocks, std::memory_order_relaxed);
    bytes_->fetch_add(totals.bytes, std::memory_order_relaxed);
    rows_out_ = output_->row_count();
    return status;
  }

 private:
  Cluster* const cluster_;
  GatherOperator::RemoteStream* const stream_;
  const std::vector<std::shared_ptr<TemporaryRelation>>* const inputs_;
  TemporaryRelation* const output_;
  std::atomic<int64_t>* const blocks_;
  std::atomic<int64_t>* const bytes_;
  std::atomic<int64_t>* const broadcast_bytes_;
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
    if (stream->tag.ok() && !stream->received.load()) AbandonBlockStream(*cluster_, stream->peer, *stream->tag);
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
    out->push_back(
        std::make_unique<GatherWorkOrder>(index(), cluster_, stream.get(), &inputs_, output_.get(), &blocks_, &bytes_,
                                                      &broadcast_bytes_));
    streams_.push_back(std::move(stream));
  }
  return true;
}

std::string GatherOperator::RuntimeDetail() const {
  std::string detail = absl::StrCat("received ", blocks_.load(), " blocks, ", bytes_.load(), " bytes from ",
                                    cluster_->size() - 1, " ranks");
  if (!inputs_.empty()) absl::StrAppend(&detail, "; broadcast ", broadcast_bytes_.load(), " bytes");
  return detail;
}

}  // namespace tessera::distributed
