// CPU shares that each policy gives concurrent synthetic queries, measured from the work-order log
// (dissertation §3.8.3-3.8.5). The static 1/N baseline runs in the same invocation as the learned fair
// policy, reproducing the §3.8.5 comparison: a query whose work orders are 4x longer takes ~4x the CPU under
// static probabilities and an equal share under fair. Each scenario leaves its log for plot_cpu_share.py.
//
// Usage: policy_share_benchmark [--log-dir=/tmp] [--workers=2] [--scale=1.0]   (gflags; --help lists the flags)

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/command_line_flags.h"
#include "scheduler/foreman.h"
#include "scheduler/synthetic_query.h"

DEFINE_int32(workers, 2, "worker threads of the Foreman");
DEFINE_double(scale, 1.0, "multiplies every query's work-order count");
// --log-dir is glog's flag (glog defines log_dir, and gflags allows a name once); here: where the work-order logs
// go, /tmp when it is empty.
DECLARE_string(log_dir);

namespace tessera {
namespace {

std::string g_log_dir = "/tmp";
int g_workers = 2;
double g_scale = 1.0;

struct Interval {
  int64_t start;
  int64_t end;
};

// Busy time per query inside the window where all queries of the log were active.
std::map<int64_t, double> SharesWhileAllActive(const std::string& path) {
  std::map<int64_t, std::vector<Interval>> by_query;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    long long query, op, worker, start, end, rows;
    if (std::sscanf(line.c_str(),
                    "{\"query\":%lld,\"operator\":%lld,\"worker\":%lld,\"start_ns\":%lld,\"end_ns\":%lld,"
                    "\"rows\":%lld",
                    &query, &op, &worker, &start, &end, &rows) == 6) {
      by_query[query].push_back({start, end});
    }
  }
  int64_t window_start = 0;
  int64_t window_end = INT64_MAX;
  for (auto& [query, intervals] : by_query) {
    int64_t first = INT64_MAX, last = 0;
    for (const Interval& i : intervals) first = std::min(first, i.start), last = std::max(last, i.end);
    window_start = std::max(window_start, first);
    window_end = std::min(window_end, last);
  }
  std::map<int64_t, double> busy;
  double total = 0;
  for (auto& [query, intervals] : by_query) {
    busy[query] = 0;
    for (const Interval& i : intervals) {
      const int64_t overlap = std::min(i.end, window_end) - std::max(i.start, window_start);
      if (overlap > 0) busy[query] += overlap, total += overlap;
    }
  }
  for (auto& [query, value] : busy) value /= total;
  return busy;
}

struct QuerySpec {
  int64_t work_orders;
  int64_t spin_ns;
  int priority;
  int64_t delay_ms;  // submitted this long after the first
};

std::string RunScenario(const std::string& name, const std::string& policy, const std::vector<QuerySpec>& specs) {
  ForemanOptions options;
  options.pool.num_workers = g_workers;
  options.policy = *ParsePolicy(policy);
  options.work_order_log_path = g_log_dir + "/tessera_cpu_share_" + name + ".jsonl";
  absl::StatusOr<std::unique_ptr<Foreman>> foreman = Foreman::Create(options);
  if (!foreman.ok()) {
    std::fprintf(stderr, "%s\n", std::string(foreman.status().message()).c_str());
    std::exit(1);
  }
  std::vector<QueryHandle> handles;
  int64_t waited_ms = 0;
  for (size_t q = 0; q < specs.size(); ++q) {
    if (specs[q].delay_ms > waited_ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds(specs[q].delay_ms - waited_ms));
      waited_ms = specs[q].delay_ms;
    }
    SyntheticQueryOptions spec =
        SimpleSyntheticQuery(static_cast<QueryId>(q + 1), static_cast<int64_t>(specs[q].work_orders * g_scale),
                             specs[q].spin_ns, specs[q].priority);
    spec.track_executions = false;
    handles.push_back(*(*foreman)->Submit(std::make_shared<SyntheticQuery>(spec)));
  }
  for (QueryHandle& h : handles) h.Wait();
  (*foreman)->Stop();  // flushes the log
  return options.work_order_log_path;
}

void Report(const std::string& name, const std::string& policy, const std::vector<QuerySpec>& specs,
            const std::string& expected) {
  const std::string log = RunScenario(name, policy, specs);
  std::map<int64_t, double> shares = SharesWhileAllActive(log);
  std::string measured;
  for (auto& [query, share] : shares) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%sq%lld %.2f", measured.empty() ? "" : ", ", static_cast<long long>(query),
                  share);
    measured += buffer;
  }
  std::printf("%-10s %-8s %-40s %-26s %s\n", name.c_str(), policy.c_str(), measured.c_str(), expected.c_str(),
              log.c_str());
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  using namespace tessera;
  bench::ParseCommandLine(
      &argc, &argv,
      "CPU shares each policy gives concurrent synthetic queries, static 1/N baseline in the same run.\n"
      "usage: policy_share_benchmark [--log-dir=/tmp] [--workers=2] [--scale=1.0]\n"
      "--log-dir DIR (glog's flag): where the work-order logs go (default: /tmp).",
      __FILE__);
  if (argc > 1 || FLAGS_workers < 1 || !(FLAGS_scale > 0)) {
    std::fprintf(stderr, "policy_share_benchmark: bad arguments (see --help)\n");
    return 2;
  }
  if (!FLAGS_log_dir.empty()) g_log_dir = FLAGS_log_dir;
  g_workers = FLAGS_workers;
  g_scale = FLAGS_scale;
  std::printf("CPU share of each query while all were active (from the work-order log), %d workers\n\n", g_workers);
  std::printf("%-10s %-8s %-40s %-26s %s\n", "scenario", "policy", "measured CPU share", "expected", "log");
  // q1: 50 us work orders; q2: 200 us work orders (the Q1.1 / Q4.1 situation of §3.8.5).
  const std::vector<QuerySpec> short_long = {{8000, 50'000, 1, 0}, {2000, 200'000, 1, 0}};
  Report("static", "static", short_long, "q1 0.20, q2 0.80 (by count)");
  Report("fair", "fair", short_long, "q1 0.50, q2 0.50");
  Report("lottery", "lottery", {{8000, 50'000, 1, 0}, {6000, 200'000, 3, 0}}, "q1 0.25, q2 0.75 (tickets)");
  Report("pp", "pp", {{3000, 100'000, 1, 0}, {3000, 100'000, 2, 0}, {3000, 100'000, 4, 0}},
         "q1 0.14, q2 0.29, q3 0.57");
  Report("pp-exp", "pp-exp", {{3000, 100'000, 1, 0}, {3000, 100'000, 2, 0}, {3000, 100'000, 3, 0}},
         "q1 0.14, q2 0.29, q3 0.57");
  Report("hpf", "hpf", {{6000, 100'000, 1, 0}, {6000, 100'000, 1, 0}, {1500, 100'000, 2, 150}},
         "q3 ~1.00 while it runs");
  std::printf("\nplot: python3 benchmarks/scheduler/plot_cpu_share.py LOG -o OUT.svg\n");
  return 0;
}
