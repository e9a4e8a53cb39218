#pragma once
// Where each rank of a distributed cluster keeps its data, and the record that ties a directory to one cluster
// layout. `tessera-server --distributed --data DIR` on rank K of N uses DIR/rank-K as an ordinary data directory
// (catalog, block files) with one more file, CLUSTER, that records N and K. Rows of partitioned tables are placed
// by hash modulo N, so a directory written by a cluster of N ranks is only correct in a cluster of N ranks: it is
// refused in any other layout, and by a single server, instead of answering queries over a part of the data.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera::distributed {

// The data directory of rank `rank` of `ranks` under `base` (created when missing, its CLUSTER file written when
// new). FailedPrecondition when it was written by another layout ("... belongs to rank 1 of a 3-rank cluster
// ..."), when `base` itself holds a single server's database, or when it holds data but no CLUSTER record.
absl::StatusOr<std::string> PrepareRankDirectory(const std::string& base, int rank, int ranks);

// FailedPrecondition when `data_directory` is a rank's directory (it has a CLUSTER record): a single server must
// not open a part of a cluster's data as if it were a whole database.
absl::Status CheckNotRankDirectory(const std::string& data_directory);

}  // namespace tessera::distributed
