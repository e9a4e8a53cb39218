#pragma once
// The PostgreSQL frontend/backend protocol version 3: framing and the codec of single messages, free of sessions
// and SQL. `PgStream` reads length-prefixed messages from a socket with strict limits (a length below the header
// or above the limit is a protocol violation, reported before any allocation of that size) and buffers what is
// written until Flush. `MessageReader` walks one message body with bounds checks; `MessageWriter` builds backend
// messages (the length is patched in at End).
//
// Threading: a PgStream belongs to one connection thread; MessageReader/MessageWriter are plain values.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

// OpenSSL's SSL and SSL_CTX (pg_protocol.cc includes OpenSSL itself).
struct ssl_st;
struct ssl_ctx_st;

namespace tessera::pg {

// The startup packet's first word: protocol 3.0, or one of the special request codes.
constexpr int32_t kProtocolVersion3 = 3 << 16;
constexpr int32_t kSslRequestCode = (1234 << 16) | 5679;
constexpr int32_t kGssEncRequestCode = (1234 << 16) | 5680;
constexpr int32_t kCancelRequestCode = (1234 << 16) | 5678;
// PostgreSQL's own limit for a startup packet (MAX_STARTUP_PACKET_LENGTH).
constexpr int32_t kMaxStartupPacketBytes = 10000;

// One regular message: its type byte and its body (without the type and length).
struct Message {
  char type = 0;
  std::string body;
};

// Bounds-checked reading of one message body. Every Read returns false (and reads nothing) when the body is too
// short; integers are big-endian as on the wire.
class MessageReader {
 public:
  explicit MessageReader(std::string_view body) : body_(body) {}

  bool ReadByte(char* value);
  bool ReadInt16(int16_t* value);
  bool ReadInt32(int32_t* value);
  // A NUL-terminated string (the terminator is consumed, not returned).
  bool ReadCString(std::string_view* value);
  bool ReadBytes(size_t count, std::string_view* value);
  size_t remaining() const { return body_.size() - offset_; }
  bool AtEnd() const { return offset_ == body_.size(); }

 private:
  std::string_view body_;
  size_t offset_ = 0;
};

// Appends backend messages to a string: Begin(type), the fields, End() (patches the length word).
class MessageWriter {
 public:
  explicit MessageWriter(std::string* out) : out_(out) {}

  void Begin(char type);
  void Byte(char value) { out_->push_back(value); }
  void Int16(int16_t value);
  void Int32(int32_t value);
  void Int64(int64_t value);
  void CString(std::string_view value);
  void Bytes(std::string_view value) { out_->append(value.data(), value.size()); }
  // Reserves a 4-byte length in front of a value written next; EndLength patches it with the bytes since.
  size_t BeginLength();
  void EndLength(size_t mark);
  void End();

 private:
  std::string* out_;
  size_t start_ = 0;
};

// The startup packet after its length word: the protocol code and, for protocol 3, name/value parameters.
struct StartupPacket {
  int32_t code = 0;
  std::vector<std::pair<std::string, std::string>> parameters;  // protocol 3 only
  int32_t cancel_process_id = 0;                                // kCancelRequestCode only
  int32_t cancel_secret_key = 0;
};

// Decodes a startup packet body (after the length word). InvalidArgument for malformed packets, Unimplemented
// for protocol versions other than 3.x and the special codes.
absl::StatusOr<StartupPacket> ParseStartupPacket(std::string_view body);

// A connected socket speaking the protocol, in clear text or, after StartTls, over TLS. Reads fail with OutOfRange
// when the peer closed the connection cleanly at a message boundary, Unavailable on I/O errors and mid-message EOF,
// InvalidArgument for framing violations (the connection must then be closed).
class PgStream {
 public:
  explicit PgStream(int fd) : fd_(fd) {}
  ~PgStream();
  PgStream(const PgStream&) = delete;
  PgStream& operator=(const PgStream&) = delete;

  // The TLS handshake as the server (after answering SSLRequest with 'S'); everything after goes through TLS.
  // InvalidArgument when the client sent bytes after its SSLRequest before the handshake (they would be read as
  // if they had been encrypted); Unavailable when the handshake fails.
  absl::Status StartTls(ssl_ctx_st* context);
  bool tls() const { return ssl_ != nullptr; }

  // The startup packet body (after its length word), at most kMaxStartupPacketBytes.
  absl::StatusOr<std::string> ReadStartupPacket();
  // One regular message whose body is at most max_body_bytes.
  absl::StatusOr<Message> ReadMessage(size_t max_body_bytes);
  // Whether a complete or partial message is already buffered (so a Flush before reading can be skipped).
  bool HasBufferedInput() const { return read_offset_ < read_buffer_.size(); }

  // Buffers bytes for the peer; Flush sends them. The output buffer is also flushed when it passes a size bound,
  // so a large result streams instead of piling up.
  std::string& output() { return output_; }
  absl::Status FlushIfLarge();
  absl::Status Flush();
  // Sends one byte at once, unbuffered (the answer to SSLRequest).
  absl::Status WriteByteNow(char value);

 private:
  // Makes at least `count` unread bytes available; `at_boundary`: EOF before any byte is a clean close.
  absl::Status Fill(size_t count, bool at_boundary);

  // One receive or send of at most `size` bytes, through TLS when it is on: the count, 0 at EOF, -1 on errors.
  ssize_t Receive(char* data, size_t size);
  ssize_t Send(const char* data, size_t size);

  int fd_;
  ssl_st* ssl_ = nullptr;
  std::string read_buffer_;
  size_t read_offset_ = 0;
  std::string output_;
};

}  // namespace tessera::pg
