#pragma once
// Comparison of a rendered query result (and of error messages) against the expectations of a `.test` record.
//
// Rules:
//   - The number of columns must equal the number of type letters of the query record.
//   - Expected values are one row per line with values separated by tabs. When no expected line contains
//     a tab and the query has several columns, the lines are read as one value per line (row after row),
//     the classic sqllogictest form. Spaces never separate values.
//   - rowsort sorts the rows of both sides (lexicographically by rendered values), valuesort sorts all
//     values of both sides ignoring row boundaries, nosort keeps the engine's order.
//   - 'R' columns compare numerically: equal when |actual - expected| <= 1e-9 * max(1, |expected|); and
//     when the expected text has exactly two fraction digits ("money", e.g. TPC-H answer sets), a
//     difference of up to 0.01 is accepted too, because reference answers are rounded in ways that differ
//     by a cent. Text that does not parse as a number (NULL, (empty), words) must match exactly. Under
//     valuesort the tolerance applies only when every column is 'R' (values no longer belong to a column).
//   - Every other column compares as exact text.
//   - Patterns instead of values (DuckDB's form, for EXPLAIN output and other text that is only partly fixed):
//     when the first expected line starts with "<REGEX>:", every expected line must be "<REGEX>:pattern" (the
//     result must match) or "<!REGEX>:pattern" (it must not); patterns are std::regex_search, ECMAScript, over
//     the whole result: rows joined by newlines, values by tabs, in the engine's order ('.' stops at a newline;
//     use [\s\S] to cross lines).
// All functions are pure and thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/sqllogictest/test_file_parser.h"

namespace tessera::sqllogictest {

using RenderedRows = std::vector<std::vector<std::string>>;

// A result after RenderCell: every row has column_names.size() values.
struct RenderedResult {
  std::vector<std::string> column_names;
  RenderedRows rows;
};

struct ComparisonOutcome {
  bool matched = true;
  // When !matched: what differs, followed by the expected and actual values (at most kMaxPrintedRows each).
  std::string explanation;
};

inline constexpr size_t kMaxPrintedRows = 20;

// Compares `actual` with the raw expected lines of a query record. `column_types` has one letter per column.
ComparisonOutcome CompareQueryResult(std::string_view column_types, SortMode sort_mode,
                                     const std::vector<std::string>& expected_lines, const RenderedResult& actual);

// Splits expected lines into rows of `column_count` values (see the rules above). InvalidArgument names
// the offending line (1-based within the expected block) when a row has the wrong number of values.
absl::StatusOr<RenderedRows> SplitExpectedRows(const std::vector<std::string>& expected_lines, size_t column_count);

// The numeric rule for 'R' columns described above.
bool RealValuesMatch(std::string_view expected, std::string_view actual);

// Checks an error message against a `statement error` record: it must contain `substring` (when non-empty)
// and match `regex` with std::regex_search, ECMAScript (when non-empty). The parser has validated the regex.
ComparisonOutcome CheckErrorMessage(std::string_view message, const std::string& regex, const std::string& substring);

// Rows as lines with tab-separated values: the form a `.test` file uses, so a printed actual result can be
// pasted into a test.
std::vector<std::string> RowsToLines(const RenderedRows& rows);

}  // namespace tessera::sqllogictest
