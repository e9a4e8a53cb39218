#pragma once
// The materialized answer of one statement, as the session hands it to the shell, the test runner and the server.

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/types.h"
#include "catalog/value.h"

namespace tessera {

struct ResultColumn {
  std::string name;
  Type type;
};

struct QueryResult {
  // Columns and rows of a statement that returns rows (SELECT, SHOW, DESCRIBE, EXPLAIN); empty otherwise.
  std::vector<ResultColumn> columns;
  std::vector<std::vector<Value>> rows;
  // Rows handed to a ResultSink instead of kept in `rows` (Session::Execute with a sink); `rows` is then empty.
  int64_t streamed_rows = 0;
  // For statements without rows: a short tag such as "CREATE TABLE", "COPY 6001215", "INSERT 3".
  std::string status_message;
  int64_t rows_affected = 0;
  bool returns_rows = false;
};

}  // namespace tessera
