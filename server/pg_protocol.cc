#include "server/pg_protocol.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tessera::pg {
namespace {

constexpr size_t kReadChunkBytes = 64 << 10;
constexpr size_t kFlushThresholdBytes = 256 << 10;

int32_t DecodeInt32(const char* p) {
  return static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint8_t>(p[0])) << 24) |
                              (static_cast<uint32_t>(static_cast<uint8_t>(p[1])) << 16) |
                              (static_cast<uint32_t>(static_cast<uint8_t>(p[2])) << 8) |
                              static_cast<uint32_t>(static_cast<uint8_t>(p[3])));
}

}  // namespace

bool MessageReader::ReadByte(char* value) {
  if (remaining() < 1) return false;
  *value = body_[offset_++];
  return true;
}

bool MessageReader::ReadInt16(int16_t* value) {
  if (remaining() < 2) return false;
  *value = static_cast<int16_t>((static_cast<uint8_t>(body_[offset_]) << 8) | static_cast<uint8_t>(body_[offset_ + 1]));
  offset_ += 2;
  return true;
}

bool MessageReader::ReadInt32(int32_t* value) {
  if (remaining() < 4) return false;
  *value = DecodeInt32(body_.data() + offset_);
  offset_ += 4;
  return true;
}

bool MessageReader::ReadCString(std::string_view* value) {
  const size_t end = body_.find('\0', offset_);
  if (end == std::string_view::npos) return false;
  *value = body_.substr(offset_, end - offset_);
  offset_ = end + 1;
  return true;
}

bool MessageReader::ReadBytes(size_t count, std::string_view* value) {
  if (remaining() < count) return false;
  *value = body_.substr(offset_, count);
  offset_ += count;
  return true;
}

void MessageWriter::Begin(char type) {
  out_->push_back(type);
  start_ = out_->size();
  out_->append(4, '\0');
}

void MessageWriter::Int16(int16_t value) {
  const uint16_t v = static_cast<uint16_t>(value);
  out_->push_back(static_cast<char>(v >> 8));
  out_->push_back(static_cast<char>(v));
}

void MessageWriter::Int32(int32_t value) {
  const uint32_t v = static_cast<uint32_t>(value);
  for (int shift = 24; shift >= 0; shift -= 8) out_->push_back(static_cast<char>(v >> shift));
}

void MessageWriter::Int64(int64_t value) {
  const uint64_t v = static_cast<uint64_t>(value);
  for (int shift = 56; shift >= 0; shift -= 8) out_->push_back(static_cast<char>(v >> shift));
}

void MessageWriter::CString(std::string_view value) {
  out_->append(value.data(), value.size());
  out_->push_back('\0');
}

size_t MessageWriter::BeginLength() {
  const size_t mark = out_->size();
  out_->append(4, '\0');
  return mark;
}

void MessageWriter::EndLength(size_t mark) {
  const uint32_t length = static_cast<uint32_t>(out_->size() - mark - 4);
  for (int i = 0; i < 4; ++i) (*out_)[mark + i] = static_cast<char>(length >> (24 - 8 * i));
}

void MessageWriter::End() {
  const uint32_t length = static_cast<uint32_t>(out_->size() - start_);
  for (int i = 0; i < 4; ++i) (*out_)[start_ + i] = static_cast<char>(length >> (24 - 8 * i));
}

absl::StatusOr<StartupPacket> ParseStartupPacket(std::string_view body) {
  MessageReader reader(body);
  StartupPacket packet;
  if (!reader.ReadInt32(&packet.code)) return absl::InvalidArgumentError("startup packet too short");
  if (packet.code == kSslRequestCode || packet.code == kGssEncRequestCode) {
    if (!reader.AtEnd()) return absl::InvalidArgumentError("malformed SSL/GSS request");
    return packet;
  }
  if (packet.code == kCancelRequestCode) {
    if (!reader.ReadInt32(&packet.cancel_process_id) || !reader.ReadInt32(&packet.cancel_secret_key) ||
        !reader.AtEnd()) {
      return absl::InvalidArgumentError("malformed cancel request");
    }
    return packet;
  }
  if ((packet.code >> 16) != 3) {
    return absl::UnimplementedError(absl::StrCat("unsupported frontend protocol ", packet.code >> 16, ".",
                                                 packet.code & 0xFFFF, ": the server supports 3.0"));
  }
  while (true) {
    std::string_view name;
    if (!reader.ReadCString(&name)) return absl::InvalidArgumentError("startup packet: unterminated parameter name");
    if (name.empty()) break;
    std::string_view value;
    if (!reader.ReadCString(&value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("startup packet: no value for parameter '", std::string(name), "'"));
    }
    packet.parameters.emplace_back(std::string(name), std::string(value));
  }
  if (!reader.AtEnd()) return absl::InvalidArgumentError("startup packet: bytes after the parameter list");
  return packet;
}

