#include "server/pg_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "engine/result_sink.h"
#include "engine/session.h"
#include "engine/statement_handlers.h"
#include "glog/logging.h"
#include "server/pg_catalog_queries.h"
#include "server/pg_copy.h"
#include "server/pg_errors.h"
#include "server/pg_protocol.h"
#include "server/pg_scram.h"
#include "server/pg_statements.h"
#include "server/pg_types.h"
#include "server/secret_equals.h"
#include "server/server_sessions.h"

namespace tessera {
namespace {

using pg::Message;
using pg::MessageReader;
using pg::MessageWriter;
using pg::PgError;

// Room for the rest of a Query or Parse message beside the statement text.
constexpr int64_t kMessageMargin = 64 << 10;
// Threads beyond max_connections that may still answer "too many connections" before connections are dropped.
constexpr int kRefusingThreads = 16;
// Password and SASL messages are short; a longer one is a protocol violation.
constexpr size_t kMaxAuthenticationMessageBytes = 4096;

void SetReceiveTimeout(int fd, int64_t timeout_ms) {
  timeval tv{};
  tv.tv_sec = timeout_ms / 1000;
  tv.tv_usec = (timeout_ms % 1000) * 1000;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

// ErrorResponse ('E') or NoticeResponse ('N').
void WriteError(const PgError& error, std::string* out) {
  MessageWriter writer(out);
  writer.Begin(error.severity == "ERROR" || error.severity == "FATAL" ? 'E' : 'N');
  writer.Byte('S');
  writer.CString(error.severity);
  writer.Byte('V');
  writer.CString(error.severity);
  writer.Byte('C');
  writer.CString(error.sqlstate);
  writer.Byte('M');
  writer.CString(error.message);
  if (!error.hint.empty()) {
    writer.Byte('H');
    writer.CString(error.hint);
  }
  if (error.position > 0) {
    writer.Byte('P');
    writer.CString(absl::StrCat(error.position));
  }
  writer.Byte('\0');
  writer.End();
}

PgError MakeError(std::string sqlstate, std::string message, std::string severity = "ERROR") {
  PgError error;
  error.severity = std::move(severity);
  error.sqlstate = std::move(sqlstate);
  error.message = std::move(message);
  return error;
}

// PostgreSQL's CommandComplete tag for a Tessera result.
std::string CommandTag(const QueryResult& result, std::string_view statement, size_t rows_sent) {
  if (result.returns_rows) {
    // SHOW and EXPLAIN have tags of their own; every other statement with rows reads as a SELECT.
    if (result.status_message == "SHOW" || pg::FirstWord(statement) == "show") return "SHOW";
    if (pg::FirstWord(statement) == "explain") return "EXPLAIN";
    return absl::StrCat("SELECT ", rows_sent);
  }
  const std::string& tag = result.status_message;
  if (absl::StartsWith(tag, "INSERT ") && tag.find(' ', 7) == std::string::npos) {
    return absl::StrCat("INSERT 0 ", tag.substr(7));
  }
  if (!tag.empty()) return tag;
  // Statements without a tag of their own (ANALYZE, ...): their first word, as PostgreSQL does.
  size_t end = 0;
  while (end < statement.size() && absl::ascii_isalpha(static_cast<unsigned char>(statement[end]))) ++end;
  return absl::AsciiStrToUpper(std::string(statement.substr(0, end)));
}

// A statement prepared by Parse.
struct PreparedStatement {
  std::string sql;
  std::vector<int32_t> parameter_types;  // one per $n, 0 where the client left it open
};

// A statement bound to parameters by Bind, and its result once executed.
struct Portal {
  std::shared_ptr<const PreparedStatement> statement;
  pg::SubstitutedSql bound;
  std::vector<int16_t> result_formats;  // empty: all text; one: for every column; else one per column
  bool executed = false;
  // The columns Describe found by binding the query (it then stays unexecuted for Execute to stream).
  std::vector<ResultColumn> described_columns;
  QueryResult result;
  size_t next_row = 0;
};

}  // namespace

class PgConnection;

class PgServer::Impl {
 public:
  Impl(Database* database, SessionRegistry* sessions, const PgServerOptions& options)
      : database_(database),
        sessions_(sessions),
        options_(options),
        random_(std::random_device{}()),
        scram_secret_(pg::ScramSecret::FromPassword(options.token)) {}

  ~Impl() {
    if (tls_context_ != nullptr) SSL_CTX_free(tls_context_);
  }

  // Loads the TLS certificate when the options name one.
  absl::Status LoadTls();
  absl::Status Listen();
  int port() const { return port_; }
  void Shutdown();

  Database* database() const { return database_; }
  SessionRegistry* sessions() const { return sessions_; }
  const PgServerOptions& options() const { return options_; }
  bool shutting_down() const { return shutting_down_.load(); }
  // The token's SCRAM-SHA-256 keys (one salt per server run).
  const pg::ScramSecret& scram_secret() const { return scram_secret_; }
  // Null without a certificate.
  SSL_CTX* tls_context() const { return tls_context_; }
  // Cancels the running statement of the connection with this key; false when none matches.
  bool CancelByKey(int32_t process_id, int32_t secret_key);

 private:
  void AcceptLoop();
  void Serve(int fd);

  Database* const database_;
  SessionRegistry* const sessions_;
  const PgServerOptions options_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::thread acceptor_;
  std::atomic<bool> shutting_down_{false};

  std::mutex mutex_;
  std::condition_variable threads_done_;
  int threads_ = 0;
  int accepted_ = 0;
  int32_t next_process_id_ = 1000;
  std::mt19937_64 random_;
  absl::flat_hash_map<int32_t, std::shared_ptr<PgConnection>> connections_;
  bool stopped_ = false;
  const pg::ScramSecret scram_secret_;
  SSL_CTX* tls_context_ = nullptr;
};

// One client connection: its thread runs Run() to the end.
class PgConnection {
 public:
  PgConnection(PgServer::Impl* server, int fd, int32_t process_id, int32_t secret_key)
      : server_(server), fd_(fd), stream_(fd), process_id_(process_id), secret_key_(secret_key) {}

