#include "optimizer/logical_plan.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/expression_format.h"

namespace tessera::optimizer {
namespace {

std::vector<ExpressionPtr> CloneExpressions(const std::vector<ExpressionPtr>& expressions) {
  std::vector<ExpressionPtr> copies;
  copies.reserve(expressions.size());
  for (const auto& expression : expressions) copies.push_back(expression->Clone());
  return copies;
}

ExpressionPtr CloneOrNull(const ExpressionPtr& expression) {
  return expression == nullptr ? nullptr : expression->Clone();
}

std::vector<std::string> ChildNames(const LogicalOperator& node, int child) {
  return DisplayNames(node.children[child]->output());
}

}  // namespace

std::string JoinTypeName(JoinType type) {
  switch (type) {
    case JoinType::kInner:
      return "INNER";
    case JoinType::kLeftOuter:
      return "LEFT OUTER";
    case JoinType::kFullOuter:
      return "FULL OUTER";
    case JoinType::kSemi:
      return "SEMI";
    case JoinType::kAnti:
      return "ANTI";
    case JoinType::kCross:
      return "CROSS";
  }
  return "?";
}

std::string AggregateFunctionName(AggregateKind function) {
  switch (function) {
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
      return "count";
    case AggregateKind::kSum:
      return "sum";
    case AggregateKind::kAvg:
      return "avg";
    case AggregateKind::kMin:
      return "min";
    case AggregateKind::kMax:
      return "max";
    case AggregateKind::kQuantileCont:
      return "quantile_cont";
    case AggregateKind::kQuantileDisc:
      return "quantile_disc";
    case AggregateKind::kStringAgg:
      return "string_agg";
    case AggregateKind::kApproxCountDistinct:
      return "approx_count_distinct";
  }
  return "?";
}

std::vector<std::string> LogicalOperator::OutputNames() const {
  std::vector<std::string> names;
  names.reserve(output_.size());
  for (const OutputColumn& column : output_) names.push_back(column.name);
  return names;
}

std::string LogicalOperator::ToString() const {
  std::string out;
  AppendTree(0, &out);
  return out;
}

void LogicalOperator::AppendTree(int depth, std::string* out) const {
  out->append(2 * depth, ' ');
  out->append(Describe());
  out->push_back('\n');
  for (const auto& child : children) child->AppendTree(depth + 1, out);
}

void LogicalOperator::CloneChildrenInto(LogicalOperator& copy) const {
  for (const auto& child : children) copy.children.push_back(child->Clone());
  copy.output_ = output_;
}

// ---- TableScan

void TableScan::RecomputeOutput() {
  output_.clear();
  for (int column : columns) {
    const ColumnSchema& schema = table->columns[column];
    output_.push_back({schema.name, schema.type, !schema.not_null, alias});
  }
}

std::unique_ptr<LogicalOperator> TableScan::Clone() const {
  auto copy = std::make_unique<TableScan>();
  copy->table = table;
  copy->alias = alias;
  copy->columns = columns;
  copy->filter = CloneOrNull(filter);
  copy->lip_filters = lip_filters;
  CloneChildrenInto(*copy);
  return copy;
}

std::string TableScan::Describe() const {
  std::string out = absl::StrCat("TableScan ", table->name);
  if (alias != table->name) absl::StrAppend(&out, " AS ", alias);
  std::vector<std::string> names = DisplayNames(output_);
  absl::StrAppend(&out, " [", absl::StrJoin(names, ", "), "]");
  if (filter != nullptr) absl::StrAppend(&out, " filter=", FormatExpression(*filter, names));
  if (!lip_filters.empty()) {
    std::vector<std::string> uses;
    for (const LipFilterUse& use : lip_filters) {
      std::vector<std::string> keys;
      for (int column : use.key_columns) keys.push_back(names[column]);
      uses.push_back(absl::StrCat(absl::StrJoin(keys, ", "), " IN bloom(", use.build_keys, ")"));
    }
    absl::StrAppend(&out, " LIP filters: [", absl::StrJoin(uses, ", "), "]");
  }
  return out;
}

// ---- Filter

void Filter::RecomputeOutput() { output_ = children[0]->output(); }

std::unique_ptr<LogicalOperator> Filter::Clone() const {
  auto copy = std::make_unique<Filter>();
  copy->predicate = CloneOrNull(predicate);
  copy->estimated_rows = estimated_rows;
  CloneChildrenInto(*copy);
  return copy;
}

std::string Filter::Describe() const {
  return absl::StrCat("Filter ", FormatExpression(*predicate, ChildNames(*this, 0)));
}

// ---- Project

void Project::RecomputeOutput() {
  output_.clear();
  const std::vector<OutputColumn>& input = children[0]->output();
  for (size_t i = 0; i < expressions.size(); ++i) {
    OutputColumn column;
    column.name = names[i];
    column.type = expressions[i]->result_type;
    column.nullable = IsNullable(*expressions[i], input);
    if (i < relations.size()) {
      column.relation = relations[i];
    } else if (expressions[i]->kind == ExpressionKind::kColumn && expressions[i]->column_index >= 0 &&
               expressions[i]->column_index < static_cast<int>(input.size()) &&
               input[expressions[i]->column_index].name == names[i]) {
      column.relation = input[expressions[i]->column_index].relation;
    }
    output_.push_back(std::move(column));
  }
}

std::unique_ptr<LogicalOperator> Project::Clone() const {
  auto copy = std::make_unique<Project>();
  copy->expressions = CloneExpressions(expressions);
  copy->names = names;
  copy->relations = relations;
  CloneChildrenInto(*copy);
  return copy;
}

std::string Project::Describe() const {
  const std::vector<std::string> input_names = ChildNames(*this, 0);
  const std::vector<OutputColumn>& input = children[0]->output();
  std::vector<std::string> items;
  for (size_t i = 0; i < expressions.size(); ++i) {
    std::string text = FormatExpression(*expressions[i], input_names);
    const BoundExpression& e = *expressions[i];
    const bool passes_column_on = e.kind == ExpressionKind::kColumn && e.column_index >= 0 &&
                                  e.column_index < static_cast<int>(input.size()) &&
                                  input[e.column_index].name == names[i];
    items.push_back(text == names[i] || passes_column_on ? text : absl::StrCat(names[i], " := ", text));
  }
  return absl::StrCat("Project [", absl::StrJoin(items, ", "), "]");
}

// ---- Join

void Join::RecomputeOutput() {
  output_ = children[0]->output();
  if (join_type == JoinType::kSemi || join_type == JoinType::kAnti) return;
  const bool right_nullable = join_type == JoinType::kLeftOuter || join_type == JoinType::kFullOuter;
  if (join_type == JoinType::kFullOuter) {
    for (OutputColumn& column : output_) column.nullable = true;
  }
  for (OutputColumn column : children[1]->output()) {
    if (right_nullable) column.nullable = true;
    output_.push_back(std::move(column));
  }
}

std::unique_ptr<LogicalOperator> Join::Clone() const {
  auto copy = std::make_unique<Join>();
  copy->join_type = join_type;
  copy->left_keys = CloneExpressions(left_keys);
  copy->right_keys = CloneExpressions(right_keys);
  copy->residual = CloneOrNull(residual);
  copy->null_aware = null_aware;
  copy->enforce_single_row = enforce_single_row;
  copy->exact_filter = exact_filter;
  copy->lip_filter_id = lip_filter_id;
  copy->lip_filter_key_pairs = lip_filter_key_pairs;
  copy->build_left = build_left;
  copy->filter_probe_by_build_keys = filter_probe_by_build_keys;
  CloneChildrenInto(*copy);
  return copy;
}

std::string Join::Describe() const {
  std::string out = absl::StrCat("Join ", JoinTypeName(join_type));
  if (null_aware) out += " NULL-AWARE";
  if (exact_filter.has_value()) {
    absl::StrAppend(&out, " exact filter [", exact_filter->min, ", ", exact_filter->max, "]",
                    exact_filter->from_inner_join ? " (from inner join)" : "");
  }
  std::vector<OutputColumn> both = children[0]->output();
  for (const OutputColumn& column : children[1]->output()) both.push_back(column);
  const std::vector<std::string> names = DisplayNames(both);
  const std::vector<std::string> left_names(names.begin(), names.begin() + children[0]->output_width());
  const std::vector<std::string> right_names(names.begin() + children[0]->output_width(), names.end());
  if (!left_keys.empty()) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < left_keys.size(); ++i) {
      keys.push_back(absl::StrCat(FormatExpression(*left_keys[i], left_names), " = ",
                                  FormatExpression(*right_keys[i], right_names)));
    }
    absl::StrAppend(&out, " keys=[", absl::StrJoin(keys, ", "), "]");
  }
  if (residual != nullptr) absl::StrAppend(&out, " residual=", FormatExpression(*residual, names));
  if (enforce_single_row) out += " single-row";
  if (lip_filter_id >= 0) {
    absl::StrAppend(&out, " publishes LIP filter #", lip_filter_id);
    if (lip_filter_key_pairs.size() < left_keys.size()) {  // over some key pairs only
      std::vector<std::string> keys;
      for (int pair : lip_filter_key_pairs) keys.push_back(FormatExpression(*right_keys[pair], right_names));
      absl::StrAppend(&out, " on [", absl::StrJoin(keys, ", "), "]");
    }
  }
  return out;
}

