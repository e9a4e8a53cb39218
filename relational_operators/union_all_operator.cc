#include "relational_operators/union_all_operator.h"

#include "common/status_macros.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {

class UnionAllOperator::CopyWorkOrder : public WorkOrder {
 public:
  CopyWorkOrder(UnionAllOperator* op, int input, uint32_t block, int node)
      : WorkOrder(op->index(), node), op_(op), input_(input), block_(block) {
    if (!op->inputs_[input].is_table()) DeclareConsumedBlock(input, block);
  }

  absl::Status Execute(const WorkOrderContext&) override {
    TESSERA_ASSIGN_OR_RETURN(PinnedBlock block, op_->inputs_[input_].Pin(block_));
    rows_in_ = block.view.row_count();
    BlockScanner scanner(op_->scans_[input_]);
    scanner.SetBlockRows(block.deleted, block.ordinal);
    if (scanner.CanSkip(block.view)) return absl::OkStatus();
    VectorBlockWriter writer(op_->output_.get());
    // The batch may carry more columns than the output: runtime-filter keys the branch does not output are loaded
    // after the output columns (ScanSpec::runtime_filters). Only the first `width` are copied.
    const size_t width = op_->output_->schema().size();
    std::vector<const ColumnVector*> columns;
    while (true) {
      TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(block.view));
      if (!more) break;
      if (scanner.selected_count() == 0) continue;
      columns.clear();
      for (size_t c = 0; c < width; ++c) columns.push_back(&scanner.batch().columns[c]);
      TESSERA_RETURN_IF_ERROR(writer.Append(columns, scanner.selection(), scanner.batch().size));
    }
    TESSERA_RETURN_IF_ERROR(writer.Flush());
    rows_out_ = writer.rows_written();
    return absl::OkStatus();
  }

 private:
  UnionAllOperator* op_;
  int input_;
  uint32_t block_;
};

UnionAllOperator::UnionAllOperator(std::vector<BlockInput> inputs, std::vector<ScanSpec> scans,
                                   std::vector<std::string> names, BufferPool* pool)
    : RelationalOperator("UnionAll"), inputs_(std::move(inputs)), scans_(std::move(scans)) {
  std::vector<ColumnSchema> schema;
  for (size_t c = 0; c < names.size(); ++c) schema.push_back({names[c], scans_[0].types[c], false, {}});
  for (ScanSpec& scan : scans_) scan.Prepare();
  output_ = std::make_shared<TemporaryRelation>(std::move(schema), pool);
}

bool UnionAllOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!table_blocks_issued_) {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!inputs_[i].is_table()) continue;
      for (size_t b = 0; b < inputs_[i].table_block_count(); ++b) {
        out->push_back(std::make_unique<CopyWorkOrder>(this, static_cast<int>(i), static_cast<uint32_t>(b),
                                                       inputs_[i].HomeNode(b)));
      }
      ++inputs_done_;  // base tables are complete from the start
    }
    table_blocks_issued_ = true;
  }
  while (!pending_.empty()) {
    out->push_back(std::make_unique<CopyWorkOrder>(this, pending_.front().first, pending_.front().second, -1));
    pending_.pop_front();
  }
  return inputs_done_ == static_cast<int>(inputs_.size());
}

}  // namespace tessera
