#include "relational_operators/block_scanner.h"

#include <algorithm>
#include <numeric>

#include "relational_operators/key_hashing.h"

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

BlockScanner::BlockScanner(const ScanSpec& spec)
    : spec_(spec), has_filter_(spec.filter != nullptr || !spec.runtime_filters.empty()) {
  if (spec.filter != nullptr) filter_ = std::make_unique<ExpressionEvaluator>(*spec.filter);
  selection_.rows.resize(kVectorSize);
  for (size_t i = 0; i < spec.block_columns.size(); ++i) {
    if (spec.block_columns[i] == kRowIdBlockColumn) {
      row_id_column_ = static_cast<int>(i);
      continue;
    }
    load_columns_.push_back(spec.block_columns[i]);
    load_types_.push_back(spec.types[i]);
    load_targets_.push_back(static_cast<int>(i));
  }
  const size_t filters = spec.runtime_filters.size();
  if (filters == 0) return;
  scratch_.rows.resize(kVectorSize);
  rows_in_.assign(filters, 0);
  rows_out_.assign(filters, 0);
  // The observed pass rate of each filter so far; filters not yet measured count as passing half their rows.
  std::vector<double> pass_rate(filters);
  for (size_t f = 0; f < filters; ++f) {
    const RuntimeFilterCounters& counters = *spec.runtime_filters[f].counters;
    const int64_t in = counters.rows_in.load(std::memory_order_relaxed);
    pass_rate[f] = in > 0 ? static_cast<double>(counters.rows_out.load(std::memory_order_relaxed)) / in : 0.5;
    if (spec.runtime_filters[f].filter->expands_rows()) expanding_filters_.push_back(static_cast<int>(f));
  }
  filter_order_.resize(filters);
  std::iota(filter_order_.begin(), filter_order_.end(), 0);
  std::stable_sort(filter_order_.begin(), filter_order_.end(),
                   [&](int a, int b) { return pass_rate[a] < pass_rate[b]; });
  if (spec.filter != nullptr) {
    for (int f : filter_order_) {
      if (spec.runtime_filters[f].filter->probes_before_scan_filter()) early_filter_order_.push_back(f);
    }
    std::erase_if(filter_order_,
                  [&](int f) { return spec.runtime_filters[f].filter->probes_before_scan_filter(); });
  }
  size_t max_keys = 0;
  for (const RuntimeFilterProbe& probe : spec.runtime_filters) max_keys = std::max(max_keys, probe.key_columns.size());
  keys_.reserve(max_keys);
}

BlockScanner::~BlockScanner() {
  for (size_t f = 0; f < rows_in_.size(); ++f) {
    if (rows_in_[f] == 0) continue;
    RuntimeFilterCounters& counters = *spec_.runtime_filters[f].counters;
    counters.rows_in.fetch_add(rows_in_[f], std::memory_order_relaxed);
    counters.rows_out.fetch_add(rows_out_[f], std::memory_order_relaxed);
  }
}

