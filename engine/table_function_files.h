#pragma once
// Files that table functions read while a query is planned (read_csv in FROM: optimizer/csv_text.h): the
// reader given to the binder (OptimizerOptions::read_file), under the same file access policy as COPY FROM.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/file_access.h"

namespace tessera {

// read_csv holds the whole file and its rows in the plan (outside the buffer pool's accounting), so it reads
// files of at most this size; COPY loads larger ones into a table.
inline constexpr int64_t kMaxTableFunctionFileBytes = int64_t{64} << 20;

// The contents of `path`: PermissionDenied when `policy` does not let statements read it (checked on the path and
// again on the file actually opened, as COPY FROM does), NotFound when it cannot be opened, InvalidArgument when
// it is not a regular file, ResourceExhausted when it is larger than `max_bytes` (naming the limit and COPY).
// Thread-safe.
absl::StatusOr<std::string> ReadTableFunctionFile(const FileAccessPolicy& policy, const std::string& data_directory,
                                                  const std::string& path, int64_t max_bytes);

}  // namespace tessera
