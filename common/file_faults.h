#pragma once
// Fault injection under the data directory's writes, as SQLite's test VFS does it: every write, fsync and rename
// of a file of the data directory goes through the calls of common/file_io.h (WriteAllAt, SyncFile, RenameFile,
// WriteFileAtomically), and each of them first asks the installed FileFaultInjector whether to fail with an errno.
// Production code installs none: the hook then costs one atomic load per call (calls are per block or per file,
// never per row).
//
// Threading: installing and removing are thread-safe; an injector is called from whichever thread writes, so it
// must be thread-safe itself (FailNthFileOperation is).

#include <atomic>
#include <cstdint>
#include <string>

namespace tessera {

enum class FileOperation { kWrite, kSync, kRename };

const char* FileOperationName(FileOperation operation);

class FileFaultInjector {
 public:
  virtual ~FileFaultInjector() = default;
  // Called before each operation on `path`: 0 lets it run; an errno value makes it fail with that error instead.
  // A failed write is torn (its first half is written, as when a disk fills up midway); a failed fsync or rename
  // does nothing.
  virtual int Before(FileOperation operation, const std::string& path) = 0;
};

// Installs `injector` (null: none) for every thread until replaced. The caller keeps it alive while installed.
void SetFileFaultInjector(FileFaultInjector* injector);

// The errno the installed injector wants for this operation, 0 when there is none or it lets the call run.
int InjectedFileFault(FileOperation operation, const std::string& path);

// Counts the operations and fails the `fail_at`-th (1-based; 0 = never) with `error` (ENOSPC, EIO, ...). Each
// later operation runs normally, as on a disk that was full for a moment: the code under test must cope with a
// failure anywhere, followed by anything.
class FailNthFileOperation : public FileFaultInjector {
 public:
  FailNthFileOperation(int64_t fail_at, int error) : fail_at_(fail_at), error_(error) {}
  int Before(FileOperation operation, const std::string& path) override;

  int64_t operations() const { return operations_.load(); }
  bool injected() const { return injected_.load(); }
  // The operation that failed, for messages: "write 'dir/segments/segment_3.blk'"; empty when none did.
  std::string injected_at() const;

 private:
  const int64_t fail_at_;
  const int error_;
  std::atomic<int64_t> operations_{0};
  std::atomic<bool> injected_{false};
  std::string injected_at_;  // written once, by the thread that injected, before injected_ is set
};

// Installs an injector for its scope and removes it at the end.
class ScopedFileFaultInjector {
 public:
  explicit ScopedFileFaultInjector(FileFaultInjector* injector) { SetFileFaultInjector(injector); }
  ~ScopedFileFaultInjector() { SetFileFaultInjector(nullptr); }
  ScopedFileFaultInjector(const ScopedFileFaultInjector&) = delete;
  ScopedFileFaultInjector& operator=(const ScopedFileFaultInjector&) = delete;
};

}  // namespace tessera
