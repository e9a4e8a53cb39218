#pragma once
// Binder internals (see binder.h for the contract). One QueryBinder binds one statement text: the statement,
// or a view's stored query (views get their own QueryBinder, with the view's text for error positions). Its
// member functions are split by topic:
//   query_binder.cc       statements, set operations, ORDER BY / LIMIT, CTE environment
//   from_binder.cc        FROM: tables, views, CTE references, derived tables, joins (ON / USING / NATURAL)
//   lateral_binder.cc     LATERAL subqueries in FROM
//   select_binder.cc      one SELECT block: WHERE, GROUP BY, aggregates, HAVING, select list, DISTINCT
//   subquery_binder.cc    EXISTS / IN / scalar subqueries and their decorrelation
//   expression_binder.cc  scalar expressions and their typing
// Single-threaded; lives for one BindQuery call.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "catalog/catalog.h"
#include "optimizer/bind_scope.h"
#include "optimizer/constant_folding.h"
#include "optimizer/logical_plan.h"
#include "optimizer/logical_window.h"
#include "optimizer/optimizer_options.h"
#include "parser/ast.h"

namespace tessera::optimizer {

// While a subquery block is decorrelated, a reference to column j of the enclosing block's scope is bound as
// a kColumn with index kOuterColumnBase + j; the decorrelation re-indexes these before they reach a plan.
inline constexpr int kOuterColumnBase = 1 << 24;

// A bound query or FROM item: its plan and the names of its output columns.
struct BoundRelation {
  LogicalOperatorPtr plan;
  std::vector<std::string> names;
};

// Correlated predicates of a subquery block: the WHERE conjuncts that reference the enclosing block (outer
// columns encoded as above, inner columns as indexes into the block's input plan).
struct Correlation {
  const Scope* outer = nullptr;
  std::vector<ExpressionPtr> conjuncts;
};

// The aggregation of one block, for binding expressions above the Aggregate (select list, HAVING, ORDER BY).
struct AggregateBinding {
  const Scope* scope = nullptr;                                    // names of the block's FROM clause
  std::vector<ExpressionPtr> group_keys;                           // over the pre-aggregation plan
  std::vector<AggregateCall> calls;                                // over the pre-aggregation plan
  absl::flat_hash_map<const parser::ParsedExpr*, int> call_index;  // aggregate call node -> calls[i]
  // Calls whose value above the aggregation is an expression: GROUPING(...) (a column, or a constant without
  // grouping sets) and the statistical aggregates (computed from COUNT and SUM calls).
  absl::flat_hash_map<const parser::ParsedExpr*, ExpressionPtr> computed_values;

