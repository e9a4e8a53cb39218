// tessera_sqllogictest: runs sqllogictest-style `.test` files against a fresh Tessera database each.
//
//   tessera_sqllogictest [--keep-data] [--verbose] FILE.test...
//
// Prints per file "PASS file (N records)" (or its failures and "FAIL ..."), then "N passed, M failed"
// counting records over all files. Exit status: 0 iff no record failed, 1 otherwise, 2 on a usage error.
// Flags are gflags (common/command_line_flags.h: --help lists them).
// Environment: TMPDIR (where temporary data directories go), TESSERA_SHARED_DIR (value of __SHARED_DIR__).

#include <gflags/gflags.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/command_line_flags.h"
#include "glog/logging.h"
#include "tests/sqllogictest/test_file_runner.h"

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the repository root (set by tests/sqllogictest/CMakeLists.txt)"
#endif

DEFINE_bool(keep_data, false, "keep each file's data directory (printed) instead of deleting it");
DEFINE_bool(verbose, false, "print every record as it runs");

namespace {

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

  const tessera::ProgramDescription program{"tessera_sqllogictest",
                                            "usage: tessera_sqllogictest [--keep-data] [--verbose] FILE.test...\n"
                                            "Runs sqllogictest-style .test files, each against a fresh database.",
                                            {__FILE__}};
  tessera::ParseProgramFlags(&argc, &argv, program);
  if (argc < 2) tessera::ExitWithUsageError(program, "no .test file given");
  tessera::sqllogictest::RunnerOptions options;
  options.shared_dir = SharedDirectory();
  options.data_dir = (std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "data").string();
  options.keep_data = FLAGS_keep_data;
  options.verbose = FLAGS_verbose;
  const std::vector<std::string> files(argv + 1, argv + argc);
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
