#pragma once
// Entry point of the SQL front end: text -> AST. Hand-written lexer and recursive-descent parser.
//
// Contract: never crashes, never hangs, on any input (it is fuzzed). Errors are absl::InvalidArgumentError whose
// message names line and column and ends with the offending line and a caret under the offending token:
//
//   syntax error at line 2, column 8: expected an expression, found 'FROM'
//     SELECT FROM t
//            ^
//
// Thread-safe: no shared state.

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "parser/ast.h"

namespace tessera::parser {

// Parses zero or more ';'-separated statements. Empty statements (";;") are skipped.
absl::StatusOr<std::vector<std::unique_ptr<Statement>>> ParseStatements(std::string_view sql);

// Parses exactly one statement (a trailing ';' is allowed).
absl::StatusOr<std::unique_ptr<Statement>> ParseStatement(std::string_view sql);

// Formats a message with a caret under `position` in `sql`; used by the parser and by later stages (the binder)
// so that every error about a statement looks the same:
//   "<message> at line L, column C\n  <source line>\n  <spaces>^"
std::string FormatErrorWithCaret(std::string_view sql, const SourcePosition& position, std::string_view message);

// For errors raised after parsing without a position of their own (a DDL statement naming a missing table, a
// runtime error): `status` with FormatErrorWithCaret(sql, position, message) as its message, same code. OK
// statuses and messages that already name a position (" at line ") are returned unchanged.
absl::Status WithPositionIfMissing(const absl::Status& status, std::string_view sql, const SourcePosition& position);

}  // namespace tessera::parser
