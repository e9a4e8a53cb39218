#pragma once
// What the optimizer is asked to do (which rules run) and what it reports back (how long binding and each rule
// took), for SET disabled_rules and EXPLAIN ANALYZE.
//
// Rules are named in settings by the snake_case form of Rule::name() ("JoinOrdering" -> "join_ordering").
// Plain data; thread-compatible.

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/value.h"

namespace tessera::optimizer {

class LogicalOperator;

// Runs an optimized plan to completion and returns its rows (the engine's executor). The binder calls it for
// each step of a WITH RECURSIVE query (optimizer/recursive_cte_binder.cc), from the planning thread.
using PlanRunner = std::function<absl::StatusOr<std::vector<std::vector<Value>>>(const LogicalOperator& plan)>;

// Returns the whole contents of a file that a statement names (read_csv in FROM), after checking that the
// statement may read it (the engine's file access policy: a server reads only under --allowed-directories) and
// that it is small enough to hold in the plan. Called from the planning thread.
using FileReader = std::function<absl::StatusOr<std::string>(const std::string& path)>;

struct OptimizerOptions {
  // Setting names of rules that are skipped. Only names of RuleList() rules (ParseDisabledRules checks them).
  std::set<std::string> disabled_rules;
  // How WITH RECURSIVE queries are evaluated while binding; without a runner they are rejected.
  PlanRunner run_plan;
  // How read_csv reads its file while binding; without a reader read_csv is rejected.
  FileReader read_file;
  // SET max_recursion_depth: the most times the recursive term of a WITH RECURSIVE query may run with rows in
  // its working table before the query fails.
  int64_t max_recursion_depth = kDefaultMaxRecursionDepth;
  static constexpr int64_t kDefaultMaxRecursionDepth = 10000;
  // SET validate_plans: ValidatePlan (plan_validation.h) on the bound plan and after every rule, so that a rule
  // that breaks a plan fails the query with the rule's name instead of failing later or answering wrongly. On in
  // Debug builds and in the SQL tests (the runner sets it); off by default in Release builds (it walks the plan
  // once per rule).
#ifdef NDEBUG
  static constexpr bool kValidatePlansByDefault = false;
#else
  static constexpr bool kValidatePlansByDefault = true;
#endif
  bool validate_plans = kValidatePlansByDefault;
};

struct RuleRun {
  std::string name;  // setting name
  bool disabled = false;
  int64_t elapsed_ns = 0;  // 0 when disabled
};

struct OptimizerReport {
  int64_t bind_ns = 0;
  std::vector<RuleRun> rules;  // in the order of RuleList()
};

// "PredicatePushDown" -> "predicate_push_down".
std::string RuleSettingName(std::string_view rule_name);

// Parses a comma-separated list of rule setting names (case-insensitive, spaces around names ignored, "" = none).
// InvalidArgument naming the unknown rule and listing the valid names otherwise.
absl::StatusOr<OptimizerOptions> ParseDisabledRules(std::string_view list);

}  // namespace tessera::optimizer