  int32_t process_id() const { return process_id_; }
  int32_t secret_key() const { return secret_key_; }
  // `accepted`: within the connection cap (else the client is told "too many connections").
  void Run(bool accepted);
  // Any thread: cancels the statement running now (a no-op between statements, as in PostgreSQL).
  void Cancel() {
    std::shared_ptr<ServerSession> session = std::atomic_load(&session_);
    if (session != nullptr) session->RequestCancel();
  }
  // Any thread: ends the connection (the thread's next read fails).
  void Close() { shutdown(fd_, SHUT_RDWR); }

 private:
  // Startup and authentication; false when the connection must end.
  bool Startup(bool accepted);
  bool Authenticate(const std::string& user);
  // The settings of the startup packet's "options" ("-c name=value ..."): PostgreSQL parameters, else SET in the
  // engine. Runs once the session is open.
  absl::Status ApplyStartupOptions(const std::vector<std::pair<std::string, std::string>>& parameters);
  // One message of the query phase; false to end the connection.
  bool HandleMessage(const Message& message);

  // A statement's rows as DataRow messages, written as the engine streams them (ResultSink): a simple Query's
  // (with a RowDescription first) and a portal's run by an Execute without a row limit (formats from Bind; its
  // RowDescription, if any, came from Describe).
  class RowStream final : public ResultSink {
   public:
    explicit RowStream(PgConnection* connection, std::vector<int16_t> formats = {}, bool describe = true)
        : connection_(connection), formats_(std::move(formats)), describe_(describe) {}
    absl::Status BeginRows(const std::vector<ResultColumn>& columns) override {
      began_ = true;
      batch_.columns = columns;
      if (describe_) connection_->SendRowDescription(columns, formats_);
      return absl::OkStatus();
    }
    absl::Status AddRows(std::vector<std::vector<Value>> rows) override {
      batch_.rows = std::move(rows);
      rows_ += static_cast<int64_t>(batch_.rows.size());
      if (!connection_->SendRows(batch_, 0, batch_.rows.size(), formats_)) {
        client_gone_ = true;
        return absl::CancelledError("the client went away");
      }
      return absl::OkStatus();
    }
    bool began() const { return began_; }
    bool client_gone() const { return client_gone_; }
    int64_t rows() const { return rows_; }

   private:
    PgConnection* const connection_;
    const std::vector<int16_t> formats_;
    const bool describe_;
    QueryResult batch_;
    bool began_ = false;
    bool client_gone_ = false;
    int64_t rows_ = 0;
  };

  void HandleQuery(std::string_view sql);
  void HandleParse(MessageReader& reader);
  void HandleBind(MessageReader& reader);
  void HandleDescribe(MessageReader& reader);
  void HandleExecute(MessageReader& reader);
  void HandleClose(MessageReader& reader);

  // Runs one statement (compatibility layer or engine); on success fills *result and answers nothing yet.
  // With `sink`, the rows of a SELECT the engine runs stream to it (Session::Execute); others are in *result.
  // With `copy`, COPY ... FROM STDIN / TO STDOUT run their sub-protocol on this connection (pg_copy.h).
  absl::Status RunStatement(std::string_view statement, QueryResult* result, ResultSink* sink = nullptr,
                            pg::PgCopyChannel* copy = nullptr);
  absl::StatusOr<QueryResult> RunInEngine(std::string_view statement, ResultSink* sink = nullptr,
                                          pg::PgCopyChannel* copy = nullptr);
  // A query (SELECT, WITH, VALUES) that neither the compatibility layer nor the catalog answers: the engine runs
  // it, so its columns can be found by binding and its rows can stream.
  bool RunsInEngine(std::string_view statement);
  // Sends the error of `status`, raised by `statement`; `to_query` maps a byte offset of `statement` to the
  // client's `query`.
  template <typename MapOffset>
  void SendStatementError(const absl::Status& status, std::string_view statement, std::string_view query,
                          MapOffset to_query);
  void SendError(const PgError& error);
  void SendNotice(const std::string& message);
  void SendReadyForQuery();
  void SendParameterStatus();
  void SendRowDescription(const std::vector<ResultColumn>& columns, const std::vector<int16_t>& formats);
  // Sends rows [begin, end) of `result`; false when the client went away.
  bool SendRows(const QueryResult& result, size_t begin, size_t end, const std::vector<int16_t>& formats);
  void SendCommandComplete(const std::string& tag);
  // A protocol violation: FATAL 08P01 and the end of the connection.
  bool ProtocolViolation(const std::string& what);

