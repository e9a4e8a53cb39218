#pragma once
// Renders query results for people (aligned tables) and tools (CSV, TSV).

#include <string>

#include "cli/query_result.h"

namespace tessera {

enum class OutputFormat { kAligned, kCsv, kTsv };

// Aligned: a header with column names and types, a rule, rows with numbers right-aligned and NULL shown as
// "NULL", then "(N rows)". CSV: one header line, then rows with RFC 4180 quoting; NULL is an empty field.
// TSV: the same with tabs and no quoting. Statements without rows render as their status message.
std::string FormatResult(const QueryResult& result, OutputFormat format);

}  // namespace tessera
