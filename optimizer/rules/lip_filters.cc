#include "optimizer/rules/lip_filters.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/expression_format.h"

namespace tessera::optimizer {
namespace {

// Where an output column comes from: a table scan's column that it passes unchanged from, with the hash joins
// (joins without exact filter) on the way, and whether a union lies on the way (the scan's rows are then
// written to the union's blocks before any join above reads them).
struct ScanSource {
  TableScan* scan;
  int column;
  int hash_joins;
  bool through_union;
};

// The table scans below `node` that output column `column` passes unchanged from: one, or one per branch of
// each UNION [ALL] on the way (a branch whose column is computed has none). Not through a limit: rows dropped
// below it would let other rows in (the join would see different rows). Dropping a union branch's row whose
// key fails the join drops only output rows with that key (for UNION without ALL, at most the one distinct row,
// which fails the join too).
void TraceToScans(LogicalOperator* node, int column, int hash_joins, bool through_union,
                  std::vector<ScanSource>* sources) {
  while (true) {
    switch (node->kind()) {
      case LogicalOperatorKind::kTableScan:
        sources->push_back({&node->As<TableScan>(), column, hash_joins, through_union});
        return;
      case LogicalOperatorKind::kFilter:
      case LogicalOperatorKind::kSort:
        node = node->children[0].get();
        break;
      case LogicalOperatorKind::kProject: {
        const BoundExpression& expression = *node->As<Project>().expressions[column];
        if (!IsColumn(expression)) return;
        column = expression.column_index;
        node = node->children[0].get();
        break;
      }
      case LogicalOperatorKind::kJoin:
        if (column >= node->children[0]->output_width()) return;
        hash_joins += node->As<Join>().exact_filter.has_value() ? 0 : 1;
        node = node->children[0].get();
        break;
      case LogicalOperatorKind::kSetOperation:
        if (node->As<SetOperation>().operation != SetOperationType::kUnion) return;
        for (size_t c = 0; c + 1 < node->children.size(); ++c) {
          TraceToScans(node->children[c].get(), column, hash_joins, /*through_union=*/true, sources);
        }
        node = node->children.back().get();
        through_union = true;
        break;
      default:
        return;
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

// The scans that `join`'s probe keys come from, each with its candidate (key pairs and scan columns filled in).
// The filter covers the key pairs of the scan that most probe keys pass unchanged from (the first such scan on
// a tie); every scan that all those keys come from gets a candidate (several only through unions, one per
// branch). Empty when no probe key comes from a scan.
std::vector<std::pair<ScanSource, Candidate>> ProbeKeyScans(Join& join) {
  std::vector<std::vector<ScanSource>> traced(join.left_keys.size());
  for (size_t pair = 0; pair < join.left_keys.size(); ++pair) {
    const BoundExpression& key = *join.left_keys[pair];
    if (IsColumn(key)) TraceToScans(join.children[0].get(), key.column_index, 0, false, &traced[pair]);
  }
  // The column of `scan` that key pair `pair` comes from, or -1.
  auto column_in = [&](size_t pair, const TableScan* scan) {
    for (const ScanSource& source : traced[pair]) {
      if (source.scan == scan) return source.column;
    }
    return -1;
  };
  std::vector<int> key_pairs;
  for (const std::vector<ScanSource>& sources : traced) {
    for (const ScanSource& source : sources) {
      std::vector<int> pairs;
      for (size_t pair = 0; pair < traced.size(); ++pair) {
        if (column_in(pair, source.scan) >= 0) pairs.push_back(static_cast<int>(pair));
      }
      if (pairs.size() > key_pairs.size()) key_pairs = std::move(pairs);
    }
  }
  std::vector<std::pair<ScanSource, Candidate>> scans;
  if (key_pairs.empty()) return scans;
  for (const ScanSource& source : traced[key_pairs[0]]) {
    Candidate candidate{&join, false, false, false, key_pairs, {}};
    for (int pair : key_pairs) candidate.scan_columns.push_back(column_in(pair, source.scan));
    if (std::find(candidate.scan_columns.begin(), candidate.scan_columns.end(), -1) != candidate.scan_columns.end()) {
      continue;
    }
    scans.emplace_back(source, std::move(candidate));  // keys from one scan follow the same path of left inputs
  }
  return scans;
}

void Collect(LogicalOperator* node, const CardinalityEstimator& estimator, CandidatesByScan* candidates) {
  if (node->kind() == LogicalOperatorKind::kJoin) {
    auto& join = node->As<Join>();
    const bool filtering = join.join_type == JoinType::kInner || join.join_type == JoinType::kSemi;
    if (filtering && !join.left_keys.empty() && !join.enforce_single_row && join.lip_filter_id < 0) {
      const double probe_rows = estimator.EstimateRows(*join.children[0]);
      const double join_rows = estimator.EstimateRows(join);
      for (auto& [source, candidate] : ProbeKeyScans(join)) {
        auto entry = std::find_if(candidates->begin(), candidates->end(),
                                  [&](const auto& scan_candidates) { return scan_candidates.first == source.scan; });
        if (entry == candidates->end()) entry = candidates->insert(candidates->end(), {source.scan, {}});
        // An inner join only: execution may build a semi join on its left side, which a filter would forbid.
        const bool direct_inner = source.hash_joins == 0 && !source.through_union &&
                                  join.join_type == JoinType::kInner && !join.exact_filter.has_value();
        // Not the direct prober: the rows it would drop are first probed into another hash table or written
        // to a union's blocks.
        const bool indirect = source.hash_joins > 0 || source.through_union;
        candidate.publishes_alone =
            (direct_inner && estimator.EstimateRows(*join.children[1]) >= LipFilters::kDirectProberMinBuildRows) ||
            (direct_inner && join.left_keys.size() >= 2 &&
             estimator.KeyMatchFraction(join) <= LipFilters::kOnlyJoinMaxPassFraction) ||
            (indirect && !join.exact_filter.has_value() &&
             join_rows <= LipFilters::kIndirectMaxPassFraction * probe_rows);
        candidate.publishes_as_only_join =
            direct_inner && join_rows <= LipFilters::kOnlyJoinMaxPassFraction * probe_rows;
        candidate.publishes = (!join.exact_filter.has_value() && source.hash_joins > 0) || candidate.publishes_alone;
        entry->second.push_back(std::move(candidate));
      }
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
      if (join->lip_filter_id < 0) {  // a join below a union publishes one filter for every branch's scan
        join->lip_filter_id = next_id++;
        join->lip_filter_key_pairs = candidate.key_pairs;
      }
      const std::vector<std::string> build_names = DisplayNames(join->children[1]->output());
      std::vector<std::string> keys;
      for (int pair : candidate.key_pairs) keys.push_back(FormatExpression(*join->right_keys[pair], build_names));
      scan->lip_filters.push_back({join->lip_filter_id, candidate.scan_columns, absl::StrJoin(keys, ", ")});
    }
  }
  return plan;
}

}  // namespace tessera::optimizer
