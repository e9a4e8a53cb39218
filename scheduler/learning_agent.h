#pragma once
// Predicts each query's next work-order execution time from the times of its recent work orders (dissertation
// §3.6.2 and appendix A.5). The PolicyEnforcer's fair and proportional policies turn these predictions into
// probabilities.
//
// Per query and per *active* operator a bounded ring of recent durations is kept; an operator's history is
// dropped when it finishes (A.5). Two predictors, each per operator or combined over the active operators:
//   window mean     mean of the operator's last `mean_window` durations; combined: the pooled mean of the
//                   last `mean_window` durations of every active operator (Quickstep's Learner, window 10);
//   autoregression  per operator an AR(p) fit over the last `ar_window` durations (refit every
//                   `ar_refit_interval` records); combined: weighted by each operator's record count.
// Which one predicts the next work order (LearningAgentOptions::scope):
//   kNextOperator   the operator the next work order comes from (the caller passes it, from
//                   SchedulableQuery::NextWorkOrderOperator) once it has `min_operator_records`;
//                   otherwise, or when the operator is unknown (-1), the combined prediction;
//   kPooled         always the combined prediction (the behaviour before the hint existed; kept to compare).
// The combined prediction is biased where a short operator stays active through a long phase of another one
// (a build or finalize step whose last work order waits for a probe): its samples stay in the pool.
// With no active operator the last combined prediction is kept (between operators). Before the first record a
// query has no prediction: policies then use their default probabilities.
//
// Outliers: see LearningAgentOptions::outlier_factor.
//
// Prediction error: before each record, the prediction the scheduler used for that work order (with scope
// kNextOperator: the one for the recorded work order's own operator, which was the next work order's operator
// when it was taken; with kPooled: the combined one) is compared with the actual duration, giving a mean
// absolute error and a mean relative error per predictor (the active one always; both with
// `evaluate_both_predictors`). (For a query without the NextWorkOrderOperator hint the scheduler used the
// combined prediction, but kNextOperator scores the per-operator one.)
//
// Threading: not thread-safe; owned and used by the Foreman thread.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "scheduler/autoregression.h"