  PgServer::Impl* const server_;
  const int fd_;
  pg::PgStream stream_;
  const int32_t process_id_;
  const int32_t secret_key_;
  std::shared_ptr<ServerSession> session_;  // read by Cancel through atomic_load
  pg::PgParameters parameters_;
  // 'I' idle, 'T' in a transaction block, 'E' in a failed transaction block (ReadyForQuery's status).
  char transaction_ = 'I';
  // After an error in the extended protocol, messages are skipped up to the next Sync.
  bool skip_until_sync_ = false;
  bool closing_ = false;
  std::map<std::string, std::shared_ptr<const PreparedStatement>> statements_;
  std::map<std::string, Portal> portals_;
};

// --- the listener ---

absl::Status PgServer::Impl::LoadTls() {
  if (options_.tls_cert_path.empty() && options_.tls_key_path.empty()) return absl::OkStatus();
  if (options_.tls_cert_path.empty() || options_.tls_key_path.empty()) {
    return absl::InvalidArgumentError("TLS needs both --tls-cert and --tls-key");
  }
  tls_context_ = SSL_CTX_new(TLS_server_method());
  if (tls_context_ == nullptr) return absl::InternalError("cannot create a TLS context");
  SSL_CTX_set_min_proto_version(tls_context_, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(tls_context_, options_.tls_cert_path.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(tls_context_, options_.tls_key_path.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(tls_context_) != 1) {
    char reason[256];
    ERR_error_string_n(ERR_get_error(), reason, sizeof(reason));
    return absl::InvalidArgumentError(absl::StrCat("cannot use the TLS certificate '", options_.tls_cert_path,
                                                   "' and key '", options_.tls_key_path, "': ", reason));
  }
  return absl::OkStatus();
}

absl::Status PgServer::Impl::Listen() {
  const std::string& address = options_.listen_address;
  const size_t colon = address.rfind(':');
  int64_t port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--pg-listen '", address, "' is not HOST:PORT"));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot resolve --pg-listen host '", host, "': ", gai_strerror(rc)));
  }
  std::string error = "no address";
  for (addrinfo* info = found; info != nullptr; info = info->ai_next) {
    int fd = socket(info->ai_family, info->ai_socktype | SOCK_CLOEXEC, info->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, info->ai_addr, info->ai_addrlen) == 0 && listen(fd, 128) == 0) {
      listen_fd_ = fd;
      break;
    }
    error = strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", address, ": ", error));
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (pipe2(wake_pipe_, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void PgServer::Impl::AcceptLoop() {
  while (!shutting_down_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "PostgreSQL listener: poll failed: " << strerror(errno);
      return;
    }
    if (fds[1].revents != 0 || shutting_down_.load()) return;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_ || threads_ >= options_.max_connections + kRefusingThreads) {
        close(fd);
        continue;
      }
      ++threads_;
    }
    std::thread([this, fd] { Serve(fd); }).detach();
  }
}

void PgServer::Impl::Serve(int fd) {
  std::shared_ptr<PgConnection> connection;
  bool accepted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int32_t process_id;
    do {
      process_id = next_process_id_++;
      if (next_process_id_ <= 0) next_process_id_ = 1000;
    } while (connections_.contains(process_id));
    connection = std::make_shared<PgConnection>(this, fd, process_id, static_cast<int32_t>(random_()));
    // Every connection is registered (so that Shutdown can close it); only accepted ones count against the cap.
    accepted = accepted_ < options_.max_connections;
    if (accepted) ++accepted_;
    connections_.emplace(process_id, connection);
    if (stopped_) connection->Close();
  }
  connection->Run(accepted);
  close(fd);
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.erase(connection->process_id());
  if (accepted) --accepted_;
  --threads_;
  threads_done_.notify_all();
}

bool PgServer::Impl::CancelByKey(int32_t process_id, int32_t secret_key) {
  std::shared_ptr<PgConnection> connection;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = connections_.find(process_id);
    if (it == connections_.end()) return false;
    connection = it->second;
  }
  const int32_t expected = connection->secret_key();
  if (!SecretEquals(std::string_view(reinterpret_cast<const char*>(&expected), sizeof(expected)),
                    std::string_view(reinterpret_cast<const char*>(&secret_key), sizeof(secret_key)))) {
    return false;
  }
  connection->Cancel();
  return true;
}

void PgServer::Impl::Shutdown() {
  if (shutting_down_.exchange(true)) return;
  if (wake_pipe_[1] >= 0) {
    char byte = 1;
    (void)!write(wake_pipe_[1], &byte, 1);
  }
  if (acceptor_.joinable()) acceptor_.join();
  std::unique_lock<std::mutex> lock(mutex_);
  stopped_ = true;
  for (auto& [id, connection] : connections_) {
    connection->Cancel();
    connection->Close();
  }
  threads_done_.wait(lock, [this] { return threads_ == 0; });
  lock.unlock();
  if (listen_fd_ >= 0) close(listen_fd_);
  for (int fd : wake_pipe_) {
    if (fd >= 0) close(fd);
  }
}

// --- one connection ---

void PgConnection::Run(bool accepted) {
  if (!Startup(accepted)) {
    stream_.Flush().IgnoreError();
    return;
  }
  while (!closing_) {
    if (!stream_.HasBufferedInput() && !stream_.Flush().ok()) break;
    absl::StatusOr<Message> message =
        stream_.ReadMessage(static_cast<size_t>(server_->options().max_statement_bytes + kMessageMargin));
    if (!message.ok()) {
      if (message.status().code() == absl::StatusCode::kInvalidArgument) {
        ProtocolViolation(std::string(message.status().message()));
      }
      break;
    }
    if (!HandleMessage(*message)) break;
  }
  stream_.Flush().IgnoreError();
  if (session_ != nullptr) {
    server_->sessions()->Close(session_->id()).IgnoreError();
    std::atomic_store(&session_, std::shared_ptr<ServerSession>());
  }
}

bool PgConnection::ProtocolViolation(const std::string& what) {
  SendError(MakeError("08P01", absl::StrCat("protocol violation: ", what), "FATAL"));
  stream_.Flush().IgnoreError();
  closing_ = true;
  return false;
}

