#include "optimizer/cardinality_estimator.h"

#include <algorithm>
#include <cmath>

#include "optimizer/expression_analysis.h"

namespace tessera::optimizer {
namespace {

constexpr double kDefaultTableRows = 1000;
constexpr double kRangeSelectivity = 1.0 / 3;
constexpr double kLikeSelectivity = 0.1;
constexpr double kDefaultSelectivity = 0.5;
// A join key whose values span at most this fraction of the other side's key range (JoinKeyDistinct).
constexpr double kNarrowKeyRangeFraction = 0.5;

double TableRows(const TableDescriptor& table) {
  return table.row_count > 0 ? static_cast<double>(table.row_count) : kDefaultTableRows;
}

// The column under casts, if the expression is a (cast) column reference.
const BoundExpression* StripCasts(const BoundExpression& expression) {
  const BoundExpression* e = &expression;
  while (e->kind == ExpressionKind::kCast) e = e->children[0].get();
  return e->kind == ExpressionKind::kColumn ? e : nullptr;
}

std::optional<double> AsNumber(const Value& value) {
  if (value.is_null()) return std::nullopt;
  const Type type = value.type();
  if (type.IsNumeric()) return value.AsDouble();
  if (type.id() == TypeId::kDate || type.id() == TypeId::kTimestamp) return static_cast<double>(value.AsInt64());
  return std::nullopt;
}

double Clamp(double selectivity) { return std::clamp(selectivity, 0.0, 1.0); }

// The input column of `column = constant` (either order) or `column IN (constants...)`, casts aside; nullopt
// for anything else (negations included).
std::optional<int> PointColumn(const BoundExpression& predicate) {
  const BoundExpression* column = nullptr;
  if (predicate.kind == ExpressionKind::kComparison && predicate.comparison == ComparisonOp::kEqual) {
    const bool right_constant = predicate.children[1]->kind == ExpressionKind::kConstant;
    const bool left_constant = predicate.children[0]->kind == ExpressionKind::kConstant;
    if (right_constant != left_constant) column = StripCasts(*predicate.children[right_constant ? 0 : 1]);
  } else if (predicate.kind == ExpressionKind::kInList && !predicate.negated) {
    for (size_t i = 1; i < predicate.children.size(); ++i) {
      if (predicate.children[i]->kind != ExpressionKind::kConstant) return std::nullopt;
    }
    column = StripCasts(*predicate.children[0]);
  }
  if (column == nullptr) return std::nullopt;
  return column->column_index;
}

}  // namespace

namespace {

// Follows output column `column` of `plan` down while it passes unchanged (casts aside): the node where it stops
// (a table scan, a set operation, or a node that computes it) and the column there; nullptr for an index out of
// range. *padding_join (when given): the highest LEFT OUTER join whose right side the column comes from (its
// unmatched rows have the column NULL), else nullptr.
std::pair<const LogicalOperator*, int> TraceColumn(const LogicalOperator* plan, int column,
                                                   const LogicalOperator** padding_join = nullptr) {
  if (padding_join != nullptr) *padding_join = nullptr;
  while (true) {
    if (column < 0 || column >= plan->output_width()) return {nullptr, -1};
    switch (plan->kind()) {
      case LogicalOperatorKind::kFilter:
      case LogicalOperatorKind::kSort:
      case LogicalOperatorKind::kLimit:
      case LogicalOperatorKind::kDistinct:
        plan = plan->children[0].get();
        break;
      case LogicalOperatorKind::kProject: {
        const BoundExpression* source = StripCasts(*plan->As<Project>().expressions[column]);
        if (source == nullptr) return {plan, column};
        column = source->column_index;
        plan = plan->children[0].get();
        break;
      }
      case LogicalOperatorKind::kAggregate: {
        const auto& aggregate = plan->As<Aggregate>();
        if (column >= static_cast<int>(aggregate.group_by.size())) return {plan, column};
        const BoundExpression* source = StripCasts(*aggregate.group_by[column]);
        if (source == nullptr) return {plan, column};
        column = source->column_index;
        plan = plan->children[0].get();
        break;
      }
      case LogicalOperatorKind::kWindow:
        if (column >= plan->children[0]->output_width()) return {plan, column};
        plan = plan->children[0].get();
        break;
      case LogicalOperatorKind::kJoin: {
        const int left_width = plan->children[0]->output_width();
        if (column >= left_width) {
          if (padding_join != nullptr && *padding_join == nullptr &&
              plan->As<Join>().join_type == JoinType::kLeftOuter) {
            *padding_join = plan;
          }
          column -= left_width;
          plan = plan->children[1].get();
        } else {
          plan = plan->children[0].get();
        }
        break;
      }
      default:
        return {plan, column};
    }
  }
}

}  // namespace

std::optional<ColumnOrigin> FindColumnOrigin(const LogicalOperator& plan, int column) {
  auto [node, node_column] = TraceColumn(&plan, column);
  if (node == nullptr || node->kind() != LogicalOperatorKind::kTableScan) return std::nullopt;
  const auto& scan = node->As<TableScan>();
  return ColumnOrigin{scan.table.get(), scan.columns[node_column]};
}

double CardinalityEstimator::DistinctValues(const BoundExpression& expression, const LogicalOperator& input) const {
  // A scan's own filter is estimated against the whole table (EstimateRows of the scan would recurse).
  const double rows =
      input.kind() == LogicalOperatorKind::kTableScan ? TableRows(*input.As<TableScan>().table) : EstimateRows(input);
  const BoundExpression* column = StripCasts(expression);
  if (column == nullptr) {
    std::optional<double> distinct = ArithmeticDistinct(expression, input);
    return distinct.has_value() ? std::clamp(*distinct, 1.0, std::max(rows, 1.0)) : rows;
  }
  auto [node, node_column] = TraceColumn(&input, column->column_index);
  if (node != nullptr && node->kind() == LogicalOperatorKind::kSetOperation) {
    // At least the most distinct values of an input; a union's inputs are typically keys of one domain (TPC-DS
    // Q05's store sales UNION ALL store returns, by store: taking the rows instead made the union's join with
    // store's 12 rows look like 12 rows). INTERSECT and EXCEPT keep at most the left input's values.
    const bool union_ = node->As<SetOperation>().operation == SetOperationType::kUnion;
    const ExpressionPtr key = MakeColumn(node_column, node->output()[node_column].type);
    double distinct = 1;
    for (size_t c = 0; c < (union_ ? node->children.size() : 1); ++c) {
      distinct = std::max(distinct, DistinctValues(*key, *node->children[c]));
    }
    return std::clamp(distinct, 1.0, std::max(rows, 1.0));
  }
  std::optional<ColumnOrigin> origin = FindColumnOrigin(input, column->column_index);
  if (!origin.has_value()) return rows;
  const TableDescriptor& table = *origin->table;
  if (table.row_count <= 0 || origin->column >= static_cast<int>(table.statistics.size())) return rows;
  const ColumnStatistics& statistics = table.statistics[origin->column];
  const int64_t non_null = std::max<int64_t>(table.row_count - statistics.null_count, 0);
  const double distinct = static_cast<double>(statistics.DistinctEstimate(non_null));
  return std::clamp(distinct, 1.0, std::max(rows, 1.0));
}

std::optional<double> CardinalityEstimator::ArithmeticDistinct(const BoundExpression& expression,
                                                               const LogicalOperator& input) const {
  const BoundExpression* e = &expression;
  while (e->kind == ExpressionKind::kCast) e = e->children[0].get();
  if (e->kind == ExpressionKind::kColumn) return DistinctValues(*e, input);
  if (e->kind != ExpressionKind::kArithmetic) return std::nullopt;
  if (e->arithmetic == ArithmeticOp::kNegate) return ArithmeticDistinct(*e->children[0], input);
  const BoundExpression& left = *e->children[0];
  const BoundExpression& right = *e->children[1];
  const bool left_constant = left.kind == ExpressionKind::kConstant;
  const bool right_constant = right.kind == ExpressionKind::kConstant;
  if (left_constant == right_constant) return std::nullopt;  // two columns (or constants folded elsewhere)
  const BoundExpression& operand = left_constant ? right : left;
  const Value& constant = left_constant ? left.constant : right.constant;
  std::optional<double> number = AsNumber(constant);
  if (!number.has_value()) return std::nullopt;
  std::optional<double> distinct = ArithmeticDistinct(operand, input);
  if (!distinct.has_value()) return std::nullopt;
  switch (e->arithmetic) {
    case ArithmeticOp::kAdd:
    case ArithmeticOp::kSubtract:
      return distinct;
    case ArithmeticOp::kMultiply:
      return *number == 0 ? 1.0 : *distinct;
    case ArithmeticOp::kModulo:
      // x % k takes at most |k| values (2|k| - 1 with negative x; keys are not negative) and at most x's.
      if (right_constant && std::abs(*number) >= 1) return std::min(*distinct, std::floor(std::abs(*number)));
      return std::nullopt;
    default:
      return std::nullopt;  // division merges values unpredictably
  }
}

double CardinalityEstimator::ComparisonSelectivity(const BoundExpression& comparison,
                                                   const LogicalOperator& input) const {
  const BoundExpression* left = StripCasts(*comparison.children[0]);
  const BoundExpression* right = StripCasts(*comparison.children[1]);
  const BoundExpression* left_constant =
      comparison.children[0]->kind == ExpressionKind::kConstant ? comparison.children[0].get() : nullptr;
  const BoundExpression* right_constant =
      comparison.children[1]->kind == ExpressionKind::kConstant ? comparison.children[1].get() : nullptr;
  ComparisonOp op = comparison.comparison;
  const BoundExpression* column = nullptr;
  const BoundExpression* constant = nullptr;
  if (left != nullptr && right_constant != nullptr) {
    column = left;
    constant = right_constant;
  } else if (right != nullptr && left_constant != nullptr) {
    column = right;
    constant = left_constant;
    op = FlipComparison(op);
  }
  if (column != nullptr) {
    if (constant->constant.is_null()) return 0;
    const double distinct = DistinctValues(*column, input);
    switch (op) {
      case ComparisonOp::kEqual:
        return 1.0 / distinct;
      case ComparisonOp::kNotEqual:
        return 1.0 - 1.0 / distinct;
      default:
        break;
    }
    std::optional<ColumnOrigin> origin = FindColumnOrigin(input, column->column_index);
    std::optional<double> value = AsNumber(constant->constant);
    if (!origin.has_value() || !value.has_value() || origin->table->row_count <= 0) return kRangeSelectivity;
    const ColumnStatistics& statistics = origin->table->statistics[origin->column];
    std::optional<double> min = AsNumber(statistics.min);
    std::optional<double> max = AsNumber(statistics.max);
    if (!min.has_value() || !max.has_value() || *max <= *min) return kRangeSelectivity;
    const double below = Clamp((*value - *min) / (*max - *min));
    const bool less = op == ComparisonOp::kLess || op == ComparisonOp::kLessEqual;
    return std::max(less ? below : 1.0 - below, 1.0 / distinct);
  }
  if (left != nullptr && right != nullptr && op == ComparisonOp::kEqual) {
    return 1.0 / std::max(DistinctValues(*left, input), DistinctValues(*right, input));
  }
  // An arithmetic of one column against a constant (`d_date_sk % 7 = 1`, `x + 1 <> 5`): by the distinct values
  // the expression takes (ArithmeticDistinct), as for a column.
  const BoundExpression* computed = right_constant != nullptr  ? comparison.children[0].get()
                                    : left_constant != nullptr ? comparison.children[1].get()
                                                               : nullptr;
  if (computed != nullptr && (op == ComparisonOp::kEqual || op == ComparisonOp::kNotEqual)) {
    const Value& value = (right_constant != nullptr ? right_constant : left_constant)->constant;
    if (value.is_null()) return 0;
    std::optional<double> distinct = ArithmeticDistinct(*computed, input);
    if (distinct.has_value()) {
      const double equal = 1.0 / std::max(*distinct, 1.0);
      return op == ComparisonOp::kEqual ? equal : 1.0 - equal;
    }
  }
  return op == ComparisonOp::kEqual ? kLikeSelectivity : kRangeSelectivity;
}

std::optional<CardinalityEstimator::RangeBound> CardinalityEstimator::AsRangeBound(const BoundExpression& comparison,
                                                                                   const LogicalOperator& input) const {
  if (comparison.kind != ExpressionKind::kComparison) return std::nullopt;
  ComparisonOp op = comparison.comparison;
  if (op == ComparisonOp::kEqual || op == ComparisonOp::kNotEqual) return std::nullopt;
  const BoundExpression* column = StripCasts(*comparison.children[0]);
  const BoundExpression* constant = comparison.children[1].get();
  if (column == nullptr || constant->kind != ExpressionKind::kConstant) {
    column = StripCasts(*comparison.children[1]);
    constant = comparison.children[0].get();
    op = FlipComparison(op);
    if (column == nullptr || constant->kind != ExpressionKind::kConstant) return std::nullopt;
  }
  if (constant->constant.is_null()) return std::nullopt;
  std::optional<ColumnOrigin> origin = FindColumnOrigin(input, column->column_index);
  std::optional<double> value = AsNumber(constant->constant);
  if (!origin.has_value() || !value.has_value() || origin->table->row_count <= 0) return std::nullopt;
  const ColumnStatistics& statistics = origin->table->statistics[origin->column];
  std::optional<double> min = AsNumber(statistics.min);
  std::optional<double> max = AsNumber(statistics.max);
  if (!min.has_value() || !max.has_value() || *max <= *min) return std::nullopt;
  const bool upper = op == ComparisonOp::kLess || op == ComparisonOp::kLessEqual;
  return RangeBound{column->column_index, upper, *value, *min, *max, DistinctValues(*column, input)};
}

double CardinalityEstimator::Selectivity(const BoundExpression& predicate, const LogicalOperator& input) const {
  switch (predicate.kind) {
    case ExpressionKind::kAnd: {
      // Range conjuncts on one column form one interval: `d >= '1994-01-01' AND d < '1995-01-01'` keeps the
      // year's share of [min, max], not the product of two half-open ranges (TPC-H Q5's orders looked 2x larger).
      struct Interval {
        double low, high, distinct;
      };
      absl::flat_hash_map<int, Interval> intervals;
      // Point conjuncts (= constant, IN list) on one column keep at most the values of the narrowest: `d_year =
      // 2002 AND d_year IN (2001, 2002)` (a CTE's IN with the caller's equality pushed beside it: TPC-DS Q74 /
      // Q04) keeps a year, not a year times a hundredth (the year's store sales looked 100x fewer and were built
      // into a hash table probed by customer).
      absl::flat_hash_map<int, double> points;
      double selectivity = 1;
      for (const auto& child : predicate.children) {
        if (std::optional<int> column = PointColumn(*child); column.has_value()) {
          const double point = Selectivity(*child, input);
          auto [it, inserted] = points.try_emplace(*column, point);
          it->second = std::min(it->second, point);
          continue;
        }
        std::optional<RangeBound> bound = AsRangeBound(*child, input);
        if (!bound.has_value()) {
          selectivity *= Selectivity(*child, input);
          continue;
        }
        const double position = Clamp((bound->value - bound->min) / (bound->max - bound->min));
        auto [it, inserted] = intervals.try_emplace(bound->column, Interval{0, 1, bound->distinct});
        if (bound->upper) {
          it->second.high = std::min(it->second.high, position);
        } else {
          it->second.low = std::max(it->second.low, position);
        }
      }
      for (const auto& [column, interval] : intervals) {
        selectivity *= std::max(Clamp(interval.high - interval.low), 1.0 / interval.distinct);
      }
      for (const auto& [column, point] : points) selectivity *= point;
      return selectivity;
    }
    case ExpressionKind::kOr: {
      double none = 1;
      for (const auto& child : predicate.children) none *= 1 - Selectivity(*child, input);
      return Clamp(1 - none);
    }
    case ExpressionKind::kNot:
      return Clamp(1 - Selectivity(*predicate.children[0], input));
    case ExpressionKind::kComparison:
      return Clamp(ComparisonSelectivity(predicate, input));
    case ExpressionKind::kInList: {
      const double items = static_cast<double>(predicate.children.size() - 1);
      const double selectivity = Clamp(items / DistinctValues(*predicate.children[0], input));
      return predicate.negated ? 1 - selectivity : selectivity;
    }
    case ExpressionKind::kLike:
      return predicate.negated ? 1 - kLikeSelectivity : kLikeSelectivity;
    case ExpressionKind::kIsNull: {
      double fraction = 0.01;
      if (const BoundExpression* column = StripCasts(*predicate.children[0]); column != nullptr) {
        std::optional<ColumnOrigin> origin = FindColumnOrigin(input, column->column_index);
        if (origin.has_value() && origin->table->row_count > 0) {
          fraction = static_cast<double>(origin->table->statistics[origin->column].null_count) /
                     static_cast<double>(origin->table->row_count);
        }
        // A column of a LEFT JOIN's right side is also NULL in the left rows that match nothing, estimated as an
        // anti join's rows. The anti-join idiom `LEFT JOIN returns ... WHERE return_key IS NULL` (TPC-DS Q78)
        // keeps most sales, not the returns' null fraction of them (JoinOrdering built 2.9 M unreturned store
        // sales into a hash table and probed it with one year of date_dim).
        const LogicalOperator* padding_join = nullptr;
        TraceColumn(&input, column->column_index, &padding_join);
        if (padding_join != nullptr) {
          const double unmatched = UnmatchedFraction(padding_join->As<Join>());
          fraction = unmatched + (1 - unmatched) * fraction;
        }
      }
      return predicate.negated ? 1 - fraction : fraction;
    }
    case ExpressionKind::kConstant:
      if (predicate.constant.is_null()) return 0;
      if (predicate.constant.type().id() == TypeId::kBoolean) return predicate.constant.AsBool() ? 1 : 0;
      return kDefaultSelectivity;
    default:
      return kDefaultSelectivity;
  }
}

double CardinalityEstimator::MatchedFraction(const Join& join) const {
  return (join.residual == nullptr ? 1 : kRangeSelectivity) * KeyMatchFraction(join);
}

double CardinalityEstimator::KeyMatchFraction(const Join& join) const {
  const LogicalOperator& left = *join.children[0];
  const LogicalOperator& right = *join.children[1];
  double matched = 1;
  if (join.left_keys.size() == 1) {
    // A filtered scan's DistinctValues is its table's: the right side cannot have more keys than rows.
    const double right_keys_found = std::min(DistinctValues(*join.right_keys[0], right), EstimateRows(right));
    matched *= std::min(1.0, right_keys_found / DistinctValues(*join.left_keys[0], left));
  } else if (!join.left_keys.empty()) {
    // Composite keys: each side's distinct tuples as the product of its columns' distinct values, at most its
    // rows. The first column alone says little: a third of store_sales' tickets have a returned line, but only a
    // tenth of its (ticket, item) lines were returned (TPC-DS Q78's sales without returns looked 3x fewer).
    double left_keys = 1;
    double right_keys_found = 1;
    for (size_t i = 0; i < join.left_keys.size(); ++i) {
      left_keys *= DistinctValues(*join.left_keys[i], left);
      right_keys_found *= DistinctValues(*join.right_keys[i], right);
    }
    left_keys = std::min(left_keys, EstimateRows(left));
    right_keys_found = std::min(right_keys_found, EstimateRows(right));
    matched *= std::min(1.0, right_keys_found / left_keys);
  }
  return matched;
}

double CardinalityEstimator::UnmatchedFraction(const Join& join) const {
  return std::max(0.1, 1 - MatchedFraction(join));
}

std::optional<std::pair<double, double>> CardinalityEstimator::KeyRange(const BoundExpression& key,
                                                                        const LogicalOperator& input) const {
  const BoundExpression* column = StripCasts(key);
  if (column == nullptr) return std::nullopt;
  std::optional<ColumnOrigin> origin = FindColumnOrigin(input, column->column_index);
  if (!origin.has_value() || origin->table->row_count <= 0 ||
      origin->column >= static_cast<int>(origin->table->statistics.size())) {
    return std::nullopt;
  }
  const ColumnStatistics& statistics = origin->table->statistics[origin->column];
  std::optional<double> min = AsNumber(statistics.min);
  std::optional<double> max = AsNumber(statistics.max);
  if (!min.has_value() || !max.has_value() || *max < *min) return std::nullopt;
  return std::make_pair(*min, *max);
}

double CardinalityEstimator::JoinKeyDistinct(const BoundExpression& key, const LogicalOperator& side,
                                             const BoundExpression& other_key, const LogicalOperator& other) const {
  const double distinct = DistinctValues(key, side);
  const double rows = EstimateRows(side);
  if (rows >= distinct) return distinct;
  // `side` is filtered below its table's keys (a dimension restricted by its attributes). Which keys it keeps is
  // unknown; independence of the filter and the key gives the table's distinct count (customer by market segment
  // joined with orders, whose keys are two thirds of customer's, spread over all of them: TPC-H Q3). But where
  // the other side's keys lie in a narrow part of this side's key range (TPC-DS: the sales' sold dates are 5 of
  // date_dim's 200 years), a filter on the dimension's attributes (d_year = 2000) is about that part, so assume
  // containment: the kept rows' keys are among the other side's (TPC-DS Q78's grouped store sales of one year
  // looked 130x smaller than they are). The other side's range is its table's, as for DistinctValues. A filter
  // on an attribute independent of the key that keeps fewer rows than the other side has keys is then
  // over-estimated; that is the price.
  const std::optional<std::pair<double, double>> range = KeyRange(key, side);
  const std::optional<std::pair<double, double>> other_range = KeyRange(other_key, other);
  if (!range.has_value() || !other_range.has_value()) return distinct;
  const auto [low, high] = *range;
  const auto [other_low, other_high] = *other_range;
  const bool narrow =
      other_low >= low && other_high <= high && other_high - other_low <= kNarrowKeyRangeFraction * (high - low);
  // More kept rows than the other side has keys is no filter about that part (`d_dow = 1` keeps a seventh of
  // every year): independence then.
  return narrow && rows <= DistinctValues(other_key, other) ? rows : distinct;
}

double CardinalityEstimator::EquiJoinSelectivity(const std::vector<const BoundExpression*>& left_keys,
                                                 const LogicalOperator& left,
                                                 const std::vector<const BoundExpression*>& right_keys,
                                                 const LogicalOperator& right) const {
  std::vector<double> selectivities;
  for (size_t i = 0; i < left_keys.size(); ++i) {
    selectivities.push_back(1.0 / std::max(JoinKeyDistinct(*left_keys[i], left, *right_keys[i], right),
                                           JoinKeyDistinct(*right_keys[i], right, *left_keys[i], left)));
  }
  std::sort(selectivities.begin(), selectivities.end());
  double selectivity = 1;
  double exponent = 1;
  for (double s : selectivities) {
    selectivity *= std::pow(s, exponent);
    exponent /= 2;
  }
  // A side has at most as many distinct composite keys as rows, so under the containment assumption the
  // selectivity is at least 1 / max(rows): without this floor, lineitem JOIN partsupp ON both keys (TPC-H Q9)
  // looks 25 times smaller than it is and is joined before the selective part filter.
  if (left_keys.size() > 1) {
    selectivity = std::max(selectivity, 1.0 / std::max(EstimateRows(left), EstimateRows(right)));
  }
  return selectivity;
}

double CardinalityEstimator::EstimateRows(const LogicalOperator& plan) const {
  if (auto it = rows_cache_.find(&plan); it != rows_cache_.end()) return it->second;
  ++depth_;
  const double rows = ComputeRows(plan);
  --depth_;
  if (depth_ == 0) {
    rows_cache_.clear();
  } else {
    rows_cache_[&plan] = rows;
  }
  return rows;
}

double CardinalityEstimator::ComputeRows(const LogicalOperator& plan) const {
  double rows = 1;
  switch (plan.kind()) {
    case LogicalOperatorKind::kTableScan: {
      const auto& scan = plan.As<TableScan>();
      rows = TableRows(*scan.table);
      if (scan.filter != nullptr) rows *= Selectivity(*scan.filter, plan);
      break;
    }
    case LogicalOperatorKind::kFilter:
      rows = plan.As<Filter>().estimated_rows >= 0
                 ? plan.As<Filter>().estimated_rows
                 : EstimateRows(*plan.children[0]) * Selectivity(*plan.As<Filter>().predicate, *plan.children[0]);
      break;
    case LogicalOperatorKind::kProject:
    case LogicalOperatorKind::kSort:
    case LogicalOperatorKind::kWindow:
      rows = EstimateRows(*plan.children[0]);
      break;
    case LogicalOperatorKind::kLimit: {
      const auto& limit = plan.As<Limit>();
      rows = std::max(EstimateRows(*plan.children[0]) - static_cast<double>(limit.offset), 1.0);
      if (limit.limit.has_value()) rows = std::min(rows, static_cast<double>(*limit.limit));
      break;
    }
    case LogicalOperatorKind::kDistinct: {
      const double input = EstimateRows(*plan.children[0]);
      double groups = 1;
      for (int i = 0; i < plan.output_width(); ++i) {
        groups *= DistinctValues(*MakeColumn(i, plan.output()[i].type), *plan.children[0]);
        if (groups >= input) break;
      }
      rows = std::min(input, groups);
      break;
    }
    case LogicalOperatorKind::kAggregate: {
      const auto& aggregate = plan.As<Aggregate>();
      if (aggregate.group_by.empty()) return 1;
      const double input = EstimateRows(*plan.children[0]);
      double groups = 1;
      for (const auto& key : aggregate.group_by) {
        groups *= DistinctValues(*key, *plan.children[0]);
        if (groups >= input) break;
      }
      rows = std::min(input, groups);
      break;
    }
    case LogicalOperatorKind::kJoin: {
      const auto& join = plan.As<Join>();
      const LogicalOperator& left = *plan.children[0];
      const LogicalOperator& right = *plan.children[1];
      const double left_rows = EstimateRows(left);
      const double right_rows = EstimateRows(right);
      std::vector<const BoundExpression*> left_keys;
      std::vector<const BoundExpression*> right_keys;
      for (size_t i = 0; i < join.left_keys.size(); ++i) {
        left_keys.push_back(join.left_keys[i].get());
        right_keys.push_back(join.right_keys[i].get());
      }
      const double key_selectivity = EquiJoinSelectivity(left_keys, left, right_keys, right);
      const double residual_selectivity = join.residual == nullptr ? 1 : kRangeSelectivity;
      const double inner = left_rows * right_rows * key_selectivity * residual_selectivity;
      switch (join.join_type) {
        case JoinType::kInner:
        case JoinType::kCross:
          rows = inner;
          break;
        case JoinType::kLeftOuter:
          rows = std::max(left_rows, inner);
          break;
        case JoinType::kFullOuter:
          rows = std::max({left_rows, right_rows, inner});
          break;
        case JoinType::kSemi:
          rows = left_rows * MatchedFraction(join);
          break;
        case JoinType::kAnti:
          rows = left_rows * UnmatchedFraction(join);
          break;
      }
      break;
    }
    case LogicalOperatorKind::kSetOperation: {
      const auto& operation = plan.As<SetOperation>();
      const double left = EstimateRows(*plan.children[0]);
      const double right = EstimateRows(*plan.children[1]);
      rows = operation.operation == SetOperationType::kUnion       ? left + right
             : operation.operation == SetOperationType::kIntersect ? std::min(left, right)
                                                                   : left;
      break;
    }
    case LogicalOperatorKind::kValues:
      rows = static_cast<double>(plan.As<Values>().rows.size());
      break;
    case LogicalOperatorKind::kSeries:
      rows = static_cast<double>(plan.As<Series>().count);
      break;
  }
  return std::max(rows, 1.0);
}

}  // namespace tessera::optimizer
