#include "optimizer/rules/join_ordering.h"

#include <algorithm>
#include <limits>

#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/join_condition.h"

namespace tessera::optimizer {
namespace {

LogicalOperatorPtr Reorder(LogicalOperatorPtr node);

bool IsInnerJoin(const LogicalOperator& node) {
  if (node.kind() != LogicalOperatorKind::kJoin) return false;
  const JoinType type = node.As<Join>().join_type;
  return (type == JoinType::kInner || type == JoinType::kCross) && !node.As<Join>().enforce_single_row;
}

struct Input {
  LogicalOperatorPtr plan;
  int offset = 0;  // first column in the tree's output
  int width = 0;
};

struct Condition {
  ExpressionPtr expression;  // over the tree's output columns
  std::vector<int> inputs;   // the inputs it references (sorted, unique)
  bool applied = false;
  // For `column = column` over two inputs: the equivalence class of both columns (see AddImpliedEqualities);
  // a join needs one such condition per class. -1 otherwise.
  int equivalence_class = -1;
};

// A partial result: a plan over some inputs; columns[i] is the tree column of its output column i.
struct Component {
  LogicalOperatorPtr plan;
  std::vector<int> inputs;
  std::vector<int> columns;
  double rows = 1;
};

void Flatten(LogicalOperatorPtr node, int base, std::vector<Input>* inputs, std::vector<ExpressionPtr>* conditions) {
  if (!IsInnerJoin(*node)) {
    Input input;
    input.offset = base;
    input.width = node->output_width();
    input.plan = Reorder(std::move(node));
    inputs->push_back(std::move(input));
    return;
  }
  auto& join = node->As<Join>();
  const int left_width = node->children[0]->output_width();
  for (size_t i = 0; i < join.left_keys.size(); ++i) {
    ExpressionPtr left = std::move(join.left_keys[i]);
    ExpressionPtr right = std::move(join.right_keys[i]);
    ShiftColumns(left.get(), base);
    ShiftColumns(right.get(), base + left_width);
    conditions->push_back(MakeComparison(ComparisonOp::kEqual, std::move(left), std::move(right)));
  }
  for (ExpressionPtr& conjunct : SplitConjuncts(std::move(join.residual))) {
    ShiftColumns(conjunct.get(), base);
    conditions->push_back(std::move(conjunct));
  }
  Flatten(std::move(node->children[0]), base, inputs, conditions);
  Flatten(std::move(node->children[1]), base + left_width, inputs, conditions);
}

int InputOf(const std::vector<Input>& inputs, int column) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (column >= inputs[i].offset && column < inputs[i].offset + inputs[i].width) return static_cast<int>(i);
  }
  return -1;
}

bool Contains(const std::vector<int>& set, int value) { return std::find(set.begin(), set.end(), value) != set.end(); }

bool Covers(const Component& a, const Component& b, const Condition& condition) {
  bool in_a = false;
  bool in_b = false;
  for (int input : condition.inputs) {
    if (Contains(a.inputs, input)) {
      in_a = true;
    } else if (Contains(b.inputs, input)) {
      in_b = true;
    } else {
      return false;
    }
  }
  return in_a && in_b;
}

// The condition re-indexed to `left ++ right` of a join of the two components.
ExpressionPtr Localize(const BoundExpression& expression, const Component& left, const Component& right) {
  ExpressionPtr local = expression.Clone();
  const int left_width = static_cast<int>(left.columns.size());
  RemapColumns(local.get(), [&](int column) {
    auto it = std::find(left.columns.begin(), left.columns.end(), column);
    if (it != left.columns.end()) return static_cast<int>(it - left.columns.begin());
    it = std::find(right.columns.begin(), right.columns.end(), column);
    return left_width + static_cast<int>(it - right.columns.begin());
  });
  return local;
}

