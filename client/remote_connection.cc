#include "client/remote_connection.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/copy_channel.h"
#include "grpcpp/grpcpp.h"
#include "server/tessera.grpc.pb.h"
#include "server/wire_format.h"

namespace tessera {
namespace {

// Short control calls (Cancel, Progress, CloseSession) must not hang a shell when the server is gone.
constexpr int kControlDeadlineMs = 5'000;

std::chrono::system_clock::time_point DeadlineIn(int milliseconds) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(milliseconds);
}

}  // namespace

struct RemoteConnection::Impl {
  ClientOptions options;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Tessera::Stub> stub;
  std::string host_port;
  // Replaced when Execute reopens an expired session, possibly while another thread calls Cancel or Progress.
  mutable std::mutex session_mutex;
  std::string session_id;

  std::string SessionId() const {
    std::lock_guard<std::mutex> lock(session_mutex);
    return session_id;
  }

  // Every call: the token, and a deadline for the short control calls (0 = none, for Execute and the catalog).
  // Opens a session on the server (waiting up to connect_timeout_ms for it) and keeps its id.
  absl::Status OpenSession() {
    grpc::ClientContext context;
    Prepare(&context, options.connect_timeout_ms);
    context.set_wait_for_ready(true);  // wait for the connection within the deadline rather than fail at once
    v1::OpenSessionRequest request;
    request.set_priority(options.priority);
    request.set_lease_seconds(static_cast<uint32_t>(std::max(0, options.lease_seconds)));
    v1::OpenSessionResponse response;
    grpc::Status status = stub->OpenSession(&context, request, &response);
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return absl::UnavailableError(absl::StrCat("cannot reach a tessera-server at ", host_port, " within ",
                                                 options.connect_timeout_ms, " ms: ", status.error_message()));
    }
    if (!status.ok()) return FromGrpcStatus(status);
    std::lock_guard<std::mutex> lock(session_mutex);
    session_id = response.session_id();
    return absl::OkStatus();
  }

  // Renews the session's lease every third of it until StopKeepAlive (a failed renewal is retried at the next
  // period; a session the server forgot is reopened by the next Execute).
  void StartKeepAlive() {
    if (options.lease_seconds <= 0) return;
    keep_alive = std::thread([this] {
      const auto period = std::chrono::milliseconds(options.lease_seconds * 1000 / 3);
      std::unique_lock<std::mutex> lock(keep_alive_mutex);
      while (!keep_alive_wakeup.wait_for(lock, period, [this] { return stop_keep_alive; })) {
        lock.unlock();
        grpc::ClientContext context;
        Prepare(&context, kControlDeadlineMs);
        v1::KeepAliveRequest request;
        request.set_session_id(SessionId());
        v1::KeepAliveResponse response;
        stub->KeepAlive(&context, request, &response).error_code();  // best effort
        lock.lock();
      }
    });
  }

  void StopKeepAlive() {
    {
      std::lock_guard<std::mutex> lock(keep_alive_mutex);
      stop_keep_alive = true;
    }
    keep_alive_wakeup.notify_all();
    if (keep_alive.joinable()) keep_alive.join();
  }

  std::thread keep_alive;
  std::mutex keep_alive_mutex;
  std::condition_variable keep_alive_wakeup;
  bool stop_keep_alive = false;

  void Prepare(grpc::ClientContext* context, int deadline_ms = 0) const {
    if (!options.token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", options.token));
    if (deadline_ms > 0) context->set_deadline(DeadlineIn(deadline_ms));
  }
};

absl::StatusOr<std::unique_ptr<RemoteConnection>> RemoteConnection::Connect(const std::string& host_port,
                                                                            const ClientOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->host_port = host_port;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);  // the server bounds its batches
  arguments.SetMaxSendMessageSize(-1);     // the server bounds statements, with a clear error
  if (options.use_tls) {
    grpc::SslCredentialsOptions ssl;
    if (!options.tls_root_certs_path.empty()) {
      std::ifstream file(options.tls_root_certs_path);
      if (!file) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot read the TLS root certificates '", options.tls_root_certs_path, "'"));
      }
      std::stringstream contents;
      contents << file.rdbuf();
      ssl.pem_root_certs = contents.str();
    }
    credentials = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) {
      arguments.SetSslTargetNameOverride(options.tls_server_name);
    }
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  impl->channel = grpc::CreateCustomChannel(host_port, credentials, arguments);
  impl->stub = v1::Tessera::NewStub(impl->channel);

  absl::Status opened = impl->OpenSession();
  if (!opened.ok()) return opened;
  impl->StartKeepAlive();
  return std::unique_ptr<RemoteConnection>(new RemoteConnection(std::move(impl)));
}

RemoteConnection::RemoteConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RemoteConnection::~RemoteConnection() {
  impl_->StopKeepAlive();
  grpc::ClientContext context;
  impl_->Prepare(&context, kControlDeadlineMs);
  v1::CloseSessionRequest request;
  request.set_session_id(impl_->SessionId());
  v1::CloseSessionResponse response;
  impl_->stub->CloseSession(&context, request, &response);  // best effort: idle sessions also expire
}

