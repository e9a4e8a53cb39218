#pragma once
// The part of a plan a rank runs for a gather (distributed/README.md, "Placement"): its part of one table, the
// rows that pass the scan's pushed-down filter, with the scan's columns. The master sends it with kSendTable
// (rank_protocol.h); the rank runs it as a Select under its own Foreman and streams the result blocks.
//
// Bound expressions travel as their fields (kind, type, column, constant, operator, function, flags, children);
// constants and types through Value::Serialize, so every expression the binder can build round-trips exactly.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "expressions/bound_expression.h"

namespace tessera::distributed {

struct ScanFragment {
  std::string table;
  std::vector<int> columns;                  // table column indexes, in output order
  std::unique_ptr<BoundExpression> filter;   // over the output columns (positions in `columns`); null: none
};

std::string EncodeScanFragment(const ScanFragment& fragment);
// DataLoss on a malformed message (also expressions nested deeper than 10,000 levels).
absl::StatusOr<ScanFragment> DecodeScanFragment(std::string_view message);

}  // namespace tessera::distributed
