#include "relational_operators/exact_filter_build_operator.h"

#include "common/status_macros.h"

namespace tessera {

class ExactFilterBuildOperator::InsertWorkOrder : public WorkOrder {
 public:
  InsertWorkOrder(ExactFilterBuildOperator* op, uint32_t block_index, int node)
      : WorkOrder(op->index(), node), op_(op), block_index_(block_index) {
    if (!op->input_.is_table()) DeclareConsumedBlock(0, block_index);
  }

  absl::Status Execute(const WorkOrderContext&) override {
    TESSERA_ASSIGN_OR_RETURN(PinnedBlock block, op_->input_.Pin(block_index_));
    rows_in_ = block.view.row_count();
    BlockScanner scanner(op_->scan_);
    scanner.SetBlockRows(block.deleted, block.ordinal);
    if (scanner.CanSkip(block.view)) return absl::OkStatus();
    while (true) {
      TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(block.view));
      if (!more) break;
      if (scanner.selected_count() == 0) continue;
      TESSERA_RETURN_IF_ERROR(op_->filter_->InsertKeys(scanner.batch().columns[op_->key_column_], scanner.selection(),
                                                       scanner.batch().size));
      rows_out_ += scanner.selected_count();
    }
    return absl::OkStatus();
  }

 private:
  ExactFilterBuildOperator* op_;
  uint32_t block_index_;
};

ExactFilterBuildOperator::ExactFilterBuildOperator(BlockInput input, ScanSpec scan, int key_column,
                                                   std::shared_ptr<ExactFilter> filter)
    : RelationalOperator("ExactFilterBuild"),
      input_(std::move(input)),
      scan_(std::move(scan)),
      key_column_(key_column),
      filter_(std::move(filter)) {
  scan_.Prepare();
}

int64_t ExactFilterBuildOperator::EstimatedWorkOrders() const {
  return input_.is_table() ? static_cast<int64_t>(input_.table_block_count()) : -1;
}

bool ExactFilterBuildOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  return blocks_.IssueAll(input_, out, [&](uint32_t block, int node) -> std::unique_ptr<WorkOrder> {
    return std::make_unique<InsertWorkOrder>(this, block, node);
  });
}

}  // namespace tessera
