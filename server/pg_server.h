#pragma once
// The PostgreSQL protocol endpoint of tessera-server (--pg-listen HOST:PORT): protocol version 3 beside the gRPC
// service, over the same Database and the same session registry, so a PostgreSQL connection is a session like a
// gRPC one (settings, memory accounting, ListQueries, cancellation through the registry's monitor, the
// --max-sessions cap, the idle timeout).
//
// One thread accepts; each connection runs on its own thread: startup (SSLRequest answered 'S' and TLS when the
// server has a certificate, else 'N'; GSSENCRequest 'N'; CancelRequest), password authentication with the server's token (SCRAM-SHA-256, or cleartext when asked for),
// then the simple and the extended query protocols. Connections beyond max_connections are refused with SQLSTATE 53300.
//
// Threading: Start and Shutdown from any thread; Shutdown is idempotent and joins every connection thread. The
// Database and the SessionRegistry must outlive the server.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace tessera {

class Database;
class SessionRegistry;

struct PgServerOptions {
  // HOST:PORT; port 0 picks a free port.
  std::string listen_address;
  // Non-empty: clients must send it as their password, by SCRAM-SHA-256 unless cleartext_password.
  std::string token;
  // Ask for the password in clear text (AuthenticationCleartextPassword) instead of SCRAM-SHA-256, for clients
  // without SCRAM (libpq before 10, some old drivers).
  bool cleartext_password = false;
  // Both set (PEM files, as the gRPC service's): SSLRequest is answered 'S' and the connection continues over TLS
  // with this certificate; otherwise 'N'.
  std::string tls_cert_path;
  std::string tls_key_path;
  // A Query or Parse message whose text is larger fails (the message limit is this plus a margin).
  int64_t max_statement_bytes = 1 << 20;
  // Connections served at once; more are refused with "too many connections".
  int max_connections = 1024;
  // How long a connection may take to start up and authenticate.
  int64_t startup_timeout_ms = 10'000;
};

class PgServer {
 public:
  static absl::StatusOr<std::unique_ptr<PgServer>> Start(Database* database, SessionRegistry* sessions,
                                                         const PgServerOptions& options);
  ~PgServer();

  int port() const;
  // Stops accepting, cancels running statements, closes every connection and joins their threads.
  void Shutdown();

  class Impl;

 private:
  explicit PgServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
