#include "optimizer/rules/predicate_push_down.h"

#include <algorithm>

#include "optimizer/expression_analysis.h"
#include "optimizer/join_condition.h"
#include "optimizer/logical_window.h"

namespace tessera::optimizer {
namespace {

using Predicates = std::vector<ExpressionPtr>;

LogicalOperatorPtr Push(LogicalOperatorPtr node, Predicates predicates);

LogicalOperatorPtr WithFilter(LogicalOperatorPtr node, Predicates predicates) {
  if (predicates.empty()) return node;
  return MakeFilter(std::move(node), CombineConjuncts(std::move(predicates)));
}

Predicates Normalize(Predicates predicates) {
  Predicates out;
  for (ExpressionPtr& predicate : predicates) {
    for (ExpressionPtr& conjunct : SplitConjuncts(std::move(predicate)))
      FactorCommonConjuncts(std::move(conjunct), &out);
  }
  return out;
}

// Partial push-down: for an OR spanning both sides, the OR over each branch's conjuncts on [begin, end), if
// every branch has some; null otherwise.
ExpressionPtr DisjunctionPart(const BoundExpression& disjunction, int begin, int end) {
  if (disjunction.kind != ExpressionKind::kOr) return nullptr;
  Predicates branches;
  for (const auto& branch : disjunction.children) {
    Predicates part;
    for (ExpressionPtr& term : SplitConjuncts(branch->Clone())) {
      if (MaxColumnIndex(*term) >= 0 && ReferencesOnlyRange(*term, begin, end)) part.push_back(std::move(term));
    }
    if (part.empty()) return nullptr;
    branches.push_back(CombineConjuncts(std::move(part)));
  }
  return CombineDisjuncts(std::move(branches));
}

// Transitive predicates across a join's keys: for a predicate over one column of one side that fails when the
// column is NULL (`ss_sold_year = 2000`), and a key pair `that column = other side's column` (plain columns of
// one type), the same predicate over the other side's column (`cs_sold_year = 2000`). Rows of the other side
// that fail it can match no row that passes the original, so it may filter them wherever the original filters
// its own side (TPC-DS Q78: the year of store sales filters the web and catalog sales that a LEFT JOIN matches
// on year, item and customer, before they are aggregated). `from` is over the side of `from_keys`, the result
// over the side of `to_keys`; a predicate already in `to` is not repeated.
Predicates DeriveAcrossKeys(const Predicates& from, const std::vector<ExpressionPtr>& from_keys,
                            const std::vector<ExpressionPtr>& to_keys, const Predicates& to) {
  Predicates derived;
  for (const ExpressionPtr& predicate : from) {
    std::vector<int> columns;
    CollectColumns(*predicate, &columns);
    if (columns.empty() || std::any_of(columns.begin(), columns.end(), [&](int c) { return c != columns[0]; })) {
      continue;
    }
    const int column = columns[0];
    if (!RejectsNulls(*predicate, column, column + 1)) continue;
    for (size_t pair = 0; pair < from_keys.size(); ++pair) {
      const BoundExpression& from_key = *from_keys[pair];
      const BoundExpression& to_key = *to_keys[pair];
      if (!IsColumn(from_key) || !IsColumn(to_key) || from_key.column_index != column ||
          !(from_key.result_type == to_key.result_type)) {
        continue;
      }
      ExpressionPtr copy = predicate->Clone();
      RemapColumns(copy.get(), [&](int) { return to_key.column_index; });
      const auto same = [&](const ExpressionPtr& other) { return ExpressionsEqual(*other, *copy); };
      if (std::none_of(to.begin(), to.end(), same) && std::none_of(derived.begin(), derived.end(), same)) {
        derived.push_back(std::move(copy));
      }
    }
  }
  return derived;
}

void Append(Predicates more, Predicates* predicates) {
  for (ExpressionPtr& predicate : more) predicates->push_back(std::move(predicate));
}

// A LEFT OUTER join that is input `side` of inner join `join` becomes inner when a condition of `join` (a
// conjunct of `condition`, over `join`'s output, or a key of that side) rejects NULLs from its right side: the
// rows it pads would fail that condition anyway. TPC-DS Q93: `store_sales LEFT JOIN store_returns ..., reason
// WHERE sr_reason_sk = r_reason_sk` joins returns with one reason first instead of padding every sale.
void InnerIfPaddingRejected(Join* join, int side, const Predicates& condition) {
  LogicalOperator& child = *join->children[side];
  if (child.kind() != LogicalOperatorKind::kJoin) return;
  Join& outer = child.As<Join>();
  if (outer.join_type != JoinType::kLeftOuter) return;
  const int padded_begin = outer.children[0]->output_width();
  const int padded_end = child.output_width();
  const int offset = side == 0 ? 0 : join->children[0]->output_width();
  bool rejected = false;
  for (const ExpressionPtr& key : side == 0 ? join->left_keys : join->right_keys) {
    rejected |= StrictIn(*key, padded_begin, padded_end);
  }
  for (const ExpressionPtr& predicate : condition) {
    rejected |= RejectsNulls(*predicate, offset + padded_begin, offset + padded_end);
  }
  if (rejected) outer.join_type = JoinType::kInner;
}

// `join`, an inner single-row join (an uncorrelated scalar subquery compared by equality, `d_month_seq =
// (SELECT ...)`) with keys and no residual, moved down its left input to the input its left keys read: through
// inner joins (to the side holding every key column) and projections of plain columns. The output keeps its
// columns and order. JoinOrdering leaves single-row joins in place, so above a join tree the subquery filtered
// nothing until every join had run; sunk to date_dim, the dimension is filtered to a month before the fact
// table probes it (TPC-DS Q06: store_sales probed all 73,049 dates, then the month's 31).
LogicalOperatorPtr SinkSingleRowJoin(std::unique_ptr<Join> join) {
  std::vector<int> columns;
  for (const ExpressionPtr& key : join->left_keys) CollectColumns(*key, &columns);
  if (columns.empty()) return join;
  const int subquery_width = join->children[1]->output_width();
  LogicalOperator& left = *join->children[0];
  if (left.kind() == LogicalOperatorKind::kProject) {
    for (const ExpressionPtr& expression : left.As<Project>().expressions) {
      if (!IsColumn(*expression)) return join;
    }
    LogicalOperatorPtr project_plan = std::move(join->children[0]);
    const Project& project = project_plan->As<Project>();
    for (ExpressionPtr& key : join->left_keys) {
      RemapColumns(key.get(), [&](int column) { return project.expressions[column]->column_index; });
    }
    const int below_width = project.children[0]->output_width();
    join->children[0] = std::move(project_plan->children[0]);
    join->RecomputeOutput();
    LogicalOperatorPtr sunk = SinkSingleRowJoin(std::move(join));
    std::vector<ExpressionPtr> expressions;
    std::vector<std::string> names;
    for (size_t i = 0; i < project.expressions.size(); ++i) {
      expressions.push_back(MakeInputColumn(sunk->output(), project.expressions[i]->column_index));
      names.push_back(project.output()[i].name);
    }
    for (int i = 0; i < subquery_width; ++i) {
      expressions.push_back(MakeInputColumn(sunk->output(), below_width + i));
      names.push_back(sunk->output()[below_width + i].name);
    }
    return MakeProject(std::move(sunk), std::move(expressions), std::move(names));
  }
  if (left.kind() != LogicalOperatorKind::kJoin) return join;
  Join& below = left.As<Join>();
  if (below.join_type != JoinType::kInner || below.enforce_single_row || below.null_aware) return join;
  const int left_width = below.children[0]->output_width();
  const bool on_left = std::all_of(columns.begin(), columns.end(), [&](int c) { return c < left_width; });
  const bool on_right = std::all_of(columns.begin(), columns.end(), [&](int c) { return c >= left_width; });
  if (!on_left && !on_right) return join;
  LogicalOperatorPtr below_plan = std::move(join->children[0]);
  const int side = on_left ? 0 : 1;
  if (on_right) {
    for (ExpressionPtr& key : join->left_keys) ShiftColumns(key.get(), -left_width);
  }
  join->children[0] = std::move(below.children[side]);
  join->RecomputeOutput();
  below.children[side] = SinkSingleRowJoin(std::move(join));
  if (on_right) {  // output: left, right, subquery, as before
    below.RecomputeOutput();
    return below_plan;
  }
  // The subquery's columns now follow the left side's: the residual's right-side columns move, and a selection
  // restores the order.
  const int right_width = below.children[1]->output_width();
  if (below.residual != nullptr) {
    RemapColumns(below.residual.get(),
                 [&](int column) { return column < left_width ? column : column + subquery_width; });
  }
  below.RecomputeOutput();
  std::vector<int> order;
  for (int c = 0; c < left_width; ++c) order.push_back(c);
  for (int c = 0; c < right_width; ++c) order.push_back(left_width + subquery_width + c);
  for (int c = 0; c < subquery_width; ++c) order.push_back(left_width + c);
  return MakeColumnSelection(std::move(below_plan), order);
}

LogicalOperatorPtr PushJoin(std::unique_ptr<Join> join, Predicates predicates) {
  const int left_width = join->children[0]->output_width();
  const int total = left_width + join->children[1]->output_width();
  Predicates left, right, above;
  if (join->join_type == JoinType::kLeftOuter) {
    for (const ExpressionPtr& predicate : predicates) {
      if (RejectsNulls(*predicate, left_width, total)) join->join_type = JoinType::kInner;
    }
  }
  switch (join->join_type) {
    case JoinType::kInner:
    case JoinType::kCross: {
      Predicates all = std::move(predicates);
      all.push_back(std::move(join->residual));
      all = Normalize(std::move(all));
      Predicates condition;
      for (ExpressionPtr& predicate : all) {
        if (ReferencesOnlyRange(*predicate, 0, left_width)) {
          left.push_back(std::move(predicate));
        } else if (ReferencesOnlyRange(*predicate, left_width, total)) {
          ShiftColumns(predicate.get(), -left_width);
          right.push_back(std::move(predicate));
        } else {
          if (ExpressionPtr part = DisjunctionPart(*predicate, 0, left_width); part != nullptr) {
            left.push_back(std::move(part));
          }
          if (ExpressionPtr part = DisjunctionPart(*predicate, left_width, total); part != nullptr) {
            ShiftColumns(part.get(), -left_width);
            right.push_back(std::move(part));
          }
          condition.push_back(std::move(predicate));
        }
      }
      InnerIfPaddingRejected(join.get(), 0, condition);
      InnerIfPaddingRejected(join.get(), 1, condition);
      if (!condition.empty()) AddJoinCondition(join.get(), CombineConjuncts(std::move(condition)));
      Predicates to_right = DeriveAcrossKeys(left, join->left_keys, join->right_keys, right);
      Append(DeriveAcrossKeys(right, join->right_keys, join->left_keys, left), &left);
      Append(std::move(to_right), &right);
      break;
    }
    case JoinType::kLeftOuter:
    case JoinType::kSemi:
    case JoinType::kAnti: {
      // Predicates above see left columns (and, for left outer joins, NULL-padded right columns).
      for (ExpressionPtr& predicate : Normalize(std::move(predicates))) {
        if (ReferencesOnlyRange(*predicate, 0, left_width)) {
          left.push_back(std::move(predicate));
        } else {
          above.push_back(std::move(predicate));
        }
      }
      // The join condition: conjuncts over the right side only restrict the right input.
      Predicates residual;
      for (ExpressionPtr& conjunct : Normalize(SplitConjuncts(std::move(join->residual)))) {
        if (MaxColumnIndex(*conjunct) >= 0 && ReferencesOnlyRange(*conjunct, left_width, total)) {
          ShiftColumns(conjunct.get(), -left_width);
          right.push_back(std::move(conjunct));
        } else if (join->join_type == JoinType::kSemi && ReferencesOnlyRange(*conjunct, 0, left_width)) {
          left.push_back(std::move(conjunct));
        } else {
          residual.push_back(std::move(conjunct));
        }
      }
      join->residual = CombineConjuncts(std::move(residual));
      // Right rows can only matter by matching a left row (NOT IN's null-aware join aside: a NULL right key
      // matters to every left row); a semi join keeps only left rows that match a right row.
      if (!join->null_aware && !join->enforce_single_row) {
        Predicates to_right = DeriveAcrossKeys(left, join->left_keys, join->right_keys, right);
        if (join->join_type == JoinType::kSemi) {
          Append(DeriveAcrossKeys(right, join->right_keys, join->left_keys, left), &left);
        }
        Append(std::move(to_right), &right);
      }
      break;
    }
    case JoinType::kFullOuter:
      above = std::move(predicates);
      break;
  }
  join->children[0] = Push(std::move(join->children[0]), std::move(left));
  join->children[1] = Push(std::move(join->children[1]), std::move(right));
  join->RecomputeOutput();
  if (join->enforce_single_row && join->join_type == JoinType::kInner && join->residual == nullptr &&
      !join->left_keys.empty()) {
    return WithFilter(SinkSingleRowJoin(std::move(join)), std::move(above));
  }
  return WithFilter(std::move(join), std::move(above));
}

LogicalOperatorPtr Push(LogicalOperatorPtr node, Predicates incoming) {
  Predicates predicates;
  for (ExpressionPtr& predicate : incoming) {
    for (ExpressionPtr& conjunct : SplitConjuncts(std::move(predicate))) predicates.push_back(std::move(conjunct));
  }
  switch (node->kind()) {
    case LogicalOperatorKind::kFilter: {
      predicates.push_back(std::move(node->As<Filter>().predicate));
      return Push(std::move(node->children[0]), std::move(predicates));
    }
    case LogicalOperatorKind::kTableScan: {
      auto& scan = node->As<TableScan>();
      predicates.push_back(std::move(scan.filter));
      scan.filter = CombineConjuncts(Normalize(std::move(predicates)));
      return node;
    }
    case LogicalOperatorKind::kProject: {
      auto& project = node->As<Project>();
      std::vector<const BoundExpression*> replacements;
      for (const auto& expression : project.expressions) replacements.push_back(expression.get());
      Predicates below;
      for (const ExpressionPtr& predicate : predicates) below.push_back(SubstituteColumns(*predicate, replacements));
      node->children[0] = Push(std::move(node->children[0]), std::move(below));
      return node;
    }
    case LogicalOperatorKind::kSort:
    case LogicalOperatorKind::kDistinct:
      node->children[0] = Push(std::move(node->children[0]), std::move(predicates));
      return node;
    case LogicalOperatorKind::kAggregate: {
      auto& aggregate = node->As<Aggregate>();
      const int keys = static_cast<int>(aggregate.group_by.size());
      std::vector<const BoundExpression*> replacements;
      for (const auto& key : aggregate.group_by) replacements.push_back(key.get());
      Predicates below, above;
      for (ExpressionPtr& predicate : predicates) {
        if (keys > 0 && ReferencesOnlyRange(*predicate, 0, keys)) {
          below.push_back(SubstituteColumns(*predicate, replacements));
        } else {
          above.push_back(std::move(predicate));
        }
      }
      node->children[0] = Push(std::move(node->children[0]), std::move(below));
      return WithFilter(std::move(node), std::move(above));
    }
    case LogicalOperatorKind::kSetOperation: {
      Predicates copies;
      for (const ExpressionPtr& predicate : predicates) copies.push_back(predicate->Clone());
      node->children[0] = Push(std::move(node->children[0]), std::move(predicates));
      node->children[1] = Push(std::move(node->children[1]), std::move(copies));
      return node;
    }
    case LogicalOperatorKind::kJoin: {
      std::unique_ptr<Join> join(static_cast<Join*>(node.release()));
      return PushJoin(std::move(join), std::move(predicates));
    }
    case LogicalOperatorKind::kWindow: {
      // A predicate over PARTITION BY columns only keeps or drops whole partitions, so it may go below; any
      // other would change the rows the functions see.
      const auto& window = node->As<Window>();
      std::vector<int> keys;
      for (const ExpressionPtr& key : window.partition_by) {
        if (key->kind == ExpressionKind::kColumn) keys.push_back(key->column_index);
      }
      Predicates below, above;
      for (ExpressionPtr& predicate : predicates) {
        std::vector<int> columns;
        CollectColumns(*predicate, &columns);
        bool on_keys = !columns.empty();
        for (int column : columns) on_keys &= std::find(keys.begin(), keys.end(), column) != keys.end();
        (on_keys ? below : above).push_back(std::move(predicate));
      }
      node->children[0] = Push(std::move(node->children[0]), std::move(below));
      return WithFilter(std::move(node), Normalize(std::move(above)));
    }
    case LogicalOperatorKind::kLimit:
    case LogicalOperatorKind::kValues:
    case LogicalOperatorKind::kSeries:
      for (auto& child : node->children) child = Push(std::move(child), {});
      return WithFilter(std::move(node), Normalize(std::move(predicates)));
  }
  return WithFilter(std::move(node), std::move(predicates));
}

}  // namespace

LogicalOperatorPtr PredicatePushDown::Apply(LogicalOperatorPtr plan) const { return Push(std::move(plan), {}); }

}  // namespace tessera::optimizer
