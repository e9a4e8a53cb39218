// tessera_sqllogictest: runs sqllogictest-style `.test` files against a fresh Tessera database each.
//
//   tessera_sqllogictest [--keep-data] [--verbose] FILE.test...
//
// Prints per file "PASS file (N records)" (or its failures and "FAIL ..."), then "N passed, M failed"
// counting records over all files. Exit status: 0 iff no record failed, 1 otherwise, 2 on a usage error.
// Environment: TMPDIR (where temporary data directories go), TESSERA_SHARED_DIR (value of __SHARED_DIR__).

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "glog/logging.h"
#include "tests/sqllogictest/test_file_runner.h"

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the repository root (set by tests/sqllogictest/CMakeLists.txt)"
#endif

namespace {

constexpr std::string_view kUsage = "usage: tessera_sqllogictest [--keep-data] [--verbose] FILE.test...\n";

std::string SharedDirectory() {
  const char* from_environment = std::getenv("TESSERA_SHARED_DIR");
  if (from_environment != nullptr && from_environment[0] != '\0') return from_environment;
  return (std::filesystem::path(TESSERA_SOURCE_DIR) / ".." / "shared").lexically_normal().string();
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;  // no log files in /tmp per test run; warnings show in the ctest output
  FLAGS_minloglevel = 1;     // warnings and errors only

  tessera::sqllogictest::RunnerOptions options;
  options.shared_dir = SharedDirectory();
  options.data_dir = (std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "data").string();
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string_view argument = argv[i];
    if (argument == "--keep-data") {
      options.keep_data = true;
    } else if (argument == "--verbose") {
      options.verbose = true;
    } else if (argument == "--help" || argument == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (argument.starts_with("-")) {
      std::cerr << "unknown option " << argument << "\n" << kUsage;
      return 2;
    } else {
      files.emplace_back(argument);
    }
  }
  if (files.empty()) {
    std::cerr << kUsage;
    return 2;
  }

  int passed = 0;
  int failed = 0;
  int skipped_records = 0;
  int skipped_files = 0;
  for (const std::string& file : files) {
    tessera::sqllogictest::FileOutcome outcome = tessera::sqllogictest::RunTestFile(file, options, std::cout);
    passed += outcome.passed;
    failed += outcome.failed;
    skipped_records += outcome.skipped;
    skipped_files += outcome.file_skipped ? 1 : 0;
    std::cout.flush();
  }
  if (skipped_records > 0 || skipped_files > 0) {
    std::cout << "skipped: " << skipped_records << " records, " << skipped_files << " files\n";
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