  // Adds `call` to `calls` unless an equal call is there; returns its index.
  int AddCall(AggregateCall call);
};

// The window function calls of one block, for binding expressions above its Window nodes (select list,
// ORDER BY): each call node becomes a reference to its output column. See window_binder.cc.
struct WindowBinding {
  struct Column {
    int index = 0;
    Type type;
  };
  absl::flat_hash_map<const parser::ParsedExpr*, Column> columns;
};

// How to bind an expression: the visible names, the input plan, and what is allowed.
struct ExpressionContext {
  const Scope* scope = nullptr;
  // The plan the expression is evaluated over; subqueries are joined into it (widening it on the right).
  // Null: subqueries are not allowed here.
  LogicalOperatorPtr* plan = nullptr;
  std::string clause;  // "WHERE", "GROUP BY", ... for messages
  // Set above an Aggregate: aggregate calls and grouped expressions become references to its output.
  AggregateBinding* aggregates = nullptr;
  // Set above a block's Window nodes: window function calls become references to their columns.
  WindowBinding* windows = nullptr;
  // Set for the WHERE clause of a subquery block being decorrelated: outer references are allowed.
  Correlation* correlation = nullptr;
  // The root of a WHERE conjunct: a comparison with a scalar subquery operand may use an inner join.
  bool conjunct_root = false;
};

// A SELECT block's result: output columns are the select list followed by hidden ORDER BY columns.
struct BoundSelectBlock {
  LogicalOperatorPtr plan;
  std::vector<std::string> names;  // visible columns only
  std::vector<SortKey> sort_keys;  // over the plan's output; empty without ORDER BY
  // Scalar-subquery decorrelation: the block's output starts with one column per correlation key, and
  // outer_keys[i] (over the enclosing block's plan) must equal output column i.
  std::vector<ExpressionPtr> outer_keys;
  std::vector<bool> null_safe_outer_keys;  // empty, or one per outer key (OuterValueSet::null_safe)
  bool has_empty_group_marker = false;     // then the last output column is TRUE for every row (see subquery_binder)
  ExpressionPtr empty_group_value;         // the value of the select item over an empty group, when not NULL
  // LATERAL aggregate block without GROUP BY (SelectBlockOptions::lateral): it yields one row for every lateral
  // tuple, also one without input rows, which the aggregation does not produce. Per select item (after the
  // leading lateral columns): its value over no rows, lateral column i encoded as kOuterColumnBase + i. The last
  // output column is then a TRUE marker, as with has_empty_group_marker.
  std::vector<ExpressionPtr> lateral_empty_values;
};

// LATERAL (from_binder.cc): the columns of earlier FROM items that a LATERAL subquery block reads, and a plan
// with one row per distinct tuple of them (the dependent join's outer side, reduced as OuterValueSet's is).
struct LateralValues {
  const Scope* scope = nullptr;           // the columns, as the earlier FROM items name them
  const LogicalOperator* plan = nullptr;  // its output matches `scope`
  // Bound only to find which columns the block reads (LateralColumns): what LATERAL cannot do is not reported
  // yet, since a block that reads none is an ordinary derived table.
  bool finding_columns = false;
};

struct SelectBlockOptions {
  const std::vector<parser::OrderByItem>* order_by = nullptr;
  Correlation* correlation = nullptr;  // extract correlated WHERE conjuncts into it
  bool group_by_correlation = false;   // scalar subquery: correlation equalities become leading GROUP BY keys
  // The enclosing block's plan (outer columns index its output), for a scalar subquery whose correlation is not
  // a set of equalities: the block is then computed once per distinct value of the outer columns it reads
  // (see DistinctOuterValues). Null: such a correlation is an error.
  const LogicalOperator* outer_plan = nullptr;
  // A LATERAL subquery block: `lateral->plan` is cross joined to its FROM clause, whose names then reach its
  // columns (Scope::set_lateral), and those columns lead the block's output (and its GROUP BY keys).
  const LateralValues* lateral = nullptr;
};

// General decorrelation (the dependent join of Neumann and Kemper, "Unnesting Arbitrary Queries", with its
// outer side reduced to the distinct values the subquery reads): the subquery is joined with the distinct
// tuples of the outer columns its correlated conjuncts read, on those conjuncts, evaluated per tuple, and the
// result joined back to the enclosing plan on equality of those columns.
struct OuterValueSet {
  std::vector<int> outer_columns;  // ascending indexes into the enclosing plan's output
  LogicalOperatorPtr plan;         // one row per distinct tuple of those columns (over a copy of that plan)
  // Per outer column: the conditions can hold when it is NULL, so joining back must match NULL with NULL (a
  // residual `a = b OR (a IS NULL AND b IS NULL)`); otherwise a hash key (NULL then means "no inner row").
  std::vector<bool> null_safe;
};

// Joins the enclosing plan (left) back to a decorrelated subquery on `outer` = right column `right_index`: a key
// pair, or with `null_safe` a residual that also matches NULL with NULL (OuterValueSet::null_safe).
void AddJoinBackKey(Join* join, ExpressionPtr outer, int right_index, bool null_safe);

// Re-indexes correlated conjuncts (outer columns encoded as kOuterColumnBase + j, see above) for a join
// condition: outer column outer_columns[i] becomes outer_offset + i, an inner column c becomes inner_offset + c.
void RemapCorrelation(BoundExpression* conjunct, const std::vector<int>& outer_columns, int outer_offset,
                      int inner_offset);

// True when `conjunct` (outer columns encoded) is `outer expression = inner expression` (either order), each
// side reading at least one column: a correlation that a hash join can key on directly.
bool IsCorrelationEquality(const BoundExpression& conjunct);

// A subquery prepared for a semi/anti join: its plan, correlated conjuncts and (for IN) its value.
struct JoinableSubquery {
  LogicalOperatorPtr plan;
  std::vector<ExpressionPtr> correlated;  // over outer (encoded) ++ plan columns
  ExpressionPtr value;                    // IN only: over the plan's columns
};

struct SelectBlockState;  // select_binder.cc

class QueryBinder {
 public:
  // `view_name` is empty for the user's statement; `view_depth` counts nested view expansions.
  QueryBinder(const Catalog& catalog, std::string_view sql, std::string view_name, int view_depth,
              std::vector<std::string> expanding_views);