bool BlockScanner::CanSkip(const BlockView& block) const {
  for (const ScanSpec::RangeTerm& term : spec_.range_terms) {
    const int column = spec_.block_columns[term.batch_column];
    if (column == kRowIdBlockColumn) continue;
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
  if (expanding_ && NextExpandedChunk()) return true;
  const uint32_t rows = block.row_count();
  if (next_row_ >= rows) return false;
  const uint32_t count = std::min(kVectorSize, rows - next_row_);
  LoadBatch(block, next_row_, count);
  const SelectionVector* in = nullptr;
  masked_ = deleted_ != nullptr && deleted_->AnyDeleted(next_row_, count);
  if (masked_) {
    uint32_t live = 0;
    for (uint32_t r = 0; r < count; ++r) {
      selection_.rows[live] = r;
      live += !deleted_->IsDeleted(next_row_ + r);
    }
    selection_.count = live;
    in = &selection_;
  }
  next_row_ += count;
  if (!early_filter_order_.empty()) {
    ApplyRuntimeFilters(early_filter_order_, in);
    in = &selection_;
  }
  if (filter_ != nullptr) {
    absl::Status status = in != nullptr && in->count == 0 ? absl::OkStatus() : filter_->Filter(batch_, in, &selection_);
    if (!status.ok()) return status;
    in = &selection_;
  }
  if (!filter_order_.empty()) ApplyRuntimeFilters(filter_order_, in);
  if (!expanding_filters_.empty()) {
    StartExpansion();
    if (expanding_ && NextExpandedChunk()) return true;
  }
  return true;
}

void BlockScanner::LoadBatch(const BlockView& block, uint32_t first, uint32_t count) {
  if (row_id_column_ < 0) {
    LoadBatchFromBlock(block, spec_.types, spec_.block_columns, first, count, &batch_);
    return;
  }
  LoadBatchFromBlock(block, load_types_, load_columns_, first, count, &loaded_);
  batch_.columns.resize(spec_.block_columns.size());
  batch_.size = count;
  for (size_t i = 0; i < load_targets_.size(); ++i) std::swap(batch_.columns[load_targets_[i]], loaded_.columns[i]);
  ColumnVector& row_ids = batch_.columns[row_id_column_];
  row_ids.set_type(Type::BigInt());
  row_ids.ResetOwned(count);
  int64_t* values = row_ids.mutable_values<int64_t>();
  for (uint32_t r = 0; r < count; ++r) values[r] = static_cast<int64_t>(MakeRowId(block_ordinal_, first + r));
}

void BlockScanner::ApplyRuntimeFilters(const std::vector<int>& order, const SelectionVector* in) {
  uint32_t count = in != nullptr ? in->count : batch_.size;
  if (in == nullptr && count == 0) selection_.count = 0;
  for (int f : order) {
    if (count == 0) break;
    const RuntimeFilterProbe& probe = spec_.runtime_filters[f];
    keys_.clear();
    for (int column : probe.key_columns) keys_.push_back(&batch_.columns[column]);
    if (probe.member) {
      probe.filter->KeepMembers(keys_, in, batch_.size, &scratch_);
    } else {
      probe.filter->KeepNonMembers(keys_, in, batch_.size, &scratch_);
    }
    rows_in_[f] += count;
    rows_out_[f] += scratch_.count;
    std::swap(selection_, scratch_);
    in = &selection_;
    count = selection_.count;
  }
}

void BlockScanner::StartExpansion() {
  expansion_rows_.clear();
  expansion_next_ = 0;
  bool repeated = false;
  for (uint32_t s = 0; s < selection_.count; ++s) {
    const uint32_t row = selection_.rows[s];
    uint32_t multiplicity = 1;
    for (int f : expanding_filters_) {
      const RuntimeFilterProbe& probe = spec_.runtime_filters[f];
      keys_.clear();
      for (int column : probe.key_columns) keys_.push_back(&batch_.columns[column]);
      multiplicity *= probe.filter->Multiplicity(keys_, row);
    }
    repeated |= multiplicity > 1;
    expansion_rows_.insert(expansion_rows_.end(), multiplicity, row);
  }
  expanding_ = repeated;
}

bool BlockScanner::NextExpandedChunk() {
  if (expansion_next_ >= expansion_rows_.size()) {
    expanding_ = false;
    return false;
  }
  const uint32_t count =
      static_cast<uint32_t>(std::min<size_t>(kVectorSize, expansion_rows_.size() - expansion_next_));
  expanded_.columns.resize(batch_.columns.size());
  for (size_t c = 0; c < batch_.columns.size(); ++c) {
    expanded_.columns[c].set_type(batch_.columns[c].type());
    expanded_.columns[c].ResetOwned(count);
    GatherVectorValues(batch_.columns[c], expansion_rows_.data() + expansion_next_, count, &expanded_.columns[c]);
  }
  expanded_.size = count;
  expansion_next_ += count;
  return true;
}

}  // namespace tessera
