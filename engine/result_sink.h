#pragma once
// Where a statement's rows go when they are streamed instead of collected in QueryResult::rows. The gRPC and
// PostgreSQL servers pass one to Session::Execute, so that a large SELECT result reaches its client block by block
// while the query runs, inside the memory limit: the query keeps at most a few MiB of unsent result blocks
// (ExecutionQuery::set_result_backlog_limit) and pauses while its client is slower than it.

#include <vector>

#include "absl/status/status.h"
#include "catalog/value.h"
#include "engine/query_result.h"

namespace tessera {

class ResultSink {
 public:
  virtual ~ResultSink() = default;
  // Once, before any AddRows, with the result's columns.
  virtual absl::Status BeginRows(const std::vector<ResultColumn>& columns) = 0;
  // The next rows in result order (a few thousand at a time, never empty). May block while the client is slow.
  // An error (the client went away) cancels the query, and Session::Execute returns that error.
  virtual absl::Status AddRows(std::vector<std::vector<Value>> rows) = 0;
};

}  // namespace tessera
