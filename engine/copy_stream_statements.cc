// COPY ... FROM STDIN and COPY ... TO STDOUT: COPY whose data is a stream of bytes carried by the client's
// connection (engine/copy_channel.h) instead of a file on the server.
//
// FROM STDIN parses the stream on the session's thread as it arrives (DelimitedStreamParser: the file COPY's line
// parsing, piece by piece), writes full blocks into a new segment as they fill, and commits the segment once the
// data ended without an error, exactly as a file COPY does: a bad line, a client's CopyFail, a disconnect, a cancel
// or a timeout leaves the table unchanged. Memory: one piece of the stream, one line and the blocks of the load
// (counted against the buffer pool, as a file COPY's); never the whole input.
// TO STDOUT runs `SELECT columns FROM t` (or the COPY's query) with a ResultSink that turns the streamed rows into
// lines and hands them to the channel, so the result streams at the client's pace within the memory limit.

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "common/status_macros.h"
#include "engine/copy_channel.h"
#include "engine/file_access.h"
#include "engine/statement_handlers.h"
#include "parser/parser.h"
#include "relational_operators/table_load.h"
#include "storage/buffer_pool.h"
#include "storage/delimited_file.h"

namespace tessera {
namespace {

constexpr size_t kCopyOutPieceBytes = 64u << 10;

absl::Status NoChannel(const char* what) {
  return absl::FailedPreconditionError(
      absl::StrCat("COPY ... ", what,
                   " needs a client that streams the data (psql's \\copy, psycopg's cursor.copy(), the "
                   "shell's \\copy or the gRPC CopyIn / CopyOut calls); this connection cannot"));
}

// Rows of a streamed SELECT as lines of `format`, written to the channel in pieces of about kCopyOutPieceBytes.
class CopyOutSink final : public ResultSink {
 public:
  CopyOutSink(CopyChannel* channel, const DelimitedFormat& format)
      : channel_(channel), format_(format), row_per_write_(channel->row_per_write()) {}

  absl::Status BeginRows(const std::vector<ResultColumn>& columns) override {
    TESSERA_RETURN_IF_ERROR(
        channel_->BeginCopyOut(CopyStreamShape{static_cast<int>(columns.size()), format_.backslash_escapes}));
    if (format_.header) {
      for (size_t c = 0; c < columns.size(); ++c) {
        if (c > 0) buffer_.push_back(format_.delimiter);
        AppendDelimitedField(columns[c].name, /*is_string=*/true, format_, &buffer_);
      }
      EndLine();
      if (row_per_write_) TESSERA_RETURN_IF_ERROR(Flush());
    }
    return absl::OkStatus();
  }

  absl::Status AddRows(std::vector<std::vector<Value>> rows) override {
    for (const std::vector<Value>& row : rows) {
      for (size_t c = 0; c < row.size(); ++c) {
        if (c > 0) buffer_.push_back(format_.delimiter);
        const Value& value = row[c];
        if (value.is_null()) {
          buffer_.append(format_.null_string);
        } else if (value.type().IsString()) {
          AppendDelimitedField(value.AsString(), /*is_string=*/true, format_, &buffer_);
        } else {
          AppendDelimitedField(value.ToString(), /*is_string=*/false, format_, &buffer_);
        }
      }
      EndLine();
      ++rows_;
      if (row_per_write_ || buffer_.size() >= kCopyOutPieceBytes) TESSERA_RETURN_IF_ERROR(Flush());
    }
    return absl::OkStatus();
  }

  absl::Status Flush() {
    if (buffer_.empty()) return absl::OkStatus();
    absl::Status written = channel_->WriteCopyData(buffer_);
    buffer_.clear();
    return written;
  }
  int64_t rows() const { return rows_; }

 private:
  void EndLine() {
    if (format_.trailing_delimiter) buffer_.push_back(format_.delimiter);
    buffer_.push_back('\n');
  }