bool PgConnection::Startup(bool accepted) {
  SetReceiveTimeout(fd_, server_->options().startup_timeout_ms);
  pg::StartupPacket packet;
  while (true) {
    absl::StatusOr<std::string> body = stream_.ReadStartupPacket();
    if (!body.ok()) {
      if (body.status().code() == absl::StatusCode::kInvalidArgument) {
        ProtocolViolation(std::string(body.status().message()));
      }
      return false;
    }
    absl::StatusOr<pg::StartupPacket> parsed = pg::ParseStartupPacket(*body);
    if (!parsed.ok()) {
      SendError(MakeError(parsed.status().code() == absl::StatusCode::kUnimplemented ? "0A000" : "08P01",
                          std::string(parsed.status().message()), "FATAL"));
      return false;
    }
    if (parsed->code == pg::kSslRequestCode && server_->tls_context() != nullptr && !stream_.tls()) {
      if (!stream_.WriteByteNow('S').ok()) return false;
      if (absl::Status started = stream_.StartTls(server_->tls_context()); !started.ok()) {
        if (started.code() == absl::StatusCode::kInvalidArgument) {
          ProtocolViolation(std::string(started.message()));
        }
        return false;
      }
      continue;
    }
    if (parsed->code == pg::kSslRequestCode || parsed->code == pg::kGssEncRequestCode) {
      // No TLS (no certificate, or already on) or GSS encryption: the client goes on in clear text or gives up, as
      // it is set to.
      if (!stream_.WriteByteNow('N').ok()) return false;
      continue;
    }
    if (parsed->code == pg::kCancelRequestCode) {
      // PostgreSQL answers a cancel request with nothing, whether or not it matched.
      server_->CancelByKey(parsed->cancel_process_id, parsed->cancel_secret_key);
      return false;
    }
    packet = *std::move(parsed);
    break;
  }
  if (!accepted) {
    SendError(MakeError("53300",
                        absl::StrCat("sorry, too many clients already (", server_->options().max_connections,
                                     " PostgreSQL connections)"),
                        "FATAL"));
    return false;
  }
  if (server_->shutting_down()) {
    SendError(MakeError("57P03", "the database system is shutting down", "FATAL"));
    return false;
  }
  std::string user = "tessera";
  for (const auto& [name, value] : packet.parameters) {
    if (name == "user") user = value;
  }
  if (!Authenticate(user)) return false;
  if (absl::Status applied = parameters_.ApplyStartup(packet.parameters); !applied.ok()) {
    PgError error = pg::ErrorFromStatus(applied);
    error.severity = "FATAL";
    error.sqlstate = "22023";
    SendError(error);
    return false;
  }
  absl::StatusOr<std::shared_ptr<ServerSession>> session = server_->sessions()->Open();
  if (!session.ok()) {
    PgError error = pg::ErrorFromStatus(session.status());
    error.severity = "FATAL";
    SendError(error);
    return false;
  }
  std::atomic_store(&session_, *session);
  if (absl::Status applied = ApplyStartupOptions(packet.parameters); !applied.ok()) {
    PgError error = pg::ErrorFromStatus(applied);
    error.severity = "FATAL";
    SendError(error);
    return false;
  }
  MessageWriter writer(&stream_.output());
  writer.Begin('R');
  writer.Int32(0);  // AuthenticationOk
  writer.End();
  SendParameterStatus();
  writer.Begin('K');
  writer.Int32(process_id_);
  writer.Int32(secret_key_);
  writer.End();
  SendReadyForQuery();
  SetReceiveTimeout(fd_, 0);
  return stream_.Flush().ok();
}

absl::Status PgConnection::ApplyStartupOptions(const std::vector<std::pair<std::string, std::string>>& parameters) {
  for (const auto& [name, value] : parameters) {
    if (name != "options") continue;
    absl::StatusOr<std::vector<std::pair<std::string, std::string>>> settings = pg::ParseStartupOptions(value);
    if (!settings.ok()) return settings.status();
    for (const auto& [setting, setting_value] : *settings) {
      std::string notice;
      bool reported = false;
      absl::Status set = parameters_.Set(setting, setting_value, &notice, &reported);
      if (set.code() == absl::StatusCode::kNotFound) {
        // One of Tessera's settings (or an unknown name, which the engine refuses).
        std::string literal = "'";
        for (char c : setting_value) {
          literal.push_back(c);
          if (c == '\'') literal.push_back('\'');
        }
        set = RunInEngine(absl::StrCat("SET ", setting, " = ", literal, "'")).status();
      }
      if (!set.ok()) return set;
    }
  }
  return absl::OkStatus();
}

bool PgConnection::Authenticate(const std::string& user) {
  const std::string& token = server_->options().token;
  if (token.empty()) return true;
  auto refuse = [&]() {
    SendError(MakeError(
        "28P01",
        absl::StrCat("password authentication failed for user \"", user, "\" (the password is the server's token)"),
        "FATAL"));
    return false;
  };
  // Reads the client's next password-phase message ('p'); nullopt (the connection ends) otherwise.
  auto read_password_message = [&]() -> std::optional<Message> {
    if (!stream_.Flush().ok()) return std::nullopt;
    absl::StatusOr<Message> message = stream_.ReadMessage(kMaxAuthenticationMessageBytes);
    if (!message.ok()) {
      if (message.status().code() == absl::StatusCode::kInvalidArgument) {
        ProtocolViolation(std::string(message.status().message()));
      }
      return std::nullopt;
    }
    if (message->type != 'p') {
      ProtocolViolation("expected a password message");
      return std::nullopt;
    }
    return *std::move(message);
  };
  MessageWriter writer(&stream_.output());
  if (server_->options().cleartext_password) {
    writer.Begin('R');
    writer.Int32(3);  // AuthenticationCleartextPassword
    writer.End();
    std::optional<Message> message = read_password_message();
    if (!message) return false;
    MessageReader reader(message->body);
    std::string_view password;
    if (!reader.ReadCString(&password) || !reader.AtEnd()) return ProtocolViolation("malformed password message");
    return SecretEquals(password, token) ? true : refuse();
  }
  writer.Begin('R');
  writer.Int32(10);  // AuthenticationSASL
  writer.CString("SCRAM-SHA-256");
  writer.Byte('\0');
  writer.End();
  std::optional<Message> initial = read_password_message();
  if (!initial) return false;
  MessageReader reader(initial->body);
  std::string_view mechanism, client_first;
  int32_t length;
  if (!reader.ReadCString(&mechanism) || !reader.ReadInt32(&length) || length < 0 ||
      !reader.ReadBytes(static_cast<size_t>(length), &client_first) || !reader.AtEnd()) {
    return ProtocolViolation("malformed SASLInitialResponse");
  }
  if (mechanism != "SCRAM-SHA-256") {
    SendError(MakeError(
        "28000", absl::StrCat("SASL mechanism \"", std::string(mechanism), "\" is not supported (SCRAM-SHA-256 is)"),
        "FATAL"));
    return false;
  }
  pg::ScramExchange exchange(server_->scram_secret());
  absl::StatusOr<std::string> server_first = exchange.Start(client_first);
  if (!server_first.ok()) return ProtocolViolation(std::string(server_first.status().message()));
  writer.Begin('R');
  writer.Int32(11);  // AuthenticationSASLContinue
  writer.Bytes(*server_first);
  writer.End();
  std::optional<Message> response = read_password_message();
  if (!response) return false;
  absl::StatusOr<std::string> server_final = exchange.Finish(response->body);
  if (server_final.status().code() == absl::StatusCode::kUnauthenticated) return refuse();
  if (!server_final.ok()) return ProtocolViolation(std::string(server_final.status().message()));
  writer.Begin('R');
  writer.Int32(12);  // AuthenticationSASLFinal
  writer.Bytes(*server_final);
  writer.End();
  return true;
}

