#include "query_execution/plan_builder.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "distributed/cluster.h"
#include "distributed/gather_operator.h"
#include "distributed/repartition_operator.h"
#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/logical_window.h"
#include "optimizer/partial_aggregation.h"
#include "query_execution/memory_estimate.h"
#include "query_execution/plan_distribution.h"
#include "query_execution/plan_fragment.h"
#include "relational_operators/aggregation_operator.h"
#include "relational_operators/bloom_filter.h"
#include "relational_operators/exact_filter_build_operator.h"
#include "relational_operators/hash_join_operator.h"
#include "relational_operators/insert_operator.h"
#include "relational_operators/select_operator.h"
#include "relational_operators/series_operator.h"
#include "relational_operators/sort_operator.h"
#include "relational_operators/union_all_operator.h"
#include "relational_operators/values_operator.h"
#include "relational_operators/window_operator.h"

namespace tessera {
namespace {

namespace lp = optimizer;

// EXPLAIN's detail of an aggregation that merges the ranks' partial aggregates on a cluster's master.
constexpr char kMergeDetail[] = "merges the ranks' partial aggregates";

// The output of a logical subtree as its consumer sees it: blocks to read (a base table or an operator's
// relation), which of their columns form the subtree's output columns, and a filter still to apply (over the
// output columns). Fusing table scans and filters into the consumer avoids materializing them.
struct Stream {
  BlockInput input;
  int producer = -1;  // operator writing `input`'s relation; -1 for base tables
  std::vector<int> block_columns;
  std::vector<Type> types;
  std::vector<std::string> names;
  std::unique_ptr<BoundExpression> filter;
  double rows = 0;    // estimated rows of the logical subtree
  std::string table;  // the base table's name when producer == -1
  // Runtime filters still to apply (LIP Bloom filters, exact semi / anti join filters): the consumer's scan
  // applies them. Their keys are block columns of `input`, loaded as extra batch columns after the stream's
  // own when the stream does not carry them (so projections may drop a key column).
  struct PendingRuntimeFilter {
    RuntimeFilterProbe probe;
    std::vector<int> key_block_columns;
    std::vector<Type> key_types;
  };
  std::vector<PendingRuntimeFilter> runtime_filters;
  std::vector<int> filter_builders;  // operators building those filters: the consumer must start after them
  std::vector<int> lip_filter_ids;   // LIP filters among them, whose builders may not exist yet

  void MovePendingFiltersTo(Stream* other) {
    other->runtime_filters = std::move(runtime_filters);
    other->filter_builders = std::move(filter_builders);
    other->lip_filter_ids = std::move(lip_filter_ids);
  }

  // For EXPLAIN: what the consuming operator reads directly ("scan lineitem, filter"), "" for a plain relation.
  std::string ScanDetail() const {
    std::string detail = producer < 0 ? absl::StrCat("scan ", table) : "";
    if (filter != nullptr) absl::StrAppend(&detail, detail.empty() ? "" : ", ", "filter");
    if (!runtime_filters.empty()) {
      absl::StrAppend(&detail, detail.empty() ? "" : ", ", runtime_filters.size(), " runtime filters");
    }
    return detail;
  }

  ScanSpec TakeScanSpec() {
    ScanSpec spec;
    spec.block_columns = block_columns;
    spec.types = types;
    spec.filter = std::move(filter);
    for (PendingRuntimeFilter& pending : runtime_filters) {
      for (size_t k = 0; k < pending.key_block_columns.size(); ++k) {
        auto loaded = std::find(spec.block_columns.begin(), spec.block_columns.end(), pending.key_block_columns[k]);
        if (loaded == spec.block_columns.end()) {
          spec.block_columns.push_back(pending.key_block_columns[k]);
          spec.types.push_back(pending.key_types[k]);
          loaded = spec.block_columns.end() - 1;
        }
        pending.probe.key_columns.push_back(static_cast<int>(loaded - spec.block_columns.begin()));
      }
      spec.runtime_filters.push_back(std::move(pending.probe));
    }
    runtime_filters.clear();
    return spec;
  }
};

std::unique_ptr<BoundExpression> AndTogether(std::unique_ptr<BoundExpression> a, std::unique_ptr<BoundExpression> b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  std::vector<std::unique_ptr<BoundExpression>> terms;
  terms.push_back(std::move(a));
  terms.push_back(std::move(b));
  return MakeConjunction(ExpressionKind::kAnd, std::move(terms));
}

class Builder {
 public:
  Builder(StorageManager* storage, BufferPool* pool, distributed::Cluster* cluster = nullptr)
      : storage_(storage),
        pool_(pool),
        cluster_(cluster),
        distribution_(
            cluster != nullptr ? cluster->size() : 1,
            [this](const lp::LogicalOperator& node) { return estimator_.EstimateRows(node); },
            [this](const BoundExpression& expression, const lp::LogicalOperator& input) {
              return estimator_.DistinctValues(expression, input);
            },
            cluster != nullptr ? cluster->split_groups() : PlanDistribution::kDefaultSplitGroups),
        dag_(std::make_unique<ExecutionDag>()) {}

  // A rank's fragment (plan_fragment.h): its broadcast inputs' placeholders read the received relations.
  void AddInputs(const std::vector<FragmentInput>& inputs) {
    for (const FragmentInput& input : inputs) {
      const int index = dag_->AddOperator(std::make_unique<distributed::BroadcastInputOperator>(input.relation),
                                          absl::StrCat(input.relation->row_count(), " rows from the master"));
      Estimate(index, static_cast<double>(input.relation->row_count()));
      std::vector<std::string> names;
      for (const ColumnSchema& column : input.relation->schema()) names.push_back(column.name);
      Stream stream = FromOperator(index, std::move(names));
      stream.rows = static_cast<double>(input.relation->row_count());
      prebuilt_.emplace(input.placeholder, std::move(stream));
    }
  }

  absl::StatusOr<std::unique_ptr<ExecutionDag>> Build(const lp::LogicalOperator& plan) {
    const lp::LogicalOperator* root = &plan;
    if (Distributing()) {
      rewritten_.push_back(distribution_.TopNOnRanks(distribution_.SplitAggregates(plan.Clone())));
      root = rewritten_.back().get();
      NoteLipPublishers(*root);
    }
    TESSERA_ASSIGN_OR_RETURN(Stream stream, Visit(*root));
    // The result must be a materialized relation without a pending filter, in output column order.
    TESSERA_ASSIGN_OR_RETURN(int result, Materialize(std::move(stream)));
    return Finish(result);
  }

  absl::StatusOr<std::unique_ptr<ExecutionDag>> BuildInsert(const lp::LogicalOperator& plan, InsertTarget target) {
    TESSERA_ASSIGN_OR_RETURN(Stream stream, Visit(plan));
    // The insert reads the query's output columns directly from a base table or a relation; a pending filter is
    // applied by a Select first, so that the insert's input rows are the query's output rows (its errors number
    // rows by their position in the input blocks).
    if (stream.filter != nullptr || !stream.runtime_filters.empty()) {
      std::vector<std::string> names = stream.names;
      const double rows = stream.rows;
      TESSERA_ASSIGN_OR_RETURN(int producer, Materialize(std::move(stream)));
      stream = FromOperator(producer, std::move(names));
      stream.rows = rows;
    }
    const TableDescriptor& table = target.load->table();
    std::vector<std::unique_ptr<BoundExpression>> values;
    std::vector<int> sources(table.columns.size(), -1);
    for (size_t i = 0; i < target.target_columns.size(); ++i) sources[target.target_columns[i]] = static_cast<int>(i);
    std::vector<Type> table_types;
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const ColumnSchema& column = table.columns[c];
      table_types.push_back(column.type);
      if (sources[c] < 0) {
        values.push_back(MakeConstant(column.default_value.value_or(Value::Null(column.type))));
        continue;
      }
      std::unique_ptr<BoundExpression> value = MakeColumn(sources[c], stream.types[sources[c]]);
      if (stream.types[sources[c]] != column.type) value = MakeCast(std::move(value), column.type);
      values.push_back(std::move(value));
    }
    std::string detail = absl::StrCat("into ", table.name);
    if (std::string scan = stream.ScanDetail(); !scan.empty()) absl::StrAppend(&detail, ", ", scan);
    const double rows = stream.rows;
    ScanSpec spec = stream.TakeScanSpec();
    auto op = std::make_unique<InsertOperator>(stream.input, std::move(spec), std::move(values), std::move(sources),
                                               target.load, pool_);
    const int index = dag_->AddOperator(std::move(op), std::move(detail));
    // The new blocks stay in memory (pending) until the commit.
    Estimate(index, rows, OperatorEstimate::Structure::kNone, EstimatedBytes(rows, EstimatedRowBytes(table_types)));
    Connect(stream, index, 0, /*pipelining=*/true);
    return Finish(index);
  }

