#pragma once
// The work order that reports how an exchange ended, once its streams (on threads of their own, holding no worker)
// are done: the gather's and the hash split's. Its status fails the query when a stream failed (the error names
// the rank); the rows received count as its output, for EXPLAIN ANALYZE.

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "relational_operators/work_order.h"

namespace tessera::distributed {

class ExchangeOutcomeWorkOrder : public WorkOrder {
 public:
  ExchangeOutcomeWorkOrder(int operator_index, absl::Status status, int64_t rows)
      : WorkOrder(operator_index, /*preferred_node=*/-1), status_(std::move(status)) {
    rows_out_ = rows;
  }

  absl::Status Execute(const WorkOrderContext&) override { return status_; }

 private:
  const absl::Status status_;
};

}  // namespace tessera::distributed
