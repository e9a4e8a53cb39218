#pragma once
// Small POSIX file helpers with absl::Status errors that name the path and the system error.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera {

// Writes `contents` to `path` atomically: a temporary file in the same directory, optionally fsync'ed, then
// rename(2) over `path` (and fsync of the directory when `sync`). A crash leaves either the old or the new file.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents, bool sync);

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
