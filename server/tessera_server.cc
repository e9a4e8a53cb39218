#include "server/tessera_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "catalog/catalog.h"
#include "common/clock.h"
#include "engine/copy_channel.h"
#include "engine/result_sink.h"
#include "engine/session.h"
#include "engine/statement_handlers.h"
#include "glog/logging.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/resource_quota.h"
#include "server/grpc_copy.h"
#include "server/pg_server.h"
#include "server/secret_equals.h"
#include "server/server_sessions.h"
#include "server/tessera.grpc.pb.h"
#include "server/wire_format.h"

namespace tessera {
namespace {

constexpr char kVersion[] = "tessera 0.1 (tessera.v1)";
constexpr int64_t kMonitorPeriodMs = 20;
// How often the monitor looks for idle sessions and expired leases.
constexpr int64_t kSessionCheckPeriodNs = 250'000'000;
constexpr int64_t kSessionBusyWaitMs = 2'000;
constexpr char kUnknownSessionKey[] = "tessera-unknown-session";
// Room for the rest of an ExecuteRequest beside the statement, so that the statement limit, not gRPC's, speaks
// first.
constexpr int64_t kRequestMargin = 64 << 10;

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream file(path);
  if (!file) return absl::InvalidArgumentError(absl::StrCat("cannot read the ", what, " file '", path, "'"));
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

bool IsSettingName(std::string_view name) {
  if (name.empty() || !(absl::ascii_isalpha(name[0]) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

std::string SqlStringLiteral(absl::string_view value) {
  return absl::StrCat("'", absl::StrReplaceAll(value, {{"'", "''"}}), "'");
}

// Rough wire size of one row, to bound batches by bytes as well as rows.
int64_t EstimatedRowBytes(const std::vector<Value>& row) {
  int64_t bytes = 0;
  for (const Value& value : row) {
    bytes += (!value.is_null() && value.type().IsString()) ? static_cast<int64_t>(value.AsString().size()) + 2 : 9;
  }
  return bytes;
}

// A statement's rows as ExecuteResponse batches of at most `batch_rows` rows and about `max_batch_bytes`, written
// as they arrive (a streamed SELECT's rows come while its query runs; Session::Execute's sink). The last batch
// and the header, while nothing else went out, are held back until Finish, so that a result of one batch goes out
// with the summary and the status in one flush (buffer hints, then WriteLast). This relies on the initial
// metadata having gone out on its own: a buffer-hinted first write that carries it stalls until a later flush.
// (Measured with grpc_benchmark, select-1, one client: p50 0.30 ms with the hints, 0.50 ms without.)
class BatchWriter final : public ResultSink {
 public:
  BatchWriter(grpc::ServerWriter<v1::ExecuteResponse>* writer, size_t batch_rows, int64_t max_batch_bytes)
      : writer_(writer), batch_rows_(batch_rows), max_batch_bytes_(max_batch_bytes) {}

  absl::Status BeginRows(const std::vector<ResultColumn>& columns) override {
    held_.columns = columns;
    began_ = true;
    return absl::OkStatus();
  }

  absl::Status AddRows(std::vector<std::vector<Value>> rows) override {
    rows_ += static_cast<int64_t>(rows.size());
    if (held_.rows.empty()) {
      held_.rows = std::move(rows);
    } else {
      std::move(rows.begin(), rows.end(), std::back_inserter(held_.rows));
    }
    // Write whole batches while more than one batch is held.
    size_t begin = 0;
    for (;;) {
      const size_t end = BatchEnd(begin);
      if (end == held_.rows.size()) break;
      if (!Write(begin, end, grpc::WriteOptions())) return absl::CancelledError("the client went away");
      begin = end;
    }
    held_.rows.erase(held_.rows.begin(), held_.rows.begin() + static_cast<std::ptrdiff_t>(begin));
    return absl::OkStatus();
  }

  // Sends what is held (the header if no row went out yet); false when the client went away.
  bool Finish() {
    grpc::WriteOptions options;
    if (!header_sent_ && BatchEnd(0) == held_.rows.size()) options.set_buffer_hint();
    if (began_ && !header_sent_ && !WriteHeader(options)) return false;
    for (size_t begin = 0; begin < held_.rows.size();) {
      const size_t end = BatchEnd(begin);
      if (!Write(begin, end, options)) return false;
      begin = end;
    }
    held_.rows.clear();
    return true;
  }

  bool began() const { return began_; }
  int64_t rows() const { return rows_; }

 private:
  // The end of the batch that starts at row `begin` of the held rows.
  size_t BatchEnd(size_t begin) const {
    size_t end = begin;
    int64_t bytes = 0;
    while (end < held_.rows.size() && end - begin < batch_rows_ && bytes < max_batch_bytes_) {
      bytes += EstimatedRowBytes(held_.rows[end++]);
    }
    return end;
  }

  bool WriteHeader(const grpc::WriteOptions& options) {
    header_sent_ = true;
    v1::ExecuteResponse response;
    HeaderToProto(held_.columns, response.mutable_header());
    return writer_->Write(response, options);
  }

  bool Write(size_t begin, size_t end, const grpc::WriteOptions& options) {
    if (!header_sent_ && !WriteHeader(options)) return false;
    v1::ExecuteResponse response;
    RowsToBatch(held_, begin, end, response.mutable_batch());
    return writer_->Write(response, options);
  }

  grpc::ServerWriter<v1::ExecuteResponse>* const writer_;
  const size_t batch_rows_;
  const int64_t max_batch_bytes_;
  QueryResult held_;  // the columns and the rows not yet written
  bool began_ = false;
  bool header_sent_ = false;
  int64_t rows_ = 0;
};

}  // namespace

class TesseraServer::Service final : public v1::Tessera::Service {
 public:
  Service(Database* database, const ServerOptions& options)
      : database_(database),
        options_(options),
        sessions_(database, options.max_sessions),
        start_ns_(MonotonicNanos()) {}

  absl::Status Start() {
    if (options_.max_statement_bytes < 1 || options_.default_batch_rows < 1 || options_.max_batch_rows < 1 ||
        options_.max_sessions < 1) {
      return absl::InvalidArgumentError("server limits must be positive");
    }
    std::shared_ptr<grpc::ServerCredentials> credentials;
    if (options_.tls_cert_path.empty() != options_.tls_key_path.empty()) {
      return absl::InvalidArgumentError("TLS needs both --tls-cert and --tls-key");
    }
    if (!options_.tls_cert_path.empty()) {
      grpc::SslServerCredentialsOptions ssl;
      absl::StatusOr<std::string> cert = ReadFile(options_.tls_cert_path, "TLS certificate");
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadFile(options_.tls_key_path, "TLS key");
      if (!key.ok()) return key.status();
      ssl.pem_key_cert_pairs.push_back({*key, *cert});
      credentials = grpc::SslServerCredentials(ssl);
    } else {
      credentials = grpc::InsecureServerCredentials();
    }
    grpc::ServerBuilder builder;
    builder.AddListeningPort(options_.listen_address, credentials, &port_);
    builder.RegisterService(this);
    builder.SetMaxReceiveMessageSize(static_cast<int>(
        std::min<int64_t>(options_.max_statement_bytes + kRequestMargin, std::numeric_limits<int>::max())));
    builder.SetMaxSendMessageSize(static_cast<int>(std::max<int64_t>(64 << 20, 4 * options_.max_batch_bytes)));
    // gRPC sets SO_REUSEPORT by default: a second server on the same port would start and take half the
    // connections. Fail instead.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    // Detect peers that vanished without closing the connection.
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
    // One handler thread per call in flight; Execute holds its thread for the whole query.
    grpc::ResourceQuota quota("tessera-server");
    quota.SetMaxThreads(options_.max_sessions + 64);
    builder.SetResourceQuota(quota);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port_ == 0) {
      return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.listen_address));
    }
    monitor_ = std::thread([this] { Monitor(); });
    database_->set_activity_provider(&activity_);
    if (!options_.pg_listen_address.empty()) {
      PgServerOptions pg_options;
      pg_options.listen_address = options_.pg_listen_address;
      pg_options.token = options_.token;
      pg_options.cleartext_password = options_.pg_cleartext_password;
      pg_options.tls_cert_path = options_.tls_cert_path;
      pg_options.tls_key_path = options_.tls_key_path;
      pg_options.max_statement_bytes = options_.max_statement_bytes;
      pg_options.max_connections = options_.max_sessions;
      absl::StatusOr<std::unique_ptr<PgServer>> pg_server = PgServer::Start(database_, &sessions_, pg_options);
      if (!pg_server.ok()) {
        Shutdown();
        return pg_server.status();
      }
      pg_server_ = *std::move(pg_server);
    }
    return absl::OkStatus();
  }

