#pragma once
// Renders query results for people (aligned tables) and tools (CSV, TSV, JSON).

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/query_result.h"

namespace tessera {

enum class OutputFormat { kAligned, kCsv, kTsv, kJson };

struct FormatOptions {
  OutputFormat format = OutputFormat::kAligned;
  // Aligned only. The widest a table may be, in characters (the terminal's width); 0 = no limit. Columns wider
  // than their share are cut and end in "…"; when even narrow columns do not fit, middle columns are left out
  // and one column "…" stands for them.
  size_t max_width = 0;
  // Aligned only. The most rows shown; 0 = all. More rows show the first and last half of this many with a "…"
  // row between, and the footer says how many rows were shown.
  size_t max_rows = 0;
  // Aligned only. For a terminal: NULL is drawn dimmed (ANSI faint), so that it differs from the string 'NULL'.
  bool terminal_styles = false;
};

// Aligned: a line with the column names, a line with their types, a rule, the rows (numbers right-aligned, NULL
// as "NULL", control characters as \n, \t, \r), then "(N rows)". CSV: one header line, then the rows with RFC 4180
// quoting; NULL is an empty field. TSV: the same with tabs and no quoting. JSON: one array per result with one
// object per row ({"column": value}), a row per line; numbers and booleans as JSON numbers and true/false (a
// non-finite double as null), NULL as null, everything else as a string.
// Statements without rows render as their status message, except in JSON, where they render as nothing.
std::string FormatResult(const QueryResult& result, const FormatOptions& options);
inline std::string FormatResult(const QueryResult& result, OutputFormat format) {
  return FormatResult(result, FormatOptions{.format = format});
}

// How many terminal cells `text` takes, counted as UTF-8 code points (wide East Asian characters count as one).
size_t DisplayWidth(std::string_view text);

}  // namespace tessera
