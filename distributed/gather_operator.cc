#include "distributed/gather_operator.h"

#include "absl/strings/str_cat.h"
#include "distributed/block_stream.h"

namespace tessera::distributed {
namespace {

class GatherWorkOrder : public WorkOrder {
 public:
  GatherWorkOrder(int operator_index, Cluster* cluster, int peer, std::string table, TemporaryRelation* output,
                  std::atomic<int64_t>* blocks, std::atomic<int64_t>* bytes)
      : WorkOrder(operator_index, /*preferred_node=*/-1),
        cluster_(cluster),
        peer_(peer),
        table_(std::move(table)),
        output_(output),
        blocks_(blocks),
        bytes_(bytes) {}

  absl::Status Execute(const WorkOrderContext& context) override {
    StreamTotals totals;
    absl::Status status = ReceiveTableBlocks(*cluster_, peer_, table_, output_, context.cancelled, &totals);
    blocks_->fetch_add(totals.blocks, std::memory_order_relaxed);
    bytes_->fetch_add(totals.bytes, std::memory_order_relaxed);
    rows_out_ = output_->row_count();
    return status;
  }

 private:
  Cluster* const cluster_;
  const int peer_;
  const std::string table_;
  TemporaryRelation* const output_;
  std::atomic<int64_t>* const blocks_;
  std::atomic<int64_t>* const bytes_;
};

}  // namespace

GatherOperator::GatherOperator(std::shared_ptr<const TableDescriptor> table, Cluster* cluster, BufferPool* pool)
    : RelationalOperator("gather"),
      table_(std::move(table)),
      cluster_(cluster),
      output_(std::make_shared<TemporaryRelation>(table_->columns, pool, table_->block_size_bytes)) {}

bool GatherOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (issued_) return true;
  issued_ = true;
  for (int peer = 0; peer < cluster_->size(); ++peer) {
    if (peer == cluster_->rank()) continue;
    out->push_back(std::make_unique<GatherWorkOrder>(index(), cluster_, peer, table_->name, output_.get(), &blocks_,
                                                     &bytes_));
  }
  return true;
}

std::string GatherOperator::RuntimeDetail() const {
  return absl::StrCat("received ", blocks_.load(), " blocks, ", bytes_.load(), " bytes from ", cluster_->size() - 1,
                      " ranks");
}

}  // namespace tessera::distributed
