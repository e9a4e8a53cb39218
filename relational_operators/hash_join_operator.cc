#include "relational_operators/hash_join_operator.h"

#include <optional>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "glog/logging.h"
#include "relational_operators/key_hashing.h"
#include "relational_operators/vector_block_writer.h"

namespace tessera {

bool EmitsBuildColumns(HashJoinType type) {
  return WritesPairs(type) || type == HashJoinType::kRightSemi || type == HashJoinType::kRightAnti;
}
bool WritesPairs(HashJoinType type) {
  return type == HashJoinType::kInner || type == HashJoinType::kLeftOuter || type == HashJoinType::kRightOuter ||
         type == HashJoinType::kFullOuter;
}
bool KeepsUnmatchedProbeRows(HashJoinType type) {
  return type == HashJoinType::kLeftOuter || type == HashJoinType::kFullOuter;
}
bool TracksBuildMatches(HashJoinType type) {
  return type == HashJoinType::kRightOuter || type == HashJoinType::kFullOuter || type == HashJoinType::kRightSemi ||
         type == HashJoinType::kRightAnti;
}

// ---- build ----

class HashJoinBuildOperator::AddBlockWorkOrder : public WorkOrder {
 public:
  AddBlockWorkOrder(HashJoinBuildOperator* op, uint32_t block) : WorkOrder(op->index(), -1), op_(op), block_(block) {}
  absl::Status Execute(const WorkOrderContext&) override {
    absl::Status status = op_->table_->AddBlock(block_);
    op_->completed_.fetch_add(1);
    return status;
  }

 private:
  HashJoinBuildOperator* op_;
  uint32_t block_;
};

class HashJoinBuildOperator::FinalizeWorkOrder : public WorkOrder {
 public:
  explicit FinalizeWorkOrder(HashJoinBuildOperator* op) : WorkOrder(op->index(), -1), op_(op) {}
  absl::Status Execute(const WorkOrderContext&) override {
    rows_out_ = op_->table_->indexed_rows();
    if (op_->single_row_ && op_->table_->total_build_rows() > 1) {
      return absl::InvalidArgumentError(kScalarSubqueryRowsError);
    }
    return op_->table_->Finalize();
  }

 private:
  HashJoinBuildOperator* op_;
};

bool HashJoinBuildOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  while (!pending_.empty()) {
    out->push_back(std::make_unique<AddBlockWorkOrder>(this, pending_.front()));
    pending_.pop_front();
    ++issued_;
  }
  if (finalize_issued_) return true;
  if (input_done_ && completed_.load() == issued_) {
    out->push_back(std::make_unique<FinalizeWorkOrder>(this));
    finalize_issued_ = true;
    return true;
  }
  return false;
}

// ---- probe ----

namespace {

// The width of a single fixed-width key whose equality is a comparison of raw bytes, 0 otherwise.
int RawComparableKeyWidth(const std::vector<const ColumnVector*>& keys) {
  if (keys.size() != 1) return 0;
  const Type& type = keys[0]->type();
  return !type.IsString() && type.id() != TypeId::kDouble ? type.FixedWidth() : 0;
}

// Whether build entry `entry`, whose hash equals that of row `row` of the probe keys, holds the same key.
// `raw_width`: RawComparableKeyWidth(keys).
bool EntryHoldsKey(const JoinHashTable& table, const std::vector<const ColumnVector*>& keys, int raw_width,
                   uint32_t row, uint32_t entry) {
  if (table.HashDeterminesKey()) return true;  // equal hashes of one integer-like key are equal keys
  const BlockView& build_block = table.blocks()[table.Block(entry)];
  if (raw_width > 0) {
    return std::memcmp(
               keys[0]->values<uint8_t>() + static_cast<size_t>(row) * raw_width,
               build_block.Values<uint8_t>(table.key_columns()[0]) + static_cast<size_t>(table.Row(entry)) * raw_width,
               raw_width) == 0;
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    if (!VectorValueEqualsBlockValue(*keys[k], row, build_block, table.key_columns()[k], table.Row(entry))) {
      return false;
    }
  }
  return true;
}

// Whether the probe keys are two 4-byte integer columns, whose values a table with KeysArePacked() compares as one
// word (JoinHashTable::PackKey).
bool PackableKeys(const std::vector<const ColumnVector*>& keys) {
  if (keys.size() != 2) return false;
  for (const ColumnVector* key : keys) {
    if (key->type().id() != TypeId::kInteger && key->type().id() != TypeId::kDate) return false;
  }
  return true;
}

// Whether build entry `entry`, found in the bucket of `hash` (the hash of row `row` of the probe keys), matches it.
// `packable`: PackableKeys(keys).
bool EntryMatches(const JoinHashTable& table, const std::vector<const ColumnVector*>& keys, int raw_width,
                  bool packable, uint64_t hash, uint32_t row, uint32_t entry) {
  if (table.KeysArePacked()) {
    if (packable) {
      return table.PackedKey(entry) ==
             JoinHashTable::PackKey(keys[0]->values<int32_t>()[row], keys[1]->values<int32_t>()[row]);
    }
    return EntryHoldsKey(table, keys, raw_width, row, entry);  // the entry holds no hash to compare first
  }
  return table.Hash(entry) == hash && EntryHoldsKey(table, keys, raw_width, row, entry);
}

// The buckets of `count` probe rows (rows selection->rows[s], or s without a selection), looked up in two
// prefetched passes before any is walked, so that the cache misses of a vector overlap instead of stalling one
// row at a time.
void LookUpBuckets(const JoinHashTable& table, const uint64_t* hashes, const SelectionVector* selection, uint32_t count,
                   JoinHashTable::EntryRange* buckets) {
  for (uint32_t s = 0; s < count; ++s) table.PrefetchBucket(hashes[selection != nullptr ? selection->rows[s] : s]);
  for (uint32_t s = 0; s < count; ++s) {
    buckets[s] = table.Bucket(hashes[selection != nullptr ? selection->rows[s] : s]);
    if (buckets[s].begin < buckets[s].end) table.PrefetchEntry(buckets[s].begin);
  }
}

}  // namespace

