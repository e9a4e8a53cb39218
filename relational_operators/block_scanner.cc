#include "relational_operators/block_scanner.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "common/status_macros.h"
#include "glog/logging.h"
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
  if (left.kind == ExpressionKind::kColumn && right.kind == ExpressionKind::kConstant && !right.constant.is_null()) {
    terms->push_back({left.column_index, expr.comparison, right.constant});
  } else if (right.kind == ExpressionKind::kColumn && left.kind == ExpressionKind::kConstant &&
             !left.constant.is_null()) {
    terms->push_back({right.column_index, FlipComparison(expr.comparison), left.constant});
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
    default:
      return -1;
  }
}

template <typename T>
T ReadRaw(const uint8_t* raw) {
  T value;
  std::memcpy(&value, raw, sizeof(T));
  return value;
}

constexpr int128 kInt128Max = static_cast<int128>(~static_cast<unsigned __int128>(0) >> 1);
constexpr int128 kInt128Min = -kInt128Max - 1;

// Whether frame of reference may code `type` (storage/column_encoding.h): the exactly ordered fixed-width types.
bool IsIntegerCoded(const Type& type) {
  switch (type.id()) {
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kDecimal:
    case TypeId::kDate:
    case TypeId::kTimestamp:
      return true;
    default:
      return false;
  }
}

// `constant` in the unscaled representation of `type` (an IsIntegerCoded type) as the bounds of the values v with
// v == constant: [floor, ceil] of constant * 10^scale(type) / 10^scale(constant); false when the constant is
// of another family or the scaling does not fit.
bool ScaledBounds(const Value& constant, const Type& type, int128* floor, int128* ceil) {
  if (constant.is_null()) return false;
  const TypeId id = constant.type().id();
  const bool exact_numeric = id == TypeId::kInteger || id == TypeId::kBigInt || id == TypeId::kDecimal;
  const bool column_numeric = type.id() != TypeId::kDate && type.id() != TypeId::kTimestamp;
  if (column_numeric ? !exact_numeric : id != type.id()) return false;
  const int column_scale = type.id() == TypeId::kDecimal ? type.scale() : 0;
  const int constant_scale = id == TypeId::kDecimal ? constant.type().scale() : 0;
  const int shift = column_scale - constant_scale;
  if (shift > 18 || shift < -18) return false;
  int128 factor = 1;
  for (int i = 0; i < (shift < 0 ? -shift : shift); ++i) factor *= 10;
  const int128 value = constant.AsInt128();
  if (shift >= 0) {
    if (__builtin_mul_overflow(value, factor, floor)) return false;
    *ceil = *floor;
    return true;
  }
  *floor = value / factor - (value % factor < 0 ? 1 : 0);
  *ceil = *floor + (value % factor != 0 ? 1 : 0);
  return true;
}

// Narrows [*low, *high] to the values of an IsIntegerCoded column that pass `conjunct` (column op constant, either
// side) and returns its batch column; -1 when the conjunct is not such a comparison.
int NarrowIntegerRange(const BoundExpression& conjunct, const std::vector<Type>& types, int128* low, int128* high) {
  if (conjunct.kind != ExpressionKind::kComparison || conjunct.children.size() != 2) return -1;
  const BoundExpression* column = conjunct.children[0].get();
  const BoundExpression* constant = conjunct.children[1].get();
  ComparisonOp op = conjunct.comparison;
  if (column->kind == ExpressionKind::kConstant) {
    std::swap(column, constant);
    op = FlipComparison(op);
  }
  if (column->kind != ExpressionKind::kColumn || constant->kind != ExpressionKind::kConstant) return -1;
  if (op == ComparisonOp::kNotEqual || !IsIntegerCoded(types[column->column_index])) return -1;
  int128 floor = 0;
  int128 ceil = 0;
  if (!ScaledBounds(constant->constant, types[column->column_index], &floor, &ceil)) return -1;
  int128 from = kInt128Min;
  int128 to = kInt128Max;
  switch (op) {
    case ComparisonOp::kEqual:  // no value equals a constant between two representable ones
      if (floor == ceil) {
        from = to = floor;
      } else {
        from = 1;
        to = 0;
      }
      break;
    case ComparisonOp::kLess:
      to = ceil - 1;
      break;
    case ComparisonOp::kLessEqual:
      to = floor;
      break;
    case ComparisonOp::kGreater:
      from = floor + 1;
      break;
    case ComparisonOp::kGreaterEqual:
      from = ceil;
      break;
    case ComparisonOp::kNotEqual:
      return -1;
  }
  *low = std::max(*low, from);
  *high = std::min(*high, to);
  return column->column_index;
}

