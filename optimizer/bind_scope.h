#pragma once
// Name resolution for one query block: the columns its FROM clause makes visible, in the order of the block's
// input plan (scope column i is plan column i), and a link to the enclosing block's scope for correlated
// subqueries. Binder-internal; single-threaded.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/types.h"

namespace tessera::optimizer {

struct ScopeColumn {
  std::string relation;  // the FROM item's name (alias, table, view or CTE name); "" if it has none
  std::string name;
  Type type;
  bool nullable = true;
  // Merged away by JOIN ... USING / NATURAL JOIN: still reachable as relation.name, but invisible to
  // unqualified names and to SELECT *.
  bool merged = false;
};

class Scope {
 public:
  Scope() = default;
  explicit Scope(const Scope* parent) : parent_(parent) {}

  const Scope* parent() const { return parent_; }
  void set_parent(const Scope* parent) { parent_ = parent; }

  const std::vector<ScopeColumn>& columns() const { return columns_; }
  int size() const { return static_cast<int>(columns_.size()); }
  ScopeColumn& column(int index) { return columns_[index]; }

  // Appends the columns of another FROM item (a join's right side or the next item of a comma list).
  // Errors (InvalidArgument, no position): a relation name used twice.
  absl::Status Append(const Scope& other);
  // Adds one column of relation `relation` (which becomes known to the scope).
  void AddColumn(ScopeColumn column);
  // Renames every column's relation (an alias on a parenthesized join).
  void SetRelationName(const std::string& relation);

  // The order of SELECT * (defaults to all non-merged columns in order).
  const std::vector<int>& star_columns() const { return star_columns_; }
  void set_star_columns(std::vector<int> columns) { star_columns_ = std::move(columns); }

  struct Resolution {
    int index = -1;                       // column index in the scope `depth` levels up
    int depth = 0;                        // 0 = this scope, 1 = the enclosing block, ...
    const ScopeColumn* column = nullptr;  // the column found (valid while the scopes are)
  };
  // Resolves `qualifier.name` (empty qualifier: unqualified) here, then in the enclosing scopes.
  // Errors (no position; callers add it): NotFound "column 'x' does not exist; did you mean 'y'?",
  // NotFound "missing FROM-clause entry for table 'q'", InvalidArgument "column reference 'x' is ambiguous
  // ...".
  absl::StatusOr<Resolution> Resolve(const std::string& qualifier, const std::string& name) const;

  // The columns of `qualifier.*` (all of the relation's columns, merged ones included) or of `*`.
  absl::StatusOr<std::vector<int>> ExpandStar(const std::string& qualifier) const;

  bool HasRelation(const std::string& relation) const;

  // LATERAL (from_binder.cc): `values` (not owned; must outlive this scope) names the columns of earlier FROM
  // items that a LATERAL subquery block may read. They are columns base, base + 1, ... of the block's input plan
  // but not of this scope (SELECT * omits them); a name resolves to them only when no column of this scope
  // matches it, before the enclosing scopes are searched. Resolving one marks it in values->lateral_used().
  void set_lateral(const Scope* values, int base) {
    lateral_ = values;
    lateral_base_ = base;
  }
  const std::vector<bool>& lateral_used() const { return lateral_used_; }
  // Marks this scope as the earlier FROM items of a LATERAL item bound as an ordinary derived table: a name that
  // resolves here is reported as an unsupported LATERAL reference (QueryBinder::BindColumnRef).
  void set_lateral_source(bool value) { lateral_source_ = value; }
  bool lateral_source() const { return lateral_source_; }

 private:
  // Resolve within this scope's own columns only: the index, -1 when nothing matches (not an error).
  absl::StatusOr<int> ResolveHere(const std::string& qualifier, const std::string& name) const;

  std::vector<std::string> CandidateNames(const std::string& qualifier) const;

  const Scope* parent_ = nullptr;
  std::vector<ScopeColumn> columns_;
  std::vector<std::string> relations_;  // distinct, non-empty relation names in order
  std::vector<int> star_columns_;
  bool star_columns_set_ = false;
  const Scope* lateral_ = nullptr;
  int lateral_base_ = 0;
  mutable std::vector<bool> lateral_used_;  // one per column, for the scope that is another's lateral values
  bool lateral_source_ = false;
};

}  // namespace tessera::optimizer
