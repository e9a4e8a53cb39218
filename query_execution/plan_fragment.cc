#include "query_execution/plan_fragment.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/byte_stream.h"
#include "common/status_macros.h"
#include "distributed/expression_codec.h"
#include "optimizer/rules/aggregate_sharing.h"
#include "optimizer/rules/build_side_swap.h"

namespace tessera {
namespace {

namespace lp = optimizer;
using distributed::ReadExpression;
using distributed::ReadOptionalExpression;
using distributed::ReadType;
using distributed::WriteExpression;
using distributed::WriteOptionalExpression;
using distributed::WriteType;

constexpr int kMaxDepth = 10000;
// The kind byte of a broadcast input's placeholder (after the LogicalOperatorKind values).
constexpr uint8_t kInputPlaceholder = 0xF0;

// The LIP filters published by joins of the fragment and those read by its scans (not inside broadcast inputs,
// which are not encoded).
void CollectLipFilters(const lp::LogicalOperator& node, const std::vector<const lp::LogicalOperator*>& inputs,
                       absl::flat_hash_set<int>* published, absl::flat_hash_set<int>* read) {
  if (std::find(inputs.begin(), inputs.end(), &node) != inputs.end()) return;
  if (node.kind() == lp::LogicalOperatorKind::kJoin && node.As<lp::Join>().lip_filter_id >= 0) {
    published->insert(node.As<lp::Join>().lip_filter_id);
  }
  if (node.kind() == lp::LogicalOperatorKind::kTableScan) {
    for (const auto& use : node.As<lp::TableScan>().lip_filters) read->insert(use.filter_id);
  }
  for (const auto& child : node.children) CollectLipFilters(*child, inputs, published, read);
}

class Encoder {
 public:
  Encoder(const lp::LogicalOperator& root, const std::vector<const lp::LogicalOperator*>& inputs,
          const std::vector<int>& exchange_tags)
      : inputs_(inputs), exchange_tags_(exchange_tags) {
    absl::flat_hash_set<int> published, read;
    CollectLipFilters(root, inputs, &published, &read);
    for (int id : published) {
      if (read.contains(id)) kept_lip_filters_.insert(id);
    }
  }

  absl::Status Write(const lp::LogicalOperator& node) {
    if (auto input = std::find(inputs_.begin(), inputs_.end(), &node); input != inputs_.end()) {
      out_.PutU8(kInputPlaceholder);
      const size_t index = input - inputs_.begin();
      out_.PutU32(static_cast<uint32_t>(index));
      out_.PutU32(static_cast<uint32_t>(index < exchange_tags_.size() ? exchange_tags_[index] : 0));
      WriteColumns(node.output());
      return absl::OkStatus();
    }
    out_.PutU8(static_cast<uint8_t>(node.kind()));
    switch (node.kind()) {
      case lp::LogicalOperatorKind::kTableScan:
        WriteScan(node.As<lp::TableScan>());
        break;
      case lp::LogicalOperatorKind::kFilter:
        WriteExpression(out_, *node.As<lp::Filter>().predicate);
        break;
      case lp::LogicalOperatorKind::kProject: {
        const auto& project = node.As<lp::Project>();
        WriteExpressions(project.expressions);
        WriteStrings(project.names);
        WriteStrings(project.relations);
        break;
      }
      case lp::LogicalOperatorKind::kJoin:
        WriteJoin(node.As<lp::Join>());
        break;
      case lp::LogicalOperatorKind::kAggregate:
        WriteAggregate(node.As<lp::Aggregate>());
        break;
      case lp::LogicalOperatorKind::kDistinct:
        break;
      case lp::LogicalOperatorKind::kSort: {
        const auto& sort = node.As<lp::Sort>();
        out_.PutU32(static_cast<uint32_t>(sort.keys.size()));
        for (const lp::SortKey& key : sort.keys) {
          WriteExpression(out_, *key.expression);
          out_.PutU8((key.ascending ? 1 : 0) | (key.nulls_first ? 2 : 0));
        }
        break;
      }
      case lp::LogicalOperatorKind::kLimit: {
        const auto& limit = node.As<lp::Limit>();
        out_.PutU8(limit.limit.has_value() ? 1 : 0);
        out_.PutI64(limit.limit.value_or(0));
        out_.PutI64(limit.offset);
        break;
      }
      case lp::LogicalOperatorKind::kSetOperation: {
        const auto& set = node.As<lp::SetOperation>();
        out_.PutU8(static_cast<uint8_t>(set.operation));
        out_.PutU8(set.all ? 1 : 0);
        break;
      }
      case lp::LogicalOperatorKind::kValues: {
        const auto& values = node.As<lp::Values>();
        WriteColumns(values.columns);
        out_.PutU32(static_cast<uint32_t>(values.rows.size()));
        for (const auto& row : values.rows) {
          for (const Value& value : row) out_.PutString(value.Serialize());
        }
        break;
      }
      default:
        return absl::UnimplementedError(
            absl::StrCat("a plan fragment for the ranks cannot hold '", node.Describe(), "'"));
    }
    out_.PutU32(static_cast<uint32_t>(node.children.size()));
    for (const auto& child : node.children) TESSERA_RETURN_IF_ERROR(Write(*child));
    return absl::OkStatus();
  }

