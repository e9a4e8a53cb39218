#include "optimizer/rules/aggregate_sharing.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

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

}  // namespace

LogicalOperatorPtr AggregateSharing::Apply(LogicalOperatorPtr plan) const {
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
