#include "engine/database_flags.h"

#include <gflags/gflags.h>

#include "absl/strings/str_cat.h"
#include "scheduler/policy.h"

DEFINE_uint64(memory_limit, 0,
              "buffer-pool budget in bytes for everything large (0: chosen at start from /proc/meminfo: min(60% of the "
              "total, 80% of what is available), at least a quarter of the total)");
DEFINE_int32(threads, 0, "worker threads, at least 1 when given (default: one per core)");
DEFINE_string(policy, tessera::PolicyName(tessera::PolicyOptions()),
              "scheduling policy: fair, hpf, pp, pp-exp, lottery, fcfs, srpt, ifsrpt or static");
DEFINE_double(admission_threshold, 0.9,
              "admit queries while their estimated memory fits under this fraction of the memory limit "
              "(0 to 1; 0: no admission control)");
DEFINE_int32(max_active_queries, -1,
             "run at most this many queries at once, the others wait in arrival order (-1: two per worker thread; "
             "0: no limit)");
DEFINE_bool(no_sync, false, "do not fsync block files and the catalog at commits (faster, not crash-safe)");

namespace tessera {

const char kDatabaseFlagsFile[] = __FILE__;

absl::Status ApplyDatabaseFlags(DatabaseOptions* options) {
  if (!gflags::GetCommandLineFlagInfoOrDie("threads").is_default) {
    if (FLAGS_threads < 1) return absl::InvalidArgumentError(absl::StrCat("invalid --threads '", FLAGS_threads, "'"));
    options->worker_threads = FLAGS_threads;
  }
  if (!gflags::GetCommandLineFlagInfoOrDie("memory_limit").is_default) {
    options->memory_budget_bytes = static_cast<size_t>(FLAGS_memory_limit);
  }
  if (!gflags::GetCommandLineFlagInfoOrDie("policy").is_default) {
    absl::StatusOr<PolicyOptions> policy = ParsePolicy(FLAGS_policy);
    if (!policy.ok()) return policy.status();
    options->scheduler.policy = *policy;
  }
  if (!gflags::GetCommandLineFlagInfoOrDie("admission_threshold").is_default) {
    if (!(FLAGS_admission_threshold >= 0 && FLAGS_admission_threshold <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --admission-threshold '", FLAGS_admission_threshold, "' (a fraction in [0, 1])"));
    }
    options->admission_threshold = FLAGS_admission_threshold;
  }
  if (!gflags::GetCommandLineFlagInfoOrDie("max_active_queries").is_default) {
    if (FLAGS_max_active_queries < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --max-active-queries '", FLAGS_max_active_queries, "' (-1, 0 or a count)"));
    }
    options->max_active_queries = FLAGS_max_active_queries;
  }
  if (FLAGS_no_sync) options->sync_writes = false;
  return absl::OkStatus();
}

}  // namespace tessera
