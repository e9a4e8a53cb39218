#pragma once
// The binder: turns a parsed SELECT statement into a logical plan against a catalog snapshot. It resolves
// names (aliases, qualified and unqualified columns, USING/NATURAL joins, CTEs, views, derived tables),
// checks and coerces types (explicit kCast nodes, see expressions/bound_expression.h), rewrites aggregates
// into Aggregate + Project, and decorrelates subqueries:
//   EXISTS / IN (subquery)            -> semi join (correlated equalities become keys, other correlated
//                                        predicates the residual)
//   NOT EXISTS / NOT IN (subquery)    -> anti join (NOT IN: null-aware when either side may be NULL)
//   scalar subquery, uncorrelated     -> cross join with its single row (left join + single-row check when
//                                        it is not an aggregate)
//   scalar subquery, correlated       -> aggregate grouped by the correlation keys, joined back on them
//                                        (inner join when the comparison rejects NULLs, else left join)
//
// The plan is exactly what the query says: comma-separated FROM items become cross joins under a Filter.
// PlanQuery() also runs the rewrite rules (optimizer/rules/), which push predicates into joins and scans and
// order the joins; that is what execution should use.
//
// Errors are user errors with the position: InvalidArgument (type errors, misuse), NotFound (unknown table,
// column or function, with a "did you mean" hint), Unimplemented (valid SQL this binder does not support
// yet). Every message is formatted by parser::FormatErrorWithCaret (line, column and a caret under the
// offending text).
//
// Thread-safe: no shared state; the catalog is only read (table snapshots are held by the plan).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "catalog/catalog.h"
#include "optimizer/logical_plan.h"
#include "optimizer/optimizer_options.h"
#include "parser/ast.h"

namespace tessera::optimizer {

// `sql_text` is the text the statement was parsed from (positions in the AST refer to it). Without options, a
// WITH RECURSIVE query binds with no rows (its schema only: CREATE VIEW, DESCRIBE).
absl::StatusOr<std::unique_ptr<LogicalOperator>> BindQuery(const parser::SelectStatement& query, const Catalog& catalog,
                                                           std::string_view sql_text);

// BindQuery followed by the rule list of optimizer/rules/rule_list.h, without the rules `options` disables.
// With a `report`, records the binding time and each rule's time. WITH RECURSIVE queries are evaluated while
// binding, through `options.run_plan` (rejected without one; recursive_cte_binder.cc).
absl::StatusOr<std::unique_ptr<LogicalOperator>> PlanQuery(const parser::SelectStatement& query, const Catalog& catalog,
                                                           std::string_view sql_text,
                                                           const OptimizerOptions& options = {},
                                                           OptimizerReport* report = nullptr);

// DELETE / UPDATE (engine/dml_statements.cc): PlanQuery where FROM items naming `target->name` bind to `target`, a
// snapshot with the hidden row-id column (catalog/row_deletions.h), instead of the catalog's table. The row-id
// column is invisible to unqualified names and to SELECT *; `alias."#row_id"` reaches it.
absl::StatusOr<std::unique_ptr<LogicalOperator>> PlanQueryWithRowIds(const parser::SelectStatement& query,
                                                                     const Catalog& catalog, std::string_view sql_text,
                                                                     std::shared_ptr<const TableDescriptor> target,
                                                                     const OptimizerOptions& options = {});

}  // namespace tessera::optimizer
