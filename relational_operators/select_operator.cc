#include "relational_operators/select_operator.h"

#include "common/status_macros.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {

class SelectOperator::SelectWorkOrder : public WorkOrder {
 public:
  SelectWorkOrder(SelectOperator* op, uint32_t block_index, int node)
      : WorkOrder(op->index(), node), op_(op), block_index_(block_index) {
    if (!op->input_.is_table()) DeclareConsumedBlock(0, block_index);
  }

  absl::Status Execute(const WorkOrderContext& context) override {
    TESSERA_ASSIGN_OR_RETURN(PinnedBlock block, op_->input_.Pin(block_index_));
    BlockScanner scanner(op_->scan_);
    scanner.SetBlockRows(block.deleted, block.ordinal);
    rows_in_ = block.view.row_count();
    if (scanner.CanSkip(block.view)) {
      op_->skipped_blocks_.fetch_add(1);
      return absl::OkStatus();
    }
    std::vector<std::unique_ptr<ExpressionEvaluator>> evaluators;
    for (const auto& projection : op_->projections_) {
      evaluators.push_back(std::make_unique<ExpressionEvaluator>(*projection));
    }
    VectorBlockWriter writer(op_->output_.get(), op_->builders_.get());
    std::vector<const ColumnVector*> columns(evaluators.size());
    while (true) {
      TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(block.view));
      if (!more) break;
      if (scanner.selected_count() == 0) continue;
      for (size_t p = 0; p < evaluators.size(); ++p) {
        TESSERA_ASSIGN_OR_RETURN(columns[p], evaluators[p]->Evaluate(scanner.batch(), scanner.selection()));
      }
      TESSERA_RETURN_IF_ERROR(writer.Append(columns, scanner.selection(), scanner.batch().size));
    }
    TESSERA_RETURN_IF_ERROR(writer.Flush());
    rows_out_ = writer.rows_written();
    return absl::OkStatus();
  }

 private:
  SelectOperator* op_;
  uint32_t block_index_;
};

SelectOperator::SelectOperator(BlockInput input, ScanSpec scan,
                               std::vector<std::unique_ptr<BoundExpression>> projections,
                               std::vector<std::string> output_names, BufferPool* pool)
    : RelationalOperator("Select"),
      input_(std::move(input)),
      scan_(std::move(scan)),
      projections_(std::move(projections)) {
  scan_.Prepare();
  std::vector<ColumnSchema> schema;
  for (size_t i = 0; i < projections_.size(); ++i) {
    schema.push_back(ColumnSchema{output_names[i], projections_[i]->result_type, false, {}});
  }
  output_ = std::make_shared<TemporaryRelation>(std::move(schema), pool);
  builders_ = std::make_unique<BlockBuilderPool>(output_.get());
}

int64_t SelectOperator::EstimatedWorkOrders() const {
  return input_.is_table() ? static_cast<int64_t>(input_.table_block_count()) : -1;
}

bool SelectOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  return blocks_.IssueAll(input_, out, [&](uint32_t block, int node) -> std::unique_ptr<WorkOrder> {
    return std::make_unique<SelectWorkOrder>(this, block, node);
  });
}

}  // namespace tessera