namespace tessera {

enum class PredictorKind { kWindowMean, kAutoregression };
const char* PredictorName(PredictorKind kind);

enum class PredictionScope { kNextOperator, kPooled };
const char* PredictionScopeName(PredictionScope scope);  // "next-operator", "pooled"

struct LearningAgentOptions {
  PredictorKind predictor = PredictorKind::kWindowMean;
  int mean_window = 10;  // durations per operator for the mean (Quickstep: 10)
  int ar_order = 2;
  int ar_window = 32;         // durations per operator for the AR fit
  int ar_refit_interval = 8;  // records between AR refits of an operator
  bool evaluate_both_predictors = false;
  PredictionScope scope = PredictionScope::kNextOperator;
  // With kNextOperator: records the next work order's operator needs before its own history predicts.
  int min_operator_records = 3;
  // A duration above outlier_factor x its operator's current window mean is recorded as that bound (0: off).
  // Preemption of a worker (2-core VMs, noisy neighbours) stretches single work orders by 100x; unclamped,
  // one such sample cuts a query's fair-share probability for a whole window, and a low-share query needs
  // many dispatches to flush it out. A real phase change still wins: the bound grows with every record.
  double outlier_factor = 8.0;
};

struct PredictionError {
  int64_t count = 0;
  double sum_absolute_ns = 0;
  double sum_relative = 0;  // |predicted - actual| / actual
  double MeanAbsoluteErrorNs() const { return count == 0 ? 0 : sum_absolute_ns / count; }
  double MeanRelativeError() const { return count == 0 ? 0 : sum_relative / count; }
  void Add(double predicted, double actual);
};

// How well remaining-time estimates (EstimateRemainingNs, for SRPT and IF-SRPT) tracked reality, over finished
// queries. An estimate made when a query had done a fraction f of its work-order time (its recorded durations so
// far over their total at its end) is compared with the work-order time it still had to do, and counted in the
// stage of life f falls in: [0, 1/4), [1/4, 1/2), [1/2, 3/4), [3/4, 1).
struct RemainingEstimateError {
  static constexpr int kStages = 4;
  int64_t count[kStages] = {};
  double sum_relative[kStages] = {};    // |estimate - actual| / actual
  double sum_log2_ratio[kStages] = {};  // log2(estimate / actual): > 0 over-estimates (geometric mean bias)
  double MeanRelative(int stage) const { return count[stage] == 0 ? 0 : sum_relative[stage] / count[stage]; }
  // The geometric mean of estimate / actual.
  double GeometricBias(int stage) const;
};

// How EstimateRemainingNs estimates (PolicyOptions::srpt_estimate):
//   kPlanCounts        the plan's cardinality-based counts corrected by progress x per-operator costs, unscaled
//                      (before issue #14);
//   kPlanCorrection    counts remembered by plan, scaled by one correction per plan (issue #14, first step);
//   kStagedCorrection  as kPlanCorrection, but the correction is learned and applied per stage of the query's life
//                      (the stage the estimate itself puts the query in: done / (done + raw estimate)), and an
//                      operator's cost blends its few first work orders with the plan's remembered cost
//                      (PredictOperatorCost's `blend`). One factor per plan over-corrected the later stages, where
//                      the raw estimate's bias is smaller than at the start.
//   kOracle            a yardstick, not an estimate: the least total work-order time any finished query of the same
//                      plan recorded (about its time alone) times the share of that query's work orders this one
//                      has not finished yet (at least 1/64, so the order stays by size near the end); counting work
//                      orders rather than time keeps other queries' interference out of it. kStagedCorrection where
//                      the plan has not finished before. With deterministic plans (a replayed benchmark) it is the
//                      true remaining time up to interference, so running SRPT with it separates what ranking
//                      errors cost from what the scheduling mechanism loses (benchmarks/scheduler, experiment 5).
enum class RemainingEstimate { kPlanCounts, kPlanCorrection, kStagedCorrection, kOracle };

struct QueryLearningStats {
  int64_t records = 0;
  PredictionError mean_error;            // window-mean predictor
  PredictionError autoregression_error;  // AR predictor (only counted when evaluated)
};

class LearningAgent {
 public:
  class QueryHistory;  // opaque per-query state

  explicit LearningAgent(const LearningAgentOptions& options);
  ~LearningAgent();

  LearningAgent(const LearningAgent&) = delete;
  LearningAgent& operator=(const LearningAgent&) = delete;

  const LearningAgentOptions& options() const { return options_; }

  // The returned history lives until RemoveQuery. `plan_signature` (SchedulableQuery::PlanSignature, 0: none)
  // keys the per-operator costs remembered across queries of the same plan (PredictOperatorCost).
  QueryHistory* AddQuery(uint64_t plan_signature = 0);
  void RemoveQuery(QueryHistory* query);

  // Records one finished work order of `operator_id` (small and dense per query); an id < 0 or >= 65536 is ignored.
  void Record(QueryHistory* query, int operator_id, int64_t duration_ns);
  // Drops the operator's history (its work orders have all finished); with a plan signature, its mean work-order
  // time is remembered for later queries of the same plan (averaged with what was remembered before).
  void RemoveOperator(QueryHistory* query, int operator_id);
  // The expected time of one work order of `operator_id`, for remaining-time estimates: the window mean of the
  // operator's own recent work orders once it has one, else what a finished query of the same plan measured for
  // it. False if neither is known.
  // `blend`: while the operator's own window is not full and the plan remembers a cost, the remembered cost fills
  // the window's empty places (its first work orders alone are a noisy estimate).
  bool PredictOperatorCost(const QueryHistory* query, int operator_id, double* cost_ns, bool blend = false) const;
  // The query's remaining work-order time: over the operators with work left (`remaining_work_orders`, by operator
  // id: the query's own estimate from its plan's cardinality estimates corrected by its progress,
  // SchedulableQuery::EstimatedRemainingWorkOrdersByOperator), the remaining work orders x the operator's cost
  // (PredictOperatorCost, else `fallback_ns`). Where an earlier query of the same plan finished the operator, its
  // work-order count replaces the estimate (less what this query has done of it): the plan's cardinality
  // estimates are often off by far more than a repeated plan's counts change.
  // Then, where earlier queries of the plan sampled estimates (NoteRemainingEstimate), the sum is scaled by their
  // geometric mean of actual / estimate: a plan's estimates err the same way each time it runs (an operator whose
  // work orders grow as its hash table fills, work outside the counted operators), so ranking plans against each
  // other needs that bias removed. See RemainingEstimate for the variants.
  double EstimateRemainingNs(const QueryHistory* query, const std::vector<int64_t>& remaining_work_orders,
                             double fallback_ns, RemainingEstimate kind = RemainingEstimate::kStagedCorrection) const;
  // Samples the estimate the scheduler used, the last EstimateRemainingNs of the query (at its first estimate and
  // after 1, 2, 4, 8, ... records; at most 32 per query), for remaining_estimate_error and the plan's correction,
  // which learn from them when the query is removed.
  void NoteRemainingEstimate(QueryHistory* query, double estimate_ns);
  const RemainingEstimateError& remaining_estimate_error() const { return remaining_error_; }

