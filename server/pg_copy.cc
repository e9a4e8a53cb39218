#include "server/pg_copy.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tessera::pg {

void PgCopyChannel::WriteResponse(char type, const CopyStreamShape& shape) {
  MessageWriter writer(&stream_->output());
  writer.Begin(type);
  writer.Byte(0);  // text (CSV included); binary COPY is not supported
  writer.Int16(static_cast<int16_t>(shape.column_count));
  for (int c = 0; c < shape.column_count; ++c) writer.Int16(0);
  writer.End();
}

absl::Status PgCopyChannel::BeginCopyIn(const CopyStreamShape& shape) {
  WriteResponse('G', shape);
  copy_in_ = true;
  if (absl::Status flushed = stream_->Flush(); !flushed.ok()) {
    connection_lost_ = true;
    return absl::UnavailableError(absl::StrCat("the client went away before COPY FROM STDIN: ", flushed.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> PgCopyChannel::ReadCopyData(std::string* data) {
  while (true) {
    absl::StatusOr<Message> message = stream_->ReadMessage(kMaxCopyDataBytes);
    if (!message.ok()) {
      connection_lost_ = true;
      copy_in_ended_ = true;
      return absl::UnavailableError(
          absl::StrCat("the client went away during COPY FROM STDIN: ", message.status().message()));
    }
    switch (message->type) {
      case 'd':
        *data = std::move(message->body);
        return true;
      case 'c':
        copy_in_ended_ = true;
        return false;
      case 'f': {
        copy_in_ended_ = true;
        MessageReader reader(message->body);
        std::string_view reason;
        if (!reader.ReadCString(&reason)) reason = "no reason given";
        return absl::CancelledError(absl::StrCat("COPY from stdin failed: ", std::string(reason)));
      }
      case 'H':
      case 'S':
        continue;  // ignored during COPY IN, as PostgreSQL does
      default:
        connection_lost_ = true;  // the client does not follow the protocol: the connection ends
        copy_in_ended_ = true;
        violation_ = absl::StrCat("unexpected message type '", absl::CEscape(std::string(1, message->type)),
                                  "' during COPY FROM STDIN");
        return absl::InvalidArgumentError(violation_);
    }
  }
}

bool PgCopyChannel::DiscardCopyIn(std::string* violation) {
  while (!copy_in_ended_) {
    absl::StatusOr<Message> message = stream_->ReadMessage(kMaxCopyDataBytes);
    if (!message.ok()) return false;
    switch (message->type) {
      case 'd':
      case 'H':
      case 'S':
        break;
      case 'c':
      case 'f':
        copy_in_ended_ = true;
        break;
      default:
        *violation = absl::StrCat("unexpected message type '", absl::CEscape(std::string(1, message->type)),
                                  "' during COPY FROM STDIN");
        return false;
    }
  }
  return true;
}

absl::Status PgCopyChannel::BeginCopyOut(const CopyStreamShape& shape) {
  WriteResponse('H', shape);
  copy_out_ = true;
  return absl::OkStatus();
}

absl::Status PgCopyChannel::WriteCopyData(std::string_view data) {
  MessageWriter writer(&stream_->output());
  writer.Begin('d');
  writer.Bytes(data);
  writer.End();
  if (absl::Status flushed = stream_->FlushIfLarge(); !flushed.ok()) {
    connection_lost_ = true;
    return absl::CancelledError("the client went away");
  }
  return absl::OkStatus();
}

void PgCopyChannel::EndCopyOut() {
  MessageWriter writer(&stream_->output());
  writer.Begin('c');
  writer.End();
}

}  // namespace tessera::pg
