// grpc_benchmark: queries per second and latency percentiles of short queries from concurrent clients, through
// tessera-server's gRPC path (RemoteConnection -> TesseraServer on 127.0.0.1, both in this process) against the
// in-process path (InProcessConnection) for the same queries on the same database, printed side by side.
//
//   grpc_benchmark [--data DIR] [--clients 1,4,16] [--seconds 3] [--threads N] [--rows 100000]
//   (gflags: --help lists the flags; --flag value and --flag=value both work)
//
// Without --data it builds a temporary database with one table t(k BIGINT, v DOUBLE, s VARCHAR(16)) of --rows rows
// (COPY from a generated file). Each client is a thread with its own connection (session) that runs one query in a
// closed loop for --seconds after a short warm-up; latency is measured around Connection::Execute. Before timing,
// each query's result is checked to be identical on both paths.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "benchmarks/command_line_flags.h"
#include "client/remote_connection.h"
#include "common/clock.h"
#include "engine/connection.h"
#include "engine/session.h"
#include "server/tessera_server.h"

DEFINE_string(data, "", "data directory to use (default: a temporary database with table t of --rows rows)");
DEFINE_string(clients, "1,4,16", "comma-separated client counts; one row of the table each");
DEFINE_double(seconds, 3, "seconds each query runs in a closed loop per client count and path");
DEFINE_int32(threads, 0, "worker threads of the database (0: all cores)");
DEFINE_int64(rows, 100'000, "rows of the temporary table t (at least 1000)");

namespace tessera {
namespace {

struct BenchmarkQuery {
  const char* name;
  const char* sql;
};

// Short queries: pure round-trip overhead, a small scan-aggregate, and a 1000-row result (streaming cost).
constexpr BenchmarkQuery kQueries[] = {
    {"select-1", "SELECT 1"},
    {"agg-10k", "SELECT count(*), sum(v) FROM t WHERE k < 10000"},
    {"rows-1k", "SELECT k, v, s FROM t WHERE k < 1000"},
};

struct Options {
  std::string data_directory;
  std::vector<int> clients = {1, 4, 16};
  double seconds = 3;
  int threads = 0;
  int64_t rows = 100'000;
};

struct Measurement {
  double qps = 0;
  double p50_ms = 0, p95_ms = 0, p99_ms = 0;
  int64_t queries = 0;
  int64_t errors = 0;
};

double Percentile(std::vector<int64_t>& sorted_ns, double p) {
  if (sorted_ns.empty()) return 0;
  size_t index = std::min(sorted_ns.size() - 1, static_cast<size_t>(p * (sorted_ns.size() - 1) + 0.5));
  return sorted_ns[index] / 1e6;
}

// Runs `sql` in a closed loop on every connection (one thread each) for `seconds` after a warm-up.
Measurement Run(std::vector<std::unique_ptr<Connection>>& connections, const std::string& sql, double seconds) {
  const int clients = static_cast<int>(connections.size());
  std::vector<std::vector<int64_t>> latencies(clients);
  std::vector<int64_t> errors(clients, 0);
  std::atomic<bool> measuring{false}, stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      latencies[c].reserve(1 << 16);
      while (!stop.load(std::memory_order_relaxed)) {
        const bool counted = measuring.load(std::memory_order_relaxed);
        const int64_t start = MonotonicNanos();
        absl::StatusOr<QueryResult> result = connections[c]->Execute(sql);
        const int64_t elapsed = MonotonicNanos() - start;
        if (!counted || stop.load(std::memory_order_relaxed)) continue;
        if (result.ok()) {
          latencies[c].push_back(elapsed);
        } else {
          ++errors[c];
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // warm-up
  measuring.store(true);
  const int64_t start = MonotonicNanos();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  const int64_t elapsed = MonotonicNanos() - start;
  for (std::thread& thread : threads) thread.join();

  std::vector<int64_t> all;
  Measurement m;
  for (int c = 0; c < clients; ++c) {
    all.insert(all.end(), latencies[c].begin(), latencies[c].end());
    m.errors += errors[c];
  }
  std::sort(all.begin(), all.end());
  m.queries = static_cast<int64_t>(all.size());
  m.qps = all.size() / (elapsed / 1e9);
  m.p50_ms = Percentile(all, 0.50);
  m.p95_ms = Percentile(all, 0.95);
  m.p99_ms = Percentile(all, 0.99);
  return m;
}

constexpr char kUsage[] =
    "queries/s and latency percentiles of short queries: tessera-server's gRPC path against the in-process path.\n"
    "usage: grpc_benchmark [--data DIR] [--clients 1,4,16] [--seconds 3] [--threads N] [--rows 100000]";

// The flags, after gflags has parsed them, into Options; false on a bad value.
bool ReadFlags(Options* options) {
  options->data_directory = FLAGS_data;
  options->clients.clear();
  for (absl::string_view part : absl::StrSplit(FLAGS_clients, ',')) {
    int clients = 0;
    if (!absl::SimpleAtoi(part, &clients) || clients < 1) return false;
    options->clients.push_back(clients);
  }
  options->seconds = FLAGS_seconds;
  options->threads = FLAGS_threads;
  options->rows = FLAGS_rows;
  return options->seconds > 0 && options->threads >= 0 && options->rows >= 1000;
}

absl::Status CreateTable(Database* database, const std::filesystem::path& directory, int64_t rows) {
  const std::filesystem::path file = directory / "t.csv";
  {
    std::ofstream out(file);
    for (int64_t k = 0; k < rows; ++k) out << k << ',' << (k % 1000) * 0.5 << ",s" << (k * 7919) % 100000 << '\n';
  }
  Session session(database);
  absl::StatusOr<QueryResult> loaded = session.Execute(absl::StrCat(
      "CREATE TABLE t (k BIGINT, v DOUBLE, s VARCHAR(16)); COPY t FROM '", file.string(), "' (DELIMITER ',')"));
  std::filesystem::remove(file);
  return loaded.status();
}

// The same rows on both paths (a benchmark of a wrong answer means nothing).
absl::Status CheckSameResult(Connection& local, Connection& remote, const std::string& sql) {
  absl::StatusOr<QueryResult> a = local.Execute(sql);
  absl::StatusOr<QueryResult> b = remote.Execute(sql);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (a->rows.size() != b->rows.size() || a->columns.size() != b->columns.size()) {
    return absl::InternalError(absl::StrCat("different result shapes for ", sql));
  }
  for (size_t r = 0; r < a->rows.size(); ++r) {
    for (size_t c = 0; c < a->columns.size(); ++c) {
      if (!(a->rows[r][c] == b->rows[r][c]) && a->rows[r][c].Compare(b->rows[r][c]) != 0) {
        return absl::InternalError(absl::StrCat("different values for ", sql, " at row ", r));
      }
    }
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  bench::ParseCommandLine(&argc, &argv, kUsage, __FILE__);
  Options options;
  if (argc > 1 || !ReadFlags(&options)) {
    std::cerr << "grpc_benchmark: bad arguments (--clients: positive counts, --seconds > 0, --threads >= 0, "
                 "--rows >= 1000; see --help)\n";
    return 2;
  }
  std::filesystem::path temporary;
  DatabaseOptions database_options;
  database_options.worker_threads = options.threads;
  database_options.sync_writes = false;
  if (options.data_directory.empty()) {
    temporary = std::filesystem::temp_directory_path() / absl::StrCat("grpc_benchmark_", getpid());
    std::filesystem::remove_all(temporary);
    std::filesystem::create_directories(temporary);
    database_options.data_directory = (temporary / "db").string();
  } else {
    database_options.data_directory = options.data_directory;
  }
  absl::StatusOr<std::unique_ptr<Database>> database = Database::Open(database_options);
  if (!database.ok()) {
    std::cerr << "cannot open the database: " << database.status() << "\n";
    return 1;
  }
  if (!temporary.empty()) {
    absl::Status created = CreateTable(database->get(), temporary, options.rows);
    if (!created.ok()) {
      std::cerr << "cannot create the table: " << created << "\n";
      return 1;
    }
  }
  ServerOptions server_options;
  server_options.listen_address = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<TesseraServer>> server = TesseraServer::Start(database->get(), server_options);
  if (!server.ok()) {
    std::cerr << "cannot start the server: " << server.status() << "\n";
    return 1;
  }
  const std::string address = absl::StrCat("127.0.0.1:", (*server)->port());
  const int max_clients = *std::max_element(options.clients.begin(), options.clients.end());
  std::vector<std::unique_ptr<Connection>> local, remote;
  for (int c = 0; c < max_clients; ++c) {
    local.push_back(std::make_unique<InProcessConnection>(database->get()));
    absl::StatusOr<std::unique_ptr<Connection>> connection = ConnectRemote(address, ClientOptions{});
    if (!connection.ok()) {
      std::cerr << "cannot connect: " << connection.status() << "\n";
      return 1;
    }
    remote.push_back(*std::move(connection));
  }
  for (const BenchmarkQuery& query : kQueries) {
    absl::Status same = CheckSameResult(*local[0], *remote[0], query.sql);
    if (!same.ok()) {
      std::cerr << query.name << ": " << same << "\n";
      return 1;
    }
  }

  std::printf("grpc_benchmark: %s, %.1f s per cell, %u hardware threads, %d worker threads; latency in ms\n",
              temporary.empty() ? options.data_directory.c_str() : absl::StrCat("t: ", options.rows, " rows").c_str(),
              options.seconds, std::thread::hardware_concurrency(), options.threads);
  std::printf("%-9s %7s | %9s %7s %7s %7s | %9s %7s %7s %7s | %10s %9s\n", "query", "clients", "inproc/s", "p50", "p95",
              "p99", "grpc/s", "p50", "p95", "p99", "grpc/inproc", "+p50 ms");
  int64_t errors = 0;
  for (const BenchmarkQuery& query : kQueries) {
    for (int clients : options.clients) {
      std::vector<std::unique_ptr<Connection>> local_subset, remote_subset;
      for (int c = 0; c < clients; ++c) {
        local_subset.push_back(std::move(local[c]));
        remote_subset.push_back(std::move(remote[c]));
      }
      Measurement in_process = Run(local_subset, query.sql, options.seconds);
      Measurement over_grpc = Run(remote_subset, query.sql, options.seconds);
      for (int c = 0; c < clients; ++c) {
        local[c] = std::move(local_subset[c]);
        remote[c] = std::move(remote_subset[c]);
      }
      errors += in_process.errors + over_grpc.errors;
      std::printf("%-9s %7d | %9.0f %7.3f %7.3f %7.3f | %9.0f %7.3f %7.3f %7.3f | %10.2f %9.3f\n", query.name, clients,
                  in_process.qps, in_process.p50_ms, in_process.p95_ms, in_process.p99_ms, over_grpc.qps,
                  over_grpc.p50_ms, over_grpc.p95_ms, over_grpc.p99_ms,
                  in_process.qps > 0 ? over_grpc.qps / in_process.qps : 0, over_grpc.p50_ms - in_process.p50_ms);
      std::fflush(stdout);
    }
  }
  if (errors > 0) std::printf("errors: %ld failed queries (not counted above)\n", static_cast<long>(errors));
  remote.clear();
  (*server)->Shutdown();
  server->reset();
  database->reset();
  if (!temporary.empty()) std::filesystem::remove_all(temporary);
  return errors > 0 ? 1 : 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
