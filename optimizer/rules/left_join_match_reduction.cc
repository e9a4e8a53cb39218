#include "optimizer/rules/left_join_match_reduction.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "optimizer/cardinality_estimator.h"
#include "optimizer/constant_folding.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/rules/semi_join_push_down.h"

namespace tessera::optimizer {
namespace {

// `expression` with the columns in [begin, end) replaced by NULL.
ExpressionPtr WithNulls(ExpressionPtr expression, int begin, int end) {
  if (expression->kind == ExpressionKind::kColumn && expression->column_index >= begin &&
      expression->column_index < end) {
    return MakeConstant(Value::Null(expression->result_type));
  }
  for (ExpressionPtr& child : expression->children) child = WithNulls(std::move(child), begin, end);
  return expression;
}

// True if `predicate` is never TRUE for a row whose columns in [begin, end) are all NULL.
bool NeverTrueWithNulls(const BoundExpression& predicate, int begin, int end) {
  if (RejectsNulls(predicate, begin, end)) return true;
  ExpressionPtr folded = FoldConstantsDeep(WithNulls(predicate.Clone(), begin, end));
  return folded->kind == ExpressionKind::kConstant && (folded->constant.is_null() || !folded->constant.AsBool());
}

// A left outer join of the chain, with its right side's columns [begin, end) in the chain's output.
struct ChainJoin {
  Join* join = nullptr;
  int begin = 0;
  int end = 0;
};

// The columns of A (the chain's bottom input) that `join`'s left keys read, in ascending order, with the right
// key of each; false if a key is not a plain column of A, a column repeats, or the join is a scalar subquery's.
bool KeysOnA(const Join& join, int a_width, std::vector<int>* columns, std::vector<const BoundExpression*>* right) {
  if (join.enforce_single_row) return false;  // a scalar subquery's join: its right side is checked, not copied
  std::vector<std::pair<int, const BoundExpression*>> pairs;
  for (size_t i = 0; i < join.left_keys.size(); ++i) {
    const BoundExpression& key = *join.left_keys[i];
    if (!IsColumn(key) || key.column_index >= a_width) return false;
    pairs.emplace_back(key.column_index, join.right_keys[i].get());
  }
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i > 0 && pairs[i].first == pairs[i - 1].first) return false;
    columns->push_back(pairs[i].first);
    right->push_back(pairs[i].second);
  }
  return !pairs.empty();
}

// Applies the rewrite at `filter` if its input is a chain of left outer joins that one of its conjuncts needs a
// match of.
void Reduce(Filter& filter) {
  std::vector<ChainJoin> chain;  // top-down
  LogicalOperator* node = filter.children[0].get();
  while (node->kind() == LogicalOperatorKind::kJoin && node->As<Join>().join_type == JoinType::kLeftOuter) {
    chain.push_back({&node->As<Join>(), 0, 0});
    node = node->children[0].get();
  }
  if (chain.empty()) return;
  std::reverse(chain.begin(), chain.end());  // bottom-up
  Join& bottom = *chain.front().join;
  const int a_width = bottom.children[0]->output_width();
  int offset = a_width;
  for (ChainJoin& link : chain) {
    link.begin = offset;
    offset += link.join->children[1]->output_width();
    link.end = offset;
  }

  // The chain's joins that some conjunct needs a match in, one of them per disjunct.
  std::set<size_t> needed;
  std::vector<ExpressionPtr> conjuncts = SplitConjuncts(filter.predicate->Clone());
  for (const ExpressionPtr& conjunct : conjuncts) {
    std::vector<const BoundExpression*> disjuncts;
    if (conjunct->kind == ExpressionKind::kOr) {
      for (const auto& child : conjunct->children) disjuncts.push_back(child.get());
    } else {
      disjuncts.push_back(conjunct.get());
    }
    std::set<size_t> joins;
    for (const BoundExpression* disjunct : disjuncts) {
      size_t found = chain.size();
      for (size_t j = 0; j < chain.size() && found == chain.size(); ++j) {
        if (NeverTrueWithNulls(*disjunct, chain[j].begin, chain[j].end)) found = j;
      }
      if (found == chain.size()) {
        joins.clear();
        break;
      }
      joins.insert(found);
    }
    if (!joins.empty()) {
      needed = std::move(joins);
      break;
    }
  }
  if (needed.empty()) return;

  // Every needed join must read the same columns of A; the build sides together smaller than A.
  std::vector<int> a_columns;
  std::vector<std::vector<const BoundExpression*>> right_keys;
  const CardinalityEstimator estimator;
  double build_rows = 0;
  for (size_t j : needed) {
    std::vector<int> columns;
    std::vector<const BoundExpression*> keys;
    if (!KeysOnA(*chain[j].join, a_width, &columns, &keys)) return;
    if (!a_columns.empty() && columns != a_columns) return;
    a_columns = std::move(columns);
    right_keys.push_back(std::move(keys));
    build_rows += estimator.EstimateRows(*chain[j].join->children[1]);
  }
  if (build_rows >= estimator.EstimateRows(*bottom.children[0])) return;

  // The union of the needed right sides' keys (copies), in a_columns' order.
  LogicalOperatorPtr keys;
  size_t branch = 0;
  for (size_t j : needed) {
    std::vector<ExpressionPtr> expressions;
    std::vector<std::string> names;
    for (size_t k = 0; k < a_columns.size(); ++k) {
      expressions.push_back(right_keys[branch][k]->Clone());
      names.push_back(bottom.children[0]->output()[a_columns[k]].name);
    }
    LogicalOperatorPtr project =
        MakeProject(chain[j].join->children[1]->Clone(), std::move(expressions), std::move(names));
    ++branch;
    keys = keys == nullptr ? std::move(project) : MakeUnionAll(std::move(keys), std::move(project));
  }

  std::unique_ptr<Join> semi = MakeJoin(JoinType::kSemi, std::move(bottom.children[0]), std::move(keys));
  for (size_t k = 0; k < a_columns.size(); ++k) {
    semi->left_keys.push_back(MakeInputColumn(semi->children[0]->output(), a_columns[k]));
    semi->right_keys.push_back(MakeInputColumn(semi->children[1]->output(), static_cast<int>(k)));
  }
  bottom.children[0] = SinkSemiJoin(std::move(semi));
  for (ChainJoin& link : chain) link.join->RecomputeOutput();
  filter.RecomputeOutput();
}

LogicalOperatorPtr Apply(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = Apply(std::move(child));
  if (node->kind() == LogicalOperatorKind::kFilter) Reduce(node->As<Filter>());
  return node;
}

}  // namespace

LogicalOperatorPtr LeftJoinMatchReduction::Apply(LogicalOperatorPtr plan) const {
  return tessera::optimizer::Apply(std::move(plan));
}

}  // namespace tessera::optimizer
