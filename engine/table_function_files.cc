#include "engine/table_function_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tessera {

absl::StatusOr<std::string> ReadTableFunctionFile(const FileAccessPolicy& policy, const std::string& data_directory,
                                                  const std::string& path, int64_t max_bytes) {
  TESSERA_RETURN_IF_ERROR(CheckFileAccess(policy, data_directory, path, /*writing=*/false));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  TESSERA_RETURN_IF_ERROR(CheckOpenedFileAccess(policy, data_directory, path, fd, /*writing=*/false));
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a regular file"));
  }
  if (info.st_size > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("'", path, "' has ", info.st_size,
                                                     " bytes; table functions read files of at most ", max_bytes,
                                                     " bytes (COPY loads larger files into a table)"));
  }
  std::string text(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t got = ::read(fd, text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return absl::InternalError(absl::StrCat("cannot read '", path, "': ", std::strerror(errno)));
    if (got == 0) break;  // shorter than when it was measured
    done += static_cast<size_t>(got);
  }
  text.resize(done);
  return text;
}

}  // namespace tessera