// Whether `condition` is one of an equivalence class that a join already has a condition of (`classes`:
// those seen so far); records its class otherwise.
bool RepeatsClass(const Condition& condition, std::vector<int>* classes) {
  if (condition.equivalence_class < 0) return false;
  if (Contains(*classes, condition.equivalence_class)) return true;
  classes->push_back(condition.equivalence_class);
  return false;
}

// Estimated rows of joining a and b under their connecting conditions; infinity if no equality connects them.
double EstimateJoin(const CardinalityEstimator& estimator, const Component& a, const Component& b,
                    const std::vector<Condition>& conditions, bool* connected) {
  std::vector<ExpressionPtr> left_keys_owned;
  std::vector<ExpressionPtr> right_keys_owned;
  int residuals = 0;
  const int a_width = static_cast<int>(a.columns.size());
  const int total = a_width + static_cast<int>(b.columns.size());
  std::vector<int> classes;
  for (const Condition& condition : conditions) {
    if (condition.applied || !Covers(a, b, condition) || RepeatsClass(condition, &classes)) continue;
    ExpressionPtr local = Localize(*condition.expression, a, b);
    if (IsEquiJoinConjunct(*local, a_width, total)) {
      ExpressionPtr x = std::move(local->children[0]);
      ExpressionPtr y = std::move(local->children[1]);
      if (!ReferencesOnlyRange(*x, 0, a_width)) std::swap(x, y);
      ShiftColumns(y.get(), -a_width);
      left_keys_owned.push_back(std::move(x));
      right_keys_owned.push_back(std::move(y));
    } else {
      ++residuals;
    }
  }
  *connected = !left_keys_owned.empty();
  std::vector<const BoundExpression*> left_keys;
  std::vector<const BoundExpression*> right_keys;
  for (size_t i = 0; i < left_keys_owned.size(); ++i) {
    left_keys.push_back(left_keys_owned[i].get());
    right_keys.push_back(right_keys_owned[i].get());
  }
  double rows = a.rows * b.rows * estimator.EquiJoinSelectivity(left_keys, *a.plan, right_keys, *b.plan);
  for (int i = 0; i < residuals; ++i) rows /= 3;
  return std::max(rows, 1.0);
}

Component JoinComponents(const CardinalityEstimator& estimator, Component a, Component b,
                         std::vector<Condition>* conditions) {
  // The smaller input is the build (right) side.
  if (b.rows > a.rows) std::swap(a, b);
  std::vector<ExpressionPtr> applied;
  std::vector<int> classes;
  for (Condition& condition : *conditions) {
    if (condition.applied || !Covers(a, b, condition)) continue;
    condition.applied = true;  // a repeated class is implied by the condition of that class applied here
    if (!RepeatsClass(condition, &classes)) applied.push_back(Localize(*condition.expression, a, b));
  }
  Component joined;
  joined.inputs = a.inputs;
  joined.inputs.insert(joined.inputs.end(), b.inputs.begin(), b.inputs.end());
  joined.columns = a.columns;
  joined.columns.insert(joined.columns.end(), b.columns.begin(), b.columns.end());
  std::unique_ptr<Join> join = MakeJoin(JoinType::kCross, std::move(a.plan), std::move(b.plan));
  if (!applied.empty()) AddJoinCondition(join.get(), CombineConjuncts(std::move(applied)));
  join->RecomputeOutput();
  joined.rows = estimator.EstimateRows(*join);
  joined.plan = std::move(join);
  return joined;
}

