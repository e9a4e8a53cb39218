#pragma once
// Runs one `.test` file against the engine: the only part of the SQL logic test runner that knows Database,
// Session and Value. Parsing and comparison live in test_file_parser.h and result_comparison.h.
//
// Each file gets a fresh temporary root (mkdtemp under $TMPDIR, else /tmp) holding the Database's data
// directory and the file's __TEST_DIR__; the root is removed afterwards unless keep_data is set. A failing
// record is reported and the run goes on with the next record; only a failed database (re)open ends the
// file early.
// Not thread-safe: one runner per thread.

#include <ostream>
#include <string>

namespace tessera::sqllogictest {

struct RunnerOptions {
  // Keep each file's temporary root (its path is printed) instead of removing it.
  bool keep_data = false;
  // Print every record with its line and duration as it runs.
  bool verbose = false;
  // Values of __SHARED_DIR__ and __DATA_DIR__.
  std::string shared_dir;
  std::string data_dir;
};

struct FileOutcome {
  int passed = 0;
  int failed = 0;
  // Records not run: skipif/onlyif/mode skip, and records after a halt or a fatal error.
  int skipped = 0;
  // The file declared `require` (an optional feature Tessera does not have): nothing ran; not a failure.
  bool file_skipped = false;
};

// Runs the file at `path` and writes, to `out`, every failure (file:line, SQL, expected vs actual) and then
// one of "PASS <path> (N records)", "FAIL <path> (F of N records failed)", "SKIP <path> (require <feature>)".
// An unreadable or malformed file counts as one failed record.
FileOutcome RunTestFile(const std::string& path, const RunnerOptions& options, std::ostream& out);

}  // namespace tessera::sqllogictest
