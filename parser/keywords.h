#pragma once
// The SQL words the parser treats as reserved. Every other word, including words with a meaning in some
// position (DATE, YEAR, COUNT, FORMAT, ANALYZE, ...), may be used as an unquoted table, column or alias name;
// the parser recognizes those by context. A reserved word can still be used as a name when double-quoted.

#include <string_view>

namespace tessera::parser {

// `upper_word` must be upper-cased. True for words such as SELECT, FROM, WHERE, JOIN, AND, NULL, ...: words
// that can follow an expression or a table reference and would otherwise be taken for an implicit alias.
bool IsReservedKeyword(std::string_view upper_word);

}  // namespace tessera::parser
