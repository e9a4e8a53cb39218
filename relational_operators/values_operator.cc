#include "relational_operators/values_operator.h"

#include "common/status_macros.h"
#include "storage/block_builder.h"

namespace tessera {

class ValuesOperator::ValuesWorkOrder : public WorkOrder {
 public:
  explicit ValuesWorkOrder(ValuesOperator* op) : WorkOrder(op->index(), -1), op_(op) {}

  absl::Status Execute(const WorkOrderContext&) override {
    TemporaryRelation& output = *op_->output_;
    BlockBuilder builder(output.schema(), output.block_size_bytes());
    for (const std::vector<Value>& row : op_->rows_) TESSERA_RETURN_IF_ERROR(output.AppendValueRow(builder, row));
    if (!builder.empty()) TESSERA_RETURN_IF_ERROR(output.AppendBlock(builder).status());
    rows_out_ = static_cast<int64_t>(op_->rows_.size());
    return absl::OkStatus();
  }

 private:
  ValuesOperator* op_;
};

ValuesOperator::ValuesOperator(std::vector<ColumnSchema> schema, std::vector<std::vector<Value>> rows, BufferPool* pool)
    : RelationalOperator("Values"),
      rows_(std::move(rows)),
      output_(std::make_shared<TemporaryRelation>(std::move(schema), pool)) {}

bool ValuesOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!issued_) out->push_back(std::make_unique<ValuesWorkOrder>(this));
  issued_ = true;
  return true;
}

}  // namespace tessera
