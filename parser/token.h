#pragma once
// Tokens produced by the lexer (parser/lexer.h) and consumed by the recursive-descent parser.
// A token is a small value; it refers to nothing outside itself.

#include <string>

#include "parser/ast.h"

namespace tessera::parser {

enum class TokenKind {
  kKeyword,           // a reserved word (see parser/keywords.h); text is upper-cased
  kIdentifier,        // any other unquoted word, including non-reserved keywords such as DATE; text is lower-cased
  kQuotedIdentifier,  // "Name": text is the content with "" unescaped, case kept
  kInteger,           // digits only; text kept exactly
  kDecimal,           // digits with '.' and/or an exponent; text kept exactly
  kString,            // 'text': text is the content with '' unescaped
  kOperator,          // = <> != < <= > >= + - * / % || :: ( ) , . ;
  kEndOfInput,        // always the last token; positioned just after the last real token
};

struct Token {
  TokenKind kind = TokenKind::kEndOfInput;
  // The token's value, normalized as described for each kind. For kIdentifier this is the lower-cased word;
  // use `upper` to match keywords.
  std::string text;
  // kKeyword and kIdentifier: the word upper-cased, for keyword matching. Empty for other kinds.
  std::string upper;
  SourcePosition position;
  // Byte offset one past the token's last byte: the token's source text is sql.substr(offset, end - offset).
  int end_offset = 0;
};

}  // namespace tessera::parser
