// Fuzz target for the gRPC service's request messages (server/tessera.proto, server/tessera_server.h). One
// TesseraServer runs in the process over a small database (file access restricted, as tessera-server runs it);
// each input is a sequence of calls, each sent as raw bytes to one of the service's methods over a real channel, so
// that the server's wire decoding and its handlers see exactly the fuzzed bytes:
//
//   record := method (1 byte, modulo the method count) | flags (1 byte) | length (1 byte) | request bytes
//
// With flag bit 0 set and bytes that decode as the method's request, the request's session_id is replaced by a live
// session's id first, so that the handlers get past the session lookup (Execute runs the fuzzed SQL). Every call
// has a 2 s deadline (the server cancels what runs longer). Beyond "the server never crashes": it answers Health
// and a session's KeepAlive after every input, and every Execute response decodes as an ExecuteResponse.
//
// Build and run: tests/fuzz/README.md.

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "glog/logging.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/message.h"
#include "google/protobuf/stubs/logging.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "server/tessera.grpc.pb.h"
#include "server/tessera_server.h"

namespace tessera {
namespace {

void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "grpc_request_fuzzer: %s\n%.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

class Environment {
 public:
  Environment() {
    FLAGS_minloglevel = 2;                     // errors only: every bad request is logged otherwise
    google::protobuf::SetLogHandler(nullptr);  // so is every string field with invalid UTF-8
    const std::filesystem::path base =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    directory_ = (base / ("tessera_grpc_fuzzer_" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(directory_);
    DatabaseOptions options;
    options.data_directory = directory_;
    options.sync_writes = false;
    options.worker_threads = 2;
    options.memory_budget_bytes = size_t{1} << 30;
    options.file_access.restricted = true;  // as tessera-server without --allowed-directories: COPY is refused
    auto database = Database::Open(options);
    if (!database.ok()) Fail("cannot open the database", database.status().ToString());
    database_ = *std::move(database);
    Session session(database_.get());
    auto loaded = session.Execute(
        "CREATE TABLE t (i INTEGER, s VARCHAR(20), d DATE); "
        "INSERT INTO t VALUES (1, 'one', '2024-01-01'), (2, NULL, '2024-02-29'), (NULL, 'three', NULL);"
        "CREATE VIEW v AS SELECT i, s FROM t WHERE i > 1");
    if (!loaded.ok()) Fail("cannot load the database", loaded.status().ToString());
    ServerOptions server_options;
    server_options.listen_address = "127.0.0.1:0";
    server_options.max_sessions = 64;
    server_options.shutdown_grace_ms = 500;
    auto server = TesseraServer::Start(database_.get(), server_options);
    if (!server.ok()) Fail("cannot start the server", server.status().ToString());
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials());
    stub_ = v1::Tessera::NewStub(channel_);
    generic_ = std::make_unique<grpc::GenericStub>(channel_);
    service_ = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("tessera.v1.Tessera");
    if (service_ == nullptr) Fail("no descriptor for tessera.v1.Tessera", "");
    EnsureSession();
  }

  const google::protobuf::ServiceDescriptor& service() const { return *service_; }
  const std::string& session_id() const { return session_id_; }

  // The server answers Health, and the live session (opened again if an input closed it) answers KeepAlive.
  // Sessions the input opened are closed (they would fill the server's session limit).
  void EnsureSession() {
    for (const std::string& id : opened_by_input_) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::CloseSessionRequest request;
      request.set_session_id(id);
      v1::CloseSessionResponse response;
      (void)stub_->CloseSession(&context, request, &response);
    }
    opened_by_input_.clear();
    {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::HealthResponse health;
      grpc::Status status = stub_->Health(&context, v1::HealthRequest(), &health);
      if (!status.ok()) Fail("the server does not answer Health", status.error_message());
    }
    if (!session_id_.empty()) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::KeepAliveRequest request;
      request.set_session_id(session_id_);
      v1::KeepAliveResponse response;
      if (stub_->KeepAlive(&context, request, &response).ok()) return;
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::OpenSessionResponse opened;
    grpc::Status status = stub_->OpenSession(&context, v1::OpenSessionRequest(), &opened);
    if (!status.ok()) Fail("cannot open a session", status.error_message());
    session_id_ = opened.session_id();
  }

