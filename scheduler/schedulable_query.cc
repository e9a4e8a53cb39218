#include "scheduler/schedulable_query.h"

#include "absl/strings/match.h"

namespace tessera {

void WorkOrderTask::Run(const WorkerContext& context) {
  if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) {
    skipped_ = true;
    return;
  }
  rows_ = Execute(context);
}

const char* ScanSharingName(ScanSharing sharing) {
  switch (sharing) {
    case ScanSharing::kOff:
      return "off";
    case ScanSharing::kFull:
      return "full";
    case ScanSharing::kBatch:
      return "batch";
  }
  return "unknown";
}

bool ParseScanSharing(std::string_view text, ScanSharing* sharing) {
  for (ScanSharing candidate : {ScanSharing::kOff, ScanSharing::kFull, ScanSharing::kBatch}) {
    if (absl::EqualsIgnoreCase(absl::string_view(text.data(), text.size()), ScanSharingName(candidate))) {
      *sharing = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace tessera