 private:
  absl::StatusOr<std::unique_ptr<ExecutionDag>> Finish(int result) {
    if (dag_->size() > kMaxPlanOperators) {
      return absl::InvalidArgumentError(
          absl::StrCat("query plan too large: ", dag_->size(), " operators (limit ", kMaxPlanOperators, ")"));
    }
    dag_->set_result_operator(result);
    for (const auto& [id, slot] : lip_filters_) {
      if (slot.builder < 0)
        return absl::InternalError(absl::StrCat("LIP filter #", id, " has no hash join building it"));
    }
    dag_->set_memory_estimate(EstimateQueryMemory(*dag_));
    return std::move(dag_);
  }

  absl::StatusOr<Stream> Visit(const lp::LogicalOperator& node) {
    if (auto prebuilt = prebuilt_.extract(&node); !prebuilt.empty()) return std::move(prebuilt.mapped());
    if (Distributing() && distribution_.Of(node).placement == Placement::kPartitioned) return Gather(node);
    TESSERA_ASSIGN_OR_RETURN(Stream stream, VisitNode(node));
    // A shared merge read by a second copy (PlanDistribution::SplitAggregates) has its detail already.
    if (Distributing() && distribution_.MergesOnMaster(node) && stream.producer >= 0 &&
        !absl::StrContains(dag_->detail(stream.producer), kMergeDetail)) {
      dag_->set_detail(stream.producer, JoinDetails({dag_->detail(stream.producer), kMergeDetail}));
    }
    stream.rows = estimator_.EstimateRows(node);
    return stream;
  }

  // Records what operator `index` is expected to hold (memory_estimate.h); its output relation's row width comes
  // from the relation's schema.
  void Estimate(int index, double output_rows,
                OperatorEstimate::Structure structure = OperatorEstimate::Structure::kNone, int64_t structure_bytes = 0,
                bool retains_inputs = false) {
    OperatorEstimate estimate;
    estimate.structure = structure;
    estimate.output_rows = output_rows;
    estimate.structure_bytes = structure_bytes;
    estimate.retains_inputs = retains_inputs;
    if (std::shared_ptr<TemporaryRelation> output = dag_->op(index)->output(); output != nullptr) {
      std::vector<Type> types;
      for (const ColumnSchema& column : output->schema()) types.push_back(column.type);
      estimate.output_bytes = EstimatedBytes(output_rows, EstimatedRowBytes(types));
    }
    dag_->set_estimate(index, estimate);
  }

  absl::StatusOr<Stream> VisitNode(const lp::LogicalOperator& node) {
    switch (node.kind()) {
      case lp::LogicalOperatorKind::kTableScan:
        return VisitTableScan(node.As<lp::TableScan>());
      case lp::LogicalOperatorKind::kFilter: {
        TESSERA_ASSIGN_OR_RETURN(Stream child, Visit(*node.children[0]));
        child.filter = AndTogether(std::move(child.filter), node.As<lp::Filter>().predicate->Clone());
        return child;
      }
      case lp::LogicalOperatorKind::kProject:
        return VisitProject(node.As<lp::Project>());
      case lp::LogicalOperatorKind::kJoin:
        return VisitJoin(node.As<lp::Join>());
      case lp::LogicalOperatorKind::kAggregate:
        return VisitSharedAggregate(node.As<lp::Aggregate>());
      case lp::LogicalOperatorKind::kSort:
        return VisitSort(&node.As<lp::Sort>(), nullptr);
      case lp::LogicalOperatorKind::kLimit: {
        const auto& limit = node.As<lp::Limit>();
        if (node.children[0]->kind() == lp::LogicalOperatorKind::kSort) {
          return VisitSort(&node.children[0]->As<lp::Sort>(), &limit);
        }
        return VisitSort(nullptr, &limit);
      }
      case lp::LogicalOperatorKind::kSetOperation:
        return VisitSetOperation(node.As<lp::SetOperation>());
      case lp::LogicalOperatorKind::kWindow:
        return VisitWindow(node.As<lp::Window>());
      case lp::LogicalOperatorKind::kDistinct: {
        TESSERA_ASSIGN_OR_RETURN(Stream child, Visit(*node.children[0]));
        return Distinct(std::move(child), estimator_.EstimateRows(node));
      }
      case lp::LogicalOperatorKind::kValues: {
        const auto& values = node.As<lp::Values>();
        std::vector<ColumnSchema> schema;
        std::vector<std::string> names;
        for (const lp::OutputColumn& column : values.output()) {
          schema.push_back({column.name, column.type, false, {}});
          names.push_back(column.name);
        }
        int index = dag_->AddOperator(std::make_unique<ValuesOperator>(std::move(schema), values.rows, pool_),
                                      Counted(values.rows.size(), "row"));
        Estimate(index, static_cast<double>(values.rows.size()));
        return FromOperator(index, names);
      }
      case lp::LogicalOperatorKind::kSeries: {
        const auto& series = node.As<lp::Series>();
        const std::string name = series.output()[0].name;
        int index = dag_->AddOperator(
            std::make_unique<SeriesOperator>(std::vector<ColumnSchema>{{name, Type::BigInt(), false, {}}}, series.start,
                                             series.step, series.count, pool_),
            Counted(static_cast<size_t>(series.count), "row"));
        Estimate(index, static_cast<double>(series.count));
        return FromOperator(index, {name});
      }
      default:
        return absl::UnimplementedError(absl::StrCat("the query engine cannot execute ", node.Describe(), " yet"));
    }
  }

  // Whether an aggregation's estimated group count is good enough to size its partial tables up front: one
  // column of a base table read without filters, whose estimate is the column's distinct count (an estimate over
  // joins or filters may be far too high, and the room would be charged for nothing).
  static bool GroupCountKnown(const HashJoinProbeOperator* feeding_probe, const Stream& child, const ScanSpec& scan,
                              const AggregationSpec& spec) {
    return feeding_probe == nullptr && child.input.is_table() && scan.filter == nullptr &&
           scan.runtime_filters.empty() && spec.group_by.size() == 1 &&
           spec.group_by[0]->kind == ExpressionKind::kColumn;
  }

  // The hash aggregation `spec` over `child` (DISTINCT or GROUP BY): fused into the probe that feeds it where it
  // can be, its partial tables presized when the group count is known, its memory estimated from `groups` groups
  // of `group_bytes` each.
  absl::StatusOr<Stream> AddAggregation(Stream child, AggregationSpec spec, double groups, int64_t group_bytes,
                                        std::string detail, const std::vector<std::string>& names) {
    HashJoinProbeOperator* feeding_probe = FusableProbe(child);
    ScanSpec scan = child.TakeScanSpec();
    const std::vector<int> scan_columns = scan.block_columns;
    const bool groups_known = GroupCountKnown(feeding_probe, child, scan, spec);
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<AggregationOperator> op,
                             AggregationOperator::Create(child.input, std::move(scan), std::move(spec), pool_));
    if (groups_known) op->SetExpectedGroups(static_cast<size_t>(groups));
    FuseIntoProbe(feeding_probe, child.producer, op.get(), scan_columns, &detail);
    int index = dag_->AddOperator(std::move(op), std::move(detail));
    Estimate(index, groups, OperatorEstimate::Structure::kAggregationTable, EstimatedBytes(groups, group_bytes));
    Connect(child, index, 0, /*pipelining=*/true);
    return FromOperator(index, names);
  }

  // DISTINCT is a hash aggregation grouping by every column, without aggregates; `groups` its estimated output.
  absl::StatusOr<Stream> Distinct(Stream child, double groups) {
    AggregationSpec spec;
    for (size_t c = 0; c < child.types.size(); ++c)
      spec.group_by.push_back(MakeColumn(static_cast<int>(c), child.types[c]));
    spec.output_names = child.names;
    std::vector<std::string> names = child.names;
    std::string detail = JoinDetails({"distinct", child.ScanDetail()});
    const int64_t group_bytes = EstimatedRowBytes(child.types) + kAggregationEntryOverheadBytes;
    return AddAggregation(std::move(child), std::move(spec), groups, group_bytes, std::move(detail), names);
  }