  // Sends `bytes` as the one request message of `method` and reads every response; Execute's must decode.
  void CallRaw(const google::protobuf::MethodDescriptor& method, const std::string& bytes) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    grpc::CompletionQueue queue;
    const std::string path = absl::StrCat("/", service_->full_name(), "/", method.name());
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = generic_->PrepareCall(&context, path, &queue);
    void* tag = nullptr;
    bool ok = false;
    call->StartCall(reinterpret_cast<void*>(1));
    queue.Next(&tag, &ok);
    if (ok) {
      grpc::Slice slice(bytes);
      grpc::ByteBuffer request(&slice, 1);
      call->WriteLast(request, grpc::WriteOptions(), reinterpret_cast<void*>(2));
      queue.Next(&tag, &ok);
      while (true) {
        grpc::ByteBuffer response;
        call->Read(&response, reinterpret_cast<void*>(3));
        queue.Next(&tag, &ok);
        if (!ok) break;
        std::vector<grpc::Slice> slices;
        (void)response.Dump(&slices);
        std::string serialized;
        for (const grpc::Slice& piece : slices) {
          serialized.append(reinterpret_cast<const char*>(piece.begin()), piece.size());
        }
        if (method.name() == "Execute") {
          v1::ExecuteResponse decoded;
          if (!decoded.ParseFromString(serialized)) Fail("an Execute response does not decode", bytes);
        } else if (method.name() == "OpenSession") {
          v1::OpenSessionResponse decoded;
          if (!decoded.ParseFromString(serialized)) Fail("an OpenSession response does not decode", bytes);
          opened_by_input_.push_back(decoded.session_id());
        }
      }
    }
    grpc::Status status;
    call->Finish(&status, reinterpret_cast<void*>(4));
    queue.Next(&tag, &ok);
    queue.Shutdown();
    while (queue.Next(&tag, &ok)) {
    }
  }

 private:
  std::string directory_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<TesseraServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Tessera::Stub> stub_;
  std::unique_ptr<grpc::GenericStub> generic_;
  const google::protobuf::ServiceDescriptor* service_ = nullptr;
  std::string session_id_;
  std::vector<std::string> opened_by_input_;
};

Environment& Env() {
  static Environment* environment = new Environment();  // never destroyed: libFuzzer exits without unwinding
  return *environment;
}

// `bytes` decoded as `method`'s request with its session_id (if it has one) set to the live session; the bytes as
// they are if they do not decode.
std::string WithLiveSession(const google::protobuf::MethodDescriptor& method, const std::string& bytes) {
  const google::protobuf::Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(method.input_type());
  std::unique_ptr<google::protobuf::Message> request(prototype->New());
  if (!request->ParseFromString(bytes)) return bytes;
  const google::protobuf::FieldDescriptor* field = method.input_type()->FindFieldByName("session_id");
  if (field == nullptr || field->type() != google::protobuf::FieldDescriptor::TYPE_STRING) return bytes;
  request->GetReflection()->SetString(request.get(), field, Env().session_id());
  return request->SerializeAsString();
}

}  // namespace
}  // namespace tessera

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  Environment& env = Env();
  const int method_count = env.service().method_count();
  size_t at = 0;
  for (int calls = 0; calls < 8 && at + 3 <= size; ++calls) {
    const google::protobuf::MethodDescriptor& method = *env.service().method(data[at] % method_count);
    const uint8_t flags = data[at + 1];
    const size_t length = std::min<size_t>(data[at + 2], size - at - 3);
    std::string bytes(reinterpret_cast<const char*>(data) + at + 3, length);
    at += 3 + length;
    if (flags & 1) bytes = WithLiveSession(method, bytes);
    env.CallRaw(method, bytes);
  }
  env.EnsureSession();
  return 0;
}
