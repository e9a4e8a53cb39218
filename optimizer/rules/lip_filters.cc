#include "optimizer/rules/lip_filters.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/expression_format.h"

namespace tessera::optimizer {
namespace {

// The table scan below `node` that output column `column` passes unchanged from, and the scan's column. Not
// through a limit: rows dropped below it would let other rows in (the join would see different rows).
// *hash_joins counts the hash joins (joins without exact filter) on the way.
bool TraceToScan(LogicalOperator* node, int column, TableScan** scan, int* scan_column, int* hash_joins) {
  while (true) {
    switch (node->kind()) {
      case LogicalOperatorKind::kTableScan:
        *scan = &node->As<TableScan>();
        *scan_column = column;
        return true;
      case LogicalOperatorKind::kFilter:
      case LogicalOperatorKind::kSort:
        node = node->children[0].get();
        break;
      case LogicalOperatorKind::kProject: {
        const BoundExpression& expression = *node->As<Project>().expressions[column];
        if (!IsColumn(expression)) return false;
        column = expression.column_index;
        node = node->children[0].get();
        break;
      }
      case LogicalOperatorKind::kJoin:
        if (column >= node->children[0]->output_width()) return false;
        *hash_joins += node->As<Join>().exact_filter.has_value() ? 0 : 1;
        node = node->children[0].get();
        break;
      default:
        return false;
    }
  }
}

// A join probing with rows of a scan. It publishes a filter unless it is an exact-filter join (applied at the
// scan anyway) or the scan's direct prober (no hash join in between: its own hash probe runs right after the
// scan's filters, in the same loop, so a Bloom filter of its keys would only repeat it) with a small build
// side. The filter covers key_pairs, the join's key pairs whose probe keys come from the scan (scan_columns,
// one per pair). publishes_alone: it publishes even when no other join probes rows of the scan.
// publishes_as_only_join: it publishes when it is the only join that probes rows of the scan (a selective
// direct prober).
struct Candidate {
  Join* join;
  bool publishes;
  bool publishes_alone;
  bool publishes_as_only_join;
  std::vector<int> key_pairs;
  std::vector<int> scan_columns;
};

// Candidates per scan, scans in the order they were first seen (so filter ids are deterministic).
using CandidatesByScan = std::vector<std::pair<TableScan*, std::vector<Candidate>>>;

// The scan that most of `join`'s probe keys pass unchanged from (the first such scan on a tie), with those key
// pairs; false when no probe key comes from a scan.
bool ProbeKeyScan(Join& join, TableScan** scan, Candidate* candidate, int* hash_joins) {
  struct Traced {
    TableScan* scan;
    int column;
    int hash_joins;
  };
  std::vector<Traced> traced(join.left_keys.size(), Traced{nullptr, -1, 0});
  for (size_t pair = 0; pair < join.left_keys.size(); ++pair) {
    const BoundExpression& key = *join.left_keys[pair];
    Traced& t = traced[pair];
    if (!IsColumn(key) || !TraceToScan(join.children[0].get(), key.column_index, &t.scan, &t.column, &t.hash_joins)) {
      t.scan = nullptr;
    }
  }
  int best_pairs = 0;
  for (const Traced& t : traced) {
    if (t.scan == nullptr) continue;
    const int pairs = static_cast<int>(
        std::count_if(traced.begin(), traced.end(), [&](const Traced& other) { return other.scan == t.scan; }));
    if (pairs > best_pairs) {
      best_pairs = pairs;
      *scan = t.scan;
      *hash_joins = t.hash_joins;  // keys from one scan follow the same path of left inputs
    }
  }
  if (best_pairs == 0) return false;
  for (size_t pair = 0; pair < traced.size(); ++pair) {
    if (traced[pair].scan != *scan) continue;
    candidate->key_pairs.push_back(static_cast<int>(pair));
    candidate->scan_columns.push_back(traced[pair].column);
  }
  return true;
}

void Collect(LogicalOperator* node, const CardinalityEstimator& estimator, CandidatesByScan* candidates) {
  if (node->kind() == LogicalOperatorKind::kJoin) {
    auto& join = node->As<Join>();
    const bool filtering = join.join_type == JoinType::kInner || join.join_type == JoinType::kSemi;
    TableScan* scan = nullptr;
    Candidate candidate{&join, false, false, false, {}, {}};
    int hash_joins = 0;
    if (filtering && !join.left_keys.empty() && !join.enforce_single_row && join.lip_filter_id < 0 &&
        ProbeKeyScan(join, &scan, &candidate, &hash_joins)) {
      auto entry = std::find_if(candidates->begin(), candidates->end(),
                                [&](const auto& scan_candidates) { return scan_candidates.first == scan; });
      if (entry == candidates->end()) entry = candidates->insert(candidates->end(), {scan, {}});
      // An inner join only: execution may build a semi join on its left side, which a filter would forbid.
      const bool direct_inner = hash_joins == 0 && join.join_type == JoinType::kInner && !join.exact_filter.has_value();
      candidate.publishes_alone =
          direct_inner && estimator.EstimateRows(*join.children[1]) >= LipFilters::kDirectProberMinBuildRows;
      candidate.publishes_as_only_join =
          direct_inner && estimator.EstimateRows(join) <=
                              LipFilters::kOnlyJoinMaxPassFraction * estimator.EstimateRows(*join.children[0]);
      candidate.publishes = (!join.exact_filter.has_value() && hash_joins > 0) || candidate.publishes_alone;
      entry->second.push_back(std::move(candidate));
    }
  }
  for (auto& child : node->children) Collect(child.get(), estimator, candidates);
}

}  // namespace

LogicalOperatorPtr LipFilters::Apply(LogicalOperatorPtr plan) const {
  CandidatesByScan candidates;
  CardinalityEstimator estimator;
  Collect(plan.get(), estimator, &candidates);
  int next_id = 0;
  for (auto& [scan, joins] : candidates) {
    const bool several_joins = static_cast<int>(joins.size()) >= kMinJoinsPerScan;
    for (Candidate& candidate : joins) {
      const bool only_join = joins.size() == 1;
      const bool publishes = (candidate.publishes && (several_joins || candidate.publishes_alone)) ||
                             (only_join && candidate.publishes_as_only_join);
      if (!publishes) continue;
      Join* join = candidate.join;
      join->lip_filter_id = next_id++;
      join->lip_filter_key_pairs = candidate.key_pairs;
      const std::vector<std::string> build_names = DisplayNames(join->children[1]->output());
      std::vector<std::string> keys;
      for (int pair : candidate.key_pairs) keys.push_back(FormatExpression(*join->right_keys[pair], build_names));
      scan->lip_filters.push_back({join->lip_filter_id, candidate.scan_columns, absl::StrJoin(keys, ", ")});
    }
  }
  return plan;
}

}  // namespace tessera::optimizer