  std::string Release() { return out_.Release(); }

 private:
  void WriteColumns(const std::vector<lp::OutputColumn>& columns) {
    out_.PutU32(static_cast<uint32_t>(columns.size()));
    for (const lp::OutputColumn& column : columns) {
      out_.PutString(column.name);
      WriteType(out_, column.type);
      out_.PutU8(column.nullable ? 1 : 0);
      out_.PutString(column.relation);
    }
  }
  void WriteStrings(const std::vector<std::string>& strings) {
    out_.PutU32(static_cast<uint32_t>(strings.size()));
    for (const std::string& s : strings) out_.PutString(s);
  }
  void WriteInts(const std::vector<int>& ints) {
    out_.PutU32(static_cast<uint32_t>(ints.size()));
    for (int i : ints) out_.PutI64(i);
  }
  void WriteExpressions(const std::vector<lp::ExpressionPtr>& expressions) {
    out_.PutU32(static_cast<uint32_t>(expressions.size()));
    for (const auto& e : expressions) WriteExpression(out_, *e);
  }

  void WriteScan(const lp::TableScan& scan) {
    out_.PutString(scan.table->name);
    out_.PutString(scan.alias);
    WriteInts(scan.columns);
    for (int c : scan.columns) WriteType(out_, scan.table->columns[c].type);  // checked against the rank's schema
    WriteOptionalExpression(out_, scan.filter.get());
    std::vector<const lp::TableScan::LipFilterUse*> uses;
    for (const auto& use : scan.lip_filters) {
      if (kept_lip_filters_.contains(use.filter_id)) uses.push_back(&use);
    }
    out_.PutU32(static_cast<uint32_t>(uses.size()));
    for (const auto* use : uses) {
      out_.PutI64(use->filter_id);
      WriteInts(use->key_columns);
      out_.PutString(use->build_keys);
    }
  }

  void WriteJoin(const lp::Join& join) {
    out_.PutU8(static_cast<uint8_t>(join.join_type));
    WriteExpressions(join.left_keys);
    WriteExpressions(join.right_keys);
    WriteOptionalExpression(out_, join.residual.get());
    out_.PutU8((join.null_aware ? 1 : 0) | (join.enforce_single_row ? 2 : 0) | (join.exact_filter ? 4 : 0));
    if (join.exact_filter) {
      out_.PutI64(join.exact_filter->min);
      out_.PutI64(join.exact_filter->max);
      out_.PutU8(join.exact_filter->from_inner_join ? 1 : 0);
    }
    const bool kept = kept_lip_filters_.contains(join.lip_filter_id);
    out_.PutI64(kept ? join.lip_filter_id : -1);
    WriteInts(kept ? join.lip_filter_key_pairs : std::vector<int>{});
  }

  void WriteAggregate(const lp::Aggregate& aggregate) {
    WriteExpressions(aggregate.group_by);
    WriteStrings(aggregate.group_names);
    out_.PutU32(static_cast<uint32_t>(aggregate.aggregates.size()));
    for (const lp::AggregateCall& call : aggregate.aggregates) {
      out_.PutU8(static_cast<uint8_t>(call.function));
      out_.PutU8((call.distinct ? 1 : 0) | (call.descending ? 2 : 0) | (call.ordered ? 4 : 0));
      WriteOptionalExpression(out_, call.argument.get());
      WriteType(out_, call.result_type);
      out_.PutString(call.name);
      out_.PutString(call.fraction.Serialize());
      out_.PutString(call.separator);
    }
  }

  const std::vector<const lp::LogicalOperator*>& inputs_;
  const std::vector<int>& exchange_tags_;
  ByteWriter out_;
  absl::flat_hash_set<int> kept_lip_filters_;
};

class Decoder {
 public:
  Decoder(std::string_view message, const Catalog& catalog, std::vector<const lp::LogicalOperator*>* inputs,
          std::vector<int>* exchange_tags)
      : in_(message), catalog_(catalog), inputs_(inputs), exchange_tags_(exchange_tags) {}

