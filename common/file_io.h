#pragma once
// Small POSIX file helpers with absl::Status errors that name the path and the system error.
//
// Every write, fsync and rename of a file in the data directory goes through WriteAllAt, SyncFile, RenameFile or
// WriteFileAtomically: the one place where tests inject faults (common/file_faults.h).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera {

// Writes `contents` to `path` atomically: a temporary file in the same directory, optionally fsync'ed, then
// rename(2) over `path` (and fsync of the directory when `sync`). A crash leaves either the old or the new file.
// The rename is the commit: once it is done the call succeeds (a failed fsync of the directory is logged, not
// returned, since the new file is already what every reader sees); before it, the temporary file is removed.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents, bool sync);

// Writes all `size` bytes at `offset` (pwrite, retried on EINTR and short writes). `path` names the file in errors.
absl::Status WriteAllAt(int fd, const void* data, size_t size, uint64_t offset, const std::string& path);

// fsync(2), or fdatasync(2) when `data_only`.
absl::Status SyncFile(int fd, const std::string& path, bool data_only);

// rename(2) of `from` onto `to`.
absl::Status RenameFile(const std::string& from, const std::string& to);

absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Creates the directory and its parents if missing.
absl::Status CreateDirectories(const std::string& path);

// An error status for a failed system call: "<what> '<path>': <strerror(errno)>".
absl::Status ErrnoStatus(std::string_view what, const std::string& path);

// A read-only memory mapping of a whole file; unmapped on destruction.
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> Open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  ~MappedFile();
  std::string_view contents() const { return {data_, size_}; }

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tessera
