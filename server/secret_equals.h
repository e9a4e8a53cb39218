#pragma once
// Comparison of secrets (the server's token, a cancel key) in time independent of where they differ, so that a
// secret cannot be found byte by byte from response times. Thread-safe.

#include <cstddef>
#include <string_view>

namespace tessera {

inline bool SecretEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

}  // namespace tessera