  absl::StatusOr<lp::LogicalOperatorPtr> Read(int depth) {
    uint8_t kind = 0;
    if (depth > kMaxDepth || !in_.GetU8(&kind)) return Malformed();
    if (kind == kInputPlaceholder) return ReadInput();
    if (kind > static_cast<uint8_t>(lp::LogicalOperatorKind::kWindow)) return Malformed();
    lp::LogicalOperatorPtr node;
    switch (static_cast<lp::LogicalOperatorKind>(kind)) {
      case lp::LogicalOperatorKind::kTableScan: {
        TESSERA_ASSIGN_OR_RETURN(node, ReadScan());
        break;
      }
      case lp::LogicalOperatorKind::kFilter: {
        auto filter = std::make_unique<lp::Filter>();
        filter->predicate = ReadExpression(in_);
        if (filter->predicate == nullptr) return Malformed();
        node = std::move(filter);
        break;
      }
      case lp::LogicalOperatorKind::kProject: {
        auto project = std::make_unique<lp::Project>();
        if (!ReadExpressions(&project->expressions) || !ReadStrings(&project->names) ||
            !ReadStrings(&project->relations) || project->names.size() != project->expressions.size()) {
          return Malformed();
        }
        node = std::move(project);
        break;
      }
      case lp::LogicalOperatorKind::kJoin: {
        TESSERA_ASSIGN_OR_RETURN(node, ReadJoin());
        break;
      }
      case lp::LogicalOperatorKind::kAggregate: {
        TESSERA_ASSIGN_OR_RETURN(node, ReadAggregate());
        break;
      }
      case lp::LogicalOperatorKind::kDistinct:
        node = std::make_unique<lp::Distinct>();
        break;
      case lp::LogicalOperatorKind::kSort: {
        auto sort = std::make_unique<lp::Sort>();
        uint32_t keys = 0;
        if (!in_.GetU32(&keys) || keys > Remaining()) return Malformed();
        for (uint32_t k = 0; k < keys; ++k) {
          lp::SortKey key;
          uint8_t flags = 0;
          key.expression = ReadExpression(in_);
          if (key.expression == nullptr || !in_.GetU8(&flags)) return Malformed();
          key.ascending = (flags & 1) != 0;
          key.nulls_first = (flags & 2) != 0;
          sort->keys.push_back(std::move(key));
        }
        node = std::move(sort);
        break;
      }
      case lp::LogicalOperatorKind::kLimit: {
        auto limit = std::make_unique<lp::Limit>();
        uint8_t has_limit = 0;
        int64_t count = 0;
        if (!in_.GetU8(&has_limit) || !in_.GetI64(&count) || !in_.GetI64(&limit->offset) || has_limit > 1 ||
            count < 0 || limit->offset < 0) {
          return Malformed();
        }
        if (has_limit != 0) limit->limit = count;
        node = std::move(limit);
        break;
      }
      case lp::LogicalOperatorKind::kSetOperation: {
        auto set = std::make_unique<lp::SetOperation>();
        uint8_t operation = 0, all = 0;
        if (!in_.GetU8(&operation) || !in_.GetU8(&all) ||
            operation > static_cast<uint8_t>(lp::SetOperationType::kExcept)) {
          return Malformed();
        }
        set->operation = static_cast<lp::SetOperationType>(operation);
        set->all = all != 0;
        node = std::move(set);
        break;
      }
      case lp::LogicalOperatorKind::kValues: {
        TESSERA_ASSIGN_OR_RETURN(node, ReadValues());
        break;
      }
      default:
        return Malformed();
    }
    uint32_t children = 0;
    if (!in_.GetU32(&children) || children > 2) return Malformed();
    for (uint32_t i = 0; i < children; ++i) {
      TESSERA_ASSIGN_OR_RETURN(lp::LogicalOperatorPtr child, Read(depth + 1));
      node->children.push_back(std::move(child));
    }
    if (!Arity(*node)) return Malformed();
    node->RecomputeOutput();
    return node;
  }

  bool AtEnd() const { return in_.AtEnd(); }

  static absl::Status Malformed() { return absl::DataLossError("malformed plan fragment from the master"); }

 private:
  // An upper bound for element counts (every element takes at least one byte).
  uint32_t Remaining() const { return static_cast<uint32_t>(in_.remaining()); }

