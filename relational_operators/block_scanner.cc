#include "relational_operators/block_scanner.h"

#include <algorithm>
#include <numeric>

#include "common/status_macros.h"
#include "relational_operators/key_hashing.h"
#include "storage/column_encoding.h"

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

// The batch column of a conjunct that reads one string column alone and is false (or NULL) on NULL; -1 otherwise.
int DictionaryTermColumn(const BoundExpression& expr, const std::vector<Type>& types) {
  auto string_column = [&](const BoundExpression& e) {
    return e.kind == ExpressionKind::kColumn && types[e.column_index].IsString() ? e.column_index : -1;
  };
  switch (expr.kind) {
    case ExpressionKind::kComparison: {
      const BoundExpression& left = *expr.children[0];
      const BoundExpression& right = *expr.children[1];
      if (right.kind == ExpressionKind::kConstant) return string_column(left);
      if (left.kind == ExpressionKind::kConstant) return string_column(right);
      return -1;
    }
    case ExpressionKind::kInList:
    case ExpressionKind::kLike:
      for (size_t i = 1; i < expr.children.size(); ++i) {
        if (expr.children[i]->kind != ExpressionKind::kConstant) return -1;
      }
      return string_column(*expr.children[0]);
    default: return -1;
  }
}

void CollectColumns(const BoundExpression& expr, std::vector<bool>* read) {
  if (expr.kind == ExpressionKind::kColumn) (*read)[expr.column_index] = true;
  for (const auto& child : expr.children) CollectColumns(*child, read);
}

}  // namespace

void ScanSpec::Prepare() {
  range_terms.clear();
  dictionary_terms.clear();
  residual_filter = nullptr;
  if (filter == nullptr) return;
  CollectRangeTerms(*filter, &range_terms);
  std::vector<const BoundExpression*> conjuncts;
  if (filter->kind == ExpressionKind::kAnd) {
    for (const auto& child : filter->children) conjuncts.push_back(child.get());
  } else {
    conjuncts.push_back(filter.get());
  }
  std::vector<std::unique_ptr<BoundExpression>> residual;
  for (const BoundExpression* conjunct : conjuncts) {
    const int column = DictionaryTermColumn(*conjunct, types);
    if (column >= 0) {
      dictionary_terms.push_back({column, conjunct->Clone()});
    } else {
      residual.push_back(conjunct->Clone());
    }
  }
  if (dictionary_terms.empty()) return;
  if (!residual.empty()) residual_filter = MakeConjunction(ExpressionKind::kAnd, std::move(residual));
}

namespace {

// Whether scanners should leave out runtime filter `probe` (BlockScanner::kUselessFilterPassRate).
bool UselessFilter(const RuntimeFilterProbe& probe) {
  if (!probe.optional) return false;
  const int64_t in = probe.counters->rows_in.load(std::memory_order_relaxed);
  return in >= BlockScanner::kRowsToJudgeAFilter &&
         static_cast<double>(probe.counters->rows_out.load(std::memory_order_relaxed)) >=
             BlockScanner::kUselessFilterPassRate * static_cast<double>(in);
}

}  // namespace

