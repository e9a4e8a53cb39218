#pragma once
// Formatting of errors that point into a statement's text: the message, the offending source line, and a
// caret under the offending column. Shared by the lexer and the parser; later stages use FormatErrorWithCaret
// (parser/parser.h), which is built on the same rendering.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "parser/ast.h"

namespace tessera::parser {

// Returns "\n  <source line>\n  <spaces>^" for `position` in `sql`. Lines longer than about 100 characters
// are shown as a window around the column, with "..." where text was cut. Tabs before the column are kept in
// the caret line so that the caret lines up in a terminal. Columns count UTF-8 code points, not bytes.
std::string RenderCaretLines(std::string_view sql, const SourcePosition& position);

// InvalidArgumentError("syntax error at line L, column C: <what>" + RenderCaretLines(...)).
absl::Status SyntaxError(std::string_view sql, const SourcePosition& position, std::string_view what);

// Quotes token text for a message: 'text', with text longer than 40 characters shortened to its start and
// "...".
std::string QuoteForMessage(std::string_view text);

}  // namespace tessera::parser
