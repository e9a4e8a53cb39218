#include "scheduler/learning_agent.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

namespace tessera {
namespace {

constexpr int kMaxArWindow = 256;
constexpr int kMaxOperatorId = 1 << 16;
// Bound of LearningAgent::remembered_ (entries of 32-40 bytes).
constexpr size_t kMaxRememberedOperators = 1 << 16;

struct OperatorHistory {
  bool active = false;
  std::vector<int64_t> ring;  // the most recent durations; capacity max(mean_window, ar_window)
  int64_t count = 0;          // records since activation
  int head = 0;               // next write position
  int64_t mean_sum = 0;       // sum of the last min(count, mean_window) durations
  int64_t total_sum = 0;      // sum of every recorded duration since activation
  AutoregressionModel model;
  int records_since_fit = 0;
  double ar_prediction = 0;
};

}  // namespace

class LearningAgent::QueryHistory {
 public:
  size_t index = 0;  // position in LearningAgent::queries_
  uint64_t plan_signature = 0;
  std::vector<OperatorHistory> operators;
  std::vector<int> active;  // ids of active operators
  int64_t pooled_sum = 0;   // sum of mean_sum over active operators
  int64_t pooled_count = 0;
  bool has_prediction = false;
  double cached_mean = 0;  // last prediction, kept while no operator is active
  double cached_ar = 0;
  QueryLearningStats stats;
  // Remaining-time estimates sampled for RemainingEstimateError: the recorded work-order time when each was made.
  struct EstimateSample {
    int64_t done_ns;
    double estimate_ns;
    double log2_correction;  // the plan's correction already in estimate_ns; NaN: an uncorrected estimate
    int estimated_stage;     // the stage of life the estimate placed the query in (kStagedCorrection's key)
  };
  static constexpr int kMaxEstimateSamples = 32;
  EstimateSample samples[kMaxEstimateSamples];
  int sample_count = 0;
  int64_t next_sample_records = 0;  // sample when stats.records reaches this: 0, 1, 2, 4, ...
  int64_t recorded_ns = 0;          // every recorded duration, unclamped
  // What the last EstimateRemainingNs applied (NaN: it estimated without remembered counts and correction), and
  // the stage of life it estimated the query to be in.
  mutable double applied_log2_correction = 0;
  mutable int applied_stage = 0;
};

double RemainingEstimateError::GeometricBias(int stage) const {
  return count[stage] == 0 ? 1 : std::exp2(sum_log2_ratio[stage] / static_cast<double>(count[stage]));
}

const char* PredictorName(PredictorKind kind) {
  return kind == PredictorKind::kWindowMean ? "window-mean" : "autoregression";
}

const char* PredictionScopeName(PredictionScope scope) {
  return scope == PredictionScope::kNextOperator ? "next-operator" : "pooled";
}

void PredictionError::Add(double predicted, double actual) {
  const double error = std::fabs(predicted - actual);
  ++count;
  sum_absolute_ns += error;
  sum_relative += actual > 0 ? error / actual : 0;
}

LearningAgent::LearningAgent(const LearningAgentOptions& options)
    : options_([&] {
        LearningAgentOptions o = options;
        o.mean_window = std::max(1, o.mean_window);
        o.ar_order = std::clamp(o.ar_order, 0, kMaxAutoregressionOrder);
        o.ar_window = std::clamp(o.ar_window, 2 * o.ar_order + 1, kMaxArWindow);
        o.ar_refit_interval = std::max(1, o.ar_refit_interval);
        o.min_operator_records = std::max(1, o.min_operator_records);
        return o;
      }()) {}

LearningAgent::~LearningAgent() = default;

LearningAgent::QueryHistory* LearningAgent::AddQuery(uint64_t plan_signature) {
  queries_.push_back(std::make_unique<QueryHistory>());
  queries_.back()->index = queries_.size() - 1;
  queries_.back()->plan_signature = plan_signature;
  return queries_.back().get();
}

void LearningAgent::RemoveQuery(QueryHistory* query) {
  const double total = static_cast<double>(query->recorded_ns);
  double sum_log2_correction = 0;
  int corrections = 0;
  double stage_sum[RemainingEstimateError::kStages] = {};
  int stage_count[RemainingEstimateError::kStages] = {};
  for (int i = 0; i < query->sample_count && total > 0; ++i) {
    const QueryHistory::EstimateSample& sample = query->samples[i];
    const double actual = total - static_cast<double>(sample.done_ns);
    if (actual <= 0 || sample.estimate_ns <= 0) continue;
    const int stage = std::min(RemainingEstimateError::kStages - 1,
                               static_cast<int>(RemainingEstimateError::kStages * sample.done_ns / total));
    ++remaining_error_.count[stage];
    remaining_error_.sum_relative[stage] += std::fabs(sample.estimate_ns - actual) / actual;
    const double log2_ratio = std::log2(sample.estimate_ns / actual);
    remaining_error_.sum_log2_ratio[stage] += log2_ratio;
    // The correction learns from the raw estimates (before the plan's earlier correction was applied) of the
    // kind it corrects.
    if (!std::isnan(sample.log2_correction)) {
      sum_log2_correction += -log2_ratio + sample.log2_correction;
      ++corrections;
      stage_sum[sample.estimated_stage] += -log2_ratio + sample.log2_correction;
      ++stage_count[sample.estimated_stage];
    }
  }
  if (corrections > 0 && query->plan_signature != 0) {
    if (remembered_log2_correction_.size() >= kMaxRememberedOperators) remembered_log2_correction_.clear();
    PlanCorrection measured;
    measured.whole = sum_log2_correction / corrections;
    for (int stage = 0; stage < RemainingEstimateError::kStages; ++stage) {
      measured.known[stage] = stage_count[stage] > 0;
      measured.by_stage[stage] = measured.known[stage] ? stage_sum[stage] / stage_count[stage] : 0;
    }
    auto [it, inserted] = remembered_log2_correction_.try_emplace(query->plan_signature, measured);
    if (!inserted) {
      PlanCorrection& c = it->second;
      c.whole = (c.whole + measured.whole) / 2;
      for (int stage = 0; stage < RemainingEstimateError::kStages; ++stage) {
        if (!measured.known[stage]) continue;
        c.by_stage[stage] =
            c.known[stage] ? (c.by_stage[stage] + measured.by_stage[stage]) / 2 : measured.by_stage[stage];
        c.known[stage] = true;
      }
    }
  }
  if (query->plan_signature != 0 && query->recorded_ns > 0) {
    if (remembered_total_.size() >= kMaxRememberedOperators) remembered_total_.clear();
    const PlanTotal total_of_this{query->recorded_ns, query->stats.records};
    auto [it, inserted] = remembered_total_.try_emplace(query->plan_signature, total_of_this);
    if (!inserted && total_of_this.ns < it->second.ns) it->second = total_of_this;
  }
  const size_t index = query->index;
  if (index + 1 != queries_.size()) {
    queries_[index] = std::move(queries_.back());
    queries_[index]->index = index;
  }
  queries_.pop_back();
}

bool LearningAgent::Predict(const QueryHistory* query, int next_operator, double* predicted_ns) const {
  return PredictWith(options_.predictor, query, next_operator, predicted_ns);
}

bool LearningAgent::PredictWith(PredictorKind kind, const QueryHistory* query, int next_operator,
                                double* predicted_ns) const {
  if (!query->has_prediction) return false;
  if (options_.scope == PredictionScope::kNextOperator && next_operator >= 0 &&
      static_cast<size_t>(next_operator) < query->operators.size()) {
    const OperatorHistory& op = query->operators[next_operator];
    if (op.active && op.count >= options_.min_operator_records) {
      *predicted_ns = kind == PredictorKind::kWindowMean
                          ? static_cast<double>(op.mean_sum) /
                                static_cast<double>(std::min<int64_t>(op.count, options_.mean_window))
                          : op.ar_prediction;
      return true;
    }
  }
  return PredictCombined(kind, query, predicted_ns);
}

bool LearningAgent::PredictCombined(PredictorKind kind, const QueryHistory* query, double* predicted_ns) const {
  if (!query->has_prediction) return false;
  if (kind == PredictorKind::kWindowMean) {
    *predicted_ns = query->pooled_count > 0
                        ? static_cast<double>(query->pooled_sum) / static_cast<double>(query->pooled_count)
                        : query->cached_mean;
    return true;
  }
  double weighted = 0;
  double weight = 0;
  for (int id : query->active) {
    const OperatorHistory& op = query->operators[id];
    const double n = static_cast<double>(std::min<int64_t>(op.count, options_.ar_window));
    weighted += n * op.ar_prediction;
    weight += n;
  }
  *predicted_ns = weight > 0 ? weighted / weight : query->cached_ar;
  return true;
}

const QueryLearningStats& LearningAgent::stats(const QueryHistory* query) const { return query->stats; }

void LearningAgent::Record(QueryHistory* query, int operator_id, int64_t duration_ns) {
  // Ids come from the plan (SQL input): one outside the table's bound is not recorded (its query predicts from its
  // other operators or the defaults) rather than growing the per-operator table without limit.
  if (operator_id < 0 || operator_id >= kMaxOperatorId) return;
  duration_ns = std::max<int64_t>(duration_ns, 1);
  query->recorded_ns += duration_ns;
  const double actual = static_cast<double>(duration_ns);
  const bool evaluate_ar = EvaluatesAutoregression();

  // Score what the scheduler predicted for this work order: when it was taken, its operator was the next
  // work order's operator.
  double predicted;
  if (PredictWith(PredictorKind::kWindowMean, query, operator_id, &predicted)) {
    query->stats.mean_error.Add(predicted, actual);
    total_mean_error_.Add(predicted, actual);
  }
  if (evaluate_ar && PredictWith(PredictorKind::kAutoregression, query, operator_id, &predicted)) {
    query->stats.autoregression_error.Add(predicted, actual);
    total_autoregression_error_.Add(predicted, actual);
  }

  if (static_cast<size_t>(operator_id) >= query->operators.size()) query->operators.resize(operator_id + 1);
  OperatorHistory& op = query->operators[operator_id];
  if (!op.active) {
    op.active = true;
    op.ring.assign(std::max(options_.mean_window, options_.ar_window), 0);
    query->active.push_back(operator_id);
  }
  const int capacity = static_cast<int>(op.ring.size());
  if (options_.outlier_factor > 0 && op.count >= 3) {
    const double bound = options_.outlier_factor * static_cast<double>(op.mean_sum) /
                         static_cast<double>(std::min<int64_t>(op.count, options_.mean_window));
    if (actual > bound) duration_ns = static_cast<int64_t>(bound) + 1;
  }
  if (op.count >= options_.mean_window) {
    const int64_t leaving = op.ring[(op.head - options_.mean_window + capacity) % capacity];
    op.mean_sum -= leaving;
    query->pooled_sum -= leaving;
  } else {
    ++query->pooled_count;
  }
  op.mean_sum += duration_ns;
  op.total_sum += duration_ns;
  query->pooled_sum += duration_ns;
  op.ring[op.head] = duration_ns;
  op.head = (op.head + 1) % capacity;
  ++op.count;

  if (evaluate_ar) {
    // Oldest first, the last min(count, ar_window) durations.
    double window[kMaxArWindow];
    const int n = static_cast<int>(std::min<int64_t>(op.count, options_.ar_window));
    int64_t low = duration_ns;
    int64_t high = duration_ns;
    for (int i = 0; i < n; ++i) {
      const int64_t value = op.ring[(op.head - n + i + capacity) % capacity];
      window[i] = static_cast<double>(value);
      low = std::min(low, value);
      high = std::max(high, value);
    }
    std::span<const double> series(window, n);
    if (++op.records_since_fit >= options_.ar_refit_interval || op.model.order < options_.ar_order) {
      op.model = FitAutoregression(series, options_.ar_order);
      op.records_since_fit = 0;
    }
    // An AR model may extrapolate; keep it within half a window range of what was seen.
    const double range = static_cast<double>(high - low);
    op.ar_prediction = std::clamp(PredictAutoregression(op.model, series), std::max(1.0, low - range / 2),
                                  static_cast<double>(high) + range / 2);
  }

  query->has_prediction = true;
  ++query->stats.records;
  UpdateCachedPredictions(query);
  const double recorded = static_cast<double>(duration_ns);
  global_mean_ns_ = global_mean_ns_ == 0 ? recorded : global_mean_ns_ + (recorded - global_mean_ns_) / 64;
}

void LearningAgent::RemoveOperator(QueryHistory* query, int operator_id) {
  if (operator_id < 0 || static_cast<size_t>(operator_id) >= query->operators.size()) return;
  OperatorHistory& op = query->operators[operator_id];
  if (!op.active) return;
  if (query->plan_signature != 0 && op.count > 0) {
    if (remembered_.size() >= kMaxRememberedOperators) remembered_.clear();
    const RememberedOperator measured{static_cast<double>(op.total_sum) / static_cast<double>(op.count),
                                      static_cast<double>(op.count)};
    auto [it, inserted] = remembered_.try_emplace({query->plan_signature, operator_id}, measured);
    if (!inserted) {
      it->second.mean_ns = (it->second.mean_ns + measured.mean_ns) / 2;
      it->second.work_orders = (it->second.work_orders + measured.work_orders) / 2;
    }
  }
  UpdateCachedPredictions(query);  // what is kept if this was the last active operator
  query->pooled_sum -= op.mean_sum;
  query->pooled_count -= std::min<int64_t>(op.count, options_.mean_window);
  op = OperatorHistory();
  query->active.erase(std::find(query->active.begin(), query->active.end(), operator_id));
  UpdateCachedPredictions(query);
}

bool LearningAgent::PredictOperatorCost(const QueryHistory* query, int operator_id, double* cost_ns, bool blend) const {
  if (operator_id < 0) return false;
  const RememberedOperator* remembered = nullptr;
  if (query->plan_signature != 0) {
    auto it = remembered_.find({query->plan_signature, operator_id});
    if (it != remembered_.end()) remembered = &it->second;
  }
  if (static_cast<size_t>(operator_id) < query->operators.size()) {
    const OperatorHistory& op = query->operators[operator_id];
    if (op.active && op.count > 0) {
      const int64_t n = std::min<int64_t>(op.count, options_.mean_window);
      const double own = static_cast<double>(op.mean_sum) / static_cast<double>(n);
      // Until the window is full, the remembered cost fills the rest of it: an operator's first work orders run
      // cold (caches, page faults, tables growing) and one or two of them are a poor estimate of the rest.
      *cost_ns =
          blend && remembered != nullptr
              ? (static_cast<double>(n) * own + static_cast<double>(options_.mean_window - n) * remembered->mean_ns) /
                    static_cast<double>(options_.mean_window)
              : own;
      return true;
    }
  }
  if (remembered == nullptr) return false;
  *cost_ns = remembered->mean_ns;
  return true;
}

double LearningAgent::EstimateRemainingNs(const QueryHistory* query, const std::vector<int64_t>& remaining_work_orders,
                                          double fallback_ns, RemainingEstimate kind) const {
  if (kind == RemainingEstimate::kOracle) {
    auto it = remembered_total_.find(query->plan_signature);
    if (query->plan_signature != 0 && it != remembered_total_.end()) {
      query->applied_log2_correction = std::nan("");  // nothing for the plan's correction to learn from
      const double left = 1 - static_cast<double>(query->stats.records) / static_cast<double>(it->second.work_orders);
      return static_cast<double>(it->second.ns) * std::max(1.0 / 64, left);
    }
    kind = RemainingEstimate::kStagedCorrection;
  }
  const bool remembered_counts = kind != RemainingEstimate::kPlanCounts;
  const bool staged = kind == RemainingEstimate::kStagedCorrection;
  double total_ns = 0;
  for (size_t id = 0; id < remaining_work_orders.size(); ++id) {
    if (remaining_work_orders[id] <= 0) continue;
    const int operator_id = static_cast<int>(id);
    double work_orders = static_cast<double>(remaining_work_orders[id]);
    if (remembered_counts && query->plan_signature != 0) {
      auto it = remembered_.find({query->plan_signature, operator_id});
      if (it != remembered_.end()) {
        const bool started = id < query->operators.size() && query->operators[id].active;
        const double done = started ? static_cast<double>(query->operators[id].count) : 0;
        work_orders = std::max(1.0, it->second.work_orders - done);
      }
    }
    double cost_ns = 0;
    if (!PredictOperatorCost(query, operator_id, &cost_ns, staged)) cost_ns = fallback_ns;
    total_ns += work_orders * cost_ns;
  }
  const double done = static_cast<double>(query->recorded_ns);
  query->applied_stage = done + total_ns > 0
                             ? std::min(RemainingEstimateError::kStages - 1,
                                        static_cast<int>(RemainingEstimateError::kStages * done / (done + total_ns)))
                             : 0;
  if (!remembered_counts) {
    query->applied_log2_correction = std::nan("");
    return total_ns;
  }
  query->applied_log2_correction = Log2Correction(query, staged ? query->applied_stage : -1);
  return total_ns * std::exp2(query->applied_log2_correction);
}

double LearningAgent::Log2Correction(const QueryHistory* query, int stage) const {
  if (query->plan_signature == 0) return 0;
  auto it = remembered_log2_correction_.find(query->plan_signature);
  if (it == remembered_log2_correction_.end()) return 0;
  const PlanCorrection& c = it->second;
  return stage >= 0 && c.known[stage] ? c.by_stage[stage] : c.whole;
}

void LearningAgent::NoteRemainingEstimate(QueryHistory* query, double estimate_ns) {
  if (query->stats.records < query->next_sample_records || query->sample_count == QueryHistory::kMaxEstimateSamples) {
    return;
  }
  query->samples[query->sample_count++] = {query->recorded_ns, estimate_ns, query->applied_log2_correction,
                                           query->applied_stage};
  query->next_sample_records = std::max<int64_t>(1, 2 * query->stats.records);
}

void LearningAgent::UpdateCachedPredictions(QueryHistory* query) const {
  if (!query->has_prediction || query->pooled_count == 0) return;  // keep the last prediction between operators
  PredictCombined(PredictorKind::kWindowMean, query, &query->cached_mean);
  if (EvaluatesAutoregression()) PredictCombined(PredictorKind::kAutoregression, query, &query->cached_ar);
}

}  // namespace tessera
