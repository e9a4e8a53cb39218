// The PostgreSQL protocol's codec (server/pg_protocol.h): message building and bounds-checked reading, startup
// packets, and framing over a socket with strict length limits (bad lengths are errors before any allocation,
// clean and mid-message EOF are told apart).

#include "server/pg_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace tessera::pg {
namespace {

std::string Int32Bytes(int32_t value) {
  std::string out;
  MessageWriter(&out).Int32(value);
  return out;
}

TEST(MessageWriterTest, PatchesTheLengthAndWritesBigEndian) {
  std::string out;
  MessageWriter writer(&out);
  writer.Begin('Z');
  writer.Byte('I');
  writer.End();
  EXPECT_EQ(out, std::string("Z\0\0\0\x05I", 6));

  out.clear();
  writer.Begin('D');
  writer.Int16(1);
  const size_t mark = writer.BeginLength();
  writer.Bytes("42");
  writer.EndLength(mark);
  writer.Int64(-2);
  writer.End();
  EXPECT_EQ(out, std::string("D\0\0\0\x14\0\x01\0\0\0\x02"
                             "42"
                             "\xff\xff\xff\xff\xff\xff\xff\xfe",
                             21));
}

TEST(MessageReaderTest, ReadsFieldsAndRefusesToReadPastTheEnd) {
  const std::string body = std::string("\x01\x02", 2) + Int32Bytes(-7) + std::string("name\0x", 6);
  MessageReader reader(body);
  int16_t i16;
  int32_t i32;
  std::string_view text;
  ASSERT_TRUE(reader.ReadInt16(&i16));
  EXPECT_EQ(i16, 0x0102);
  ASSERT_TRUE(reader.ReadInt32(&i32));
  EXPECT_EQ(i32, -7);
  ASSERT_TRUE(reader.ReadCString(&text));
  EXPECT_EQ(text, "name");
  EXPECT_FALSE(reader.ReadCString(&text));  // "x" has no terminator
  EXPECT_FALSE(reader.ReadInt32(&i32));
  EXPECT_FALSE(reader.ReadBytes(2, &text));
  ASSERT_TRUE(reader.ReadBytes(1, &text));
  EXPECT_EQ(text, "x");
  EXPECT_TRUE(reader.AtEnd());
  char byte;
  EXPECT_FALSE(reader.ReadByte(&byte));
}

TEST(StartupPacketTest, ParsesProtocol3AndTheSpecialRequests) {
  absl::StatusOr<StartupPacket> packet =
      ParseStartupPacket(Int32Bytes(kProtocolVersion3) + std::string("user\0me\0database\0db\0\0", 21));
  ASSERT_TRUE(packet.ok()) << packet.status();
  ASSERT_EQ(packet->parameters.size(), 2u);
  EXPECT_EQ(packet->parameters[0], (std::pair<std::string, std::string>("user", "me")));
  EXPECT_EQ(packet->parameters[1], (std::pair<std::string, std::string>("database", "db")));

  packet = ParseStartupPacket(Int32Bytes(kSslRequestCode));
  ASSERT_TRUE(packet.ok());
  EXPECT_EQ(packet->code, kSslRequestCode);

  packet = ParseStartupPacket(Int32Bytes(kCancelRequestCode) + Int32Bytes(1001) + Int32Bytes(-5));
  ASSERT_TRUE(packet.ok());
  EXPECT_EQ(packet->cancel_process_id, 1001);
  EXPECT_EQ(packet->cancel_secret_key, -5);
}

TEST(StartupPacketTest, RejectsMalformedPackets) {
  EXPECT_EQ(ParseStartupPacket("ab").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseStartupPacket(Int32Bytes(2 << 16)).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ParseStartupPacket(Int32Bytes(kProtocolVersion3) + std::string("user\0me", 7)).status().code(),
            absl::StatusCode::kInvalidArgument);  // no terminator
  EXPECT_EQ(ParseStartupPacket(Int32Bytes(kProtocolVersion3) + std::string("user\0", 5)).status().code(),
            absl::StatusCode::kInvalidArgument);  // no value
  EXPECT_EQ(ParseStartupPacket(Int32Bytes(kProtocolVersion3) + std::string("\0junk", 5)).status().code(),
            absl::StatusCode::kInvalidArgument);  // bytes after the list
  EXPECT_EQ(ParseStartupPacket(Int32Bytes(kCancelRequestCode) + Int32Bytes(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseStartupPacket(Int32Bytes(kSslRequestCode) + "x").status().code(), absl::StatusCode::kInvalidArgument);
}

// A socket pair: the test writes to one end, the PgStream reads the other.
class PgStreamTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }
  void Send(const std::string& bytes) { ASSERT_EQ(write(fds_[1], bytes.data(), bytes.size()), ssize_t(bytes.size())); }
  void CloseWriter() {
    close(fds_[1]);
    fds_[1] = -1;
  }

  int fds_[2] = {-1, -1};
};

TEST_F(PgStreamTest, ReadsMessagesAndTellsACleanCloseFromATruncatedMessage) {
  PgStream stream(fds_[0]);
  Send(std::string("Q\0\0\0\x0bSELECT\0", 12) + std::string("S\0\0\0\x04", 5) + std::string("X\0\0", 3));
  absl::StatusOr<Message> message = stream.ReadMessage(1024);
  ASSERT_TRUE(message.ok()) << message.status();
  EXPECT_EQ(message->type, 'Q');
  EXPECT_EQ(message->body, std::string("SELECT\0", 7));
  EXPECT_TRUE(stream.HasBufferedInput());
  message = stream.ReadMessage(1024);
  ASSERT_TRUE(message.ok());
  EXPECT_EQ(message->type, 'S');
  EXPECT_EQ(message->body, "");
  CloseWriter();
  EXPECT_EQ(stream.ReadMessage(1024).status().code(), absl::StatusCode::kUnavailable);  // "X\0\0" then EOF
}

TEST_F(PgStreamTest, CleanEofAtABoundaryIsOutOfRange) {
  PgStream stream(fds_[0]);
  CloseWriter();
  EXPECT_EQ(stream.ReadMessage(1024).status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(PgStreamTest, RejectsLengthsBelowTheHeaderOrAboveTheLimit) {
  {
    PgStream stream(fds_[0]);
    Send(std::string("Q\0\0\0\x03", 5));
    EXPECT_EQ(stream.ReadMessage(1024).status().code(), absl::StatusCode::kInvalidArgument);
  }
  {
    PgStream stream(fds_[0]);
    // 2 GiB claimed, nothing sent: refused at once, nothing allocated or awaited.
    Send(std::string("Q\x7f\xff\xff\xff", 5));
    EXPECT_EQ(stream.ReadMessage(1 << 20).status().code(), absl::StatusCode::kInvalidArgument);
  }
  {
    PgStream stream(fds_[0]);
    Send(std::string("Q\xff\xff\xff\xff", 5));  // negative
    EXPECT_EQ(stream.ReadMessage(1 << 20).status().code(), absl::StatusCode::kInvalidArgument);
  }
  {
    PgStream stream(fds_[0]);
    Send(std::string("Q\0\0\x04\x05", 5));  // 1025 bytes: one over the limit of 1024 + 4
    EXPECT_EQ(stream.ReadMessage(1024).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST_F(PgStreamTest, StartupPacketLengthIsBounded) {
  {
    PgStream stream(fds_[0]);
    Send(Int32Bytes(kMaxStartupPacketBytes + 1));
    EXPECT_EQ(stream.ReadStartupPacket().status().code(), absl::StatusCode::kInvalidArgument);
  }
  {
    PgStream stream(fds_[0]);
    Send(Int32Bytes(7));
    EXPECT_EQ(stream.ReadStartupPacket().status().code(), absl::StatusCode::kInvalidArgument);
  }
  PgStream stream(fds_[0]);
  Send(Int32Bytes(8) + Int32Bytes(kSslRequestCode));
  absl::StatusOr<std::string> body = stream.ReadStartupPacket();
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, Int32Bytes(kSslRequestCode));
}

TEST_F(PgStreamTest, FlushSendsWhatWasBuffered) {
  PgStream stream(fds_[0]);
  PgStream peer(fds_[1]);
  MessageWriter writer(&peer.output());
  writer.Begin('Z');
  writer.Byte('I');
  writer.End();
  ASSERT_TRUE(peer.Flush().ok());
  EXPECT_TRUE(peer.output().empty());
  absl::StatusOr<Message> message = stream.ReadMessage(16);
  ASSERT_TRUE(message.ok());
  EXPECT_EQ(message->type, 'Z');
  EXPECT_EQ(message->body, "I");
}

}  // namespace
}  // namespace tessera::pg