  int port() const { return port_; }
  int pg_port() const { return pg_server_ != nullptr ? pg_server_->port() : 0; }

  void Shutdown() {
    std::lock_guard<std::mutex> lock(shutdown_mutex_);
    if (server_ == nullptr) return;
    shutting_down_.store(true);
    for (const std::shared_ptr<ServerSession>& session : sessions_.All()) session->RequestCancel();
    // PostgreSQL connections end first (their running statements are cancelled); the monitor still runs.
    if (pg_server_ != nullptr) pg_server_->Shutdown();
    // Waits for the handlers; cancels the calls still running at the deadline. The monitor keeps re-issuing the
    // cancels meanwhile.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(options_.shutdown_grace_ms));
    {
      std::lock_guard<std::mutex> monitor_lock(monitor_mutex_);
      stop_monitor_ = true;
    }
    monitor_wakeup_.notify_all();
    monitor_.join();
    sessions_.CloseAll();
    database_->set_activity_provider(nullptr);
    server_.reset();
  }

  grpc::Status Health(grpc::ServerContext*, const v1::HealthRequest*, v1::HealthResponse* response) override {
    response->set_serving(!shutting_down_.load());
    response->set_version(kVersion);
    response->set_uptime_ms((MonotonicNanos() - start_ns_) / 1'000'000);
    response->set_open_sessions(static_cast<int64_t>(sessions_.size()));
    int64_t running = 0;
    for (const std::shared_ptr<ServerSession>& session : sessions_.All()) running += session->running() ? 1 : 0;
    response->set_running_queries(running);
    return grpc::Status::OK;
  }

