#pragma once
// CopyFrom: COPY table FROM 'file' as a query. One work order per line-aligned chunk of the file
// (storage/delimited_file.h) parses it into base blocks of the table and appends them to the load's segment
// (table_load.h); after the last of them one CommitWorkOrder installs the segment, so the table is unchanged unless
// every chunk loaded. Chunks are of about equal bytes, so the finished work orders are the bytes done (progress).
// Once a chunk fails, the chunks still running stop early without recording a part (so the load cannot commit) and
// without an error of their own (the failed chunk's error is the query's).
// No input, no output relation.

#include <atomic>
#include <memory>
#include <vector>

#include "relational_operators/relational_operator.h"
#include "relational_operators/table_load.h"
#include "storage/delimited_file.h"

namespace tessera {

class CopyFromOperator : public RelationalOperator {
 public:
  // `file` was opened for `load`'s table. The new blocks count against `account` (the query's) until the commit.
  CopyFromOperator(std::unique_ptr<DelimitedFileChunks> file, std::shared_ptr<TableLoad> load, BufferPool* account);
  ~CopyFromOperator() override { load_->Abandon(); }

  bool GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) override;
  int64_t EstimatedWorkOrders() const override { return static_cast<int64_t>(file_->chunk_count()) + 1; }

 private:
  class ChunkWorkOrder;

  const std::unique_ptr<DelimitedFileChunks> file_;
  const std::shared_ptr<TableLoad> load_;
  BufferPool* const account_;
  std::atomic<bool> abandon_{false};
  bool chunks_issued_ = false;
  bool commit_issued_ = false;
};

}  // namespace tessera
