#pragma once
// What the shell talks to: one client connection that runs statements, either in this process (a Session on an
// open Database) or on a server over gRPC (client/remote_connection.h). The shell is written against this interface
// only, so every shell feature (meta-commands, progress bar, Ctrl-C) works the same in both modes.
//
// Threading: Execute is called from one thread at a time. Cancel and Progress may be called from any other thread
// while Execute runs (a Ctrl-C watcher, a progress-bar timer).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/query_result.h"
#include "scheduler/schedulable_query.h"

namespace tessera {

class Database;
class Session;
class CopyChannel;

class Connection {
 public:
  virtual ~Connection() = default;

  // Runs every ';'-separated statement of `sql` and returns the last one's result; stops at the first error
  // (the message carries the parser's caret where there is one). Cancelled after Cancel().
  virtual absl::StatusOr<QueryResult> Execute(std::string_view sql) = 0;
  // Execute for statements that stream COPY data through the client (COPY ... FROM STDIN / TO STDOUT): `channel`
  // (engine/copy_channel.h) supplies and receives the data on this side, a local file for the shell's \copy.
  virtual absl::StatusOr<QueryResult> ExecuteCopy(std::string_view sql, CopyChannel& channel) = 0;
  // Cancels what Execute is running now; a no-op when idle.
  virtual void Cancel() = 0;
  // Progress of the query Execute is running now; NotFound when none is running.
  virtual absl::StatusOr<QueryProgress> Progress() = 0;
};

// A Connection to a Database in this process: one Session on it. `database` must outlive the connection.
class InProcessConnection : public Connection {
 public:
  explicit InProcessConnection(Database* database);
  ~InProcessConnection() override;

  absl::StatusOr<QueryResult> Execute(std::string_view sql) override;
  absl::StatusOr<QueryResult> ExecuteCopy(std::string_view sql, CopyChannel& channel) override;
  void Cancel() override;
  absl::StatusOr<QueryProgress> Progress() override;

 private:
  std::unique_ptr<Session> session_;
};

}  // namespace tessera
