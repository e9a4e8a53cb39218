#pragma once
// Constant rows (SELECT without FROM, VALUES): one work order writes them.

#include <memory>
#include <vector>

#include "catalog/value.h"
#include "relational_operators/relational_operator.h"

namespace tessera {

class ValuesOperator : public RelationalOperator {
 public:
  // Every row has one value per column of `schema`, already of the column's type.
  ValuesOperator(std::vector<ColumnSchema> schema, std::vector<std::vector<Value>> rows, BufferPool* pool);

  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  std::shared_ptr<TemporaryRelation> output() const override { return output_; }
  int64_t EstimatedWorkOrders() const override { return 1; }

 private:
  class ValuesWorkOrder;

  std::vector<std::vector<Value>> rows_;
  std::shared_ptr<TemporaryRelation> output_;
  bool issued_ = false;
};

}  // namespace tessera
