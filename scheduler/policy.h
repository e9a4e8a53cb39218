#pragma once
// Scheduling policies as pure functions: a policy turns the active queries' state into a weight per query;
// the PolicyEnforcer picks a query with probability weight / sum. Keeping this free of threads and clocks
// makes every formula unit-testable with synthetic inputs.
//
// Policies (t_j = predicted time of query j's next work order, PV = priority value, larger = more important):
//   static   p_j = 1/N. The baseline the learning is measured against (dissertation §3.8.5).
//   fair     p_j ∝ 1/t_j, so every query gets an equal share of CPU time (§3.7.1).
//   hpf      Highest Priority First: fair among the ready queries of the highest PV; lower PVs get work
//   orders
//            only while no higher one has a ready work order (§3.7.2).
//   pp       Proportional Priority: class share t_PV = s(PV)/Σs, class work-order time w_PV, n_PV =
//   t_PV/w_PV,
//            prob_PV = n_PV/Σn; fair inside a class (§3.7.3). s(PV) = PV (linear) or base^PV (exponential).
//            w_PV is the expected time of a work order picked from the class (Σ p(j|PV) t_j, the harmonic
//            mean of t_j under intra-class fairness); §3.7.3 writes the arithmetic mean, which is the same
//            only when a class's t_j are equal, and otherwise skews class shares.
//   lottery  each query holds PV tickets; p_j ∝ tickets_j / t_j (Waldspurger's compensation tickets with the
//            predicted work-order time as the quantum), so CPU share ∝ tickets.
//   fcfs     the earliest-arrived ready query gets every work order.
//   srpt     the ready query with the least estimated remaining work gets every work order (ties: earliest);
//            remaining work is aged by the time waited (PolicyOptions::srpt_aging) so long queries do not starve.
//   ifsrpt   Inelastic-First SRPT: SRPT among ready queries in an inelastic phase if any, else SRPT.
// Cold start: until every ready query of a level (all queries for fair/lottery, one PV for hpf/pp) has a
// prediction, that level uses default probabilities (uniform; PV-proportional across pp classes), as in
// Quickstep's Learner.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/learning_agent.h"

namespace tessera {

enum class PolicyKind {
  kStatic,
  kFair,
  kHighestPriorityFirst,
  kProportionalPriority,
  kLottery,
  kFcfs,
  kSrpt,
  kInelasticFirstSrpt,
};

enum class PriorityScale { kLinear, kExponential };

struct PolicyOptions {
  PolicyKind kind = PolicyKind::kFair;
  PriorityScale scale = PriorityScale::kLinear;  // proportional priority only
  double exponential_base = 2.0;                 // proportional priority with the exponential scale
  // SRPT / IFSRPT: ns of remaining work a query's rank gains per ns it has waited since arrival (0: pure size
  // order, which starves a long query while shorter ones keep arriving). With 0.25 a query that waited 4x the
  // difference of remaining work goes before a newer shorter one.
  double srpt_aging = 0.25;
  // SRPT / IFSRPT: how remaining time is estimated (LearningAgent::EstimateRemainingNs, learning_agent.h); the
  // earlier variants are kept to compare in the same run.
  RemainingEstimate srpt_estimate = RemainingEstimate::kStagedCorrection;
};

// Accepts: static, fair, hpf, pp (= pp-linear), pp-exp, lottery, fcfs, srpt, ifsrpt (case-insensitive).
absl::StatusOr<PolicyOptions> ParsePolicy(const std::string& name);
std::string PolicyName(const PolicyOptions& options);
// Whether the policy gives queries CPU by priority (hpf, pp, pp-exp, lottery): then the LoadController may suspend
// lower-priority queries to admit a higher-priority one.
bool RanksByPriority(PolicyKind kind);

// What a policy knows about one active query.
struct PolicyCandidate {
  bool ready = false;      // has a work order to hand out now
  int priority = 1;        // PV, >= 1
  uint64_t arrival = 0;    // arrival order, smaller = earlier
  int64_t arrival_ns = 0;  // arrival time (monotonic ns), for SRPT's aging
  bool has_prediction = false;
  double predicted_ns = 0;   // predicted next work-order time, > 0 when has_prediction
  double remaining_ns = -1;  // estimated remaining work; < 0 = unknown
  bool inelastic = false;    // in an inelastic phase
};

// Reusable buffers so that computing weights never allocates once they have grown to the query count.
struct PolicyScratch {
  std::vector<int> order;
};

// Writes weights[i] >= 0 for every candidate (0 for candidates that are not ready). `weights` has the size of
// `candidates`. All weights are 0 iff no candidate is ready.
void ComputePolicyWeights(const PolicyOptions& options, std::span<const PolicyCandidate> candidates,
                          std::span<double> weights, PolicyScratch* scratch);

}  // namespace tessera
