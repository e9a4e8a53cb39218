// The scheduling-policy experiments of the Quickstep dissertation (§3.8.3-3.8.6) on real SSB queries: client
// threads, each with its own Session, submit queries to the database's one Foreman while its work-order log
// records every work order; the CPU share of every client stream is computed from that log afterwards.
//
//   1. fair, the 13 SSB queries concurrently (baseline: static 1/N): spread of the CPU shares, and how the
//      CPU is redistributed as streams finish.
//   2. Q1.1 and Q4.1 streams under fair (learning agent) and under static 1/N: CPU ratio and throughput.
//   3. hpf: priority-1 streams, then a priority-10 query mid-run (baseline: fair).
//   4. pp: streams at priorities 1, 2, 4 (baseline: fair).
//   6. (run only when named) the load controller: priority-1 streams under a memory threshold that fits them,
//      then a priority-5 query that does not fit beside them suspends the largest; with admission control off
//      as the baseline: suspensions, the pool's peak use against the threshold, CPU per stream, answers.
//   5. (run only when named in --experiments) seeded Poisson streams of the 13 SSB queries, one per --load x
//      --seed, at that load of the measured capacity, one client per arrival, each replayed under every policy
//      of --policies (fcfs, srpt, ifsrpt, fair, ...; the order rotating), --rounds times: latency per policy
//      (mean, median, p95, p99, short Q1.x vs long queries) against the same trace's fcfs run, with medians and
//      spread per load, the remaining-time estimates' error, and an ideal one-server model of each trace.
//
// CPU share of a stream in a window = Σ of the durations of its work orders inside the window / total busy
// time of all streams in the window. A stream is active from its first Execute call to its last return; the
// summary figures use only windows in which every stream of the run is active. Work orders are attributed to
// streams by time (the query's first and last work order must lie inside one of the stream's Execute calls)
// and, where that is ambiguous, by the query's signature (work orders and rows per operator) learned from a
// sequential warm-up.
//
// Next to the shares it prints what explains a deviation: the bias of the LearningAgent's predictions (the
// log replayed through a LearningAgent), how long each stream had no work order running or no query in
// flight, the longest work orders, the operator phases of a query, and the spread an ideal lottery (perfect
// predictions, random draws) would show with the same work orders.
//
// Files in --log-dir: ssb_expN_<name>.jsonl (the Foreman's work-order log: warm-up and every run),
// ssb_expN_<policy>.streams.jsonl (one run, the stream number as the query) and the matching .svg
// from plot_cpu_share.py (one line per stream).
//
// This is a benchmark: it prints figures next to the goals and baselines and never asserts timings.
//
// Usage: ssb_policy_experiments --data DIR [--sf 1] [--workers 2] [--log-dir DIR] [--window-ms 20]
//          [--plot-window-ms 100] [--scale 1] [--experiments 1,2,3,4] [--memory-mb 4096] [--keep-tbl]
//          [--seed 5,6,7] [--arrivals 300] [--load 0.7,0.9] [--rounds 2] [--load-basis throughput|wall|cpu]
//          [--policies fcfs,srpt,ifsrpt,fair]
//          [--prediction next-operator|pooled] [--exp2-queries q1.1,q4.1] [--time-slice-us 0]
//          [--scan-sharing off|full|batch]
//          (experiments 5 and 6 run only when named: --experiments 5,6)
//        (gflags: --help lists every flag with its default)

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "benchmarks/command_line_flags.h"
#include "benchmarks/ssb_generator/ssb_generator.h"
#include "common/clock.h"
#include "engine/session.h"
#include "engine/statement_handlers.h"
#include "scheduler/foreman.h"
#include "scheduler/learning_agent.h"
#include "scheduler/policy.h"

#ifndef TESSERA_SSB_DIR
#define TESSERA_SSB_DIR "benchmarks/ssb"
#endif
#ifndef TESSERA_PLOT_SCRIPT
#define TESSERA_PLOT_SCRIPT "benchmarks/scheduler/plot_cpu_share.py"
#endif

// The flags (gflags: --help lists them; --flag value and --flag=value both work, and dashes in a name, as in
// --time-slice-us, stand for its underscores). Lists are comma-separated strings, split after parsing.
DEFINE_string(data, "", "data directory: the generated .tbl files and the loaded database are cached here; required");
DEFINE_double(sf, 1, "SSB scale factor");
DEFINE_int32(workers, 2, "worker threads of the Foreman");
DEFINE_double(window_ms, 20, "window of the CPU-share measurement, ms");
DEFINE_double(plot_window_ms, 100, "window of the CPU-share plots, ms");
DEFINE_double(scale, 1, "stretches every experiment's duration");
DEFINE_string(experiments, "1,2,3,4", "comma-separated experiments to run (5 and 6 run only when named)");
DEFINE_int64(memory_mb, 4096, "buffer pool size, MiB");
DEFINE_bool(keep_tbl, false, "keep the generated .tbl files after loading");
DEFINE_string(ssb_dir, TESSERA_SSB_DIR, "folder with the SSB schema.sql and queries/");
DEFINE_string(plot_script, TESSERA_PLOT_SCRIPT, "plot_cpu_share.py, run on each stream log");
DEFINE_string(seed, "5", "experiment 5: seeds of the Poisson arrival traces, comma-separated");
DEFINE_int32(arrivals, 300, "experiment 5: queries in the Poisson stream");
DEFINE_string(load, "0.9", "experiment 5: offered loads, comma-separated");
DEFINE_int32(rounds, 1, "experiment 5: replays of every (load, seed) trace under every policy");
DEFINE_string(load_basis, "throughput", "experiment 5: what the load is relative to: throughput, wall or cpu");
DEFINE_string(policies, "fcfs,srpt,ifsrpt,fair",
              "experiment 5: comma-separated policies; must include fcfs (the baseline)");
DEFINE_string(prediction, "next-operator", "the LearningAgent's prediction scope: next-operator or pooled");
DEFINE_string(exp2_queries, "q1.1,q4.1", "experiment 2: two different SSB queries (short and long work orders)");
DEFINE_int64(time_slice_us, tessera::DefaultDatabaseScheduler().dispatch_run_ns / 1000,
             "the Foreman's time slice, us (0: off; default: the database's)");
DEFINE_int64(worker_queue_us, tessera::DefaultDatabaseScheduler().target_pending_ns / 1000,
             "predicted work kept queued per worker, us (default: the database's)");
DEFINE_double(srpt_aging, tessera::PolicyOptions{}.srpt_aging,
              "SRPT / IFSRPT: remaining work (ns) a query's rank gains per ns waited (0: pure size order)");
DEFINE_string(scan_sharing, "full", "shared scans: off, full or batch (default: the database's)");
DEFINE_int32(min_pending, tessera::ForemanOptions{}.min_pending_per_worker,
             "work orders a worker may hold whatever their predicted time (ForemanOptions::min_pending_per_worker)");
DEFINE_int32(max_admitted, 0,
             "experiment 5: the cap on admitted queries (LoadControlOptions::max_admitted): 0 none, -1 the "
             "database's default (two per worker), or a count");
// --log-dir is glog's flag (glog defines log_dir, and gflags allows a name once): here it says where the
// work-order logs and plots go (default: DATA/scheduler-logs); glog's own log files, if any, go there too.
DECLARE_string(log_dir);

namespace tessera {
namespace {

namespace fs = std::filesystem;

struct Flags {
  std::string data_dir;
  double sf = 1;
  int workers = 2;
  std::string log_dir;
  double window_ms = 20;
  double plot_window_ms = 100;
  double scale = 1;  // stretches every experiment's duration
  std::set<int> experiments = {1, 2, 3, 4};
  size_t memory_mb = 4096;
  bool keep_tbl = false;
  std::string ssb_dir = TESSERA_SSB_DIR;
  std::string plot_script = TESSERA_PLOT_SCRIPT;
  // Experiment 5: the Poisson stream.
  std::vector<uint64_t> seeds = {5};
  int arrivals = 300;
  std::vector<double> loads = {0.9};
  int rounds = 1;
  std::string load_basis = "throughput";                                           // or "wall", "cpu"
  std::vector<std::string> arrival_policies = {"fcfs", "srpt", "ifsrpt", "fair"};  // in this order
  PredictionScope prediction = PredictionScope::kNextOperator;               // the LearningAgent's (learning_agent.h)
  std::vector<std::string> exp2_queries = {"q1.1", "q4.1"};                  // short, long work orders
  int64_t dispatch_run_ns = DefaultDatabaseScheduler().dispatch_run_ns;      // the Foreman's time slice
  int64_t target_pending_ns = DefaultDatabaseScheduler().target_pending_ns;  // queued per worker
  ScanSharing scan_sharing = ScanSharing::kFull;
};
Flags g_flags;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "ssb_policy_experiments: %s\n", message.c_str());
  std::exit(1);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// ---------------------------------------------------------------------------------------------------------------
// Data: generate and load once, cached in the data directory.

std::string SfName() {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", g_flags.sf);
  return buffer;
}
std::string DatabaseDir() { return g_flags.data_dir + "/tessera-ssb-sf" + SfName(); }
std::string TblDir() { return g_flags.data_dir + "/tbl-ssb-sf" + SfName(); }
std::string LoadedMarker() { return DatabaseDir() + "/SSB_LOADED"; }

DatabaseOptions MakeDatabaseOptions(const PolicyOptions& policy, const std::string& log_path) {
  DatabaseOptions options;
  options.data_directory = DatabaseDir();
  options.memory_budget_bytes = g_flags.memory_mb << 20;
  options.worker_threads = g_flags.workers;
  options.sync_writes = false;  // a cache of generated data
  options.scheduler.policy = policy;
  options.scheduler.work_order_log_path = log_path;
  // The policy experiments measure the policies alone; experiment 6 switches admission control on at run time.
  options.admission_threshold = 0;
  // Every stream's query runs at once (the policies share the cores among all), except where experiment 5 is asked
  // to run with a cap (--max-admitted).
  options.max_active_queries = g_flags.experiments.count(5) ? FLAGS_max_admitted : 0;
  options.scheduler.learning.scope = g_flags.prediction;
  options.scheduler.dispatch_run_ns = g_flags.dispatch_run_ns;
  options.scheduler.target_pending_ns = g_flags.target_pending_ns;
  options.scheduler.min_pending_per_worker = FLAGS_min_pending;
  options.scan_sharing = g_flags.scan_sharing;
  return options;
}

std::unique_ptr<Database> OpenDatabase(const PolicyOptions& policy, const std::string& log_path) {
  absl::StatusOr<std::unique_ptr<Database>> database = Database::Open(MakeDatabaseOptions(policy, log_path));
  if (!database.ok()) Die("opening " + DatabaseDir() + ": " + std::string(database.status().message()));
  return std::move(*database);
}

QueryResult ExecuteOrDie(Session& session, const std::string& sql) {
  absl::StatusOr<QueryResult> result = session.Execute(sql);
  if (!result.ok()) Die(sql.substr(0, 80) + ": " + std::string(result.status().message()));
  return std::move(*result);
}

void PrepareData() {
  if (fs::exists(LoadedMarker())) {
    std::printf("data: SSB SF%s already loaded in %s\n", SfName().c_str(), DatabaseDir().c_str());
    return;
  }
  const int64_t begin = MonotonicNanos();
  const std::vector<std::string> tables = {"part", "supplier", "customer", "date", "lineorder"};
  bool have_tbl = true;
  for (const std::string& table : tables) have_tbl = have_tbl && fs::exists(TblDir() + "/" + table + ".tbl");
  if (!have_tbl || !fs::exists(TblDir() + "/COMPLETE")) {
    std::printf("data: generating SSB SF%s into %s ...\n", SfName().c_str(), TblDir().c_str());
    std::fflush(stdout);
    ssb::GeneratorOptions generator;
    generator.scale_factor = g_flags.sf;
    generator.output_dir = TblDir();
    generator.threads = g_flags.workers;
    std::string error;
    if (!ssb::GenerateSsb(generator, nullptr, &error)) Die("ssb generation: " + error);
    std::ofstream(TblDir() + "/COMPLETE") << "ok\n";
  }
  const int64_t generated = MonotonicNanos();
  std::error_code ignored;
  fs::remove_all(DatabaseDir(), ignored);  // a partial load from an interrupted run
  fs::create_directories(DatabaseDir());
  {
    std::unique_ptr<Database> database = OpenDatabase(PolicyOptions{}, "");
    Session session(database.get());
    ExecuteOrDie(session, ReadFile(g_flags.ssb_dir + "/schema.sql"));
    for (const std::string& table : tables) {
      QueryResult result = ExecuteOrDie(session, "COPY " + table + " FROM '" + fs::absolute(TblDir()).string() + "/" +
                                                     table + ".tbl' (DELIMITER '|')");
      std::printf("data:   %-10s %s\n", table.c_str(), result.status_message.c_str());
    }
  }
  std::ofstream(LoadedMarker()) << "sf " << SfName() << "\n";
  std::printf("data: generated in %.1f s, loaded in %.1f s\n", Ms(generated - begin) / 1e3,
              Ms(MonotonicNanos() - generated) / 1e3);
  if (!g_flags.keep_tbl) fs::remove_all(TblDir(), ignored);
}

// ---------------------------------------------------------------------------------------------------------------
// Client streams.

struct Execution {
  int64_t call_ns;
  int64_t return_ns;
};

struct Stream {
  std::string label;  // "q1.1"
  int priority = 1;
  int iterations = 0;          // > 0: exactly this many; 0: until the run is stopped
  int64_t start_after_ms = 0;  // from the start of the run
  // When set, every execution's rows are compared with these.
  const std::vector<std::vector<Value>>* expected_rows = nullptr;
  // Filled by the run.
  std::vector<Execution> executions;
  int wrong_answers = 0;
  std::string error;

