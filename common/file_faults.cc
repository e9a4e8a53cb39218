#include "common/file_faults.h"

#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

std::atomic<FileFaultInjector*> installed_injector{nullptr};

}  // namespace

const char* FileOperationName(FileOperation operation) {
  switch (operation) {
    case FileOperation::kWrite:
      return "write";
    case FileOperation::kSync:
      return "fsync";
    case FileOperation::kRename:
      return "rename";
  }
  return "?";
}

void SetFileFaultInjector(FileFaultInjector* injector) { installed_injector.store(injector); }

int InjectedFileFault(FileOperation operation, const std::string& path) {
  FileFaultInjector* injector = installed_injector.load(std::memory_order_acquire);
  return injector == nullptr ? 0 : injector->Before(operation, path);
}

int FailNthFileOperation::Before(FileOperation operation, const std::string& path) {
  const int64_t n = operations_.fetch_add(1) + 1;
  if (n != fail_at_) return 0;
  injected_at_ = absl::StrCat(FileOperationName(operation), " '", path, "'");
  injected_.store(true);
  return error_;
}

std::string FailNthFileOperation::injected_at() const { return injected_.load() ? injected_at_ : std::string(); }

}  // namespace tessera
