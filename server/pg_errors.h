#pragma once
// Tessera errors as PostgreSQL ErrorResponse / NoticeResponse fields: a SQLSTATE chosen from the absl status code
// and the kind of error its message names, the message without Tessera's caret lines, and the statement position
// (PostgreSQL's 'P' field: 1-based, in characters of the query string the client sent).
//
//   42601 syntax error           42P01 undefined table/view      42703 undefined column   42883 undefined function
//   42P07 duplicate table        42804 datatype mismatch         42501 insufficient privilege (file access)
//   22P02 invalid text           22003 numeric out of range      22001 string too long     22012 division by zero
//   22023 invalid parameter value 55P02 read-only parameter     53200 out of memory     53300 too many connections
//   57014 query canceled (cancel, statement_timeout)             0A000 feature not supported
//   08P01 protocol violation     28P01 invalid password          XX000 anything else
//
// Thread-safe: no state.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tessera::pg {

struct PgError {
  std::string severity = "ERROR";  // ERROR, FATAL, NOTICE, WARNING
  std::string sqlstate = "XX000";
  std::string message;
  std::string hint;
  int position = 0;  // 0: none
};

// The SQLSTATE for a failed status (never OK).
std::string SqlStateOf(const absl::Status& status);

// The error for `status`, raised by `statement` (the text the engine ran). Its message loses Tessera's position
// words and caret lines; the position they named ("at line L, column C") is returned as a byte offset into
// `statement` in *statement_byte (npos when the message names none). The caller maps that offset to the client's
// query string and sets `position` with CharacterPosition.
PgError ErrorFromStatus(const absl::Status& status, std::string_view statement = {}, size_t* statement_byte = nullptr);

// PostgreSQL's position of byte `byte_offset` of `query`: 1 + the number of UTF-8 characters before it.
int CharacterPosition(std::string_view query, size_t byte_offset);

}  // namespace tessera::pg