bool PgConnection::HandleMessage(const Message& message) {
  if (skip_until_sync_ && message.type != 'S' && message.type != 'X') return true;
  MessageReader reader(message.body);
  switch (message.type) {
    case 'Q': {
      std::string_view sql;
      if (!reader.ReadCString(&sql) || !reader.AtEnd()) return ProtocolViolation("malformed Query message");
      HandleQuery(sql);
      return !closing_;
    }
    case 'P':
      HandleParse(reader);
      return !closing_;
    case 'B':
      HandleBind(reader);
      return !closing_;
    case 'D':
      HandleDescribe(reader);
      return !closing_;
    case 'E':
      HandleExecute(reader);
      return !closing_;
    case 'C':
      HandleClose(reader);
      return !closing_;
    case 'H':
      return stream_.Flush().ok();
    case 'S':
      skip_until_sync_ = false;
      if (transaction_ == 'I') portals_.clear();
      SendReadyForQuery();
      return stream_.Flush().ok();
    case 'X':
      return false;
    case 'd':
    case 'c':
    case 'f':
      // COPY data outside a COPY: ignored, as PostgreSQL does.
      return true;
    case 'F':
      SendError(MakeError("0A000", "the function call protocol is not supported"));
      skip_until_sync_ = true;
      return true;
    default:
      return ProtocolViolation(
          absl::StrCat("unknown message type '", absl::CEscape(std::string(1, message.type)), "'"));
  }
}