  // "1 key", "2 keys".
  static std::string Counted(size_t count, std::string_view noun) {
    return absl::StrCat(count, " ", std::string(noun), count == 1 ? "" : "s");
  }

  static std::string JoinDetails(std::initializer_list<std::string> parts) {
    std::string joined;
    for (const std::string& part : parts) {
      if (!part.empty()) absl::StrAppend(&joined, joined.empty() ? "" : ", ", part);
    }
    return joined;
  }

  // The children of `set`, with those that are UNION ALLs replaced by their own branches, left to right (of a UNION
  // without ALL too: its duplicates are removed above all the branches). Not on a cluster, where a nested UNION
  // ALL may be a part the ranks run, nor for one already planned.
  void CollectUnionAllBranches(const lp::SetOperation& set, std::vector<const lp::LogicalOperator*>* out) const {
    for (const auto& child : set.children) {
      if (child->kind() == lp::LogicalOperatorKind::kSetOperation && !Distributing() &&
          !prebuilt_.contains(child.get())) {
        const auto& nested = child->As<lp::SetOperation>();
        if (nested.operation == lp::SetOperationType::kUnion && nested.all) {
          CollectUnionAllBranches(nested, out);
          continue;
        }
      }
      out->push_back(child.get());
    }
  }

  absl::StatusOr<Stream> VisitSetOperation(const lp::SetOperation& set) {
    if (set.operation != lp::SetOperationType::kUnion) {
      const std::string name = set.operation == lp::SetOperationType::kIntersect ? "INTERSECT" : "EXCEPT";
      if (set.all) {
        return absl::UnimplementedError(
            absl::StrCat(name, " ALL is not supported yet (INTERSECT and EXCEPT without ALL are)"));
      }
      // Lowered by the optimizer (optimizer/rules/set_operation_lowering.h) unless the rule is off.
      return absl::UnimplementedError(
          absl::StrCat(name,
                       " runs only as the aggregation that rule set_operation_lowering makes of it, and the "
                       "rule is disabled"));
    }
    // The branches of nested UNION ALLs (GROUP BY ROLLUP's sets, optimizer/grouping_sets.h) are inputs of one
    // operator: a chain of two-input operators would copy the first branch's rows once per level.
    std::vector<const lp::LogicalOperator*> branches;
    CollectUnionAllBranches(set, &branches);
    std::vector<Stream> children;
    for (const lp::LogicalOperator* branch : branches) {
      TESSERA_ASSIGN_OR_RETURN(Stream stream, Visit(*branch));
      children.push_back(std::move(stream));
    }
    std::vector<BlockInput> inputs;
    std::vector<ScanSpec> scans;
    double rows = 0;
    std::string detail;
    for (Stream& child : children) {
      rows += child.rows;
      detail = JoinDetails({detail, child.ScanDetail()});
      inputs.push_back(child.input);
      scans.push_back(child.TakeScanSpec());
    }
    std::vector<std::string> names = children[0].names;
    int index = dag_->AddOperator(std::make_unique<UnionAllOperator>(std::move(inputs), std::move(scans), names, pool_),
                                  std::move(detail));
    Estimate(index, rows);
    for (size_t i = 0; i < children.size(); ++i) Connect(children[i], index, static_cast<int>(i), /*pipelining=*/true);
    Stream united = FromOperator(index, names);
    united.rows = rows;
    if (set.all) return united;
    return Distinct(std::move(united), estimator_.EstimateRows(set));
  }

  Stream FromOperator(int index, std::vector<std::string> names) {
    Stream stream;
    std::shared_ptr<TemporaryRelation> relation = dag_->op(index)->output();
    stream.input = BlockInput::FromRelation(relation);
    stream.producer = index;
    for (size_t c = 0; c < relation->schema().size(); ++c) {
      stream.block_columns.push_back(static_cast<int>(c));
      stream.types.push_back(relation->schema()[c].type);
    }
    stream.names = std::move(names);
    return stream;
  }

  void Connect(const Stream& stream, int consumer, int input, bool pipelining) {
    if (stream.producer >= 0) dag_->AddEdge(stream.producer, consumer, input, pipelining);
    for (int builder : stream.filter_builders) dag_->AddEdge(builder, consumer, DagEdge::kOrderingOnly, false);
    for (int id : stream.lip_filter_ids) {
      LipFilterSlot& slot = lip_filters_[id];
      if (slot.builder >= 0) {
        dag_->AddEdge(slot.builder, consumer, DagEdge::kOrderingOnly, false);
      } else {
        slot.waiting_readers.push_back(consumer);
      }
    }
  }

  // A LIP filter (logical plan ids: Join::lip_filter_id, TableScan::lip_filters): the scans that read it are
  // mostly planned before the join that builds it (those of ImpliedLipFilters also after it), so readers wait
  // here until the builder exists.
  struct LipFilterSlot {
    std::shared_ptr<LipFilter> filter;
    int builder = -1;
    std::vector<int> waiting_readers;
  };
  LipFilterSlot& LipSlot(int id, const std::string& description) {
    LipFilterSlot& slot = lip_filters_[id];
    if (slot.filter == nullptr) slot.filter = std::make_shared<LipFilter>(description);
    return slot;
  }

  absl::StatusOr<Stream> VisitTableScan(const lp::TableScan& scan) {
    Stream stream;
    stream.input = BlockInput::FromTable(scan.table, storage_);
    stream.table = scan.table->name;
    for (int c : scan.columns) {
      // DELETE / UPDATE read the hidden row-id column (catalog/row_deletions.h) that the block scanner makes.
      stream.block_columns.push_back(IsRowIdColumn(scan.table->columns[c]) ? kRowIdBlockColumn : c);
      stream.types.push_back(scan.table->columns[c].type);
      stream.names.push_back(scan.table->columns[c].name);
    }
    if (scan.filter) stream.filter = scan.filter->Clone();
    for (const lp::TableScan::LipFilterUse& use : scan.lip_filters) {
      if (!LipFilterComplete(use.filter_id)) continue;
      Stream::PendingRuntimeFilter pending;
      pending.probe.filter = LipSlot(use.filter_id, use.build_keys).filter;
      pending.probe.optional = true;
      for (int column : use.key_columns) {
        pending.key_block_columns.push_back(scan.columns[column]);
        pending.key_types.push_back(scan.table->columns[scan.columns[column]].type);
      }
      stream.runtime_filters.push_back(std::move(pending));
      stream.lip_filter_ids.push_back(use.filter_id);
    }
    return stream;
  }

  // The distribution step (distributed/README.md, "Which query shapes are distributed"), on the master of a
  // cluster: the plan's aggregations over partitioned inputs are split into partial aggregates and their merge
  // (PlanDistribution::SplitAggregates), then the largest subtrees that PlanDistribution calls partitioned run on
  // every rank (Gather); everything else runs on the master, replicated tables read from its full copy.
  bool Distributing() const {
    return cluster_ != nullptr && cluster_->is_master() && cluster_->size() > 1 && !on_ranks_;
  }

  // Which LIP filters are built from a partitioned build side (each rank's filter then holds its part's keys).
  void NoteLipPublishers(const lp::LogicalOperator& node) {
    if (node.kind() == lp::LogicalOperatorKind::kJoin && node.As<lp::Join>().lip_filter_id >= 0) {
      partial_lip_filters_[node.As<lp::Join>().lip_filter_id] =
          distribution_.Of(*node.children[1]).placement == Placement::kPartitioned;
    }
    for (const auto& child : node.children) NoteLipPublishers(*child);
  }

  // Whether a scan planned now may read LIP filter `id`: a filter built on the master from one rank's part of a
  // partitioned build side is complete only for the rows of that part, i.e. inside the fragment that builds it.
  bool LipFilterComplete(int id) const {
    // A broadcast input is planned before the fragment that reads it: it must not wait for the fragment's joins.
    if (broadcast_lip_filters_ != nullptr && !broadcast_lip_filters_->contains(id)) return false;
    auto partial = partial_lip_filters_.find(id);
    if (partial == partial_lip_filters_.end() || !partial->second) return true;
    return on_ranks_ && fragment_lip_filters_.contains(id);
  }

