// tessera-server: serves one data directory over gRPC (server/tessera.proto), and with --pg-listen over the
// PostgreSQL protocol. `tessera-server --help` lists the flags (gflags, defined below and in
// engine/database_flags.cc).
//
//   tessera-server --data DIR [--listen HOST:PORT] [--pg-listen HOST:PORT] [--token TOKEN | --token-file FILE] ...
//   mpirun -np N tessera-server --distributed --data DIR [flags as above]
//
// --distributed (distributed/README.md) starts one rank of a cluster under MPI: rank 0 is the master and serves
// clients as above; every other rank keeps its part of the data in DIR/rank-K and serves the master's commands.
// --distributed-split-groups and --distributed-peer-timeout-ms tune the cluster (distributed/README.md).
//
// Once it serves, it prints one line "tessera-server listening on HOST:PORT" to standard output. SIGTERM or SIGINT
// shut it down gracefully: running queries are cancelled, calls end, the database is closed, and the process exits
// with 0; a second signal during that exits at once with 1. A usage error (an unknown flag, a bad value, no --data)
// prints the usage and exits with 2; a failure to start exits with 1.

#include <gflags/gflags.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
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
#include "common/command_line_flags.h"
#include "distributed/cluster.h"
#include "distributed/cluster_layout.h"
#include "engine/database_flags.h"
#include "engine/distributed_statements.h"
#include "engine/session.h"
#include "glog/logging.h"
#include "server/tessera_server.h"

DEFINE_string(data, "", "the data directory (created if missing); required");
DEFINE_string(listen, absl::StrCat("127.0.0.1:", tessera::kDefaultServerPort),
              "gRPC address, HOST:PORT or a bare port on 127.0.0.1 (port 0 picks a free one)");
DEFINE_string(pg_listen, "", "PostgreSQL protocol address, HOST:PORT or a bare port (empty: not served)");
DEFINE_string(pg_auth, "scram-sha-256",
              "how PostgreSQL clients send the token: scram-sha-256 or password (clear text, for TLS connections)");
DEFINE_string(token, "", "bearer token every client must present (empty: no authentication)");
DEFINE_string(token_file, "", "read the token from this file (surrounding whitespace removed)");
DEFINE_string(tls_cert, "", "PEM certificate chain: serve with TLS (needs --tls-key)");
DEFINE_string(tls_key, "", "PEM private key of --tls-cert");
DEFINE_string(allowed_directories, "", "comma-separated directories COPY may read and write files in (default: none)");
DEFINE_string(scan_sharing, "full", "shared scans for sessions that do not SET scan_sharing: off, full or batch");
DEFINE_int64(time_slice_us, tessera::DefaultDatabaseScheduler().dispatch_run_ns / 1000,
             "a worker runs about this much CPU of one query's work orders before the scheduler switches, shares "
             "kept by virtual time (0: one policy draw per work order)");
DEFINE_int64(worker_queue_us, tessera::DefaultDatabaseScheduler().target_pending_ns / 1000,
             "predicted work (microseconds) the scheduler keeps queued on each worker: deeper wakes the scheduler "
             "thread less often, shallower lets a new query's work orders start sooner (at least 1)");
DEFINE_string(work_order_log, "", "write one JSON line per work order to this file (for plot_cpu_share.py)");
DEFINE_int64(work_order_log_max_bytes, int64_t{256} << 20,
             "rotate the work-order log at this size, the previous file kept as FILE.1 (at least 1)");
DEFINE_int64(max_statement_bytes, tessera::ServerOptions().max_statement_bytes,
             "larger statements are refused (at least 1)");
DEFINE_int32(max_sessions, tessera::ServerOptions().max_sessions, "most sessions open at once (at least 1)");
DEFINE_int64(session_idle_timeout, tessera::ServerOptions().session_idle_timeout_ms / 1000,
             "close sessions without a call for this many seconds (0: never)");