  CopyChannel* const channel_;
  const DelimitedFormat& format_;
  const bool row_per_write_;
  std::string buffer_;
  int64_t rows_ = 0;
};

// `source`: what errors call the data ("STDIN", "pipe '/path'").
absl::StatusOr<QueryResult> CopyFromStream(Database& database, const parser::CopyStatement& statement,
                                           const QueryRunOptions& options, CopyChannel* channel,
                                           const std::string& source) {
  TESSERA_ASSIGN_OR_RETURN(DelimitedFormat format, CopyStatementFormat(statement));
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table, database.catalog().GetTable(statement.table));
  TESSERA_ASSIGN_OR_RETURN(std::vector<int> columns, ResolveColumnList(*table, statement.columns));
  // Declared in this order so that they go in the reverse one: the parser, the blocks not yet committed, the load
  // (its segment file unless committed), and last the account the blocks were counted in.
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&database.buffer_pool());
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<TableLoad> load, StartLoad(database, table, options));
  LoadBlockWriter out(table->columns, load->storage(), load->writer(), account.get(), load->compress());
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<DelimitedStreamParser> parser,
                           DelimitedStreamParser::Create(*table, columns, format, source, &out));
  const int column_count = static_cast<int>(columns.empty() ? table->columns.size() : columns.size());
  TESSERA_RETURN_IF_ERROR(channel->BeginCopyIn(CopyStreamShape{column_count, format.backslash_escapes}));

  static const std::atomic<bool> kNever{false};
  const std::atomic<bool>& cancelled = options.cancel_requested != nullptr ? *options.cancel_requested : kNever;
  const bool has_deadline = options.statement_timeout_ms > 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.statement_timeout_ms);
  std::string data;
  while (true) {
    if (cancelled.load()) {
      return absl::CancelledError(absl::StrCat("COPY ", table->name, " FROM ", source, " cancelled"));
    }
    if (has_deadline && std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("statement timeout (", options.statement_timeout_ms,
                                                      " ms, SET statement_timeout) exceeded: COPY ", table->name,
                                                      " FROM ", source, " was cancelled"));
    }
    TESSERA_ASSIGN_OR_RETURN(bool more, channel->ReadCopyData(&data));
    if (!more) break;
    TESSERA_RETURN_IF_ERROR(parser->Feed(data, cancelled));
  }
  TESSERA_RETURN_IF_ERROR(parser->Finish(cancelled));
  load->AddPart(0, std::move(out.loaded()));
  TESSERA_RETURN_IF_ERROR(load->Commit());
  const int64_t rows = load->committed_rows();
  QueryResult result;
  result.status_message = absl::StrCat("COPY ", rows);
  result.rows_affected = rows;
  return result;
}

absl::StatusOr<QueryResult> CopyToStdout(Database& database, const parser::CopyStatement& statement,
                                         const QueryRunOptions& options, CopyChannel* channel) {
  TESSERA_ASSIGN_OR_RETURN(DelimitedFormat format, CopyStatementFormat(statement));
  CopyOutSink sink(channel, format);
  QueryRunOptions streamed = options;
  streamed.result_sink = &sink;
  absl::StatusOr<QueryResult> ran;
  if (statement.query != nullptr) {
    ran = ExecuteSelect(database, *statement.query, statement.text, streamed);
  } else {
    // COPY t [(columns)] TO STDOUT is SELECT columns FROM t: the same streaming, cancellation and memory limit.
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table,
                             database.catalog().GetTable(statement.table));
    TESSERA_ASSIGN_OR_RETURN(std::vector<int> columns, ResolveColumnList(*table, statement.columns));
    if (columns.empty()) {
      for (size_t c = 0; c < table->columns.size(); ++c) columns.push_back(static_cast<int>(c));
    }
    std::string select = "SELECT ";
    for (size_t i = 0; i < columns.size(); ++i) {
      absl::StrAppend(&select, i > 0 ? ", " : "", QuoteIdentifier(table->columns[columns[i]].name));
    }
    absl::StrAppend(&select, " FROM ", QuoteIdentifier(table->name));
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<parser::Statement>> parsed, parser::ParseStatements(select));
    const auto& query = static_cast<const parser::SelectQueryStatement&>(*parsed.front());
    ran = ExecuteSelect(database, *query.query, select, streamed);
  }
  TESSERA_RETURN_IF_ERROR(ran.status());
  TESSERA_RETURN_IF_ERROR(sink.Flush());
  QueryResult result;
  result.status_message = absl::StrCat("COPY ", sink.rows());
  result.rows_affected = sink.rows();
  return result;
}

}  // namespace