  // `fragment` (partitioned) run on every rank: the master's own part planned here, united with the other ranks'
  // parts, which a gather exchange receives (query_execution/plan_fragment.h).
  absl::StatusOr<Stream> Gather(const lp::LogicalOperator& fragment) {
    // Broadcast inputs first: computed here (with their own exchanges), then sent whole to every rank.
    // The fragment's inputs in the order its encoding meets them (plan_fragment.h numbers them so).
    std::vector<const lp::LogicalOperator*> fragment_inputs;
    for (const auto& child : fragment.children) CollectFragmentInputs(*child, &fragment_inputs);
    std::vector<std::shared_ptr<TemporaryRelation>> relations;
    std::vector<int> producers;
    for (const lp::LogicalOperator* input : fragment_inputs) {
      if (!distribution_.Broadcast(*input)) continue;
      absl::flat_hash_set<int> published;
      CollectPublishedLipFilters(*input, &published);
      broadcast_lip_filters_ = &published;
      absl::StatusOr<Stream> planned = Visit(*input);
      broadcast_lip_filters_ = nullptr;
      TESSERA_RETURN_IF_ERROR(planned.status());
      std::vector<std::string> names = planned->names;
      TESSERA_ASSIGN_OR_RETURN(int producer, Materialize(*std::move(planned)));
      producers.push_back(producer);
      relations.push_back(dag_->op(producer)->output());
      prebuilt_.emplace(input, FromOperator(producer, std::move(names)));
    }
    // Then the hash splits: every rank (this one too) splits its part of each input, and the fragment reads
    // the partition each rank received.
    std::vector<int> exchange_tags(fragment_inputs.size(), 0);
    std::vector<std::shared_ptr<distributed::PartitionRelease>> partitions;
    for (size_t i = 0; i < fragment_inputs.size(); ++i) {
      if (distribution_.Broadcast(*fragment_inputs[i])) continue;
      distributed::StreamTags tags = {cluster_->NewRequestTag(), cluster_->NewRequestTag()};
      partitions.push_back(std::make_shared<distributed::PartitionRelease>(cluster_, tags.data));
      TESSERA_RETURN_IF_ERROR(
          HashSplit(*fragment_inputs[i], distribution_.Repartition(*fragment_inputs[i]), tags, partitions.back()));
      exchange_tags[i] = tags.data;
    }
    TESSERA_ASSIGN_OR_RETURN(std::string request, EncodePlanFragment(fragment, fragment_inputs, exchange_tags));
    std::vector<ColumnSchema> schema;
    for (const lp::OutputColumn& column : fragment.output()) schema.push_back({column.name, column.type, false, {}});
    // Added before the master's part: the QueryManager hands out the later operators' work orders first, so the
    // master computes its part while the ranks compute theirs (gather_operator.h).
    const int gather = dag_->AddOperator(
        std::make_unique<distributed::GatherOperator>(std::move(request), std::move(schema), cluster_, pool_,
                                                      std::move(relations), std::move(partitions)),
        absl::StrCat("exchange: gather ", FragmentSummary(fragment), " from ranks 1..", cluster_->size() - 1));
    // Blocking input edges: the gather starts once the inputs are complete, and as a consumer that never declares
    // their blocks consumed it keeps them until it has sent them (QueryManager::CountConsumedBlock).
    for (size_t i = 0; i < producers.size(); ++i) {
      dag_->AddEdge(producers[i], gather, static_cast<int>(i), /*pipelining=*/false);
    }
    // No edge from the hash splits: the gather holds no worker while it waits, so it sends the fragment at once and
    // each rank's fragment starts as soon as its own partition is complete (ExchangeResults::Take), not one
    // round trip after the master's split has ended.
    // The optimizer's statistics are the cluster's (engine/distributed_statements.h, RefreshClusterStatistics).
    const double ranks = cluster_->size();
    const double rows = estimator_.EstimateRows(fragment);
    Estimate(gather, rows * (ranks - 1) / ranks);
    on_ranks_ = true;
    fragment_lip_filters_.clear();
    CollectPublishedLipFilters(fragment, &fragment_lip_filters_);
    absl::StatusOr<Stream> planned = Visit(fragment);
    on_ranks_ = false;
    TESSERA_RETURN_IF_ERROR(planned.status());
    Stream local = *std::move(planned);
    Stream remote = FromOperator(gather, local.names);
    std::vector<std::string> names = local.names;
    std::string detail = JoinDetails({local.ScanDetail(), "partitioned: rank 0 part + gathered parts"});
    std::vector<BlockInput> inputs = {local.input, remote.input};
    std::vector<ScanSpec> scans;
    scans.push_back(local.TakeScanSpec());
    scans.push_back(remote.TakeScanSpec());
    const int united = dag_->AddOperator(
        std::make_unique<UnionAllOperator>(std::move(inputs), std::move(scans), names, pool_), std::move(detail));
    Estimate(united, rows);
    Connect(local, united, 0, /*pipelining=*/true);
    Connect(remote, united, 1, /*pipelining=*/true);
    Stream stream = FromOperator(united, std::move(names));
    stream.rows = rows;
    return stream;
  }

  static void CollectPublishedLipFilters(const lp::LogicalOperator& node, absl::flat_hash_set<int>* published) {
    if (node.kind() == lp::LogicalOperatorKind::kJoin && node.As<lp::Join>().lip_filter_id >= 0) {
      published->insert(node.As<lp::Join>().lip_filter_id);
    }
    for (const auto& child : node.children) CollectPublishedLipFilters(*child, published);
  }

  // The build sides in `fragment` that PlanDistribution broadcasts and the inputs it repartitions (not those
  // inside another one).
  void CollectFragmentInputs(const lp::LogicalOperator& node, std::vector<const lp::LogicalOperator*>* inputs) {
    if (distribution_.Broadcast(node) || distribution_.Repartition(node) >= 0) {
      inputs->push_back(&node);
      return;
    }
    for (const auto& child : node.children) CollectFragmentInputs(*child, inputs);
  }

  // The hash-split exchange of `input` (partitioned, without broadcast inputs) by output column `key_column`
  // (distributed/repartition_operator.h): every other rank runs `input` as a plan fragment and splits it, the
  // master's own part is planned here and split by an operator whose output is the master's partition (what
  // later plans of `input` read); `tags` are the exchange's, `release` its partitions' record. The split inputs
  // of `input` itself (a nested split) are split first, and its fragment reads their partitions on every rank.
  absl::Status HashSplit(const lp::LogicalOperator& input, int key_column, distributed::StreamTags tags,
                         std::shared_ptr<distributed::PartitionRelease> release) {
    std::vector<const lp::LogicalOperator*> inner;
    for (const auto& child : input.children) CollectFragmentInputs(*child, &inner);
    std::vector<int> inner_tags;
    std::vector<std::shared_ptr<distributed::PartitionRelease>> inner_partitions;
    for (const lp::LogicalOperator* split : inner) {
      if (distribution_.Broadcast(*split)) {
        return absl::InternalError("the input of a hash split reads a broadcast input");
      }
      distributed::StreamTags split_tags = {cluster_->NewRequestTag(), cluster_->NewRequestTag()};
      inner_partitions.push_back(std::make_shared<distributed::PartitionRelease>(cluster_, split_tags.data));
      TESSERA_RETURN_IF_ERROR(
          HashSplit(*split, distribution_.Repartition(*split), split_tags, inner_partitions.back()));
      inner_tags.push_back(split_tags.data);
    }
    TESSERA_ASSIGN_OR_RETURN(std::string request, EncodePlanFragment(input, inner, inner_tags));
    // The master's part reads only the LIP filters built inside it, as the ranks' fragment does.
    absl::flat_hash_set<int> outer_lip_filters = std::move(fragment_lip_filters_);
    fragment_lip_filters_.clear();
    CollectPublishedLipFilters(input, &fragment_lip_filters_);
    on_ranks_ = true;
    absl::StatusOr<Stream> planned = Visit(input);
    on_ranks_ = false;
    fragment_lip_filters_ = std::move(outer_lip_filters);
    TESSERA_RETURN_IF_ERROR(planned.status());
    Stream local = *std::move(planned);
    std::vector<ColumnSchema> schema;
    for (const lp::OutputColumn& column : input.output()) schema.push_back({column.name, column.type, false, {}});
    const double rows = estimator_.EstimateRows(input);
    std::vector<std::string> names = local.names;
    const std::string detail = JoinDetails(
        {local.ScanDetail(), absl::StrCat("exchange: hash split ", FragmentSummary(input), " by ",
                                          input.output()[key_column].name, " across ranks 0..", cluster_->size() - 1)});
    const BlockInput block_input = local.input;
    ScanSpec spec = local.TakeScanSpec();
    const int split =
        dag_->AddOperator(std::make_unique<distributed::RepartitionOperator>(
                              std::move(request), block_input, std::move(spec), key_column, std::move(schema), tags,
                              cluster_, pool_, std::move(release), std::move(inner_partitions)),
                          detail);
    Estimate(split, rows / cluster_->size());
    Connect(local, split, 0, /*pipelining=*/true);
    Stream stream = FromOperator(split, std::move(names));
    stream.rows = rows / cluster_->size();
    prebuilt_.emplace(&input, std::move(stream));
    return absl::OkStatus();
  }

