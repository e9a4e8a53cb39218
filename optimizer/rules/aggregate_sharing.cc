#include "optimizer/rules/aggregate_sharing.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "optimizer/expression_analysis.h"

namespace tessera::optimizer {
namespace {

// `aggregate`'s subtree as text with the LIP filter numbers renumbered 0, 1, ... in order of appearance;
// `published` gets the original numbers in that order.
std::string SharingKey(const Aggregate& aggregate, std::vector<int>* published) {
  const std::string text = aggregate.ToString();
  static constexpr std::string_view kMarker = "publishes LIP filter #";
  std::string key;
  size_t done = 0;
  for (size_t at = text.find(kMarker); at != std::string::npos; at = text.find(kMarker, done)) {
    size_t end = at + kMarker.size();
    int id = 0;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') id = id * 10 + (text[end++] - '0');
    absl::StrAppend(&key, text.substr(done, at + kMarker.size() - done), published->size());
    published->push_back(id);
    done = end;
  }
  key.append(text, done, std::string::npos);
  return key;
}

struct Candidate {
  Aggregate* aggregate;
  std::string key;
  std::vector<int> published;
};

void Collect(LogicalOperator& node, std::vector<Candidate>* candidates) {
  if (node.kind() == LogicalOperatorKind::kAggregate) {
    auto& aggregate = node.As<Aggregate>();
    aggregate.shared_result = -1;
    aggregate.shared_lip_filters.clear();
    Candidate candidate{&aggregate, "", {}};
    candidate.key = SharingKey(aggregate, &candidate.published);
    candidates->push_back(std::move(candidate));
  }
  for (auto& child : node.children) Collect(*child, candidates);
}

// ---- Copies that differ only in a filter on a group key ----

// The values `values` restricted to those also in `other` (both free of duplicates).
std::vector<Value> Intersect(const std::vector<Value>& values, const std::vector<Value>& other) {
  std::vector<Value> kept;
  for (const Value& value : values) {
    for (const Value& o : other) {
      if (value == o) {
        kept.push_back(value);
        break;
      }
    }
  }
  return kept;
}

void SortValues(std::vector<Value>* values) {
  std::sort(values->begin(), values->end(), [](const Value& a, const Value& b) { return a.Compare(b) < 0; });
}

bool SameSet(const std::vector<Value>& a, const std::vector<Value>& b) {
  return a.size() == b.size() && Intersect(a, b).size() == a.size();
}

// Whether `conjunct` is `#column = constant`, `constant = #column` or `#column IN (constants)` (not NOT IN), no
// constant NULL; `values` gets its constants without duplicates.
bool KeyConjunct(const BoundExpression& conjunct, int column, std::vector<Value>* values) {
  values->clear();
  auto is_column = [column](const BoundExpression& e) {
    return e.kind == ExpressionKind::kColumn && e.column_index == column;
  };
  auto add = [values](const BoundExpression& e, const BoundExpression& key) {
    if (e.kind != ExpressionKind::kConstant || e.constant.is_null() || !(e.result_type == key.result_type)) {
      return false;
    }
    for (const Value& v : *values) {
      if (v == e.constant) return true;
    }
    values->push_back(e.constant);
    return true;
  };
  if (conjunct.kind == ExpressionKind::kComparison && conjunct.comparison == ComparisonOp::kEqual) {
    const BoundExpression& left = *conjunct.children[0];
    const BoundExpression& right = *conjunct.children[1];
    if (is_column(left)) return add(right, left);
    if (is_column(right)) return add(left, right);
    return false;
  }
  if (conjunct.kind == ExpressionKind::kInList && !conjunct.negated && is_column(*conjunct.children[0])) {
    for (size_t i = 1; i < conjunct.children.size(); ++i) {
      if (!add(*conjunct.children[i], *conjunct.children[0])) return false;
    }
    return !values->empty();
  }
  return false;
}

// A TableScan or Filter whose predicate has conjuncts on the group key's column (`column`, an index into the
// node's output, which for both is the predicate's input).
struct KeySite {
  LogicalOperator* node;
  int offset;  // preorder position below the aggregate
  int column;
};

// One aggregate's filter on group key `key`: every row reaching the aggregate passed a conjunct on the key's
// column at one of `sites` (each path from the aggregate to the column's origin meets one), and every site lets
// exactly `values` through.
struct KeyFilter {
  int key = -1;
  std::vector<KeySite> sites;
  std::vector<Value> values;
  bool consistent = true;  // every site lets the same values through
};

ExpressionPtr* PredicateSlot(LogicalOperator& node) {
  if (node.kind() == LogicalOperatorKind::kTableScan) return &node.As<TableScan>().filter;
  if (node.kind() == LogicalOperatorKind::kFilter) return &node.As<Filter>().predicate;
  return nullptr;
}

// Records `node` as a site when its predicate has conjuncts on `column`; true when it does.
bool AddSite(LogicalOperator& node, int offset, int column, KeyFilter* filter) {
  const ExpressionPtr* predicate = PredicateSlot(node);
  if (predicate == nullptr || *predicate == nullptr) return false;
  std::vector<const BoundExpression*> conjuncts = {predicate->get()};
  bool found = false;
  std::vector<Value> site_values;
  std::vector<Value> values;
  for (size_t i = 0; i < conjuncts.size(); ++i) {
    const BoundExpression& term = *conjuncts[i];
    if (term.kind == ExpressionKind::kAnd) {
      for (const auto& child : term.children) conjuncts.push_back(child.get());
    } else if (KeyConjunct(term, column, &values)) {
      site_values = found ? Intersect(site_values, values) : values;
      found = true;
    }
  }
  if (!found) return false;
  if (filter->sites.empty()) {
    filter->values = site_values;
  } else if (!SameSet(filter->values, site_values)) {
    filter->consistent = false;
  }
  filter->sites.push_back(KeySite{&node, offset, column});
  return true;
}

int SubtreeSize(const LogicalOperator& node) {
  int size = 1;
  for (const auto& child : node.children) size += SubtreeSize(*child);
  return size;
}

// Whether every row `node` yields passed a site on its output column `column` (-1: the column is not traced
// there); records the sites met along the way. Only operators under which a row's value of the column is the
// value the site saw: projections of the column, inner joins, the preserved side of left / semi / anti joins,
// UNION (ALL or not), DISTINCT; an empty Values yields no row at all. `offset` is node's preorder position below the aggregate.
bool Restricted(LogicalOperator& node, int offset, int column, KeyFilter* filter) {
  if (column < 0) return false;
  switch (node.kind()) {
    case LogicalOperatorKind::kTableScan:
      return AddSite(node, offset, column, filter);
    case LogicalOperatorKind::kFilter: {
      const bool here = AddSite(node, offset, column, filter);
      return Restricted(*node.children[0], offset + 1, column, filter) || here;
    }
    case LogicalOperatorKind::kDistinct:
      return Restricted(*node.children[0], offset + 1, column, filter);
    case LogicalOperatorKind::kProject: {
      const BoundExpression& expression = *node.As<Project>().expressions[column];
      return IsColumn(expression) && Restricted(*node.children[0], offset + 1, expression.column_index, filter);
    }
    case LogicalOperatorKind::kJoin: {
      const auto& join = node.As<Join>();
      const int left_width = join.children[0]->output_width();
      if (column < left_width) {
        if (join.join_type == JoinType::kFullOuter) return false;
        return Restricted(*node.children[0], offset + 1, column, filter);
      }
      if (join.join_type != JoinType::kInner && join.join_type != JoinType::kCross) return false;
      return Restricted(*node.children[1], offset + 1 + SubtreeSize(*node.children[0]), column - left_width, filter);
    }
    case LogicalOperatorKind::kSetOperation: {
      if (node.As<SetOperation>().operation != SetOperationType::kUnion) return false;
      bool all = true;
      int child_offset = offset + 1;
      for (auto& child : node.children) {
        all = Restricted(*child, child_offset, column, filter) && all;
        child_offset += SubtreeSize(*child);
      }
      return all;
    }
    case LogicalOperatorKind::kValues:
      return node.As<Values>().rows.empty();  // no row to restrict (a UNION branch ConstantFolding emptied)
    default:
      return false;
  }
}

// `aggregate`'s filter on its first group key whose column every input row was filtered on, if any. `usable`
// is false when some conjunct on a group key's column was met that is not such a filter (a UNION branch without
// it, sites that let different values through): the aggregate then takes no part.
std::optional<KeyFilter> FindKeyFilter(Aggregate& aggregate, bool* usable) {
  *usable = true;
  for (size_t k = 0; k < aggregate.group_by.size(); ++k) {
    if (!IsColumn(*aggregate.group_by[k])) continue;
    KeyFilter filter;
    filter.key = static_cast<int>(k);
    const bool restricted = Restricted(*aggregate.children[0], 1, aggregate.group_by[k]->column_index, &filter);
    if (restricted && filter.consistent && !filter.values.empty()) return filter;
    if (!filter.sites.empty()) *usable = false;
  }
  return std::nullopt;
}

// Replaces the conjuncts on the key's column of each site by `column IN (values)` (nothing when `values` is
// null), the other conjuncts kept in order.
void RewriteSites(const KeyFilter& filter, const std::vector<Value>* values) {
  for (const KeySite& site : filter.sites) {
    ExpressionPtr* slot = PredicateSlot(*site.node);
    std::vector<ExpressionPtr> kept;
    std::vector<Value> ignored;
    for (ExpressionPtr& term : SplitConjuncts(std::move(*slot))) {
      if (KeyConjunct(*term, site.column, &ignored)) continue;
      kept.push_back(std::move(term));
    }
    if (values != nullptr) {
      kept.push_back(MakeInList(MakeInputColumn(site.node->output(), site.column), *values));
    }
    *slot = CombineConjuncts(std::move(kept));
  }
}

// A predicate on the aggregate's output column `key`: `= value` or `IN (values)`.
ExpressionPtr KeyPredicate(const Aggregate& aggregate, int key, const std::vector<Value>& values) {
  ExpressionPtr column = MakeInputColumn(aggregate.output(), key);
  if (values.size() == 1) return MakeComparison(ComparisonOp::kEqual, std::move(column), MakeConstant(values[0]));
  std::vector<Value> sorted = values;
  SortValues(&sorted);
  return MakeInList(std::move(column), std::move(sorted));
}

struct KeyCandidate {
  LogicalOperatorPtr* slot;  // the owner of the aggregate
  LogicalOperator* parent;   // null at the root
  int begin;                 // preorder positions of the subtree in the plan: [begin, end)
  int end;
  std::optional<KeyFilter> filter;
  std::string key;  // SharingKey with the filter's key conjuncts removed
};

void CollectKeyCandidates(LogicalOperatorPtr& slot, LogicalOperator* parent, int* position,
                          std::vector<KeyCandidate>* candidates) {
  const int begin = (*position)++;
  size_t index = candidates->size();
  if (slot->kind() == LogicalOperatorKind::kAggregate && !slot->As<Aggregate>().group_by.empty()) {
    candidates->push_back(KeyCandidate{&slot, parent, begin, 0, std::nullopt, ""});
  }
  LogicalOperator* node = slot.get();
  for (auto& child : node->children) CollectKeyCandidates(child, node, position, candidates);
  if (index < candidates->size() && (*candidates)[index].slot == &slot) (*candidates)[index].end = *position;
}

// The text of `aggregate` with `filter`'s conjuncts removed from its sites (restored afterwards).
std::string KeyMaskedText(Aggregate& aggregate, const KeyFilter& filter) {
  std::vector<ExpressionPtr> saved;
  for (const KeySite& site : filter.sites) {
    ExpressionPtr* slot = PredicateSlot(*site.node);
    saved.push_back((*slot)->Clone());
  }
  RewriteSites(filter, nullptr);
  std::vector<int> published;
  std::string text = SharingKey(aggregate, &published);
  for (size_t i = 0; i < filter.sites.size(); ++i) *PredicateSlot(*filter.sites[i].node) = std::move(saved[i]);
  return text;
}

// Rewrites the copies of one aggregate that differ only in the filter on one group key (see the header).
void MergeKeyFilteredCopies(LogicalOperatorPtr& plan) {
  std::vector<KeyCandidate> candidates;
  int position = 0;
  CollectKeyCandidates(plan, nullptr, &position, &candidates);
  bool any_filter = false;
  for (KeyCandidate& candidate : candidates) {
    auto& aggregate = (*candidate.slot)->As<Aggregate>();
    bool usable = true;
    candidate.filter = FindKeyFilter(aggregate, &usable);
    if (!usable) {
      candidate.key.clear();  // takes no part
    } else if (candidate.filter.has_value()) {
      candidate.key = KeyMaskedText(aggregate, *candidate.filter);
      any_filter = true;
    } else {
      std::vector<int> published;
      candidate.key = SharingKey(aggregate, &published);
    }
  }
  if (!any_filter) return;
  absl::flat_hash_map<std::string_view, int> group_of;  // text -> index into groups
  std::vector<std::vector<KeyCandidate*>> groups;
  for (KeyCandidate& candidate : candidates) {
    if (candidate.key.empty()) continue;
    auto [group, added] = group_of.try_emplace(candidate.key, static_cast<int>(groups.size()));
    if (added) groups.emplace_back();
    groups[group->second].push_back(&candidate);
  }
  std::vector<std::pair<int, int>> rewritten;  // subtrees already changed: their texts are stale
  for (std::vector<KeyCandidate*>& group : groups) {
    if (group.size() < 2) continue;
    const KeyFilter* first = nullptr;
    bool unfiltered = false;
    bool same_sites = true;
    std::vector<Value> all;
    for (KeyCandidate* member : group) {
      if (!member->filter.has_value()) {
        unfiltered = true;
        continue;
      }
      const KeyFilter& filter = *member->filter;
      if (first == nullptr) first = &filter;
      same_sites = same_sites && filter.key == first->key && filter.sites.size() == first->sites.size();
      for (size_t i = 0; same_sites && i < filter.sites.size(); ++i) {
        same_sites = filter.sites[i].offset == first->sites[i].offset;
      }
      for (const Value& value : filter.values) {
        if (Intersect({value}, all).empty()) all.push_back(value);
      }
    }
    if (first == nullptr || !same_sites) continue;
    SortValues(&all);
    bool differ = unfiltered;
    for (KeyCandidate* member : group) {
      differ = differ || (member->filter.has_value() && !SameSet(member->filter->values, all));
    }
    if (!differ) continue;  // identical copies: shared as they are
    bool overlaps = false;
    for (KeyCandidate* member : group) {
      for (const auto& [begin, end] : rewritten) overlaps = overlaps || (member->begin < end && begin < member->end);
    }
    if (overlaps) continue;
    for (KeyCandidate* member : group) {
      rewritten.emplace_back(member->begin, member->end);
      if (!member->filter.has_value()) continue;
      const KeyFilter& filter = *member->filter;
      RewriteSites(filter, unfiltered ? nullptr : &all);
      if (!unfiltered && SameSet(filter.values, all)) continue;
      // The copy's own filter, now on the shared rows: a group has one key value, so dropping the groups
      // outside `values` drops exactly the rows the sites dropped before.
      const auto& aggregate = (*member->slot)->As<Aggregate>();
      ExpressionPtr predicate = KeyPredicate(aggregate, filter.key, filter.values);
      if (member->parent != nullptr && member->parent->kind() == LogicalOperatorKind::kFilter) {
        auto& above = member->parent->As<Filter>();
        std::vector<ExpressionPtr> terms;
        terms.push_back(std::move(predicate));
        terms.push_back(std::move(above.predicate));
        above.predicate = CombineConjuncts(std::move(terms));
      } else {
        *member->slot = MakeFilter(std::move(*member->slot), std::move(predicate));
      }
    }
  }
}

}  // namespace

LogicalOperatorPtr AggregateSharing::Apply(LogicalOperatorPtr plan) const {
  MergeKeyFilteredCopies(plan);
  std::vector<Candidate> candidates;
  Collect(*plan, &candidates);
  absl::flat_hash_map<std::string_view, int> copies;
  for (const Candidate& candidate : candidates) ++copies[candidate.key];
  absl::flat_hash_map<std::string_view, int> ids;
  for (Candidate& candidate : candidates) {
    if (copies[candidate.key] < 2) continue;
    auto [id, added] = ids.try_emplace(candidate.key, static_cast<int>(ids.size()));
    candidate.aggregate->shared_result = id->second;
    candidate.aggregate->shared_lip_filters = std::move(candidate.published);
  }
  return plan;
}

}  // namespace tessera::optimizer