// The buffers and evaluators of a probe work order, made for the operator once and reused by its work orders
// (TakeScratch / GiveScratch): allocating and zeroing them per work order cost as much as probing a small block's
// rows (with 8 concurrent SSB streams, a few percent of the server's CPU went to malloc / free and memset in work
// order set-up). The levels are those of the inner-chain path (ProbesInnerChain); empty otherwise.
struct HashJoinProbeOperator::ProbeScratch {
  // The rows of level l matched joins 0..l-1; each is a probe batch row and its entry in each of those joins'
  // tables. Level joins() holds output rows; the levels in between also hold what probing their next join needs
  // (per level, as a level's rows are being probed while deeper levels fill).
  struct Level {
    uint32_t count = 0;
    std::vector<uint32_t> probe_rows;
    std::vector<std::vector<uint32_t>> entries;  // [join][row]
    std::vector<ColumnVector> keys;              // the next join's probe keys, gathered
    std::vector<const ColumnVector*> key_pointers;
    std::vector<uint64_t> hashes;
    std::vector<JoinHashTable::EntryRange> buckets;
  };

  explicit ProbeScratch(const HashJoinProbeOperator& op) {
    const HashJoinSpec& spec = op.spec_;
    for (const auto& key : spec.probe_keys) key_evaluators.push_back(std::make_unique<ExpressionEvaluator>(*key));
    if (spec.residual) residual = std::make_unique<ExpressionEvaluator>(*spec.residual);
    keys.resize(key_evaluators.size());
    hashes.resize(kVectorSize);
    matched.resize(kVectorSize);
    emit.rows.resize(kVectorSize);
    passing.rows.resize(kVectorSize);
    buckets.resize(kVectorSize);
    if (!op.ProbesInnerChain()) {
      pairs.columns.resize(op.pair_types_.size());
      for (size_t c = 0; c < op.pair_types_.size(); ++c) pairs.columns[c].set_type(op.pair_types_[c]);
      return;
    }
    const int joins = op.joins();
    levels.resize(joins + 1);  // index 0 unused: join 0's rows are the probe batch's
    for (int level = 1; level <= joins; ++level) {
      Level& rows = levels[level];
      rows.probe_rows.resize(kVectorSize);
      rows.entries.assign(level, std::vector<uint32_t>(kVectorSize));
      if (level == joins) continue;
      const ChainedJoin& next = op.chained_[level - 1];
      rows.keys.resize(next.key_pair_columns.size());
      for (size_t k = 0; k < rows.keys.size(); ++k) {
        rows.keys[k].set_type(op.pair_types_[next.key_pair_columns[k]]);
        rows.keys[k].Reserve(kVectorSize);
        rows.key_pointers.push_back(&rows.keys[k]);
      }
      rows.hashes.resize(kVectorSize);
      rows.buckets.resize(kVectorSize);
    }
    build_blocks.assign(joins, std::vector<const BlockView*>(kVectorSize));
    build_rows.assign(joins, std::vector<uint32_t>(kVectorSize));
    output.columns.resize(op.output_pair_columns_.size());
    for (size_t o = 0; o < output.columns.size(); ++o) {
      output.columns[o].set_type(op.pair_types_[op.output_pair_columns_[o]]);
      output.columns[o].Reserve(kVectorSize);
      output_pointers.push_back(&output.columns[o]);
    }
  }