  // For EXPLAIN: what a fragment computes, e.g. "aggregate(2 keys, 8 calls) of join(lineitem, orders)".
  std::string FragmentSummary(const lp::LogicalOperator& node, bool root = true) const {
    if (!root && distribution_.Broadcast(node)) return "broadcast";
    if (!root && distribution_.Repartition(node) >= 0) return "hash split";
    switch (node.kind()) {
      case lp::LogicalOperatorKind::kTableScan: {
        const auto& scan = node.As<lp::TableScan>();
        return absl::StrCat(scan.table->name, " (", scan.columns.size(), " columns", scan.filter ? ", filter" : "",
                            ")");
      }
      case lp::LogicalOperatorKind::kAggregate: {
        const auto& aggregate = node.As<lp::Aggregate>();
        return absl::StrCat("aggregate(", aggregate.group_by.size(), " keys, ", aggregate.aggregates.size(),
                            " calls) of ", FragmentSummary(*node.children[0], false));
      }
      case lp::LogicalOperatorKind::kJoin:
        return absl::StrCat(absl::AsciiStrToLower(lp::JoinTypeName(node.As<lp::Join>().join_type)), " join(",
                            FragmentSummary(*node.children[0], false), ", ", FragmentSummary(*node.children[1], false),
                            ")");
      case lp::LogicalOperatorKind::kValues:
        return "values";
      case lp::LogicalOperatorKind::kLimit:
        return absl::StrCat("top ", node.As<lp::Limit>().limit.value_or(0), " of ",
                            FragmentSummary(*node.children[0], false));
      default: {
        std::vector<std::string> children;
        for (const auto& child : node.children) children.push_back(FragmentSummary(*child, false));
        return absl::StrJoin(children, ", ");
      }
    }
  }

  // A Select over `stream` with the given projections; returns the new operator's index.
  int AddSelect(Stream stream, std::vector<std::unique_ptr<BoundExpression>> projections,
                std::vector<std::string> names) {
    std::string detail = stream.ScanDetail();
    ScanSpec spec = stream.TakeScanSpec();
    auto op = std::make_unique<SelectOperator>(stream.input, std::move(spec), std::move(projections), names, pool_);
    int index = dag_->AddOperator(std::move(op), std::move(detail));
    Estimate(index, stream.rows);
    Connect(stream, index, 0, /*pipelining=*/true);
    return index;
  }

  // Makes `stream` a plain relation (no pending filter, columns in order) and returns its producer.
  absl::StatusOr<int> Materialize(Stream stream) {
    bool plain = stream.producer >= 0 && stream.filter == nullptr && stream.runtime_filters.empty();
    for (size_t c = 0; plain && c < stream.block_columns.size(); ++c)
      plain = stream.block_columns[c] == static_cast<int>(c);
    if (plain && stream.block_columns.size() == dag_->op(stream.producer)->output()->schema().size()) {
      return stream.producer;
    }
    std::vector<std::unique_ptr<BoundExpression>> columns;
    for (size_t c = 0; c < stream.types.size(); ++c)
      columns.push_back(MakeColumn(static_cast<int>(c), stream.types[c]));
    std::vector<std::string> names = stream.names;
    return AddSelect(std::move(stream), std::move(columns), std::move(names));
  }

  absl::StatusOr<Stream> VisitProject(const lp::Project& project) {
    TESSERA_ASSIGN_OR_RETURN(Stream child, Visit(*project.children[0]));
    // A projection of plain columns over a not-yet-materialized stream just narrows the stream.
    bool only_columns = true;
    for (const auto& e : project.expressions) only_columns &= e->kind == ExpressionKind::kColumn;
    if (only_columns) {
      Stream narrowed;
      narrowed.input = child.input;
      narrowed.producer = child.producer;
      narrowed.table = child.table;
      narrowed.rows = child.rows;
      narrowed.filter = std::move(child.filter);
      child.MovePendingFiltersTo(&narrowed);
      // The filter refers to the child's columns: keep them all loaded, and select through block_columns below.
      if (narrowed.filter == nullptr) {
        for (const auto& e : project.expressions) {
          narrowed.block_columns.push_back(child.block_columns[e->column_index]);
          narrowed.types.push_back(child.types[e->column_index]);
        }
        narrowed.names = project.names;
        return narrowed;
      }
      child.filter = std::move(narrowed.filter);
      narrowed.MovePendingFiltersTo(&child);
    }
    std::vector<std::unique_ptr<BoundExpression>> projections;
    for (const auto& e : project.expressions) projections.push_back(e->Clone());
    child.rows = estimator_.EstimateRows(project);
    int index = AddSelect(std::move(child), std::move(projections), project.names);
    return FromOperator(index, project.names);
  }

