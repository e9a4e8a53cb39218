#pragma once
// Runs one query's work orders on a private pool of threads, with the calling thread acting as the query's
// scheduler. This is the stand-in dispatch used until the Foreman (scheduler/) runs queries; it drives the
// QueryManager through the same calls the Foreman makes, from a single thread.

#include "absl/status/status.h"
#include "query_execution/query_manager.h"

namespace tessera {

// Blocks until the query finished; returns the query's status (the first work-order error, if any).
absl::Status RunQueryLocally(QueryManager& query, int threads);

}  // namespace tessera
