#include "relational_operators/block_scanner.h"

namespace tessera {
namespace {

void CollectRangeTerms(const BoundExpression& expr, std::vector<ScanSpec::RangeTerm>* terms) {
  if (expr.kind == ExpressionKind::kAnd) {
    for (const auto& child : expr.children) CollectRangeTerms(*child, terms);
    return;
  }
  if (expr.kind != ExpressionKind::kComparison || expr.children.size() != 2) return;
  const BoundExpression& left = *expr.children[0];
  const BoundExpression& right = *expr.children[1];
  auto flip = [](ComparisonOp op) {
    switch (op) {
      case ComparisonOp::kLess: return ComparisonOp::kGreater;
      case ComparisonOp::kLessEqual: return ComparisonOp::kGreaterEqual;
      case ComparisonOp::kGreater: return ComparisonOp::kLess;
      case ComparisonOp::kGreaterEqual: return ComparisonOp::kLessEqual;
      default: return op;
    }
  };
  if (left.kind == ExpressionKind::kColumn && right.kind == ExpressionKind::kConstant && !right.constant.is_null()) {
    terms->push_back({left.column_index, expr.comparison, right.constant});
  } else if (right.kind == ExpressionKind::kColumn && left.kind == ExpressionKind::kConstant &&
             !left.constant.is_null()) {
    terms->push_back({right.column_index, flip(expr.comparison), left.constant});
  }
}

}  // namespace

void ScanSpec::Prepare() {
  range_terms.clear();
  if (filter != nullptr) CollectRangeTerms(*filter, &range_terms);
}

BlockScanner::BlockScanner(const ScanSpec& spec) : spec_(spec), has_filter_(spec.filter != nullptr) {
  if (has_filter_) filter_ = std::make_unique<ExpressionEvaluator>(*spec.filter);
  selection_.rows.resize(kVectorSize);
}

bool BlockScanner::CanSkip(const BlockView& block) const {
  for (const ScanSpec::RangeTerm& term : spec_.range_terms) {
    const int column = spec_.block_columns[term.batch_column];
    const Type& type = spec_.types[term.batch_column];
    if (!block.chunk(column).has_zone_map) {
      if (block.NullCount(column) == block.row_count()) return true;  // all NULL: no comparison is true
      continue;
    }
    if (type.id() == TypeId::kInterval) continue;
    const int vs_min = term.constant.Compare(block.ZoneMin(column, type));
    const int vs_max = term.constant.Compare(block.ZoneMax(column, type));
    switch (term.op) {
      case ComparisonOp::kEqual:
        if (vs_min < 0 || vs_max > 0) return true;
        break;
      case ComparisonOp::kLess:  // column < c: impossible if min >= c
        if (vs_min <= 0) return true;
        break;
      case ComparisonOp::kLessEqual:
        if (vs_min < 0) return true;
        break;
      case ComparisonOp::kGreater:  // column > c: impossible if max <= c
        if (vs_max >= 0) return true;
        break;
      case ComparisonOp::kGreaterEqual:
        if (vs_max > 0) return true;
        break;
      case ComparisonOp::kNotEqual: break;
    }
  }
  return false;
}

absl::StatusOr<bool> BlockScanner::Next(const BlockView& block) {
  const uint32_t rows = block.row_count();
  if (next_row_ >= rows) return false;
  const uint32_t count = std::min(kVectorSize, rows - next_row_);
  LoadBatchFromBlock(block, spec_.types, spec_.block_columns, next_row_, count, &batch_);
  next_row_ += count;
  if (has_filter_) {
    absl::Status status = filter_->Filter(batch_, nullptr, &selection_);
    if (!status.ok()) return status;
  }
  return true;
}

}  // namespace tessera
