#pragma once
// The COPY sub-protocol of the PostgreSQL protocol: COPY ... FROM STDIN (CopyInResponse, then the client's
// CopyData ... CopyDone or CopyFail) and COPY ... TO STDOUT (CopyOutResponse, CopyData ..., CopyDone), as the
// engine's CopyChannel (engine/copy_channel.h) over one connection's PgStream. psql's \copy and psycopg 3's
// cursor.copy() speak it.
//
// Decisions: one CopyData per row in COPY OUT, as PostgreSQL sends them (psycopg parses them so). The overall
// format is always text (0) with every column text (0): Tessera reads and writes text and CSV, not PostgreSQL's
// binary COPY format (FORMAT binary is refused by the engine as an unknown format). During COPY IN, Flush and Sync
// are ignored (as PostgreSQL does); any other message ends the COPY with a protocol error. A CopyData may be up to
// kMaxCopyDataBytes (clients send far less: psql a line or 8 KiB, psycopg 128 KiB). A CopyFail ends the statement
// with 57014 "COPY from stdin failed: <the client's message>".
//
// Threading: the connection's thread only.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/copy_channel.h"
#include "server/pg_protocol.h"

namespace tessera::pg {

class PgCopyChannel final : public CopyChannel {
 public:
  static constexpr size_t kMaxCopyDataBytes = 16u << 20;

  explicit PgCopyChannel(PgStream* stream) : stream_(stream) {}

  absl::Status BeginCopyIn(const CopyStreamShape& shape) override;
  absl::StatusOr<bool> ReadCopyData(std::string* data) override;
  absl::Status BeginCopyOut(const CopyStreamShape& shape) override;
  absl::Status WriteCopyData(std::string_view data) override;
  bool row_per_write() const override { return true; }

  // After the statement, whatever its outcome:
  // Whether the statement started a COPY IN whose data the client is still sending (it failed early): the
  // connection must read and drop the client's messages up to its CopyDone or CopyFail (DiscardCopyIn).
  bool copy_in_unfinished() const { return copy_in_ && !copy_in_ended_; }
  // Drops messages up to and including CopyDone or CopyFail; false when the connection broke or the client sent
  // something else (a protocol violation: `*violation` says what).
  bool DiscardCopyIn(std::string* violation);
  // Whether the statement started a COPY OUT (on success the connection ends it with EndCopyOut).
  bool copy_out_started() const { return copy_out_; }
  void EndCopyOut();
  // The connection broke while the engine read or wrote, or the client sent a message that does not belong in a
  // COPY IN (violation() says which): the connection ends.
  bool connection_lost() const { return connection_lost_; }
  const std::string& violation() const { return violation_; }

 private:
  void WriteResponse(char type, const CopyStreamShape& shape);

  PgStream* const stream_;
  bool copy_in_ = false;
  bool copy_in_ended_ = false;
  bool copy_out_ = false;
  bool connection_lost_ = false;
  std::string violation_;
};

}  // namespace tessera::pg
