#pragma once
// A rewrite rule of the logical plan. Rules run in the fixed order of rule_list.cc; each takes the whole plan
// and returns the rewritten plan (it may rebuild or edit nodes in place). A rule must keep the plan's result
// (rows, column order, names and types of the root's output) unchanged.
//
// Rules hold no state between calls and may be used from any thread on distinct plans.

#include <memory>
#include <string>

#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

class Rule {
 public:
  virtual ~Rule() = default;
  virtual std::string name() const = 0;
  virtual LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const = 0;
};

}  // namespace tessera::optimizer
