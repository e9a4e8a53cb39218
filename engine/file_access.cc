#include "engine/file_access.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessera {
namespace {

// The absolute path with symbolic links of its existing part resolved and `.` / `..` removed.
std::filesystem::path Resolved(const std::string& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) return std::filesystem::path(path).lexically_normal();
  std::filesystem::path resolved = std::filesystem::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal() : resolved;
}

// Whether `path` is `directory` or lies below it (both resolved).
bool IsUnder(const std::filesystem::path& path, const std::filesystem::path& directory) {
  auto in_directory = directory.begin();
  auto in_path = path.begin();
  for (; in_directory != directory.end(); ++in_directory, ++in_path) {
    if (in_directory->empty()) continue;  // a trailing separator
    if (in_path == path.end() || *in_path != *in_directory) return false;
  }
  return true;
}

// The check of CheckFileAccess for `resolved`, the resolved form of `path`.
absl::Status CheckResolvedAccess(const FileAccessPolicy& policy, const std::string& data_directory,
                                 const std::string& path, const std::filesystem::path& resolved, bool writing) {
  const char* what = writing ? "COPY TO" : "COPY FROM";
  if (!data_directory.empty() && IsUnder(resolved, Resolved(data_directory))) {
    return absl::PermissionDeniedError(absl::StrCat(what, " '", path,
                                                    "' is not allowed: it is inside the server's "
                                                    "own data directory"));
  }
  for (const std::string& directory : policy.allowed_directories) {
    if (IsUnder(resolved, Resolved(directory))) return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      what, " '", path, "' is not allowed: the server reads and writes files only under --allowed-directories (",
      policy.allowed_directories.empty() ? "none given" : absl::StrJoin(policy.allowed_directories, ", "), ")",
      resolved.string() == path ? "" : absl::StrCat("; the path resolves to '", resolved.string(), "'")));
}

}  // namespace

absl::Status CheckFileAccess(const FileAccessPolicy& policy, const std::string& data_directory, const std::string& path,
                             bool writing) {
  if (!policy.restricted) return absl::OkStatus();
  return CheckResolvedAccess(policy, data_directory, path, Resolved(path), writing);
}

absl::Status CheckOpenedFileAccess(const FileAccessPolicy& policy, const std::string& data_directory,
                                   const std::string& path, int fd, bool writing) {
  if (!policy.restricted) return absl::OkStatus();
  std::error_code error;
  const std::filesystem::path opened = std::filesystem::read_symlink(absl::StrCat("/proc/self/fd/", fd), error);
  if (error || opened.empty() || opened.is_relative()) {
    return absl::PermissionDeniedError(absl::StrCat(writing ? "COPY TO" : "COPY FROM", " '", path,
                                                    "': cannot tell which file was opened (", error.message(), ")"));
  }
  return CheckResolvedAccess(policy, data_directory, path, opened, writing);
}

}  // namespace tessera
