#pragma once
// CPU lists and core pinning for worker threads (Linux sched_getaffinity / pthread_setaffinity_np).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera {

// Parses a Linux-style CPU list such as "0-3,6,8-9" into sorted, distinct CPU numbers. Whitespace around
// items is allowed; an empty string, a negative number, a reversed range or junk is an InvalidArgument naming
// the item.
absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& text);

// Formats CPUs back into the compact list form ("0-3,6").
std::string FormatCpuList(const std::vector<int>& cpus);

// The CPUs this process may run on (sched_getaffinity), in increasing order; never empty (falls back to
// 0 .. hardware_concurrency-1 if the call fails).
std::vector<int> AllowedCpus();

// Pins the calling thread to `cpu`. Returns the OS error as a Status; callers log it and run unpinned.
absl::Status PinCurrentThreadToCpu(int cpu);

// The CPU the calling thread runs on right now (sched_getcpu), or -1.
int CurrentCpu();

}  // namespace tessera
