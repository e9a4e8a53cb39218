#include "relational_operators/insert_operator.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "expressions/expression_evaluator.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {

class InsertOperator::InsertWorkOrder : public WorkOrder {
 public:
  InsertWorkOrder(InsertOperator* op, uint32_t block_index, int node)
      : WorkOrder(op->index(), node), op_(op), block_index_(block_index) {
    if (!op->input_.is_table()) DeclareConsumedBlock(0, block_index);
  }

  absl::Status Execute(const WorkOrderContext& context) override {
    const TableDescriptor& table = op_->load_->table();
    TESSERA_ASSIGN_OR_RETURN(PinnedBlock block, op_->input_.Pin(block_index_));
    rows_in_ = block.view.row_count();
    BlockScanner scanner(op_->scan_);
    scanner.SetBlockRows(block.deleted, block.ordinal);
    std::vector<ExpressionEvaluator> evaluators;
    evaluators.reserve(op_->values_.size());
    for (const auto& value : op_->values_) evaluators.emplace_back(*value);
    LoadBlockWriter out(table.columns, op_->load_->storage(), op_->load_->writer(), op_->account_,
                        op_->load_->compress());
    VectorBlockWriter writer(
        table.columns, table.block_size_bytes, [&out](BlockBuilder& builder) { return out.Flush(builder); },
        absl::StrCat("row is too large for the table's block size of ", table.block_size_bytes, " bytes"));
    std::vector<const ColumnVector*> columns(evaluators.size());
    uint32_t first_row = 0;  // of the batch, in the block
    while (true) {
      TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(block.view));
      if (!more) break;
      const Batch& batch = scanner.batch();
      // Only rows deleted in the table snapshot are left out (the input carries no filter).
      const SelectionVector* live = scanner.selection();
      for (size_t c = 0; c < evaluators.size(); ++c) {
        absl::StatusOr<const ColumnVector*> evaluated = evaluators[c].Evaluate(batch, live);
        if (!evaluated.ok()) return CastError(static_cast<int>(c), batch, first_row, evaluated.status());
        columns[c] = *evaluated;
        if (table.columns[c].not_null && columns[c]->has_nulls()) {
          for (uint32_t i = 0; i < (live != nullptr ? live->count : batch.size); ++i) {
            const uint32_t r = live != nullptr ? live->rows[i] : i;
            if (columns[c]->IsNull(r)) {
              return absl::InvalidArgumentError(absl::StrCat(
                  "INSERT row ", RowNumber(first_row + r), ": NULL in NOT NULL column '", table.columns[c].name, "'"));
            }
          }
        }
      }
      TESSERA_RETURN_IF_ERROR(writer.Append(columns, live, batch.size));
      first_row += batch.size;
    }
    TESSERA_RETURN_IF_ERROR(writer.Flush());
    rows_out_ = out.loaded().row_count;
    op_->load_->AddPart(block_index_, std::move(out.loaded()));
    return absl::OkStatus();
  }

 private:
  // 1-based position in the query's output of row `row_in_block` of this work order's block.
  int64_t RowNumber(uint32_t row_in_block) const { return op_->input_.RowsBefore(block_index_) + row_in_block + 1; }

  // Error path: names the first row of `batch` whose value for table column `column` does not cast, with the
  // cast's own message; otherwise the evaluator's error.
  absl::Status CastError(int column, const Batch& batch, uint32_t first_row, const absl::Status& status) const {
    const ColumnSchema& schema = op_->load_->table().columns[column];
    const int source = op_->sources_[column];
    if (source >= 0) {
      for (uint32_t r = 0; r < batch.size; ++r) {
        const Value value = batch.columns[source].GetValue(r);
        if (value.is_null()) continue;
        absl::StatusOr<Value> cast = value.CastTo(schema.type);
        if (!cast.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("row ", RowNumber(first_row + r), ", column ", schema.name, ": ", cast.status().message()));
        }
      }
    }
    return absl::Status(status.code(), absl::StrCat("column ", schema.name, ": ", status.message()));
  }

  InsertOperator* op_;
  uint32_t block_index_;
};

InsertOperator::InsertOperator(BlockInput input, ScanSpec scan, std::vector<std::unique_ptr<BoundExpression>> values,
                               std::vector<int> sources, std::shared_ptr<TableLoad> load, BufferPool* account)
    : RelationalOperator("Insert"),
      input_(std::move(input)),
      scan_(std::move(scan)),
      values_(std::move(values)),
      sources_(std::move(sources)),
      load_(std::move(load)),
      account_(account) {
  scan_.Prepare();
}

int64_t InsertOperator::EstimatedWorkOrders() const {
  return input_.is_table() ? static_cast<int64_t>(input_.table_block_count()) + 1 : -1;
}

bool InsertOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (commit_issued_) return true;
  const bool all_issued = blocks_.IssueAll(input_, out, [&](uint32_t block, int node) -> std::unique_ptr<WorkOrder> {
    ++issued_;
    return std::make_unique<InsertWorkOrder>(this, block, node);
  });
  // The commit waits for every load work order: each records its part as its last step.
  if (!all_issued || load_->parts() != issued_) return false;
  out->push_back(std::make_unique<CommitWorkOrder>(index(), load_));
  commit_issued_ = true;
  return true;
}

}  // namespace tessera
