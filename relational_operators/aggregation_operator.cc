#include "relational_operators/aggregation_operator.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "expressions/expression_evaluator.h"

namespace tessera {

namespace {

// Above this many groups (over all partial tables) the final merge runs as one work order per hash partition.
constexpr size_t kParallelMergeGroups = 50000;

bool IsExactOrderable(const Type& type) {
  switch (type.id()) {
    case TypeId::kInteger:
    case TypeId::kDate:
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
    case TypeId::kBoolean:
    case TypeId::kDecimal:
      return true;
    default:
      return false;
  }
}

}  // namespace

// Folds batches into a partial table: evaluates the group keys and the aggregates' arguments, then updates. One
// per work order (the evaluators hold per-batch results).
class AggregationOperator::Folder {
 public:
  explicit Folder(const AggregationOperator& op) {
    const AggregationSpec& spec = op.spec_;
    for (const auto& g : spec.group_by) group_evaluators_.push_back(std::make_unique<ExpressionEvaluator>(*g));
    for (size_t c = 0; c < spec.calls.size(); ++c) {
      // A call that reads another's state (AggregationTable::StateSources) needs no argument.
      const bool evaluated = spec.calls[c].argument != nullptr && op.state_sources_[c] == c;
      argument_evaluators_.push_back(evaluated ? std::make_unique<ExpressionEvaluator>(*spec.calls[c].argument)
                                               : nullptr);
    }
    keys_.resize(group_evaluators_.size());
    arguments_.assign(argument_evaluators_.size(), nullptr);
  }

  // Folds the `selected` rows of `batch` that `selection` names (all of its rows without one) into `table`.
  absl::Status Fold(const Batch& batch, const SelectionVector* selection, uint32_t selected, AggregationTable& table) {
    for (size_t g = 0; g < keys_.size(); ++g) {
      TESSERA_ASSIGN_OR_RETURN(keys_[g], group_evaluators_[g]->Evaluate(batch, selection));
    }
    for (size_t a = 0; a < arguments_.size(); ++a) {
      if (argument_evaluators_[a]) {
        TESSERA_ASSIGN_OR_RETURN(arguments_[a], argument_evaluators_[a]->Evaluate(batch, selection));
      }
    }
    return table.Update(keys_, arguments_, selection, batch.size, selected);
  }

 private:
  std::vector<std::unique_ptr<ExpressionEvaluator>> group_evaluators_, argument_evaluators_;
  std::vector<const ColumnVector*> keys_;
  std::vector<const ColumnVector*> arguments_;
};

class AggregationOperator::UpdateWorkOrder : public WorkOrder {
 public:
  UpdateWorkOrder(AggregationOperator* op, uint32_t block, int node)
      : WorkOrder(op->index(), node), op_(op), block_index_(block) {
    if (!op->input_.is_table()) DeclareConsumedBlock(0, block);
  }

  absl::Status Execute(const WorkOrderContext& context) override {
    absl::Status status = Run(context);
    op_->completed_.fetch_add(1);
    return status;
  }

 private:
  absl::Status Run(const WorkOrderContext& context) {
    TESSERA_ASSIGN_OR_RETURN(PinnedBlock block, op_->input_.Pin(block_index_));
    rows_in_ = block.view.row_count();
    BlockScanner scanner(op_->scan_);
    scanner.SetBlockRows(block.deleted, block.ordinal);
    if (scanner.CanSkip(block.view)) return absl::OkStatus();
    AggregationTable& table = *op_->PartialTable(context.worker_index);
    if (op_->expected_groups_ >= kPresizeMinGroups && table.group_count() == 0) {
      // Work orders spread the blocks evenly over the workers; a tenth more than a worker's share covers the
      // imbalance. Without the room (budget), the table grows as it goes.
      const size_t share = op_->expected_groups_ / std::max(1, context.worker_count);
      table.Presize(std::min(op_->expected_groups_, share + share / 10)).IgnoreError();
    }
    // The table's arrays are charged by the pool as they grow; what it holds on the heap (strings, DISTINCT
    // sets) is charged once per block.
    const size_t bytes_before = table.HeapBytes();
    absl::Status status = Fold(block, scanner, table);
    const size_t bytes_after = table.HeapBytes();
    absl::Status charged = op_->ChargeGrowth(bytes_after > bytes_before ? bytes_after - bytes_before : 0);
    return status.ok() ? charged : status;
  }