DEFINE_bool(distributed, false, "under mpirun: one rank of a cluster; rank 0 serves, every rank keeps DIR/rank-K");
DEFINE_int64(distributed_split_groups, static_cast<int64_t>(tessera::distributed::kDefaultSplitGroups),
             "--distributed: the fewest estimated groups of an aggregation whose partial aggregates the ranks merge "
             "themselves after a hash split by a group key (fewer: the master merges the gathered partials)");
DEFINE_int64(distributed_peer_timeout_ms, tessera::distributed::kDefaultPeerTimeout.count(),
             "--distributed: a rank that sent no heartbeat for this long is taken for dead and the queries that need "
             "it fail (at least 1000; give every rank the same)");

namespace {

const tessera::ProgramDescription& Program() {
  static const tessera::ProgramDescription* program = new tessera::ProgramDescription{
      "tessera-server",
      "usage: tessera-server --data DIR [--listen HOST:PORT] [--pg-listen HOST:PORT] [--token TOKEN | --token-file "
      "FILE] [flags]\n"
      "       mpirun -np N tessera-server --distributed --data DIR [flags]\n"
      "Serves the data directory DIR over gRPC (and the PostgreSQL protocol with --pg-listen) until SIGTERM or "
      "SIGINT.",
      {__FILE__, tessera::kDatabaseFlagsFile}};
  return *program;
}

struct Options {
  tessera::DatabaseOptions database;
  tessera::ServerOptions server;
  bool distributed = false;
  double split_groups = tessera::distributed::kDefaultSplitGroups;
  std::chrono::milliseconds peer_timeout = tessera::distributed::kDefaultPeerTimeout;
};

// A bare port means 127.0.0.1:PORT; anything else is HOST:PORT.
std::string ListenAddress(const std::string& value) {
  int64_t port = 0;
  return absl::SimpleAtoi(value, &port) ? absl::StrCat("127.0.0.1:", port) : value;
}

// The options from the parsed flags; InvalidArgument naming the flag for a value out of range.
absl::StatusOr<Options> OptionsFromFlags() {
  Options options;
  if (FLAGS_data.empty()) return absl::InvalidArgumentError("no data directory given (--data DIR)");
  options.database.data_directory = FLAGS_data;
  absl::Status database_flags = tessera::ApplyDatabaseFlags(&options.database);
  if (!database_flags.ok()) return database_flags;
  options.server.listen_address = ListenAddress(FLAGS_listen);
  if (!FLAGS_pg_listen.empty()) options.server.pg_listen_address = ListenAddress(FLAGS_pg_listen);
  if (FLAGS_pg_auth != "scram-sha-256" && FLAGS_pg_auth != "password") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid --pg-auth '", FLAGS_pg_auth, "' (scram-sha-256 or password)"));
  }
  options.server.pg_cleartext_password = FLAGS_pg_auth == "password";
  if (!gflags::GetCommandLineFlagInfoOrDie("token").is_default) {
    if (absl::StripAsciiWhitespace(FLAGS_token).empty()) {
      return absl::InvalidArgumentError(
          "--token is empty: give a non-blank token, or leave --token out to serve without authentication");
    }
    options.server.token = FLAGS_token;
  }
  if (!gflags::GetCommandLineFlagInfoOrDie("token_file").is_default) {
    std::ifstream file(FLAGS_token_file);
    std::stringstream contents;
    contents << file.rdbuf();
    if (!file) return absl::InvalidArgumentError(absl::StrCat("cannot read --token-file '", FLAGS_token_file, "'"));
    options.server.token = std::string(absl::StripAsciiWhitespace(contents.str()));
    if (options.server.token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file '", FLAGS_token_file, "' is empty or blank: it must hold the token"));
    }
  }
  options.server.tls_cert_path = FLAGS_tls_cert;
  options.server.tls_key_path = FLAGS_tls_key;
  // Clients name files on the server's machine: none may be read or written unless a directory is allowed.
  options.database.file_access.restricted = true;
  for (absl::string_view directory : absl::StrSplit(FLAGS_allowed_directories, ',', absl::SkipEmpty())) {
    options.database.file_access.allowed_directories.emplace_back(directory);
  }
  if (!tessera::ParseScanSharing(FLAGS_scan_sharing, &options.database.scan_sharing)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid --scan-sharing '", FLAGS_scan_sharing, "' (off, full or batch)"));
  }
  auto at_least = [](const char* flag, int64_t value, int64_t minimum) {
    return value >= minimum ? absl::OkStatus()
                            : absl::InvalidArgumentError(absl::StrCat("invalid --", flag, " '", value, "'"));
  };
  for (absl::Status checked :
       {at_least("time-slice-us", FLAGS_time_slice_us, 0), at_least("worker-queue-us", FLAGS_worker_queue_us, 1),
        at_least("work-order-log-max-bytes", FLAGS_work_order_log_max_bytes, 1),
        at_least("max-statement-bytes", FLAGS_max_statement_bytes, 1), at_least("max-sessions", FLAGS_max_sessions, 1),
        at_least("session-idle-timeout", FLAGS_session_idle_timeout, 0),
        at_least("distributed-split-groups", FLAGS_distributed_split_groups, 0),
        at_least("distributed-peer-timeout-ms", FLAGS_distributed_peer_timeout_ms,
                 2 * tessera::distributed::Cluster::kHeartbeatInterval.count())}) {
    if (!checked.ok()) return checked;
  }
  options.database.scheduler.dispatch_run_ns = FLAGS_time_slice_us * 1000;
  options.database.scheduler.target_pending_ns = FLAGS_worker_queue_us * 1000;
  options.database.scheduler.work_order_log_path = FLAGS_work_order_log;
  options.database.scheduler.work_order_log_max_bytes = static_cast<size_t>(FLAGS_work_order_log_max_bytes);
  options.server.max_statement_bytes = FLAGS_max_statement_bytes;
  options.server.max_sessions = FLAGS_max_sessions;
  options.server.session_idle_timeout_ms = FLAGS_session_idle_timeout * 1000;
  options.distributed = FLAGS_distributed;
  options.split_groups = static_cast<double>(FLAGS_distributed_split_groups);
  options.peer_timeout = std::chrono::milliseconds(FLAGS_distributed_peer_timeout_ms);
  return options;
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
  tessera::ParseProgramFlags(&argc, &argv, Program());
  if (argc > 1) tessera::ExitWithUsageError(Program(), absl::StrCat("unexpected argument ", argv[1]));
  absl::StatusOr<Options> parsed = OptionsFromFlags();
  if (!parsed.ok()) tessera::ExitWithUsageError(Program(), std::string(parsed.status().message()));
  Options& options = *parsed;
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
    cluster->set_split_groups(options.split_groups);
    options.database.cluster = cluster.get();
    absl::Status placed = PlaceRank(*cluster, &options.database);
    if (!placed.ok()) std::cerr << "tessera-server: rank " << cluster->rank() << ": " << placed.message() << std::endl;
    if (!cluster->AllRanksSucceeded(placed.ok())) {
      if (placed.ok())
        std::cerr << "tessera-server: rank " << cluster->rank() << ": another rank failed to start" << std::endl;
      return 1;
    }
  }
  absl::StatusOr<std::unique_ptr<tessera::Database>> database = tessera::Database::Open(options.database);
  if (!database.ok()) {
    std::cerr << "tessera-server: cannot open " << options.database.data_directory << ": "
              << database.status().message() << std::endl;
  }
  if (cluster != nullptr && !cluster->AllRanksSucceeded(database.ok())) {
    if (database.ok())
      std::cerr << "tessera-server: rank " << cluster->rank() << ": another rank failed to start" << std::endl;
    return 1;
  }
  if (!database.ok()) return 1;
  // From here on the master notices a rank that dies (distributed/cluster.h, liveness).
  if (cluster != nullptr) cluster->StartHeartbeats(options.peer_timeout);
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
