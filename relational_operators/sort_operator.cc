#include "relational_operators/sort_operator.h"

#include <algorithm>

#include "common/status_macros.h"
#include "storage/block_builder.h"

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
    case TypeId::kBoolean: return CompareTyped<uint8_t>(a, a_row, b, b_row, column);
    case TypeId::kInteger:
    case TypeId::kDate: return CompareTyped<int32_t>(a, a_row, b, b_row, column);
    case TypeId::kBigInt:
    case TypeId::kTimestamp: return CompareTyped<int64_t>(a, a_row, b, b_row, column);
    case TypeId::kDouble: return CompareTyped<double>(a, a_row, b, b_row, column);
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
    case TypeId::kNull: return 0;
  }
  return 0;
}

class SortOperator::SortWorkOrder : public WorkOrder {
 public:
  explicit SortWorkOrder(SortOperator* op) : WorkOrder(op->index(), -1), op_(op) {}

  absl::Status Execute(const WorkOrderContext& context) override {
    const TemporaryRelation& input = *op_->input_;
    const std::vector<ColumnSchema>& schema = input.schema();
    std::vector<BlockView> blocks;
    struct RowRef {
      uint32_t block;
      uint32_t row;
    };
    std::vector<RowRef> rows;
    for (uint32_t b = 0; b < input.block_count(); ++b) {
      blocks.push_back(input.block(b));
      for (uint32_t r = 0; r < blocks.back().row_count(); ++r) rows.push_back(RowRef{b, r});
    }
    rows_in_ = static_cast<int64_t>(rows.size());
    auto less = [&](const RowRef& x, const RowRef& y) {
      for (const SortKey& key : op_->keys_) {
        const BlockView& a = blocks[x.block];
        const BlockView& b = blocks[y.block];
        bool a_null = a.IsNull(key.column, x.row), b_null = b.IsNull(key.column, y.row);
        if (a_null || b_null) {
          if (a_null && b_null) continue;
          return a_null == key.nulls_first;
        }
        int c = CompareColumnValues(a, x.row, b, y.row, key.column, schema[key.column].type);
        if (c != 0) return key.ascending ? c < 0 : c > 0;
      }
      return false;
    };
    size_t begin = std::min<size_t>(rows.size(), static_cast<size_t>(std::max<int64_t>(0, op_->offset_)));
    size_t end = op_->limit_ < 0 ? rows.size() : std::min<size_t>(rows.size(), begin + op_->limit_);
    if (end < rows.size()) {
      std::partial_sort(rows.begin(), rows.begin() + end, rows.end(), less);
    } else {
      std::stable_sort(rows.begin(), rows.end(), less);
    }
    BlockBuilder builder(schema, op_->output_->block_size_bytes());
    std::vector<Value> row(schema.size());
    for (size_t i = begin; i < end; ++i) {
      const BlockView& block = blocks[rows[i].block];
      for (size_t c = 0; c < schema.size(); ++c) {
        row[c] = block.GetValue(static_cast<int>(c), rows[i].row, schema[c].type);
      }
      TESSERA_RETURN_IF_ERROR(op_->output_->AppendValueRow(builder, row));
    }
    if (!builder.empty()) TESSERA_RETURN_IF_ERROR(op_->output_->AppendBlock(builder).status());
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
      offset_(offset) {
  output_ = std::make_shared<TemporaryRelation>(input_->schema(), pool);
}

bool SortOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!input_done_) return false;
  if (!issued_) {
    out->push_back(std::make_unique<SortWorkOrder>(this));
    issued_ = true;
  }
  return true;
}

}  // namespace tessera
