#include "engine/connection.h"

#include "engine/session.h"

namespace tessera {

InProcessConnection::InProcessConnection(Database* database) : session_(std::make_unique<Session>(database)) {}
InProcessConnection::~InProcessConnection() = default;

absl::StatusOr<QueryResult> InProcessConnection::Execute(std::string_view sql) { return session_->Execute(sql); }

absl::StatusOr<QueryResult> InProcessConnection::ExecuteCopy(std::string_view sql, CopyChannel& channel) {
  return session_->Execute(sql, nullptr, &channel);
}

void InProcessConnection::Cancel() { session_->Cancel(); }

absl::StatusOr<QueryProgress> InProcessConnection::Progress() { return session_->RunningQueryProgress(); }

}  // namespace tessera
