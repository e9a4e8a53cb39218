#pragma once
// The gRPC server: the tessera.v1.Tessera service (server/tessera.proto) over one open Database. Each client session
// is a Session (engine/session.h) in a thread-safe registry keyed by a random id; every query runs on the database's
// one Foreman under its policy, so concurrent sessions share the workers as the policy says.
//
// Execute runs the statements on the gRPC handler thread, then streams the materialized result in bounded
// batches. A monitor thread watches the running executions: when a client goes away or its deadline passes
// (ServerContext::IsCancelled) it cancels the query; it also closes sessions idle past the timeout.
//
// Threading: Start, Shutdown and the accessors may be called from any thread; Shutdown is idempotent. The
// Database must outlive the server.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace tessera {

class Database;

// The port tessera-server listens on when --listen names none.
constexpr int kDefaultServerPort = 7482;

struct ServerOptions {
  // HOST:PORT; port 0 picks a free port (see TesseraServer::port).
  std::string listen_address = "127.0.0.1:7482";
  // Non-empty: every call but Health must carry "authorization: Bearer <token>".
  std::string token;
  // Both set: TLS with this PEM certificate chain and private key (files).
  std::string tls_cert_path;
  std::string tls_key_path;
  // Larger statements fail with InvalidArgument; the gRPC receive limit is this plus a small margin.
  int64_t max_statement_bytes = 1 << 20;
  // Rows per streamed batch by default, and the most a client may ask for. A batch also ends once its
  // estimated size passes max_batch_bytes.
  int default_batch_rows = 1024;
  int max_batch_rows = 65536;
  int64_t max_batch_bytes = 1 << 20;
  // OpenSession fails with ResourceExhausted beyond this many sessions.
  int max_sessions = 1024;
  // Sessions without a call for this long are closed; 0 = never.
  int64_t session_idle_timeout_ms = 3'600'000;
  // At Shutdown, running calls get this long to finish after their queries are cancelled.
  int64_t shutdown_grace_ms = 5'000;
  // Non-empty (HOST:PORT, port 0 picks one): also serve the PostgreSQL protocol there (server/pg_server.h), over
  // the same sessions, token and limits.
  std::string pg_listen_address;
  // The PostgreSQL protocol asks for the token in clear text instead of by SCRAM-SHA-256 (--pg-auth password).
  bool pg_cleartext_password = false;
};

class TesseraServer {
 public:
  // Binds and starts serving. InvalidArgument for bad options, Unavailable when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<TesseraServer>> Start(Database* database, const ServerOptions& options);
  // Shutdown().
  ~TesseraServer();

  // The bound port (the chosen one when listen_address asked for port 0).
  int port() const;
  // The PostgreSQL protocol's bound port; 0 when pg_listen_address is empty.
  int pg_port() const;
  // Stops accepting calls, cancels every running query, waits up to shutdown_grace_ms for calls to end, then
  // ends the rest and closes every session. Afterwards the Database may be closed.
  void Shutdown();

 private:
  class Service;
  TesseraServer() = default;

  std::unique_ptr<Service> service_;
};

}  // namespace tessera