absl::StatusOr<QueryResult> PgConnection::RunInEngine(std::string_view statement, ResultSink* sink,
                                                      pg::PgCopyChannel* copy) {
  ServerSession& session = *session_;
  if (!server_->sessions()->Find(session.id()).ok()) {
    closing_ = true;
    return absl::UnavailableError("the session was closed (idle longer than --session-idle-timeout, or shutdown)");
  }
  std::lock_guard<std::timed_mutex> lock(session.execute_mutex());
  RunningExecution execution;
  execution.query_id = server_->sessions()->NextQueryId();
  execution.session_id = session.id();
  execution.sql_prefix = Utf8Prefix(statement, 200);
  execution.start_ns = MonotonicNanos();
  execution.priority = session.session().priority();
  // The monitor cancels the statement when the client hangs up meanwhile (as gRPC's does for a call it lost).
  session.BeginExecution(execution, [fd = fd_] {
    pollfd peer{fd, POLLRDHUP, 0};
    return poll(&peer, 1, 0) > 0 && (peer.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  });
  if (server_->shutting_down()) session.RequestCancel();
  absl::StatusOr<QueryResult> result = session.session().Execute(statement, sink, copy);
  session.EndExecution();
  session.Touch();
  return result;
}

bool PgConnection::RunsInEngine(std::string_view statement) {
  return pg::IsQuery(statement) && !pg::HandleCompatStatement(statement, parameters_).has_value() &&
         !pg::AnswerCatalogQuery(statement, *server_->database()).has_value();
}

absl::Status PgConnection::RunStatement(std::string_view statement, QueryResult* result, ResultSink* sink,
                                        pg::PgCopyChannel* copy) {
  std::optional<absl::StatusOr<pg::CompatOutcome>> compat = pg::HandleCompatStatement(statement, parameters_);
  using Transaction = pg::CompatOutcome::Transaction;
  if (transaction_ == 'E' &&
      !(compat && compat->ok() &&
        ((*compat)->transaction == Transaction::kCommit || (*compat)->transaction == Transaction::kRollback))) {
    return absl::Status(absl::StatusCode::kAborted,
                        "current transaction is aborted, commands ignored until end of transaction block");
  }
  if (!compat.has_value()) {
    std::optional<absl::StatusOr<QueryResult>> catalog = pg::AnswerCatalogQuery(statement, *server_->database());
    absl::StatusOr<QueryResult> ran = catalog.has_value() ? *std::move(catalog) : RunInEngine(statement, sink, copy);
    if (!ran.ok()) return ran.status();
    *result = *std::move(ran);
    return absl::OkStatus();
  }
  if (!compat->ok()) return compat->status();
  pg::CompatOutcome& outcome = **compat;
  if (!outcome.notice.empty()) SendNotice(outcome.notice);
  switch (outcome.transaction) {
    case Transaction::kBegin:
      if (transaction_ == 'T') {
        SendNotice("there is already a transaction in progress");
      } else {
        SendNotice("Tessera has no transactions: each statement commits on its own");
      }
      transaction_ = 'T';
      break;
    case Transaction::kCommit:
      if (transaction_ == 'E') outcome.result.status_message = "ROLLBACK";
      transaction_ = 'I';
      break;
    case Transaction::kRollback:
      if (transaction_ != 'I') {
        SendNotice("Tessera has no transactions: the statements since BEGIN stay committed");
      }
      transaction_ = 'I';
      break;
    case Transaction::kNone:
      break;
  }
  if (outcome.parameter_changed) SendParameterStatus();
  *result = std::move(outcome.result);
  return absl::OkStatus();
}

template <typename MapOffset>
void PgConnection::SendStatementError(const absl::Status& status, std::string_view statement, std::string_view query,
                                      MapOffset to_query) {
  size_t byte = std::string_view::npos;
  PgError error = pg::ErrorFromStatus(status, statement, &byte);
  if (status.code() == absl::StatusCode::kAborted && absl::StartsWith(status.message(), "current transaction")) {
    error.sqlstate = "25P02";
  }
  if (byte != std::string_view::npos) error.position = pg::CharacterPosition(query, to_query(byte));
  if (closing_) {
    // The session was closed under the connection (idle timeout, shutdown): the connection ends too.
    error.severity = "FATAL";
    error.sqlstate = server_->shutting_down() ? "57P01" : "57P05";
  }
  if (transaction_ == 'T') transaction_ = 'E';
  SendError(error);
}

void PgConnection::HandleQuery(std::string_view sql) {
  if (static_cast<int64_t>(sql.size()) > server_->options().max_statement_bytes) {
    SendError(MakeError("54000",
                        absl::StrCat("statement is ", sql.size(), " bytes; the limit is ",
                                     server_->options().max_statement_bytes, " (the server's --max-statement-bytes)")));
    SendReadyForQuery();
    return;
  }
  // The simple protocol drops the unnamed portal and statement.
  portals_.erase("");
  statements_.erase("");
  const std::vector<pg::StatementText> statements = pg::SplitStatements(sql);
  if (statements.empty()) {
    MessageWriter writer(&stream_.output());
    writer.Begin('I');  // EmptyQueryResponse
    writer.End();
  }
  for (const pg::StatementText& statement : statements) {
    QueryResult result;
    RowStream stream(this);
    pg::PgCopyChannel copy(&stream_);
    absl::Status status = RunStatement(statement.text, &result, &stream, &copy);
    if (stream.client_gone() || copy.connection_lost()) {
      if (!copy.violation().empty()) ProtocolViolation(copy.violation());
      closing_ = true;
      return;
    }
    if (!status.ok() && copy.copy_in_unfinished()) {
      // The COPY failed before the client's data ended (a bad line). As PostgreSQL does: the error at once, then
      // the client's remaining data dropped up to its CopyDone or CopyFail, then ReadyForQuery.
      SendStatementError(status, statement.text, sql, [&](size_t byte) { return statement.offset + byte; });
      std::string violation;
      if (!stream_.Flush().ok() || !copy.DiscardCopyIn(&violation)) {
        if (!violation.empty()) ProtocolViolation(violation);
        closing_ = true;
        return;
      }
      break;
    }
    if (status.ok() && copy.copy_out_started()) copy.EndCopyOut();
    if (!status.ok()) {
      SendStatementError(status, statement.text, sql, [&](size_t byte) { return statement.offset + byte; });
      break;
    }
    if (result.returns_rows && !stream.began()) {
      stream.BeginRows(result.columns).IgnoreError();
      if (!result.rows.empty() && !stream.AddRows(std::move(result.rows)).ok()) {
        closing_ = true;
        return;
      }
    }
    SendCommandComplete(CommandTag(result, statement.text, static_cast<size_t>(stream.rows())));
    if (closing_) break;
  }
  SendReadyForQuery();
}

void PgConnection::HandleParse(MessageReader& reader) {
  std::string_view name, sql;
  int16_t count;
  if (!reader.ReadCString(&name) || !reader.ReadCString(&sql) || !reader.ReadInt16(&count) || count < 0) {
    ProtocolViolation("malformed Parse message");
    return;
  }
  auto statement = std::make_shared<PreparedStatement>();
  for (int i = 0; i < count; ++i) {
    int32_t oid;
    if (!reader.ReadInt32(&oid)) {
      ProtocolViolation("malformed Parse message");
      return;
    }
    statement->parameter_types.push_back(oid);
  }
  auto fail = [&](const PgError& error) {
    SendError(error);
    skip_until_sync_ = true;
  };
  if (static_cast<int64_t>(sql.size()) > server_->options().max_statement_bytes) {
    return fail(MakeError("54000", absl::StrCat("statement is ", sql.size(), " bytes; the limit is ",
                                                server_->options().max_statement_bytes)));
  }
  if (!name.empty() && statements_.contains(std::string(name))) {
    return fail(MakeError("42P05", absl::StrCat("prepared statement \"", std::string(name), "\" already exists")));
  }
  const std::vector<pg::StatementText> parts = pg::SplitStatements(sql);
  if (parts.size() > 1) return fail(MakeError("42601", "cannot insert multiple commands into a prepared statement"));
  absl::StatusOr<int> parameters = pg::CountParameters(sql);
  if (!parameters.ok()) return fail(pg::ErrorFromStatus(parameters.status()));
  if (*parameters > static_cast<int>(statement->parameter_types.size())) {
    statement->parameter_types.resize(*parameters, pg::kOidUnspecified);
  }
  statement->sql = parts.empty() ? std::string() : std::string(sql);
  statements_[std::string(name)] = std::move(statement);
  MessageWriter writer(&stream_.output());
  writer.Begin('1');
  writer.End();
}

void PgConnection::HandleBind(MessageReader& reader) {
  std::string_view portal_name, statement_name;
  int16_t format_count;
  if (!reader.ReadCString(&portal_name) || !reader.ReadCString(&statement_name) || !reader.ReadInt16(&format_count) ||
      format_count < 0) {
    ProtocolViolation("malformed Bind message");
    return;
  }
  std::vector<int16_t> formats(format_count);
  for (int16_t& format : formats) {
    if (!reader.ReadInt16(&format)) {
      ProtocolViolation("malformed Bind message");
      return;
    }
  }
  int16_t value_count;
  if (!reader.ReadInt16(&value_count) || value_count < 0) {
    ProtocolViolation("malformed Bind message");
    return;
  }
  std::vector<std::optional<std::string_view>> values(value_count);
  for (auto& value : values) {
    int32_t length;
    if (!reader.ReadInt32(&length) || length < -1) {
      ProtocolViolation("malformed Bind message");
      return;
    }
    if (length == -1) continue;
    std::string_view bytes;
    if (!reader.ReadBytes(static_cast<size_t>(length), &bytes)) {
      ProtocolViolation("malformed Bind message");
      return;
    }
    value = bytes;
  }
  int16_t result_format_count;
  if (!reader.ReadInt16(&result_format_count) || result_format_count < 0) {
    ProtocolViolation("malformed Bind message");
    return;
  }
  Portal portal;
  portal.result_formats.resize(result_format_count);
  for (int16_t& format : portal.result_formats) {
    if (!reader.ReadInt16(&format)) {
      ProtocolViolation("malformed Bind message");
      return;
    }
  }
  auto fail = [&](const PgError& error) {
    SendError(error);
    skip_until_sync_ = true;
  };
  for (int16_t format : portal.result_formats) {
    if (format != 0 && format != 1) return fail(MakeError("22023", absl::StrCat("unknown result format ", format)));
  }
  auto it = statements_.find(std::string(statement_name));
  if (it == statements_.end()) {
    return fail(
        MakeError("26000", absl::StrCat("prepared statement \"", std::string(statement_name), "\" does not exist")));
  }
  portal.statement = it->second;
  const std::vector<int32_t>& types = portal.statement->parameter_types;
  if (values.size() != types.size()) {
    return fail(MakeError("08P01", absl::StrCat("bind message supplies ", values.size(),
                                                " parameters, but prepared "
                                                "statement \"",
                                                std::string(statement_name), "\" requires ", types.size())));
  }
  if (formats.size() > 1 && formats.size() != values.size()) {
    return fail(MakeError("08P01", "bind message has a format code count that matches no parameter count"));
  }
  std::vector<std::string> literals;
  literals.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const int16_t format = formats.empty() ? 0 : formats.size() == 1 ? formats[0] : formats[i];
    absl::StatusOr<std::string> literal = pg::ParameterLiteral(static_cast<int>(i + 1), types[i], format, values[i]);
    if (!literal.ok()) return fail(pg::ErrorFromStatus(literal.status()));
    literals.push_back(*std::move(literal));
  }
  portal.bound = pg::SubstituteParameters(portal.statement->sql, literals);
  portals_[std::string(portal_name)] = std::move(portal);
  MessageWriter writer(&stream_.output());
  writer.Begin('2');
  writer.End();
}