absl::StatusOr<CopyDirection> CopyStatementDirection(std::string_view sql) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<parser::Statement>> statements, parser::ParseStatements(sql));
  if (statements.size() == 1 && statements[0]->kind == parser::StatementKind::kCopy) {
    const auto& copy = static_cast<const parser::CopyStatement&>(*statements[0]);
    if (copy.stdio) return copy.from ? CopyDirection::kIn : CopyDirection::kOut;
  }
  return absl::InvalidArgumentError(
      "expected one COPY ... FROM STDIN or COPY ... TO STDOUT statement (other statements run with Execute)");
}

absl::StatusOr<QueryResult> ExecuteCopyStream(Database& database, const parser::CopyStatement& statement,
                                              const QueryRunOptions& options, CopyChannel* channel) {
  if (channel == nullptr) return NoChannel(statement.from ? "FROM STDIN" : "TO STDOUT");
  if (database.options().cluster != nullptr && statement.from) {
    return absl::UnimplementedError("COPY ... FROM STDIN is not supported on a distributed cluster yet");
  }
  return statement.from ? CopyFromStream(database, statement, options, channel, "STDIN")
                        : CopyToStdout(database, statement, options, channel);
}

namespace {

// A named pipe read as a COPY channel: opened without blocking (no writer yet is not the end of the data), and
// read with poll in slices of kPipePollMs, so that the loop of CopyFromStream checks cancellation and the
// statement timeout between them even while no writer writes. The data ends when the last writer closes the pipe
// after one opened it.
class PipeCopyChannel : public CopyChannel {
 public:
  static constexpr int kPipePollMs = 100;
  explicit PipeCopyChannel(int fd) : fd_(fd) {}
  ~PipeCopyChannel() override { ::close(fd_); }

  absl::Status BeginCopyIn(const CopyStreamShape&) override { return absl::OkStatus(); }
  absl::StatusOr<bool> ReadCopyData(std::string* data) override {
    data->clear();
    pollfd poll_fd{fd_, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, kPipePollMs);
    if (ready < 0 && errno != EINTR) return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    if (ready <= 0) return true;  // nothing yet: the caller checks cancellation and comes back
    data->resize(1 << 20);
    const ssize_t n = ::read(fd_, data->data(), data->size());
    if (n < 0) {
      data->clear();
      if (errno == EAGAIN || errno == EINTR) return true;
      return absl::InternalError(absl::StrCat("cannot read the pipe: ", std::strerror(errno)));
    }
    data->resize(static_cast<size_t>(n));
    return n > 0;  // 0: every writer closed it
  }
  absl::Status BeginCopyOut(const CopyStreamShape&) override {
    return absl::InternalError("a pipe channel only reads");
  }
  absl::Status WriteCopyData(std::string_view) override { return absl::InternalError("a pipe channel only reads"); }

 private:
  const int fd_;
};

}  // namespace

absl::StatusOr<QueryResult> ExecuteCopyFromPipe(Database& database, const parser::CopyStatement& statement,
                                                const QueryRunOptions& options) {
  const int fd = ::open(statement.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("COPY ", statement.table, ": cannot open pipe '", statement.path, "': ", std::strerror(errno)));
  }
  PipeCopyChannel channel(fd);
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISFIFO(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("COPY ", statement.table, ": '", statement.path, "' is no longer a named pipe"));
  }
  TESSERA_RETURN_IF_ERROR(CheckOpenedFileAccess(database.options().file_access, database.options().data_directory,
                                                statement.path, fd, /*writing=*/false));
  return CopyFromStream(database, statement, options, &channel, absl::StrCat("pipe '", statement.path, "'"));
}

}  // namespace tessera
