#include "optimizer/bind_scope.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catalog/row_deletions.h"
#include "catalog/schema.h"

namespace tessera::optimizer {
namespace {

std::string Qualified(const ScopeColumn& column) {
  return column.relation.empty() ? column.name : absl::StrCat(column.relation, ".", column.name);
}

std::string Hint(const std::string& closest) {
  return closest.empty() ? "" : absl::StrCat("; did you mean '", closest, "'?");
}

}  // namespace

absl::Status Scope::Append(const Scope& other) {
  for (const std::string& relation : other.relations_) {
    if (HasRelation(relation)) {
      return absl::InvalidArgumentError(absl::StrCat("table name '", relation, "' specified more than once"));
    }
  }
  const int offset = size();
  for (const ScopeColumn& column : other.columns_) columns_.push_back(column);
  for (const std::string& relation : other.relations_) relations_.push_back(relation);
  for (int index : other.star_columns_) star_columns_.push_back(index + offset);
  return absl::OkStatus();
}

void Scope::AddColumn(ScopeColumn column) {
  if (!column.relation.empty() && !HasRelation(column.relation)) relations_.push_back(column.relation);
  if (!column.merged) star_columns_.push_back(size());
  columns_.push_back(std::move(column));
}

void Scope::SetRelationName(const std::string& relation) {
  for (ScopeColumn& column : columns_) column.relation = relation;
  relations_.clear();
  if (!relation.empty()) relations_.push_back(relation);
}

bool Scope::HasRelation(const std::string& relation) const {
  return std::find(relations_.begin(), relations_.end(), relation) != relations_.end();
}

std::vector<std::string> Scope::CandidateNames(const std::string& qualifier) const {
  std::vector<std::string> names;
  for (const Scope* scope = this; scope != nullptr; scope = scope->parent_) {
    for (const ScopeColumn& column : scope->columns_) {
      if (!qualifier.empty()) {
        if (column.relation == qualifier) names.push_back(column.name);
      } else if (!column.merged) {
        names.push_back(column.name);
      }
    }
  }
  return names;
}

absl::StatusOr<int> Scope::ResolveHere(const std::string& qualifier, const std::string& name) const {
  if (!qualifier.empty() && !HasRelation(qualifier)) return -1;
  std::vector<int> matches;
  for (int i = 0; i < size(); ++i) {
    const ScopeColumn& column = columns_[i];
    if (column.name != name) continue;
    if (qualifier.empty() ? !column.merged : column.relation == qualifier) matches.push_back(i);
  }
  if (matches.size() == 1) return matches[0];
  if (matches.size() > 1) {
    std::vector<std::string> options;
    for (int index : matches) options.push_back(Qualified(columns_[index]));
    return absl::InvalidArgumentError(
        absl::StrCat("column reference '", name, "' is ambiguous (it could be ", absl::StrJoin(options, " or "), ")"));
  }
  if (!qualifier.empty()) {
    // The relation is here but has no such column.
    const std::string closest = ClosestName(name, CandidateNames(qualifier));
    return absl::NotFoundError(absl::StrCat("column '", qualifier, ".", name, "' does not exist",
                                            Hint(closest.empty() ? "" : absl::StrCat(qualifier, ".", closest))));
  }
  return -1;
}

absl::StatusOr<Scope::Resolution> Scope::Resolve(const std::string& qualifier, const std::string& name) const {
  int depth = 0;
  for (const Scope* scope = this; scope != nullptr; scope = scope->parent_, ++depth) {
    absl::StatusOr<int> index = scope->ResolveHere(qualifier, name);
    if (!index.ok()) return index.status();
    if (*index >= 0) return Resolution{*index, depth, &scope->columns_[*index]};
    if (scope->lateral_ != nullptr) {
      index = scope->lateral_->ResolveHere(qualifier, name);
      if (!index.ok()) return index.status();
      if (*index >= 0) {
        std::vector<bool>& used = scope->lateral_->lateral_used_;
        used.resize(scope->lateral_->size(), false);
        used[*index] = true;
        return Resolution{scope->lateral_base_ + *index, depth, &scope->lateral_->columns_[*index]};
      }
    }
  }
  if (!qualifier.empty()) {
    std::vector<std::string> relations;
    for (const Scope* scope = this; scope != nullptr; scope = scope->parent_) {
      for (const std::string& relation : scope->relations_) relations.push_back(relation);
    }
    return absl::NotFoundError(
        absl::StrCat("missing FROM-clause entry for table '", qualifier, "'", Hint(ClosestName(qualifier, relations))));
  }
  return absl::NotFoundError(
      absl::StrCat("column '", name, "' does not exist", Hint(ClosestName(name, CandidateNames("")))));
}

absl::StatusOr<std::vector<int>> Scope::ExpandStar(const std::string& qualifier) const {
  if (qualifier.empty()) return star_columns_;
  if (!HasRelation(qualifier)) {
    return absl::NotFoundError(absl::StrCat("missing FROM-clause entry for table '", qualifier, "'",
                                            Hint(ClosestName(qualifier, relations_))));
  }
  std::vector<int> columns;
  for (int i = 0; i < size(); ++i) {
    // The hidden row-id column of DELETE / UPDATE (catalog/row_deletions.h) is never part of t.*.
    if (columns_[i].relation == qualifier && columns_[i].name != kRowIdColumnName) columns.push_back(i);
  }
  return columns;
}

}  // namespace tessera::optimizer