  static bool Arity(const lp::LogicalOperator& node) {
    switch (node.kind()) {
      case lp::LogicalOperatorKind::kTableScan:
      case lp::LogicalOperatorKind::kValues:
        return node.children.empty();
      case lp::LogicalOperatorKind::kJoin:
      case lp::LogicalOperatorKind::kSetOperation:
        return node.children.size() == 2;
      default:
        return node.children.size() == 1;
    }
  }

  bool ReadStrings(std::vector<std::string>* strings) {
    uint32_t count = 0;
    if (!in_.GetU32(&count) || count > Remaining()) return false;
    strings->resize(count);
    for (std::string& s : *strings) {
      if (!in_.GetString(&s)) return false;
    }
    return true;
  }
  bool ReadInts(std::vector<int>* ints) {
    uint32_t count = 0;
    if (!in_.GetU32(&count) || count > Remaining()) return false;
    ints->resize(count);
    for (int& i : *ints) {
      int64_t value = 0;
      if (!in_.GetI64(&value)) return false;
      i = static_cast<int>(value);
    }
    return true;
  }
  bool ReadExpressions(std::vector<lp::ExpressionPtr>* expressions) {
    uint32_t count = 0;
    if (!in_.GetU32(&count) || count > Remaining()) return false;
    for (uint32_t i = 0; i < count; ++i) {
      expressions->push_back(ReadExpression(in_));
      if (expressions->back() == nullptr) return false;
    }
    return true;
  }

  absl::StatusOr<lp::LogicalOperatorPtr> ReadScan() {
    auto scan = std::make_unique<lp::TableScan>();
    std::string table;
    if (!in_.GetString(&table) || !in_.GetString(&scan->alias) || !ReadInts(&scan->columns)) return Malformed();
    TESSERA_ASSIGN_OR_RETURN(scan->table, catalog_.GetTable(table));
    for (int c : scan->columns) {
      Type type;
      if (!ReadType(in_, &type)) return Malformed();
      if (c < 0 || c >= static_cast<int>(scan->table->columns.size()) || scan->table->columns[c].type != type) {
        return absl::FailedPreconditionError(absl::StrCat("table '", table, "' has another schema than on the master"));
      }
    }
    uint32_t uses = 0;
    if (!ReadOptionalExpression(in_, &scan->filter) || !in_.GetU32(&uses) || uses > Remaining()) return Malformed();
    for (uint32_t u = 0; u < uses; ++u) {
      lp::TableScan::LipFilterUse use;
      int64_t id = 0;
      if (!in_.GetI64(&id) || !ReadInts(&use.key_columns) || !in_.GetString(&use.build_keys)) return Malformed();
      use.filter_id = static_cast<int>(id);
      scan->lip_filters.push_back(std::move(use));
    }
    return scan;
  }

  absl::StatusOr<lp::LogicalOperatorPtr> ReadJoin() {
    auto join = std::make_unique<lp::Join>();
    uint8_t type = 0, flags = 0;
    if (!in_.GetU8(&type) || type > static_cast<uint8_t>(lp::JoinType::kCross) || !ReadExpressions(&join->left_keys) ||
        !ReadExpressions(&join->right_keys) || join->left_keys.size() != join->right_keys.size() ||
        !ReadOptionalExpression(in_, &join->residual) || !in_.GetU8(&flags)) {
      return Malformed();
    }
    join->join_type = static_cast<lp::JoinType>(type);
    join->null_aware = (flags & 1) != 0;
    join->enforce_single_row = (flags & 2) != 0;
    if ((flags & 4) != 0) {
      lp::Join::ExactFilterRange range;
      uint8_t from_inner = 0;
      if (!in_.GetI64(&range.min) || !in_.GetI64(&range.max) || !in_.GetU8(&from_inner)) return Malformed();
      range.from_inner_join = from_inner != 0;
      join->exact_filter = range;
    }
    int64_t lip = 0;
    if (!in_.GetI64(&lip) || !ReadInts(&join->lip_filter_key_pairs)) return Malformed();
    join->lip_filter_id = static_cast<int>(lip);
    return join;
  }