  absl::StatusOr<Stream> VisitJoin(const lp::Join& join) {
    HashJoinType type;
    switch (join.join_type) {
      case lp::JoinType::kInner:
        type = HashJoinType::kInner;
        break;
      case lp::JoinType::kLeftOuter:
        type = HashJoinType::kLeftOuter;
        break;
      case lp::JoinType::kFullOuter:
        type = HashJoinType::kFullOuter;
        break;
      case lp::JoinType::kSemi:
        type = HashJoinType::kSemi;
        break;
      case lp::JoinType::kAnti:
        type = HashJoinType::kAnti;
        break;
      case lp::JoinType::kCross:
        type = HashJoinType::kInner;
        break;
      default:
        return absl::UnimplementedError(absl::StrCat("the query engine cannot execute ", join.Describe(), " yet"));
    }
    // Without equality keys the hash join degenerates into a nested-loop join (one chain holding every build
    // row); the planner puts the small side (e.g. a scalar subquery's single row) on the build side.
    TESSERA_ASSIGN_OR_RETURN(Stream left, Visit(*join.children[0]));
    TESSERA_ASSIGN_OR_RETURN(Stream right, Visit(*join.children[1]));
    if (join.exact_filter.has_value()) return ExactFilterJoin(join, std::move(left), std::move(right));
    const size_t left_width = left.types.size();
    // Output (and output_names) order: left columns, then right columns unless the join outputs left only.
    std::vector<std::string> names = left.names;
    if (EmitsBuildColumns(type)) names.insert(names.end(), right.names.begin(), right.names.end());
    // A join built on its left side (optimizer/rules/build_side_swap.h) decides its rows from match flags in the
    // hash table (right outer / semi / anti hash joins).
    const bool swap = join.build_left;
    if (swap) {
      if (type != HashJoinType::kLeftOuter && type != HashJoinType::kSemi &&
          (type != HashJoinType::kAnti || join.null_aware)) {
        return absl::InternalError(
            absl::StrCat("a join built on its left side must be a left outer, semi or anti join: ", join.Describe()));
      }
      type = type == HashJoinType::kLeftOuter ? HashJoinType::kRightOuter
             : type == HashJoinType::kSemi    ? HashJoinType::kRightSemi
                                              : HashJoinType::kRightAnti;
    }
    Stream& probe_stream = swap ? right : left;
    Stream& build_stream = swap ? left : right;
    const auto& probe_keys = swap ? join.right_keys : join.left_keys;
    const auto& build_keys = swap ? join.left_keys : join.right_keys;
    const size_t probe_width = probe_stream.types.size();
    const size_t build_width = build_stream.types.size();

    // Build side: a relation holding the build child's columns followed by its key values.
    std::vector<std::unique_ptr<BoundExpression>> build_columns;
    std::vector<std::string> build_names;
    for (size_t c = 0; c < build_width; ++c) {
      build_columns.push_back(MakeColumn(static_cast<int>(c), build_stream.types[c]));
      build_names.push_back(build_stream.names[c]);
    }
    std::vector<int> key_columns;
    for (const auto& key : build_keys) {
      if (key->kind == ExpressionKind::kColumn) {
        key_columns.push_back(key->column_index);
      } else {
        key_columns.push_back(static_cast<int>(build_columns.size()));
        build_columns.push_back(key->Clone());
        build_names.push_back("key");
      }
    }
    const double build_rows = build_stream.rows;
    int build_select = AddSelect(std::move(build_stream), std::move(build_columns), build_names);
    auto table = std::make_shared<JoinHashTable>(dag_->op(build_select)->output(), key_columns, pool_);
    int build = dag_->AddOperator(std::make_unique<HashJoinBuildOperator>(table, join.enforce_single_row),
                                  Counted(key_columns.size(), "key"));
    Estimate(build, build_rows, OperatorEstimate::Structure::kHashTable, EstimatedBytes(build_rows, kHashEntryBytes),
             /*retains_inputs=*/true);
    dag_->AddEdge(build_select, build, 0, /*pipelining=*/true);
    if (join.lip_filter_id >= 0) {  // publish the LIP filter; scans planned earlier wait for this build
      LipFilterSlot& slot = LipSlot(join.lip_filter_id, "");
      std::vector<int> filter_keys = join.lip_filter_key_pairs;
      if (filter_keys.empty()) {  // a plan made without the pairs (all of them)
        for (size_t pair = 0; pair < key_columns.size(); ++pair) filter_keys.push_back(static_cast<int>(pair));
      }
      table->PublishLipFilter(slot.filter, std::move(filter_keys));
      slot.builder = build;
      for (int reader : slot.waiting_readers) dag_->AddEdge(build, reader, DagEdge::kOrderingOnly, false);
      slot.waiting_readers.clear();
    }

    if (swap && join.filter_probe_by_build_keys) AddSwappedProbeFilter(probe_keys, *table, &probe_stream);
    if (HashJoinProbeOperator* chain = ChainableProbe(join, type, probe_stream, probe_keys)) {
      return ChainJoin(join, chain, probe_stream, probe_keys, table, build, static_cast<int>(build_width),
                       std::move(names));
    }

    HashJoinSpec spec;
    spec.type = type;
    spec.null_aware = join.null_aware;
    spec.build_columns_first = swap;
    for (const auto& key : probe_keys) spec.probe_keys.push_back(key->Clone());
    if (type != HashJoinType::kRightSemi && type != HashJoinType::kRightAnti) {
      for (size_t c = 0; c < probe_width; ++c) spec.probe_output.push_back(static_cast<int>(c));
    }
    if (EmitsBuildColumns(type)) {
      for (size_t c = 0; c < build_width; ++c) spec.build_output.push_back(static_cast<int>(c));
    }
    spec.output_names = names;
    std::string scan_detail = probe_stream.ScanDetail();
    std::string detail =
        JoinDetails({swap ? lp::JoinTypeName(join.join_type) + " (left side built)" : lp::JoinTypeName(join.join_type),
                     scan_detail});
    ScanSpec scan = probe_stream.TakeScanSpec();
    // The residual is over left ++ right columns; the probe's pair layout is [probe scan columns (the probe
    // stream's, then runtime-filter keys loaded after them)..., build relation columns (the build stream's
    // first)...].
    if (join.residual) {
      spec.residual = join.residual->Clone();
      const int scan_width = static_cast<int>(scan.types.size());
      const int lw = static_cast<int>(left_width);
      optimizer::RemapColumns(spec.residual.get(), [&](int c) {
        if (swap) return c < lw ? scan_width + c : c - lw;
        return c >= lw ? c - lw + scan_width : c;
      });
    }
    auto probe =
        std::make_unique<HashJoinProbeOperator>(probe_stream.input, std::move(scan), table, std::move(spec), pool_);
    probe_scan_details_[dag_->size()] = std::move(scan_detail);
    int probe_index = dag_->AddOperator(std::move(probe), std::move(detail));
    Estimate(probe_index, estimator_.EstimateRows(join));
    std::erase(probe_stream.lip_filter_ids, join.lip_filter_id);  // the probe waits for its own build anyway
    Connect(probe_stream, probe_index, 0, /*pipelining=*/true);
    dag_->AddEdge(build, probe_index, 1, /*pipelining=*/false);
    return FromOperator(probe_index, names);
  }

  // A join built on its left side drops probe rows whose keys are not among the build keys before the hash probe
  // (Join::filter_probe_by_build_keys); the keys are plain columns.
  void AddSwappedProbeFilter(const std::vector<std::unique_ptr<BoundExpression>>& probe_keys, JoinHashTable& table,
                             Stream* probe_stream) {
    auto filter = std::make_shared<LipFilter>("build keys");
    std::vector<int> filter_keys;
    Stream::PendingRuntimeFilter pending;
    for (const auto& key : probe_keys) {
      filter_keys.push_back(static_cast<int>(filter_keys.size()));
      pending.key_block_columns.push_back(probe_stream->block_columns[key->column_index]);
      pending.key_types.push_back(probe_stream->types[key->column_index]);
    }
    table.PublishLipFilter(filter, std::move(filter_keys));
    pending.probe.filter = std::move(filter);
    pending.probe.optional = true;
    probe_stream->runtime_filters.push_back(std::move(pending));
  }

  // An aggregate that computes the same rows as one planned before (Aggregate::shared_result, set by
  // optimizer/rules/aggregate_sharing.h) is not planned again: the operator that computes it feeds both
  // consumers, and its relation is released when the last of them has finished. The copy's LIP filter numbers
  // (Aggregate::shared_lip_filters) then stand for the planned one's filters, unless a reader of one of them was
  // planned already (it waits for a filter of its own): the copy is planned then. On a cluster's master only
  // aggregates planned in the same place (the ranks' fragment or the master) are shared.
  absl::StatusOr<Stream> VisitSharedAggregate(const lp::Aggregate& aggregate) {
    if (aggregate.shared_result < 0) return VisitAggregate(aggregate);
    // The partial and merge aggregates PlanDistribution::SplitAggregates makes are new nodes, not shared, but for
    // a shared aggregate's merges on the master, which keep its shared_result.
    const SharingKey key{on_ranks_, aggregate.shared_result};
    const std::vector<int>& published = aggregate.shared_lip_filters;
    if (auto planned = aggregates_.find(key); planned != aggregates_.end()) {
      const SharedAggregate& shared = planned->second;
      bool aliasable = published.size() == shared.published_lip_filters.size();
      for (int id : published) aliasable = aliasable && !lip_filters_.contains(id);  // no reader waits for it
      if (aliasable) {
        for (size_t i = 0; i < published.size(); ++i) {
          if (published[i] != shared.published_lip_filters[i]) {
            lip_filters_[published[i]] = lip_filters_[shared.published_lip_filters[i]];
          }
        }
        return FromOperator(shared.producer, shared.names);
      }
    }
    TESSERA_ASSIGN_OR_RETURN(Stream stream, VisitAggregate(aggregate));
    if (stream.producer >= 0) aggregates_.emplace(key, SharedAggregate{stream.producer, stream.names, published});
    return stream;
  }

  // The probe operator that `join` (planned with `type`, probing `probe_stream` with `probe_keys`) can be chained
  // into (HashJoinProbeOperator::ChainInnerJoin), or null: an inner join without residual whose probe keys are
  // plain columns, probing exactly the output of an inner probe without residual (no filter or runtime filter
  // applied to it in between; a projection to some of its columns is fine). Such a stream is fed to this join
  // by a pipelining edge: chaining runs both joins in the producer's work orders instead.
  HashJoinProbeOperator* ChainableProbe(const lp::Join& join, HashJoinType type, const Stream& probe_stream,
                                        const std::vector<std::unique_ptr<BoundExpression>>& probe_keys) {
    if (type != HashJoinType::kInner || join.join_type != lp::JoinType::kInner || join.residual != nullptr ||
        probe_keys.empty()) {
      return nullptr;
    }
    for (const auto& key : probe_keys) {
      if (key->kind != ExpressionKind::kColumn) return nullptr;
    }
    if (probe_stream.producer < 0 || probe_stream.filter != nullptr || !probe_stream.runtime_filters.empty() ||
        !probe_stream.filter_builders.empty() || !probe_stream.lip_filter_ids.empty() ||
        !probe_scan_details_.contains(probe_stream.producer)) {
      return nullptr;
    }
    auto* producer = static_cast<HashJoinProbeOperator*>(dag_->op(probe_stream.producer));
    return producer->CanChainInnerJoin() ? producer : nullptr;
  }

