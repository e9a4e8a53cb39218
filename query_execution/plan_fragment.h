#pragma once
// The part of a query that every rank of a cluster runs over its own data (distributed/README.md, "Which query
// shapes are distributed"): a logical subtree (optimizer/logical_plan.h) as bytes. The master encodes it for a
// gather exchange (distributed/gather_operator.h); a rank decodes it against its own catalog (the same schemas:
// DDL runs on every rank), plans it with BuildExecutionDag and runs it under its own Foreman.
//
// Encoded kinds: TableScan, Filter, Project, Join, Aggregate, Distinct, Sort, Limit, SetOperation, Values (everything
// plan_distribution.h places on the ranks); others are refused with Unimplemented naming the kind. LIP filters
// (TableScan::lip_filters, Join::lip_filter_id) are kept only where both the publishing join and a reading scan
// are inside the fragment: a rank has no other joins, and a LIP filter only drops rows that could not match.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/catalog.h"
#include "optimizer/logical_plan.h"

namespace tessera {

// `inputs`: subtrees of `fragment` that each rank does not compute itself; each is encoded as a placeholder with
// its output columns and its entry of `exchange_tags` (missing or 0: the master computes the input and broadcasts
// it, distributed/block_stream.h, SendRelation; otherwise the data tag of the hash-split exchange whose result on
// the rank is the input, distributed/repartition_operator.h).
absl::StatusOr<std::string> EncodePlanFragment(const optimizer::LogicalOperator& fragment,
                                               const std::vector<const optimizer::LogicalOperator*>& inputs = {},
                                               const std::vector<int>& exchange_tags = {});

// DataLoss on a malformed message; NotFound / FailedPrecondition when a table is missing or has another schema
// than the encoded columns say. `inputs` gets the placeholders of the inputs in order (Values nodes without rows,
// with the inputs' columns), for BuildExecutionDag's `inputs`; `exchange_tags` (may be null) their tags (0: a
// broadcast input). The decoded fragment's build sides and shared aggregates are decided again on the rank
// (optimizer/rules/build_side_swap.h, aggregate_sharing.h).
absl::StatusOr<optimizer::LogicalOperatorPtr> DecodePlanFragment(std::string_view message, const Catalog& catalog,
                                                                 std::vector<const optimizer::LogicalOperator*>* inputs,
                                                                 std::vector<int>* exchange_tags = nullptr);

}  // namespace tessera
