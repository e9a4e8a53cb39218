#include "threading/cpu_affinity.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tessera {
namespace {

absl::Status BadItem(const std::string& text, const std::string& item) {
  return absl::InvalidArgumentError(absl::StrCat("invalid CPU list '", text, "': bad item '", item, "'"));
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& text) {
  std::vector<int> cpus;
  for (absl::string_view raw : absl::StrSplit(text, ',')) {
    std::string item(absl::StripAsciiWhitespace(raw));
    if (item.empty()) return BadItem(text, item);
    std::vector<std::string> bounds = absl::StrSplit(item, '-');
    int first = 0;
    int last = 0;
    if (bounds.size() == 1) {
      if (!absl::SimpleAtoi(bounds[0], &first)) return BadItem(text, item);
      last = first;
    } else if (bounds.size() == 2) {
      if (!absl::SimpleAtoi(bounds[0], &first) || !absl::SimpleAtoi(bounds[1], &last)) return BadItem(text, item);
    } else {
      return BadItem(text, item);
    }
    if (first < 0 || last < first || last >= CPU_SETSIZE) return BadItem(text, item);
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) absl::StrAppend(&out, "-", cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) {
    int n = std::max(1u, std::thread::hardware_concurrency());
    for (int cpu = 0; cpu < n; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

absl::Status PinCurrentThreadToCpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return absl::InvalidArgumentError(absl::StrCat("no such CPU ", cpu));
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error != 0) {
    return absl::InternalError(absl::StrCat("pinning to CPU ", cpu, " failed: ", std::string(strerror(error))));
  }
  return absl::OkStatus();
}

int CurrentCpu() { return sched_getcpu(); }

}  // namespace tessera
