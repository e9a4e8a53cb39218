// tessera-server: serves one data directory over gRPC (server/tessera.proto).
//
//   tessera-server --data DIR [--listen HOST:PORT] [--pg-listen HOST:PORT] [--pg-auth scram-sha-256|password]
//                  [--token TOKEN | --token-file FILE] [--tls-cert PEM --tls-key PEM]
//                  [--memory-limit BYTES] [--threads N] [--max-statement-bytes N] [--max-sessions N]
//                  [--session-idle-timeout SECONDS] [--no-sync]
//
//   mpirun -np N tessera-server --distributed --data DIR [options as above]
//
// --distributed (distributed/README.md) starts one rank of a cluster under MPI: rank 0 is the master and serves
// clients as above; every other rank keeps its part of the data in DIR/rank-K and serves the master's commands.
//
// --listen defaults to 127.0.0.1:7482 (a port of 0 picks a free one). Once it serves, it prints one line
// "tessera-server listening on HOST:PORT" to standard output. SIGTERM or SIGINT shut it down gracefully: running
// queries are cancelled, calls end, the database is closed, and the process exits with 0; a second signal during
// that exits at once with 1.

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distributed/cluster.h"
#include "distributed/cluster_layout.h"
#include "engine/distributed_statements.h"
#include "engine/session.h"
#include "glog/logging.h"
#include "server/tessera_server.h"

