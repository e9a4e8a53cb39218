#include "relational_operators/copy_from_operator.h"

namespace tessera {

class CopyFromOperator::ChunkWorkOrder : public WorkOrder {
 public:
  ChunkWorkOrder(CopyFromOperator* op, size_t chunk) : WorkOrder(op->index(), -1), op_(op), chunk_(chunk) {}

  absl::Status Execute(const WorkOrderContext& context) override {
    LoadBlockWriter out(op_->load_->table().columns, op_->load_->storage(), op_->load_->writer(), op_->account_,
                        op_->load_->compress());
    absl::Status status = op_->file_->ParseChunk(chunk_, out, op_->abandon_);
    rows_out_ = out.loaded().row_count;
    rows_in_ = rows_out_;
    if (absl::IsCancelled(status) && op_->abandon_.load()) {
      // Another chunk failed first and is the query's error; without this part the load never commits.
      return absl::OkStatus();
    }
    if (!status.ok()) {
      op_->abandon_.store(true);
      return status;
    }
    op_->load_->AddPart(chunk_, std::move(out.loaded()));
    return absl::OkStatus();
  }

 private:
  CopyFromOperator* op_;
  size_t chunk_;
};

CopyFromOperator::CopyFromOperator(std::unique_ptr<DelimitedFileChunks> file, std::shared_ptr<TableLoad> load,
                                   BufferPool* account)
    : RelationalOperator("CopyFrom"), file_(std::move(file)), load_(std::move(load)), account_(account) {}

bool CopyFromOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (commit_issued_) return true;
  if (!chunks_issued_) {
    for (size_t k = 0; k < file_->chunk_count(); ++k) out->push_back(std::make_unique<ChunkWorkOrder>(this, k));
    chunks_issued_ = true;
  }
  // The commit waits for every chunk: each records its part as its last step.
  if (load_->parts() != static_cast<int64_t>(file_->chunk_count())) return false;
  out->push_back(std::make_unique<CommitWorkOrder>(index(), load_));
  commit_issued_ = true;
  return true;
}

}  // namespace tessera
