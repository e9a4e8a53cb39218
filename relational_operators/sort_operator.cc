#include "relational_operators/sort_operator.h"

#include <algorithm>

#include "common/status_macros.h"
#include "relational_operators/key_hashing.h"
#include "relational_operators/sort_column.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {
namespace {

template <typename T>
int CompareTyped(const BlockView& a, uint32_t a_row, const BlockView& b, uint32_t b_row, int column) {
  T x = a.Values<T>(column)[a_row];
  T y = b.Values<T>(column)[b_row];
  return x < y ? -1 : (y < x ? 1 : 0);
}

}  // namespace

int CompareColumnValues(const BlockView& a, uint32_t a_row, const BlockView& b, uint32_t b_row, int column,
                        const Type& type) {
  switch (type.id()) {
    case TypeId::kBoolean:
      return CompareTyped<uint8_t>(a, a_row, b, b_row, column);
    case TypeId::kInteger:
    case TypeId::kDate:
      return CompareTyped<int32_t>(a, a_row, b, b_row, column);
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
      return CompareTyped<int64_t>(a, a_row, b, b_row, column);
    case TypeId::kDouble:
      return CompareTyped<double>(a, a_row, b, b_row, column);
    case TypeId::kDecimal:
      return type.IsWideDecimal() ? CompareTyped<int128>(a, a_row, b, b_row, column)
                                  : CompareTyped<int64_t>(a, a_row, b, b_row, column);
    case TypeId::kChar:
    case TypeId::kVarchar: {
      int c = a.GetString(column, a_row).compare(b.GetString(column, b_row));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case TypeId::kInterval:
      return a.GetValue(column, a_row, type).Compare(b.GetValue(column, b_row, type));
    case TypeId::kNull:
      return 0;
  }
  return 0;
}

bool SortOperator::Less(const RowRef& x, const RowRef& y) const {
  const std::vector<ColumnSchema>& schema = input_->schema();
  const BlockView& a = blocks_[x.block];
  const BlockView& b = blocks_[y.block];
  for (const SortKey& key : keys_) {
    const bool a_null = a.IsNull(key.column, x.row);
    const bool b_null = b.IsNull(key.column, y.row);
    if (a_null || b_null) {
      if (a_null && b_null) continue;
      return a_null == key.nulls_first;
    }
    const int c = CompareColumnValues(a, x.row, b, y.row, key.column, schema[key.column].type);
    if (c != 0) return key.ascending ? c < 0 : c > 0;
  }
  return false;
}

size_t SortOperator::RowsNeeded(size_t rows) const {
  if (limit_ < 0) return rows;
  return std::min<size_t>(rows, static_cast<size_t>(std::max<int64_t>(0, offset_)) + static_cast<size_t>(limit_));
}

// Sorts the rows of one input block into its run.
class SortOperator::RunWorkOrder : public WorkOrder {
 public:
  RunWorkOrder(SortOperator* op, uint32_t block) : WorkOrder(op->index(), -1), op_(op), block_(block) {}

  absl::Status Execute(const WorkOrderContext&) override {
    const BlockView& block = op_->blocks_[block_];
    const uint32_t rows = block.row_count();
    // The run's row references are the sort's working memory (buffer-pool memory).
    TESSERA_ASSIGN_OR_RETURN(PoolArray<RowRef> run, PoolArray<RowRef>::Allocate(op_->pool_, rows));
    for (uint32_t r = 0; r < rows; ++r) run[r] = RowRef{block_, r};
    const size_t needed = op_->RowsNeeded(rows);
    if (!op_->keys_.empty()) {
      std::vector<SortColumn> columns;
      columns.reserve(op_->keys_.size());
      for (const SortKey& key : op_->keys_) columns.emplace_back(block, key, op_->input_->schema()[key.column].type);
      // Ties go to the earlier row, so the run keeps the input order (also for partial_sort, which is not stable).
      auto less = [&](const RowRef& x, const RowRef& y) {
        for (const SortColumn& column : columns) {
          const int c = column.Compare(x.row, y.row);
          if (c != 0) return c < 0;
        }
        return x.row < y.row;
      };
      if (needed < rows) {
        std::partial_sort(run.begin(), run.begin() + needed, run.end(), less);
      } else {
        std::sort(run.begin(), run.end(), less);
      }
    }
    op_->runs_[block_] = Run{std::move(run), needed};
    rows_in_ = rows;  // the merge reports the rows out
    op_->runs_finished_.fetch_add(1);
    return absl::OkStatus();
  }

 private:
  SortOperator* op_;
  const uint32_t block_;
};

// Merges the sorted runs (a heap of run heads) and writes rows [offset, offset + limit) of the merged order.
class SortOperator::MergeWorkOrder : public WorkOrder {
 public:
  explicit MergeWorkOrder(SortOperator* op) : WorkOrder(op->index(), -1), op_(op) {}

  absl::Status Execute(const WorkOrderContext&) override {
    const std::vector<ColumnSchema>& schema = op_->input_->schema();
    struct Head {
      uint32_t run;
      uint32_t position;
    };
    const auto& runs = op_->runs_;
    // std heaps put the greatest first: "after" orders a head after another when its row sorts later, or ties
    // and comes from a later run (the earlier block wins ties, which keeps the sort stable).
    auto after = [&](const Head& x, const Head& y) {
      const RowRef& a = runs[x.run].rows[x.position];
      const RowRef& b = runs[y.run].rows[y.position];
      if (op_->Less(b, a)) return true;
      if (op_->Less(a, b)) return false;
      return x.run > y.run;
    };
    std::vector<Head> heap;
    size_t total = 0;
    for (uint32_t r = 0; r < runs.size(); ++r) {
      total += runs[r].length;
      if (runs[r].length > 0) heap.push_back(Head{r, 0});
    }
    std::make_heap(heap.begin(), heap.end(), after);
    const size_t begin = std::min<size_t>(total, static_cast<size_t>(std::max<int64_t>(0, op_->offset_)));
    const size_t end = op_->RowsNeeded(total);
    // Output a vector of rows at a time: each column gathered from the rows' blocks, then appended.
    VectorBlockWriter writer(op_->output_.get());
    std::vector<ColumnVector> columns;
    for (const ColumnSchema& column : schema) columns.emplace_back(column.type);
    std::vector<const ColumnVector*> column_pointers;
    for (const ColumnVector& column : columns) column_pointers.push_back(&column);
    std::vector<const BlockView*> row_blocks;
    std::vector<uint32_t> row_numbers;
    row_blocks.reserve(kVectorSize);
    row_numbers.reserve(kVectorSize);
    auto flush = [&]() -> absl::Status {
      const uint32_t count = static_cast<uint32_t>(row_numbers.size());
      if (count == 0) return absl::OkStatus();
      for (size_t c = 0; c < columns.size(); ++c) {
        columns[c].ResetOwned(count);
        GatherBlockValues(row_blocks.data(), row_numbers.data(), count, static_cast<int>(c), &columns[c]);
      }
      row_blocks.clear();
      row_numbers.clear();
      return writer.Append(column_pointers, nullptr, count);
    };
    for (size_t i = 0; i < end && !heap.empty(); ++i) {
      std::pop_heap(heap.begin(), heap.end(), after);
      Head& head = heap.back();
      if (i >= begin) {
        const RowRef& ref = runs[head.run].rows[head.position];
        row_blocks.push_back(&op_->blocks_[ref.block]);
        row_numbers.push_back(ref.row);
        if (row_numbers.size() == kVectorSize) TESSERA_RETURN_IF_ERROR(flush());
      }
      if (++head.position < runs[head.run].length) {
        std::push_heap(heap.begin(), heap.end(), after);
      } else {
        heap.pop_back();
      }
    }
    TESSERA_RETURN_IF_ERROR(flush());
    TESSERA_RETURN_IF_ERROR(writer.Flush());
    rows_out_ = static_cast<int64_t>(end - begin);
    return absl::OkStatus();
  }

 private:
  SortOperator* op_;
};

SortOperator::SortOperator(std::shared_ptr<TemporaryRelation> input, std::vector<SortKey> keys, int64_t limit,
                           int64_t offset, BufferPool* pool)
    : RelationalOperator(keys.empty() ? "Limit" : (limit >= 0 ? "TopK" : "Sort")),
      input_(std::move(input)),
      keys_(std::move(keys)),
      limit_(limit),
      offset_(offset),
      pool_(pool) {
  output_ = std::make_shared<TemporaryRelation>(input_->schema(), pool);
}

void SortOperator::FeedInputBlock(int input, uint32_t block_index) {
  if (InputSatisfied()) return;
  ++blocks_fed_;
  rows_fed_ += input_->block(block_index).row_count();
}

bool SortOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!input_done_ || merge_issued_) return merge_issued_;
  if (!runs_issued_) {
    // The blocks fed (all of the input, or with a satisfied LIMIT those before it was satisfied).
    for (uint32_t b = 0; b < blocks_fed_; ++b) blocks_.push_back(input_->block(b));
    runs_.resize(blocks_.size());
    for (uint32_t b = 0; b < blocks_.size(); ++b) out->push_back(std::make_unique<RunWorkOrder>(this, b));
    runs_issued_ = true;
  }
  if (runs_finished_.load() < runs_.size()) return false;
  out->push_back(std::make_unique<MergeWorkOrder>(this));
  merge_issued_ = true;
  return true;
}

void SortOperator::OnAllWorkOrdersFinished() { std::vector<Run>().swap(runs_); }

SortOperator::~SortOperator() = default;

}  // namespace tessera