  // The first join: its key evaluators and per-vector buffers; the residual; the pairs of the other paths.
  std::vector<std::unique_ptr<ExpressionEvaluator>> key_evaluators;
  std::unique_ptr<ExpressionEvaluator> residual;
  std::vector<const ColumnVector*> keys;
  std::vector<uint64_t> hashes;
  std::vector<uint8_t> matched;
  SelectionVector emit;
  SelectionVector passing;
  std::vector<JoinHashTable::EntryRange> buckets;
  Batch pairs;

  std::vector<Level> levels;
  // Per join: the build blocks and rows of the entries of the level being probed or written, and whether they
  // are resolved for it.
  std::vector<std::vector<const BlockView*>> build_blocks;
  std::vector<std::vector<uint32_t>> build_rows;
  std::vector<uint8_t> resolved;
  Batch output;  // the output columns of rows that matched every join
  std::vector<const ColumnVector*> output_pointers;
};

std::unique_ptr<HashJoinProbeOperator::ProbeScratch> HashJoinProbeOperator::TakeScratch() {
  {
    std::lock_guard<std::mutex> lock(scratch_mutex_);
    if (!idle_scratch_.empty()) {
      std::unique_ptr<ProbeScratch> scratch = std::move(idle_scratch_.back());
      idle_scratch_.pop_back();
      return scratch;
    }
  }
  return std::make_unique<ProbeScratch>(*this);
}

void HashJoinProbeOperator::GiveScratch(std::unique_ptr<ProbeScratch> scratch) {
  for (ProbeScratch::Level& level : scratch->levels) level.count = 0;  // rows left by a work order that failed
  std::lock_guard<std::mutex> lock(scratch_mutex_);
  idle_scratch_.push_back(std::move(scratch));
}

class HashJoinProbeOperator::ProbeWorkOrder : public WorkOrder {
 public:
  ProbeWorkOrder(HashJoinProbeOperator* op, uint32_t block, int node)
      : WorkOrder(op->index(), node), op_(op), block_index_(block) {
    if (!op->probe_.is_table()) DeclareConsumedBlock(0, block);
  }

  absl::Status Execute(const WorkOrderContext& context) override {
    context_ = &context;
    absl::Status status = Probe();
    if (sink_writer_ != nullptr) {
      absl::Status finished = sink_writer_->Finish();
      if (status.ok()) status = finished;
      rows_out_ = sunk_rows_;
    }
    if (capped_) {  // Probe stopped at the operator's output row cap: what it wrote is the work order's output
      status = writer_->Flush();
      rows_out_ = writer_->rows_written();
    }
    if (scratch_ != nullptr) op_->GiveScratch(std::move(scratch_));
    op_->probes_finished_.fetch_add(1);
    return status;
  }

 private:
  struct Candidate {
    uint32_t probe_row;
    uint32_t entry;
  };

  // Appends a row that matched join `level - 1` at `entry`: `parent` (a row of the level before, or null for
  // join 0, whose rows are the probe batch's) extended by the entry. Probes on when the level is full.
  absl::Status AppendChainRow(int level, const ProbeScratch::Level* parent, uint32_t parent_row, uint32_t probe_row,
                              uint32_t entry, const Batch& batch, VectorBlockWriter& writer) {
    ProbeScratch::Level& rows = scratch_->levels[level];
    const uint32_t i = rows.count;
    rows.probe_rows[i] = probe_row;
    for (int j = 0; j + 1 < level; ++j) rows.entries[j][i] = parent->entries[j][parent_row];
    rows.entries[level - 1][i] = entry;
    if (++rows.count == kVectorSize) return ProbeChainLevel(level, batch, writer);
    return absl::OkStatus();
  }

  // scratch_->build_blocks[join] / build_rows[join]: the build blocks and rows of join `join`'s entries of the
  // first `count` rows of `rows`.
  void ResolveBuildRows(const ProbeScratch::Level& rows, uint32_t count, int join) {
    const JoinHashTable& table = join == 0 ? *op_->table_ : *op_->chained_[join - 1].table;
    const uint32_t* entries = rows.entries[join].data();
    const BlockView** blocks = scratch_->build_blocks[join].data();
    uint32_t* build_rows = scratch_->build_rows[join].data();
    for (uint32_t i = 0; i < count; ++i) {
      blocks[i] = &table.blocks()[table.Block(entries[i])];
      build_rows[i] = table.Row(entries[i]);
    }
  }

  // Gathers pair column `column` of the first `count` rows of `rows` into `to` (typed; owned afterwards).
  // `resolved[j]`: whether build_blocks_ / build_rows_ of join j already hold these rows' (updated here).
  void GatherPairColumn(const ProbeScratch::Level& rows, uint32_t count, int column, const Batch& batch,
                        std::vector<uint8_t>* resolved, ColumnVector* to) {
    to->ResetOwned(count);
    const int join = op_->pair_column_join_[column];
    if (join < 0) {
      GatherVectorValues(batch.columns[column], rows.probe_rows.data(), count, to);
      return;
    }
    if (!(*resolved)[join]) {
      ResolveBuildRows(rows, count, join);
      (*resolved)[join] = 1;
    }
    const int first = join == 0 ? static_cast<int>(op_->scan_.types.size()) : op_->chained_[join - 1].first_pair_column;
    GatherBlockValues(scratch_->build_blocks[join].data(), scratch_->build_rows[join].data(), count, column - first,
                      to);
  }