// An IN list of constants on an IsIntegerCoded column as a set of its values; -1 when `conjunct` is not one.
int IntegerMembers(const BoundExpression& conjunct, const std::vector<Type>& types, std::vector<int128>* members) {
  if (conjunct.kind != ExpressionKind::kInList || conjunct.negated) return -1;
  const BoundExpression& column = *conjunct.children[0];
  if (column.kind != ExpressionKind::kColumn || !IsIntegerCoded(types[column.column_index])) return -1;
  members->clear();
  for (size_t i = 1; i < conjunct.children.size(); ++i) {
    const BoundExpression& item = *conjunct.children[i];
    if (item.kind != ExpressionKind::kConstant) return -1;
    if (item.constant.is_null()) continue;  // x IN (..., NULL) is never TRUE through the NULL
    int128 floor = 0;
    int128 ceil = 0;
    if (!ScaledBounds(item.constant, types[column.column_index], &floor, &ceil)) return -1;
    if (floor == ceil) members->push_back(floor);
  }
  std::sort(members->begin(), members->end());
  members->erase(std::unique(members->begin(), members->end()), members->end());
  return column.column_index;
}

void CollectColumns(const BoundExpression& expr, std::vector<bool>* read) {
  if (expr.kind == ExpressionKind::kColumn) (*read)[expr.column_index] = true;
  for (const auto& child : expr.children) CollectColumns(*child, read);
}

}  // namespace

