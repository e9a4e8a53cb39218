#pragma once
// The front end shared by operators that read blocks: loads a block's needed columns a vector at a time, skips
// whole blocks whose zone maps rule out the filter, and applies the filter and the runtime filters (LIP Bloom
// filters, exact semi / anti join filters: runtime_filter.h). One scanner per work order.
//
// Runtime filters run after the filter (those that probe with one bit test, RuntimeFilter::
// probes_before_scan_filter, before it), in the order of the pass rates that earlier work orders of the same
// scan observed (most selective first; each scanner publishes its counts when it is destroyed, so the order
// adapts block by block); an optional one (a LIP filter) that has passed almost every row is left out by the
// scanners that come after. When a filter expands rows (ExactFilter::Multiplicity > 1), the scanner hands out
// batches of gathered rows in which each row appears as often as its multiplicity says.

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/row_deletions.h"
#include "expressions/batch.h"
#include "expressions/bound_expression.h"
#include "expressions/expression_evaluator.h"
#include "relational_operators/runtime_filter.h"
#include "storage/block_layout.h"

namespace tessera {

// What to read: `block_columns[i]` is the block column loaded as batch column i (with `types[i]`; kRowIdBlockColumn:
// the row ids of catalog/row_deletions.h, BIGINT, numbered by the block's ordinal given to SetBlockRows); `filter`
// (optional) is a predicate over batch columns. Shared by all work orders of an operator; immutable.
struct ScanSpec {
  std::vector<int> block_columns;
  std::vector<Type> types;
  std::unique_ptr<BoundExpression> filter;
  // Applied after `filter`; their key columns are batch columns. The filters must be complete before any work
  // order using this spec runs.
  std::vector<RuntimeFilterProbe> runtime_filters;

  // Conjuncts of `filter` of the form column <op> constant, for zone-map skipping. Filled by Prepare().
  struct RangeTerm {
    int batch_column;
    ComparisonOp op;
    Value constant;
  };
  std::vector<RangeTerm> range_terms;
  // Conjuncts of `filter` on one string column alone (compared with a constant, IN a list, LIKE a pattern; all
  // false on NULL): in blocks where that column is dictionary-coded (storage/column_encoding.h) they are evaluated
  // once per dictionary entry and then on the rows' codes. `residual_filter` is `filter` without them (null: none
  // left). Filled by Prepare(); empty when `filter` has no such conjunct (then `filter` runs as it is).
  struct DictionaryTerm {
    int batch_column;
    std::unique_ptr<BoundExpression> predicate;
  };
  std::vector<DictionaryTerm> dictionary_terms;
  // Conjuncts of `filter` comparing one INTEGER, BIGINT, DECIMAL, DATE or TIMESTAMP column with constants (=, <,
  // <=, >, >=, so BETWEEN too, and IN a list): in blocks where that column is frame-of-reference coded they are
  // translated into code space once per block (below the block's minimum: nothing passes, a range covering the
  // block: every non-NULL row passes) and evaluated on the codes, without decoding the column. The comparisons
  // of one column merge into one inclusive range of its physical (unscaled) values; an IN list is a set.
  struct IntegerTerm {
    int batch_column;
    int128 low;
    int128 high;                                 // low > high: no value passes
    std::vector<int128> members;                 // an IN list's values, ascending; empty: the term is the range
    std::unique_ptr<BoundExpression> predicate;  // the conjuncts themselves, for blocks where the column is plain
  };
  std::vector<IntegerTerm> integer_terms;
  // `filter` without the dictionary and integer terms (null: none left).
  std::unique_ptr<BoundExpression> residual_filter;
  void Prepare();
};

class BlockScanner {
 public:
  // An optional runtime filter (RuntimeFilterProbe::optional) is left out by scanners created after earlier ones
  // saw it pass at least this fraction of at least this many rows.
  static constexpr double kUselessFilterPassRate = 0.9;
  static constexpr int64_t kRowsToJudgeAFilter = 64 * 1024;

  explicit BlockScanner(const ScanSpec& spec);
  ~BlockScanner();
  BlockScanner(const BlockScanner&) = delete;
  BlockScanner& operator=(const BlockScanner&) = delete;

