#include "server/pg_errors.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tessera::pg {
namespace {

bool Contains(absl::string_view text, absl::string_view part) { return absl::StrContains(text, part); }

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Byte offset of (line, column) in `text`, both 1-based, columns in UTF-8 characters; npos when out of range.
size_t ByteOffsetOf(std::string_view text, int64_t line, int64_t column) {
  if (line < 1 || column < 1) return std::string_view::npos;
  size_t offset = 0;
  for (int64_t l = 1; l < line; ++l) {
    offset = text.find('\n', offset);
    if (offset == std::string_view::npos) return std::string_view::npos;
    ++offset;
  }
  for (int64_t c = 1; c < column; ++c) {
    if (offset >= text.size() || text[offset] == '\n') return std::string_view::npos;
    ++offset;
    while (offset < text.size() && IsContinuationByte(text[offset])) ++offset;
  }
  return offset;
}

// Parses "line L, column C" at the start of `text` into *line and *column; returns the characters consumed, 0 if
// `text` does not start so.
size_t ParseLineColumn(absl::string_view text, int64_t* line, int64_t* column) {
  if (!absl::StartsWith(text, "line ")) return 0;
  const size_t comma = text.find(", column ");
  if (comma == absl::string_view::npos || !absl::SimpleAtoi(text.substr(5, comma - 5), line)) return 0;
  size_t end = comma + 9;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  if (!absl::SimpleAtoi(text.substr(comma + 9, end - comma - 9), column)) return 0;
  return end;
}

}  // namespace

std::string SqlStateOf(const absl::Status& status) {
  const absl::string_view message = status.message();
  switch (status.code()) {
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kDeadlineExceeded:
      return "57014";
    case absl::StatusCode::kResourceExhausted:
      return Contains(message, "sessions") || Contains(message, "connections") ? "53300" : "53200";
    case absl::StatusCode::kPermissionDenied:
      return "42501";
    case absl::StatusCode::kUnimplemented:
      return "0A000";
    case absl::StatusCode::kUnauthenticated:
      return "28P01";
    case absl::StatusCode::kAlreadyExists:
      return "42P07";
    case absl::StatusCode::kFailedPrecondition:
      return "55000";
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      break;
    default:
      return "XX000";
  }
  if (absl::StartsWith(message, "syntax error")) return "42601";
  // A bad line of COPY's data ("COPY t: STDIN line 3, column x: ..."): the data's class, as PostgreSQL's.
  if (absl::StartsWith(message, "COPY ") && Contains(message, " line ")) {
    if (Contains(message, "invalid input for")) return "22P02";
    if (Contains(message, "out of range")) return "22003";
    if (Contains(message, "too long for")) return "22001";
    if (Contains(message, "NULL in a NOT NULL column")) return "23502";
    return "22P04";  // bad_copy_file_format: field counts, quotes, line length
  }
  if (Contains(message, "does not exist")) {
    if (absl::StartsWith(message, "column ")) return "42703";
    if (absl::StartsWith(message, "table ") || absl::StartsWith(message, "view ")) return "42P01";
    if (absl::StartsWith(message, "function ")) return "42883";
    return "42704";
  }
  if (absl::StartsWith(message, "unknown setting")) return "42704";
  if (absl::StartsWith(message, "invalid value for parameter")) return "22023";
  if (absl::EndsWith(message, "cannot be changed")) return "55P02";
  if (absl::StartsWith(message, "invalid input for")) return "22P02";
  if (Contains(message, "out of range")) return "22003";
  if (Contains(message, "too long for")) return "22001";
  if (Contains(message, "division by zero")) return "22012";
  if (absl::StartsWith(message, "cannot cast")) return "42846";
  if (absl::StartsWith(message, "parameter $")) return "22023";
  if (Contains(message, "already exists")) return "42P07";
  if (status.code() == absl::StatusCode::kOutOfRange) return "22003";
  // Other user mistakes are found while binding the statement: a semantic error in PostgreSQL's terms.
  return status.code() == absl::StatusCode::kNotFound ? "42704" : "42000";
}

PgError ErrorFromStatus(const absl::Status& status, std::string_view statement, size_t* statement_byte) {
  PgError error;
  error.sqlstate = SqlStateOf(status);
  absl::string_view message = status.message();
  // Tessera's caret lines ("\n  <source line>\n  <spaces>^") follow the first line.
  if (const size_t newline = message.find("\n  "); newline != absl::string_view::npos) {
    message = message.substr(0, newline);
  }
  int64_t line = 0, column = 0;
  std::string text(message);
  if (absl::StartsWith(message, "syntax error at ")) {
    // "syntax error at line L, column C: what"
    const size_t consumed = ParseLineColumn(message.substr(16), &line, &column);
    if (consumed > 0) text = absl::StrCat("syntax error", message.substr(16 + consumed));
  } else if (const size_t at = message.rfind(" at line "); at != absl::string_view::npos) {
    // "<message> at line L, column C" at the end.
    const size_t consumed = ParseLineColumn(message.substr(at + 4), &line, &column);
    if (consumed > 0 && at + 4 + consumed == message.size()) {
      text = std::string(message.substr(0, at));
    } else {
      line = column = 0;
    }
  }
  error.message = std::move(text);
  if (statement_byte != nullptr) {
    *statement_byte = line > 0 ? ByteOffsetOf(statement, line, column) : std::string_view::npos;
  }
  return error;
}

int CharacterPosition(std::string_view query, size_t byte_offset) {
  int characters = 0;
  for (size_t i = 0; i < byte_offset && i < query.size(); ++i) characters += IsContinuationByte(query[i]) ? 0 : 1;
  return characters + 1;
}

}  // namespace tessera::pg
