// The scheduling-policy experiments of the Quickstep dissertation (§3.8.3-3.8.6) on real SSB queries: client
// threads, each with its own Session, submit queries to the database's one Foreman while its work-order log
// records every work order; the CPU share of every client stream is computed from that log afterwards.
//
//   1. fair, the 13 SSB queries concurrently (baseline: static 1/N): spread of the CPU shares, and how the CPU
//      is redistributed as streams finish.
//   2. Q1.1 and Q4.1 streams under fair (learning agent) and under static 1/N: CPU ratio and throughput.
//   3. hpf: priority-1 streams, then a priority-10 query mid-run (baseline: fair).
//   4. pp: streams at priorities 1, 2, 4 (baseline: fair).
//
// CPU share of a stream in a window = Σ of the durations of its work orders inside the window / total busy time
// of all streams in the window. A stream is active from its first Execute call to its last return; the summary
// figures use only windows in which every stream of the run is active. Work orders are attributed to streams by
// time (the query's first and last work order must lie inside one of the stream's Execute calls) and, where that
// is ambiguous, by the query's signature (work orders and rows per operator) learned from a sequential warm-up.
//
// This is a benchmark: it prints figures next to the goals and baselines and never asserts timings.
//
// Usage: ssb_policy_experiments --data DIR [--sf 1] [--workers 2] [--log-dir DIR] [--window-ms 20]
//          [--plot-window-ms 100] [--scale 1] [--experiments 1,2,3,4] [--memory-mb 4096] [--keep-tbl]

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
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "benchmarks/ssb_generator/ssb_generator.h"
#include "cli/session.h"
#include "common/clock.h"
#include "scheduler/policy.h"

#ifndef TESSERA_SSB_DIR
#define TESSERA_SSB_DIR "benchmarks/ssb"
#endif
#ifndef TESSERA_PLOT_SCRIPT
#define TESSERA_PLOT_SCRIPT "benchmarks/scheduler/plot_cpu_share.py"
#endif

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
      QueryResult result = ExecuteOrDie(session, "COPY " + table + " FROM '" + fs::absolute(TblDir()).string() +
                                                     "/" + table + ".tbl' (DELIMITER '|')");
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
  int iterations = 0;         // > 0: exactly this many; 0: until the run is stopped
  int64_t start_after_ms = 0;  // from the start of the run
  // Filled by the run.
  std::vector<Execution> executions;
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
// `stop_after_ms` from the start, or (when `stop_after_stream` >= 0) until `linger_ms` after that stream's last
// query returned.
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
      }
      finished[s].store(true);
      done_marker.fetch_add(1);
    });
  }
  ready.arrive_and_wait();
  window.begin_ns = MonotonicNanos();
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
    distance += std::abs(static_cast<double>(ia->second.first - ib->second.first));
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
  std::printf("  warm-up (alone, %d workers): %-6s %9s %9s %7s %10s %10s %5s\n", g_flags.workers, "query",
              "wall ms", "CPU ms", "WOs", "mean WO ms", "max WO ms", "ops");
  for (const std::string& label : labels) {
    const Calibration& c = calibrations.at(label);
    std::printf("  %29s %-6s %9.1f %9.1f %7lld %10.3f %10.2f %5d\n", "", Display(label).c_str(), c.alone_ms,
                c.busy_ms, static_cast<long long>(c.work_orders),
                c.work_orders ? c.busy_ms / static_cast<double>(c.work_orders) : 0.0, c.max_work_order_ms,
                c.operators);
  }
}

// A work order of the log attributed to a client stream.
struct StreamWorkOrder {
  int stream;
  LogRecord record;
};

struct Attribution {
  std::vector<StreamWorkOrder> work_orders;  // of the run, attributed
  int64_t queries = 0;
  int64_t unattributed_queries = 0;
  int64_t by_signature = 0;  // queries whose stream the time alone did not decide
};

Attribution Attribute(const std::vector<LogRecord>& records, const RunWindow& run,
                      const std::vector<Stream>& streams, const Calibrations& calibrations) {
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
  double Utilization(int w) const { return total[w] / (static_cast<double>(window_ns) * g_flags.workers); }
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
// Logs for plot_cpu_share.py: the run's work orders with the stream number (1-based) as the query, so that the
// plot shows one line per client stream instead of one per executed query.

std::string WriteStreamLogAndPlot(const std::string& name, const std::string& title, const Attribution& attribution,
                                  const std::vector<Stream>& streams) {
  const std::string log = g_flags.log_dir + "/ssb_" + name + ".streams.jsonl";
  const std::string svg = g_flags.log_dir + "/ssb_" + name + ".svg";
  {
    std::ofstream out(log);
    for (const StreamWorkOrder& wo : attribution.work_orders) {
      out << "{\"query\":" << wo.stream + 1 << ",\"operator\":" << wo.record.op
          << ",\"worker\":" << wo.record.worker << ",\"start_ns\":" << wo.record.start_ns
          << ",\"end_ns\":" << wo.record.end_ns << ",\"rows\":" << wo.record.rows << "}\n";
    }
  }
  std::string legend;
  for (size_t s = 0; s < streams.size(); ++s) {
    legend += (s ? ", " : "") + std::to_string(s + 1) + "=" + Display(streams[s].label);
    if (streams[s].priority != 1) legend += "/p" + std::to_string(streams[s].priority);
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

void PrintAttribution(const Attribution& a) {
  std::printf("  attribution: %lld queries in the log, %lld decided by signature, %lld unattributed\n",
              static_cast<long long>(a.queries), static_cast<long long>(a.by_signature),
              static_cast<long long>(a.unattributed_queries));
}

PolicyOptions Policy(const std::string& name) {
  absl::StatusOr<PolicyOptions> policy = ParsePolicy(name);
  if (!policy.ok()) Die("policy " + name);
  return *policy;
}

void SwitchPolicy(Database* database, const std::string& name) {
  absl::Status status = database->foreman().SetPolicy(Policy(name));
  if (!status.ok()) Die("SetPolicy: " + std::string(status.message()));
}

int64_t Scaled(double ms) { return static_cast<int64_t>(ms * g_flags.scale); }

const std::vector<std::string> kAllQueries = {"q1.1", "q1.2", "q1.3", "q2.1", "q2.2", "q2.3", "q3.1",
                                              "q3.2", "q3.3", "q3.4", "q4.1", "q4.2", "q4.3"};