  // True if the block's zone maps prove that no row passes the filter.
  bool CanSkip(const BlockView& block) const;

  // Deleted rows (catalog/row_deletions.h) of the base block about to be read (null: none), never handed out, and
  // the block's ordinal in its table snapshot (for row ids). Call before the first Next() of a base block;
  // temporary blocks need no call. A block without deletions costs its scan nothing more (no live-row mask).
  void SetBlockRows(const DeletedRows* deleted, uint32_t ordinal) {
    deleted_ = deleted != nullptr && deleted->deleted_count() > 0 ? deleted : nullptr;
    block_ordinal_ = ordinal;
  }

  // Iterates over the block a vector at a time. Returns false when the block is exhausted. On true, `batch()`
  // holds the next vector of rows and `selection()` the rows passing the filter (null: all rows pass). Only the
  // selected rows of the batch are defined: columns are loaded (decoded) in stages, each just before the first
  // filter that reads it (the rest after the last filter), and a compressed column loaded when few rows of the
  // vector are still selected is decoded at those rows alone. When selected_count() is 0 the columns may hold
  // no rows of this vector.
  absl::StatusOr<bool> Next(const BlockView& block);
  void Reset() {
    next_row_ = 0;
    expanding_ = false;
  }

  const Batch& batch() const { return expanding_ ? expanded_ : batch_; }
  const SelectionVector* selection() const { return (has_filter_ || masked_) && !expanding_ ? &selection_ : nullptr; }
  uint32_t selected_count() const {
    return expanding_ ? expanded_.size : has_filter_ || masked_ ? selection_.count : batch_.size;
  }

 private:
  // Loads rows [first, first + count) into batch_, the row-id column included.
  void LoadBatch(const BlockView& block, uint32_t first, uint32_t count);
  // Applies the runtime filters `order` to the rows of `in` (null: all rows of the batch) into selection_.
  // Each filter's key columns are loaded (LoadColumn) just before it probes.
  void ApplyRuntimeFilters(const BlockView& block, uint32_t first_row, const std::vector<int>& order,
                           const SelectionVector* in);
  // Runtime filter `probe` on the frame-of-reference codes of its key in `block`, rows of `in` (null: all rows)
  // into scratch_, without loading the key column: when the filter is a bit vector over one integer key
  // (RuntimeFilter::dense_key_bits) whose column is coded in this block and not loaded yet. False: not done.
  bool ProbeCodes(const BlockView& block, uint32_t first_row, const RuntimeFilterProbe& probe,
                  const SelectionVector* in);
  // ProbeCodes' test in `block`'s code space: the key's packed codes and the codes [code_low, code_low +
  // code_span] whose bits `bit_base + (code - code_low)` of `bits` say which pass.
  struct BitmapOnCodes {
    int column = 0;  // the key's block column
    const uint8_t* packed = nullptr;
    int bit_width = 0;
    uint64_t code_low = 0;
    uint64_t code_span = 0;
    const uint64_t* bits = nullptr;
    uint64_t bit_base = 0;
  };
  enum class CodeProbe { kNotOnCodes, kNoRow, kOnCodes };
  CodeProbe ProbeOnCodes(const BlockView& block, const RuntimeFilterProbe& probe, BitmapOnCodes* out) const;
  // The integer terms and the runtime filters that run before the filter (early_filter_order_) in one pass over
  // the vector's codes (SelectCodesAllOf) into selection_, when each is a code range or a key filter's bitmap on
  // codes (ProbeOnCodes; one of them) over a column of this block without NULLs and of at most
  // kMaxFusedBitWidth bits, and the vector has no deleted row. False: nothing done (the terms and filters run
  // one after the other). SSB flight 1: the date key filter, lo_discount's and lo_quantity's ranges.
  absl::StatusOr<bool> FuseCodeFilters(const BlockView& block, uint32_t first_row);
  // The filter split into dictionary terms and the residual (ScanSpec::dictionary_terms), rows of `in` (null: all
  // rows) into selection_; the batch holds rows [first_row, ...) of `block`.
  // `integer_terms_applied`: FuseCodeFilters ran them (and `in` is its selection).
  absl::Status ApplySplitFilter(const BlockView& block, uint32_t first_row, const SelectionVector* in,
                                bool integer_terms_applied);
  // Which codes of `block`'s dictionary pass each dictionary term (empty where the column is not
  // dictionary-coded), computed once per block.
  absl::Status MatchDictionaries(const BlockView& block);
  // Each integer term in `block`'s code space (code_ranges_), computed once per block.
  void TranslateIntegerTerms(const BlockView& block);
  // The integer terms on the rows of `*in` (null: all rows); `*in` becomes the rows passing (selection_, or null
  // while every row passes).
  absl::Status ApplyIntegerTerms(const BlockView& block, uint32_t first_row, const SelectionVector** in);
  // Loads batch column `c` for the current vector unless it is loaded; with `in` sparse, at its rows alone.
  void LoadColumn(const BlockView& block, int c, uint32_t first_row, const SelectionVector* in);
  void LoadColumns(const BlockView& block, const std::vector<int>& columns, uint32_t first_row,
                   const SelectionVector* in);
  // Starts handing out the selected rows of batch_ repeated by their multiplicities, if any is above 1.
  void StartExpansion();
  // Fills expanded_ with the next up to kVectorSize rows of the expansion; false when it is exhausted.
  bool NextExpandedChunk();

