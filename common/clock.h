#pragma once
// Monotonic time for measurements; never use for wall-clock timestamps shown to users.

#include <chrono>
#include <cstdint>

namespace tessera {

inline int64_t MonotonicNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace tessera