  grpc::Status OpenSession(grpc::ServerContext* context, const v1::OpenSessionRequest* request,
                           v1::OpenSessionResponse* response) override {
    if (grpc::Status status = Admit(context); !status.ok()) return status;
    absl::StatusOr<std::shared_ptr<ServerSession>> session = sessions_.Open();
    if (!session.ok()) return ToGrpcStatus(session.status());
    std::lock_guard<std::timed_mutex> lock((*session)->execute_mutex());
    absl::Status applied = ApplySettings(**session, request->settings(), request->priority());
    if (applied.ok()) applied = ReadSettings(**session, response->mutable_settings());
    if (!applied.ok()) {
      sessions_.Close((*session)->id()).IgnoreError();
      return ToGrpcStatus(applied);
    }
    (*session)->set_lease_ns(static_cast<int64_t>(request->lease_seconds()) * 1'000'000'000);
    (*session)->Touch();
    response->set_session_id((*session)->id());
    return grpc::Status::OK;
  }

  grpc::Status KeepAlive(grpc::ServerContext* context, const v1::KeepAliveRequest* request,
                         v1::KeepAliveResponse*) override {
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    absl::StatusOr<std::shared_ptr<ServerSession>> session = sessions_.Find(request->session_id());
    if (!session.ok()) return ToGrpcStatus(session.status());
    (*session)->Touch();
    return grpc::Status::OK;
  }

  grpc::Status CloseSession(grpc::ServerContext* context, const v1::CloseSessionRequest* request,
                            v1::CloseSessionResponse*) override {
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    return ToGrpcStatus(sessions_.Close(request->session_id()));
  }

  grpc::Status UpdateSession(grpc::ServerContext* context, const v1::UpdateSessionRequest* request,
                             v1::SessionSettings* response) override {
    if (grpc::Status status = Admit(context); !status.ok()) return status;
    absl::StatusOr<std::shared_ptr<ServerSession>> session = sessions_.Find(request->session_id());
    if (!session.ok()) return ToGrpcStatus(session.status());
    std::unique_lock<std::timed_mutex> lock((*session)->execute_mutex(), std::try_to_lock);
    if (lock.owns_lock()) {
      absl::Status applied = ApplySettings(**session, request->settings(), request->priority());
      if (applied.ok()) applied = ReadSettings(**session, response);
      return ToGrpcStatus(applied);
    }
    // A query runs: only the priority can change now (the Session's settings belong to the executing thread).
    if (!request->settings().empty()) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "the session is running a query; only its priority can change now");
    }
    if (request->priority() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "priority must be a positive integer");
    }
    if (request->priority() > 0) {
      (*session)->SetPendingPriority(request->priority());
      QueryId running = (*session)->session().running_query();
      // NotFound when the statement finished meanwhile; the pending priority still applies to the next one.
      if (running != 0) database_->foreman().SetPriority(running, request->priority()).IgnoreError();
    }
    response->set_priority(request->priority());
    return grpc::Status::OK;
  }

  // What RunInSession ran: the statement's outcome, the execution's id and its time on the server.
  struct Execution {
    absl::StatusOr<QueryResult> result;
    int64_t query_id = 0;
    int64_t execution_us = 0;
  };

  // What every statement call (Execute, CopyIn, CopyOut) shares: the token, the statement's size and encoding,
  // its session (waiting briefly for the session's previous call), the priority of this execution only, and the
  // running execution that Cancel, GetProgress, ListQueries and the monitor see. `send_metadata` sends the initial
  // metadata (with "tessera-query-id") before the statement runs; `run` runs it in the session. A status that is
  // not OK means nothing ran.
  grpc::Status RunInSession(grpc::ServerContext* context, const v1::ExecuteRequest& request,
                            const std::function<void()>& send_metadata,
                            const std::function<absl::StatusOr<QueryResult>(Session&)>& run, Execution* out) {
    if (grpc::Status status = Admit(context); !status.ok()) return status;
    if (static_cast<int64_t>(request.sql().size()) > options_.max_statement_bytes) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("statement is ", request.sql().size(), " bytes; the limit is ",
                                       options_.max_statement_bytes, " (the server's --max-statement-bytes)"));
    }
    if (request.priority() < 0 || request.max_batch_rows() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "priority and max_batch_rows must not be negative");
    }
    if (const size_t bad = InvalidUtf8Offset(request.sql()); bad != std::string_view::npos) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("the statement is not valid UTF-8: byte ", bad, " (0x",
                                       absl::Hex(static_cast<unsigned char>(request.sql()[bad]), absl::kZeroPad2),
                                       ") does not begin a well-formed character"));
    }
    absl::StatusOr<std::shared_ptr<ServerSession>> found = sessions_.Find(request.session_id());
    if (!found.ok()) {
      // Marks the error as "nothing ran", so a client may open a new session and send the statement again.
      context->AddTrailingMetadata(kUnknownSessionKey, "1");
      return ToGrpcStatus(found.status());
    }
    ServerSession& session = **found;
    // A short wait covers a client that abandoned its previous call and sends the next before the server has
    // finished cancelling it; a truly concurrent Execute on one session fails.
    std::unique_lock<std::timed_mutex> lock(session.execute_mutex(), std::defer_lock);
    if (!lock.try_lock_for(std::chrono::milliseconds(kSessionBusyWaitMs))) {
      std::optional<RunningExecution> running = session.running();
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          absl::StrCat("session '", session.id(), "' is already running a query",
                                       running ? absl::StrCat(" (id ", running->query_id, ")") : std::string(),
                                       "; a session runs one query at a time"));
    }
    if (std::optional<int> pending = session.TakePendingPriority()) {
      session.session().Execute(absl::StrCat("SET priority = ", *pending)).IgnoreError();
    }
    const int session_priority = session.session().priority();
    const bool override_priority = request.priority() > 0 && request.priority() != session_priority;
    if (override_priority) {
      absl::StatusOr<QueryResult> set = session.session().Execute(absl::StrCat("SET priority = ", request.priority()));
      if (!set.ok()) return ToGrpcStatus(set.status());
    }

    RunningExecution execution;
    execution.query_id = sessions_.NextQueryId();
    execution.session_id = session.id();
    execution.sql_prefix = Utf8Prefix(request.sql(), 200);
    execution.start_ns = MonotonicNanos();
    execution.priority = override_priority ? request.priority() : session_priority;
    session.BeginExecution(execution, context);
    if (shutting_down_.load()) session.RequestCancel();
    context->AddInitialMetadata("tessera-query-id", absl::StrCat(execution.query_id));
    send_metadata();
    out->result = run(session.session());
    out->query_id = execution.query_id;
    out->execution_us = (MonotonicNanos() - execution.start_ns) / 1000;
    session.EndExecution();
    if (override_priority) {
      session.session().Execute(absl::StrCat("SET priority = ", session_priority)).IgnoreError();
    }
    session.Touch();
    return grpc::Status::OK;
  }

  // A CopyIn or CopyOut call runs exactly one COPY of its direction, nothing else.
  static grpc::Status CheckCopyCall(const std::string& sql, CopyDirection wanted) {
    absl::StatusOr<CopyDirection> direction = CopyStatementDirection(sql);
    if (!direction.ok()) return ToGrpcStatus(direction.status());
    if (*direction != wanted) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          wanted == CopyDirection::kIn ? "the CopyIn call runs COPY ... FROM STDIN; use CopyOut"
                                                       : "the CopyOut call runs COPY ... TO STDOUT; use CopyIn");
    }
    return grpc::Status::OK;
  }

  static void FillSummary(const Execution& execution, int64_t rows_sent, int64_t arrival_ns,
                          v1::ExecuteSummary* summary) {
    summary->set_query_id(execution.query_id);
    summary->set_row_count(rows_sent);
    summary->set_rows_affected(execution.result->rows_affected);
    summary->set_status_message(execution.result->status_message);
    summary->set_returns_rows(execution.result->returns_rows);
    summary->set_execution_us(execution.execution_us);
    summary->set_total_us((MonotonicNanos() - arrival_ns) / 1000);
  }

  grpc::Status Execute(grpc::ServerContext* context, const v1::ExecuteRequest* request,
                       grpc::ServerWriter<v1::ExecuteResponse>* writer) override {
    const int64_t arrival_ns = MonotonicNanos();
    const size_t batch_rows = request->max_batch_rows() > 0
                                  ? std::min(request->max_batch_rows(), options_.max_batch_rows)
                                  : options_.default_batch_rows;
    BatchWriter batches(writer, batch_rows, options_.max_batch_bytes);
    Execution execution;
    grpc::Status started = RunInSession(
        context, *request, [&] { writer->SendInitialMetadata(); },
        [&](Session& session) { return session.Execute(request->sql(), &batches); }, &execution);
    if (!started.ok()) return started;
    absl::StatusOr<QueryResult>& result = execution.result;
    if (!result.ok()) return ToGrpcStatus(result.status());
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
    // Rows that were not streamed (SHOW, EXPLAIN, ...) go out the same way.
    if (result->returns_rows && !batches.began()) {
      batches.BeginRows(result->columns).IgnoreError();
      if (!result->rows.empty() && !batches.AddRows(std::move(result->rows)).ok()) {
        return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
      }
    }
    if (!batches.Finish()) return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
    v1::ExecuteResponse response;
    FillSummary(execution, batches.rows(), arrival_ns, response.mutable_summary());
    writer->WriteLast(response, grpc::WriteOptions());
    return grpc::Status::OK;
  }

  grpc::Status CopyIn(grpc::ServerContext* context, grpc::ServerReader<v1::CopyInRequest>* reader,
                      v1::ExecuteSummary* summary) override {
    const int64_t arrival_ns = MonotonicNanos();
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    v1::CopyInRequest first;
    if (!reader->Read(&first) || first.payload_case() != v1::CopyInRequest::kStatement) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the first message of CopyIn must be the statement");
    }
    const v1::ExecuteRequest& request = first.statement();
    if (grpc::Status checked = CheckCopyCall(request.sql(), CopyDirection::kIn); !checked.ok()) return checked;
    GrpcCopyInChannel channel(context, reader);
    Execution execution;
    grpc::Status started = RunInSession(
        context, request, [&] { reader->SendInitialMetadata(); },
        [&](Session& session) { return session.Execute(request.sql(), nullptr, &channel); }, &execution);
    if (!started.ok()) return started;
    if (!execution.result.ok()) return ToGrpcStatus(execution.result.status());
    FillSummary(execution, 0, arrival_ns, summary);
    return grpc::Status::OK;
  }

  grpc::Status CopyOut(grpc::ServerContext* context, const v1::ExecuteRequest* request,
                       grpc::ServerWriter<v1::CopyOutResponse>* writer) override {
    const int64_t arrival_ns = MonotonicNanos();
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    if (grpc::Status checked = CheckCopyCall(request->sql(), CopyDirection::kOut); !checked.ok()) return checked;
    GrpcCopyOutChannel channel(writer);
    Execution execution;
    grpc::Status started = RunInSession(
        context, *request, [&] { writer->SendInitialMetadata(); },
        [&](Session& session) { return session.Execute(request->sql(), nullptr, &channel); }, &execution);
    if (!started.ok()) return started;
    if (!execution.result.ok()) return ToGrpcStatus(execution.result.status());
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
    v1::CopyOutResponse response;
    FillSummary(execution, execution.result->rows_affected, arrival_ns, response.mutable_summary());
    writer->WriteLast(response, grpc::WriteOptions());
    return grpc::Status::OK;
  }

  grpc::Status Cancel(grpc::ServerContext* context, const v1::CancelRequest* request,
                      v1::CancelResponse* response) override {
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    absl::StatusOr<std::shared_ptr<ServerSession>> session =
        FindTarget(request->target_case() == v1::CancelRequest::kQueryId, request->session_id(), request->query_id());
    if (!session.ok()) return ToGrpcStatus(session.status());
    response->set_cancelled((*session)->RequestCancel());
    return grpc::Status::OK;
  }

  grpc::Status GetProgress(grpc::ServerContext* context, const v1::ProgressRequest* request,
                           v1::ProgressResponse* response) override {
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    absl::StatusOr<std::shared_ptr<ServerSession>> session =
        FindTarget(request->target_case() == v1::ProgressRequest::kQueryId, request->session_id(), request->query_id());
    if (!session.ok()) return ToGrpcStatus(session.status());
    std::optional<RunningExecution> running = (*session)->running();
    if (!running) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no query is running in this session");
    // Between statements, or in a statement that does not run under the scheduler (COPY, DDL), there is no
    // per-operator progress: the answer then has the ids and the elapsed time only.
    absl::StatusOr<QueryProgress> progress = (*session)->session().RunningQueryProgress();
    if (progress.ok()) ProgressToProto(*progress, response);
    response->set_query_id(running->query_id);
    response->set_session_id(running->session_id);
    response->set_elapsed_us((MonotonicNanos() - running->start_ns) / 1000);
    return grpc::Status::OK;
  }

  grpc::Status ListQueries(grpc::ServerContext* context, const v1::ListQueriesRequest*,
                           v1::ListQueriesResponse* response) override {
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    // What SHOW QUERIES lists (ordered by query id).
    for (const RunningStatement& running : activity_.RunningStatements()) {
      v1::RunningQuery* query = response->add_queries();
      query->set_query_id(running.query_id);
      query->set_session_id(running.session_id);
      query->set_sql(running.sql);
      query->set_elapsed_us(running.elapsed_us);
      query->set_priority(running.priority);
    }
    return grpc::Status::OK;
  }

  grpc::Status ListTables(grpc::ServerContext* context, const v1::ListTablesRequest*,
                          v1::ListTablesResponse* response) override {
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    for (const auto& table : database_->catalog().ListTables()) {
      v1::TableInfo* info = response->add_tables();
      info->set_name(table->name);
      info->set_row_count(table->row_count);
      info->set_block_count(table->BlockCount());
    }
    for (const auto& view : database_->catalog().ListViews()) {
      v1::TableInfo* info = response->add_tables();
      info->set_name(view->name);
      info->set_is_view(true);
      info->set_row_count(-1);
      info->set_block_count(-1);
    }
    return grpc::Status::OK;
  }

  grpc::Status DescribeTable(grpc::ServerContext* context, const v1::DescribeTableRequest* request,
                             v1::DescribeTableResponse* response) override {
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    response->set_name(request->name());
    if (database_->catalog().HasView(request->name())) {
      absl::StatusOr<std::vector<ResultColumn>> columns = DescribeView(*database_, request->name());
      if (!columns.ok()) return ToGrpcStatus(columns.status());
      response->set_is_view(true);
      response->set_row_count(-1);
      for (const ResultColumn& column : *columns) {
        v1::ColumnInfo* info = response->add_columns();
        info->set_name(column.name);
        TypeToProto(column.type, info->mutable_type());
        info->set_nullable(true);
      }
      return grpc::Status::OK;
    }
    absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = database_->catalog().GetTable(request->name());
    if (!table.ok()) return ToGrpcStatus(table.status());
    response->set_row_count((*table)->row_count);
    for (const ColumnSchema& column : (*table)->columns) {
      v1::ColumnInfo* info = response->add_columns();
      info->set_name(column.name);
      TypeToProto(column.type, info->mutable_type());
      info->set_nullable(!column.not_null);
      if (column.default_value) info->set_default_value(column.default_value->ToString());
    }
    return grpc::Status::OK;
  }

 private:
  grpc::Status Authorize(grpc::ServerContext* context) const {
    if (options_.token.empty()) return grpc::Status::OK;
    const auto& metadata = context->client_metadata();
    auto it = metadata.find("authorization");
    if (it == metadata.end()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "this server needs a token: send metadata 'authorization: Bearer <token>'");
    }
    std::string_view value(it->second.data(), it->second.size());
    constexpr std::string_view kBearer = "Bearer ";
    if (value.substr(0, kBearer.size()) != kBearer || !SecretEquals(value.substr(kBearer.size()), options_.token)) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "invalid token");
    }
    return grpc::Status::OK;
  }

  // Authorize, and refuse new work while shutting down.
  grpc::Status Admit(grpc::ServerContext* context) const {
    if (grpc::Status status = Authorize(context); !status.ok()) return status;
    if (shutting_down_.load()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down");
    return grpc::Status::OK;
  }

  absl::StatusOr<std::shared_ptr<ServerSession>> FindTarget(bool by_query, const std::string& session_id,
                                                            int64_t query_id) const {
    if (by_query) return sessions_.FindByQuery(query_id);
    return sessions_.Find(session_id);
  }

  // Under the session's execute mutex: SET name = 'value' for each setting, then the priority (> 0).
  static absl::Status ApplySettings(ServerSession& session,
                                    const google::protobuf::Map<std::string, std::string>& settings, int priority) {
    if (priority < 0) return absl::InvalidArgumentError("priority must be a positive integer");
    std::vector<std::pair<std::string, std::string>> sorted(settings.begin(), settings.end());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [name, value] : sorted) {
      if (!IsSettingName(name)) return absl::InvalidArgumentError(absl::StrCat("invalid setting name '", name, "'"));
      absl::StatusOr<QueryResult> set =
          session.session().Execute(absl::StrCat("SET ", name, " = ", SqlStringLiteral(value)));
      if (!set.ok()) return set.status();
    }
    if (priority > 0) {
      absl::StatusOr<QueryResult> set = session.session().Execute(absl::StrCat("SET priority = ", priority));
      if (!set.ok()) return set.status();
    }
    return absl::OkStatus();
  }

  // Under the session's execute mutex.
  static absl::Status ReadSettings(ServerSession& session, v1::SessionSettings* out) {
    absl::StatusOr<QueryResult> all = session.session().Execute("SHOW ALL");
    if (!all.ok()) return all.status();
    for (const std::vector<Value>& row : all->rows) {
      if (row.size() == 2) (*out->mutable_settings())[row[0].ToString()] = row[1].ToString();
    }
    out->set_priority(session.session().priority());
    return absl::OkStatus();
  }

  void Monitor() {
    int64_t last_idle_check_ns = MonotonicNanos();
    std::unique_lock<std::mutex> lock(monitor_mutex_);
    while (!stop_monitor_) {
      monitor_wakeup_.wait_for(lock, std::chrono::milliseconds(kMonitorPeriodMs));
      if (stop_monitor_) break;
      lock.unlock();
      for (const std::shared_ptr<ServerSession>& session : sessions_.All()) session->Watch();
      const int64_t now = MonotonicNanos();
      if (now - last_idle_check_ns > kSessionCheckPeriodNs) {
        last_idle_check_ns = now;
        int closed = sessions_.CloseIdle(options_.session_idle_timeout_ms * 1'000'000);
        if (closed > 0) LOG(INFO) << "closed " << closed << " idle or abandoned session(s)";
      }
      lock.lock();
    }
  }

  Database* const database_;
  const ServerOptions options_;
  SessionRegistry sessions_;
  RegistryActivity activity_{&sessions_};  // SHOW QUERIES / CANCEL QUERY, installed on the database while serving
  const int64_t start_ns_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::unique_ptr<PgServer> pg_server_;
  std::atomic<bool> shutting_down_{false};
  std::mutex shutdown_mutex_;

  std::thread monitor_;
  std::mutex monitor_mutex_;
  std::condition_variable monitor_wakeup_;
  bool stop_monitor_ = false;
};

absl::StatusOr<std::unique_ptr<TesseraServer>> TesseraServer::Start(Database* database, const ServerOptions& options) {
  std::unique_ptr<TesseraServer> server(new TesseraServer());
  server->service_ = std::make_unique<Service>(database, options);
  absl::Status started = server->service_->Start();
  if (!started.ok()) return started;
  return server;
}

TesseraServer::~TesseraServer() {
  if (service_ != nullptr) service_->Shutdown();
}

int TesseraServer::port() const { return service_->port(); }

int TesseraServer::pg_port() const { return service_->pg_port(); }

void TesseraServer::Shutdown() { service_->Shutdown(); }

}  // namespace tessera
