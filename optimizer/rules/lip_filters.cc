#include "optimizer/rules/lip_filters.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/expression_format.h"

namespace tessera::optimizer {
namespace {

// The table scan below `node` that output column `column` passes unchanged from, and the scan's column.
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
      case LogicalOperatorKind::kLimit:
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
// scan's filters, in the same loop, so a Bloom filter of its keys would only repeat it).
struct Candidate {
  Join* join;
  bool publishes;
  std::vector<int> scan_columns;
};

// Candidates per scan, scans in the order they were first seen (so filter ids are deterministic).
using CandidatesByScan = std::vector<std::pair<TableScan*, std::vector<Candidate>>>;

void Collect(LogicalOperator* node, CandidatesByScan* candidates) {
  if (node->kind() == LogicalOperatorKind::kJoin) {
    auto& join = node->As<Join>();
    const bool filtering = join.join_type == JoinType::kInner || join.join_type == JoinType::kSemi;
    if (filtering && !join.left_keys.empty() && !join.enforce_single_row && join.lip_filter_id < 0) {
      TableScan* scan = nullptr;
      std::vector<int> columns;
      int hash_joins = 0;
      for (const auto& key : join.left_keys) {
        TableScan* key_scan = nullptr;
        int column = -1;
        hash_joins = 0;
        if (!IsColumn(*key) ||
            !TraceToScan(join.children[0].get(), key->column_index, &key_scan, &column, &hash_joins) ||
            (scan != nullptr && key_scan != scan)) {
          scan = nullptr;
          break;
        }
        scan = key_scan;
        columns.push_back(column);
      }
      if (scan != nullptr) {
        auto entry = std::find_if(candidates->begin(), candidates->end(),
                                  [&](const auto& scan_candidates) { return scan_candidates.first == scan; });
        if (entry == candidates->end()) entry = candidates->insert(candidates->end(), {scan, {}});
        const bool publishes = !join.exact_filter.has_value() && hash_joins > 0;
        entry->second.push_back({&join, publishes, std::move(columns)});
      }
    }
  }
  for (auto& child : node->children) Collect(child.get(), candidates);
}

}  // namespace

LogicalOperatorPtr LipFilters::Apply(LogicalOperatorPtr plan) const {
  CandidatesByScan candidates;
  Collect(plan.get(), &candidates);
  int next_id = 0;
  for (auto& [scan, joins] : candidates) {
    if (static_cast<int>(joins.size()) < kMinJoinsPerScan) continue;
    for (Candidate& candidate : joins) {
      if (!candidate.publishes) continue;
      Join* join = candidate.join;
      join->lip_filter_id = next_id++;
      const std::vector<std::string> build_names = DisplayNames(join->children[1]->output());
      std::vector<std::string> keys;
      for (const auto& key : join->right_keys) keys.push_back(FormatExpression(*key, build_names));
      scan->lip_filters.push_back({join->lip_filter_id, candidate.scan_columns, absl::StrJoin(keys, ", ")});
    }
  }
  return plan;
}

}  // namespace tessera::optimizer
