#pragma once
// Insert: the last operator of INSERT ... SELECT. One work order per input block (the query's output, pipelined,
// or the blocks of a base table read directly when the query is a plain scan) evaluates one expression per table
// column a vector at a time (the targeted query column cast to the column's type, or the column's DEFAULT / NULL),
// checks NOT NULL, and builds base blocks of the table that it appends to the load's segment (table_load.h). After
// the last of them one CommitWorkOrder installs the segment; the table is unchanged unless every work order
// succeeded. No output relation.
//
// Errors name the row by its position in the query's output (rows of the input blocks before it, plus its place
// in its block: exact because the input carries no filter; see query_execution/plan_builder.cc):
//   "row 3, column label: value 'longer than ten' is too long for VARCHAR(10)"
//   "INSERT row 3: NULL in NOT NULL column 'id'"

#include <memory>
#include <vector>

#include "expressions/bound_expression.h"
#include "relational_operators/block_input.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/relational_operator.h"
#include "relational_operators/table_load.h"

namespace tessera {

class InsertOperator : public RelationalOperator {
 public:
  // `scan` loads the query's output columns as batch columns and has no filter. `values[c]` computes table
  // column c from them; `sources[c]` is the batch column it casts (-1 for a DEFAULT / NULL), for error messages.
  // The new blocks count against `account` (the query's) until the commit.
  InsertOperator(BlockInput input, ScanSpec scan, std::vector<std::unique_ptr<BoundExpression>> values,
                 std::vector<int> sources, std::shared_ptr<TableLoad> load, BufferPool* account);
  ~InsertOperator() override { load_->Abandon(); }

  void FeedInputBlock(int input, uint32_t block_index) override { blocks_.Feed(block_index); }
  void DoneFeedingInput(int input) override { blocks_.DoneFeeding(); }
  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  int64_t EstimatedWorkOrders() const override;
  // Each input block is read by one work order, which copies its rows into the table's blocks.
  bool ReleasesInputBlocks(int input) const override { return true; }

 private:
  class InsertWorkOrder;

  const BlockInput input_;
  ScanSpec scan_;
  const std::vector<std::unique_ptr<BoundExpression>> values_;
  const std::vector<int> sources_;
  const std::shared_ptr<TableLoad> load_;
  BufferPool* const account_;
  BlockWorkQueue blocks_;
  int64_t issued_ = 0;
  bool commit_issued_ = false;
};

}  // namespace tessera