// ---- Aggregate

AggregateCall AggregateCall::Clone() const {
  AggregateCall copy;
  copy.function = function;
  copy.distinct = distinct;
  copy.argument = CloneOrNull(argument);
  copy.result_type = result_type;
  copy.name = name;
  copy.fraction = fraction;
  copy.descending = descending;
  copy.ordered = ordered;
  copy.separator = separator;
  return copy;
}

void Aggregate::RecomputeOutput() {
  output_.clear();
  const std::vector<OutputColumn>& input = children[0]->output();
  for (size_t i = 0; i < group_by.size(); ++i) {
    OutputColumn column{group_names[i], group_by[i]->result_type, IsNullable(*group_by[i], input), ""};
    if (group_by[i]->kind == ExpressionKind::kColumn && input[group_by[i]->column_index].name == group_names[i]) {
      column.relation = input[group_by[i]->column_index].relation;
    }
    output_.push_back(std::move(column));
  }
  for (const AggregateCall& call : aggregates) {
    const bool nullable = call.function != AggregateKind::kCount && call.function != AggregateKind::kCountStar &&
                          call.function != AggregateKind::kApproxCountDistinct;
    output_.push_back({call.name, call.result_type, nullable, ""});
  }
}

std::unique_ptr<LogicalOperator> Aggregate::Clone() const {
  auto copy = std::make_unique<Aggregate>();
  copy->group_by = CloneExpressions(group_by);
  copy->group_names = group_names;
  for (const AggregateCall& call : aggregates) copy->aggregates.push_back(call.Clone());
  copy->shared_result = shared_result;
  copy->shared_lip_filters = shared_lip_filters;
  CloneChildrenInto(*copy);
  return copy;
}

