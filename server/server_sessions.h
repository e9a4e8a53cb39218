#pragma once
// The server's client sessions: ServerSession wraps one Session with what the RPCs need around it (one Execute at
// a time, the execution running now with its id and gRPC call, cancel requests, idle time), and SessionRegistry is
// the thread-safe map from session ids to sessions.
//
// Threading: every method may be called from any thread, except where a comment says "under execute_mutex()".

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/query_activity.h"
#include "engine/session.h"

namespace grpc {
class ServerContext;
}

namespace tessera {

// At most `max_bytes` of `text`, cut at a UTF-8 character boundary (RunningExecution::sql_prefix; proto3 string
// fields must hold valid UTF-8).
std::string Utf8Prefix(std::string_view text, size_t max_bytes);
// The offset of the first byte of `text` that is not part of a well-formed UTF-8 sequence (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or std::string_view::npos when all of it is.
size_t InvalidUtf8Offset(std::string_view text);

// What a session is running now, as ListQueries reports it.
struct RunningExecution {
  int64_t query_id = 0;  // the server's id of one Execute call (not the scheduler's id of one statement)
  std::string session_id;
  std::string sql_prefix;  // the first 200 bytes
  int64_t start_ns = 0;    // monotonic
  int priority = 1;
};

class ServerSession {
 public:
  ServerSession(std::string id, Database* database);

  const std::string& id() const { return id_; }
  // Held for a whole Execute (and for any other use of session() that is not thread-safe): a Session serves one
  // thread at a time.
  std::timed_mutex& execute_mutex() { return execute_mutex_; }
  // Its thread-safe methods (Cancel, RunningQueryProgress, running_query) any time; the rest under
  // execute_mutex().
  Session& session() { return *session_; }

  // Under execute_mutex(): registers the execution and the call it serves (watched for the client going away).
  void BeginExecution(const RunningExecution& execution, grpc::ServerContext* context);
  // The same for a client that is not a gRPC call: `client_gone` (called from the monitor thread while the
  // execution runs) says whether its client went away.
  void BeginExecution(const RunningExecution& execution, std::function<bool()> client_gone);
  void EndExecution();
  std::optional<RunningExecution> running() const;

  // Cancels the running execution: now, and again at each Watch until it ends, which covers a cancel that
  // arrives before the engine has started the statement. False when nothing runs.
  bool RequestCancel();
  // Called periodically by the server's monitor: repeats a requested cancel, and cancels the execution when its
  // client has gone away or its deadline has passed.
  void Watch();

  // A priority set while a query ran: applied to that query at once (the caller tells the Foreman; this records it
  // for ListQueries) and to the session at its next Execute.
  void SetPendingPriority(int priority);
  std::optional<int> TakePendingPriority();

  void Touch();
  // Nanoseconds since the last call on this session; 0 while an execution runs.
  int64_t IdleNanos(int64_t now_ns) const;
  // The client's lease (OpenSessionRequest.lease_seconds), 0 for none.
  void set_lease_ns(int64_t lease_ns) { lease_ns_.store(lease_ns); }
  bool LeaseExpired(int64_t now_ns) const {
    const int64_t lease = lease_ns_.load();
    return lease > 0 && IdleNanos(now_ns) >= lease;
  }

 private:
  const std::string id_;
  const std::unique_ptr<Session> session_;
  std::timed_mutex execute_mutex_;

  mutable std::mutex state_mutex_;
  std::optional<RunningExecution> running_;
  grpc::ServerContext* running_context_ = nullptr;
  std::function<bool()> running_client_gone_;
  bool cancel_requested_ = false;
  std::optional<int> pending_priority_;
  int64_t last_active_ns_ = 0;
  std::atomic<int64_t> lease_ns_{0};
};

class SessionRegistry {
 public:
  SessionRegistry(Database* database, int max_sessions);

  // ResourceExhausted when max_sessions are open.
  absl::StatusOr<std::shared_ptr<ServerSession>> Open();
  // NotFound for an unknown (or closed) id.
  absl::StatusOr<std::shared_ptr<ServerSession>> Find(const std::string& session_id) const;
  // The session running execution `query_id`; NotFound when none is.
  absl::StatusOr<std::shared_ptr<ServerSession>> FindByQuery(int64_t query_id) const;
  // Forgets the session and cancels what it runs (a running Execute keeps its ServerSession alive until it
  // returns). NotFound for an unknown id.
  absl::Status Close(const std::string& session_id);
  // Closes sessions idle for at least `idle_ns` (0: none by idleness) and those whose lease expired; returns how
  // many.
  int CloseIdle(int64_t idle_ns);
  void CloseAll();

  std::vector<std::shared_ptr<ServerSession>> All() const;
  size_t size() const;
  int64_t NextQueryId() { return next_query_id_.fetch_add(1); }

 private:
  std::string NewSessionId();

  Database* const database_;
  const int max_sessions_;
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<ServerSession>> sessions_;
  uint64_t id_state_ = 0;
  std::atomic<int64_t> next_query_id_{1};
};

// SHOW QUERIES and CANCEL QUERY over the registry's sessions (engine/query_activity.h): what ListQueries and Cancel
// by query id answer, with the scheduler's admission state and progress of the query each session runs.
class RegistryActivity final : public ActivityProvider {
 public:
  explicit RegistryActivity(SessionRegistry* sessions) : sessions_(sessions) {}
  std::vector<RunningStatement> RunningStatements() override;
  absl::Status CancelStatement(int64_t query_id) override;

 private:
  SessionRegistry* const sessions_;
};

}  // namespace tessera