  // A probe row may meet every build row (a nested-loop join: no keys, or one key value everywhere), so a work
  // order can run for minutes: the query's cancel flag, and the operator's output row cap, are checked once per
  // vector of pairs or rows. The cap stops the probe with an error status that Execute turns back into success.
  absl::Status CheckStop(const VectorBlockWriter& writer) {
    if (context_->Cancelled()) return absl::CancelledError("query cancelled");
    if (op_->output_row_cap_ >= 0 && writer.rows_written() >= op_->output_row_cap_) {
      capped_ = true;
      return absl::OutOfRangeError("the operator's output row cap is reached");
    }
    return absl::OkStatus();
  }

  // Probes the next join with the rows of `level` (emptying it), or writes them when they matched every join.
  absl::Status ProbeChainLevel(int level, const Batch& batch, VectorBlockWriter& writer) {
    TESSERA_RETURN_IF_ERROR(CheckStop(writer));
    ProbeScratch::Level& rows = scratch_->levels[level];
    const uint32_t count = rows.count;
    rows.count = 0;
    scratch_->resolved.assign(op_->joins(), 0);
    if (level == op_->joins()) {
      Batch& output = scratch_->output;
      for (size_t o = 0; o < output.columns.size(); ++o) {
        GatherPairColumn(rows, count, op_->output_pair_columns_[o], batch, &scratch_->resolved, &output.columns[o]);
      }
      if (sink_writer_ != nullptr) {
        output.size = count;
        sunk_rows_ += count;
        return sink_writer_->Consume(output);
      }
      return writer.Append(scratch_->output_pointers, nullptr, count);
    }
    const ChainedJoin& join = op_->chained_[level - 1];
    const JoinHashTable& table = *join.table;
    const bool direct = table.HasDirectIndex();
    for (size_t k = 0; k < rows.keys.size(); ++k) {
      GatherPairColumn(rows, count, join.key_pair_columns[k], batch, &scratch_->resolved, &rows.keys[k]);
      if (!direct) HashVectorRows(rows.keys[k], count, k == 0, rows.hashes.data());
    }
    const int raw_width = RawComparableKeyWidth(rows.key_pointers);
    const bool packable = PackableKeys(rows.key_pointers);
    if (direct) {
      table.LookUpDirect(rows.keys[0], nullptr, count, rows.buckets.data());
    } else {
      LookUpBuckets(table, rows.hashes.data(), nullptr, count, rows.buckets.data());
    }
    for (uint32_t i = 0; i < count; ++i) {
      bool null_key = false;
      for (const ColumnVector& key : rows.keys) null_key |= key.IsNull(i);
      if (null_key) continue;
      for (uint32_t e = rows.buckets[i].begin; e < rows.buckets[i].end; ++e) {
        if (!direct && !EntryMatches(table, rows.key_pointers, raw_width, packable, rows.hashes[i], i, e)) continue;
        TESSERA_RETURN_IF_ERROR(AppendChainRow(level + 1, &rows, i, rows.probe_rows[i], e, batch, writer));
      }
    }
    if (scratch_->levels[level + 1].count > 0) return ProbeChainLevel(level + 1, batch, writer);
    return absl::OkStatus();
  }

