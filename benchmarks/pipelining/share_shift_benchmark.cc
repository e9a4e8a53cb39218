// How fast a running query's share of the workers follows the policy when a second query arrives and when it
// leaves (issue #14: "after a second query arrives, the first query's worker share reaches its new policy share
// within 20 ms"), for each SET pipelining mode, from the Foreman's work-order log.
//
//   share_shift_benchmark --data ~/.cache/tessera/tpch-sf1-tessera [--first q09 --second q01 --arrival_ms 400]
//
// Each round: session A runs --first; --arrival_ms later session B runs --second (fair policy, both priority 1, so
// A's policy share drops from all workers to half). From the log (work orders' start and end, monotonic ns):
//   - B's first dispatch: B's first work order start - the time B's Execute was called (planning included);
//   - shrink: from B's first work order until A's share of the busy worker time in a --window_ms window is within
//     0.1 of its policy share (0.5 with two queries under fair);
//   - A's share of the busy time over the whole overlap of the two;
//   - grow back: from B's last work order's end until A keeps at least 90% of the workers busy over a window.
// `--depths` compares the Foreman's dispatch depth rules (ForemanOptions::pending_by_count): `time` (a worker's queue
// holds about target_pending_ns of predicted work) and `count` (the rule before: ceil(target / the mean work-order
// time) work orders, at least 2). Each round opens the database once per depth (its own log) and runs every mode in
// it, so depths and modes alternate; medians, 90th percentiles and maxima are printed side by side.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "benchmarks/command_line_flags.h"
#include "common/clock.h"
#include "engine/session.h"

DEFINE_string(data, "", "a loaded TPC-H data directory (e.g. ~/.cache/tessera/tpch-sf1-tessera); required");
DEFINE_string(queries_dir, "/work/shared/benchmarks/tpch/queries", "folder of the query files (q01.sql, ...)");
DEFINE_string(first, "q09", "the running query");
DEFINE_string(second, "q01", "the query that arrives");
DEFINE_string(modes, "eager,elastic", "SET pipelining modes, compared side by side");
DEFINE_int32(rounds, 3, "rounds per mode");
DEFINE_int32(workers, 2, "worker threads");
DEFINE_double(arrival_ms, 400, "when the second query arrives, after the first started");
DEFINE_double(window_ms, 5, "window of the share measurement");
DEFINE_string(log, "/tmp/share_shift_benchmark",
              "prefix of the work-order logs written and read back (PREFIX_<depth>.jsonl)");
DEFINE_string(depths, "time",
              "the Foreman's dispatch depth rules to compare: time, time:N (at least N work orders per worker), count "
              "(ForemanOptions::pending_by_count)");

