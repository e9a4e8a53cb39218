#pragma once
// generate_series / range in FROM (optimizer's Series node): the integers start, start + step, ... (`count` of
// them) as one BIGINT column. Work orders of kRowsPerWorkOrder rows each, issued at once and independent, so the
// workers write the series in parallel (the output's row order is not the series' order without ORDER BY).

#include <cstdint>
#include <memory>
#include <vector>

#include "relational_operators/relational_operator.h"

namespace tessera {

class SeriesOperator : public RelationalOperator {
 public:
  // About one 2 MiB block of BIGINTs per work order.
  static constexpr int64_t kRowsPerWorkOrder = 1 << 18;

  // `schema` has one BIGINT column; `step` != 0, `count` >= 0.
  SeriesOperator(std::vector<ColumnSchema> schema, int64_t start, int64_t step, int64_t count, BufferPool* pool);

  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  int64_t EstimatedWorkOrders() const override { return (count_ + kRowsPerWorkOrder - 1) / kRowsPerWorkOrder; }

 private:
  class SeriesWorkOrder;

  const int64_t start_;
  const int64_t step_;
  const int64_t count_;
  std::shared_ptr<TemporaryRelation> output_;
  bool issued_ = false;
};

}  // namespace tessera