  absl::Status Probe() {
    const HashJoinSpec& spec = op_->spec_;
    const JoinHashTable& table = *op_->table_;
    TESSERA_ASSIGN_OR_RETURN(PinnedBlock block, op_->probe_.Pin(block_index_));
    rows_in_ = block.view.row_count();
    BlockScanner scanner(op_->scan_);
    scanner.SetBlockRows(block.deleted, block.ordinal);
    if (scanner.CanSkip(block.view)) return absl::OkStatus();
    // NOT IN with a NULL on the build side: no row qualifies.
    if (spec.type == HashJoinType::kAnti && spec.null_aware && table.rows_with_null_first_key() > 0) {
      return absl::OkStatus();
    }

    scratch_ = op_->TakeScratch();
    ProbeScratch& scratch = *scratch_;
    std::vector<std::unique_ptr<ExpressionEvaluator>>& key_evaluators = scratch.key_evaluators;
    ExpressionEvaluator* residual = scratch.residual.get();
    const size_t probe_width = op_->scan_.types.size();
    const bool chain = op_->ProbesInnerChain();
    if (chain && op_->sink_ != nullptr) sink_writer_ = op_->sink_->OpenWriter(context_->worker_index);
    writer_.emplace(op_->output_.get(), op_->builders_.get());
    VectorBlockWriter& writer = *writer_;
    std::vector<const ColumnVector*>& keys = scratch.keys;
    std::vector<uint64_t>& hashes = scratch.hashes;
    std::vector<uint8_t>& matched = scratch.matched;
    SelectionVector& emit = scratch.emit;
    SelectionVector& passing = scratch.passing;
    std::vector<JoinHashTable::EntryRange>& buckets = scratch.buckets;
    const bool gather_pairs = WritesPairs(spec.type) || spec.residual != nullptr;
    const bool marks_build = TracksBuildMatches(spec.type);
    // A direct index finds the one entry of a key without hashing (one key column then).
    const bool direct = table.HasDirectIndex() && keys.size() == 1;

    while (true) {
      TESSERA_RETURN_IF_ERROR(CheckStop(writer));
      TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(block.view));
      if (!more) break;
      const Batch& batch = scanner.batch();
      const SelectionVector* selection = scanner.selection();
      const uint32_t selected = scanner.selected_count();
      if (selected == 0) continue;
      for (size_t k = 0; k < keys.size(); ++k) {
        TESSERA_ASSIGN_OR_RETURN(keys[k], key_evaluators[k]->Evaluate(batch, selection));
        if (!direct) HashSelectedRows(*keys[k], selection, batch.size, k == 0, hashes.data());
      }
      if (keys.empty()) std::fill(hashes.begin(), hashes.begin() + batch.size, 0);  // nested loop: every build row
      const int raw_width = RawComparableKeyWidth(keys);
      const bool packable = PackableKeys(keys);
      if (!chain) std::fill(matched.begin(), matched.begin() + batch.size, 0);
      candidates_.clear();
      if (direct) {
        table.LookUpDirect(*keys[0], selection, selected, buckets.data());
      } else {
        LookUpBuckets(table, hashes.data(), selection, selected, buckets.data());
      }
      for (uint32_t s = 0; s < selected; ++s) {
        const uint32_t row = selection != nullptr ? selection->rows[s] : s;
        bool null_key = false;
        for (const ColumnVector* key : keys) null_key |= key->IsNull(row);
        if (null_key) continue;
        const JoinHashTable::EntryRange bucket = buckets[s];
        if (bucket.end - bucket.begin > kVectorSize) TESSERA_RETURN_IF_ERROR(CheckStop(writer));
        for (uint32_t e = bucket.begin; e < bucket.end; ++e) {
          if (!direct && !EntryMatches(table, keys, raw_width, packable, hashes[row], row, e)) continue;
          if (chain) {
            TESSERA_RETURN_IF_ERROR(AppendChainRow(1, nullptr, 0, row, e, batch, writer));
            continue;
          }
          if (!gather_pairs) {
            if (marks_build) {  // right semi / anti: every matching build row counts
              table.MarkMatched(e);
              continue;
            }
            matched[row] = 1;
            break;
          }
          candidates_.push_back({row, e});
          if (candidates_.size() == kVectorSize) {
            TESSERA_RETURN_IF_ERROR(FlushCandidates(batch, probe_width, residual, &passing, &matched, writer));
          }
        }
      }
      if (chain) {
        if (scratch_->levels[1].count > 0) TESSERA_RETURN_IF_ERROR(ProbeChainLevel(1, batch, writer));
        continue;
      }
      if (!candidates_.empty()) {
        TESSERA_RETURN_IF_ERROR(FlushCandidates(batch, probe_width, residual, &passing, &matched, writer));
      }
      // Rows decided by their match flag.
      if (spec.type == HashJoinType::kInner || spec.type == HashJoinType::kRightOuter ||
          spec.type == HashJoinType::kRightSemi || spec.type == HashJoinType::kRightAnti) {
        continue;
      }
      emit.count = 0;
      for (uint32_t s = 0; s < selected; ++s) {
        const uint32_t row = selection != nullptr ? selection->rows[s] : s;
        bool keep = spec.type == HashJoinType::kSemi ? matched[row] != 0 : matched[row] == 0;
        if (keep && spec.type == HashJoinType::kAnti && spec.null_aware && !keys.empty() && keys[0]->IsNull(row) &&
            table.total_build_rows() > 0) {
          keep = false;  // NULL NOT IN (non-empty set) is not TRUE
        }
        if (keep) emit.rows[emit.count++] = row;
      }
      if (emit.count == 0) continue;
      if (KeepsUnmatchedProbeRows(spec.type)) {
        TESSERA_RETURN_IF_ERROR(WriteUnmatched(batch, emit, probe_width, writer));
      } else {
        std::vector<const ColumnVector*> columns;
        for (int c : spec.probe_output) columns.push_back(&batch.columns[c]);
        TESSERA_RETURN_IF_ERROR(writer.Append(columns, &emit, batch.size));
      }
    }
    TESSERA_RETURN_IF_ERROR(writer.Flush());
    rows_out_ = writer.rows_written();
    return absl::OkStatus();
  }

  // Gathers candidate pairs into the scratch's pairs, applies the residual, marks matches, writes inner/outer matches.
  absl::Status FlushCandidates(const Batch& batch, size_t probe_width, ExpressionEvaluator* residual,
                               SelectionVector* passing, std::vector<uint8_t>* matched, VectorBlockWriter& writer) {
    TESSERA_RETURN_IF_ERROR(CheckStop(writer));
    const HashJoinSpec& spec = op_->spec_;
    const JoinHashTable& table = *op_->table_;
    const uint32_t count = static_cast<uint32_t>(candidates_.size());
    for (ColumnVector& column : scratch_->pairs.columns) column.ResetOwned(count);
    scratch_->pairs.size = count;
    // Column at a time, so the type dispatch happens once per column, not once per value.
    probe_rows_.resize(count);
    build_blocks_.resize(count);
    build_rows_.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      probe_rows_[i] = candidates_[i].probe_row;
      build_blocks_[i] = &table.blocks()[table.Block(candidates_[i].entry)];
      build_rows_[i] = table.Row(candidates_[i].entry);
    }
    for (size_t c = 0; c < probe_width; ++c) {
      GatherVectorValues(batch.columns[c], probe_rows_.data(), count, &scratch_->pairs.columns[c]);
    }
    for (size_t c = probe_width; c < scratch_->pairs.columns.size(); ++c) {
      GatherBlockValues(build_blocks_.data(), build_rows_.data(), count, static_cast<int>(c - probe_width),
                        &scratch_->pairs.columns[c]);
    }
    const SelectionVector* selection = nullptr;
    uint32_t passed = count;
    if (residual != nullptr) {
      TESSERA_RETURN_IF_ERROR(residual->Filter(scratch_->pairs, nullptr, passing));
      selection = passing;
      passed = passing->count;
    }
    const bool mark_build = TracksBuildMatches(spec.type);
    for (uint32_t p = 0; p < passed; ++p) {
      const uint32_t i = selection != nullptr ? selection->rows[p] : p;
      (*matched)[candidates_[i].probe_row] = 1;
      if (mark_build) table.MarkMatched(candidates_[i].entry);
    }
    if (WritesPairs(spec.type)) {
      TESSERA_RETURN_IF_ERROR(writer.Append(op_->OutputColumns(scratch_->pairs), selection, count));
    }
    candidates_.clear();
    return absl::OkStatus();
  }

  // Left / full outer join: probe rows without a match, with NULL build columns.
  absl::Status WriteUnmatched(const Batch& batch, const SelectionVector& rows, size_t probe_width,
                              VectorBlockWriter& writer) {
    for (ColumnVector& column : scratch_->pairs.columns) column.ResetOwned(rows.count);
    scratch_->pairs.size = rows.count;
    for (size_t c = 0; c < probe_width; ++c) {
      GatherVectorValues(batch.columns[c], rows.rows.data(), rows.count, &scratch_->pairs.columns[c]);
    }
    for (size_t c = probe_width; c < scratch_->pairs.columns.size(); ++c) {
      for (uint32_t i = 0; i < rows.count; ++i) scratch_->pairs.columns[c].SetNull(i);
    }
    return writer.Append(op_->OutputColumns(scratch_->pairs), nullptr, rows.count);
  }

  HashJoinProbeOperator* op_;
  uint32_t block_index_;
  const WorkOrderContext* context_ = nullptr;  // set by Execute
  std::vector<Candidate> candidates_;
  std::vector<uint32_t> probe_rows_;
  std::vector<const BlockView*> build_blocks_;
  std::vector<uint32_t> build_rows_;
  std::unique_ptr<ProbeScratch> scratch_;    // the operator's scratch while the work order runs; given back when done
  std::optional<VectorBlockWriter> writer_;  // the output writer of Probe
  BatchSinkWriter* sink_writer_ = nullptr;   // with the operator's sink (FeedSink), instead of writer_
  int64_t sunk_rows_ = 0;                    // rows handed to sink_writer_
  bool capped_ = false;                      // Probe stopped at the operator's output row cap
};

