#include "server/server_sessions.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "grpcpp/server_context.h"

namespace tessera {

std::string Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

size_t InvalidUtf8Offset(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t size = text.size();
  size_t i = 0;
  while (i < size) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    // The length of the sequence and the range its second byte must be in (the rest: 0x80..0xBF).
    size_t length;
    unsigned char low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // overlong
      if (lead == 0xED) high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // overlong
      if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + length > size || bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xBF) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

ServerSession::ServerSession(std::string id, Database* database)
    : id_(std::move(id)), session_(std::make_unique<Session>(database)), last_active_ns_(MonotonicNanos()) {}

void ServerSession::BeginExecution(const RunningExecution& execution, grpc::ServerContext* context) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  running_ = execution;
  running_context_ = context;
  cancel_requested_ = false;
}

void ServerSession::BeginExecution(const RunningExecution& execution, std::function<bool()> client_gone) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  running_ = execution;
  running_client_gone_ = std::move(client_gone);
  cancel_requested_ = false;
}

void ServerSession::EndExecution() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  running_.reset();
  running_context_ = nullptr;
  running_client_gone_ = nullptr;
  cancel_requested_ = false;
  last_active_ns_ = MonotonicNanos();
}

std::optional<RunningExecution> ServerSession::running() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return running_;
}

bool ServerSession::RequestCancel() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (!running_) return false;
  cancel_requested_ = true;
  session_->Cancel();
  return true;
}

void ServerSession::Watch() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (!running_) return;
  // IsCancelled is safe to call from any thread with the synchronous API; the context stays valid while it is
  // registered here (EndExecution runs before the handler returns).
  if (!cancel_requested_ && running_context_ != nullptr && running_context_->IsCancelled()) cancel_requested_ = true;
  if (!cancel_requested_ && running_client_gone_ && running_client_gone_()) cancel_requested_ = true;
  if (cancel_requested_) session_->Cancel();
}

void ServerSession::SetPendingPriority(int priority) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  pending_priority_ = priority;
  if (running_) running_->priority = priority;
}

std::optional<int> ServerSession::TakePendingPriority() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  std::optional<int> priority = pending_priority_;
  pending_priority_.reset();
  return priority;
}

void ServerSession::Touch() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  last_active_ns_ = MonotonicNanos();
}

int64_t ServerSession::IdleNanos(int64_t now_ns) const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (running_) return 0;
  return now_ns - last_active_ns_;
}

SessionRegistry::SessionRegistry(Database* database, int max_sessions)
    : database_(database), max_sessions_(max_sessions) {
  std::random_device device;
  id_state_ = (static_cast<uint64_t>(device()) << 32) ^ device();
}

std::string SessionRegistry::NewSessionId() {
  // splitmix64 over a randomly seeded counter: unique, and not guessable from another session's id without the
  // seed; after a restart old ids do not name new sessions.
  uint64_t z = (id_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return absl::StrFormat("%016x", z ^ (z >> 31));
}

absl::StatusOr<std::shared_ptr<ServerSession>> SessionRegistry::Open() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (static_cast<int>(sessions_.size()) >= max_sessions_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("too many open sessions (", max_sessions_, "; the server's --max-sessions)"));
  }
  std::string id = NewSessionId();
  auto session = std::make_shared<ServerSession>(id, database_);
  sessions_.emplace(id, session);
  return session;
}

absl::StatusOr<std::shared_ptr<ServerSession>> SessionRegistry::Find(const std::string& session_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown session '", session_id, "' (closed, expired, or never opened)"));
  }
  it->second->Touch();
  return it->second;
}

absl::StatusOr<std::shared_ptr<ServerSession>> SessionRegistry::FindByQuery(int64_t query_id) const {
  for (const std::shared_ptr<ServerSession>& session : All()) {
    std::optional<RunningExecution> running = session->running();
    if (running && running->query_id == query_id) return session;
  }
  return absl::NotFoundError(absl::StrCat("no running query with id ", query_id));
}

absl::Status SessionRegistry::Close(const std::string& session_id) {
  std::shared_ptr<ServerSession> session;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sessions_.find(session_id);
    if (it == sessions_.end()) return absl::NotFoundError(absl::StrCat("unknown session '", session_id, "'"));
    session = std::move(it->second);
    sessions_.erase(it);
  }
  session->RequestCancel();
  return absl::OkStatus();
}

int SessionRegistry::CloseIdle(int64_t idle_ns) {
  const int64_t now = MonotonicNanos();
  std::vector<std::string> idle;
  for (const std::shared_ptr<ServerSession>& session : All()) {
    if ((idle_ns > 0 && session->IdleNanos(now) >= idle_ns) || session->LeaseExpired(now)) {
      idle.push_back(session->id());
    }
  }
  int closed = 0;
  for (const std::string& id : idle) closed += Close(id).ok() ? 1 : 0;
  return closed;
}

void SessionRegistry::CloseAll() {
  for (const std::shared_ptr<ServerSession>& session : All()) Close(session->id()).IgnoreError();
}

std::vector<std::shared_ptr<ServerSession>> SessionRegistry::All() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<ServerSession>> all;
  all.reserve(sessions_.size());
  for (const auto& [id, session] : sessions_) all.push_back(session);
  return all;
}

size_t SessionRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sessions_.size();
}

std::vector<RunningStatement> RegistryActivity::RunningStatements() {
  const int64_t now = MonotonicNanos();
  std::vector<RunningStatement> statements;
  for (const std::shared_ptr<ServerSession>& session : sessions_->All()) {
    std::optional<RunningExecution> running = session->running();
    if (!running) continue;
    RunningStatement statement;
    statement.query_id = running->query_id;
    statement.session_id = running->session_id;
    statement.sql = running->sql_prefix;
    statement.elapsed_us = (now - running->start_ns) / 1000;
    statement.priority = running->priority;
    if (absl::StatusOr<QueryProgress> progress = session->session().RunningQueryProgress(); progress.ok()) {
      statement.admission = progress->admission;
      statement.priority = progress->priority;
      statement.fraction_done = progress->fraction_done;
    }
    statements.push_back(std::move(statement));
  }
  std::sort(statements.begin(), statements.end(),
            [](const RunningStatement& a, const RunningStatement& b) { return a.query_id < b.query_id; });
  return statements;
}

absl::Status RegistryActivity::CancelStatement(int64_t query_id) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<ServerSession> session, sessions_->FindByQuery(query_id));
  session->RequestCancel();
  return absl::OkStatus();
}

}  // namespace tessera