  absl::Status Fold(const PinnedBlock& block, BlockScanner& scanner, AggregationTable& table) {
    Folder folder(*op_);
    while (true) {
      TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(block.view));
      if (!more) break;
      const uint32_t selected = scanner.selected_count();
      if (selected == 0) continue;
      TESSERA_RETURN_IF_ERROR(folder.Fold(scanner.batch(), scanner.selection(), selected, table));
    }
    return absl::OkStatus();
  }

  AggregationOperator* op_;
  uint32_t block_index_;
};

// A worker's fused input (OpenWriter): folds the vectors of the producer work orders running on the worker into
// its partial table, and charges the table's heap growth once per work order.
class AggregationOperator::FusedWriter : public BatchSinkWriter {
 public:
  FusedWriter(AggregationOperator* op, AggregationTable* table)
      : op_(op), table_(table), folder_(*op), heap_bytes_(table->HeapBytes()) {}

  absl::Status Consume(const Batch& batch) override {
    if (batch.size == 0) return absl::OkStatus();
    rows_ += batch.size;
    return folder_.Fold(batch, nullptr, batch.size, *table_);
  }

  absl::Status Finish() override {
    op_->fed_rows_.fetch_add(rows_);
    rows_ = 0;
    const size_t bytes = table_->HeapBytes();
    const size_t growth = bytes > heap_bytes_ ? bytes - heap_bytes_ : 0;
    heap_bytes_ = bytes;
    return op_->ChargeGrowth(growth);
  }

 private:
  AggregationOperator* op_;
  AggregationTable* table_;
  Folder folder_;
  size_t heap_bytes_;  // of the table when last charged
  int64_t rows_ = 0;   // consumed since the last Finish
};

// Merges one hash partition of the partial tables (or all of them: partition -1) and writes its groups.
// Partitions are disjoint, so finalize work orders run in parallel.
class AggregationOperator::FinalizeWorkOrder : public WorkOrder {
 public:
  FinalizeWorkOrder(AggregationOperator* op, int partition)
      : WorkOrder(op->index(), -1), op_(op), partition_(partition) {}

  absl::Status Execute(const WorkOrderContext&) override {
    if (partition_ <= 0) rows_in_ = op_->fed_rows_.load();  // the rows a producer folded in (fused input)
    return AggregationTable::MergeAndWrite(op_->spec_, op_->partial_tables_, partition_, op_->pool_, op_->output_.get(),
                                           &rows_out_);
  }

 private:
  AggregationOperator* op_;
  const int partition_;
};
AggregationOperator::AggregationOperator(BlockInput input, ScanSpec scan, AggregationSpec spec, BufferPool* pool)
    : RelationalOperator(spec.group_by.empty() ? "ScalarAggregate" : "HashAggregate"),
      input_(std::move(input)),
      scan_(std::move(scan)),
      spec_(std::move(spec)),
      pool_(pool),
      state_sources_(AggregationTable::StateSources(spec_)) {
  scan_.Prepare();
  std::vector<ColumnSchema> schema;
  size_t n = 0;
  for (const auto& g : spec_.group_by) schema.push_back({spec_.output_names[n++], g->result_type, false, {}});
  for (const auto& call : spec_.calls) schema.push_back({spec_.output_names[n++], call.result_type, false, {}});
  output_ = std::make_shared<TemporaryRelation>(std::move(schema), pool);
}

AggregationOperator::~AggregationOperator() { ReleaseTables(); }