// After the last probe: the build rows of one build block that no probe row matched (right / full outer join,
// with NULL probe columns; right anti join), or that some probe row matched (right semi join).
class HashJoinProbeOperator::BuildRowsByMatchWorkOrder : public WorkOrder {
 public:
  BuildRowsByMatchWorkOrder(HashJoinProbeOperator* op, uint32_t block)
      : WorkOrder(op->index(), -1), op_(op), block_(block), keep_matched_(op->spec_.type == HashJoinType::kRightSemi) {}

  absl::Status Execute(const WorkOrderContext&) override {
    const JoinHashTable& table = *op_->table_;
    const BlockView& block = table.blocks()[block_];
    const size_t probe_width = op_->scan_.types.size();
    Batch pairs;
    pairs.columns.resize(op_->pair_types_.size());
    for (size_t c = 0; c < op_->pair_types_.size(); ++c) pairs.columns[c].set_type(op_->pair_types_[c]);
    VectorBlockWriter writer(op_->output_.get(), op_->builders_.get());
    std::vector<uint32_t> rows(kVectorSize);
    const std::vector<const BlockView*> blocks(kVectorSize, &block);
    const uint32_t row_count = block.row_count();
    for (uint32_t first = 0; first < row_count; first += kVectorSize) {
      const uint32_t end = std::min(row_count, first + kVectorSize);
      uint32_t count = 0;
      for (uint32_t r = first; r < end; ++r) {
        if (table.IsMatched(block_, r) == keep_matched_) rows[count++] = r;
      }
      if (count == 0) continue;
      for (ColumnVector& column : pairs.columns) column.ResetOwned(count);
      pairs.size = count;
      for (size_t c = 0; c < probe_width; ++c) {
        for (uint32_t i = 0; i < count; ++i) pairs.columns[c].SetNull(i);
      }
      for (size_t c = probe_width; c < pairs.columns.size(); ++c) {
        GatherBlockValues(blocks.data(), rows.data(), count, static_cast<int>(c - probe_width), &pairs.columns[c]);
      }
      TESSERA_RETURN_IF_ERROR(writer.Append(op_->OutputColumns(pairs), nullptr, count));
    }
    rows_in_ = row_count;
    TESSERA_RETURN_IF_ERROR(writer.Flush());
    rows_out_ = writer.rows_written();
    return absl::OkStatus();
  }

