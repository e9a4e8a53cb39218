#pragma once
// The gRPC service's COPY calls (tessera.proto: CopyIn, CopyOut) as the engine's CopyChannel
// (engine/copy_channel.h): CopyIn's request stream is the data of COPY ... FROM STDIN, CopyOut's response stream
// carries COPY ... TO STDOUT's lines. gRPC's flow control paces either side to the other.
//
// Threading: the call's handler thread only (the one that runs Session::Execute).

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/copy_channel.h"
#include "grpcpp/grpcpp.h"
#include "server/tessera.grpc.pb.h"

namespace tessera {

// CopyIn: the data messages after the statement. The end of the client's stream ends the data; a cancelled call
// (the client went away) is an error, so the COPY commits nothing.
class GrpcCopyInChannel final : public CopyChannel {
 public:
  GrpcCopyInChannel(grpc::ServerContext* context, grpc::ServerReader<v1::CopyInRequest>* reader)
      : context_(context), reader_(reader) {}
  absl::Status BeginCopyIn(const CopyStreamShape&) override { return absl::OkStatus(); }
  absl::StatusOr<bool> ReadCopyData(std::string* data) override;
  absl::Status BeginCopyOut(const CopyStreamShape&) override;
  absl::Status WriteCopyData(std::string_view) override;

 private:
  grpc::ServerContext* const context_;
  grpc::ServerReader<v1::CopyInRequest>* const reader_;
};

// CopyOut: each piece of lines as one data message.
class GrpcCopyOutChannel final : public CopyChannel {
 public:
  explicit GrpcCopyOutChannel(grpc::ServerWriter<v1::CopyOutResponse>* writer) : writer_(writer) {}
  absl::Status BeginCopyIn(const CopyStreamShape&) override;
  absl::StatusOr<bool> ReadCopyData(std::string*) override;
  absl::Status BeginCopyOut(const CopyStreamShape&) override { return absl::OkStatus(); }
  absl::Status WriteCopyData(std::string_view data) override;

 private:
  grpc::ServerWriter<v1::CopyOutResponse>* const writer_;
  v1::CopyOutResponse message_;
};

}  // namespace tessera
