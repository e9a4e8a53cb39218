#pragma once
// Which files statements may read and write (COPY FROM / COPY TO): any file the process can reach (the embedded
// shell, whose user owns the machine), or, for a server, only files under the directories it was given and never
// inside its own data directory.

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tessera {

struct FileAccessPolicy {
  bool restricted = false;
  // With `restricted`: the directories whose files statements may read and write (tessera-server
  // --allowed-directories); empty: none.
  std::vector<std::string> allowed_directories;
};

// OK if `policy` lets a statement open `path` (`writing`: COPY TO, the file may not exist yet), else
// PermissionDenied naming the path and what would allow it. The path, the allowed directories and `data_directory`
// are compared after resolving symbolic links and `..` (std::filesystem::weakly_canonical), so neither leads out of
// an allowed directory.
absl::Status CheckFileAccess(const FileAccessPolicy& policy, const std::string& data_directory, const std::string& path,
                             bool writing);

// The same check for the file behind an open descriptor `fd` (opened for `path`), by the path the kernel reports
// for it (/proc/self/fd): COPY FROM checks the file it actually opened, so a symbolic link swapped in between
// CheckFileAccess and the open cannot lead out of the allowed directories. OK when the policy is unrestricted.
absl::Status CheckOpenedFileAccess(const FileAccessPolicy& policy, const std::string& data_directory,
                                   const std::string& path, int fd, bool writing);

}  // namespace tessera
