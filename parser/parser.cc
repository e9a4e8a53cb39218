#include "parser/parser.h"

#include <memory>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "parser/lexer.h"
#include "parser/recursive_descent_parser.h"

namespace tessera::parser {

absl::StatusOr<std::vector<std::unique_ptr<Statement>>> ParseStatements(std::string_view sql) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  return RecursiveDescentParser(sql, std::move(tokens)).ParseStatementList();
}

absl::StatusOr<std::unique_ptr<Statement>> ParseStatement(std::string_view sql) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  return RecursiveDescentParser(sql, std::move(tokens)).ParseSingleStatement();
}

}  // namespace tessera::parser
