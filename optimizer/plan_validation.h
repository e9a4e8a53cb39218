#pragma once
// Structural checks of a logical plan, run by RunRules after every rule with OptimizerOptions::validate_plans
// (Debug builds and the tests): every column reference is inside its input, join key pairs have equal types,
// predicates are BOOLEAN, children counts fit the node kinds, no outer-reference placeholder survived binding,
// a join built on its left side may be. A plan that passes is safe to hand to the plan builder.
// Pure function; thread-safe.

#include "absl/status/status.h"
#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// Ok, or Internal naming the first offending node and expression.
absl::Status ValidatePlan(const LogicalOperator& plan);

}  // namespace tessera::optimizer
