#pragma once
// read_csv / read_csv_auto in FROM (table_function_binder.cc): a delimited file's text turned into typed rows,
// with the dialect and the column types detected from the text as DuckDB's sniffer does for simple files.
//
//   - Lines end with "\n" or "\r\n"; empty lines are skipped (they still count for line numbers). Fields follow
//     RFC 4180: a field starting with the quote character is quoted, "" inside is one quote; a quoted field may
//     not span lines. An unquoted field equal to the NULL string ('' unless given) is NULL.
//   - Delimiter (unless given): of ',', '|', ';' and tab, the one that splits the first 20 lines into the most
//     fields, the same number on each (more than one); ',' when none does.
//   - Types, per column over every line (NULLs aside): the first of BOOLEAN (true / false, any case), BIGINT,
//     DOUBLE, DATE, TIMESTAMP that every value parses as, else VARCHAR. No DECIMAL: numbers with a fraction are
//     DOUBLE, as DuckDB detects them.
//   - Header (unless given): the first line is a header when one of its fields is not a value of its column's
//     type as detected from the other lines (a name over numbers), or when every column is VARCHAR (as DuckDB
//     decides). Names come from the header (an empty one becomes columnN, a repeated one gets _1, _2, ...);
//     without a header they are column0, column1, ... (zero-padded to the widest number, as DuckDB names them).
//
// Errors (InvalidArgument) name the source and the line: "read_csv('x.csv'): line 4: expected 3 fields, found 2".
// Pure functions; thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/types.h"
#include "catalog/value.h"

namespace tessera::optimizer {

struct CsvOptions {
  std::optional<char> delimiter;  // detected when not given
  char quote = '"';               // '\0': no quoting
  std::optional<bool> header;     // detected when not given
  std::string null_string;        // an unquoted field equal to this is NULL
};

struct CsvTable {
  char delimiter = ',';
  bool header = false;
  std::vector<std::string> names;
  std::vector<Type> types;
  std::vector<std::vector<Value>> rows;  // each value of its column's type, or NULL
};

// `source` names the file in errors, e.g. "read_csv('data.csv')".
absl::StatusOr<CsvTable> ReadCsvText(std::string_view text, const CsvOptions& options, const std::string& source);

}  // namespace tessera::optimizer