 private:
  HashJoinProbeOperator* op_;
  uint32_t block_;
  const bool keep_matched_;
};

bool HashJoinProbeOperator::SetOutputRowCap(int64_t rows) {
  if (TracksBuildMatches(spec_.type)) return false;  // a build row's match may be in the rows not probed
  output_row_cap_ = rows;
  return true;
}

std::vector<const ColumnVector*> HashJoinProbeOperator::OutputColumns(const Batch& pairs) const {
  std::vector<const ColumnVector*> columns;
  columns.reserve(output_pair_columns_.size());
  for (int c : output_pair_columns_) columns.push_back(&pairs.columns[c]);
  return columns;
}

HashJoinProbeOperator::HashJoinProbeOperator(BlockInput probe, ScanSpec scan, std::shared_ptr<JoinHashTable> table,
                                             HashJoinSpec spec, BufferPool* pool)
    : RelationalOperator("HashJoinProbe"),
      probe_(std::move(probe)),
      scan_(std::move(scan)),
      table_(std::move(table)),
      spec_(std::move(spec)),
      pool_(pool) {
  scan_.Prepare();
  pair_types_ = scan_.types;
  pair_column_join_.assign(scan_.types.size(), -1);
  for (const ColumnSchema& column : table_->build().schema()) {
    pair_types_.push_back(column.type);
    pair_column_join_.push_back(0);
  }
  const int probe_width = static_cast<int>(scan_.types.size());
  std::vector<int> build_columns;
  if (EmitsBuildColumns(spec_.type)) {
    for (int c : spec_.build_output) build_columns.push_back(probe_width + c);
  }
  if (!spec_.build_columns_first) output_pair_columns_ = spec_.probe_output;
  output_pair_columns_.insert(output_pair_columns_.end(), build_columns.begin(), build_columns.end());
  if (spec_.build_columns_first) {
    output_pair_columns_.insert(output_pair_columns_.end(), spec_.probe_output.begin(), spec_.probe_output.end());
  }
  MakeOutput(spec_.output_names);
  if (TracksBuildMatches(spec_.type)) table_->TrackMatches();
}

HashJoinProbeOperator::~HashJoinProbeOperator() = default;

void HashJoinProbeOperator::MakeOutput(std::vector<std::string> output_names) {
  // output_names follow the output order.
  std::vector<ColumnSchema> schema;
  for (size_t i = 0; i < output_pair_columns_.size(); ++i) {
    schema.push_back({std::move(output_names[i]), pair_types_[output_pair_columns_[i]], false, {}});
  }
  output_ = std::make_shared<TemporaryRelation>(std::move(schema), pool_);
  builders_ = std::make_unique<BlockBuilderPool>(output_.get());
}

bool HashJoinProbeOperator::CanChainInnerJoin() const {
  return spec_.type == HashJoinType::kInner && spec_.residual == nullptr && !spec_.build_columns_first;
}

