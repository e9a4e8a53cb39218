#include "relational_operators/series_operator.h"

#include <algorithm>

#include "common/status_macros.h"
#include "expressions/column_vector.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {

// Writes the series' values number first .. first + rows - 1, a vector at a time.
class SeriesOperator::SeriesWorkOrder : public WorkOrder {
 public:
  SeriesWorkOrder(SeriesOperator* op, int64_t first, int64_t rows)
      : WorkOrder(op->index(), -1), op_(op), first_(first), rows_(rows) {}

  absl::Status Execute(const WorkOrderContext&) override {
    ColumnVector values(Type::BigInt());
    const std::vector<const ColumnVector*> columns = {&values};
    VectorBlockWriter writer(op_->output_.get());
    // Wrapping arithmetic: every value written is in range (the binder bounds the series), intermediate
    // products of a large step are not.
    const uint64_t step = static_cast<uint64_t>(op_->step_);
    uint64_t next = static_cast<uint64_t>(op_->start_) + static_cast<uint64_t>(first_) * step;
    for (int64_t done = 0; done < rows_; done += kVectorSize) {
      const uint32_t size = static_cast<uint32_t>(std::min<int64_t>(kVectorSize, rows_ - done));
      values.ResetOwned(size);
      int64_t* out = values.mutable_values<int64_t>();
      for (uint32_t i = 0; i < size; ++i, next += step) out[i] = static_cast<int64_t>(next);
      TESSERA_RETURN_IF_ERROR(writer.Append(columns, nullptr, size));
    }
    TESSERA_RETURN_IF_ERROR(writer.Flush());
    rows_out_ = rows_;
    return absl::OkStatus();
  }

 private:
  SeriesOperator* op_;
  const int64_t first_;
  const int64_t rows_;
};

SeriesOperator::SeriesOperator(std::vector<ColumnSchema> schema, int64_t start, int64_t step, int64_t count,
                               BufferPool* pool)
    : RelationalOperator("Series"),
      start_(start),
      step_(step),
      count_(count),
      output_(std::make_shared<TemporaryRelation>(std::move(schema), pool)) {}

bool SeriesOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!issued_) {
    for (int64_t first = 0; first < count_; first += kRowsPerWorkOrder) {
      out->push_back(std::make_unique<SeriesWorkOrder>(this, first, std::min(kRowsPerWorkOrder, count_ - first)));
    }
  }
  issued_ = true;
  return true;
}

}  // namespace tessera
