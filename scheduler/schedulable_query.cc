#include "scheduler/schedulable_query.h"

namespace tessera {

void WorkOrderTask::Run(const WorkerContext& context) {
  if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) {
    skipped_ = true;
    return;
  }
  rows_ = Execute(context);
}

const char* OperatorStateName(OperatorState state) {
  switch (state) {
    case OperatorState::kWaiting:
      return "waiting";
    case OperatorState::kRunning:
      return "running";
    case OperatorState::kDone:
      return "done";
  }
  return "unknown";
}

}  // namespace tessera