  const ScanSpec& spec_;
  bool has_filter_;
  std::unique_ptr<ExpressionEvaluator> filter_;
  Batch batch_;
  SelectionVector selection_;
  SelectionVector scratch_;
  uint32_t next_row_ = 0;

  // Deleted rows of the current block; masked_: the current batch has some, so selection_ lists its live rows.
  const DeletedRows* deleted_ = nullptr;
  uint32_t block_ordinal_ = 0;
  bool masked_ = false;
  // With a row-id column: the block columns loaded (into loaded_) and the batch column each becomes.
  int row_id_column_ = -1;
  std::vector<int> load_columns_;
  std::vector<Type> load_types_;
  std::vector<int> load_targets_;
  Batch loaded_;

  // Loading in stages (not with a row-id column): each runtime filter's keys before it probes, the columns the
  // filter (or the residual filter) reads before it runs, then every column; loaded_columns_ marks the batch
  // columns loaded for the current vector.
  bool staged_ = false;
  std::vector<int> filter_columns_;
  std::vector<int> all_columns_;
  std::vector<uint8_t> loaded_columns_;
  // Staged, split filter with integer terms: FuseCodeFilters is tried on every vector without deleted rows.
  bool fuse_code_filters_ = false;

  // Dictionary terms: an evaluator per term and the residual's; per block, the passing codes of each term.
  std::vector<std::unique_ptr<ExpressionEvaluator>> term_filters_;
  std::unique_ptr<ExpressionEvaluator> residual_filter_;
  const uint8_t* matched_block_ = nullptr;
  std::vector<std::vector<uint8_t>> code_matches_;
  Batch dictionary_batch_;
  SelectionVector dictionary_selection_;
  std::vector<uint32_t> codes_;

  // Integer terms: an evaluator per term (made for the first block where its column is plain); per block, each
  // term in code space.
  struct CodeRange {
    enum Kind { kValues, kNone, kAll, kRange, kSet } kind = kValues;  // kValues: the column is not coded
    uint64_t low = 0;
    uint64_t high = 0;
    std::vector<uint64_t> codes;  // kSet, ascending
  };
  std::vector<std::unique_ptr<ExpressionEvaluator>> integer_filters_;
  std::vector<CodeRange> code_ranges_;

  // Runtime filters: application order, per-filter rows in / out of this work order, key column pointers.
  std::vector<int> filter_order_;        // after the filter predicate
  std::vector<int> early_filter_order_;  // before it
  std::vector<int64_t> rows_in_;
  std::vector<int64_t> rows_out_;
  std::vector<const ColumnVector*> keys_;
  std::vector<int> expanding_filters_;  // filters whose kept rows may repeat

  // Expansion state: source rows of batch_ (each repeated), the next one to emit, and the gathered batch.
  bool expanding_ = false;
  std::vector<uint32_t> expansion_rows_;
  size_t expansion_next_ = 0;
  Batch expanded_;
};

}  // namespace tessera
