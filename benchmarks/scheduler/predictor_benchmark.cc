// Which LearningAgent predictor forecasts the next work-order time better: the window mean (Quickstep's
// Learner) or autoregression (dissertation appendix A.5)? Mean absolute error and mean relative error of
// each, on synthetic duration series with known shapes, and on durations measured from real (busy-spin) work
// orders run by the Foreman. Both predictors see the same records (evaluate_both_predictors).
//
// Usage: predictor_benchmark [--length=N]   (gflags; --help lists the flags)

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/command_line_flags.h"
#include "common/fast_random.h"
#include "scheduler/foreman.h"
#include "scheduler/learning_agent.h"
#include "scheduler/synthetic_query.h"

DEFINE_int32(length, 20000, "work orders in each synthetic duration series");

namespace tessera {
namespace {

int g_length = 20000;

struct Sample {
  int operator_id;
  int64_t duration_ns;
};

double Gaussian(FastRandom& random) {
  const double u1 = std::max(random.NextDouble(), 1e-12);
  const double u2 = random.NextDouble();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

std::vector<Sample> MakeSeries(const std::string& shape, FastRandom& random) {
  std::vector<Sample> series;
  double ar_state = 0;
  for (int i = 0; i < g_length; ++i) {
    double base = 100'000;
    int op = 0;
    if (shape == "constant + 5% noise") {
      base *= 1 + 0.05 * Gaussian(random);
    } else if (shape == "phases (x3, x0.5 every 500)") {
      const double levels[] = {100'000, 300'000, 50'000, 150'000};
      base = levels[(i / 500) % 4] * (1 + 0.05 * Gaussian(random));
      op = (i / 500) % 4;
    } else if (shape == "linear trend (+0.05%/work order, resets)") {
      base *= 1 + 0.0005 * (i % 2000);
    } else if (shape == "AR(1) noise, phi 0.9, 10%") {
      ar_state = 0.9 * ar_state + 0.1 * std::sqrt(1 - 0.81) * Gaussian(random);
      base *= 1 + ar_state;
    } else if (shape == "1% preemption spikes (x30)") {
      base *= (random.NextDouble() < 0.01 ? 30 : 1) * (1 + 0.05 * Gaussian(random));
    } else if (shape == "two pipelined operators (1:4)") {
      op = i % 2;
      base *= (op == 0 ? 1 : 4) * (1 + 0.05 * Gaussian(random));
    }
    series.push_back(Sample{op, static_cast<int64_t>(std::max(1000.0, base))});
  }
  return series;
}

void PrintRow(const std::string& name, const PredictionError& mean, const PredictionError& ar) {
  const double m = mean.MeanAbsoluteErrorNs();
  const double a = ar.MeanAbsoluteErrorNs();
  std::printf("%-44s %12.0f %12.0f %8.1f%% %8.1f%%   %s\n", name.c_str(), m, a, 100 * mean.MeanRelativeError(),
              100 * ar.MeanRelativeError(), a < 0.97 * m ? "autoregression" : (m < 0.97 * a ? "window mean" : "tie"));
}

void Synthetic(const std::string& shape) {
  FastRandom random(99);
  std::vector<Sample> series = MakeSeries(shape, random);
  LearningAgentOptions options;
  options.evaluate_both_predictors = true;
  LearningAgent agent(options);
  LearningAgent::QueryHistory* query = agent.AddQuery();
  int active_phase_operator = -1;
  for (const Sample& sample : series) {
    // Phases: the previous operator finishes when the next starts (as the Foreman reports it).
    if (shape.rfind("phases", 0) == 0 && sample.operator_id != active_phase_operator) {
      if (active_phase_operator >= 0) agent.RemoveOperator(query, active_phase_operator);
      active_phase_operator = sample.operator_id;
    }
    agent.Record(query, sample.operator_id, sample.duration_ns);
  }
  PrintRow(shape, agent.stats(query).mean_error, agent.stats(query).autoregression_error);
}

void Measured(int64_t spin_ns, int queries) {
  ForemanOptions options;
  options.pool.num_workers = 2;
  options.learning.evaluate_both_predictors = true;
  absl::StatusOr<std::unique_ptr<Foreman>> foreman = Foreman::Create(options);
  if (!foreman.ok()) return;
  std::vector<QueryHandle> handles;
  for (int q = 0; q < queries; ++q) {
    SyntheticQueryOptions spec;
    spec.query_id = q + 1;
    spec.track_executions = false;
    // A scan-like phase, then a blocking phase with 3x longer work orders, then a short serial tail.
    spec.operators = {{"scan", 2000, spin_ns, false, false, 0, 0},
                      {"probe", 1000, 3 * spin_ns, true, false, 0, 0},
                      {"merge", 20, spin_ns / 2, true, true, 0, 0}};
    handles.push_back(*(*foreman)->Submit(std::make_shared<SyntheticQuery>(spec)));
  }
  for (QueryHandle& h : handles) h.Wait();
  absl::StatusOr<ForemanStats> stats = (*foreman)->GetStats();
  char name[96];
  std::snprintf(name, sizeof(name), "measured: %d queries, spin %lld us, 3 phases", queries,
                static_cast<long long>(spin_ns / 1000));
  PrintRow(name, stats->mean_prediction_error, stats->autoregression_prediction_error);
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  using namespace tessera;
  bench::ParseCommandLine(
      &argc, &argv,
      "prediction errors of the window mean and AR(p) predictors on synthetic and measured work-order times.\n"
      "usage: predictor_benchmark [--length=20000]",
      __FILE__);
  if (argc > 1 || FLAGS_length < 100) {
    std::fprintf(stderr, "predictor_benchmark: bad arguments (--length >= 100; see --help)\n");
    return 2;
  }
  g_length = FLAGS_length;
  LearningAgentOptions defaults;
  std::printf("window mean: last %d per operator; autoregression: AR(%d) over the last %d, refit every %d\n\n",
              defaults.mean_window, defaults.ar_order, defaults.ar_window, defaults.ar_refit_interval);
  std::printf("%-44s %12s %12s %9s %9s   %s\n", "series", "MAE mean ns", "MAE AR ns", "rel mean", "rel AR", "better");
  for (const char* shape :
       {"constant + 5% noise", "phases (x3, x0.5 every 500)", "linear trend (+0.05%/work order, resets)",
        "AR(1) noise, phi 0.9, 10%", "1% preemption spikes (x30)", "two pipelined operators (1:4)"}) {
    Synthetic(shape);
  }
  Measured(20'000, 1);
  Measured(20'000, 4);
  return 0;
}