  absl::StatusOr<lp::LogicalOperatorPtr> ReadAggregate() {
    auto aggregate = std::make_unique<lp::Aggregate>();
    uint32_t calls = 0;
    if (!ReadExpressions(&aggregate->group_by) || !ReadStrings(&aggregate->group_names) ||
        aggregate->group_names.size() != aggregate->group_by.size() || !in_.GetU32(&calls) || calls > Remaining()) {
      return Malformed();
    }
    for (uint32_t i = 0; i < calls; ++i) {
      lp::AggregateCall call;
      uint8_t function = 0, flags = 0;
      std::string fraction;
      if (!in_.GetU8(&function) || function > static_cast<uint8_t>(AggregateKind::kApproxCountDistinct) ||
          !in_.GetU8(&flags) || !ReadOptionalExpression(in_, &call.argument) || !ReadType(in_, &call.result_type) ||
          !in_.GetString(&call.name) || !in_.GetString(&fraction) || !in_.GetString(&call.separator)) {
        return Malformed();
      }
      absl::StatusOr<Value> fraction_value = Value::Deserialize(fraction);
      if (!fraction_value.ok()) return Malformed();
      call.function = static_cast<AggregateKind>(function);
      call.distinct = (flags & 1) != 0;
      call.descending = (flags & 2) != 0;
      call.ordered = (flags & 4) != 0;
      call.fraction = *std::move(fraction_value);
      aggregate->aggregates.push_back(std::move(call));
    }
    return aggregate;
  }

  bool ReadColumns(std::vector<lp::OutputColumn>* columns) {
    uint32_t count = 0;
    if (!in_.GetU32(&count) || count > Remaining()) return false;
    for (uint32_t c = 0; c < count; ++c) {
      lp::OutputColumn column;
      uint8_t nullable = 0;
      if (!in_.GetString(&column.name) || !ReadType(in_, &column.type) || !in_.GetU8(&nullable) ||
          !in_.GetString(&column.relation)) {
        return false;
      }
      column.nullable = nullable != 0;
      columns->push_back(std::move(column));
    }
    return true;
  }

  absl::StatusOr<lp::LogicalOperatorPtr> ReadInput() {
    uint32_t index = 0, tag = 0;
    auto placeholder = std::make_unique<lp::Values>();
    if (!in_.GetU32(&index) || index != inputs_->size() || !in_.GetU32(&tag) || tag > INT32_MAX ||
        !ReadColumns(&placeholder->columns)) {
      return Malformed();
    }
    placeholder->RecomputeOutput();
    inputs_->push_back(placeholder.get());
    exchange_tags_->push_back(static_cast<int>(tag));
    return placeholder;
  }

  absl::StatusOr<lp::LogicalOperatorPtr> ReadValues() {
    auto values = std::make_unique<lp::Values>();
    uint32_t rows = 0;
    if (!ReadColumns(&values->columns)) return Malformed();
    const uint32_t columns = static_cast<uint32_t>(values->columns.size());
    if (!in_.GetU32(&rows) || rows > Remaining()) return Malformed();
    for (uint32_t r = 0; r < rows; ++r) {
      std::vector<Value> row;
      for (uint32_t c = 0; c < columns; ++c) {
        std::string bytes;
        if (!in_.GetString(&bytes)) return Malformed();
        absl::StatusOr<Value> value = Value::Deserialize(bytes);
        if (!value.ok()) return Malformed();
        row.push_back(*std::move(value));
      }
      values->rows.push_back(std::move(row));
    }
    return values;
  }

  ByteReader in_;
  const Catalog& catalog_;
  std::vector<const lp::LogicalOperator*>* inputs_;
  std::vector<int>* exchange_tags_;
};

}  // namespace

absl::StatusOr<std::string> EncodePlanFragment(const optimizer::LogicalOperator& fragment,
                                               const std::vector<const optimizer::LogicalOperator*>& inputs,
                                               const std::vector<int>& exchange_tags) {
  Encoder encoder(fragment, inputs, exchange_tags);
  TESSERA_RETURN_IF_ERROR(encoder.Write(fragment));
  return encoder.Release();
}

absl::StatusOr<optimizer::LogicalOperatorPtr> DecodePlanFragment(std::string_view message, const Catalog& catalog,
                                                                 std::vector<const optimizer::LogicalOperator*>* inputs,
                                                                 std::vector<int>* exchange_tags) {
  inputs->clear();
  std::vector<int> ignored;
  if (exchange_tags == nullptr) exchange_tags = &ignored;
  exchange_tags->clear();
  Decoder decoder(message, catalog, inputs, exchange_tags);
  TESSERA_ASSIGN_OR_RETURN(optimizer::LogicalOperatorPtr fragment, decoder.Read(0));
  if (!decoder.AtEnd()) return Decoder::Malformed();
  // Join::build_left and Aggregate::shared_result are not encoded: the rank decides them from its own data and
  // estimates, as the master's rules did from the master's (the rules edit nodes in place: `inputs` stay valid).
  fragment = optimizer::BuildSideSwap().Apply(std::move(fragment));
  return optimizer::AggregateSharing().Apply(std::move(fragment));
}

}  // namespace tessera