absl::StatusOr<QueryResult> RemoteConnection::Execute(std::string_view sql) {
  bool session_expired = false;
  absl::StatusOr<QueryResult> result = ExecuteOnce(sql, &session_expired);
  if (!session_expired) return result;
  // The server forgot the session (idle timeout, restart) before running anything: open a new one, whose
  // settings are the connection's options again, and send the statement once more.
  absl::Status reopened = impl_->OpenSession();
  if (!reopened.ok()) return reopened;
  return ExecuteOnce(sql, &session_expired);
}

absl::StatusOr<QueryResult> RemoteConnection::ExecuteOnce(std::string_view sql, bool* session_expired) {
  grpc::ClientContext context;
  impl_->Prepare(&context);
  v1::ExecuteRequest request;
  request.set_session_id(impl_->SessionId());
  request.set_sql(std::string(sql));
  request.set_max_batch_rows(impl_->options.max_batch_rows);
  std::unique_ptr<grpc::ClientReader<v1::ExecuteResponse>> reader = impl_->stub->Execute(&context, request);
  QueryResult result;
  absl::Status decode_error;
  v1::ExecuteResponse response;
  while (reader->Read(&response)) {
    if (!decode_error.ok()) continue;  // drain the stream so Finish returns
    switch (response.payload_case()) {
      case v1::ExecuteResponse::kHeader: {
        absl::StatusOr<std::vector<ResultColumn>> columns = HeaderFromProto(response.header());
        if (columns.ok()) {
          result.columns = *std::move(columns);
          result.returns_rows = true;
        } else {
          decode_error = columns.status();
        }
        break;
      }
      case v1::ExecuteResponse::kBatch:
        decode_error = AppendBatchRows(response.batch(), result.columns, &result.rows);
        break;
      case v1::ExecuteResponse::kSummary:
        result.status_message = response.summary().status_message();
        result.rows_affected = response.summary().rows_affected();
        result.returns_rows = response.summary().returns_rows();
        break;
      case v1::ExecuteResponse::PAYLOAD_NOT_SET:
        break;
    }
  }
  grpc::Status status = reader->Finish();
  *session_expired = status.error_code() == grpc::StatusCode::NOT_FOUND &&
                     context.GetServerTrailingMetadata().count("tessera-unknown-session") > 0;
  if (!status.ok()) return FromGrpcStatus(status);
  if (!decode_error.ok()) {
    return absl::InternalError(absl::StrCat("malformed response from the server: ", decode_error.message()));
  }
  return result;
}

absl::StatusOr<QueryResult> RemoteConnection::ExecuteCopy(std::string_view sql, CopyChannel& channel) {
  absl::StatusOr<CopyDirection> direction = CopyStatementDirection(sql);
  if (!direction.ok()) return direction.status();
  auto once = [&](bool* session_expired) {
    return *direction == CopyDirection::kIn ? CopyInOnce(sql, channel, session_expired)
                                            : CopyOutOnce(sql, channel, session_expired);
  };
  bool session_expired = false;
  absl::StatusOr<QueryResult> result = once(&session_expired);
  if (!session_expired) return result;
  absl::Status reopened = impl_->OpenSession();
  if (!reopened.ok()) return reopened;
  return once(&session_expired);
}

namespace {

QueryResult CopySummary(const v1::ExecuteSummary& summary) {
  QueryResult result;
  result.status_message = summary.status_message();
  result.rows_affected = summary.rows_affected();
  return result;
}

}  // namespace

absl::StatusOr<QueryResult> RemoteConnection::CopyInOnce(std::string_view sql, CopyChannel& channel,
                                                         bool* session_expired) {
  grpc::ClientContext context;
  impl_->Prepare(&context);
  v1::ExecuteSummary summary;
  std::unique_ptr<grpc::ClientWriter<v1::CopyInRequest>> writer = impl_->stub->CopyIn(&context, &summary);
  v1::CopyInRequest request;
  request.mutable_statement()->set_session_id(impl_->SessionId());
  request.mutable_statement()->set_sql(std::string(sql));
  absl::Status local;
  if (writer->Write(request)) {
    // The server sends its initial metadata as it starts the statement; without the query id it refused the call
    // before reading any data (an unknown session, a bad statement), so nothing of the channel is consumed and the
    // call may be repeated.
    writer->WaitForInitialMetadata();
    if (context.GetServerInitialMetadata().count("tessera-query-id") > 0) {
      local = channel.BeginCopyIn(CopyStreamShape{});
      std::string data;
      bool open = local.ok();
      while (open) {
        absl::StatusOr<bool> more = channel.ReadCopyData(&data);
        if (!more.ok()) local = more.status();
        if (!more.ok() || !*more) break;
        for (size_t at = 0; open && at < data.size(); at += kCopyChunkBytes) {
          request.set_data(data.data() + at, std::min(kCopyChunkBytes, data.size() - at));
          open = writer->Write(request);  // false: the server ended the call (a bad line); Finish says why
        }
      }
      if (!local.ok()) context.TryCancel();  // the COPY must not commit what was sent
    }
  }
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!local.ok()) return local;
  *session_expired = status.error_code() == grpc::StatusCode::NOT_FOUND &&
                     context.GetServerTrailingMetadata().count("tessera-unknown-session") > 0;
  if (!status.ok()) return FromGrpcStatus(status);
  return CopySummary(summary);
}