void ScanSpec::Prepare() {
  range_terms.clear();
  dictionary_terms.clear();
  integer_terms.clear();
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
  std::vector<std::vector<std::unique_ptr<BoundExpression>>> range_conjuncts;  // per integer_terms entry
  for (const BoundExpression* conjunct : conjuncts) {
    const int column = DictionaryTermColumn(*conjunct, types);
    if (column >= 0) {
      dictionary_terms.push_back({column, conjunct->Clone()});
      continue;
    }
    // One range per column: BETWEEN's two comparisons (and any others on the column) merge.
    auto merge_range = [&](int column, int128 low, int128 high) {
      auto same = std::find_if(integer_terms.begin(), integer_terms.end(), [&](const IntegerTerm& term) {
        return term.batch_column == column && term.members.empty();
      });
      if (same == integer_terms.end()) {
        integer_terms.push_back({column, low, high, {}, nullptr});
        range_conjuncts.emplace_back();
        same = integer_terms.end() - 1;
      }
      same->low = std::max(same->low, low);
      same->high = std::min(same->high, high);
      range_conjuncts[same - integer_terms.begin()].push_back(conjunct->Clone());
    };
    int128 low = kInt128Min;
    int128 high = kInt128Max;
    const int range_column = NarrowIntegerRange(*conjunct, types, &low, &high);
    if (range_column >= 0) {
      merge_range(range_column, low, high);
      continue;
    }
    std::vector<int128> members;
    const int set_column = IntegerMembers(*conjunct, types, &members);
    if (set_column >= 0 && members.empty()) {
      merge_range(set_column, 1, 0);  // no value can be in the list (only NULLs, or values between steps)
      continue;
    }
    if (set_column >= 0) {
      integer_terms.push_back({set_column, kInt128Min, kInt128Max, std::move(members), nullptr});
      range_conjuncts.emplace_back();
      range_conjuncts.back().push_back(conjunct->Clone());
      continue;
    }
    residual.push_back(conjunct->Clone());
  }
  for (size_t t = 0; t < integer_terms.size(); ++t) {
    integer_terms[t].predicate = MakeConjunction(ExpressionKind::kAnd, std::move(range_conjuncts[t]));
  }
  if (dictionary_terms.empty() && integer_terms.empty()) return;
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
  // The runtime filters this scanner applies: an optional filter (a LIP filter) that has let almost every row
  // through so far costs a probe per row and saves its join next to nothing (SSB Q2.x's filter over an unfiltered
  // date dimension passes 100%): left out.
  std::vector<int> applied;
  for (size_t f = 0; f < spec.runtime_filters.size(); ++f) {
    if (!UselessFilter(spec.runtime_filters[f])) applied.push_back(static_cast<int>(f));
  }
  has_filter_ = spec.filter != nullptr || !applied.empty();
  const bool split = !spec.dictionary_terms.empty() || !spec.integer_terms.empty();
  if (split) {
    for (const ScanSpec::DictionaryTerm& term : spec.dictionary_terms) {
      term_filters_.push_back(std::make_unique<ExpressionEvaluator>(*term.predicate));
    }
    integer_filters_.resize(spec.integer_terms.size());  // made for the first block where a column is plain
    if (spec.residual_filter != nullptr)
      residual_filter_ = std::make_unique<ExpressionEvaluator>(*spec.residual_filter);
    code_matches_.resize(spec.dictionary_terms.size());
    code_ranges_.resize(spec.integer_terms.size());
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
  const size_t filters = spec.runtime_filters.size();
  if (filters > 0) {
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
    filter_order_ = applied;
    std::stable_sort(filter_order_.begin(), filter_order_.end(),
                     [&](int a, int b) { return pass_rate[a] < pass_rate[b]; });
    if (spec.filter != nullptr) {
      for (int f : filter_order_) {
        if (spec.runtime_filters[f].filter->probes_before_scan_filter()) early_filter_order_.push_back(f);
      }
      std::erase_if(filter_order_, [&](int f) { return spec.runtime_filters[f].filter->probes_before_scan_filter(); });
    }
    size_t max_keys = 0;
    for (const RuntimeFilterProbe& probe : spec.runtime_filters)
      max_keys = std::max(max_keys, probe.key_columns.size());
    keys_.reserve(max_keys);
  }
  // Staged loading (not with a row-id column, which LoadBatch makes with every other column): a column is loaded
  // just before the first filter that reads it (the integer and dictionary terms' columns only in blocks where
  // they are not coded), and what no filter read after the last one.
  if (has_filter_ && row_id_column_ < 0) {
    staged_ = true;
    const size_t columns = spec.types.size();
    std::vector<bool> filter_read(columns, false);
    const BoundExpression* filter = split ? spec.residual_filter.get() : spec.filter.get();
    if (filter != nullptr) CollectColumns(*filter, &filter_read);
    for (size_t c = 0; c < columns; ++c) {
      if (filter_read[c]) filter_columns_.push_back(static_cast<int>(c));
    }
    all_columns_.resize(columns);
    std::iota(all_columns_.begin(), all_columns_.end(), 0);
    loaded_columns_.assign(columns, 0);
    fuse_code_filters_ = filter_ == nullptr && !code_ranges_.empty() &&
                         code_ranges_.size() <= static_cast<size_t>(kMaxFusedRangeTests) &&
                         early_filter_order_.size() <= 1;
  }
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
      case ComparisonOp::kNotEqual:
        break;
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
  if (staged_) {
    batch_.columns.resize(spec_.types.size());
    batch_.size = count;
    std::fill(loaded_columns_.begin(), loaded_columns_.end(), 0);
  } else {
    LoadBatch(block, first_row, count);
  }
  const SelectionVector* in = nullptr;
  masked_ = deleted_ != nullptr && deleted_->AnyDeleted(first_row, count);
  if (masked_) {
    selection_.count = deleted_->LiveRows(first_row, count, selection_.rows.data());
    in = &selection_;
  }
  next_row_ += count;
  bool fused = false;
  if (in == nullptr && fuse_code_filters_) {
    absl::StatusOr<bool> done = FuseCodeFilters(block, first_row);
    if (!done.ok()) return done.status();
    fused = *done;
    if (fused) in = &selection_;
  }
  if (!fused && !early_filter_order_.empty()) {
    ApplyRuntimeFilters(block, first_row, early_filter_order_, in);
    in = &selection_;
  }
  if (filter_ != nullptr) {
    if (in == nullptr || in->count > 0) {
      LoadColumns(block, filter_columns_, first_row, in);
      absl::Status status = filter_->Filter(batch_, in, &selection_);
      if (!status.ok()) return status;
    }
    in = &selection_;
  } else if (!term_filters_.empty() || !code_ranges_.empty()) {
    absl::Status status = ApplySplitFilter(block, first_row, in, /*integer_terms_applied=*/fused);
    if (!status.ok()) return status;
    in = &selection_;
  }
  if (!filter_order_.empty()) {
    ApplyRuntimeFilters(block, first_row, filter_order_, in);
    in = &selection_;
  }
  if (staged_) LoadColumns(block, all_columns_, first_row, in);
  if (!expanding_filters_.empty()) {
    StartExpansion();
    if (expanding_ && NextExpandedChunk()) return true;
  }
  return true;
}

void BlockScanner::LoadColumn(const BlockView& block, int c, uint32_t first_row, const SelectionVector* in) {
  if (!staged_ || loaded_columns_[c]) return;  // unstaged: LoadBatch loaded every column
  loaded_columns_[c] = 1;
  // Below one selected row in 16, decoding the selected rows one by one beats unpacking the vector.
  constexpr uint32_t kSparseRows = 16;
  const int column = spec_.block_columns[c];
  if (in != nullptr && in->count * kSparseRows < batch_.size) {
    LoadBatchColumnRows(block, spec_.types[c], column, first_row, batch_.size, in->rows.data(), in->count,
                        &batch_.columns[c]);
  } else {
    LoadBatchColumn(block, spec_.types[c], column, first_row, batch_.size, &batch_.columns[c]);
  }
}

void BlockScanner::LoadColumns(const BlockView& block, const std::vector<int>& columns, uint32_t first_row,
                               const SelectionVector* in) {
  if (in != nullptr && in->count == 0) return;  // no row to load: the columns hold no rows of this vector
  for (int c : columns) LoadColumn(block, c, first_row, in);
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

void BlockScanner::TranslateIntegerTerms(const BlockView& block) {
  for (size_t t = 0; t < code_ranges_.size(); ++t) {
    const ScanSpec::IntegerTerm& term = spec_.integer_terms[t];
    const int column = spec_.block_columns[term.batch_column];
    CodeRange& range = code_ranges_[t];
    range.codes.clear();
    if (block.encoding(column) != ColumnEncoding::kFrameOfReference) {
      range.kind = CodeRange::kValues;
      continue;
    }
    const ColumnChunk& chunk = block.chunk(column);
    if (!chunk.has_zone_map) {  // every row NULL
      range.kind = CodeRange::kNone;
      continue;
    }
    // The frame's base is the zone map's minimum (storage/column_encoding.h); codes are value - min.
    auto zone_value = [width = spec_.types[term.batch_column].FixedWidth()](const uint8_t* raw) -> int128 {
      if (width == 4) return ReadRaw<int32_t>(raw);
      if (width == 8) return ReadRaw<int64_t>(raw);
      return ReadRaw<int128>(raw);
    };
    const int128 min = zone_value(chunk.zone_min);
    const int128 max = zone_value(chunk.zone_max);
    if (!term.members.empty()) {
      for (int128 value : term.members) {
        if (value >= min && value <= max) range.codes.push_back(static_cast<uint64_t>(value - min));
      }
      range.kind = range.codes.empty() ? CodeRange::kNone : CodeRange::kSet;
      continue;
    }
    const int128 low = std::max(term.low, min);
    const int128 high = std::min(term.high, max);
    if (low > high) {
      range.kind = CodeRange::kNone;
    } else if (low == min && high == max) {
      range.kind = CodeRange::kAll;
    } else {
      range.kind = CodeRange::kRange;
      range.low = static_cast<uint64_t>(low - min);
      range.high = static_cast<uint64_t>(high - min);
    }
  }
}

absl::Status BlockScanner::ApplyIntegerTerms(const BlockView& block, uint32_t first_row, const SelectionVector** in) {
  for (size_t t = 0; t < code_ranges_.size(); ++t) {
    if (*in != nullptr && (*in)->count == 0) break;
    DCHECK(*in == nullptr || *in == &selection_);
    const CodeRange& range = code_ranges_[t];
    const int batch_column = spec_.integer_terms[t].batch_column;
    const int column = spec_.block_columns[batch_column];
    const uint32_t* rows = *in != nullptr ? (*in)->rows.data() : nullptr;
    const uint32_t row_count = *in != nullptr ? (*in)->count : batch_.size;
    const ColumnChunk& chunk = block.chunk(column);
    const uint8_t* packed = block.data() + chunk.values_offset;
    switch (range.kind) {
      case CodeRange::kValues:
        LoadColumn(block, batch_column, first_row, *in);
        if (integer_filters_[t] == nullptr) {
          integer_filters_[t] = std::make_unique<ExpressionEvaluator>(*spec_.integer_terms[t].predicate);
        }
        TESSERA_RETURN_IF_ERROR(integer_filters_[t]->Filter(batch_, *in, &selection_));
        *in = &selection_;
        continue;
      case CodeRange::kNone:
        selection_.count = 0;
        *in = &selection_;
        continue;
      case CodeRange::kAll:
        if (block.Validity(column) == nullptr) continue;  // every row passes
        if (*in == nullptr) {
          std::iota(selection_.rows.begin(), selection_.rows.begin() + batch_.size, 0u);
          selection_.count = batch_.size;
        }
        break;
      case CodeRange::kRange:
        selection_.count = SelectCodesInRange(packed, chunk.bit_width, first_row, batch_.size, rows, row_count,
                                              range.low, range.high, selection_.rows.data());
        break;
      case CodeRange::kSet:
        selection_.count =
            SelectCodesInSet(packed, chunk.bit_width, first_row, batch_.size, rows, row_count, range.codes.data(),
                             static_cast<uint32_t>(range.codes.size()), selection_.rows.data());
        break;
    }
    *in = &selection_;
    const uint8_t* validity = block.Validity(column);
    if (validity == nullptr) continue;
    // NULL rows hold code 0, which may have passed.
    uint32_t kept = 0;
    for (uint32_t s = 0; s < selection_.count; ++s) {
      const uint32_t row = selection_.rows[s];
      selection_.rows[kept] = row;
      kept += GetBit(validity, first_row + row);
    }
    selection_.count = kept;
  }
  return absl::OkStatus();
}

absl::Status BlockScanner::ApplySplitFilter(const BlockView& block, uint32_t first_row, const SelectionVector* in,
                                            bool integer_terms_applied) {
  if (matched_block_ != block.data()) {
    TESSERA_RETURN_IF_ERROR(MatchDictionaries(block));
    TranslateIntegerTerms(block);
  }
  for (size_t t = 0; t < term_filters_.size(); ++t) {
    if (in != nullptr && in->count == 0) break;
    if (code_matches_[t].empty()) {
      LoadColumn(block, spec_.dictionary_terms[t].batch_column, first_row, in);
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
  if (!integer_terms_applied) TESSERA_RETURN_IF_ERROR(ApplyIntegerTerms(block, first_row, &in));
  if (residual_filter_ != nullptr && (in == nullptr || in->count > 0)) {
    LoadColumns(block, filter_columns_, first_row, in);
    return residual_filter_->Filter(batch_, in, &selection_);
  }
  if (in == nullptr) {  // every term passed every row
    std::iota(selection_.rows.begin(), selection_.rows.begin() + batch_.size, 0u);
    selection_.count = batch_.size;
  }
  return absl::OkStatus();
}

void BlockScanner::ApplyRuntimeFilters(const BlockView& block, uint32_t first_row, const std::vector<int>& order,
                                       const SelectionVector* in) {
  uint32_t count = in != nullptr ? in->count : batch_.size;
  if (in == nullptr && count == 0) selection_.count = 0;
  for (int f : order) {
    if (count == 0) break;
    const RuntimeFilterProbe& probe = spec_.runtime_filters[f];
    if (!ProbeCodes(block, first_row, probe, in)) {
      keys_.clear();
      for (int column : probe.key_columns) {
        LoadColumn(block, column, first_row, in);  // the first filter's keys whole, later ones' at the rows left
        keys_.push_back(&batch_.columns[column]);
      }
      if (probe.member) {
        probe.filter->KeepMembers(keys_, in, batch_.size, &scratch_);
      } else {
        probe.filter->KeepNonMembers(keys_, in, batch_.size, &scratch_);
      }
    }
    rows_in_[f] += count;
    rows_out_[f] += scratch_.count;
    std::swap(selection_, scratch_);
    in = &selection_;
    count = selection_.count;
  }
}

BlockScanner::CodeProbe BlockScanner::ProbeOnCodes(const BlockView& block, const RuntimeFilterProbe& probe,
                                                   BitmapOnCodes* out) const {
  if (!staged_ || !probe.member || probe.key_columns.size() != 1) return CodeProbe::kNotOnCodes;
  const int batch_column = probe.key_columns[0];
  if (loaded_columns_[batch_column]) return CodeProbe::kNotOnCodes;  // decoded already: the values are as cheap
  const int column = spec_.block_columns[batch_column];
  if (block.encoding(column) != ColumnEncoding::kFrameOfReference) return CodeProbe::kNotOnCodes;
  const Type& type = spec_.types[batch_column];
  const TypeId id = type.id();
  if (id != TypeId::kInteger && id != TypeId::kDate && id != TypeId::kBigInt && id != TypeId::kTimestamp) {
    return CodeProbe::kNotOnCodes;
  }
  RuntimeFilter::DenseKeyBits set;
  if (!probe.filter->dense_key_bits(&set)) return CodeProbe::kNotOnCodes;
  const ColumnChunk& chunk = block.chunk(column);
  if (!chunk.has_zone_map) return CodeProbe::kNoRow;  // every key NULL: no row is a member
  // The block's values zone_min + code that the set can hold, [low, high], in code space and in the set's bits.
  auto zone_value = [wide = type.FixedWidth() == 8](const uint8_t* raw) -> int128 {
    return wide ? ReadRaw<int64_t>(raw) : ReadRaw<int32_t>(raw);
  };
  const int128 zone_min = zone_value(chunk.zone_min);
  const int128 low = std::max(zone_min, static_cast<int128>(set.min));
  const int128 high =
      std::min(zone_value(chunk.zone_max), static_cast<int128>(set.min) + static_cast<int128>(set.bits) - 1);
  if (low > high) return CodeProbe::kNoRow;
  *out = {column,
          block.data() + chunk.values_offset,
          chunk.bit_width,
          static_cast<uint64_t>(low - zone_min),
          static_cast<uint64_t>(high - low),
          set.words,
          static_cast<uint64_t>(low - set.min)};
  return CodeProbe::kOnCodes;
}

bool BlockScanner::ProbeCodes(const BlockView& block, uint32_t first_row, const RuntimeFilterProbe& probe,
                              const SelectionVector* in) {
  BitmapOnCodes bitmap;
  switch (ProbeOnCodes(block, probe, &bitmap)) {
    case CodeProbe::kNotOnCodes:
      return false;
    case CodeProbe::kNoRow:
      scratch_.count = 0;
      return true;
    case CodeProbe::kOnCodes:
      break;
  }
  const uint32_t* rows = in != nullptr ? in->rows.data() : nullptr;
  const uint32_t row_count = in != nullptr ? in->count : batch_.size;
  scratch_.count =
      SelectCodesInBitmap(bitmap.packed, bitmap.bit_width, first_row, batch_.size, rows, row_count, bitmap.code_low,
                          bitmap.code_span, bitmap.bits, bitmap.bit_base, scratch_.rows.data());
  const uint8_t* validity = block.Validity(bitmap.column);
  if (validity == nullptr) return true;
  uint32_t kept = 0;  // NULL rows hold code 0, which may have passed
  for (uint32_t s = 0; s < scratch_.count; ++s) {
    const uint32_t row = scratch_.rows[s];
    scratch_.rows[kept] = row;
    kept += GetBit(validity, first_row + row);
  }
  scratch_.count = kept;
  return true;
}

absl::StatusOr<bool> BlockScanner::FuseCodeFilters(const BlockView& block, uint32_t first_row) {
  if (matched_block_ != block.data()) {
    TESSERA_RETURN_IF_ERROR(MatchDictionaries(block));
    TranslateIntegerTerms(block);
  }
  DCHECK_EQ(first_row % 16, 0u);
  PackedCodeTest tests[kMaxFusedTests];
  int filter_of_test[kMaxFusedTests];  // the runtime filter a test is, -1 for an integer term
  int count = 0;
  for (const CodeRange& range : code_ranges_) {
    if (range.kind == CodeRange::kNone) {
      selection_.count = 0;
      return true;
    }
  }
  for (int f : early_filter_order_) {
    BitmapOnCodes bitmap;
    switch (ProbeOnCodes(block, spec_.runtime_filters[f], &bitmap)) {
      case CodeProbe::kNotOnCodes:
        return false;
      case CodeProbe::kNoRow:
        rows_in_[f] += batch_.size;
        selection_.count = 0;
        return true;
      case CodeProbe::kOnCodes:
        break;
    }
    // One bitmap test per pass, 32-bit lanes, no NULL to drop.
    if (count > 0 || bitmap.bit_width > kMaxFusedBitWidth || block.Validity(bitmap.column) != nullptr ||
        bitmap.code_span >= UINT32_MAX || bitmap.bit_base + bitmap.code_span > UINT32_MAX) {
      return false;
    }
    tests[count] = {bitmap.packed,
                    bitmap.bit_width,
                    static_cast<uint32_t>(bitmap.code_low),
                    static_cast<uint32_t>(bitmap.code_span),
                    bitmap.bits,
                    static_cast<uint32_t>(bitmap.bit_base)};
    filter_of_test[count++] = f;
  }
  for (size_t t = 0; t < code_ranges_.size(); ++t) {
    const CodeRange& range = code_ranges_[t];
    if (range.kind != CodeRange::kRange && range.kind != CodeRange::kAll) return false;
    const int column = spec_.block_columns[spec_.integer_terms[t].batch_column];
    if (block.Validity(column) != nullptr) return false;
    if (range.kind == CodeRange::kAll) continue;  // every row passes
    const ColumnChunk& chunk = block.chunk(column);
    if (count == kMaxFusedTests || chunk.bit_width > kMaxFusedBitWidth) return false;
    tests[count] = {block.data() + chunk.values_offset, chunk.bit_width, static_cast<uint32_t>(range.low),
                    static_cast<uint32_t>(range.high - range.low)};
    filter_of_test[count++] = -1;
  }
  selection_.count = SelectCodesAllOf(tests, count, first_row, batch_.size, selection_.rows.data());
  for (int k = 0; k < count; ++k) {
    if (filter_of_test[k] < 0) continue;
    rows_in_[filter_of_test[k]] += static_cast<int64_t>(tests[k].tested);
    rows_out_[filter_of_test[k]] += static_cast<int64_t>(tests[k].passed);
  }
  return true;
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
  const uint32_t count = static_cast<uint32_t>(std::min<size_t>(kVectorSize, expansion_rows_.size() - expansion_next_));
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