  // A statement may expand at most this many CTE and view references in all (nested views and CTEs
  // included): a CTE that joins the previous one to itself doubles the plan per level, so without a bound a short
  // statement makes a plan of millions of operators.
  static constexpr int64_t kMaxExpandedReferences = 4096;

  // Binds a full statement (WITH, body, ORDER BY, LIMIT). `outer` is the enclosing block's scope (for error
  // messages about unsupported correlation), or null.
  absl::StatusOr<BoundRelation> BindStatement(const parser::SelectStatement& statement, const Scope* outer);

  // ---- expression_binder.cc
  absl::StatusOr<ExpressionPtr> BindExpression(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindBoolean(const parser::ParsedExpr& expr, ExpressionContext& context);
  // Casts `expression` to `target` (folding constants; a failing constant cast is an error at `position`).
  absl::StatusOr<ExpressionPtr> Coerce(ExpressionPtr expression, Type target, const parser::SourcePosition& position);
  // Converts both sides of a comparison to their common type.
  absl::Status CoerceComparison(ExpressionPtr* left, ExpressionPtr* right, const parser::ParsedExpr& where,
                                std::string_view what);
  // An error at `position` in this binder's text.
  absl::Status ErrorAt(absl::StatusCode code, const parser::SourcePosition& position, std::string_view message) const;
  absl::Status Rewrap(const absl::Status& status, const parser::SourcePosition& position) const;
  // A constant non-negative integer (LIMIT / OFFSET).
  absl::StatusOr<int64_t> BindCount(const parser::ParsedExpr& expr, std::string_view clause);

  static bool IsAggregateName(const std::string& name);
  static bool ContainsWindow(const parser::ParsedExpr& expr);
  static bool ContainsAggregate(const parser::ParsedExpr& expr);
  static bool ContainsSubquery(const parser::ParsedExpr& expr);

 private:
  // ---- query_binder.cc
  absl::StatusOr<BoundRelation> BindBody(const parser::QueryBody& body, const Scope* outer,
                                         const std::vector<parser::OrderByItem>* order_by,
                                         std::vector<SortKey>* sort_keys, int* visible);
  absl::StatusOr<BoundRelation> BindSetOperation(const parser::QueryBody& body, const Scope* outer);
  absl::StatusOr<std::vector<SortKey>> BindOutputOrderBy(const std::vector<parser::OrderByItem>& order_by,
                                                         const BoundRelation& relation);

  // ---- from_binder.cc
  absl::StatusOr<BoundRelation> BindFrom(const std::vector<std::unique_ptr<parser::TableRef>>& from, const Scope* outer,
                                         Scope* scope);
  absl::StatusOr<BoundRelation> BindTableRef(const parser::TableRef& ref, const Scope* outer, Scope* scope);
  absl::StatusOr<BoundRelation> BindNamedRelation(const parser::TableRef& ref, const Scope* outer, Scope* scope);
  absl::StatusOr<BoundRelation> BindJoin(const parser::TableRef& ref, const Scope* outer, Scope* scope);
  absl::StatusOr<BoundRelation> BindView(const parser::TableRef& ref, const ViewDescriptor& view);
  // A JOIN's USING / NATURAL columns: (left scope index, right scope index) per merged column.
  using UsingPair = std::pair<int, int>;
  absl::StatusOr<std::vector<UsingPair>> FindUsingPairs(const parser::TableRef& ref, const Scope& left_scope,
                                                        const Scope& right_scope);
  // Merges the USING pairs of the bound join `result` (left ++ right columns) in `scope`: the merged column is
  // the left one (the right one for RIGHT JOIN, COALESCE of both appended for FULL JOIN); SELECT * lists them first.
  absl::Status MergeUsingColumns(const parser::TableRef& ref, const std::vector<UsingPair>& using_pairs,
                                 const Scope& left_scope, int left_width, int right_width, BoundRelation* result,
                                 Scope* scope);
  // Makes `scope` the columns of `relation` under the name `alias`, renamed by `column_aliases`.
  // LATERAL subqueries (lateral_binder.cc). The columns of the earlier FROM items (`left_scope`, plan `left`)
  // that the LATERAL subquery `ref` reads, ascending; empty when it reads none (it then binds as a derived table).
  absl::StatusOr<std::vector<int>> LateralColumns(const parser::TableRef& ref, const LogicalOperator& left,
                                                  const Scope& left_scope, const Scope* outer);
  // `left` joined (`type`: kCross for a comma, kInner or kLeft with `condition`) with the LATERAL subquery `ref`
  // that reads `columns` of it: the dependent join, unnested. *scope becomes left_scope ++ the subquery's columns.
  absl::StatusOr<BoundRelation> BindLateralJoin(const parser::TableRef& ref, const std::vector<int>& columns,
                                                BoundRelation left, const Scope& left_scope, const Scope* outer,
                                                parser::JoinType type, const parser::ParsedExpr* condition,
                                                Scope* scope);
  // The unnested right side of a dependent join: `plan` yields key_count = keys.size() key columns, the item's
  // columns, and (with empty_values) a TRUE marker; a left row meets the rows whose key columns equal its `keys`.
  struct LateralSide {
    LogicalOperatorPtr plan;
    std::vector<ExpressionPtr> keys;  // over the left input
    bool null_safe = true;            // NULL keys meet NULL key columns; else a NULL key meets nothing
    std::vector<std::string> names;   // the item's columns
    // An item with one row per tuple (an aggregate without GROUP BY): per column, its value for a left row whose
    // tuple has no row in `plan`, over the left input. Empty otherwise.
    std::vector<ExpressionPtr> empty_values;
  };
  // `left` joined with `side` as BindLateralJoin says.
  absl::StatusOr<BoundRelation> JoinLateral(const parser::TableRef& ref, BoundRelation left, const Scope& left_scope,
                                            const Scope* outer, parser::JoinType type,
                                            const parser::ParsedExpr* condition, LateralSide side, Scope* scope);
  // generate_series / range whose arguments read earlier FROM items (`left`, `left_scope`): the series of each
  // distinct argument tuple, joined as BindLateralJoin does; nullopt when `ref` is no such call.
  absl::StatusOr<std::optional<BoundRelation>> BindLateralSeries(const parser::TableRef& ref, BoundRelation* left,
                                                                 const Scope& left_scope, const Scope* outer,
                                                                 parser::JoinType type,
                                                                 const parser::ParsedExpr* condition, Scope* scope);
  absl::Status ScopeForRelation(const parser::TableRef& ref, const std::string& alias,
                                const std::vector<std::string>& column_aliases, BoundRelation* relation, Scope* scope);

  // ---- select_binder.cc
 public:
  absl::StatusOr<BoundSelectBlock> BindSelectBlock(const parser::SelectCore& core, const Scope* outer,
                                                   const SelectBlockOptions& options);
  // FROM and WHERE of a block (for semi-join subqueries): the filtered input plan and its scope.
  // `lateral`: see SelectBlockOptions::lateral.
  absl::StatusOr<LogicalOperatorPtr> BindFromWhere(const parser::SelectCore& core, const Scope* outer,
                                                   Correlation* correlation, Scope* scope,
                                                   const LateralValues* lateral = nullptr);

 private:
  absl::Status BindWhere(const parser::ParsedExpr& where, const Scope& scope, Correlation* correlation,
                         LogicalOperatorPtr* plan);
  // The steps of BindSelectBlock, in its order. A scalar subquery's correlation keys (and the join with the
  // distinct outer tuples for a general correlation).
  absl::Status BindCorrelationKeys(const parser::SelectCore& core, const SelectBlockOptions& options,
                                   SelectBlockState* state);
  // The GROUP BY keys after the correlation keys; item_keys[i] is core.group_by[i]'s key.
  absl::Status BindGroupByKeys(const parser::SelectCore& core, SelectBlockState* state, std::vector<int>* item_keys,
                               std::vector<std::string>* group_names);
  // The aggregate calls, the aggregation over the plan, and HAVING above it.
  absl::Status BindAggregatesAndHaving(const parser::SelectCore& core,
                                       const std::vector<const parser::ParsedExpr*>& call_nodes,
                                       const std::vector<const parser::ParsedExpr*>& grouping_nodes,
                                       const std::vector<int>& item_keys, std::vector<std::string> group_names,
                                       SelectBlockState* state);
  absl::Status BindSelectList(const parser::SelectCore& core, SelectBlockState* state);
  // ORDER BY of the block: sort keys over its items, hidden items for expressions not in the select list.
  absl::Status BindBlockOrderBy(const parser::SelectCore& core, const std::vector<parser::OrderByItem>& order_by,
                                SelectBlockState* state);
  // A correlated or LATERAL aggregate block's values over no input rows, and its marker column.
  absl::Status BindEmptyGroupValues(const parser::SelectCore& core, SelectBlockState* state);

  // ---- window_binder.cc
 public:
  // Binds the window function calls of the select list and ORDER BY (in `context`, which is above the
  // block's aggregation when there is one) into Window nodes on top of *plan, and records their columns in
  // *windows. Does nothing without window calls.
  absl::Status BindWindows(const parser::SelectCore& core, const std::vector<parser::OrderByItem>* order_by,
                           ExpressionContext& context, LogicalOperatorPtr* plan, WindowBinding* windows);

 private:
  // A window call met while binding an expression: its column, or an error naming the clause.
  absl::StatusOr<ExpressionPtr> BindWindowReference(const parser::ParsedExpr& expr, ExpressionContext& context);
  // BindWindows' steps for one call, in order. A call's window with a named window (`OVER w`, `OVER (w ORDER BY
  // ...)`) resolved: pointers into the call's and the WINDOW clause's parse trees.
  struct ResolvedWindow;
  absl::StatusOr<ResolvedWindow> ResolveWindow(const parser::WindowSpec& spec, const parser::SelectCore& core) const;
  // The function, its arguments (in the window-arguments clause of `context`), parameters and result type; not
  // its frame.
  absl::StatusOr<WindowCall> BindWindowCall(const parser::ParsedExpr& node, ExpressionContext& context);
  // PARTITION BY and ORDER BY of the window, appended to *partition_by and *sort_keys.
  absl::Status BindWindowKeys(const ResolvedWindow& window, ExpressionContext& context,
                              std::vector<ExpressionPtr>* partition_by, std::vector<SortKey>* sort_keys);
  // The frame (null: the default of a window with or without ORDER BY), its bounds checked.
  absl::StatusOr<WindowFrame> BindWindowFrame(const parser::WindowFrame* frame, bool ordered);

  // ---- function_binder.cc
 public:
  // Functions bound by BindScalarFunction (lower-case names).
  static bool IsScalarFunctionName(const std::string& lower);
  static std::vector<std::string> ScalarFunctionNames();

 private:
  absl::StatusOr<ExpressionPtr> BindScalarFunction(const parser::ParsedExpr& expr, ExpressionContext& context);
  // BindScalarFunction's steps, after the argument count is checked and the arguments are bound. A call of a
  // scalar function with its arguments bound (the arguments are cast in place).
  struct ScalarCall;
  // "function NAME(TYPES) does not exist" at the call, TYPES those of its arguments now.
  absl::Status ScalarCallTypeError(const ScalarCall& call) const;
  // Casts argument i to `type` (NULL becomes a NULL of it); false when it is not convertible implicitly.
  absl::StatusOr<bool> CastScalarArgument(ScalarCall& call, size_t i, Type type);
  // CastScalarArgument on the arguments in [first, end) that exist; false at the first not convertible.
  absl::StatusOr<bool> CastScalarArguments(ScalarCall& call, size_t first, size_t end, Type type);
  // One family each: its checks, casts and result type, giving the bound expression.
  // concat and the DOUBLE math functions: every argument cast to `type`, which is also the result type.
  absl::StatusOr<ExpressionPtr> BindCallOfOneType(ScalarCall& call, Type type);
  // round, ceil and floor: DOUBLE stays DOUBLE; DECIMAL and integers round to constant digits (the argument
  // itself when there is nothing to round).
  absl::StatusOr<ExpressionPtr> BindRoundingCall(ScalarCall& call);
  // trim, ltrim, rtrim, replace, strpos, starts_with, lpad, rpad and split_part: string arguments, and the
  // INTEGER count or index of lpad / rpad / split_part.
  absl::StatusOr<ExpressionPtr> BindStringCall(ScalarCall& call);
  // date_trunc('unit', d): a constant unit, a DATE or TIMESTAMP cast to TIMESTAMP.
  absl::StatusOr<ExpressionPtr> BindDateTruncCall(ScalarCall& call);
  // date_part('field', d) and the shorthands (year(d), ...): as EXTRACT.
  absl::StatusOr<ExpressionPtr> BindDatePartCall(ScalarCall& call);
  // Binds the arguments of the function call `call` in order; `sources` gets their parsed expressions.
  absl::Status BindArguments(const parser::ParsedExpr& call, ExpressionContext& context,
                             std::vector<ExpressionPtr>* arguments, std::vector<const parser::ParsedExpr*>* sources);
  absl::StatusOr<ExpressionPtr> BindConcatOperator(const parser::ParsedExpr& expr, ExpressionPtr left,
                                                   ExpressionPtr right);
  // EXTRACT(field FROM source), `where` the source's text (for errors): a DATE or TIMESTAMP (or a string
  // constant read as a DATE) to INTEGER.
  absl::StatusOr<ExpressionPtr> BindExtractField(FunctionId field, ExpressionPtr source,
                                                 const parser::ParsedExpr& where);

  // ---- statistical_aggregates.cc
 public:
  // STDDEV / STDDEV_SAMP / STDDEV_POP / VARIANCE / VAR_SAMP / VAR_POP (upper-case names).
  static bool IsStatisticalAggregateName(const std::string& name);
  // Binds the statistical aggregate `call` as COUNT and SUM calls added to aggregation->calls, and its value
  // into aggregation->computed_values. The group keys must be bound already.
  absl::Status BindStatisticalAggregate(const parser::ParsedExpr& call, ExpressionContext& context,
                                        AggregateBinding* aggregation);

 private:
  // ---- holistic_aggregates.cc
 public:
  // MEDIAN, QUANTILE / QUANTILE_CONT / QUANTILE_DISC, PERCENTILE_CONT / PERCENTILE_DISC, STRING_AGG / LISTAGG /
  // GROUP_CONCAT, APPROX_COUNT_DISTINCT (upper-case names).
  static bool IsHolisticAggregateName(const std::string& name);
  // The aggregate call for such a `call`, its argument bound in `context` (fraction and separator constants).
  absl::StatusOr<AggregateCall> BindHolisticAggregateCall(const parser::ParsedExpr& call, ExpressionContext& context);

 private:
  // ---- grouping_sets.cc
  // The aggregation of a block over `input`, once aggregation->group_keys and ->calls are bound: an Aggregate, or
  // for ROLLUP / CUBE / GROUPING SETS the plan of optimizer/grouping_sets.h. Binds the GROUPING(...) calls
  // `grouping_nodes` into aggregation->grouping_values. `item_keys[i]` is the index in group_keys of
  // core.group_by[i]; `group_names` names the group keys.
  absl::StatusOr<LogicalOperatorPtr> BindAggregation(const parser::SelectCore& core,
                                                     const std::vector<const parser::ParsedExpr*>& grouping_nodes,
                                                     const std::vector<int>& item_keys,
                                                     std::vector<std::string> group_names,
                                                     AggregateBinding* aggregation, LogicalOperatorPtr input);

  // ---- subquery_binder.cc
 public:
  // EXISTS / NOT EXISTS / [NOT] IN (subquery) as a WHERE conjunct: joins the subquery into *plan.
  absl::Status AttachSemiJoin(const parser::ParsedExpr& predicate, const Scope& scope, LogicalOperatorPtr* plan);
  absl::StatusOr<ExpressionPtr> BindScalarSubquery(const parser::ParsedExpr& expr, ExpressionContext& context,
                                                   bool null_rejecting);
  absl::StatusOr<ExpressionPtr> BindSubqueryMark(const parser::ParsedExpr& expr, ExpressionContext& context);
  static bool IsSemiJoinPredicate(const parser::ParsedExpr& expr);
  // The distinct tuples of the outer columns that `conjuncts` read, over a copy of `outer_plan`.
  static OuterValueSet DistinctOuterValues(const std::vector<ExpressionPtr>& conjuncts,
                                           const LogicalOperator& outer_plan);

 private:
  absl::StatusOr<JoinableSubquery> BindJoinableSubquery(const parser::ParsedExpr& expr, const Scope& outer,
                                                        bool want_value);

  // ---- expression_binder.cc helpers
  absl::StatusOr<ExpressionPtr> BindColumnRef(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindAggregateMode(const parser::ParsedExpr& expr, ExpressionContext& context,
                                                  bool* handled);
  absl::StatusOr<ExpressionPtr> BindLiteral(const parser::ParsedExpr& expr);
  absl::StatusOr<ExpressionPtr> BindUnary(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindBinary(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindArithmetic(const parser::ParsedExpr& expr, ArithmeticOp op, ExpressionPtr left,
                                               ExpressionPtr right);
  absl::StatusOr<ExpressionPtr> BindFunction(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindCase(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindCast(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindBetween(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindInList(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindLike(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindExtract(const parser::ParsedExpr& expr, ExpressionContext& context);
  absl::StatusOr<ExpressionPtr> BindSubstring(const parser::ParsedExpr& expr, ExpressionContext& context);
  // Brings `expressions` to one common type (CASE results, COALESCE, IN lists); `what` names the construct.
  absl::Status UnifyTypes(std::vector<ExpressionPtr>* expressions,
                          const std::vector<const parser::ParsedExpr*>& sources, std::string_view what);

 public:
  // The aggregate call for `call` (a COUNT/SUM/AVG/MIN/MAX node), its argument bound in `context`.
  absl::StatusOr<AggregateCall> BindAggregateCall(const parser::ParsedExpr& call, ExpressionContext& context);

  const Catalog& catalog() const { return catalog_; }
  std::string_view sql() const { return sql_; }
  // PlanQueryWithRowIds: the table that references to its name bind to instead of the catalog's.
  void set_target_table(std::shared_ptr<const TableDescriptor> table) { target_table_ = std::move(table); }
  // PlanQuery: the options WITH RECURSIVE evaluates with (its runner, rules and iteration cap); must outlive the
  // binder. Without them a recursive WITH query is rejected.
  void set_options(const OptimizerOptions* options) { options_ = options; }

 private:
  struct CteEntry {
    const parser::CommonTableExpr* cte;
    size_t visible;  // number of entries of ctes_ visible to its own query (those defined before it)
    // While the recursive term of a WITH RECURSIVE query is bound: the previous step's rows, which references
    // to the query's own name read (recursive_cte_binder.cc).
    const Values* working_table = nullptr;
  };
  const CteEntry* FindCte(const std::string& name) const;
  // ---- table_function_binder.cc
  // A table function in FROM (`generate_series(1, 10)`, `range(5)`): its plan.
  absl::StatusOr<BoundRelation> BindTableFunction(const parser::TableRef& ref);
  // generate_series / range (`name`; `inclusive` for generate_series) over TIMESTAMP bounds and an INTERVAL step.
  static constexpr int64_t kMaxTimestampSeriesRows = 1000000;
  // generate_series / range over earlier FROM items: at most this many rows for their distinct arguments.
  static constexpr int64_t kMaxLateralSeriesRows = 1000000;
  absl::StatusOr<BoundRelation> BindTimestampSeries(const parser::TableRef& ref, const std::string& name,
                                                    bool inclusive);
  // read_csv / read_csv_auto (`name`, lower-cased) in FROM.
  absl::StatusOr<BoundRelation> BindReadCsv(const parser::TableRef& ref, const std::string& name);
  // ---- recursive_cte_binder.cc
  // A reference to `entry`, a WITH RECURSIVE query: its rows, computed on the first reference (later ones reuse
  // them), as a Values node; nullopt when the query does not read its own name (then it binds as a plain WITH
  // query).
  absl::StatusOr<std::optional<BoundRelation>> BindRecursiveCte(const CteEntry& entry);
  // The recursive term `term` bound with `working` as the rows of its own name, cast to `working`'s types;
  // `references` counts how often it read them.
  absl::StatusOr<LogicalOperatorPtr> BindRecursiveTerm(const CteEntry& entry, const parser::QueryBody& term,
                                                       const Values& working, int* references);
  // Counts one CTE or view expansion at `ref`; an error once the statement exceeds kMaxExpandedReferences.
  absl::Status CountExpansion(const parser::TableRef& ref);

  const Catalog& catalog_;
  std::shared_ptr<const TableDescriptor> target_table_;
  std::string_view sql_;
  std::string view_name_;
  int view_depth_;
  std::vector<std::string> expanding_views_;  // views being expanded (cycle detection)
  std::vector<CteEntry> ctes_;
  const OptimizerOptions* options_ = nullptr;
  // WITH RECURSIVE queries already evaluated in this statement (recursive_cte_binder.cc).
  absl::flat_hash_map<const parser::CommonTableExpr*, std::shared_ptr<const Values>> recursive_results_;
  int working_table_references_ = 0;
  int64_t own_expanded_references_ = 0;
  int64_t* expanded_references_ = &own_expanded_references_;  // shared with the binders of nested views
};

// The EXTRACT function of a field name in upper case (YEAR, MONTH, DAY, QUARTER, DOW, DOY, WEEK), or nullopt.
std::optional<FunctionId> ExtractFieldFunction(const std::string& upper_field);

// Splits nested ANDs of a parsed expression into its conjuncts.
void SplitParsedConjuncts(const parser::ParsedExpr& expr, std::vector<const parser::ParsedExpr*>* conjuncts);

// Name of an unaliased select item: the column name, or the expression's SQL text.
std::string DerivedColumnName(const parser::ParsedExpr& expr);

}  // namespace tessera::optimizer