namespace {

constexpr char kUsage[] =
    "usage: tessera-server --data DIR [--listen HOST:PORT] [--pg-listen HOST:PORT] [--token TOKEN | --token-file FILE]\n"
    "                      [--pg-auth scram-sha-256|password (how PostgreSQL clients send the token)]\n"
    "                      [--tls-cert PEM --tls-key PEM] [--memory-limit BYTES] [--threads N]\n"
    "                      [--policy fair|hpf|pp|pp-exp|lottery|fcfs|srpt|ifsrpt|static]\n"
    "                      [--admission-threshold F (0..1, default 0.9, 0 = off)]\n"
    "                      [--allowed-directories DIR[,DIR...] (COPY reads and writes files only there)]\n"
    "                      [--scan-sharing off|full|batch (default full; sessions: SET scan_sharing)]\n"
    "                      [--time-slice-us N (default 1000: a worker runs about that much CPU of one query's work\n"
    "                       orders before the scheduler switches, shares kept by virtual time; 0 = one draw per work order)]\n"
    "                      [--work-order-log FILE (one JSON line per work order, for plot_cpu_share.py)\n"
    "                       [--work-order-log-max-bytes N (rotate at N bytes, the previous file kept as FILE.1;\n"
    "                        default 256 MiB)]]\n"
    "                      [--max-statement-bytes N] [--max-sessions N] [--session-idle-timeout SECONDS] "
    "[--no-sync]\n"
    "                      [--distributed (under mpirun: rank 0 serves, every rank keeps DIR/rank-K)]\n";

struct Options {
  tessera::DatabaseOptions database;
  tessera::ServerOptions server;
  bool distributed = false;
};

bool ParseArguments(int argc, char** argv, Options* options, std::string* error) {
  options->server.listen_address = absl::StrCat("127.0.0.1:", tessera::kDefaultServerPort);
  // Clients name files on the server's machine: none may be read or written unless a directory is allowed.
  options->database.file_access.restricted = true;
  // A live server's work-order log (--work-order-log) is rotated at 256 MiB unless told otherwise.
  options->database.scheduler.work_order_log_max_bytes = size_t{256} << 20;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    auto next = [&]() {
      if (i + 1 >= argc) {
        *error = absl::StrCat("option ", arg, " needs a value");
        return false;
      }
      value = argv[++i];
      return true;
    };
    auto next_int = [&](int64_t* out, int64_t minimum) {
      if (!next()) return false;
      if (!absl::SimpleAtoi(value, out) || *out < minimum) {
        *error = absl::StrCat("invalid ", arg, " '", value, "'");
        return false;
      }
      return true;
    };
    int64_t number = 0;
    if (arg == "--data") {
      if (!next()) return false;
      options->database.data_directory = value;
    } else if (arg == "--listen") {
      if (!next()) return false;
      // A bare port, or HOST:PORT.
      int64_t port = 0;
      options->server.listen_address = absl::SimpleAtoi(value, &port) ? absl::StrCat("127.0.0.1:", port) : value;
    } else if (arg == "--pg-listen") {
      if (!next()) return false;
      // A bare port, or HOST:PORT, as --listen.
      int64_t port = 0;
      options->server.pg_listen_address = absl::SimpleAtoi(value, &port) ? absl::StrCat("127.0.0.1:", port) : value;
    } else if (arg == "--pg-auth") {
      if (!next()) return false;
      if (value != "scram-sha-256" && value != "password") {
        *error = absl::StrCat("invalid --pg-auth '", value, "' (scram-sha-256 or password)");
        return false;
      }
      options->server.pg_cleartext_password = value == "password";
    } else if (arg == "--token") {
      if (!next()) return false;
      if (absl::StripAsciiWhitespace(value).empty()) {
        *error = "--token is empty: give a non-blank token, or leave --token out to serve without authentication";
        return false;
      }
      options->server.token = value;
    } else if (arg == "--token-file") {
      if (!next()) return false;
      std::ifstream file(value);
      std::stringstream contents;
      contents << file.rdbuf();
      if (!file) {
        *error = absl::StrCat("cannot read --token-file '", value, "'");
        return false;
      }
      options->server.token = std::string(absl::StripAsciiWhitespace(contents.str()));
      if (options->server.token.empty()) {
        *error = absl::StrCat("--token-file '", value, "' is empty or blank: it must hold the token");
        return false;
      }
    } else if (arg == "--allowed-directories") {
      if (!next()) return false;
      for (absl::string_view directory : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        options->database.file_access.allowed_directories.emplace_back(directory);
      }
    } else if (arg == "--tls-cert") {
      if (!next()) return false;
      options->server.tls_cert_path = value;
    } else if (arg == "--tls-key") {
      if (!next()) return false;
      options->server.tls_key_path = value;
    } else if (arg == "--memory-limit") {
      if (!next_int(&number, 0)) return false;
      options->database.memory_budget_bytes = static_cast<size_t>(number);
    } else if (arg == "--policy") {
      if (!next()) return false;
      absl::StatusOr<tessera::PolicyOptions> policy = tessera::ParsePolicy(value);
      if (!policy.ok()) {
        *error = std::string(policy.status().message());
        return false;
      }
      options->database.scheduler.policy = *policy;
    } else if (arg == "--admission-threshold") {
      if (!next()) return false;
      double fraction = 0;
      if (!absl::SimpleAtod(value, &fraction) || !(fraction >= 0 && fraction <= 1)) {
        *error = absl::StrCat("invalid --admission-threshold '", value, "' (a fraction in [0, 1])");
        return false;
      }
      options->database.admission_threshold = fraction;
    } else if (arg == "--work-order-log") {
      if (!next()) return false;
      options->database.scheduler.work_order_log_path = value;
    } else if (arg == "--work-order-log-max-bytes") {
      if (!next_int(&number, 1)) return false;
      options->database.scheduler.work_order_log_max_bytes = static_cast<size_t>(number);
    } else if (arg == "--time-slice-us") {
      if (!next_int(&number, 0)) return false;
      options->database.scheduler.dispatch_run_ns = number * 1000;
    } else if (arg == "--scan-sharing") {
      if (!next()) return false;
      if (!tessera::ParseScanSharing(value, &options->database.scan_sharing)) {
        *error = absl::StrCat("invalid --scan-sharing '", value, "' (off, full or batch)");
        return false;
      }
    } else if (arg == "--threads") {
      if (!next_int(&number, 1)) return false;
      options->database.worker_threads = static_cast<int>(number);
    } else if (arg == "--max-statement-bytes") {
      if (!next_int(&options->server.max_statement_bytes, 1)) return false;
    } else if (arg == "--max-sessions") {
      if (!next_int(&number, 1)) return false;
      options->server.max_sessions = static_cast<int>(number);
    } else if (arg == "--session-idle-timeout") {
      if (!next_int(&number, 0)) return false;
      options->server.session_idle_timeout_ms = number * 1000;
    } else if (arg == "--distributed") {
      options->distributed = true;
    } else if (arg == "--no-sync") {
      options->database.sync_writes = false;
    } else if (arg == "-h" || arg == "--help") {
      *error = "";
      return false;
    } else {
      *error = absl::StrCat("unknown argument ", arg);
      return false;
    }
  }
  if (options->database.data_directory.empty()) {
    *error = "no data directory given (--data DIR)";
    return false;
  }
  return true;
}

