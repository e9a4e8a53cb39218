#include "distributed/gather_operator.h"

#include "absl/strings/str_cat.h"
#include "distributed/block_stream.h"

namespace tessera::distributed {
namespace {

class GatherWorkOrder : public WorkOrder {
 public:
  GatherWorkOrder(int operator_index, Cluster* cluster, int peer, std::string request, TemporaryRelation* output,
                  std::atomic<int64_t>* blocks, std::atomic<int64_t>* bytes)
      : WorkOrder(operator_index, /*preferred_node=*/-1),
        cluster_(cluster),
        peer_(peer),
        request_(std::move(request)),
        output_(output),
        blocks_(blocks),
        bytes_(bytes) {}

  absl::Status Execute(const WorkOrderContext& context) override {
    StreamTotals totals;
    absl::Status status = ReceiveBlockStream(*cluster_, peer_, request_, output_, context.cancelled, &totals);
    blocks_->fetch_add(totals.blocks, std::memory_order_relaxed);
    bytes_->fetch_add(totals.bytes, std::memory_order_relaxed);
    rows_out_ = output_->row_count();
    return status;
  }

 private:
  Cluster* const cluster_;
  const int peer_;
  const std::string request_;
  TemporaryRelation* const output_;
  std::atomic<int64_t>* const blocks_;
  std::atomic<int64_t>* const bytes_;
};

}  // namespace

GatherOperator::GatherOperator(std::string fragment, std::vector<ColumnSchema> output_schema, Cluster* cluster,
                               BufferPool* pool)
    : RelationalOperator("gather"),
      request_(std::move(fragment)),
      cluster_(cluster),
      output_(std::make_shared<TemporaryRelation>(std::move(output_schema), pool)) {}

bool GatherOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (issued_) return true;
  issued_ = true;
  for (int peer = 0; peer < cluster_->size(); ++peer) {
    if (peer == cluster_->rank()) continue;
    out->push_back(std::make_unique<GatherWorkOrder>(index(), cluster_, peer, request_, output_.get(), &blocks_,
                                                     &bytes_));
  }
  return true;
}

std::string GatherOperator::RuntimeDetail() const {
  return absl::StrCat("received ", blocks_.load(), " blocks, ", bytes_.load(), " bytes from ", cluster_->size() - 1,
                      " ranks");
}

}  // namespace tessera::distributed