void HashJoinProbeOperator::ChainInnerJoin(std::shared_ptr<JoinHashTable> table, std::vector<int> key_pair_columns,
                                           std::vector<int> output_pair_columns,
                                           std::vector<std::string> output_names) {
  CHECK(CanChainInnerJoin());
  CHECK(sink_ == nullptr);  // the sink takes the output columns as they are
  CHECK(!key_pair_columns.empty());
  const int join = joins();
  ChainedJoin chained{std::move(table), std::move(key_pair_columns), pair_width()};
  for (const ColumnSchema& column : chained.table->build().schema()) {
    pair_types_.push_back(column.type);
    pair_column_join_.push_back(join);
  }
  chained_.push_back(std::move(chained));
  output_pair_columns_ = std::move(output_pair_columns);
  MakeOutput(std::move(output_names));
}

void HashJoinProbeOperator::FeedSink(BatchSink* sink, const std::vector<int>& sink_columns) {
  CHECK(CanFeedSink());
  std::vector<int> output_pair_columns;
  std::vector<std::string> names;
  for (int c : sink_columns) {
    output_pair_columns.push_back(output_pair_columns_[c]);
    names.push_back(output_->schema()[c].name);
  }
  output_pair_columns_ = std::move(output_pair_columns);
  MakeOutput(std::move(names));
  sink_ = sink;
}

void HashJoinProbeOperator::OnAllWorkOrdersFinished() {
  table_.reset();
  chained_.clear();
  idle_scratch_.clear();
  builders_->Clear();
}

int64_t HashJoinProbeOperator::EstimatedWorkOrders() const {
  return probe_.is_table() ? static_cast<int64_t>(probe_.table_block_count()) : -1;
}

std::string HashJoinBuildOperator::RuntimeDetail() const {
  std::string detail = table_->HasDirectIndex() ? "direct index" : "hash buckets";
  if (table_->LipFilterIsExact()) {
    absl::StrAppend(&detail, ", exact LIP filter");
  } else if (!table_->HasDirectIndex() && table_->key_filter() != nullptr) {
    absl::StrAppend(&detail, ", exact key filter");
  }
  return detail;
}

void HashJoinProbeOperator::ApplyKeyFilterInScan() {
  key_filter_decided_ = true;
  int direct = table_->HasDirectIndex() ? 1 : 0;
  for (const ChainedJoin& join : chained_) direct += join.table->HasDirectIndex() ? 1 : 0;
  runtime_detail_ = absl::StrCat("direct look-ups in ", direct, " of ", joins(), joins() == 1 ? " join" : " joins");
  // A key filter is a bit vector, 32-64 times smaller than the direct index it stands for: testing a row's key
  // there costs less than looking its entry up, so the scan tests every join's keys first (the most selective
  // filter first, and one that drops almost nothing is left out: block_scanner.h), and only the rows with a
  // match in every join are looked up.
  int filters = 0;
  auto apply = [&](const JoinHashTable& table, int batch_column) {
    std::shared_ptr<const RuntimeFilter> filter = table.key_filter();
    if (filter == nullptr) return;
    for (const RuntimeFilterProbe& probe : scan_.runtime_filters) {
      if (probe.filter == filter) return;  // the table's LIP filter is its key filter, already applied here
    }
    RuntimeFilterProbe probe{std::move(filter), {batch_column}, /*member=*/true};
    probe.optional = true;  // the join looks every row it lets through up anyway
    scan_.runtime_filters.push_back(std::move(probe));
    ++filters;
  };
  const int probe_width = static_cast<int>(scan_.types.size());
  if ((spec_.type == HashJoinType::kInner || spec_.type == HashJoinType::kSemi) && spec_.probe_keys.size() == 1 &&
      spec_.probe_keys[0]->kind == ExpressionKind::kColumn) {
    apply(*table_, spec_.probe_keys[0]->column_index);
  }
  for (const ChainedJoin& join : chained_) {  // inner joins; a key that is a probe column can be tested in the scan
    if (join.key_pair_columns.size() == 1 && join.key_pair_columns[0] < probe_width) {
      apply(*join.table, join.key_pair_columns[0]);
    }
  }
  if (filters > 0)
    absl::StrAppend(&runtime_detail_, ", ", filters, filters == 1 ? " key filter" : " key filters", " in the scan");
}

bool HashJoinProbeOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!key_filter_decided_) ApplyKeyFilterInScan();
  const bool probes_done =
      probe_blocks_.IssueAll(probe_, out, [&](uint32_t block, int node) -> std::unique_ptr<WorkOrder> {
        ++probes_issued_;
        return std::make_unique<ProbeWorkOrder>(this, block, node);
      });
  if (!TracksBuildMatches(spec_.type) || unmatched_issued_) return probes_done;
  // Which build rows matched is known only once every probe has finished.
  if (!probes_done || probes_finished_.load() != probes_issued_) return false;
  for (uint32_t b = 0; b < table_->blocks().size(); ++b) {
    out->push_back(std::make_unique<BuildRowsByMatchWorkOrder>(this, b));
  }
  unmatched_issued_ = true;
  return true;
}

}  // namespace tessera