std::string Aggregate::Describe() const {
  const std::vector<std::string> names = ChildNames(*this, 0);
  std::vector<std::string> groups;
  for (const auto& expression : group_by) groups.push_back(FormatExpression(*expression, names));
  std::vector<std::string> calls;
  for (const AggregateCall& call : aggregates) {
    std::string argument = call.argument == nullptr ? "*" : FormatExpression(*call.argument, names);
    if (call.function == AggregateKind::kQuantileCont || call.function == AggregateKind::kQuantileDisc) {
      absl::StrAppend(&argument, ", ", call.fraction.ToString(), call.descending ? " DESC" : "");
    } else if (call.function == AggregateKind::kStringAgg) {
      absl::StrAppend(&argument, ", '", call.separator, "'", call.ordered ? " ORDER BY it" : "",
                      call.ordered && call.descending ? " DESC" : "");
    }
    calls.push_back(
        absl::StrCat(AggregateFunctionName(call.function), "(", call.distinct ? "DISTINCT " : "", argument, ")"));
  }
  return absl::StrCat("Aggregate groups=[", absl::StrJoin(groups, ", "), "] aggregates=[", absl::StrJoin(calls, ", "),
                      "]");
}

// ---- Sort

SortKey SortKey::Clone() const { return SortKey{expression->Clone(), ascending, nulls_first}; }

void Sort::RecomputeOutput() { output_ = children[0]->output(); }

std::unique_ptr<LogicalOperator> Sort::Clone() const {
  auto copy = std::make_unique<Sort>();
  for (const SortKey& key : keys) copy->keys.push_back(key.Clone());
  CloneChildrenInto(*copy);
  return copy;
}

std::string Sort::Describe() const {
  const std::vector<std::string> names = ChildNames(*this, 0);
  std::vector<std::string> items;
  for (const SortKey& key : keys) {
    std::string item = absl::StrCat(FormatExpression(*key.expression, names), key.ascending ? " ASC" : " DESC");
    const bool default_nulls_first = !key.ascending;
    if (key.nulls_first != default_nulls_first) item += key.nulls_first ? " NULLS FIRST" : " NULLS LAST";
    items.push_back(std::move(item));
  }
  return absl::StrCat("Sort [", absl::StrJoin(items, ", "), "]");
}

// ---- Limit

void Limit::RecomputeOutput() { output_ = children[0]->output(); }

std::unique_ptr<LogicalOperator> Limit::Clone() const {
  auto copy = std::make_unique<Limit>();
  copy->limit = limit;
  copy->offset = offset;
  CloneChildrenInto(*copy);
  return copy;
}

std::string Limit::Describe() const {
  std::string out = limit.has_value() ? absl::StrCat("Limit ", *limit) : "Limit ALL";
  if (offset != 0) absl::StrAppend(&out, " OFFSET ", offset);
  return out;
}

// ---- SetOperation

void SetOperation::RecomputeOutput() {
  output_ = children[0]->output();
  const std::vector<OutputColumn>& right = children[1]->output();
  for (size_t i = 0; i < output_.size() && i < right.size(); ++i) {
    output_[i].nullable = output_[i].nullable || right[i].nullable;
    output_[i].relation.clear();
  }
}