// Transitive equalities: `a = b AND b = c` over three inputs also connects the inputs of a and c, so that the
// order may join them directly (TPC-H Q9: ps_partkey = l_partkey AND p_partkey = l_partkey lets the filtered
// part join partsupp before lineitem). Plain `column = column` conditions of one type form equivalence classes;
// a class gets a condition for every pair of its columns in different inputs, and each join applies one
// condition per class whose columns it connects (the others hold through it: within each side, all columns of
// the class are already equal, by induction over the joins). A class with two columns of one input is left as
// it is (their equality is a filter that no join would apply).
void AddImpliedEqualities(const std::vector<Input>& inputs, std::vector<Condition>* conditions) {
  std::vector<int> parent;  // union-find over tree columns, indexed by column
  auto find = [&](int column) {
    while (parent[column] != column) column = parent[column] = parent[parent[column]];
    return column;
  };
  const int width = inputs.empty() ? 0 : inputs.back().offset + inputs.back().width;
  parent.resize(width);
  for (int c = 0; c < width; ++c) parent[c] = c;
  std::vector<Type> types(width);
  auto plain_equality = [](const Condition& condition) {
    const BoundExpression& e = *condition.expression;
    return e.kind == ExpressionKind::kComparison && e.comparison == ComparisonOp::kEqual &&
           condition.inputs.size() == 2 && IsColumn(*e.children[0]) && IsColumn(*e.children[1]) &&
           e.children[0]->result_type == e.children[1]->result_type;
  };
  for (const Condition& condition : *conditions) {
    if (!plain_equality(condition)) continue;
    const BoundExpression& e = *condition.expression;
    types[e.children[0]->column_index] = e.children[0]->result_type;
    types[e.children[1]->column_index] = e.children[1]->result_type;
    parent[find(e.children[0]->column_index)] = find(e.children[1]->column_index);
  }
  // Members of each class, in column order; classes with two members in one input are dropped.
  std::vector<std::vector<int>> members(width);
  for (const Condition& condition : *conditions) {
    if (!plain_equality(condition)) continue;
    for (const auto& child : condition.expression->children) {
      std::vector<int>& class_members = members[find(child->column_index)];
      if (!Contains(class_members, child->column_index)) class_members.push_back(child->column_index);
    }
  }
  std::vector<int> class_of_root(width, -1);
  int classes = 0;
  for (int root = 0; root < width; ++root) {
    std::vector<int>& class_members = members[root];
    if (class_members.size() < 2) continue;
    std::vector<int> member_inputs;
    bool distinct_inputs = true;
    for (int column : class_members) {
      const int input = InputOf(inputs, column);
      distinct_inputs &= !Contains(member_inputs, input);
      member_inputs.push_back(input);
    }
    if (!distinct_inputs) continue;
    class_of_root[root] = classes++;
    std::sort(class_members.begin(), class_members.end());
    for (size_t i = 0; i < class_members.size(); ++i) {
      for (size_t j = i + 1; j < class_members.size(); ++j) {
        const int x = class_members[i], y = class_members[j];
        bool present = false;
        for (const Condition& condition : *conditions) {
          if (!plain_equality(condition)) continue;
          const int c0 = condition.expression->children[0]->column_index;
          const int c1 = condition.expression->children[1]->column_index;
          present |= (c0 == x && c1 == y) || (c0 == y && c1 == x);
        }
        if (present) continue;
        std::vector<int> pair_inputs = {InputOf(inputs, x), InputOf(inputs, y)};
        std::sort(pair_inputs.begin(), pair_inputs.end());
        conditions->push_back(
            Condition{MakeComparison(ComparisonOp::kEqual, MakeColumn(x, types[x]), MakeColumn(y, types[y])),
                      std::move(pair_inputs), false, -1});
      }
    }
  }
  for (Condition& condition : *conditions) {
    if (plain_equality(condition)) {
      condition.equivalence_class = class_of_root[find(condition.expression->children[0]->column_index)];
    }
  }
}