namespace tessera {
namespace {

struct LogRecord {
  int64_t query;
  int64_t start_ns;
  int64_t end_ns;
};

struct Round {
  std::string depth;
  std::string mode;
  int64_t begin_ns = 0;    // A's Execute call
  int64_t arrival_ns = 0;  // B's Execute call
  int64_t end_ns = 0;
  double first_ms = 0;  // A's and B's statement times
  double second_ms = 0;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "share_shift_benchmark: %s\n", message.c_str());
  std::exit(2);
}

std::string QuerySql(const std::string& name) {
  std::ifstream in(FLAGS_queries_dir + "/" + name + ".sql");
  if (!in) Die("cannot read " + FLAGS_queries_dir + "/" + name + ".sql");
  std::string sql((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!sql.empty() && (sql.back() == '\n' || sql.back() == ';' || sql.back() == ' ')) sql.pop_back();
  return sql;
}

double Execute(Session& session, const std::string& sql) {
  const int64_t start = MonotonicNanos();
  absl::StatusOr<QueryResult> result = session.Execute(sql);
  if (!result.ok()) Die(sql.substr(0, 60) + ": " + std::string(result.status().message()));
  return static_cast<double>(MonotonicNanos() - start) / 1e6;
}

std::vector<LogRecord> ReadLog(const std::string& path) {
  std::vector<LogRecord> records;
  std::ifstream in(path);
  if (!in) Die("cannot read the work-order log " + path);
  for (std::string line; std::getline(in, line);) {
    long long query, op, worker, start, end;
    if (std::sscanf(line.c_str(), "{\"query\":%lld,\"operator\":%lld,\"worker\":%lld,\"start_ns\":%lld,\"end_ns\":%lld",
                    &query, &op, &worker, &start, &end) == 5) {
      records.push_back({query, start, end});
    }
  }
  return records;
}

// Busy ns of `query`'s work orders inside [from, to).
double BusyIn(const std::vector<LogRecord>& records, int64_t query, int64_t from, int64_t to) {
  double busy = 0;
  for (const LogRecord& r : records) {
    if (r.query != query || r.end_ns <= from || r.start_ns >= to) continue;
    busy += static_cast<double>(std::min(r.end_ns, to) - std::max(r.start_ns, from));
  }
  return busy;
}

struct Measured {
  double first_dispatch_ms = -1;
  double shrink_ms = -1;  // -1: never within the run
  double grow_ms = -1;
  double overlap_share = -1;  // A's share of the busy time while both ran
};

Measured Measure(const std::vector<LogRecord>& all, const Round& round) {
  std::vector<LogRecord> records;
  for (const LogRecord& r : all) {
    if (r.start_ns >= round.begin_ns && r.end_ns <= round.end_ns) records.push_back(r);
  }
  std::map<int64_t, std::pair<int64_t, int64_t>> span;  // query -> first start, last end
  for (const LogRecord& r : records) {
    auto [it, fresh] = span.try_emplace(r.query, r.start_ns, r.end_ns);
    it->second.first = std::min(it->second.first, r.start_ns);
    it->second.second = std::max(it->second.second, r.end_ns);
  }
  int64_t a = -1, b = -1;
  for (const auto& [query, s] : span) {
    if (s.first < round.arrival_ns && (a < 0 || s.first < span[a].first)) a = query;
    if (s.first >= round.arrival_ns && (b < 0 || s.first < span[b].first)) b = query;
  }
  Measured m;
  if (a < 0 || b < 0) return m;
  const int64_t window = static_cast<int64_t>(FLAGS_window_ms * 1e6);
  const int64_t step = 250'000;
  const int64_t b_first = span[b].first, b_last = span[b].second, a_last = span[a].second;
  m.first_dispatch_ms = static_cast<double>(b_first - round.arrival_ns) / 1e6;
  const int64_t overlap_end = std::min(b_last, a_last);
  if (overlap_end > b_first) {
    const double busy_a = BusyIn(records, a, b_first, overlap_end), busy_b = BusyIn(records, b, b_first, overlap_end);
    m.overlap_share = busy_a / std::max(1.0, busy_a + busy_b);
  }
  for (int64_t t = b_first; t + window <= std::min(b_last, a_last); t += step) {
    const double busy_a = BusyIn(records, a, t, t + window), busy_b = BusyIn(records, b, t, t + window);
    if (busy_a + busy_b > 0 && std::abs(busy_a / (busy_a + busy_b) - 0.5) <= 0.1) {
      m.shrink_ms = static_cast<double>(t - b_first) / 1e6;
      break;
    }
  }
  for (int64_t t = b_last; t + window <= a_last; t += step) {
    if (BusyIn(records, a, t, t + window) >= 0.9 * FLAGS_workers * static_cast<double>(window)) {
      m.grow_ms = static_cast<double>(t - b_last) / 1e6;
      break;
    }
  }
  return m;
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

constexpr double kNever = 1e12;

std::string ShrinkText(double ms) {
  if (ms >= kNever) return "never";
  char text[16];
  std::snprintf(text, sizeof(text), "%.2f", ms);
  return text;
}

std::string LogPath(const std::string& depth) { return FLAGS_log + "_" + depth + ".jsonl"; }

// One round of every mode in a database opened with the depth rule `depth` (its own log, appended).
void RunRound(const std::string& depth, const std::vector<std::string>& modes, const std::string& first,
              const std::string& second, bool warm_up, std::vector<Round>* rounds) {
  DatabaseOptions options;
  options.data_directory = FLAGS_data;
  options.worker_threads = FLAGS_workers;
  options.scheduler.work_order_log_path = LogPath(depth) + ".part";
  options.scheduler.pending_by_count = depth == "count";
  if (depth.rfind("time:", 0) == 0) options.scheduler.min_pending_per_worker = std::atoi(depth.c_str() + 5);
  std::vector<Round> these;
  {
    absl::StatusOr<std::unique_ptr<Database>> database = Database::Open(options);
    if (!database.ok()) Die("opening " + FLAGS_data + ": " + std::string(database.status().message()));
    Session a(database->get()), b(database->get());
    for (const std::string& mode : modes) {  // warm-up: the blocks are read, the plans' costs learned
      for (Session* s : {&a, &b}) Execute(*s, "SET pipelining = " + mode);
      Execute(a, first);
      Execute(b, second);
      if (!warm_up) break;
    }
    for (const std::string& mode : modes) {
      for (Session* s : {&a, &b}) Execute(*s, "SET pipelining = " + mode);
      Round round;
      round.depth = depth;
      round.mode = mode;
      round.begin_ns = MonotonicNanos();
      std::thread second_thread([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(FLAGS_arrival_ms * 1000)));
        round.arrival_ns = MonotonicNanos();
        round.second_ms = Execute(b, second);
      });
      round.first_ms = Execute(a, first);
      second_thread.join();
      round.end_ns = MonotonicNanos();
      these.push_back(round);
    }
  }  // closing the database flushes the log
  std::ifstream part(LogPath(depth) + ".part");
  std::ofstream(LogPath(depth), std::ios::app) << part.rdbuf();
  std::remove((LogPath(depth) + ".part").c_str());
  rounds->insert(rounds->end(), these.begin(), these.end());
}

int Main() {
  if (FLAGS_data.empty()) Die("--data is required");
  const std::vector<std::string> modes = absl::StrSplit(FLAGS_modes, ',');
  const std::vector<std::string> depths = absl::StrSplit(FLAGS_depths, ',');
  for (const std::string& depth : depths) {
    if (depth != "time" && depth != "count" && depth.rfind("time:", 0) != 0) Die("--depths takes time, time:N, count");
    std::remove(LogPath(depth).c_str());
  }
  const std::string first = QuerySql(FLAGS_first), second = QuerySql(FLAGS_second);
  std::vector<Round> rounds;
  for (int i = 0; i < FLAGS_rounds; ++i) {
    for (size_t d = 0; d < depths.size(); ++d) {
      // The depths' order alternates between rounds.
      RunRound(depths[(d + static_cast<size_t>(i)) % depths.size()], modes, first, second, /*warm_up=*/true, &rounds);
    }
  }
  std::printf("first %s, second %s arriving after %.0f ms, %d workers, fair, window %.1f ms, %d rounds\n\n",
              FLAGS_first.c_str(), FLAGS_second.c_str(), FLAGS_arrival_ms, FLAGS_workers, FLAGS_window_ms,
              FLAGS_rounds);
  std::printf("%-6s %-8s %9s %9s %10s | %8s %8s %8s | %7s %9s   %s\n", "depth", "mode", "first ms", "second ms",
              "B dispatch", "shrink", "p90", "max", "A share", "grow back", "per round (shrink ms)");
  for (const std::string& depth : depths) {
    const std::vector<LogRecord> records = ReadLog(LogPath(depth));
    for (const std::string& mode : modes) {
      std::vector<double> first_ms, second_ms, dispatch, shrink, grow, share;
      std::string per_round;
      for (const Round& round : rounds) {
        if (round.mode != mode || round.depth != depth) continue;
        const Measured m = Measure(records, round);
        first_ms.push_back(round.first_ms);
        second_ms.push_back(round.second_ms);
        dispatch.push_back(m.first_dispatch_ms);
        // Never reached while both ran: ranked above every reached value (shown as "never").
        shrink.push_back(m.shrink_ms < 0 ? kNever : m.shrink_ms);
        grow.push_back(m.grow_ms);
        share.push_back(m.overlap_share);
        char text[16];
        std::snprintf(text, sizeof(text), "%.2f", m.shrink_ms);
        per_round += (per_round.empty() ? "" : ", ") + std::string(text);
      }
      std::printf("%-6s %-8s %9.1f %9.1f %7.2f ms | %8s %8s %8s | %7.2f %6.2f ms   %s\n", depth.c_str(), mode.c_str(),
                  Median(first_ms), Median(second_ms), Median(dispatch), ShrinkText(Median(shrink)).c_str(),
                  ShrinkText(Percentile(shrink, 0.9)).c_str(), ShrinkText(Percentile(shrink, 1.0)).c_str(),
                  Median(share), Median(grow), per_round.c_str());
    }
  }
  std::printf(
      "\n(medians unless named; shrink never, grow -1 = not reached while both ran / before the first ended; per "
      "round -1 = never)\n");
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  tessera::bench::ParseCommandLine(&argc, &argv, "share_shift_benchmark --data DIR [flags]", __FILE__);
  return tessera::Main();
}