void PgConnection::HandleDescribe(MessageReader& reader) {
  char kind;
  std::string_view name;
  if (!reader.ReadByte(&kind) || !reader.ReadCString(&name) || (kind != 'S' && kind != 'P')) {
    ProtocolViolation("malformed Describe message");
    return;
  }
  MessageWriter writer(&stream_.output());
  if (kind == 'S') {
    auto it = statements_.find(std::string(name));
    if (it == statements_.end()) {
      SendError(MakeError("26000", absl::StrCat("prepared statement \"", std::string(name), "\" does not exist")));
      skip_until_sync_ = true;
      return;
    }
    const PreparedStatement& statement = *it->second;
    writer.Begin('t');
    writer.Int16(static_cast<int16_t>(statement.parameter_types.size()));
    for (int32_t oid : statement.parameter_types) writer.Int32(oid == pg::kOidUnspecified ? pg::kOidText : oid);
    writer.End();
    if (!pg::ReturnsRows(statement.sql)) {
      writer.Begin('n');  // NoData
      writer.End();
      return;
    }
    // The columns come from running the statement with NULL parameters under LIMIT 0 (Tessera has no separate
    // describe): cheap, and the types are those the bound statement will have unless a parameter decides them.
    std::vector<std::string> nulls(statement.parameter_types.size(), "NULL");
    std::string probe = pg::SubstituteParameters(statement.sql, nulls).sql;
    if (pg::IsQuery(probe)) probe = absl::StrCat("SELECT * FROM (", probe, ") AS pg_describe LIMIT 0");
    QueryResult result;
    absl::Status status = RunStatement(probe, &result);
    if (status.ok() && result.returns_rows) {
      SendRowDescription(result.columns, {});
    } else {
      writer.Begin('n');
      writer.End();
    }
    return;
  }
  auto it = portals_.find(std::string(name));
  if (it == portals_.end()) {
    SendError(MakeError("34000", absl::StrCat("portal \"", std::string(name), "\" does not exist")));
    skip_until_sync_ = true;
    return;
  }
  Portal& portal = it->second;
  if (!portal.executed && portal.described_columns.empty() && RunsInEngine(portal.bound.sql)) {
    // A query's columns come from binding it, so that Execute can stream its rows (a catalog query, which the
    // engine cannot bind, is executed here instead, below).
    absl::StatusOr<std::vector<ResultColumn>> columns = DescribeQuery(*server_->database(), portal.bound.sql);
    if (columns.ok() && !columns->empty()) {
      portal.described_columns = *std::move(columns);
      SendRowDescription(portal.described_columns, portal.result_formats);
      return;
    }
  }
  if (!portal.executed) {
    absl::Status status = RunStatement(portal.bound.sql, &portal.result);
    if (!status.ok()) {
      SendStatementError(status, portal.bound.sql, portal.statement->sql,
                         [&](size_t byte) { return portal.bound.OriginalOffset(byte); });
      skip_until_sync_ = true;
      return;
    }
    portal.executed = true;
  }
  if (portal.result.returns_rows) {
    SendRowDescription(portal.result.columns, portal.result_formats);
  } else {
    writer.Begin('n');
    writer.End();
  }
}

