#pragma once
// Parser for sqllogictest-style `.test` files (the DuckDB dialect, as far as Tessera's runner supports it).
//
// The parser only turns text into records; it knows nothing about the engine, so it is unit-tested on
// strings. Grammar (one record per block; records are separated by blank lines):
//
//   # name: <text>                    header comments, captured into TestFile; other '#' lines are comments
//   # group: [<group>] [slow]
//   statement ok                      then SQL lines up to a blank line; the SQL must succeed
//   statement error [<regex>]         then SQL lines, optionally "----" and an expected error substring
//   query <types> [nosort|rowsort|valuesort] [<label>]
//                                     then SQL lines, optionally "----" and the expected values up to a
//                                     blank line
//   restart                           close and reopen the database on the same data directory
//   halt                              stop running the file (what ran so far counts)
//   require <feature>                 the whole file is skipped (no optional features exist yet)
//   skipif <engine> / onlyif <engine> condition on the next record: it runs iff (skipif: engine != tessera,
//                                     onlyif: engine == tessera)
//   mode skip / mode unskip           records in between are skipped
//
// '#' lines inside SQL are dropped (comments), but kept inside expected results (a value may start with '#').
// Anything else is an error that names the line, so a typo never silently disables a test.
// All functions are pure and thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::sqllogictest {

// The engine name that skipif/onlyif compare against.
inline constexpr std::string_view kEngineName = "tessera";

enum class RecordType {
  kStatementOk,
  kStatementError,
  kQuery,
  kRestart,
  kHalt,
  kRequire,
};

enum class SortMode {
  kNoSort,     // compare rows in the order the engine returned them
  kRowSort,    // sort rows (lexicographically by rendered values) on both sides first
  kValueSort,  // sort all values, ignoring row boundaries, on both sides first
};

struct TestRecord {
  RecordType type = RecordType::kStatementOk;
  // 1-based line of the directive ("statement ok", "query II", ...), for error messages.
  int line = 0;
  // Set by skipif/onlyif/mode skip: the runner must not execute this record.
  bool skipped = false;

  // kStatementOk, kStatementError, kQuery: the SQL lines joined by '\n' (never empty).
  std::string sql;

  // kStatementError: the regex on the header line and the substring after "----" (each empty = none).
  // The regex is validated by the parser (ECMAScript syntax).
  std::string expected_error_regex;
  std::string expected_error_substring;

  // kQuery: one type letter per column (I integer, R real, anything else text), the sort mode, an optional
  // label (queries with the same label must return the same rows), and the raw lines after "----".
  std::string column_types;
  SortMode sort_mode = SortMode::kNoSort;
  std::string label;
  bool has_expected_results = false;
  std::vector<std::string> expected_lines;

  // kRequire: the required feature.
  std::string argument;
};

struct TestFile {
  std::string name;   // from "# name:", trimmed; empty when absent
  std::string group;  // from "# group:", trimmed; empty when absent
  std::vector<TestRecord> records;
};

// Parses the content of a `.test` file. `file_name` only prefixes error messages ("file:line: ...").
// Returns InvalidArgument on malformed input (unknown directive, missing SQL, bad regex, dangling skipif).
absl::StatusOr<TestFile> ParseTestFile(std::string_view content, std::string_view file_name);

// True when the group header marks the file as slow ("[slow]" appears in it); such files get the ctest
// label "slow" instead of "sql" (tests/sqllogictest/CMakeLists.txt applies the same rule with a regex).
bool IsSlowGroup(std::string_view group);

}  // namespace tessera::sqllogictest