BlockScanner::BlockScanner(const ScanSpec& spec) : spec_(spec) {
  // The runtime filters this scanner applies.
  std::vector<int> applied;
  for (size_t f = 0; f < spec.runtime_filters.size(); ++f) {
    if (!UselessFilter(spec.runtime_filters[f])) applied.push_back(static_cast<int>(f));
  }
  has_filter_ = spec.filter != nullptr || !applied.empty();
  if (!spec.dictionary_terms.empty()) {
    for (const ScanSpec::DictionaryTerm& term : spec.dictionary_terms) {
      term_filters_.push_back(std::make_unique<ExpressionEvaluator>(*term.predicate));
    }
    if (spec.residual_filter != nullptr) residual_filter_ = std::make_unique<ExpressionEvaluator>(*spec.residual_filter);
    code_matches_.resize(spec.dictionary_terms.size());
    dictionary_selection_.rows.resize(kVectorSize);
    codes_.resize(kVectorSize);
  } else if (spec.filter != nullptr) {
    filter_ = std::make_unique<ExpressionEvaluator>(*spec.filter);
  }
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
  // Late loading (not with a row-id column, which LoadBatch makes): what only the consumer reads is decoded for
  // vectors where some row passes.
  if (has_filter_ && row_id_column_ < 0) {
    std::vector<bool> read(spec.types.size(), false);
    if (spec.filter != nullptr) CollectColumns(*spec.filter, &read);
    for (int f : applied) {
      for (int column : spec.runtime_filters[f].key_columns) read[column] = true;
    }
    for (size_t c = 0; c < read.size(); ++c) (read[c] ? filter_columns_ : late_columns_).push_back(static_cast<int>(c));
    if (late_columns_.empty()) filter_columns_.clear();
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
  // An optional filter (a LIP filter) that has let almost every row through so far costs a probe per row and
  // saves its join next to nothing (SSB Q2.x's filter over an unfiltered date dimension passes 100%): left out.
  filter_order_ = applied;
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
  const uint32_t first_row = next_row_;
  if (late_columns_.empty()) {
    LoadBatch(block, first_row, count);
  } else {
    batch_.columns.resize(spec_.types.size());
    batch_.size = count;
    for (int c : filter_columns_) {
      LoadBatchColumn(block, spec_.types[c], spec_.block_columns[c], first_row, count, &batch_.columns[c]);
    }
  }
  const SelectionVector* in = nullptr;
  masked_ = deleted_ != nullptr && deleted_->AnyDeleted(first_row, count);
  if (masked_) {
    selection_.count = deleted_->LiveRows(first_row, count, selection_.rows.data());
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
  } else if (!term_filters_.empty()) {
    absl::Status status = ApplySplitFilter(block, first_row, in);
    if (!status.ok()) return status;
    in = &selection_;
  }
  if (!filter_order_.empty()) ApplyRuntimeFilters(filter_order_, in);
  if (!late_columns_.empty() && selection_.count > 0) {
    for (int c : late_columns_) {
      LoadBatchColumn(block, spec_.types[c], spec_.block_columns[c], first_row, count, &batch_.columns[c]);
    }
  }
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

absl::Status BlockScanner::MatchDictionaries(const BlockView& block) {
  matched_block_ = block.data();
  for (size_t t = 0; t < term_filters_.size(); ++t) {
    std::vector<uint8_t>& matches = code_matches_[t];
    matches.clear();
    const int batch_column = spec_.dictionary_terms[t].batch_column;
    const int column = spec_.block_columns[batch_column];
    if (block.encoding(column) != ColumnEncoding::kDictionary) continue;
    const StringDictionary dictionary = block.Dictionary(column);
    matches.assign(dictionary.size(), 0);
    dictionary_batch_.columns.resize(spec_.types.size());
    ColumnVector& entries = dictionary_batch_.columns[batch_column];
    entries.set_type(spec_.types[batch_column]);
    for (uint32_t first = 0; first < dictionary.size(); first += kVectorSize) {
      const uint32_t count = std::min(kVectorSize, dictionary.size() - first);
      entries.ResetOwned(count);
      std::string_view* strings = entries.mutable_strings();
      for (uint32_t i = 0; i < count; ++i) strings[i] = dictionary[first + i];
      dictionary_batch_.size = count;
      TESSERA_RETURN_IF_ERROR(term_filters_[t]->Filter(dictionary_batch_, nullptr, &dictionary_selection_));
      for (uint32_t s = 0; s < dictionary_selection_.count; ++s) matches[first + dictionary_selection_.rows[s]] = 1;
    }
  }
  return absl::OkStatus();
}

absl::Status BlockScanner::ApplySplitFilter(const BlockView& block, uint32_t first_row, const SelectionVector* in) {
  if (matched_block_ != block.data()) TESSERA_RETURN_IF_ERROR(MatchDictionaries(block));
  for (size_t t = 0; t < term_filters_.size(); ++t) {
    if (in != nullptr && in->count == 0) break;
    if (code_matches_[t].empty()) {
      TESSERA_RETURN_IF_ERROR(term_filters_[t]->Filter(batch_, in, &selection_));
      in = &selection_;
      continue;
    }
    // On codes: a row passes if it is not NULL and its code passed (NULL rows hold code 0, which may pass).
    const int column = spec_.block_columns[spec_.dictionary_terms[t].batch_column];
    const ColumnChunk& chunk = block.chunk(column);
    UnpackCodes<uint32_t>(block.data() + chunk.values_offset, chunk.bit_width, 0, first_row, batch_.size,
                          codes_.data());
    const uint8_t* matches = code_matches_[t].data();
    const uint8_t* validity = block.Validity(column);
    const uint32_t* codes = codes_.data();
    uint32_t* out = selection_.rows.data();
    uint32_t kept = 0;
    const uint32_t count = in != nullptr ? in->count : batch_.size;
    for (uint32_t s = 0; s < count; ++s) {  // in place when `in` is selection_: kept never passes s
      const uint32_t row = in != nullptr ? in->rows[s] : s;
      out[kept] = row;
      kept += matches[codes[row]] & (validity == nullptr || GetBit(validity, first_row + row));
    }
    selection_.count = kept;
    in = &selection_;
  }
  // selection_ holds the result: the first term wrote it, or `in` was selection_ already.
  if (residual_filter_ != nullptr && in->count > 0) TESSERA_RETURN_IF_ERROR(residual_filter_->Filter(batch_, in, &selection_));
  return absl::OkStatus();
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
