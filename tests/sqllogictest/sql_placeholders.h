#pragma once
// Placeholders that `.test` files write instead of machine-specific paths. Pure and thread-safe.
//
//   __TEST_DIR__    a temporary directory private to the running file (removed with its data directory)
//   __SHARED_DIR__  the shared folder next to the repository (env TESSERA_SHARED_DIR, else <repo>/../shared)
//   __DATA_DIR__    <repo>/tests/data, checked-in test data

#include <string>
#include <string_view>

namespace tessera::sqllogictest {

struct PlaceholderPaths {
  std::string test_dir;
  std::string shared_dir;
  std::string data_dir;
};

// Returns `sql` with every placeholder occurrence replaced by its path (no quoting or escaping is added).
std::string ReplacePlaceholders(std::string_view sql, const PlaceholderPaths& paths);

}  // namespace tessera::sqllogictest
