#include "server/grpc_copy.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tessera {

absl::StatusOr<bool> GrpcCopyInChannel::ReadCopyData(std::string* data) {
  v1::CopyInRequest request;
  if (!reader_->Read(&request)) {
    if (context_->IsCancelled()) return absl::CancelledError("the client went away during COPY FROM STDIN");
    return false;
  }
  if (request.payload_case() != v1::CopyInRequest::kData) {
    return absl::InvalidArgumentError("CopyIn: only the first message may be the statement; the others are data");
  }
  data->swap(*request.mutable_data());
  return true;
}

absl::Status GrpcCopyInChannel::BeginCopyOut(const CopyStreamShape&) {
  return absl::InvalidArgumentError("the CopyIn call cannot run COPY ... TO STDOUT");
}

absl::Status GrpcCopyInChannel::WriteCopyData(std::string_view) {
  return absl::InvalidArgumentError("the CopyIn call cannot run COPY ... TO STDOUT");
}

absl::Status GrpcCopyOutChannel::BeginCopyIn(const CopyStreamShape&) {
  return absl::InvalidArgumentError("the CopyOut call cannot run COPY ... FROM STDIN");
}

absl::StatusOr<bool> GrpcCopyOutChannel::ReadCopyData(std::string*) {
  return absl::InvalidArgumentError("the CopyOut call cannot run COPY ... FROM STDIN");
}

absl::Status GrpcCopyOutChannel::WriteCopyData(std::string_view data) {
  message_.set_data(data.data(), data.size());
  if (!writer_->Write(message_)) return absl::CancelledError("the client went away");
  return absl::OkStatus();
}

}  // namespace tessera
