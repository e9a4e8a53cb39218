#pragma once
// The hand-written SQL lexer: text -> tokens with source positions.
//
//  - Unquoted words are identifiers (lower-cased) or, for the reserved words of parser/keywords.h, keywords
//    (upper-cased). Both keep the upper-cased spelling in Token::upper so the parser can match non-reserved
//    keywords by context.
//  - "Quoted identifiers" keep their case; "" inside stands for one ". An empty quoted identifier is an
//  error.
//  - Numbers: 123 (kInteger), 1.5, .5, 1., 1e10, 2.5E-3 (kDecimal); the text is kept exactly. A number
//  directly
//    followed by a letter (1abc) is an error.
//  - 'strings' with '' for one quote; they may span lines.
//  - Operators: = <> != < <= > >= + - * / % || :: ( ) , . ;  ("!=" is returned as "<>").
//  - Comments: -- to end of line, and /* ... */ which may nest.
//
// Positions: 1-based line and column (columns count UTF-8 code points), 0-based byte offset. Errors
// (unterminated string, quoted identifier or comment; unexpected character) are InvalidArgument syntax errors
// pointing at the start of the offending text, formatted as described in parser/parser.h.
//
// Stateless and thread-safe.

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "parser/token.h"

namespace tessera::parser {

// Returns the tokens of `sql`, always ending with one kEndOfInput token.
absl::StatusOr<std::vector<Token>> Tokenize(std::string_view sql);

}  // namespace tessera::parser