  // The inner-chain probe whose output rows `stream` is, if an aggregation over the stream can be fed by it
  // directly (HashJoinProbeOperator::FeedSink): no filter or runtime filter applied in between (a projection is
  // fine). Null otherwise. Call before the stream's scan spec is taken.
  HashJoinProbeOperator* FusableProbe(const Stream& stream) {
    if (stream.producer < 0 || stream.filter != nullptr || !stream.runtime_filters.empty() ||
        !stream.filter_builders.empty() || !stream.lip_filter_ids.empty() ||
        !probe_scan_details_.contains(stream.producer)) {
      return nullptr;
    }
    auto* probe = static_cast<HashJoinProbeOperator*>(dag_->op(stream.producer));
    return probe->CanFeedSink() ? probe : nullptr;
  }

  // Fuses `aggregation` into `probe` (FusableProbe of its input stream, produced by operator `probe_index`; null:
  // nothing to do): the probe's work orders fold their rows into the aggregation's partial tables instead of
  // writing them for the aggregation to read back, which saves a write, a seal and a scan of every joined row.
  // `scan_columns`: the aggregation scan's columns of the probe's output. Notes it in both operators' details.
  void FuseIntoProbe(HashJoinProbeOperator* probe, int probe_index, AggregationOperator* aggregation,
                     const std::vector<int>& scan_columns, std::string* aggregation_detail) {
    if (probe == nullptr || !aggregation->AcceptsFusedInput()) return;
    probe->FeedSink(aggregation, scan_columns);
    aggregation->SetFedByProducer();
    OperatorEstimate estimate = dag_->estimate(probe_index);
    estimate.output_bytes = 0;  // no temporary blocks
    dag_->set_estimate(probe_index, estimate);
    dag_->set_detail(probe_index, JoinDetails({dag_->detail(probe_index), "rows aggregated in the probe"}));
    *aggregation_detail = JoinDetails({*aggregation_detail, "fed by the probe"});
  }

  // Chains `join` into `chain` (ChainableProbe): its hash table `table` (built by operator `build`) is probed in
  // the chain's work orders, and the chain's output becomes the join's: the probe stream's columns, then the
  // first `build_width` columns of the build relation.
  absl::StatusOr<Stream> ChainJoin(const lp::Join& join, HashJoinProbeOperator* chain, const Stream& probe_stream,
                                   const std::vector<std::unique_ptr<BoundExpression>>& probe_keys,
                                   std::shared_ptr<JoinHashTable> table, int build, int build_width,
                                   std::vector<std::string> names) {
    const int index = probe_stream.producer;
    // The probe stream's column c is the chain's output column block_columns[c].
    auto pair_column = [&](int c) { return chain->output_pair_columns()[probe_stream.block_columns[c]]; };
    std::vector<int> key_pair_columns;
    for (const auto& key : probe_keys) key_pair_columns.push_back(pair_column(key->column_index));
    std::vector<int> output;
    for (size_t c = 0; c < probe_stream.types.size(); ++c) output.push_back(pair_column(static_cast<int>(c)));
    const int first_build_column = chain->pair_width();
    for (int c = 0; c < build_width; ++c) output.push_back(first_build_column + c);
    chain->ChainInnerJoin(std::move(table), std::move(key_pair_columns), std::move(output), names);
    dag_->set_detail(index,
                     JoinDetails({absl::StrCat(chain->joins(), " chained INNER joins"), probe_scan_details_[index]}));
    Estimate(index, estimator_.EstimateRows(join));
    // The chain waits for every table it probes (a LIP filter's ordering edge may already say so).
    bool ordered = false;
    for (const DagEdge& edge : dag_->edges()) ordered |= edge.producer == build && edge.consumer == index;
    if (!ordered) dag_->AddEdge(build, index, chain->joins(), /*pipelining=*/false);
    return FromOperator(index, std::move(names));
  }

  // A semi / anti join with an exact filter (Join::exact_filter): an ExactFilterBuild operator sets the bits from
  // the build side, and the join becomes a runtime filter of the probe-side stream (no hash table, no probe
  // operator): whatever consumes the stream applies it in its scan, after the build has finished.
  absl::StatusOr<Stream> ExactFilterJoin(const lp::Join& join, Stream left, Stream right) {
    const lp::Join::ExactFilterRange& range = *join.exact_filter;
    const BoundExpression& left_key = *join.left_keys[0];
    const BoundExpression& right_key = *join.right_keys[0];
    TESSERA_ASSIGN_OR_RETURN(
        std::unique_ptr<ExactFilter> created,
        ExactFilter::Create(right_key.result_type, range.min, range.max, range.from_inner_join, pool_));
    std::shared_ptr<ExactFilter> filter = std::move(created);
    std::string detail =
        JoinDetails({absl::StrCat("exact filter [", range.min, ", ", range.max, "]"), right.ScanDetail()});
    const double build_rows = right.rows;
    ScanSpec scan = right.TakeScanSpec();
    int build = dag_->AddOperator(
        std::make_unique<ExactFilterBuildOperator>(right.input, std::move(scan), right_key.column_index, filter),
        std::move(detail));
    Estimate(build, build_rows, OperatorEstimate::Structure::kNone, static_cast<int64_t>(filter->size_bytes()));
    Connect(right, build, 0, /*pipelining=*/true);
    Stream::PendingRuntimeFilter pending;
    pending.probe.filter = std::move(filter);
    pending.probe.member = join.join_type == lp::JoinType::kSemi;
    pending.key_block_columns.push_back(left.block_columns[left_key.column_index]);
    pending.key_types.push_back(left.types[left_key.column_index]);
    left.runtime_filters.push_back(std::move(pending));
    left.filter_builders.push_back(build);
    return left;
  }

  absl::StatusOr<Stream> VisitAggregate(const lp::Aggregate& aggregate) {
    TESSERA_ASSIGN_OR_RETURN(Stream child, Visit(*aggregate.children[0]));
    AggregationSpec spec;
    for (const auto& g : aggregate.group_by) spec.group_by.push_back(g->Clone());
    std::vector<std::string> names = aggregate.group_names;
    for (const lp::AggregateCall& call : aggregate.aggregates) {
      AggregationSpec::Call out;
      out.kind = call.function;
      out.distinct = call.distinct;
      out.fraction = call.fraction;
      out.descending = call.descending;
      out.ordered = call.ordered;
      out.separator = call.separator;
      if (call.argument) out.argument = call.argument->Clone();
      out.result_type = call.result_type;
      spec.calls.push_back(std::move(out));
      names.push_back(call.name);
    }
    spec.output_names = names;
    std::string detail = JoinDetails({Counted(aggregate.group_by.size(), "group key"),
                                      Counted(aggregate.aggregates.size(), "aggregate"), child.ScanDetail()});
    const double groups = estimator_.EstimateRows(aggregate);
    std::vector<Type> group_types;
    for (const lp::OutputColumn& column : aggregate.output()) group_types.push_back(column.type);
    const int64_t group_bytes = EstimatedRowBytes(group_types) + kAggregationEntryOverheadBytes;
    return AddAggregation(std::move(child), std::move(spec), groups, group_bytes, std::move(detail), names);
  }