void PgConnection::HandleExecute(MessageReader& reader) {
  std::string_view name;
  int32_t max_rows;
  if (!reader.ReadCString(&name) || !reader.ReadInt32(&max_rows)) {
    ProtocolViolation("malformed Execute message");
    return;
  }
  auto it = portals_.find(std::string(name));
  if (it == portals_.end()) {
    SendError(MakeError("34000", absl::StrCat("portal \"", std::string(name), "\" does not exist")));
    skip_until_sync_ = true;
    return;
  }
  Portal& portal = it->second;
  if (portal.statement->sql.empty()) {
    MessageWriter writer(&stream_.output());
    writer.Begin('I');  // EmptyQueryResponse
    writer.End();
    return;
  }
  if (!portal.executed && max_rows <= 0 && RunsInEngine(portal.bound.sql)) {
    // All rows at once: they stream while the query runs, as for a simple Query.
    RowStream stream(this, portal.result_formats, /*describe=*/false);
    absl::Status status = RunStatement(portal.bound.sql, &portal.result, &stream);
    portal.executed = true;
    if (stream.client_gone()) {
      closing_ = true;
      return;
    }
    if (!status.ok()) {
      SendStatementError(status, portal.bound.sql, portal.statement->sql,
                         [&](size_t byte) { return portal.bound.OriginalOffset(byte); });
      skip_until_sync_ = true;
      return;
    }
    SendCommandComplete(CommandTag(portal.result, portal.bound.sql, static_cast<size_t>(stream.rows())));
    return;
  }
  if (!portal.executed) {
    absl::Status status = RunStatement(portal.bound.sql, &portal.result);
    if (!status.ok()) {
      SendStatementError(status, portal.bound.sql, portal.statement->sql,
                         [&](size_t byte) { return portal.bound.OriginalOffset(byte); });
      skip_until_sync_ = true;
      return;
    }
    portal.executed = true;
  }
  const QueryResult& result = portal.result;
  if (!result.returns_rows) {
    SendCommandComplete(CommandTag(result, portal.bound.sql, 0));
    return;
  }
  const size_t begin = portal.next_row;
  size_t end = result.rows.size();
  if (max_rows > 0) end = std::min(end, begin + static_cast<size_t>(max_rows));
  if (!SendRows(result, begin, end, portal.result_formats)) {
    closing_ = true;
    return;
  }
  portal.next_row = end;
  if (end < result.rows.size()) {
    MessageWriter writer(&stream_.output());
    writer.Begin('s');  // PortalSuspended
    writer.End();
    return;
  }
  SendCommandComplete(CommandTag(result, portal.bound.sql, end - begin));
}

void PgConnection::HandleClose(MessageReader& reader) {
  char kind;
  std::string_view name;
  if (!reader.ReadByte(&kind) || !reader.ReadCString(&name) || (kind != 'S' && kind != 'P')) {
    ProtocolViolation("malformed Close message");
    return;
  }
  if (kind == 'S') {
    statements_.erase(std::string(name));
  } else {
    portals_.erase(std::string(name));
  }
  MessageWriter writer(&stream_.output());
  writer.Begin('3');
  writer.End();
}

void PgConnection::SendError(const PgError& error) { WriteError(error, &stream_.output()); }

void PgConnection::SendNotice(const std::string& message) {
  WriteError(MakeError("00000", message, "NOTICE"), &stream_.output());
}

void PgConnection::SendReadyForQuery() {
  MessageWriter writer(&stream_.output());
  writer.Begin('Z');
  writer.Byte(transaction_);
  writer.End();
}

void PgConnection::SendParameterStatus() {
  MessageWriter writer(&stream_.output());
  for (const auto& [name, value] : parameters_.Reported()) {
    writer.Begin('S');
    writer.CString(name);
    writer.CString(value);
    writer.End();
  }
}

void PgConnection::SendRowDescription(const std::vector<ResultColumn>& columns, const std::vector<int16_t>& formats) {
  MessageWriter writer(&stream_.output());
  writer.Begin('T');
  writer.Int16(static_cast<int16_t>(columns.size()));
  for (size_t i = 0; i < columns.size(); ++i) {
    const pg::PgColumnType type = pg::PgColumnTypeOf(columns[i].type);
    writer.CString(columns[i].name);
    writer.Int32(0);  // table OID
    writer.Int16(0);  // column number
    writer.Int32(type.oid);
    writer.Int16(type.size);
    writer.Int32(type.modifier);
    writer.Int16(formats.empty() ? 0 : formats.size() == 1 ? formats[0] : (i < formats.size() ? formats[i] : 0));
  }
  writer.End();
}

bool PgConnection::SendRows(const QueryResult& result, size_t begin, size_t end, const std::vector<int16_t>& formats) {
  MessageWriter writer(&stream_.output());
  const size_t columns = result.columns.size();
  for (size_t r = begin; r < end; ++r) {
    const std::vector<Value>& row = result.rows[r];
    writer.Begin('D');
    writer.Int16(static_cast<int16_t>(columns));
    for (size_t c = 0; c < columns; ++c) {
      if (c >= row.size() || row[c].is_null()) {
        writer.Int32(-1);
        continue;
      }
      const int16_t format = formats.empty()       ? 0
                             : formats.size() == 1 ? formats[0]
                                                   : (c < formats.size() ? formats[c] : 0);
      const size_t mark = writer.BeginLength();
      if (format == 1) {
        pg::AppendPgBinary(row[c], &stream_.output());
      } else {
        pg::AppendPgText(row[c], &stream_.output());
      }
      writer.EndLength(mark);
    }
    writer.End();
    if (!stream_.FlushIfLarge().ok()) return false;
  }
  return true;
}

void PgConnection::SendCommandComplete(const std::string& tag) {
  MessageWriter writer(&stream_.output());
  writer.Begin('C');
  writer.CString(tag);
  writer.End();
}

// --- PgServer ---

PgServer::PgServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<std::unique_ptr<PgServer>> PgServer::Start(Database* database, SessionRegistry* sessions,
                                                          const PgServerOptions& options) {
  if (options.max_connections < 1 || options.max_statement_bytes < 1) {
    return absl::InvalidArgumentError("PostgreSQL server limits must be positive");
  }
  auto impl = std::make_unique<Impl>(database, sessions, options);
  if (absl::Status tls = impl->LoadTls(); !tls.ok()) return tls;
  if (absl::Status listening = impl->Listen(); !listening.ok()) return listening;
  return std::unique_ptr<PgServer>(new PgServer(std::move(impl)));
}

PgServer::~PgServer() { Shutdown(); }

int PgServer::port() const { return impl_->port(); }

void PgServer::Shutdown() { impl_->Shutdown(); }

}  // namespace tessera