absl::Status PgStream::Fill(size_t count, bool at_boundary) {
  if (read_offset_ > 0 && (read_offset_ == read_buffer_.size() || read_offset_ > kReadChunkBytes)) {
    read_buffer_.erase(0, read_offset_);
    read_offset_ = 0;
  }
  while (read_buffer_.size() - read_offset_ < count) {
    const size_t have = read_buffer_.size();
    // Never more than the bytes asked for beyond one chunk: what is allocated follows what has arrived.
    const size_t want = std::max(kReadChunkBytes, count - (have - read_offset_));
    read_buffer_.resize(have + want);
    const ssize_t received = Receive(read_buffer_.data() + have, want);
    if (received <= 0) {
      read_buffer_.resize(have);
      if (received == 0) {
        if (at_boundary && have == read_offset_) return absl::OutOfRangeError("the client closed the connection");
        return absl::UnavailableError("the client closed the connection in the middle of a message");
      }
      return absl::UnavailableError(absl::StrCat("receive failed: ", strerror(errno)));
    }
    read_buffer_.resize(have + static_cast<size_t>(received));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PgStream::ReadStartupPacket() {
  if (absl::Status filled = Fill(4, true); !filled.ok()) return filled;
  const int32_t length = DecodeInt32(read_buffer_.data() + read_offset_);
  if (length < 8 || length > kMaxStartupPacketBytes) {
    return absl::InvalidArgumentError(absl::StrCat("invalid startup packet length ", length));
  }
  if (absl::Status filled = Fill(static_cast<size_t>(length), false); !filled.ok()) return filled;
  std::string body = read_buffer_.substr(read_offset_ + 4, static_cast<size_t>(length) - 4);
  read_offset_ += static_cast<size_t>(length);
  return body;
}

absl::StatusOr<Message> PgStream::ReadMessage(size_t max_body_bytes) {
  if (absl::Status filled = Fill(5, true); !filled.ok()) return filled;
  Message message;
  message.type = read_buffer_[read_offset_];
  const int32_t length = DecodeInt32(read_buffer_.data() + read_offset_ + 1);
  if (length < 4 || static_cast<uint64_t>(length) - 4 > max_body_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("invalid length ", length, " of message type '",
                                                   std::string(1, message.type), "' (the limit is ", max_body_bytes + 4,
                                                   ")"));
  }
  if (absl::Status filled = Fill(static_cast<size_t>(length) + 1, false); !filled.ok()) return filled;
  message.body = read_buffer_.substr(read_offset_ + 5, static_cast<size_t>(length) - 4);
  read_offset_ += static_cast<size_t>(length) + 1;
  return message;
}

absl::Status PgStream::FlushIfLarge() { return output_.size() >= kFlushThresholdBytes ? Flush() : absl::OkStatus(); }

absl::Status PgStream::Flush() {
  size_t sent_total = 0;
  while (sent_total < output_.size()) {
    const ssize_t sent = Send(output_.data() + sent_total, output_.size() - sent_total);
    if (sent <= 0) {
      output_.clear();
      return absl::UnavailableError(absl::StrCat("send failed: ", strerror(errno)));
    }
    sent_total += static_cast<size_t>(sent);
  }
  output_.clear();
  return absl::OkStatus();
}

PgStream::~PgStream() {
  if (ssl_ != nullptr) {
    SSL_shutdown(ssl_);
    SSL_free(ssl_);
  }
}

absl::Status PgStream::StartTls(ssl_ctx_st* context) {
  if (HasBufferedInput()) {
    return absl::InvalidArgumentError("the client sent unencrypted data after its SSLRequest");
  }
  ssl_ = SSL_new(context);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) return absl::UnavailableError("cannot set up TLS");
  if (SSL_accept(ssl_) != 1) {
    char reason[256];
    ERR_error_string_n(ERR_get_error(), reason, sizeof(reason));
    return absl::UnavailableError(absl::StrCat("TLS handshake failed: ", reason));
  }
  return absl::OkStatus();
}

ssize_t PgStream::Receive(char* data, size_t size) {
  if (ssl_ != nullptr) {
    const int received = SSL_read(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    if (received > 0) return received;
    return SSL_get_error(ssl_, received) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
  }
  ssize_t received;
  do {
    received = recv(fd_, data, size, 0);
  } while (received < 0 && errno == EINTR);
  return received;
}

ssize_t PgStream::Send(const char* data, size_t size) {
  if (ssl_ != nullptr) {
    const int sent = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    return sent > 0 ? sent : -1;
  }
  ssize_t sent;
  do {
    sent = send(fd_, data, size, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent;
}

absl::Status PgStream::WriteByteNow(char value) {
  output_.push_back(value);
  return Flush();
}

}  // namespace tessera::pg