absl::StatusOr<std::unique_ptr<AggregationOperator>> AggregationOperator::Create(BlockInput input, ScanSpec scan,
                                                                                 AggregationSpec spec,
                                                                                 BufferPool* pool) {
  for (const auto& call : spec.calls) {
    if (call.distinct && call.kind != AggregateKind::kCount && call.kind != AggregateKind::kSum &&
        call.kind != AggregateKind::kAvg) {
      return absl::UnimplementedError("only COUNT, SUM and AVG support DISTINCT here (MIN / MAX ignore it)");
    }
    if (call.kind == AggregateKind::kCountStar || (call.distinct && call.kind == AggregateKind::kCount)) continue;
    if (call.argument == nullptr) return absl::InvalidArgumentError("aggregate without an argument");
    if (HasContainerState(call) && !call.distinct) continue;  // quantiles, string_agg, sketches: typed by the binder
    const Type& type = call.argument->result_type;
    const bool numeric = type.id() == TypeId::kDouble || IsExactOrderable(type);
    if ((call.kind == AggregateKind::kSum || call.kind == AggregateKind::kAvg) &&
        !(numeric && type.id() != TypeId::kDate && type.id() != TypeId::kTimestamp && type.id() != TypeId::kBoolean)) {
      return absl::InvalidArgumentError(absl::StrCat("cannot compute SUM/AVG of ", type.ToString()));
    }
    if ((call.kind == AggregateKind::kMin || call.kind == AggregateKind::kMax) && !numeric && !type.IsString()) {
      return absl::InvalidArgumentError(absl::StrCat("cannot compute MIN/MAX of ", type.ToString()));
    }
  }
  return std::unique_ptr<AggregationOperator>(
      new AggregationOperator(std::move(input), std::move(scan), std::move(spec), pool));
}

AggregationTable* AggregationOperator::PartialTable(int worker_index) {
  std::lock_guard<std::mutex> lock(tables_mutex_);
  if (static_cast<size_t>(worker_index) >= partial_tables_.size()) partial_tables_.resize(worker_index + 1);
  if (partial_tables_[worker_index] == nullptr)
    partial_tables_[worker_index] = std::make_unique<AggregationTable>(spec_, pool_);
  return partial_tables_[worker_index].get();
}

bool AggregationOperator::AcceptsFusedInput() const {
  return scan_.filter == nullptr && scan_.runtime_filters.empty() && !input_.is_table();
}

BatchSinkWriter* AggregationOperator::OpenWriter(int worker_index) {
  AggregationTable* table = PartialTable(worker_index);
  std::lock_guard<std::mutex> lock(tables_mutex_);
  if (static_cast<size_t>(worker_index) >= fused_writers_.size()) fused_writers_.resize(worker_index + 1);
  std::unique_ptr<FusedWriter>& writer = fused_writers_[worker_index];
  if (writer == nullptr) writer = std::make_unique<FusedWriter>(this, table);
  return writer.get();
}

int64_t AggregationOperator::EstimatedWorkOrders() const {
  if (fed_by_producer_) return 1;
  return input_.is_table() ? static_cast<int64_t>(input_.table_block_count()) + 1 : -1;
}

bool AggregationOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  const bool all_issued = blocks_.IssueAll(input_, out, [&](uint32_t block, int node) -> std::unique_ptr<WorkOrder> {
    ++issued_;
    return std::make_unique<UpdateWorkOrder>(this, block, node);
  });
  if (finalize_issued_) return true;
  if (all_issued && completed_.load() == issued_) {
    // Every update has finished (their completions were processed before this call), so the partial tables
    // are complete and only read from now on. Many groups: merge in parallel hash partitions.
    size_t groups = 0;
    for (const auto& partial : partial_tables_) groups += partial == nullptr ? 0 : partial->group_count();
    if (spec_.group_by.empty() || groups < kParallelMergeGroups) {
      out->push_back(std::make_unique<FinalizeWorkOrder>(this, -1));
    } else {
      for (int p = 0; p < static_cast<int>(AggregationTable::kPartitions); ++p) {
        out->push_back(std::make_unique<FinalizeWorkOrder>(this, p));
      }
    }
    finalize_issued_ = true;
    return true;
  }
  return false;
}

absl::Status AggregationOperator::ChargeGrowth(size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  TESSERA_RETURN_IF_ERROR(pool_->Reserve(MemoryKind::kBlob, bytes));
  charged_bytes_.fetch_add(bytes);
  return absl::OkStatus();
}

void AggregationOperator::ReleaseTables() {
  fused_writers_.clear();
  partial_tables_.clear();
  const size_t charged = charged_bytes_.exchange(0);
  if (charged > 0) pool_->Release(MemoryKind::kBlob, charged);
}

void AggregationOperator::OnAllWorkOrdersFinished() { ReleaseTables(); }

}  // namespace tessera