  int64_t first_call() const { return executions.empty() ? 0 : executions.front().call_ns; }
  int64_t last_return() const { return executions.empty() ? 0 : executions.back().return_ns; }
};

std::string QuerySql(const std::string& label) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(label);
  if (it == cache.end()) it = cache.emplace(label, ReadFile(g_flags.ssb_dir + "/queries/" + label + ".sql")).first;
  return it->second;
}

std::string Display(const std::string& label) {
  std::string out = label;
  if (!out.empty()) out[0] = 'Q';
  return out;
}

struct RunWindow {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

// Runs every stream in its own thread with its own Session. Streams with iterations == 0 loop until
// `stop_after_ms` from the start, or (when `stop_after_stream` >= 0) until `linger_ms` after that stream's
// last query returned.
RunWindow RunStreams(Database* database, std::vector<Stream>& streams, int64_t stop_after_ms,
                     int stop_after_stream = -1, int64_t linger_ms = 0) {
  std::atomic<bool> stop{false};
  std::atomic<int> done_marker{0};
  std::latch ready(static_cast<std::ptrdiff_t>(streams.size()) + 1);
  std::vector<std::thread> threads;
  RunWindow window;
  const std::string priority_prefix = "SET priority = ";
  std::vector<std::atomic<bool>> finished(streams.size());
  for (size_t s = 0; s < streams.size(); ++s) {
    threads.emplace_back([&, s] {
      Stream& stream = streams[s];
      Session session(database);
      const std::string sql = QuerySql(stream.label);
      ExecuteOrDie(session, priority_prefix + std::to_string(stream.priority));
      ready.arrive_and_wait();
      if (stream.start_after_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(stream.start_after_ms));
      for (int i = 0; stream.iterations == 0 ? !stop.load() : i < stream.iterations; ++i) {
        const int64_t call = MonotonicNanos();
        absl::StatusOr<QueryResult> result = session.Execute(sql);
        const int64_t returned = MonotonicNanos();
        if (!result.ok()) {
          stream.error = std::string(result.status().message());
          break;
        }
        stream.executions.push_back({call, returned});
        if (stream.expected_rows != nullptr && result->rows != *stream.expected_rows) ++stream.wrong_answers;
      }
      finished[s].store(true);
      done_marker.fetch_add(1);
    });
  }
  window.begin_ns = MonotonicNanos();  // before the streams can start
  ready.arrive_and_wait();
  if (stop_after_stream >= 0) {
    while (!finished[stop_after_stream].load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(linger_ms));
  } else {
    const int64_t deadline = window.begin_ns + stop_after_ms * 1'000'000;
    while (MonotonicNanos() < deadline && done_marker.load() < static_cast<int>(streams.size())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  stop.store(true);
  for (std::thread& thread : threads) thread.join();
  window.end_ns = MonotonicNanos();
  for (const Stream& stream : streams) {
    if (!stream.error.empty()) std::printf("  !! stream %s failed: %s\n", stream.label.c_str(), stream.error.c_str());
  }
  return window;
}

// ---------------------------------------------------------------------------------------------------------------
// The work-order log and the attribution of its queries to streams.

struct LogRecord {
  int64_t query;
  int op;
  int worker;
  int64_t start_ns;
  int64_t end_ns;
  int64_t rows;
};

std::vector<LogRecord> ReadLog(const std::string& path) {
  std::vector<LogRecord> records;
  std::ifstream in(path);
  if (!in) Die("cannot read the work-order log " + path);
  for (std::string line; std::getline(in, line);) {
    long long query, op, worker, start, end, rows;
    if (std::sscanf(line.c_str(),
                    "{\"query\":%lld,\"operator\":%lld,\"worker\":%lld,\"start_ns\":%lld,\"end_ns\":%lld,"
                    "\"rows\":%lld",
                    &query, &op, &worker, &start, &end, &rows) == 6) {
      records.push_back({query, static_cast<int>(op), static_cast<int>(worker), start, end, rows});
    }
  }
  return records;
}

// Work orders and rows per operator: the same for every execution of one SSB query (up to rows that depend
// on which worker ran what), different between SSB queries.
using Signature = std::map<int, std::pair<int64_t, int64_t>>;

double SignatureDistance(const Signature& a, const Signature& b) {
  if (a.size() != b.size()) return 1e9;
  double distance = 0;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return 1e9;
    distance += std::abs(static_cast<double>(ia->second.first - ib->second.first)) /
                std::max<double>(1, std::max(ia->second.first, ib->second.first));
    distance += std::abs(static_cast<double>(ia->second.second - ib->second.second)) /
                std::max<double>(1, std::max(ia->second.second, ib->second.second));
  }
  return distance;
}

struct QuerySpan {
  int64_t first_start = INT64_MAX;
  int64_t last_end = 0;
  int64_t work_orders = 0;
  int64_t busy_ns = 0;
  int64_t max_work_order_ns = 0;
  Signature signature;
};

std::map<int64_t, QuerySpan> SpansOf(const std::vector<LogRecord>& records) {
  std::map<int64_t, QuerySpan> spans;
  for (const LogRecord& r : records) {
    QuerySpan& span = spans[r.query];
    span.first_start = std::min(span.first_start, r.start_ns);
    span.last_end = std::max(span.last_end, r.end_ns);
    ++span.work_orders;
    span.busy_ns += r.end_ns - r.start_ns;
    span.max_work_order_ns = std::max(span.max_work_order_ns, r.end_ns - r.start_ns);
    auto& [count, rows] = span.signature[r.op];
    ++count;
    rows += r.rows;
  }
  return spans;
}

// What the sequential warm-up taught about each SSB query.
struct Calibration {
  double alone_ms = 0;  // wall time of the last warm-up execution
  int64_t work_orders = 0;
  double busy_ms = 0;  // CPU time (Σ work-order durations) of the last warm-up execution
  double max_work_order_ms = 0;
  int operators = 0;
  std::vector<Signature> signatures;
};
using Calibrations = std::map<std::string, Calibration>;

struct WarmupExecution {
  std::string label;
  Execution execution;
};

std::vector<WarmupExecution> WarmUp(Database* database, const std::vector<std::string>& labels, int rounds) {
  std::vector<WarmupExecution> out;
  Session session(database);
  for (int round = 0; round < rounds; ++round) {
    for (const std::string& label : labels) {
      const int64_t call = MonotonicNanos();
      ExecuteOrDie(session, QuerySql(label));
      out.push_back({label, {call, MonotonicNanos()}});
    }
  }
  return out;
}

Calibrations Calibrate(const std::vector<LogRecord>& records, const std::vector<WarmupExecution>& warmups) {
  Calibrations calibrations;
  std::map<int64_t, QuerySpan> spans = SpansOf(records);
  for (const WarmupExecution& warmup : warmups) {
    Calibration& c = calibrations[warmup.label];
    for (const auto& [query, span] : spans) {
      if (span.first_start >= warmup.execution.call_ns && span.last_end <= warmup.execution.return_ns) {
        c.alone_ms = Ms(warmup.execution.return_ns - warmup.execution.call_ns);
        c.work_orders = span.work_orders;
        c.busy_ms = Ms(span.busy_ns);
        c.max_work_order_ms = Ms(span.max_work_order_ns);
        c.operators = static_cast<int>(span.signature.size());
        c.signatures.push_back(span.signature);
      }
    }
  }
  return calibrations;
}

void PrintCalibration(const Calibrations& calibrations, const std::vector<std::string>& labels) {
  std::printf("  warm-up (alone, %d workers): %-6s %9s %9s %7s %10s %10s %5s\n", g_flags.workers, "query", "wall ms",
              "CPU ms", "WOs", "mean WO ms", "max WO ms", "ops");
  for (const std::string& label : labels) {
    const Calibration& c = calibrations.at(label);
    std::printf("  %29s %-6s %9.1f %9.1f %7lld %10.3f %10.2f %5d\n", "", Display(label).c_str(), c.alone_ms, c.busy_ms,
                static_cast<long long>(c.work_orders),
                c.work_orders ? c.busy_ms / static_cast<double>(c.work_orders) : 0.0, c.max_work_order_ms, c.operators);
  }
}

// A work order of the log attributed to a client stream.
struct StreamWorkOrder {
  int stream;
  LogRecord record;
};

struct Interval {
  int64_t begin_ns;
  int64_t end_ns;
};

struct Attribution {
  std::vector<StreamWorkOrder> work_orders;  // of the run, attributed
  // Per stream, each attributed query's span from its first work order's start to its last one's end.
  std::vector<std::vector<Interval>> query_spans;
  int64_t queries = 0;
  int64_t unattributed_queries = 0;
  int64_t by_signature = 0;  // queries whose stream the time alone did not decide
};

Attribution Attribute(const std::vector<LogRecord>& records, const RunWindow& run, const std::vector<Stream>& streams,
                      const Calibrations& calibrations) {
  std::vector<LogRecord> in_run;
  for (const LogRecord& r : records) {
    if (r.start_ns >= run.begin_ns && r.start_ns <= run.end_ns) in_run.push_back(r);
  }
  std::map<int64_t, QuerySpan> spans = SpansOf(in_run);
  std::map<int64_t, int> stream_of;
  Attribution out;
  for (const auto& [query, span] : spans) {
    ++out.queries;
    std::vector<int> candidates;
    for (size_t s = 0; s < streams.size(); ++s) {
      for (const Execution& e : streams[s].executions) {
        if (e.call_ns <= span.first_start && span.last_end <= e.return_ns) {
          candidates.push_back(static_cast<int>(s));
          break;
        }
      }
    }
    int chosen = -1;
    if (candidates.size() == 1) {
      chosen = candidates[0];
    } else if (candidates.size() > 1) {
      ++out.by_signature;
      double best = 1e18;
      for (int s : candidates) {
        auto it = calibrations.find(streams[s].label);
        if (it == calibrations.end()) continue;
        for (const Signature& signature : it->second.signatures) {
          const double d = SignatureDistance(span.signature, signature);
          if (d < best) best = d, chosen = s;
        }
      }
    }
    if (chosen < 0) {
      ++out.unattributed_queries;
    } else {
      stream_of[query] = chosen;
    }
  }
  out.query_spans.resize(streams.size());
  for (const auto& [query, stream] : stream_of) {
    out.query_spans[stream].push_back({spans[query].first_start, spans[query].last_end});
  }
  for (auto& list : out.query_spans) {
    std::sort(list.begin(), list.end(), [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
  }
  for (const LogRecord& r : in_run) {
    auto it = stream_of.find(r.query);
    if (it != stream_of.end()) out.work_orders.push_back({it->second, r});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Windows.

struct Timeline {
  int64_t origin_ns = 0;
  int64_t window_ns = 0;
  int count = 0;
  std::vector<std::vector<double>> busy;  // [stream][window], ns
  std::vector<double> total;              // [window], ns

  int64_t WindowStart(int w) const { return origin_ns + static_cast<int64_t>(w) * window_ns; }
  int64_t WindowEnd(int w) const { return WindowStart(w + 1); }
  double Share(int stream, int w) const { return total[w] > 0 ? busy[stream][w] / total[w] : 0; }
};

Timeline BuildTimeline(const Attribution& attribution, int streams, int64_t origin_ns, int64_t end_ns,
                       int64_t window_ns) {
  Timeline t;
  t.origin_ns = origin_ns;
  t.window_ns = window_ns;
  t.count = static_cast<int>(std::max<int64_t>(1, (end_ns - origin_ns + window_ns - 1) / window_ns));
  t.busy.assign(streams, std::vector<double>(t.count, 0));
  t.total.assign(t.count, 0);
  for (const StreamWorkOrder& wo : attribution.work_orders) {
    int64_t start = std::max(wo.record.start_ns, origin_ns);
    const int64_t end = std::min(wo.record.end_ns, origin_ns + static_cast<int64_t>(t.count) * window_ns);
    while (start < end) {
      const int w = static_cast<int>((start - origin_ns) / window_ns);
      const int64_t hi = std::min(end, t.WindowEnd(w));
      t.busy[wo.stream][w] += static_cast<double>(hi - start);
      t.total[w] += static_cast<double>(hi - start);
      start = hi;
    }
  }
  return t;
}

// Busy time per stream inside [from, to).
std::vector<double> BusyBetween(const Attribution& attribution, int streams, int64_t from, int64_t to) {
  std::vector<double> busy(streams, 0);
  for (const StreamWorkOrder& wo : attribution.work_orders) {
    const int64_t overlap = std::min(wo.record.end_ns, to) - std::max(wo.record.start_ns, from);
    if (overlap > 0) busy[wo.stream] += static_cast<double>(overlap);
  }
  return busy;
}

// The interval in which every stream of `members` is active (first call .. last return).
RunWindow AllActive(const std::vector<Stream>& streams, const std::vector<int>& members) {
  RunWindow w{0, INT64_MAX};
  for (int s : members) {
    w.begin_ns = std::max(w.begin_ns, streams[s].first_call());
    w.end_ns = std::min(w.end_ns, streams[s].last_return());
  }
  if (w.end_ns < w.begin_ns) w.end_ns = w.begin_ns;
  return w;
}

std::vector<int> AllStreams(const std::vector<Stream>& streams) {
  std::vector<int> all(streams.size());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// Windows of `t` lying wholly inside `active` and with some busy time.
std::vector<int> WindowsInside(const Timeline& t, const RunWindow& active) {
  std::vector<int> windows;
  for (int w = 0; w < t.count; ++w) {
    if (t.WindowStart(w) >= active.begin_ns && t.WindowEnd(w) <= active.end_ns && t.total[w] > 0) {
      windows.push_back(w);
    }
  }
  return windows;
}

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}
// Coefficient of variation of shares around the equal share 1/n: pstdev(shares) / (1/n).
double RelativeSpread(const std::vector<double>& shares) {
  if (shares.size() < 2) return 0;
  const double equal = 1.0 / static_cast<double>(shares.size());
  double sum = 0;
  for (double s : shares) sum += (s - equal) * (s - equal);
  return std::sqrt(sum / static_cast<double>(shares.size())) / equal;
}

// Per-window relative spread over the windows in which every stream is active.
std::vector<double> WindowSpreads(const Attribution& attribution, const std::vector<Stream>& streams,
                                  int64_t window_ns) {
  const RunWindow active = AllActive(streams, AllStreams(streams));
  const int n = static_cast<int>(streams.size());
  Timeline t = BuildTimeline(attribution, n, active.begin_ns, active.end_ns, window_ns);
  std::vector<double> spreads;
  for (int w : WindowsInside(t, active)) {
    std::vector<double> shares;
    for (int s = 0; s < n; ++s) shares.push_back(t.Share(s, w));
    spreads.push_back(RelativeSpread(shares));
  }
  return spreads;
}

// ---------------------------------------------------------------------------------------------------------------
// Why shares deviate: prediction bias, idle streams, and the sampling noise of random draws.

// Replays the run's work orders (in the order the Foreman handled them, which is the log's order) through the
// scheduler's own LearningAgent with the run's --prediction scope and compares, per stream, the prediction
// in force before each work order with its actual duration. Fair picks query j with probability ∝ 1/t̂_j, so
// a stream whose work orders are under-predicted by x% is picked x% too often. (An operator counts as done
// after its last work order in the log; the Foreman learns that slightly earlier. With next-operator the
// replay predicts each work order with its own operator, i.e. as if the Foreman's NextWorkOrderOperator hint
// named the operator of the work order it then took, which it does for the QueryManager's ready queue.)
struct PredictionBias {
  int64_t work_orders = 0;
  double actual_ns = 0;
  double predicted_ns = 0;
  double ActualOverPredicted() const { return predicted_ns > 0 ? actual_ns / predicted_ns : 0; }
};

std::vector<PredictionBias> ReplayPredictor(const Attribution& a, int streams) {
  std::map<std::pair<int64_t, int>, size_t> last_of_operator;
  std::map<int64_t, size_t> last_of_query;
  for (size_t i = 0; i < a.work_orders.size(); ++i) {
    last_of_operator[{a.work_orders[i].record.query, a.work_orders[i].record.op}] = i;
    last_of_query[a.work_orders[i].record.query] = i;
  }
  LearningAgentOptions options;
  options.scope = g_flags.prediction;
  LearningAgent agent{options};
  std::map<int64_t, LearningAgent::QueryHistory*> histories;
  std::vector<PredictionBias> bias(streams);
  for (size_t i = 0; i < a.work_orders.size(); ++i) {
    const StreamWorkOrder& wo = a.work_orders[i];
    LearningAgent::QueryHistory*& history = histories[wo.record.query];
    if (history == nullptr) history = agent.AddQuery();
    const int64_t duration = std::max<int64_t>(1, wo.record.end_ns - wo.record.start_ns);
    double predicted;
    if (agent.Predict(history, wo.record.op, &predicted)) {
      PredictionBias& b = bias[wo.stream];
      ++b.work_orders;
      b.actual_ns += static_cast<double>(duration);
      b.predicted_ns += predicted;
    }
    agent.Record(history, wo.record.op, duration);
    if (last_of_operator[{wo.record.query, wo.record.op}] == i) agent.RemoveOperator(history, wo.record.op);
    if (last_of_query[wo.record.query] == i) {
      agent.RemoveQuery(history);
      histories.erase(wo.record.query);
    }
  }
  return bias;
}

// Per stream: fraction of `span` in which it had no work order running, and in which it had no query in
// flight at all (between its queries: result rows, client loop, parse, plan, submit, first dispatch).
struct Idleness {
  double no_work_order = 0;
  double between_queries = 0;
};

std::vector<Idleness> IdlenessOf(const Attribution& a, int streams, const RunWindow& span) {
  std::vector<Idleness> out(streams);
  const double length = static_cast<double>(std::max<int64_t>(1, span.end_ns - span.begin_ns));
  for (int s = 0; s < streams; ++s) {
    std::vector<Interval> running;
    for (const StreamWorkOrder& wo : a.work_orders) {
      if (wo.stream != s) continue;
      const int64_t lo = std::max(wo.record.start_ns, span.begin_ns);
      const int64_t hi = std::min(wo.record.end_ns, span.end_ns);
      if (lo < hi) running.push_back({lo, hi});
    }
    std::sort(running.begin(), running.end(),
              [](const Interval& x, const Interval& y) { return x.begin_ns < y.begin_ns; });
    int64_t covered = 0, reach = span.begin_ns;
    for (const Interval& i : running) {
      if (i.end_ns <= reach) continue;
      covered += i.end_ns - std::max(i.begin_ns, reach);
      reach = i.end_ns;
    }
    int64_t in_flight = 0;
    for (const Interval& q : a.query_spans[s]) {
      const int64_t lo = std::max(q.begin_ns, span.begin_ns);
      const int64_t hi = std::min(q.end_ns, span.end_ns);
      if (lo < hi) in_flight += hi - lo;
    }
    out[s].no_work_order = 1 - static_cast<double>(covered) / length;
    out[s].between_queries = 1 - static_cast<double>(in_flight) / length;
  }
  return out;
}

// The spread an ideal lottery scheduler would show with these work orders: in every window, draw work orders
// (stream j with probability ∝ 1 / its mean work-order time, durations resampled from its own work orders in
// `span`) until the window's measured busy time is used, and take the same std-dev / equal share. Perfect
// predictions and always-ready streams: what is left is the sampling noise of random draws at this work-order
// granularity, the floor for any probabilistic policy.
double LotteryFloor(const Attribution& a, int streams, const RunWindow& span, int64_t window_ns) {
  std::vector<std::vector<double>> durations(streams);
  for (const StreamWorkOrder& wo : a.work_orders) {
    if (wo.record.start_ns >= span.begin_ns && wo.record.end_ns <= span.end_ns) {
      durations[wo.stream].push_back(static_cast<double>(wo.record.end_ns - wo.record.start_ns));
    }
  }
  std::vector<double> weights;
  for (const auto& d : durations) {
    if (d.empty()) return 0;
    weights.push_back(static_cast<double>(d.size()) / std::accumulate(d.begin(), d.end(), 0.0));
  }
  std::mt19937_64 random(42);
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  Timeline t = BuildTimeline(a, streams, span.begin_ns, span.end_ns, window_ns);
  std::vector<double> spreads;
  constexpr int kTrials = 10;
  for (int w : WindowsInside(t, span)) {
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<double> busy(streams, 0);
      double used = 0;
      while (used < t.total[w]) {
        const int s = pick(random);
        const double d = durations[s][std::uniform_int_distribution<size_t>(0, durations[s].size() - 1)(random)];
        const double take = std::min(d, t.total[w] - used);
        busy[s] += take;
        used += take;
      }
      for (double& b : busy) b /= used;
      spreads.push_back(RelativeSpread(busy));
    }
  }
  return Mean(spreads);
}

// The operators of the stream's median query (by span): how many work orders, how long, and how long the
// operator's phase took on the clock. A phase whose CPU is far below its wall time could not use a fair
// share.
void PrintOperatorPhases(const Attribution& a, int stream, const std::string& label) {
  std::map<int64_t, std::vector<const LogRecord*>> by_query;
  for (const StreamWorkOrder& wo : a.work_orders) {
    if (wo.stream == stream) by_query[wo.record.query].push_back(&wo.record);
  }
  if (by_query.empty()) return;
  std::vector<std::pair<int64_t, int64_t>> spans;  // (span, query)
  for (const auto& [query, records] : by_query) {
    int64_t lo = INT64_MAX, hi = 0;
    for (const LogRecord* r : records) lo = std::min(lo, r->start_ns), hi = std::max(hi, r->end_ns);
    spans.push_back({hi - lo, query});
  }
  std::sort(spans.begin(), spans.end());
  const std::vector<const LogRecord*>& records = by_query[spans[spans.size() / 2].second];
  int64_t origin = INT64_MAX;
  for (const LogRecord* r : records) origin = std::min(origin, r->start_ns);
  struct Phase {
    int64_t work_orders = 0, busy_ns = 0, first = INT64_MAX, last = 0;
  };
  std::map<int, Phase> phases;
  for (const LogRecord* r : records) {
    Phase& p = phases[r->op];
    ++p.work_orders;
    p.busy_ns += r->end_ns - r->start_ns;
    p.first = std::min(p.first, r->start_ns);
    p.last = std::max(p.last, r->end_ns);
  }
  std::printf("  %s, median query (%.1f ms from first to last work order): operator phases\n", label.c_str(),
              Ms(spans[spans.size() / 2].first));
  std::printf("  %8s %6s %10s %8s %16s\n", "operator", "WOs", "mean WO us", "CPU ms", "wall ms (from-to)");
  for (const auto& [op, p] : phases) {
    std::printf("  %8d %6lld %10.1f %8.2f %7.1f - %6.1f\n", op, static_cast<long long>(p.work_orders),
                static_cast<double>(p.busy_ns) / static_cast<double>(p.work_orders) / 1e3, Ms(p.busy_ns),
                Ms(p.first - origin), Ms(p.last - origin));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Logs for plot_cpu_share.py: the run's work orders with the stream number (1-based) as the query, so that
// the plot shows one line per client stream instead of one per executed query.

std::string WriteStreamLogAndPlot(const std::string& name, const std::string& title, const Attribution& attribution,
                                  const std::vector<Stream>& streams) {
  const std::string log = g_flags.log_dir + "/ssb_" + name + ".streams.jsonl";
  const std::string svg = g_flags.log_dir + "/ssb_" + name + ".svg";
  {
    std::ofstream out(log);
    for (const StreamWorkOrder& wo : attribution.work_orders) {
      out << "{\"query\":" << wo.stream + 1 << ",\"operator\":" << wo.record.op << ",\"worker\":" << wo.record.worker
          << ",\"start_ns\":" << wo.record.start_ns << ",\"end_ns\":" << wo.record.end_ns
          << ",\"rows\":" << wo.record.rows << "}\n";
    }
  }
  auto name_of = [&](size_t s) {
    std::string name = std::to_string(s + 1) + "=" + Display(streams[s].label);
    if (streams[s].priority != 1) name += "/p" + std::to_string(streams[s].priority);
    return name;
  };
  std::string legend;
  if (streams.size() > 5) {  // keep the title on the chart
    legend = name_of(0) + ", " + name_of(1) + " ... " + name_of(streams.size() - 1) + " in SSB order";
  } else {
    for (size_t s = 0; s < streams.size(); ++s) legend += (s ? ", " : "") + name_of(s);
  }
  std::string command = "python3 '" + g_flags.plot_script + "' '" + log + "' -o '" + svg + "' --window-ms " +
                        std::to_string(g_flags.plot_window_ms) + " --workers " + std::to_string(g_flags.workers) +
                        " --title '" + title + " (query N = stream N: " + legend + ")' > /dev/null";
  if (std::system(command.c_str()) != 0) {
    std::printf("  (plot failed: %s)\n", command.c_str());
    return "";
  }
  std::printf("  plot: %s  (stream log %s)\n", svg.c_str(), log.c_str());
  return svg;
}

// Self-check of the attribution: every stream must have exactly as many queries in the log as it executed.
void PrintAttribution(const Attribution& a, const std::vector<Stream>& streams) {
  std::string mismatches;
  for (size_t s = 0; s < streams.size(); ++s) {
    if (a.query_spans[s].size() != streams[s].executions.size()) {
      mismatches += " " + Display(streams[s].label) + ":" + std::to_string(a.query_spans[s].size()) + "/" +
                    std::to_string(streams[s].executions.size());
    }
  }
  std::printf("  attribution: %lld queries in the log, %lld by signature, %lld unattributed, per-stream counts %s\n",
              static_cast<long long>(a.queries), static_cast<long long>(a.by_signature),
              static_cast<long long>(a.unattributed_queries),
              mismatches.empty() ? "all match the executions" : ("MISMATCH (log/executed)" + mismatches).c_str());
}

// The intervals in which every stream of `members` had a query in flight (from its first work order's start
// to its last one's end), i.e. leaving out the client-side gaps (parse, plan, submit, result rows, loop).
std::vector<Interval> AllInFlight(const Attribution& a, const std::vector<int>& members) {
  std::vector<Interval> current = {{0, INT64_MAX}};
  for (int s : members) {
    std::vector<Interval> next;
    size_t i = 0, j = 0;
    const std::vector<Interval>& other = a.query_spans[s];
    while (i < current.size() && j < other.size()) {
      const int64_t lo = std::max(current[i].begin_ns, other[j].begin_ns);
      const int64_t hi = std::min(current[i].end_ns, other[j].end_ns);
      if (lo < hi) next.push_back({lo, hi});
      if (current[i].end_ns < other[j].end_ns) {
        ++i;
      } else {
        ++j;
      }
    }
    current = std::move(next);
  }
  return current;
}

// Busy time per stream inside `intervals` (sorted, disjoint).
std::vector<double> BusyOver(const Attribution& a, int streams, const std::vector<Interval>& intervals) {
  std::vector<double> busy(streams, 0);
  for (const StreamWorkOrder& wo : a.work_orders) {
    auto it = std::upper_bound(intervals.begin(), intervals.end(), wo.record.start_ns,
                               [](int64_t t, const Interval& i) { return t < i.end_ns; });
    for (; it != intervals.end() && it->begin_ns < wo.record.end_ns; ++it) {
      const int64_t overlap = std::min(wo.record.end_ns, it->end_ns) - std::max(wo.record.start_ns, it->begin_ns);
      if (overlap > 0) busy[wo.stream] += static_cast<double>(overlap);
    }
  }
  return busy;
}

int64_t TotalLength(const std::vector<Interval>& intervals) {
  int64_t total = 0;
  for (const Interval& i : intervals) total += i.end_ns - i.begin_ns;
  return total;
}

// A policy name, or srpt / ifsrpt with a suffix naming an earlier remaining-time estimate, to compare estimates in
// the same run (PolicyOptions::srpt_estimate): -dag (before issue #14: the plan's counts, unscaled), -v1 (counts
// remembered by plan and one correction per plan), -oracle (the true remaining time of a replayed plan: the
// yardstick that separates ranking errors from the mechanism's losses).
PolicyOptions Policy(const std::string& name) {
  RemainingEstimate estimate = RemainingEstimate::kStagedCorrection;
  std::string base = name;
  if (absl::EndsWith(name, "-dag")) {
    estimate = RemainingEstimate::kPlanCounts;
    base = name.substr(0, name.size() - 4);
  } else if (absl::EndsWith(name, "-v1")) {
    estimate = RemainingEstimate::kPlanCorrection;
    base = name.substr(0, name.size() - 3);
  } else if (absl::EndsWith(name, "-oracle")) {
    estimate = RemainingEstimate::kOracle;
    base = name.substr(0, name.size() - 7);
  }
  absl::StatusOr<PolicyOptions> policy = ParsePolicy(base);
  if (!policy.ok()) Die("policy " + name);
  policy->srpt_aging = FLAGS_srpt_aging;
  policy->srpt_estimate = estimate;
  return *policy;
}

void SwitchPolicy(Database* database, const std::string& name) {
  absl::Status status = database->foreman().SetPolicy(Policy(name));
  if (!status.ok()) Die("SetPolicy: " + std::string(status.message()));
}

int64_t Scaled(double ms) { return static_cast<int64_t>(ms * g_flags.scale); }

const std::vector<std::string> kAllQueries = {"q1.1", "q1.2", "q1.3", "q2.1", "q2.2", "q2.3", "q3.1",
                                              "q3.2", "q3.3", "q3.4", "q4.1", "q4.2", "q4.3"};

// One run of an experiment: a policy, its client streams and when to stop them; then what the log says.
struct Run {
  std::string policy;
  std::vector<Stream> streams;
  int64_t stop_after_ms = 0;   // streams with iterations == 0 stop this long after the start ...
  int stop_after_stream = -1;  // ... or `linger_ms` after this stream finished
  int64_t linger_ms = 0;
  // Called before the run starts (after the policy switch): may change the database's settings and the streams.
  std::function<void(Database*, Run&)> before;
  RunWindow window;
  Attribution attribution;
  // The buffer pool's peak use during the run (sampled every 0.2 ms) and the LoadController's suspensions.
  int64_t peak_used_bytes = 0;
  int64_t suspensions = 0;
};

// Opens a database whose Foreman logs to log-dir/ssb_<name>.jsonl, runs every SSB query of `labels` twice in
// one session (warm buffer pool; per-query signatures and CPU time), lets `prepare` size the runs from that,
// runs them one after the other (switching the policy at run time with Foreman::SetPolicy), closes the
// database (which completes the log) and attributes every run's work orders to its streams.
Calibrations RunExperiment(const std::string& name, const std::vector<std::string>& labels, std::vector<Run>& runs,
                           const std::function<void(const Calibrations&, std::vector<Run>&)>& prepare) {
  const std::string log = g_flags.log_dir + "/ssb_" + name + ".jsonl";
  std::vector<WarmupExecution> warmups;
  {
    std::unique_ptr<Database> database = OpenDatabase(Policy(runs.front().policy), log);
    warmups = WarmUp(database.get(), labels, 2);
    // The log's writer thread writes what was appended at least every 100 ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const Calibrations early = Calibrate(ReadLog(log), warmups);
    for (const std::string& label : labels) {
      if (early.count(label) == 0 || early.at(label).signatures.empty()) Die("no warm-up work orders of " + label);
    }
    prepare(early, runs);
    for (Run& run : runs) {
      SwitchPolicy(database.get(), run.policy);
      std::printf("  running under %s ...\n", run.policy.c_str());
      std::fflush(stdout);
      if (run.before) run.before(database.get(), run);
      const int64_t suspensions_before = database->foreman().GetStats()->load.suspensions;
      std::atomic<bool> sampling{true};
      std::thread sampler([&] {
        while (sampling.load()) {
          run.peak_used_bytes =
              std::max<int64_t>(run.peak_used_bytes, static_cast<int64_t>(database->buffer_pool().Usage().used_bytes));
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      });
      run.window = RunStreams(database.get(), run.streams, run.stop_after_ms, run.stop_after_stream, run.linger_ms);
      sampling.store(false);
      sampler.join();
      run.suspensions = database->foreman().GetStats()->load.suspensions - suspensions_before;
    }
  }
  std::vector<LogRecord> records = ReadLog(log);
  Calibrations calibrations = Calibrate(records, warmups);
  for (Run& run : runs) run.attribution = Attribute(records, run.window, run.streams, calibrations);
  std::printf("  work-order log: %s (%zu work orders)\n", log.c_str(), records.size());
  PrintCalibration(calibrations, labels);
  return calibrations;
}

std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%%", 100 * fraction);
  return buffer;
}

// ---------------------------------------------------------------------------------------------------------------
// Experiment 1: fair, the 13 SSB queries concurrently; baseline static 1/N.

struct SpreadSummary {
  double mean = 0, median = 0, p90 = 0;
  size_t windows = 0;
};
SpreadSummary Summarize(const std::vector<double>& spreads) {
  return {Mean(spreads), Percentile(spreads, 0.5), Percentile(spreads, 0.9), spreads.size()};
}

void Experiment1() {
  std::printf("\n=== Experiment 1: fair, the 13 SSB queries concurrently (baseline: static 1/N) ===\n");
  std::vector<Run> runs(2);
  runs[0].policy = "fair";
  runs[1].policy = "static";
  const double all_active_ms = static_cast<double>(Scaled(4000));
  RunExperiment("exp1_fair13", kAllQueries, runs, [&](const Calibrations& c, std::vector<Run>& runs) {
    // Stream i gets a CPU budget B (1 + i / 12) of iterations, B = all_active_ms x workers / 13: with equal
    // shares all 13 overlap for about all_active_ms, then finish one after the other.
    const double budget = all_active_ms * g_flags.workers / static_cast<double>(kAllQueries.size());
    for (Run& run : runs) {
      for (size_t i = 0; i < kAllQueries.size(); ++i) {
        Stream stream;
        stream.label = kAllQueries[i];
        const double stream_budget = budget * (1 + static_cast<double>(i) / 12);
        stream.iterations =
            std::max(1, static_cast<int>(std::lround(stream_budget / std::max(0.01, c.at(stream.label).busy_ms))));
        run.streams.push_back(stream);
      }
      run.stop_after_ms = 600'000;  // every stream has a fixed number of iterations
    }
  });

  const int n = static_cast<int>(kAllQueries.size());
  const int64_t window_ns = static_cast<int64_t>(g_flags.window_ms * 1e6);
  std::printf(
      "\n  CPU share of each stream while all 13 were active (equal share = %.1f%%); actual/predicted = mean "
      "work-order time over the LearningAgent's prediction (replayed); idle = no work order running\n",
      100.0 / n);
  std::printf("  %-6s %5s | %7s %6s %9s %9s %6s %9s %9s | %7s %6s %9s\n", "stream", "iters", "fair", "/equal",
              "act/pred", "idle", "WO ms", "max WO ms", "done at s", "static", "/equal", "done at s");
  std::vector<std::vector<double>> shares;
  std::vector<PredictionBias> bias;
  std::vector<Idleness> idle;
  for (const Run& run : runs) {
    const RunWindow active = AllActive(run.streams, AllStreams(run.streams));
    std::vector<double> busy = BusyBetween(run.attribution, n, active.begin_ns, active.end_ns);
    const double total = std::max(1.0, std::accumulate(busy.begin(), busy.end(), 0.0));
    for (double& b : busy) b /= total;
    shares.push_back(busy);
    if (bias.empty()) {
      bias = ReplayPredictor(run.attribution, n);
      idle = IdlenessOf(run.attribution, n, active);
    }
  }
  // Long work orders (in the fair run, while all were active): one of them alone decides a window's shares.
  const RunWindow fair_active = AllActive(runs[0].streams, AllStreams(runs[0].streams));
  std::vector<int64_t> longest(n, 0);
  int64_t longer_than_half_window = 0, counted = 0;
  for (const StreamWorkOrder& wo : runs[0].attribution.work_orders) {
    if (wo.record.start_ns < fair_active.begin_ns || wo.record.end_ns > fair_active.end_ns) continue;
    const int64_t d = wo.record.end_ns - wo.record.start_ns;
    longest[wo.stream] = std::max(longest[wo.stream], d);
    ++counted;
    if (2 * d > window_ns) ++longer_than_half_window;
  }
  for (int s = 0; s < n; ++s) {
    std::printf("  %-6s %5zu | %7s %6.2f %9.2f %9s %6.3f %9.1f %9.2f | %7s %6.2f %9.2f\n",
                Display(kAllQueries[s]).c_str(), runs[0].streams[s].executions.size(), Percent(shares[0][s]).c_str(),
                shares[0][s] * n, bias[s].ActualOverPredicted(), Percent(idle[s].no_work_order).c_str(),
                bias[s].work_orders ? bias[s].actual_ns / static_cast<double>(bias[s].work_orders) / 1e6 : 0.0,
                Ms(longest[s]), Ms(runs[0].streams[s].last_return() - runs[0].window.begin_ns) / 1e3,
                Percent(shares[1][s]).c_str(), shares[1][s] * n,
                Ms(runs[1].streams[s].last_return() - runs[1].window.begin_ns) / 1e3);
  }
  std::printf("  fair: %lld of %lld work orders ran longer than half a %g ms window\n",
              static_cast<long long>(longer_than_half_window), static_cast<long long>(counted), g_flags.window_ms);
  std::printf(
      "\n  spread of the shares around the equal share (std-dev / equal share) while all 13 were active;\n"
      "  ideal lottery = the same for random draws with perfect predictions at this work-order "
      "granularity\n");
  std::printf("  %-22s | %-30s | %-30s | %-13s | %s\n", "window", "fair: mean / median / p90",
              "static: mean / median / p90", "ideal lottery", "goal");
  for (double ms : {g_flags.window_ms, 100.0, 500.0}) {
    std::string cells[2];
    for (int r = 0; r < 2; ++r) {
      SpreadSummary summary =
          Summarize(WindowSpreads(runs[r].attribution, runs[r].streams, static_cast<int64_t>(ms * 1e6)));
      char buffer[96];
      std::snprintf(buffer, sizeof(buffer), "%5.1f%% / %5.1f%% / %5.1f%% (%zu)", 100 * summary.mean,
                    100 * summary.median, 100 * summary.p90, summary.windows);
      cells[r] = buffer;
    }
    char label[32];
    std::snprintf(label, sizeof(label), "%g ms windows", ms);
    const double floor = LotteryFloor(runs[0].attribution, n, AllActive(runs[0].streams, AllStreams(runs[0].streams)),
                                      static_cast<int64_t>(ms * 1e6));
    std::printf("  %-22s | %-30s | %-30s | %-13s | %s\n", label, cells[0].c_str(), cells[1].c_str(),
                Percent(floor).c_str(), "<= 10% (diss.: ~0)");
  }
  std::printf("  %-22s | %-30s | %-30s | %-13s | %s\n", "whole all-active span",
              Percent(RelativeSpread(shares[0])).c_str(), Percent(RelativeSpread(shares[1])).c_str(), "", "<= 10%");

  // Redistribution: between consecutive stream completions, the CPU each remaining stream gets.
  for (const Run& run : runs) {
    std::printf("\n  [%s] phases between stream completions: CPU per remaining stream (of %d workers)\n",
                run.policy.c_str(), g_flags.workers);
    PrintAttribution(run.attribution, run.streams);
    std::printf("  %6s %8s %8s %7s %13s %13s %8s %s\n", "active", "from s", "to s", "util", "CPU/stream",
                "(util/active)", "spread", "finished at the end of the phase");
    std::vector<int> order = AllStreams(run.streams);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return run.streams[a].last_return() < run.streams[b].last_return(); });
    int64_t from = AllActive(run.streams, AllStreams(run.streams)).begin_ns;
    for (size_t k = 0; k < order.size(); ++k) {
      const int64_t to = run.streams[order[k]].last_return();
      std::vector<int> members(order.begin() + static_cast<std::ptrdiff_t>(k), order.end());
      if (to - from >= 2 * window_ns) {
        std::vector<double> busy = BusyBetween(run.attribution, n, from, to);
        double total = 0;
        std::vector<double> member_shares;
        for (int s : members) total += busy[s];
        for (int s : members) member_shares.push_back(busy[s] / std::max(1.0, total));
        const double capacity = static_cast<double>(to - from) * g_flags.workers;
        std::printf("  %6zu %8.2f %8.2f %7s %13s %13s %8s %s\n", members.size(), Ms(from - run.window.begin_ns) / 1e3,
                    Ms(to - run.window.begin_ns) / 1e3, Percent(total / capacity).c_str(),
                    Percent(total / capacity / static_cast<double>(members.size())).c_str(),
                    Percent(1.0 / static_cast<double>(members.size())).c_str(),
                    Percent(RelativeSpread(member_shares)).c_str(), Display(run.streams[order[k]].label).c_str());
      } else {
        std::printf("  %6zu %8.2f %8.2f %7s %13s %13s %8s %s\n", members.size(), Ms(from - run.window.begin_ns) / 1e3,
                    Ms(to - run.window.begin_ns) / 1e3, "-", "-", "-", "-",
                    Display(run.streams[order[k]].label).c_str());
      }
      from = std::max(from, to);
    }
    WriteStreamLogAndPlot("exp1_" + run.policy, "Exp 1: 13 SSB streams, " + run.policy, run.attribution, run.streams);
  }
}

// Completed queries per second over the stream's active span.
double Throughput(const Stream& stream) {
  if (stream.executions.empty()) return 0;
  return static_cast<double>(stream.executions.size()) / (Ms(stream.last_return() - stream.first_call()) / 1e3);
}

// ---------------------------------------------------------------------------------------------------------------
// Experiment 2: Q1.1 and Q4.1 streams, fair with the learning agent vs static 1/N.

void Experiment2() {
  const std::string& short_label = g_flags.exp2_queries[0];  // the dissertation: Q1.1 and Q4.1
  const std::string& long_label = g_flags.exp2_queries[1];
  const std::string a = Display(short_label);
  const std::string b = Display(long_label);
  std::printf("\n=== Experiment 2: %s and %s streams, fair (learning) vs static 1/N ===\n", a.c_str(), b.c_str());
  std::vector<Run> runs(2);
  runs[0].policy = "fair";
  runs[1].policy = "static";
  for (Run& run : runs) {
    run.streams.resize(2);
    run.streams[0].label = short_label;
    run.streams[1].label = long_label;
    run.stop_after_ms = Scaled(4000);
  }
  Calibrations calibrations = RunExperiment("exp2_learning", {short_label, long_label}, runs, [](auto&, auto&) {});
  const Calibration& short_query = calibrations.at(short_label);
  const Calibration& long_query = calibrations.at(long_label);
  const double short_wo = short_query.busy_ms / std::max<int64_t>(1, short_query.work_orders);
  const double long_wo = long_query.busy_ms / std::max<int64_t>(1, long_query.work_orders);
  std::printf(
      "\n  mean work-order time alone: %s %.3f ms, %s %.3f ms (ratio %.2f: what static 1/N gives when "
      "both always have ready work)\n",
      a.c_str(), short_wo, b.c_str(), long_wo, long_wo / short_wo);
  std::printf("  %-8s %13s %13s %12s %9s %9s %11s %11s %s\n", "policy", ("CPU " + b + "/" + a).c_str(),
              "both in flight", "median/window", (a + " q/s").c_str(), (b + " q/s").c_str(), (a + " share").c_str(),
              (b + " share").c_str(), "goal / dissertation");
  const int64_t window_ns = static_cast<int64_t>(g_flags.window_ms * 1e6);
  std::vector<double> in_flight_fraction;
  for (const Run& run : runs) {
    const RunWindow active = AllActive(run.streams, AllStreams(run.streams));
    std::vector<double> busy = BusyBetween(run.attribution, 2, active.begin_ns, active.end_ns);
    const double total = std::max(1.0, busy[0] + busy[1]);
    const std::vector<Interval> both = AllInFlight(run.attribution, {0, 1});
    std::vector<double> busy_both = BusyOver(run.attribution, 2, both);
    in_flight_fraction.push_back(static_cast<double>(TotalLength(both)) /
                                 static_cast<double>(std::max<int64_t>(1, active.end_ns - active.begin_ns)));
    Timeline t = BuildTimeline(run.attribution, 2, active.begin_ns, active.end_ns, window_ns);
    std::vector<double> ratios;
    for (int w : WindowsInside(t, active)) {
      if (t.busy[0][w] > 0) ratios.push_back(t.busy[1][w] / t.busy[0][w]);
    }
    const double qps[2] = {Throughput(run.streams[0]), Throughput(run.streams[1])};
    std::printf("  %-8s %13.2f %13.2f %12.2f %9.1f %9.1f %11s %11s %s\n", run.policy.c_str(),
                busy[1] / std::max(1.0, busy[0]), busy_both[1] / std::max(1.0, busy_both[0]), Percentile(ratios, 0.5),
                qps[0], qps[1], Percent(busy[0] / total).c_str(), Percent(busy[1] / total).c_str(),
                run.policy == "fair" ? "0.8-1.25 / ~1" : "(baseline) / ~2");
  }
  std::printf(
      "  (both in flight: only the time in which each stream had a query with work started and not done: "
      "%s of the span under %s, %s under %s)\n",
      Percent(in_flight_fraction[0]).c_str(), runs[0].policy.c_str(), Percent(in_flight_fraction[1]).c_str(),
      runs[1].policy.c_str());
  std::printf(
      "\n  why (while both streams were active): per stream work orders, mean work-order time, the replayed\n"
      "  LearningAgent's bias (actual/predicted), time with no work order running, time with no query in "
      "flight\n");
  std::printf("  %-8s %-6s %8s %8s %9s %9s %10s\n", "policy", "stream", "WOs", "WO us", "act/pred", "idle", "no query");
  for (const Run& run : runs) {
    const RunWindow active = AllActive(run.streams, AllStreams(run.streams));
    std::vector<PredictionBias> bias = ReplayPredictor(run.attribution, 2);
    std::vector<Idleness> idle = IdlenessOf(run.attribution, 2, active);
    for (int s = 0; s < 2; ++s) {
      std::printf("  %-8s %-6s %8lld %8.0f %9.2f %9s %10s\n", run.policy.c_str(), Display(run.streams[s].label).c_str(),
                  static_cast<long long>(bias[s].work_orders),
                  bias[s].work_orders ? bias[s].actual_ns / static_cast<double>(bias[s].work_orders) / 1e3 : 0.0,
                  bias[s].ActualOverPredicted(), Percent(idle[s].no_work_order).c_str(),
                  Percent(idle[s].between_queries).c_str());
    }
    if (run.policy == "fair") {
      std::printf("  %-8s prediction bias alone gives fair a %s/%s CPU ratio of %.2f\n", "", b.c_str(), a.c_str(),
                  bias[1].ActualOverPredicted() / std::max(1e-9, bias[0].ActualOverPredicted()));
    }
  }
  std::printf("\n");
  PrintOperatorPhases(runs[0].attribution, 0, "fair, " + a);
  for (const Run& run : runs) {
    PrintAttribution(run.attribution, run.streams);
    WriteStreamLogAndPlot("exp2_" + run.policy, "Exp 2: " + a + " + " + b + " streams, " + run.policy, run.attribution,
                          run.streams);
  }
  std::printf("  throughput of fair / static: %s x%.2f, %s x%.2f (dissertation, Q1.1 / Q4.1: up to x3 / about x1)\n",
              a.c_str(), Throughput(runs[0].streams[0]) / std::max(1e-9, Throughput(runs[1].streams[0])), b.c_str(),
              Throughput(runs[0].streams[1]) / std::max(1e-9, Throughput(runs[1].streams[1])));
}

// Priority-1 streams looping `low`, then one stream running `high` `iterations` times from 1 s into the run at
// `priority`; the run ends 1 s after that stream's last query.
void AddArrivalStreams(Run& run, const std::vector<std::string>& low, const std::string& high, int priority,
                       int iterations) {
  for (const std::string& label : low) {
    Stream stream;
    stream.label = label;
    run.streams.push_back(stream);
  }
  Stream arrival;
  arrival.label = high;
  arrival.priority = priority;
  arrival.iterations = iterations;
  arrival.start_after_ms = Scaled(1000);
  run.streams.push_back(arrival);
  run.stop_after_stream = static_cast<int>(low.size());
  run.linger_ms = Scaled(1000);
}

// ---------------------------------------------------------------------------------------------------------------
// Experiment 3: hpf, a priority-10 query arrives while priority-1 streams run; baseline fair.

const std::vector<std::string> kLowPriorityQueries = {"q1.1", "q2.1", "q3.1"};
const std::string kHighPriorityQuery = "q4.1";

void Experiment3() {
  std::printf(
      "\n=== Experiment 3: hpf, a priority-10 %s arrives while %zu priority-1 streams run (baseline: fair) "
      "===\n",
      Display(kHighPriorityQuery).c_str(), kLowPriorityQueries.size());
  std::vector<Run> runs(2);
  runs[0].policy = "hpf";
  runs[1].policy = "fair";
  const int hp = static_cast<int>(kLowPriorityQueries.size());
  for (Run& run : runs) AddArrivalStreams(run, kLowPriorityQueries, kHighPriorityQuery, 10, 1);
  std::vector<std::string> labels = kLowPriorityQueries;
  labels.push_back(kHighPriorityQuery);
  RunExperiment("exp3_hpf", labels, runs, [](auto&, auto&) {});

  const int64_t window_ns = static_cast<int64_t>(g_flags.window_ms * 1e6);
  const int n = hp + 1;
  struct Figures {
    double dispatch_delay_ms = 0, duration_ms = 0, reach90_ms = -1, share_after_100ms = 0, share_first_100ms = 0;
    double low_before = 0, low_during = 0, low_after = 0;
    std::vector<double> window_shares;
  };
  std::vector<Figures> figures;
  for (const Run& run : runs) {
    Figures f;
    const Stream& high = run.streams[hp];
    if (high.executions.empty()) Die("the high-priority query did not run");
    const int64_t arrival = high.first_call();
    const int64_t finish = high.last_return();
    int64_t first_start = INT64_MAX;
    for (const StreamWorkOrder& wo : run.attribution.work_orders) {
      if (wo.stream == hp) first_start = std::min(first_start, wo.record.start_ns);
    }
    f.dispatch_delay_ms = Ms(first_start - arrival);
    f.duration_ms = Ms(finish - arrival);
    Timeline t = BuildTimeline(run.attribution, n, arrival, finish, window_ns);
    for (int w = 0; w < t.count; ++w) {
      const double share = t.Share(hp, w);
      f.window_shares.push_back(share);
      if (f.reach90_ms < 0 && share >= 0.9) f.reach90_ms = Ms(t.WindowEnd(w) - arrival);
    }
    auto share_between = [&](int64_t from, int64_t to) {
      std::vector<double> busy = BusyBetween(run.attribution, n, from, to);
      const double total = std::accumulate(busy.begin(), busy.end(), 0.0);
      return total > 0 ? busy[hp] / total : 0.0;
    };
    f.share_first_100ms = share_between(arrival, std::min(finish, arrival + 100'000'000));
    f.share_after_100ms = finish > arrival + 100'000'000 ? share_between(arrival + 100'000'000, finish) : -1;
    auto low_utilization = [&](int64_t from, int64_t to) {
      std::vector<double> busy = BusyBetween(run.attribution, n, from, to);
      double low = 0;
      for (int s = 0; s < hp; ++s) low += busy[s];
      return to > from ? low / (static_cast<double>(to - from) * g_flags.workers) : 0.0;
    };
    const int64_t low_begin = AllActive(run.streams, {0, 1, 2}).begin_ns;
    int64_t low_end = INT64_MAX;
    for (int s = 0; s < hp; ++s) low_end = std::min(low_end, run.streams[s].last_return());
    f.low_before = low_utilization(low_begin, arrival);
    f.low_during = low_utilization(arrival, finish);
    f.low_after = low_utilization(finish, low_end);
    figures.push_back(f);
  }
  std::printf("\n  %-44s | %14s | %14s | %s\n", "", runs[0].policy.c_str(), runs[1].policy.c_str(), "goal");
  auto row = [&](const char* name, double a, double b, const char* goal, bool percent) {
    auto cell = [&](double v) {
      char buffer[32];
      if (v < 0) return std::string("-");
      if (percent) return Percent(v);
      std::snprintf(buffer, sizeof(buffer), "%.1f", v);
      return std::string(buffer);
    };
    std::printf("  %-44s | %14s | %14s | %s\n", name, cell(a).c_str(), cell(b).c_str(), goal);
  };
  row("arrival -> its first work order (ms)", figures[0].dispatch_delay_ms, figures[1].dispatch_delay_ms, "", false);
  row("arrival -> its result (ms)", figures[0].duration_ms, figures[1].duration_ms, "", false);
  row("arrival -> first window with share >= 90% (ms)", figures[0].reach90_ms, figures[1].reach90_ms, "<= 100", false);
  row("its CPU share, first 100 ms", figures[0].share_first_100ms, figures[1].share_first_100ms, "", true);
  row("its CPU share, from 100 ms to its end", figures[0].share_after_100ms, figures[1].share_after_100ms,
      ">= 90% (diss.: ~100%)", true);
  row("priority-1 streams' CPU (of capacity), before", figures[0].low_before, figures[1].low_before, "", true);
  row("priority-1 streams' CPU (of capacity), during", figures[0].low_during, figures[1].low_during, "~0 (hpf)", true);
  row("priority-1 streams' CPU (of capacity), after", figures[0].low_after, figures[1].low_after, "resume (~100%)",
      true);
  std::printf("\n  its share per %g ms window after arrival:\n", g_flags.window_ms);
  for (size_t r = 0; r < runs.size(); ++r) {
    std::printf("  %-6s", runs[r].policy.c_str());
    for (size_t w = 0; w < figures[r].window_shares.size() && w < 20; ++w) {
      std::printf(" %3.0f", 100 * figures[r].window_shares[w]);
    }
    std::printf("%s\n", figures[r].window_shares.size() > 20 ? " ..." : "");
  }
  for (const Run& run : runs) {
    PrintAttribution(run.attribution, run.streams);
    WriteStreamLogAndPlot("exp3_" + run.policy, "Exp 3: priority-10 query into priority-1 streams, " + run.policy,
                          run.attribution, run.streams);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Experiment 4: proportional priority, streams at priorities 1, 2, 4; baseline fair.

const std::vector<std::pair<std::string, int>> kPriorityStreams = {{"q2.1", 1}, {"q3.1", 2}, {"q4.1", 4}};

void Experiment4() {
  std::printf("\n=== Experiment 4: pp, streams at priorities 1, 2, 4 (baseline: fair) ===\n");
  std::vector<Run> runs(2);
  runs[0].policy = "pp";
  runs[1].policy = "fair";
  std::vector<std::string> labels;
  for (auto& [label, priority] : kPriorityStreams) labels.push_back(label);
  for (Run& run : runs) {
    for (auto& [label, priority] : kPriorityStreams) {
      Stream stream;
      stream.label = label;
      stream.priority = priority;
      run.streams.push_back(stream);
    }
    run.stop_after_ms = Scaled(4000);
  }
  RunExperiment("exp4_pp", labels, runs, [](auto&, auto&) {});
  const int n = static_cast<int>(kPriorityStreams.size());
  double priority_sum = 0;
  for (auto& [label, priority] : kPriorityStreams) priority_sum += priority;
  std::vector<std::vector<double>> shares;
  std::vector<std::vector<double>> window_medians;
  const int64_t window_ns = static_cast<int64_t>(g_flags.window_ms * 1e6);
  for (const Run& run : runs) {
    const RunWindow active = AllActive(run.streams, AllStreams(run.streams));
    std::vector<double> busy = BusyBetween(run.attribution, n, active.begin_ns, active.end_ns);
    const double total = std::max(1.0, std::accumulate(busy.begin(), busy.end(), 0.0));
    for (double& b : busy) b /= total;
    shares.push_back(busy);
    Timeline t = BuildTimeline(run.attribution, n, active.begin_ns, active.end_ns, window_ns);
    std::vector<double> medians;
    std::vector<int> windows = WindowsInside(t, active);
    for (int s = 0; s < n; ++s) {
      std::vector<double> per_window;
      for (int w : windows) per_window.push_back(t.Share(s, w));
      medians.push_back(Percentile(per_window, 0.5));
    }
    window_medians.push_back(medians);
  }
  std::vector<PredictionBias> pp_bias = ReplayPredictor(runs[0].attribution, n);
  std::vector<Idleness> pp_idle =
      IdlenessOf(runs[0].attribution, n, AllActive(runs[0].streams, AllStreams(runs[0].streams)));
  std::printf(
      "\n  CPU share while all three streams were active (pp act/pred: replayed LearningAgent bias; idle: no "
      "work order running)\n");
  std::printf("  %-6s %8s %9s | %8s %10s %13s %8s %8s %6s | %8s | %s\n", "stream", "priority", "expected", "pp",
              "pp/expect", "median/window", "queries", "act/pred", "idle", "fair", "goal");
  for (int s = 0; s < n; ++s) {
    const double expected = kPriorityStreams[s].second / priority_sum;
    std::printf("  %-6s %8d %9s | %8s %10.2f %13s %8zu %8.2f %6s | %8s | %s\n",
                Display(kPriorityStreams[s].first).c_str(), kPriorityStreams[s].second, Percent(expected).c_str(),
                Percent(shares[0][s]).c_str(), shares[0][s] / expected, Percent(window_medians[0][s]).c_str(),
                runs[0].streams[s].executions.size(), pp_bias[s].ActualOverPredicted(),
                Percent(pp_idle[s].no_work_order).c_str(), Percent(shares[1][s]).c_str(), "0.85-1.15 x expected");
  }
  for (const Run& run : runs) {
    PrintAttribution(run.attribution, run.streams);
    WriteStreamLogAndPlot("exp4_" + run.policy, "Exp 4: priorities 1, 2, 4, " + run.policy, run.attribution,
                          run.streams);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Experiment 5: a seeded Poisson stream of SSB queries at --load (0.9) of the workers' capacity, the same arrival
// sequence replayed under fcfs, srpt, ifsrpt and fair; per policy the latency of each query from its arrival.

struct Arrival {
  std::string label;
  int64_t offset_ns = 0;  // from the start of the run
};

// `count` queries drawn uniformly from the 13 SSB queries, arriving as a Poisson process of `rate_per_s` conditioned
// on its count: exponential inter-arrival times (the first arrival at 0), rescaled so that the last arrival is at
// (count - 1) / rate, which spreads the arrivals like sorted uniform times and makes every draw offer exactly the
// target load (a free draw of 300 arrivals misses it by +-6% at one standard deviation). mt19937_64's output is fixed
// by the standard and the transforms are explicit, so a seed gives the same queries and the same arrival times
// (for the same rate) with any standard library.
std::vector<Arrival> PoissonArrivals(uint64_t seed, int count, double rate_per_s) {
  std::mt19937_64 random(seed);
  auto unit = [&] { return static_cast<double>(random() >> 11) * 0x1.0p-53; };  // [0, 1)
  std::vector<Arrival> arrivals;
  std::vector<double> at;
  double sum = 0;
  for (int i = 0; i < count; ++i) {
    if (i > 0) sum += -std::log(1 - unit());
    at.push_back(sum);
    const size_t q = std::min(kAllQueries.size() - 1, static_cast<size_t>(unit() * kAllQueries.size()));
    arrivals.push_back({kAllQueries[q], 0});
  }
  const double scale = sum > 0 ? (count - 1) / rate_per_s / sum : 0;  // seconds per unit of the draw
  for (int i = 0; i < count; ++i) arrivals[i].offset_ns = static_cast<int64_t>(at[i] * scale * 1e9);
  return arrivals;
}

struct ArrivalOutcome {
  int64_t arrival_ns = 0;  // when the query was due
  int64_t call_ns = 0;     // when its client called Execute
  int64_t return_ns = 0;
  std::string error;
};

// Every arrival gets its own client thread and Session, created before the run; the thread sleeps until the
// arrival's time and then executes its query, so no arrival waits for another's client.
std::vector<ArrivalOutcome> RunArrivals(Database* database, const std::vector<Arrival>& arrivals) {
  std::vector<ArrivalOutcome> outcomes(arrivals.size());
  std::latch ready(static_cast<std::ptrdiff_t>(arrivals.size()) + 1);
  int64_t origin_ns = 0;         // written before `ready` opens, read after
  std::vector<std::string> sql;  // QuerySql's cache is not for concurrent use
  for (const Arrival& arrival : arrivals) sql.push_back(QuerySql(arrival.label));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    threads.emplace_back([&, i] {
      Session session(database);
      ready.arrive_and_wait();
      ArrivalOutcome& outcome = outcomes[i];
      outcome.arrival_ns = origin_ns + arrivals[i].offset_ns;
      const int64_t wait_ns = outcome.arrival_ns - MonotonicNanos();
      if (wait_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns));
      outcome.call_ns = MonotonicNanos();
      absl::StatusOr<QueryResult> result = session.Execute(sql[i]);
      outcome.return_ns = MonotonicNanos();
      if (!result.ok()) outcome.error = std::string(result.status().message());
    });
  }
  origin_ns = MonotonicNanos() + 20'000'000;  // leaves the threads time to wake up for the first arrival
  ready.arrive_and_wait();
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

struct LatencySummary {
  size_t queries = 0;
  int errors = 0;
  double duration_s = 0;  // first arrival -> last return
  double mean_ms = 0, median_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
  double short_mean_ms = 0, long_mean_ms = 0;  // Q1.x / the others
  size_t short_queries = 0, long_queries = 0;
  double mean_slowdown = 0;      // latency / the query's wall time alone
  double max_call_delay_ms = 0;  // client wake-up lateness (should be ~0)
  int64_t first_arrival_ns = 0, last_return_ns = 0;
  double work_order_ms = 0;  // Σ work-order durations in [first arrival, last return], from the log
  std::vector<std::pair<double, size_t>> slowest;  // (latency ms, arrival index), the 3 longest latencies
};

LatencySummary SummarizeLatencies(const std::vector<Arrival>& arrivals, const std::vector<ArrivalOutcome>& outcomes,
                                  const Calibrations& calibrations) {
  LatencySummary s;
  std::vector<double> all, short_ones, long_ones, slowdowns;
  int64_t first = INT64_MAX, last = 0;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const ArrivalOutcome& o = outcomes[i];
    if (!o.error.empty()) {
      ++s.errors;
      continue;
    }
    const double latency = Ms(o.return_ns - o.arrival_ns);
    all.push_back(latency);
    (arrivals[i].label.rfind("q1.", 0) == 0 ? short_ones : long_ones).push_back(latency);
    slowdowns.push_back(latency / std::max(0.01, calibrations.at(arrivals[i].label).alone_ms));
    s.max_call_delay_ms = std::max(s.max_call_delay_ms, Ms(o.call_ns - o.arrival_ns));
    first = std::min(first, o.arrival_ns);
    last = std::max(last, o.return_ns);
  }
  s.queries = all.size();
  s.duration_s = all.empty() ? 0 : Ms(last - first) / 1e3;
  s.first_arrival_ns = first;
  s.last_return_ns = last;
  s.mean_ms = Mean(all);
  s.median_ms = Percentile(all, 0.5);
  s.p95_ms = Percentile(all, 0.95);
  s.p99_ms = Percentile(all, 0.99);
  s.max_ms = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  s.short_mean_ms = Mean(short_ones);
  s.long_mean_ms = Mean(long_ones);
  s.short_queries = short_ones.size();
  s.long_queries = long_ones.size();
  s.mean_slowdown = Mean(slowdowns);
  for (size_t i = 0; i < arrivals.size(); ++i) {
    if (outcomes[i].error.empty()) s.slowest.push_back({Ms(outcomes[i].return_ns - outcomes[i].arrival_ns), i});
  }
  std::sort(s.slowest.rbegin(), s.slowest.rend());
  s.slowest.resize(std::min<size_t>(3, s.slowest.size()));
  return s;
}

// The pool's capacity in queries per second, measured: `clients` threads, each with its own Session, take queries
// from a shared list (every SSB query `rounds` times, shuffled with `seed`) until it is empty; completed queries /
// elapsed time. Concurrent queries run slower than alone (their work orders share caches and memory bandwidth), so
// this is what a queue of waiting queries actually gets.
double SaturationThroughput(Database* database, int clients, int rounds, uint64_t seed) {
  std::vector<std::string> work;
  for (int r = 0; r < rounds; ++r) work.insert(work.end(), kAllQueries.begin(), kAllQueries.end());
  std::mt19937_64 random(seed);
  for (size_t i = work.size() - 1; i > 0; --i) std::swap(work[i], work[random() % (i + 1)]);
  for (std::string& label : work) label = QuerySql(label);  // the SQL text, read here: the cache is not shared
  std::atomic<size_t> next{0};
  const int64_t begin = MonotonicNanos();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      Session session(database);
      for (size_t i = next.fetch_add(1); i < work.size(); i = next.fetch_add(1)) ExecuteOrDie(session, work[i]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return static_cast<double>(work.size()) / (Ms(MonotonicNanos() - begin) / 1e3);
}

// One replay of one arrival trace under one policy.
struct PolicyRun {
  double load = 0;
  uint64_t seed = 0;
  int round = 0;
  std::string policy;
  int position = 0;  // 0: the first policy of its trace's replays
  LatencySummary latency;
  RemainingEstimateError estimate_error;  // the run's share of the Foreman's totals
  // Means over the run's queries of the Foreman's part of their latency (submit -> finish) and of its wait before
  // the first dispatch (ForemanStats' query times); latency - the first = parsing, planning, the result's return.
  double scheduled_ms = 0;
  double first_dispatch_wait_ms = 0;
  double drawn_cpu_ms = 0;  // the trace's work-order time alone (warm-up)
};

RemainingEstimateError Minus(RemainingEstimateError after, const RemainingEstimateError& before) {
  for (int stage = 0; stage < RemainingEstimateError::kStages; ++stage) {
    after.count[stage] -= before.count[stage];
    after.sum_relative[stage] -= before.sum_relative[stage];
    after.sum_log2_ratio[stage] -= before.sum_log2_ratio[stage];
  }
  return after;
}

void AddInto(RemainingEstimateError* total, const RemainingEstimateError& e) {
  for (int stage = 0; stage < RemainingEstimateError::kStages; ++stage) {
    total->count[stage] += e.count[stage];
    total->sum_relative[stage] += e.sum_relative[stage];
    total->sum_log2_ratio[stage] += e.sum_log2_ratio[stage];
  }
}

// Σ work-order time of each run's [first arrival, last return], read from the log in one pass (the log of many
// runs is too large to hold).
void AddWorkOrderTime(const std::string& log, std::vector<PolicyRun>* runs) {
  std::ifstream in(log);
  if (!in) Die("cannot read the work-order log " + log);
  for (std::string line; std::getline(in, line);) {
    long long query, op, worker, start, end;
    if (std::sscanf(line.c_str(), "{\"query\":%lld,\"operator\":%lld,\"worker\":%lld,\"start_ns\":%lld,\"end_ns\":%lld",
                    &query, &op, &worker, &start, &end) != 5) {
      continue;
    }
    for (PolicyRun& run : *runs) {
      if (start >= run.latency.first_arrival_ns && end <= run.latency.last_return_ns) {
        run.latency.work_order_ms += Ms(end - start);
      }
    }
  }
}

void PrintPolicyRun(const PolicyRun& run, double fcfs_mean_ms, double fcfs_p99_ms, double fcfs_scheduled_ms) {
  const LatencySummary& s = run.latency;
  std::printf(
      "  %-8s %3d %6.1f | %8.1f %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f | %8.2f | %6.2f %6.2f | %5.2f %4.0f%% | "
      "%5.1f | %6.1f %6.1f %6.2f%s\n",
      run.policy.c_str(), run.position, s.duration_s, s.mean_ms, s.median_ms, s.p95_ms, s.p99_ms, s.max_ms,
      s.short_mean_ms, s.long_mean_ms, s.mean_slowdown, s.mean_ms / std::max(1e-9, fcfs_mean_ms),
      s.p99_ms / std::max(1e-9, fcfs_p99_ms), s.work_order_ms / std::max(1e-9, run.drawn_cpu_ms),
      s.duration_s > 0 ? 100 * s.work_order_ms / 1e3 / (s.duration_s * g_flags.workers) : 0.0, s.max_call_delay_ms,
      run.scheduled_ms, run.first_dispatch_wait_ms, run.scheduled_ms / std::max(1e-9, fcfs_scheduled_ms),
      s.errors ? " (errors)" : "");
}

void PrintEstimateError(const std::string& name, const RemainingEstimateError& e) {
  if (e.count[0] + e.count[1] + e.count[2] + e.count[3] == 0) return;
  std::printf("  %-8s", name.c_str());
  for (int stage = 0; stage < RemainingEstimateError::kStages; ++stage) {
    std::printf("  [%d-%d%%) %.2f x%.2f n=%lld", 25 * stage, 25 * (stage + 1), e.MeanRelative(stage),
                e.GeometricBias(stage), static_cast<long long>(e.count[stage]));
  }
  std::printf("\n");
}

// "median [min, max]" of the values.
std::string MedianSpread(std::vector<double> values) {
  if (values.empty()) return "-";
  std::sort(values.begin(), values.end());
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f [%.2f, %.2f]", Percentile(values, 0.5), values.front(), values.back());
  return text;
}

// What an ideal scheduler could do with the trace: the pool as one server (a query alone uses both workers) whose
// service time for a query is its wall time alone (warm-up), arrivals as in the trace; FCFS, and preemptive SRPT
// that knows every query's size exactly and switches at any instant. Mean and p99 of the latencies (ms). The
// ratio of the two is the most SRPT can gain on this trace's size distribution (SSB's sizes differ by about 3x, so
// less than on heavy-tailed workloads), a yardstick for the measured ratios.
struct SimulatedLatency {
  double fcfs_mean_ms = 0, fcfs_p99_ms = 0, srpt_mean_ms = 0, srpt_p99_ms = 0;
};

// `size_scale` multiplies every service time: 1 for the wall times alone; (1 / capacity) / the mean alone wall time
// for a server as fast as the capacity the rate was set from, so that its utilization is the run's load (the pool
// runs queries concurrently and sustains more than 1 / the mean alone wall time, so with unscaled sizes the model
// runs at a higher utilization than the engine, and its SRPT gains more than any scheduler could at the real load).
SimulatedLatency SimulateTrace(const std::vector<Arrival>& arrivals, const Calibrations& calibrations,
                               double size_scale = 1) {
  const size_t n = arrivals.size();
  std::vector<double> arrive(n), size(n), fcfs(n), srpt(n);
  for (size_t i = 0; i < n; ++i) {
    arrive[i] = Ms(arrivals[i].offset_ns);
    size[i] = calibrations.at(arrivals[i].label).alone_ms * size_scale;
  }
  double free_at = 0;
  for (size_t i = 0; i < n; ++i) {  // arrivals are in time order
    free_at = std::max(free_at, arrive[i]) + size[i];
    fcfs[i] = free_at - arrive[i];
  }
  std::vector<double> remaining = size;
  std::vector<size_t> waiting;
  double now = 0;
  size_t next = 0, done = 0;
  while (done < n) {
    if (waiting.empty()) now = std::max(now, arrive[next]);
    while (next < n && arrive[next] <= now) waiting.push_back(next++);
    const auto shortest = std::min_element(waiting.begin(), waiting.end(),
                                           [&](size_t a, size_t b) { return remaining[a] < remaining[b]; });
    const size_t job = *shortest;
    const double until = next < n ? std::min(now + remaining[job], arrive[next]) : now + remaining[job];
    remaining[job] -= until - now;
    now = until;
    if (remaining[job] <= 1e-9) {
      srpt[job] = now - arrive[job];
      waiting.erase(shortest);
      ++done;
    }
  }
  return {Mean(fcfs), Percentile(fcfs, 0.99), Mean(srpt), Percentile(srpt, 0.99)};
}

void Experiment5() {
  const std::vector<std::string>& policies = g_flags.arrival_policies;
  std::printf(
      "\n=== Experiment 5: seeded Poisson streams of the 13 SSB queries: fcfs (baseline) against %s; loads %s, "
      "seeds %s, %d round(s) ===\n",
      FLAGS_policies.c_str(), FLAGS_load.c_str(), FLAGS_seed.c_str(), g_flags.rounds);
  const std::string log = g_flags.log_dir + "/ssb_exp5_poisson.jsonl";
  std::unique_ptr<Database> database = OpenDatabase(Policy("fcfs"), log);
  const std::vector<WarmupExecution> warmups = WarmUp(database.get(), kAllQueries, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the log's writer flushes every 100 ms
  const Calibrations calibrations = Calibrate(ReadLog(log), warmups);
  for (const std::string& label : kAllQueries) {
    if (calibrations.count(label) == 0) Die("no warm-up work orders of " + label);
  }
  PrintCalibration(calibrations, kAllQueries);

  // The rate: load x the pool's capacity, by --load-basis
  //   throughput (default): the measured saturation throughput (SaturationThroughput, 4 clients, fcfs);
  //   wall: 1 / the mean wall time of a query alone (warm-up), the pool as one server running one query at a time;
  //   cpu:  workers / the mean work-order CPU time of a query alone (every worker busy all the time).
  // Queries are drawn uniformly from the 13, so "mean" is over the 13. Measured once: every replay of a trace (and
  // every round) then has the same arrival times.
  double mean_cpu_ms = 0, mean_alone_ms = 0;
  for (const std::string& label : kAllQueries) {
    mean_cpu_ms += calibrations.at(label).busy_ms / static_cast<double>(kAllQueries.size());
    mean_alone_ms += calibrations.at(label).alone_ms / static_cast<double>(kAllQueries.size());
  }
  const double saturation = SaturationThroughput(database.get(), 4, 3, g_flags.seeds.front());
  const double capacity = g_flags.load_basis == "cpu"    ? g_flags.workers / (mean_cpu_ms / 1e3)
                          : g_flags.load_basis == "wall" ? 1 / (mean_alone_ms / 1e3)
                                                         : saturation;
  std::printf(
      "\n  capacity: saturation throughput %.2f queries/s (4 clients, fcfs); 1 / mean alone wall time %.2f/s "
      "(%.1f ms); workers / mean work-order CPU %.2f/s (%.1f ms); basis %s\n",
      saturation, 1e3 / mean_alone_ms, mean_alone_ms, g_flags.workers * 1e3 / mean_cpu_ms, mean_cpu_ms,
      g_flags.load_basis.c_str());

  // Each round replays every (load, seed) trace under every policy; the policies' order rotates by one per trace
  // and round, so no policy always runs first (on a warmer or quieter machine) or right after the same one.
  std::vector<PolicyRun> runs;
  int trace = 0;
  for (int round = 0; round < g_flags.rounds; ++round) {
    for (double load : g_flags.loads) {
      for (uint64_t seed : g_flags.seeds) {
        const double rate = load * capacity;
        const std::vector<Arrival> arrivals = PoissonArrivals(seed, g_flags.arrivals, rate);
        double drawn_cpu_ms = 0;
        for (const Arrival& a : arrivals) drawn_cpu_ms += calibrations.at(a.label).busy_ms;
        const double span_s = Ms(arrivals.back().offset_ns) / 1e3;
        const SimulatedLatency ideal = SimulateTrace(arrivals, calibrations);
        const SimulatedLatency at_load = SimulateTrace(arrivals, calibrations, 1e3 / capacity / mean_alone_ms);
        std::printf(
            "\n  round %d, load %.2f, seed %llu: %.2f arrivals/s over %.1f s (%.0f%% of the workers' CPU alone); ideal "
            "one-server model: fcfs mean %.1f p99 %.1f ms, exact preemptive srpt mean %.1f (x%.2f) p99 %.1f (x%.2f)\n",
            round, load, static_cast<unsigned long long>(seed), rate, span_s,
            span_s > 0 ? 100 * drawn_cpu_ms / 1e3 / (span_s * g_flags.workers) : 0.0, ideal.fcfs_mean_ms,
            ideal.fcfs_p99_ms, ideal.srpt_mean_ms, ideal.srpt_mean_ms / std::max(1e-9, ideal.fcfs_mean_ms),
            ideal.srpt_p99_ms, ideal.srpt_p99_ms / std::max(1e-9, ideal.fcfs_p99_ms));
        std::printf(
            "    the same model at the run's load (sizes x%.2f, mean = 1 / capacity): fcfs mean %.1f p99 %.1f ms, srpt "
            "mean %.1f (x%.2f) p99 %.1f (x%.2f)\n",
            1e3 / capacity / mean_alone_ms, at_load.fcfs_mean_ms, at_load.fcfs_p99_ms, at_load.srpt_mean_ms,
            at_load.srpt_mean_ms / std::max(1e-9, at_load.fcfs_mean_ms), at_load.srpt_p99_ms,
            at_load.srpt_p99_ms / std::max(1e-9, at_load.fcfs_p99_ms));
        std::fflush(stdout);
        for (size_t k = 0; k < policies.size(); ++k) {
          PolicyRun run;
          run.load = load;
          run.seed = seed;
          run.round = round;
          run.position = static_cast<int>(k);
          run.policy = policies[(k + static_cast<size_t>(trace)) % policies.size()];
          run.drawn_cpu_ms = drawn_cpu_ms;
          SwitchPolicy(database.get(), run.policy);
          const ForemanStats before = *database->foreman().GetStats();
          const RemainingEstimateError& errors_before = before.remaining_estimate_error;
          const std::vector<ArrivalOutcome> outcomes = RunArrivals(database.get(), arrivals);
          const ForemanStats after = *database->foreman().GetStats();
          run.estimate_error = Minus(after.remaining_estimate_error, errors_before);
          const double finished =
              static_cast<double>(std::max<int64_t>(1, after.finished_queries - before.finished_queries));
          run.scheduled_ms = Ms(after.sum_submit_to_finish_ns - before.sum_submit_to_finish_ns) / finished;
          run.first_dispatch_wait_ms =
              Ms(after.sum_submit_to_first_dispatch_ns - before.sum_submit_to_first_dispatch_ns) / finished;
          for (const ArrivalOutcome& o : outcomes) {
            if (!o.error.empty())
              std::printf("  !! a query failed under %s: %s\n", run.policy.c_str(), o.error.c_str());
          }
          run.latency = SummarizeLatencies(arrivals, outcomes, calibrations);
          runs.push_back(std::move(run));
          std::this_thread::sleep_for(std::chrono::milliseconds(500));  // drained; a pause between policies
        }
        ++trace;
      }
    }
  }
  database.reset();  // completes the log
  AddWorkOrderTime(log, &runs);

  // Per trace and round: every policy's run against the fcfs run of the same trace and round.
  auto fcfs_of = [&](const PolicyRun& run) -> const PolicyRun& {
    for (const PolicyRun& other : runs) {
      if (other.policy == "fcfs" && other.load == run.load && other.seed == run.seed && other.round == run.round)
        return other;
    }
    Die("no fcfs run");
  };
  std::printf(
      "\n  latency = arrival -> result, ms; short = Q1.x, long = Q2.x-Q4.x; slowdown = latency / alone; pos = the "
      "policy's place in its trace's replays; interference = work-order time of the run / the same queries alone, "
      "busy = of the workers' time; wake = the latest a client called Execute after its arrival, ms; sched = mean "
      "submit -> finish in the Foreman (the part a scheduling policy can reorder), 1st = of that, mean wait before "
      "the first dispatch, sched/F = against fcfs's\n");
  std::printf("  %-8s %3s %6s | %8s %8s %8s %8s %8s | %8s %8s | %8s | %6s %6s | %5s %5s | %5s | %6s %6s %6s\n",
              "policy", "pos", "run s", "mean", "median", "p95", "p99", "max", "short", "long", "slowdown", "mean/F",
              "p99/F", "intf", "busy", "wake", "sched", "1st", "sched/F");
  for (const PolicyRun& run : runs) {
    if (run.position == 0)
      std::printf("  -- round %d, load %.2f, seed %llu\n", run.round, run.load,
                  static_cast<unsigned long long>(run.seed));
    const PolicyRun& fcfs = fcfs_of(run);
    PrintPolicyRun(run, fcfs.latency.mean_ms, fcfs.latency.p99_ms, fcfs.scheduled_ms);
  }

  std::printf(
      "\n  summary per load: median [min, max] over seeds and rounds of mean / fcfs's mean and p99 / fcfs's p99 (same "
      "trace, same round); goal: mean <= 0.75, p99 <= 2\n");
  for (double load : g_flags.loads) {
    for (const std::string& policy : policies) {
      if (policy == "fcfs") continue;
      std::vector<double> mean_ratio, p99_ratio, scheduled_ratio;
      int wins = 0;
      for (const PolicyRun& run : runs) {
        if (run.policy != policy || run.load != load) continue;
        const PolicyRun& fcfs = fcfs_of(run);
        mean_ratio.push_back(run.latency.mean_ms / std::max(1e-9, fcfs.latency.mean_ms));
        p99_ratio.push_back(run.latency.p99_ms / std::max(1e-9, fcfs.latency.p99_ms));
        scheduled_ratio.push_back(run.scheduled_ms / std::max(1e-9, fcfs.scheduled_ms));
        wins += mean_ratio.back() <= 0.75 && p99_ratio.back() <= 2;
      }
      std::printf("  load %.2f %-13s mean/fcfs %-22s p99/fcfs %-22s sched/fcfs %-22s goal met in %d of %zu\n", load,
                  policy.c_str(), MedianSpread(mean_ratio).c_str(), MedianSpread(p99_ratio).c_str(),
                  MedianSpread(scheduled_ratio).c_str(), wins, mean_ratio.size());
    }
    std::vector<double> fcfs_means;
    for (const PolicyRun& run : runs) {
      if (run.policy == "fcfs" && run.load == load) fcfs_means.push_back(run.latency.mean_ms);
    }
    std::printf("  load %.2f fcfs     mean ms %s\n", load, MedianSpread(fcfs_means).c_str());
  }

  std::printf(
      "\n  remaining-time estimates of srpt / ifsrpt against the work-order time that followed, by the stage of the "
      "query's life (its work-order time so far / its total), over all runs: mean |estimate - actual| / actual, "
      "geometric mean of estimate / actual, samples\n");
  for (const std::string& policy : policies) {
    RemainingEstimateError total;
    for (const PolicyRun& run : runs) {
      if (run.policy == policy) AddInto(&total, run.estimate_error);
    }
    PrintEstimateError(policy, total);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Experiment 6: the load controller (dissertation §3.8.8, Fig. 3.10). Priority-1 streams of Q3.1 and Q2.1 loop
// under hpf; a priority-5 Q4.1 arrives twice. With admission control on, the threshold M is set so that both
// low-priority queries fit with all they may claim, and the high-priority one fits only if the larger of them
// gives back what it has not allocated yet: each arrival suspends it, and it resumes when Q4.1 is done. The
// baseline is the same run with admission control off.

const std::vector<std::string> kMemoryLowQueries = {"q3.1", "q2.1"};
const std::string kMemoryHighQuery = "q4.1";

QueryMemoryEstimate EstimateMemory(Database* database, const std::string& sql) {
  absl::StatusOr<QueryMemoryEstimate> estimate = EstimateQueryMemory(*database, sql);
  if (!estimate.ok()) Die("memory estimate: " + std::string(estimate.status().message()));
  return *estimate;
}

double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

void Experiment6() {
  std::printf(
      "\n=== Experiment 6: load controller, hpf: priority-1 %s and %s streams, a priority-5 %s arrives "
      "twice (baseline: admission control off) ===\n",
      Display(kMemoryLowQueries[0]).c_str(), Display(kMemoryLowQueries[1]).c_str(), Display(kMemoryHighQuery).c_str());
  std::vector<Run> runs(2);
  const int hp = static_cast<int>(kMemoryLowQueries.size());
  std::map<std::string, std::vector<std::vector<Value>>> expected;  // each query's rows, run alone
  int64_t threshold_bytes = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    Run& run = runs[r];
    run.policy = "hpf";
    AddArrivalStreams(run, kMemoryLowQueries, kMemoryHighQuery, 5, 2);
    const bool controlled = r == 0;
    run.before = [&, controlled](Database* database, Run& self) {
      if (expected.empty()) {
        Session session(database);
        for (const Stream& stream : self.streams) {
          expected[stream.label] = ExecuteOrDie(session, QuerySql(stream.label)).rows;
        }
      }
      for (Stream& stream : self.streams) stream.expected_rows = &expected.at(stream.label);
      if (!controlled) {
        absl::Status off = database->foreman().SetLoadControl(0, 1.0);
        if (!off.ok()) Die(std::string(off.message()));
        return;
      }
      // M = what is in use now (the database) + both low-priority queries' max + half the high one's min.
      const int64_t used = static_cast<int64_t>(database->buffer_pool().Usage().used_bytes);
      const int64_t budget = static_cast<int64_t>(database->buffer_pool().budget_bytes());
      int64_t low_max = 0;
      std::printf("  estimates:");
      for (const Stream& stream : self.streams) {
        const QueryMemoryEstimate estimate = EstimateMemory(database, QuerySql(stream.label));
        std::printf(" %s min %.1f / max %.1f MiB;", Display(stream.label).c_str(), MiB(estimate.min_bytes),
                    MiB(estimate.max_bytes));
        if (stream.priority == 1) low_max += estimate.max_bytes;
        if (stream.priority > 1) threshold_bytes = estimate.min_bytes / 2;
      }
      threshold_bytes += used + low_max;
      std::printf(" in use %.1f MiB -> M = %.1f MiB of a %.1f MiB budget\n", MiB(used), MiB(threshold_bytes),
                  MiB(budget));
      absl::Status on =
          database->foreman().SetLoadControl(static_cast<double>(threshold_bytes) / static_cast<double>(budget), 1.0);
      if (!on.ok()) Die(std::string(on.message()));
    };
  }
  std::vector<std::string> labels = kMemoryLowQueries;
  labels.push_back(kMemoryHighQuery);
  RunExperiment("exp6_load_control", labels, runs, [](auto&, auto&) {});

  const char* names[2] = {"admission on", "admission off"};
  std::printf("\n  %-52s | %16s | %16s\n", "", names[0], names[1]);
  auto row = [&](const std::string& name, const std::string& a, const std::string& b) {
    std::printf("  %-52s | %16s | %16s\n", name.c_str(), a.c_str(), b.c_str());
  };
  auto fmt = [](const char* format, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), format, value);
    return std::string(buffer);
  };
  row("suspensions (goal: one per high-priority arrival)", fmt("%.0f", runs[0].suspensions),
      fmt("%.0f", runs[1].suspensions));
  row("pool's peak use, MiB (threshold M = " + fmt("%.1f", MiB(threshold_bytes)) + ")",
      fmt("%.1f", MiB(runs[0].peak_used_bytes)), fmt("%.1f", MiB(runs[1].peak_used_bytes)));
  for (int i = 0; i < 2; ++i) {
    auto latency = [&](const Run& run) {
      const auto& executions = run.streams[hp].executions;
      return i < static_cast<int>(executions.size()) ? fmt("%.1f", Ms(executions[i].return_ns - executions[i].call_ns))
                                                     : std::string("-");
    };
    row(Display(kMemoryHighQuery) + " arrival " + std::to_string(i + 1) + ": latency ms", latency(runs[0]),
        latency(runs[1]));
  }
  const int n = hp + 1;
  for (int s = 0; s < hp; ++s) {
    auto cpu = [&](const Run& run, int phase) {
      const Stream& high = run.streams[hp];
      if (high.executions.size() < 2) return std::string("-");
      // Phases: before the first arrival, during the two high-priority executions, after the second.
      int64_t from = run.window.begin_ns, to = high.executions[0].call_ns;
      if (phase == 1) {
        from = high.executions[0].call_ns;
        to = high.executions[1].return_ns;
      } else if (phase == 2) {
        from = high.executions[1].return_ns;
        to = run.window.end_ns;
      }
      std::vector<double> busy = BusyBetween(run.attribution, n, from, to);
      return Percent(to > from ? busy[s] / (static_cast<double>(to - from) * g_flags.workers) : 0.0);
    };
    for (int phase = 0; phase < 3; ++phase) {
      static const char* kPhase[3] = {"before", "during the arrivals", "after"};
      row(Display(kMemoryLowQueries[s]) + " stream CPU (of capacity), " + kPhase[phase], cpu(runs[0], phase),
          cpu(runs[1], phase));
    }
  }
  for (int s = 0; s < n; ++s) {
    auto answers = [&](const Run& run) {
      return fmt("%.0f", run.streams[s].executions.size()) + " / " + fmt("%.0f", run.streams[s].wrong_answers) +
             " wrong";
    };
    row(Display(runs[0].streams[s].label) + " executions / wrong answers", answers(runs[0]), answers(runs[1]));
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    PrintAttribution(runs[r].attribution, runs[r].streams);
    WriteStreamLogAndPlot(r == 0 ? "exp6_admission_on" : "exp6_admission_off",
                          std::string("Exp 6: load control, hpf, ") + names[r], runs[r].attribution, runs[r].streams);
  }
}

// ---------------------------------------------------------------------------------------------------------------

constexpr char kUsage[] =
    "SSB scheduling-policy experiments: fair CPU shares, priorities, SRPT on a Poisson stream, load control.\n"
    "usage: ssb_policy_experiments --data DIR [--sf 1] [--workers 2] [--experiments 1,2,3,4] "
    "[--policies fcfs,srpt,ifsrpt,fair] [--time-slice-us 0] [--scan-sharing off|full|batch] ...\n"
    "--log-dir DIR (glog's flag): where the work-order logs and plots go (default: DATA/scheduler-logs).";

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  return items;
}

// Parses the command line with gflags and copies the flags into g_flags; dies on a bad value.
void ParseFlags(int argc, char** argv) {
  bench::ParseCommandLine(&argc, &argv, kUsage, __FILE__);
  if (argc > 1) Die(std::string("unexpected argument ") + argv[1] + " (see --help)");
  g_flags.data_dir = FLAGS_data;
  g_flags.sf = FLAGS_sf;
  g_flags.workers = FLAGS_workers;
  g_flags.dispatch_run_ns = std::max<int64_t>(0, FLAGS_time_slice_us) * 1000;
  g_flags.target_pending_ns = std::max<int64_t>(1, FLAGS_worker_queue_us) * 1000;
  if (!ParseScanSharing(FLAGS_scan_sharing, &g_flags.scan_sharing)) Die("--scan-sharing takes off, full or batch");
  g_flags.log_dir = FLAGS_log_dir;
  g_flags.window_ms = FLAGS_window_ms;
  g_flags.plot_window_ms = FLAGS_plot_window_ms;
  g_flags.scale = FLAGS_scale;
  g_flags.memory_mb = static_cast<size_t>(std::max<int64_t>(0, FLAGS_memory_mb));
  g_flags.experiments.clear();
  for (const std::string& item : SplitList(FLAGS_experiments)) g_flags.experiments.insert(std::atoi(item.c_str()));
  g_flags.keep_tbl = FLAGS_keep_tbl;
  g_flags.ssb_dir = FLAGS_ssb_dir;
  g_flags.plot_script = FLAGS_plot_script;
  g_flags.seeds.clear();
  for (const std::string& item : SplitList(FLAGS_seed))
    g_flags.seeds.push_back(std::strtoull(item.c_str(), nullptr, 10));
  g_flags.loads.clear();
  for (const std::string& item : SplitList(FLAGS_load)) g_flags.loads.push_back(std::atof(item.c_str()));
  g_flags.rounds = FLAGS_rounds;
  g_flags.arrivals = FLAGS_arrivals;
  g_flags.load_basis = FLAGS_load_basis;
  g_flags.arrival_policies = SplitList(FLAGS_policies);
  g_flags.exp2_queries = SplitList(FLAGS_exp2_queries);
  if (g_flags.exp2_queries.size() != 2 || g_flags.exp2_queries[0] == g_flags.exp2_queries[1])
    Die("--exp2-queries takes two different SSB queries, e.g. q1.1,q4.1");
  if (FLAGS_prediction == PredictionScopeName(PredictionScope::kNextOperator)) {
    g_flags.prediction = PredictionScope::kNextOperator;
  } else if (FLAGS_prediction == PredictionScopeName(PredictionScope::kPooled)) {
    g_flags.prediction = PredictionScope::kPooled;
  } else {
    Die("--prediction must be next-operator or pooled");
  }
  if (g_flags.data_dir.empty()) Die("--data DIR is required");
  if (g_flags.sf <= 0 || g_flags.workers < 1 || g_flags.window_ms <= 0 || g_flags.scale <= 0) Die("bad flag value");
  if (g_flags.arrivals < 1 || g_flags.seeds.empty() || g_flags.loads.empty() || g_flags.rounds < 1 ||
      *std::min_element(g_flags.loads.begin(), g_flags.loads.end()) <= 0 ||
      (g_flags.load_basis != "throughput" && g_flags.load_basis != "wall" && g_flags.load_basis != "cpu"))
    Die("bad flag value");
  if (std::find(g_flags.arrival_policies.begin(), g_flags.arrival_policies.end(), "fcfs") ==
      g_flags.arrival_policies.end())
    Die("--policies must include fcfs (the baseline)");
  if (g_flags.log_dir.empty()) g_flags.log_dir = g_flags.data_dir + "/scheduler-logs";
  fs::create_directories(g_flags.data_dir);
  fs::create_directories(g_flags.log_dir);
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  using namespace tessera;
  ParseFlags(argc, argv);
  std::printf(
      "SSB scheduling-policy experiments: SF %s, %d workers, %g ms windows, %s predictions, logs in "
      "%s\n",
      SfName().c_str(), g_flags.workers, g_flags.window_ms, PredictionScopeName(g_flags.prediction),
      g_flags.log_dir.c_str());
  PrepareData();
  if (g_flags.experiments.count(1)) Experiment1();
  if (g_flags.experiments.count(2)) Experiment2();
  if (g_flags.experiments.count(3)) Experiment3();
  if (g_flags.experiments.count(4)) Experiment4();
  if (g_flags.experiments.count(5)) Experiment5();
  if (g_flags.experiments.count(6)) Experiment6();
  return 0;
}