  absl::StatusOr<Stream> VisitSort(const lp::Sort* sort, const lp::Limit* limit) {
    const lp::LogicalOperator& below = sort != nullptr ? *sort->children[0] : *limit->children[0];
    TESSERA_ASSIGN_OR_RETURN(Stream child, Visit(below));
    std::vector<std::string> names = child.names;
    // Sort keys that are expressions are computed into extra columns first, and dropped after sorting.
    std::vector<SortKey> keys;
    const size_t width = child.types.size();
    std::vector<std::unique_ptr<BoundExpression>> columns;
    for (size_t c = 0; c < width; ++c) columns.push_back(MakeColumn(static_cast<int>(c), child.types[c]));
    std::vector<std::string> column_names = names;
    if (sort != nullptr) {
      for (const auto& key : sort->keys) {
        int column;
        if (key.expression->kind == ExpressionKind::kColumn) {
          column = key.expression->column_index;
        } else {
          column = static_cast<int>(columns.size());
          columns.push_back(key.expression->Clone());
          column_names.push_back("sort_key");
        }
        keys.push_back(SortKey{column, key.ascending, key.nulls_first});
      }
    }
    const bool extra = columns.size() > width;
    const double input_rows = child.rows;
    int64_t limit_rows = limit != nullptr && limit->limit.has_value() ? *limit->limit : -1;
    int64_t offset = limit != nullptr ? limit->offset : 0;
    // A LIMIT without ORDER BY over a join's rows, one for one (no filter or runtime filter between them): no
    // probe work order needs to write more than offset + limit rows (HashJoinProbeOperator::SetOutputRowCap).
    if (sort == nullptr && limit_rows >= 0 && child.producer >= 0 && child.filter == nullptr &&
        child.runtime_filters.empty() && probe_scan_details_.contains(child.producer)) {
      static_cast<HashJoinProbeOperator*>(dag_->op(child.producer))->SetOutputRowCap(limit_rows + offset);
    }
    int input;
    if (extra) {
      input = AddSelect(std::move(child), std::move(columns), column_names);
    } else {
      TESSERA_ASSIGN_OR_RETURN(input, Materialize(std::move(child)));
    }
    std::string detail = JoinDetails({sort != nullptr ? Counted(keys.size(), "key") : "",
                                      limit_rows >= 0 ? absl::StrCat("limit ", limit_rows) : "",
                                      offset > 0 ? absl::StrCat("offset ", offset) : ""});
    auto op = std::make_unique<SortOperator>(dag_->op(input)->output(), std::move(keys), limit_rows, offset, pool_);
    int index = dag_->AddOperator(std::move(op), std::move(detail));
    const lp::LogicalOperator& top = limit != nullptr ? static_cast<const lp::LogicalOperator&>(*limit) : *sort;
    Estimate(index, estimator_.EstimateRows(top), OperatorEstimate::Structure::kSortBuffer,
             EstimatedBytes(input_rows, kSortEntryBytes));
    // A LIMIT without ORDER BY takes its input as it is produced: once it has its rows and is the query's result,
    // the QueryManager stops the rest of the query (RelationalOperator::InputSatisfied).
    dag_->AddEdge(input, index, 0, /*pipelining=*/sort == nullptr && limit_rows >= 0);
    Stream sorted = FromOperator(index, column_names);
    if (extra) {  // drop the computed key columns
      sorted.block_columns.resize(width);
      sorted.types.resize(width);
      sorted.names = names;
    }
    return sorted;
  }

  // The window operator reads plain columns of its input relation: an upstream operator's relation is read as
  // it is (the stream's columns are picked by WindowSpec::output_columns, no copy); a base table, a filtered
  // stream, or partition keys, order keys and arguments that are expressions go through a Select first (the
  // computed columns are not passed to the output).
  absl::StatusOr<Stream> VisitWindow(const lp::Window& window) {
    TESSERA_ASSIGN_OR_RETURN(Stream child, Visit(*window.children[0]));
    const size_t width = child.types.size();
    bool computed = false;
    auto plain = [](const BoundExpression& e) { return e.kind == ExpressionKind::kColumn; };
    lp::VisitWindowExpressions(window, [&](const BoundExpression& e) { computed |= !plain(e); });
    const bool read_directly =
        !computed && child.producer >= 0 && child.filter == nullptr && child.runtime_filters.empty();
    std::vector<std::unique_ptr<BoundExpression>> columns;
    for (size_t c = 0; c < width; ++c) columns.push_back(MakeColumn(static_cast<int>(c), child.types[c]));
    std::vector<std::string> column_names = child.names;
    std::vector<int> stream_columns = child.block_columns;
    auto column_of = [&](const BoundExpression& expression) {
      if (expression.kind == ExpressionKind::kColumn) {
        return read_directly ? stream_columns[expression.column_index] : expression.column_index;
      }
      columns.push_back(expression.Clone());
      column_names.push_back("window_input");
      return static_cast<int>(columns.size()) - 1;
    };
    WindowSpec spec;
    for (size_t c = 0; c < width; ++c) {
      spec.output_columns.push_back(read_directly ? stream_columns[c] : static_cast<int>(c));
    }
    for (const auto& key : window.partition_by) spec.partition_columns.push_back(column_of(*key));
    for (const lp::SortKey& key : window.order_by) {
      spec.order_keys.push_back(SortKey{column_of(*key.expression), key.ascending, key.nulls_first});
    }
    std::vector<std::string> functions;
    for (const lp::WindowCall& call : window.calls) {
      WindowFunctionSpec function;
      function.kind = call.function;
      if (call.argument != nullptr) function.argument = column_of(*call.argument);
      function.parameter = call.parameter;
      function.default_value = call.default_value;
      function.frame = call.frame;
      function.result_type = call.result_type;
      spec.functions.push_back(std::move(function));
      functions.push_back(WindowFunctionName(call.function));
    }
    spec.limit_function = window.limit_call;
    spec.limit = window.limit;
    const double rows = child.rows;
    int input;
    if (read_directly) {
      input = child.producer;
    } else if (columns.size() > width) {
      input = AddSelect(std::move(child), std::move(columns), column_names);
    } else {
      TESSERA_ASSIGN_OR_RETURN(input, Materialize(std::move(child)));
    }
    std::string detail =
        JoinDetails({spec.partition_columns.empty() ? "" : Counted(spec.partition_columns.size(), "partition key"),
                     spec.order_keys.empty() ? "" : Counted(spec.order_keys.size(), "order key"),
                     absl::StrCat("functions: ", absl::StrJoin(functions, ", ")),
                     window.limit_call < 0 ? "" : absl::StrCat("top ", window.limit, " per partition")});
    auto op = std::make_unique<WindowOperator>(dag_->op(input)->output(), std::move(spec), pool_);
    int index = dag_->AddOperator(std::move(op), std::move(detail));
    Estimate(index, rows, OperatorEstimate::Structure::kSortBuffer, EstimatedBytes(rows, kSortEntryBytes));
    dag_->AddEdge(input, index, 0, /*pipelining=*/false);
    std::vector<std::string> names;
    for (const lp::OutputColumn& column : window.output()) names.push_back(column.name);
    return FromOperator(index, names);
  }

  StorageManager* storage_;
  BufferPool* pool_;
  distributed::Cluster* cluster_;  // null: a single server (no exchanges)
  PlanDistribution distribution_;
  bool on_ranks_ = false;
  const absl::flat_hash_set<int>* broadcast_lip_filters_ =
      nullptr;  // planning a broadcast input: its own  // planning the master's own part of a fragment that every rank runs
  absl::flat_hash_map<int, bool> partial_lip_filters_;  // LIP filter id -> built from a partitioned side
  absl::flat_hash_set<int> fragment_lip_filters_;       // published inside the fragment being planned
  // Streams planned ahead for logical nodes (broadcast inputs, the master's partitions of hash splits).
  absl::flat_hash_map<const lp::LogicalOperator*, Stream> prebuilt_;
  std::unique_ptr<ExecutionDag> dag_;
  absl::flat_hash_map<int, LipFilterSlot> lip_filters_;
  // Shared aggregates planned so far: the operator writing the result, and its column names.
  struct SharedAggregate {
    int producer = -1;
    std::vector<std::string> names;
    std::vector<int> published_lip_filters;  // Aggregate::shared_lip_filters of the planned one
  };
  using SharingKey = std::pair<bool, int>;  // on_ranks_, Aggregate::shared_result
  absl::flat_hash_map<SharingKey, SharedAggregate> aggregates_;
  // Hash-join probe operators by index, with what they scan (for EXPLAIN when joins are chained into them).
  absl::flat_hash_map<int, std::string> probe_scan_details_;
  optimizer::CardinalityEstimator estimator_;
  std::vector<std::unique_ptr<lp::LogicalOperator>> rewritten_;  // subplans made here (see SplitAggregate)
};

}  // namespace

absl::StatusOr<std::unique_ptr<ExecutionDag>> BuildExecutionDag(const optimizer::LogicalOperator& plan,
                                                                StorageManager* storage, BufferPool* pool,
                                                                distributed::Cluster* cluster,
                                                                const std::vector<FragmentInput>& inputs) {
  // Declared before the builder: operators of a failed build are destroyed with it and free through the account.
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(pool);
  Builder builder(storage, account.get(), cluster);
  builder.AddInputs(inputs);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionDag> dag, builder.Build(plan));
  dag->set_memory_account(std::move(account));
  return dag;
}

absl::StatusOr<std::unique_ptr<ExecutionDag>> BuildInsertDag(const optimizer::LogicalOperator& plan,
                                                             InsertTarget target, StorageManager* storage,
                                                             BufferPool* pool) {
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(pool);
  Builder builder(storage, account.get());
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionDag> dag, builder.BuildInsert(plan, std::move(target)));
  dag->set_memory_account(std::move(account));
  return dag;
}

}  // namespace tessera
