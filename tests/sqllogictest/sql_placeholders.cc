#include "tests/sqllogictest/sql_placeholders.h"

#include "absl/strings/str_replace.h"

namespace tessera::sqllogictest {

std::string ReplacePlaceholders(std::string_view sql, const PlaceholderPaths& paths) {
  return absl::StrReplaceAll(
      absl::string_view(sql.data(), sql.size()),
      {{"__TEST_DIR__", paths.test_dir}, {"__SHARED_DIR__", paths.shared_dir}, {"__DATA_DIR__", paths.data_dir}});
}

}  // namespace tessera::sqllogictest
