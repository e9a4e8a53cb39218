#pragma once
// What SHOW QUERIES lists and CANCEL QUERY reaches: the statements running in a server's sessions (gRPC and
// PostgreSQL alike). The server installs an ActivityProvider on its Database; without one (the embedded shell,
// one session) SHOW QUERIES lists nothing and CANCEL QUERY finds nothing.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tessera {

struct RunningStatement {
  int64_t query_id = 0;  // the server's id of the execution (what Cancel and progress by query id take)
  std::string session_id;
  std::string sql;  // its first 200 bytes
  int64_t elapsed_us = 0;
  int priority = 1;
  // The scheduler's view while a query runs under it ("admitted", "waiting for memory", "suspended"); empty, and
  // fraction_done -1, between queries or in a statement that does not run under the scheduler.
  std::string admission;
  double fraction_done = -1;
};

class ActivityProvider {
 public:
  virtual ~ActivityProvider() = default;
  // Thread-safe. Ordered by query id.
  virtual std::vector<RunningStatement> RunningStatements() = 0;
  // Thread-safe. Cancels the statement with server id `query_id` (as the Cancel RPC does); NotFound when none runs.
  virtual absl::Status CancelStatement(int64_t query_id) = 0;
};

}  // namespace tessera
