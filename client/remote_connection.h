#pragma once
// The C++ client library: a Connection (engine/connection.h) to a tessera-server over gRPC (server/tessera.proto).
// One RemoteConnection is one server session: ConnectRemote opens it (OpenSession), the destructor closes it.
//
//   absl::StatusOr<std::unique_ptr<Connection>> connection = ConnectRemote("127.0.0.1:7482", ClientOptions{});
//   absl::StatusOr<QueryResult> result = (*connection)->Execute("SELECT 1");
//
// Errors keep the server's absl code and message (the parser's caret included): INVALID_ARGUMENT stays
// InvalidArgument, NOT_FOUND NotFound, CANCELLED Cancelled, and so on; an unreachable server is Unavailable, a
// wrong or missing token Unauthenticated.
//
// Threading: as Connection says. Execute runs on one thread at a time; Cancel and Progress may be called from any
// other thread while it runs (they are separate RPCs on the same channel). The other methods are for the thread
// that calls Execute.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/connection.h"
#include "engine/query_result.h"

namespace tessera {

struct ClientOptions {
  // Sent as "authorization: Bearer <token>" on every call; empty = none (for a server without --token).
  std::string token;
  // TLS: connect with SSL credentials. `tls_root_certs_path` is a PEM file with the certificate(s) to trust (the
  // server's own self-signed certificate works); empty = the system's roots.
  bool use_tls = false;
  std::string tls_root_certs_path;
  // Overrides the host name checked against the server certificate (e.g. "localhost" when dialing 127.0.0.1).
  std::string tls_server_name;
  // The session's scheduler priority (>= 1; 0 = the server's default, 1). Changeable later with SetPriority.
  int priority = 0;
  // How long ConnectRemote waits for the server to answer OpenSession.
  int connect_timeout_ms = 10'000;
  // Rows per streamed batch asked of the server (0 = the server's choice; the server caps it).
  int max_batch_rows = 0;
  // The session's lease (OpenSessionRequest.lease_seconds): a background thread renews it every third of it, and
  // the server frees the session within this long of the client dying. 0 = no lease (the server's idle timeout).
  int lease_seconds = 6;
};

struct RemoteTableInfo {
  std::string name;
  bool is_view = false;
  int64_t row_count = -1;  // -1 for views
  int64_t block_count = -1;
};

struct RemoteColumnInfo {
  std::string name;
  Type type;
  bool nullable = true;
  std::string default_value;  // SQL text; empty when there is none
};

struct ServerHealth {
  bool serving = false;
  std::string version;
  int64_t uptime_ms = 0;
  int64_t open_sessions = 0;
  int64_t running_queries = 0;
};

class RemoteConnection : public Connection {
 public:
  // The largest data message of a COPY FROM STDIN (well under the server's default receive limit of
  // --max-statement-bytes, 1 MiB, plus a margin).
  static constexpr size_t kCopyChunkBytes = 256u << 10;

  // Connects to `host_port` ("127.0.0.1:7482", "[::1]:7482", "localhost:7482") and opens a session.
  static absl::StatusOr<std::unique_ptr<RemoteConnection>> Connect(const std::string& host_port,
                                                                   const ClientOptions& options);
  // Closes the session on the server (cancelling what still runs there).
  ~RemoteConnection() override;

  // Connection. Execute streams the result and materializes it; Cancel and Progress act on this session. When the
  // server has forgotten the session (closed after --session-idle-timeout, or restarted), Execute opens a new one
  // with the options' settings and sends the statement again (the server had run nothing); settings made with SET
  // since are lost then.
  absl::StatusOr<QueryResult> Execute(std::string_view sql) override;
  // COPY ... FROM STDIN through the CopyIn call (the channel's data sent in messages of at most kCopyChunkBytes,
  // paced by gRPC's flow control) or COPY ... TO STDOUT through CopyOut (each data message handed to the channel);
  // an expired session is reopened as for Execute (the server read no data then). An error of the channel (a
  // local file that cannot be read or written) cancels the call, so a COPY FROM commits nothing.
  absl::StatusOr<QueryResult> ExecuteCopy(std::string_view sql, CopyChannel& channel) override;
  void Cancel() override;
  absl::StatusOr<QueryProgress> Progress() override;

  // The session's priority for its following queries, and for the one running now.
  absl::Status SetPriority(int priority);
  absl::StatusOr<std::vector<RemoteTableInfo>> ListTables();
  absl::StatusOr<std::vector<RemoteColumnInfo>> DescribeTable(const std::string& name);
  absl::StatusOr<ServerHealth> Health();
  // The server's id of this session (a new one after Execute reopened an expired session).
  std::string session_id() const;

 private:
  struct Impl;
  explicit RemoteConnection(std::unique_ptr<Impl> impl);
  // One Execute call; `session_expired` tells that the server did not know the session (nothing ran).
  absl::StatusOr<QueryResult> ExecuteOnce(std::string_view sql, bool* session_expired);
  absl::StatusOr<QueryResult> CopyInOnce(std::string_view sql, CopyChannel& channel, bool* session_expired);
  absl::StatusOr<QueryResult> CopyOutOnce(std::string_view sql, CopyChannel& channel, bool* session_expired);
  std::unique_ptr<Impl> impl_;
};

// The factory the shell's --connect mode calls: RemoteConnection::Connect as a plain Connection.
absl::StatusOr<std::unique_ptr<Connection>> ConnectRemote(const std::string& host_port, const ClientOptions& options);

}  // namespace tessera
