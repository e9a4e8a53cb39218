// WITH RECURSIVE: the binder evaluates a recursive query while binding the first reference to it, by a driver
// loop over the engine's executor (OptimizerOptions::run_plan), and binds every reference to the rows as a
// Values node (kept for later references of the same statement).
//
// The query must be `anchor UNION [ALL] recursive term` (the anchor may itself be a set operation); the recursive
// term reads the query's own name, the anchor does not (there the name is not visible). The loop, as in the SQL
// standard and PostgreSQL:
//   working table := the anchor's rows (UNION: without duplicates); result := working table
//   while the working table has rows: run the recursive term over it (each reference to the name reads the
//     working table); UNION drops the rows already in the result and repeated ones; the rows left are added to
//     the result and become the next working table.
// The columns take the anchor's types (the recursive term's rows are cast to them) and names (or the WITH
// query's column list). A step beyond max_recursion_depth that still finds rows is an error that names the
// setting (so with max_recursion_depth = N, counting 1..N+1 works: N steps add rows, the next finds none).
// Without options (BindQuery: CREATE VIEW, DESCRIBE) the query binds with no rows: its schema alone.
//
// Each step binds the recursive term anew over the new working table and runs the rule list on it, so the
// rules see the working table's rows as constants (a step's plan is that of a query over a VALUES list).

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/query_binder.h"
#include "optimizer/rules/rule_list.h"

namespace tessera::optimizer {
namespace {

// The anchor and the recursive term of a recursive query's body, or nulls when it is not a UNION.
struct RecursiveParts {
  const parser::QueryBody* anchor = nullptr;
  const parser::QueryBody* term = nullptr;
  bool all = false;
};

RecursiveParts SplitRecursiveBody(const parser::SelectStatement& query) {
  const parser::QueryBody& body = *query.body;
  if (body.kind != parser::QueryBody::Kind::kSetOperation || body.set_operation != parser::SetOperation::kUnion) {
    return {};
  }
  return RecursiveParts{body.left.get(), body.right.get(), body.all};
}

// The rows of one UNION (not ALL) step that are new: not in `seen` and not repeated within `rows`.
class RowDeduplicator {
 public:
  std::vector<std::vector<Value>> KeepNew(std::vector<std::vector<Value>> rows) {
    std::vector<std::vector<Value>> fresh;
    for (std::vector<Value>& row : rows) {
      std::string key;
      for (const Value& value : row) {
        const std::string part = value.Serialize();
        absl::StrAppend(&key, part.size(), ":", part);
      }
      if (seen_.insert(std::move(key)).second) fresh.push_back(std::move(row));
    }
    return fresh;
  }

 private:
  absl::flat_hash_set<std::string> seen_;
};

}  // namespace

absl::StatusOr<LogicalOperatorPtr> QueryBinder::BindRecursiveTerm(const CteEntry& entry, const parser::QueryBody& term,
                                                                  const Values& working, int* references) {
  std::vector<CteEntry> saved = ctes_;
  ctes_.resize(entry.visible);
  ctes_.push_back(CteEntry{entry.cte, entry.visible, &working});
  const int references_before = working_table_references_;
  const int64_t expansions_before = *expanded_references_;
  std::vector<SortKey> unused_keys;
  int unused_visible = 0;
  absl::StatusOr<BoundRelation> bound = BindBody(term, nullptr, nullptr, &unused_keys, &unused_visible);
  ctes_ = std::move(saved);
  *references = working_table_references_ - references_before;
  // Each step binds the term again: its expansions are bounded per binding (CountExpansion), not summed over the
  // steps.
  *expanded_references_ = expansions_before;
  if (!bound.ok()) return bound.status();
  LogicalOperatorPtr plan = std::move(bound->plan);
  const std::vector<OutputColumn>& columns = working.columns;
  const std::string& name = entry.cte->name;
  if (plan->output_width() != static_cast<int>(columns.size())) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, entry.cte->position,
                   absl::StrCat("the recursive term of WITH RECURSIVE query '", name, "' has ", plan->output_width(),
                                " columns, its non-recursive term ", columns.size()));
  }
  bool needs_cast = false;
  for (size_t i = 0; i < columns.size(); ++i) needs_cast |= !(plan->output()[i].type == columns[i].type);
  if (!needs_cast) return plan;
  std::vector<ExpressionPtr> expressions;
  std::vector<std::string> names;
  for (size_t i = 0; i < columns.size(); ++i) {
    ExpressionPtr column = MakeInputColumn(plan->output(), static_cast<int>(i));
    absl::StatusOr<ExpressionPtr> cast = Coerce(std::move(column), columns[i].type, entry.cte->position);
    if (!cast.ok()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, entry.cte->position,
                     absl::StrCat("WITH RECURSIVE query '", name, "': column ", i + 1, " of the recursive term is ",
                                  plan->output()[i].type.ToString(), ", which does not cast to the non-recursive ",
                                  "term's ", columns[i].type.ToString()));
    }
    expressions.push_back(*std::move(cast));
    names.push_back(columns[i].name);
  }
  return LogicalOperatorPtr(MakeProject(std::move(plan), std::move(expressions), std::move(names)));
}

