#include "common/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/file_faults.h"
#include "glog/logging.h"

namespace tessera {

absl::Status ErrnoStatus(std::string_view what, const std::string& path) {
  int error = errno;
  std::string message = absl::StrCat(std::string(what), " '", path, "': ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  if (error == ENOSPC) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

absl::Status WriteAllAt(int fd, const void* data, size_t size, uint64_t offset, const std::string& path) {
  const char* bytes = static_cast<const char*>(data);
  if (int injected = InjectedFileFault(FileOperation::kWrite, path); injected != 0) {
    // A torn write, as when the disk fills up midway: the first half lands, then the error.
    if (size >= 2) (void)!::pwrite(fd, bytes, size / 2, static_cast<off_t>(offset));
    errno = injected;
    return ErrnoStatus("cannot write", path);
  }
  size_t written = 0;
  while (written < size) {
    ssize_t n = ::pwrite(fd, bytes + written, size - written, static_cast<off_t>(offset + written));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", path);
    }
    written += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status SyncFile(int fd, const std::string& path, bool data_only) {
  if (int injected = InjectedFileFault(FileOperation::kSync, path); injected != 0) {
    errno = injected;
    return ErrnoStatus("cannot sync", path);
  }
  if ((data_only ? ::fdatasync(fd) : ::fsync(fd)) != 0) return ErrnoStatus("cannot sync", path);
  return absl::OkStatus();
}

absl::Status RenameFile(const std::string& from, const std::string& to) {
  if (int injected = InjectedFileFault(FileOperation::kRename, to); injected != 0) {
    errno = injected;
    return ErrnoStatus("cannot rename onto", to);
  }
  if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus("cannot rename onto", to);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents, bool sync) {
  std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create", temporary);
  absl::Status status = WriteAllAt(fd, contents.data(), contents.size(), 0, temporary);
  if (status.ok() && sync) status = SyncFile(fd, temporary, /*data_only=*/false);
  ::close(fd);
  if (status.ok()) status = RenameFile(temporary, path);
  if (!status.ok()) {
    ::unlink(temporary.c_str());
    return status;
  }
  if (sync) {
    std::string directory = std::filesystem::path(path).parent_path().string();
    if (directory.empty()) directory = ".";
    int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    absl::Status synced = dir_fd >= 0 ? SyncFile(dir_fd, directory, /*data_only=*/false)
                                      : ErrnoStatus("cannot open directory", directory);
    if (dir_fd >= 0) ::close(dir_fd);
    LOG_IF(WARNING, !synced.ok()) << "'" << path << "' was replaced, but may not survive a power loss: " << synced;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path);
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return ErrnoStatus("cannot read", path);
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return contents;
}

absl::Status CreateDirectories(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return absl::InternalError(absl::StrCat("cannot create directory '", path, "': ", error.message()));
  return absl::OkStatus();
}

absl::StatusOr<MappedFile> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path);
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    return ErrnoStatus("cannot stat", path);
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory, not a file"));
  }
  size_t size = static_cast<size_t>(info.st_size);
  if (size == 0) {
    ::close(fd);
    return MappedFile(nullptr, 0);
  }
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (data == MAP_FAILED) return ErrnoStatus("cannot map", path);
  ::madvise(data, size, MADV_WILLNEED);
  return MappedFile(static_cast<const char*>(data), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace tessera