// --distributed: this rank's data directory (DIR/rank-K, checked against the cluster's layout) and the directory
// where COPY keeps the rows routed to it (DIR/incoming-rank-K, outside the data directory, so the file access
// policy may allow it). Rank 0 keeps the user's --allowed-directories; other ranks read only their incoming rows.
absl::Status PlaceRank(const tessera::distributed::Cluster& cluster, tessera::DatabaseOptions* database) {
  const std::string base = database->data_directory;
  absl::StatusOr<std::string> directory =
      tessera::distributed::PrepareRankDirectory(base, cluster.rank(), cluster.size());
  if (!directory.ok()) return directory.status();
  const std::string incoming = absl::StrCat(base, "/incoming-rank-", cluster.rank());
  std::error_code error;
  std::filesystem::create_directories(incoming, error);
  if (error) return absl::InternalError(absl::StrCat("cannot create '", incoming, "': ", error.message()));
  database->data_directory = *directory;
  database->cluster_incoming_directory = incoming;
  if (!cluster.is_master()) database->file_access.allowed_directories.clear();
  database->file_access.allowed_directories.push_back(incoming);
  return absl::OkStatus();
}

// Whether `address` (HOST:PORT) listens on the loopback interface only.
bool IsLoopback(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = 1;  // warnings and errors only
  Options options;
  std::string error;
  if (!ParseArguments(argc, argv, &options, &error)) {
    if (!error.empty()) std::cerr << "tessera-server: " << error << "\n";
    std::cerr << kUsage;
    return error.empty() ? 0 : 2;
  }
  // Block the shutdown signals in every thread (the ones started from here inherit the mask); this thread waits
  // for them with sigwait below.
  sigset_t shutdown_signals;
  sigemptyset(&shutdown_signals);
  sigaddset(&shutdown_signals, SIGTERM);
  sigaddset(&shutdown_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &shutdown_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (!options.server.pg_listen_address.empty() && !IsLoopback(options.server.pg_listen_address) &&
      (options.server.token.empty() || options.server.tls_cert_path.empty())) {
    std::cerr << "tessera-server: WARNING: the PostgreSQL protocol listens on " << options.server.pg_listen_address
              << ", beyond this machine, "
              << (options.server.token.empty() ? "WITHOUT AUTHENTICATION (no --token): anyone who reaches the port "
                                                 "can read and change every table"
                                               : "WITHOUT TLS (no --tls-cert): all data cross the network in clear "
                                                 "text")
              << std::endl;
  }
  if (!IsLoopback(options.server.listen_address) &&
      (options.server.token.empty() || options.server.tls_cert_path.empty())) {
    std::cerr << "tessera-server: WARNING: listening on " << options.server.listen_address << ", beyond this machine, "
              << (options.server.token.empty() ? "WITHOUT AUTHENTICATION (no --token): anyone who reaches the port can "
                                                 "read and change every table"
                                               : "WITHOUT TLS (no --tls-cert): the token and all data cross the "
                                                 "network in clear text")
              << std::endl;
  }
  std::unique_ptr<tessera::distributed::Cluster> cluster;
  if (options.distributed) {
    absl::StatusOr<std::unique_ptr<tessera::distributed::Cluster>> started =
        tessera::distributed::Cluster::Initialize(&argc, &argv);
    if (!started.ok()) {
      std::cerr << "tessera-server: --distributed: " << started.status().message() << std::endl;
      return 1;
    }
    cluster = *std::move(started);
    options.database.cluster = cluster.get();
    absl::Status placed = PlaceRank(*cluster, &options.database);
    if (!placed.ok()) std::cerr << "tessera-server: rank " << cluster->rank() << ": " << placed.message() << std::endl;
    if (!cluster->AllRanksSucceeded(placed.ok())) {
      if (placed.ok()) std::cerr << "tessera-server: rank " << cluster->rank() << ": another rank failed to start" << std::endl;
      return 1;
    }
  }
  absl::StatusOr<std::unique_ptr<tessera::Database>> database = tessera::Database::Open(options.database);
  if (!database.ok()) {
    std::cerr << "tessera-server: cannot open " << options.database.data_directory << ": "
              << database.status().message() << std::endl;
  }
  if (cluster != nullptr && !cluster->AllRanksSucceeded(database.ok())) {
    if (database.ok()) std::cerr << "tessera-server: rank " << cluster->rank() << ": another rank failed to start" << std::endl;
    return 1;
  }
  if (!database.ok()) return 1;
  // From here on the master notices a rank that dies (distributed/cluster.h, liveness).
  if (cluster != nullptr) cluster->StartHeartbeats();
  if (cluster != nullptr && !cluster->is_master()) {
    // Every other rank serves the master's commands until it shuts down; it takes no clients.
    absl::Status served = tessera::RunRankService(**database);
    if (!served.ok()) std::cerr << "tessera-server: rank " << cluster->rank() << ": " << served.message() << std::endl;
    database->reset();
    return served.ok() ? 0 : 1;
  }
  absl::StatusOr<std::unique_ptr<tessera::TesseraServer>> server =
      tessera::TesseraServer::Start(database->get(), options.server);
  if (!server.ok()) {
    std::cerr << "tessera-server: " << server.status().message() << std::endl;
    return 1;
  }
  std::string host = options.server.listen_address.substr(0, options.server.listen_address.rfind(':'));
  if (!options.server.pg_listen_address.empty()) {
    // Before the gRPC line, which tests wait for: once that is out, both ports serve.
    const std::string& pg_address = options.server.pg_listen_address;
    std::cout << "tessera-server PostgreSQL protocol on " << pg_address.substr(0, pg_address.rfind(':')) << ":"
              << (*server)->pg_port() << std::endl;
  }
  std::cout << "tessera-server listening on " << host << ":" << (*server)->port() << std::endl;

  int signal_number = 0;
  sigwait(&shutdown_signals, &signal_number);
  std::cerr << "tessera-server: " << (signal_number == SIGTERM ? "SIGTERM" : "SIGINT")
            << ", shutting down (a second signal exits at once)" << std::endl;
  // A statement that does not stop when cancelled (a long COPY) delays the shutdown; a second signal ends the
  // process without waiting (a COPY not yet committed leaves the table as it was).
  std::thread([&shutdown_signals] {
    int second = 0;
    sigwait(&shutdown_signals, &second);
    std::cerr << "tessera-server: second signal, exiting now" << std::endl;
    _exit(1);
  }).detach();
  (*server)->Shutdown();
  server->reset();
  if (cluster != nullptr) tessera::StopRankServices(**database);
  database->reset();
  std::cerr << "tessera-server: stopped" << std::endl;
  return 0;
}
