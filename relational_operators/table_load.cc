#include "relational_operators/table_load.h"

#include "glog/logging.h"

namespace tessera {

TableLoad::TableLoad(std::shared_ptr<const TableDescriptor> table, StorageManager* storage,
                     std::unique_ptr<SegmentWriter> writer, CommitFunction commit)
    : table_(std::move(table)), storage_(storage), writer_(std::move(writer)), commit_(std::move(commit)) {}

void TableLoad::AddPart(uint64_t ordinal, LoadedRows rows) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool inserted = parts_by_ordinal_.emplace(ordinal, std::move(rows)).second;
    DCHECK(inserted) << "load part " << ordinal << " added twice";
  }
  parts_.fetch_add(1, std::memory_order_release);
}

absl::Status TableLoad::Commit() {
  LoadedRows all;
  all.statistics.resize(table_->columns.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CHECK(writer_ != nullptr) << "TableLoad::Commit called twice";
    for (auto& [ordinal, part] : parts_by_ordinal_) all.Append(std::move(part));
    parts_by_ordinal_.clear();
  }
  const int64_t rows = all.row_count;
  absl::Status status = commit_(std::move(writer_), std::move(all));
  if (!status.ok()) return status;
  committed_rows_.store(rows, std::memory_order_release);
  committed_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

void TableLoad::Abandon() {
  std::lock_guard<std::mutex> lock(mutex_);
  parts_by_ordinal_.clear();
  writer_.reset();  // an unfinished writer removes its file
}

absl::Status CommitWorkOrder::Execute(const WorkOrderContext&) {
  absl::Status status = load_->Commit();
  rows_out_ = load_->committed_rows();
  return status;
}

}  // namespace tessera