  // The predicted duration of the query's next work order with the configured predictor and scope;
  // `next_operator` is the operator that work order comes from (-1: unknown, the combined prediction). False
  // if the query has no record yet.
  bool Predict(const QueryHistory* query, int next_operator, double* predicted_ns) const;
  bool PredictWith(PredictorKind kind, const QueryHistory* query, int next_operator, double* predicted_ns) const;
  // The combined prediction (next operator unknown).
  bool Predict(const QueryHistory* query, double* predicted_ns) const { return Predict(query, -1, predicted_ns); }

  const QueryLearningStats& stats(const QueryHistory* query) const;
  // Totals over every query ever added.
  const PredictionError& total_error(PredictorKind kind) const {
    return kind == PredictorKind::kWindowMean ? total_mean_error_ : total_autoregression_error_;
  }
  // Exponentially weighted mean of all recorded durations (0 before the first): a default for queries without
  // history, e.g. in remaining-work estimates.
  double global_mean_ns() const { return global_mean_ns_; }

 private:
  bool EvaluatesAutoregression() const {
    return options_.predictor == PredictorKind::kAutoregression || options_.evaluate_both_predictors;
  }

  bool PredictCombined(PredictorKind kind, const QueryHistory* query, double* predicted_ns) const;
  // log2 of the factor EstimateRemainingNs scales the query's estimates by (0: none known): the plan's correction
  // for `stage` if it has one (stage >= 0), else its whole-life one.
  double Log2Correction(const QueryHistory* query, int stage) const;
  void UpdateCachedPredictions(QueryHistory* query) const;

  const LearningAgentOptions options_;
  std::vector<std::unique_ptr<QueryHistory>> queries_;  // owned; order irrelevant
  PredictionError total_mean_error_;
  PredictionError total_autoregression_error_;
  double global_mean_ns_ = 0;
  struct RememberedOperator {
    double mean_ns = 0;      // mean work-order time
    double work_orders = 0;  // work orders it ran
  };
  // (plan signature, operator id) -> that operator in earlier queries of the plan (averaged over them).
  // Bounded: cleared when it reaches kMaxRememberedOperators entries.
  absl::flat_hash_map<std::pair<uint64_t, int>, RememberedOperator> remembered_;
  // plan signature -> log2(actual / estimate) of its earlier queries' sampled estimates (exponentially averaged),
  // over the whole life and by the stage of life the estimate was made in.
  struct PlanCorrection {
    double whole = 0;
    double by_stage[RemainingEstimateError::kStages] = {};
    bool known[RemainingEstimateError::kStages] = {};
  };
  absl::flat_hash_map<uint64_t, PlanCorrection> remembered_log2_correction_;
  // plan signature -> its finished query with the least total work-order time (RemainingEstimate::kOracle): that
  // time and its work orders.
  struct PlanTotal {
    int64_t ns = 0;
    int64_t work_orders = 0;
  };
  absl::flat_hash_map<uint64_t, PlanTotal> remembered_total_;
  RemainingEstimateError remaining_error_;
};

}  // namespace tessera