LogicalOperatorPtr ReorderTree(LogicalOperatorPtr root) {
  std::vector<Input> inputs;
  std::vector<ExpressionPtr> raw_conditions;
  const int width = root->output_width();
  Flatten(std::move(root), 0, &inputs, &raw_conditions);
  CardinalityEstimator estimator;

  std::vector<Condition> conditions;
  std::vector<ExpressionPtr> constant_conditions;
  std::vector<std::vector<ExpressionPtr>> input_filters(inputs.size());
  for (ExpressionPtr& expression : raw_conditions) {
    std::vector<int> columns;
    CollectColumns(*expression, &columns);
    std::vector<int> referenced;
    for (int column : columns) {
      const int input = InputOf(inputs, column);
      if (!Contains(referenced, input)) referenced.push_back(input);
    }
    std::sort(referenced.begin(), referenced.end());
    if (referenced.empty()) {
      constant_conditions.push_back(std::move(expression));
    } else if (referenced.size() == 1) {
      ShiftColumns(expression.get(), -inputs[referenced[0]].offset);
      input_filters[referenced[0]].push_back(std::move(expression));
    } else {
      conditions.push_back(Condition{std::move(expression), std::move(referenced), false, -1});
    }
  }
  AddImpliedEqualities(inputs, &conditions);

  std::vector<Component> components;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Component component;
    component.plan = std::move(inputs[i].plan);
    if (!input_filters[i].empty()) {
      component.plan = MakeFilter(std::move(component.plan), CombineConjuncts(std::move(input_filters[i])));
    }
    component.inputs = {static_cast<int>(i)};
    for (int c = 0; c < inputs[i].width; ++c) component.columns.push_back(inputs[i].offset + c);
    component.rows = estimator.EstimateRows(*component.plan);
    components.push_back(std::move(component));
  }

  while (components.size() > 1) {
    int best_a = -1;
    int best_b = -1;
    double best_rows = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < components.size(); ++i) {
      for (size_t j = i + 1; j < components.size(); ++j) {
        bool connected = false;
        const double rows = EstimateJoin(estimator, components[i], components[j], conditions, &connected);
        if (connected && rows < best_rows) {
          best_rows = rows;
          best_a = static_cast<int>(i);
          best_b = static_cast<int>(j);
        }
      }
    }
    if (best_a < 0) {  // nothing connected: cross join the two smallest
      std::vector<int> order(components.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
      std::sort(order.begin(), order.end(), [&](int x, int y) { return components[x].rows < components[y].rows; });
      best_a = std::min(order[0], order[1]);
      best_b = std::max(order[0], order[1]);
    }
    Component b = std::move(components[best_b]);
    Component a = std::move(components[best_a]);
    components.erase(components.begin() + best_b);
    components.erase(components.begin() + best_a);
    components.push_back(JoinComponents(estimator, std::move(a), std::move(b), &conditions));
  }

  Component& result = components[0];
  std::vector<int> order(width);
  for (int column = 0; column < width; ++column) {
    order[column] =
        static_cast<int>(std::find(result.columns.begin(), result.columns.end(), column) - result.columns.begin());
  }
  bool identity = true;
  for (int column = 0; column < width; ++column) identity &= order[column] == column;
  LogicalOperatorPtr plan = std::move(result.plan);
  if (!constant_conditions.empty()) {
    std::vector<int> columns = result.columns;
    for (ExpressionPtr& condition : constant_conditions) {
      RemapColumns(condition.get(), [&](int c) {
        return static_cast<int>(std::find(columns.begin(), columns.end(), c) - columns.begin());
      });
    }
    plan = MakeFilter(std::move(plan), CombineConjuncts(std::move(constant_conditions)));
  }
  if (!identity) plan = MakeColumnSelection(std::move(plan), order);
  return plan;
}

LogicalOperatorPtr Reorder(LogicalOperatorPtr node) {
  if (IsInnerJoin(*node)) return ReorderTree(std::move(node));
  for (auto& child : node->children) child = Reorder(std::move(child));
  node->RecomputeOutput();
  return node;
}

}  // namespace

LogicalOperatorPtr JoinOrdering::Apply(LogicalOperatorPtr plan) const { return Reorder(std::move(plan)); }

}  // namespace tessera::optimizer