absl::StatusOr<std::optional<BoundRelation>> QueryBinder::BindRecursiveCte(const CteEntry& entry) {
  const parser::CommonTableExpr& cte = *entry.cte;
  const parser::SelectStatement& query = *cte.query;
  const RecursiveParts parts = SplitRecursiveBody(query);
  if (parts.term == nullptr) return std::nullopt;  // not a UNION: a plain WITH query (it cannot read its name)

  if (auto found = recursive_results_.find(&cte); found != recursive_results_.end()) {
    BoundRelation relation;
    relation.plan = found->second->Clone();
    relation.names = relation.plan->OutputNames();
    return relation;
  }

  // The anchor, in the WITH queries visible to this one (its own WITH list too).
  std::vector<CteEntry> saved = ctes_;
  ctes_.resize(entry.visible);
  for (const parser::CommonTableExpr& inner : query.ctes) ctes_.push_back(CteEntry{&inner, ctes_.size()});
  const CteEntry scoped{&cte, ctes_.size()};
  std::vector<SortKey> unused_keys;
  int unused_visible = 0;
  absl::StatusOr<BoundRelation> anchor = BindBody(*parts.anchor, nullptr, nullptr, &unused_keys, &unused_visible);
  if (!anchor.ok()) {
    ctes_ = std::move(saved);
    return anchor.status();
  }
  auto result = std::make_shared<Values>();
  std::vector<OutputColumn> columns = anchor->plan->output();
  if (cte.column_names.size() > columns.size()) {
    ctes_ = std::move(saved);
    return ErrorAt(absl::StatusCode::kInvalidArgument, cte.position,
                   absl::StrCat("WITH query '", cte.name, "' has ", columns.size(), " columns available but ",
                                cte.column_names.size(), " columns specified"));
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    columns[i].name = i < cte.column_names.size() ? cte.column_names[i] : anchor->names[i];
    columns[i].nullable = true;
    columns[i].relation = cte.name;
  }
  result->columns = columns;
  result->RecomputeOutput();

  // Bound once over no rows first: does the term read the name at all, and do its columns fit?
  int references = 0;
  absl::StatusOr<LogicalOperatorPtr> probe = BindRecursiveTerm(scoped, *parts.term, *result, &references);
  absl::Status status = probe.status();
  if (status.ok() && references == 0) {
    ctes_ = std::move(saved);
    return std::nullopt;
  }
  auto fail = [&](absl::Status error) {
    ctes_ = std::move(saved);
    return error;
  };
  if (!status.ok()) return fail(status);
  if (!query.order_by.empty() || query.limit != nullptr || query.offset != nullptr) {
    return fail(
        ErrorAt(absl::StatusCode::kUnimplemented, cte.position,
                absl::StrCat("ORDER BY, LIMIT and OFFSET in WITH RECURSIVE query '", cte.name, "' are not supported")));
  }
  if (options_ != nullptr && !options_->run_plan) {
    return fail(ErrorAt(absl::StatusCode::kUnimplemented, cte.position,
                        absl::StrCat("WITH RECURSIVE query '", cte.name, "' cannot be evaluated here")));
  }

  if (options_ != nullptr) {
    std::optional<RowDeduplicator> dedup;
    if (!parts.all) dedup.emplace();
    auto run = [&](LogicalOperatorPtr plan) -> absl::StatusOr<std::vector<std::vector<Value>>> {
      TESSERA_ASSIGN_OR_RETURN(plan, RunRules(std::move(plan), *options_, nullptr));
      TESSERA_ASSIGN_OR_RETURN(std::vector<std::vector<Value>> rows, options_->run_plan(*plan));
      return dedup.has_value() ? dedup->KeepNew(std::move(rows)) : rows;
    };
    absl::StatusOr<std::vector<std::vector<Value>>> rows = run(std::move(anchor->plan));
    if (!rows.ok()) return fail(rows.status());
    Values working;
    working.columns = columns;
    working.rows = *std::move(rows);
    working.RecomputeOutput();
    result->rows = working.rows;
    for (int64_t step = 1; !working.rows.empty(); ++step) {
      absl::StatusOr<LogicalOperatorPtr> term = BindRecursiveTerm(scoped, *parts.term, working, &references);
      if (!term.ok()) return fail(term.status());
      rows = run(*std::move(term));
      if (!rows.ok()) return fail(rows.status());
      if (!rows->empty() && step > options_->max_recursion_depth) {
        return fail(ErrorAt(
            absl::StatusCode::kResourceExhausted, cte.position,
            absl::StrCat("WITH RECURSIVE query '", cte.name,
                         "' did not finish within max_recursion_depth = ", options_->max_recursion_depth, " steps (",
                         result->rows.size(), " rows so far); raise it with SET max_recursion_depth")));
      }
      working.rows = *std::move(rows);
      result->rows.insert(result->rows.end(), working.rows.begin(), working.rows.end());
    }
  }
  ctes_ = std::move(saved);
  recursive_results_[&cte] = result;
  BoundRelation relation;
  relation.plan = result->Clone();
  relation.names = relation.plan->OutputNames();
  return relation;
}

}  // namespace tessera::optimizer
