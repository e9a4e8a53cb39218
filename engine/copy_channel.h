#pragma once
// Where COPY ... FROM STDIN reads and COPY ... TO STDOUT writes: a stream of bytes carried by the client's
// connection instead of a file on the server (the PostgreSQL protocol's CopyIn / CopyOut, the gRPC CopyIn / CopyOut
// calls, the shell's \copy with a local file). The connection implements it and passes it to Session::Execute; a
// statement that is not COPY ... STDIN / STDOUT never touches it, and such a COPY without a channel fails with
// FailedPrecondition.
//
// The engine calls, on the thread that runs Session::Execute:
//   COPY FROM STDIN: BeginCopyIn once (the statement is valid; the client may send data now), then ReadCopyData
//   until it returns false (the end of the data) or an error. The engine may stop reading early (a bad line, a
//   cancel): the connection then discards what the client still sends.
//   COPY TO STDOUT: BeginCopyOut once, then WriteCopyData any number of times (pieces of about 64 KiB of whole
//   lines, or one row each when the channel asks for it). After a successful Execute the connection ends the
//   data (PostgreSQL's CopyDone).
// An error from the channel (the client failed the COPY, went away, or sent something else) ends the statement
// with that error; a COPY FROM then commits nothing.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera {

// What a COPY will send or expect: the number of columns per line and whether it is PostgreSQL's text format
// (false: CSV or another delimited format). The PostgreSQL protocol announces both; a client's channel (the
// remote side of the gRPC calls) gets column_count 0: unknown.
struct CopyStreamShape {
  int column_count = 0;
  bool text_format = true;
};

class CopyChannel {
 public:
  virtual ~CopyChannel() = default;
  virtual absl::Status BeginCopyIn(const CopyStreamShape& shape) = 0;
  // Replaces *data with the next piece (any size, borders anywhere). False: no more data.
  virtual absl::StatusOr<bool> ReadCopyData(std::string* data) = 0;
  virtual absl::Status BeginCopyOut(const CopyStreamShape& shape) = 0;
  // May block while the client is slower than the statement (flow control). `data` is whole lines.
  virtual absl::Status WriteCopyData(std::string_view data) = 0;
  // Whether WriteCopyData must get exactly one row (one line, or a CSV record with line breaks inside) per call:
  // PostgreSQL sends one row per CopyData message, and clients (psycopg's Copy.rows()) parse them so.
  virtual bool row_per_write() const { return false; }
};

// Which way `sql` streams COPY data: kIn for one COPY ... FROM STDIN, kOut for one COPY ... TO STDOUT; the parser's
// error, or InvalidArgument when `sql` is anything else (other statements, or more than one). Clients pick their
// call by it (the gRPC CopyIn / CopyOut), and the server checks that a COPY call runs nothing else.
enum class CopyDirection { kIn, kOut };
absl::StatusOr<CopyDirection> CopyStatementDirection(std::string_view sql);

}  // namespace tessera