std::unique_ptr<LogicalOperator> SetOperation::Clone() const {
  auto copy = std::make_unique<SetOperation>();
  copy->operation = operation;
  copy->all = all;
  CloneChildrenInto(*copy);
  return copy;
}

std::string SetOperation::Describe() const {
  const char* name = operation == SetOperationType::kUnion       ? "UNION"
                     : operation == SetOperationType::kIntersect ? "INTERSECT"
                                                                 : "EXCEPT";
  return absl::StrCat("SetOperation ", name, all ? " ALL" : "");
}

// ---- Values

void Values::RecomputeOutput() { output_ = columns; }

std::unique_ptr<LogicalOperator> Values::Clone() const {
  auto copy = std::make_unique<Values>();
  copy->columns = columns;
  copy->rows = rows;
  CloneChildrenInto(*copy);
  return copy;
}

std::string Values::Describe() const {
  // A WITH RECURSIVE query's rows (optimizer/recursive_cte_binder.cc) can be many: the first few, then the count.
  constexpr size_t kShownRows = 16;
  std::vector<std::string> rendered;
  for (size_t r = 0; r < rows.size() && r < kShownRows; ++r) {
    std::vector<std::string> values;
    for (const Value& value : rows[r]) values.push_back(FormatConstant(value));
    rendered.push_back(absl::StrCat("(", absl::StrJoin(values, ", "), ")"));
  }
  if (rows.size() > kShownRows) rendered.push_back(absl::StrCat("... ", rows.size(), " rows in all"));
  if (rows.empty()) rendered.push_back("no rows");  // a subtree ConstantFolding found empty
  return absl::StrCat("Values [", absl::StrJoin(DisplayNames(columns), ", "), "] ", absl::StrJoin(rendered, ", "));
}

// ---- Series

void Series::RecomputeOutput() { output_ = {OutputColumn{column_name, Type::BigInt(), false, ""}}; }

std::unique_ptr<LogicalOperator> Series::Clone() const {
  auto copy = std::make_unique<Series>();
  copy->column_name = column_name;
  copy->start = start;
  copy->step = step;
  copy->count = count;
  copy->RecomputeOutput();
  return copy;
}

std::string Series::Describe() const {
  return absl::StrCat("Series [", column_name, "] from ", start, " step ", step, " (", count, " rows)");
}

// ---- Distinct

void Distinct::RecomputeOutput() { output_ = children[0]->output(); }

std::unique_ptr<LogicalOperator> Distinct::Clone() const {
  auto copy = std::make_unique<Distinct>();
  CloneChildrenInto(*copy);
  return copy;
}

std::string Distinct::Describe() const { return "Distinct"; }

// ---- constructors

std::unique_ptr<Filter> MakeFilter(LogicalOperatorPtr child, ExpressionPtr predicate) {
  auto filter = std::make_unique<Filter>();
  filter->predicate = std::move(predicate);
  filter->children.push_back(std::move(child));
  filter->RecomputeOutput();
  return filter;
}

std::unique_ptr<Project> MakeProject(LogicalOperatorPtr child, std::vector<ExpressionPtr> expressions,
                                     std::vector<std::string> names) {
  DCHECK_EQ(expressions.size(), names.size());
  auto project = std::make_unique<Project>();
  project->expressions = std::move(expressions);
  project->names = std::move(names);
  project->children.push_back(std::move(child));
  project->RecomputeOutput();
  return project;
}

std::unique_ptr<Join> MakeJoin(JoinType type, LogicalOperatorPtr left, LogicalOperatorPtr right) {
  auto join = std::make_unique<Join>();
  join->join_type = type;
  join->children.push_back(std::move(left));
  join->children.push_back(std::move(right));
  join->RecomputeOutput();
  return join;
}

std::unique_ptr<SetOperation> MakeUnionAll(LogicalOperatorPtr left, LogicalOperatorPtr right) {
  auto union_all = std::make_unique<SetOperation>();
  union_all->operation = SetOperationType::kUnion;
  union_all->all = true;
  union_all->children.push_back(std::move(left));
  union_all->children.push_back(std::move(right));
  union_all->RecomputeOutput();
  return union_all;
}

std::unique_ptr<Project> MakeColumnSelection(LogicalOperatorPtr child, const std::vector<int>& columns) {
  auto project = std::make_unique<Project>();
  const std::vector<OutputColumn>& input = child->output();
  for (int column : columns) {
    project->expressions.push_back(MakeColumn(column, input[column].type));
    project->names.push_back(input[column].name);
    project->relations.push_back(input[column].relation);
  }
  project->children.push_back(std::move(child));
  project->RecomputeOutput();
  return project;
}

}  // namespace tessera::optimizer