absl::StatusOr<QueryResult> RemoteConnection::CopyOutOnce(std::string_view sql, CopyChannel& channel,
                                                          bool* session_expired) {
  grpc::ClientContext context;
  impl_->Prepare(&context);
  v1::ExecuteRequest request;
  request.set_session_id(impl_->SessionId());
  request.set_sql(std::string(sql));
  std::unique_ptr<grpc::ClientReader<v1::CopyOutResponse>> reader = impl_->stub->CopyOut(&context, request);
  absl::Status local;
  bool began = false;
  QueryResult result;
  v1::CopyOutResponse response;
  while (reader->Read(&response)) {
    if (!local.ok()) continue;  // drain the stream so Finish returns
    if (response.payload_case() == v1::CopyOutResponse::kSummary) {
      result = CopySummary(response.summary());
      continue;
    }
    if (!began) {
      local = channel.BeginCopyOut(CopyStreamShape{});
      began = true;
    }
    if (local.ok()) local = channel.WriteCopyData(response.data());
    if (!local.ok()) context.TryCancel();
  }
  grpc::Status status = reader->Finish();
  if (!local.ok()) return local;
  *session_expired = status.error_code() == grpc::StatusCode::NOT_FOUND &&
                     context.GetServerTrailingMetadata().count("tessera-unknown-session") > 0;
  if (!status.ok()) return FromGrpcStatus(status);
  if (!began) TESSERA_RETURN_IF_ERROR(channel.BeginCopyOut(CopyStreamShape{}));  // no rows: an empty file
  return result;
}

void RemoteConnection::Cancel() {
  grpc::ClientContext context;
  impl_->Prepare(&context, kControlDeadlineMs);
  v1::CancelRequest request;
  request.set_session_id(impl_->SessionId());
  v1::CancelResponse response;
  impl_->stub->Cancel(&context, request, &response);  // a no-op when idle; errors leave nothing to do
}

absl::StatusOr<QueryProgress> RemoteConnection::Progress() {
  grpc::ClientContext context;
  impl_->Prepare(&context, kControlDeadlineMs);
  v1::ProgressRequest request;
  request.set_session_id(impl_->SessionId());
  v1::ProgressResponse response;
  grpc::Status status = impl_->stub->GetProgress(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return ProgressFromProto(response);
}

absl::Status RemoteConnection::SetPriority(int priority) {
  if (priority < 1) return absl::InvalidArgumentError("priority must be a positive integer");
  grpc::ClientContext context;
  impl_->Prepare(&context, kControlDeadlineMs);
  v1::UpdateSessionRequest request;
  request.set_session_id(impl_->SessionId());
  request.set_priority(priority);
  v1::SessionSettings response;
  return FromGrpcStatus(impl_->stub->UpdateSession(&context, request, &response));
}

absl::StatusOr<std::vector<RemoteTableInfo>> RemoteConnection::ListTables() {
  grpc::ClientContext context;
  impl_->Prepare(&context);
  v1::ListTablesResponse response;
  grpc::Status status = impl_->stub->ListTables(&context, v1::ListTablesRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  std::vector<RemoteTableInfo> tables;
  for (const v1::TableInfo& table : response.tables()) {
    tables.push_back(RemoteTableInfo{table.name(), table.is_view(), table.row_count(), table.block_count()});
  }
  return tables;
}

absl::StatusOr<std::vector<RemoteColumnInfo>> RemoteConnection::DescribeTable(const std::string& name) {
  grpc::ClientContext context;
  impl_->Prepare(&context);
  v1::DescribeTableRequest request;
  request.set_name(name);
  v1::DescribeTableResponse response;
  grpc::Status status = impl_->stub->DescribeTable(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  std::vector<RemoteColumnInfo> columns;
  for (const v1::ColumnInfo& column : response.columns()) {
    absl::StatusOr<Type> type = TypeFromProto(column.type());
    if (!type.ok()) return type.status();
    columns.push_back(RemoteColumnInfo{column.name(), *type, column.nullable(), column.default_value()});
  }
  return columns;
}

absl::StatusOr<ServerHealth> RemoteConnection::Health() {
  grpc::ClientContext context;
  context.set_deadline(DeadlineIn(kControlDeadlineMs));
  v1::HealthResponse response;
  grpc::Status status = impl_->stub->Health(&context, v1::HealthRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return ServerHealth{response.serving(), response.version(), response.uptime_ms(), response.open_sessions(),
                      response.running_queries()};
}

std::string RemoteConnection::session_id() const { return impl_->SessionId(); }

absl::StatusOr<std::unique_ptr<Connection>> ConnectRemote(const std::string& host_port, const ClientOptions& options) {
  absl::StatusOr<std::unique_ptr<RemoteConnection>> connection = RemoteConnection::Connect(host_port, options);
  if (!connection.ok()) return connection.status();
  return std::unique_ptr<Connection>(std::move(*connection));
}

}  // namespace tessera
