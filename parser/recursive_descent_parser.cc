#include "parser/recursive_descent_parser.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "parser/syntax_error.h"

namespace tessera::parser {

RecursiveDescentParser::RecursiveDescentParser(std::string_view sql, std::vector<Token> tokens)
    : sql_(sql), tokens_(std::move(tokens)) {}

const Token& RecursiveDescentParser::PeekToken(int ahead) const {
  const size_t index = std::min(static_cast<size_t>(index_) + ahead, tokens_.size() - 1);
  return tokens_[index];
}

void RecursiveDescentParser::Advance() {
  if (Current().kind != TokenKind::kEndOfInput) index_++;
}

bool RecursiveDescentParser::IsOperator(const Token& token, std::string_view op) {
  return token.kind == TokenKind::kOperator && token.text == op;
}

bool RecursiveDescentParser::IsWord(const Token& token, std::string_view upper_word) {
  return (token.kind == TokenKind::kKeyword || token.kind == TokenKind::kIdentifier) && token.upper == upper_word;
}

bool RecursiveDescentParser::IsName(const Token& token) {
  return token.kind == TokenKind::kIdentifier || token.kind == TokenKind::kQuotedIdentifier;
}

bool RecursiveDescentParser::AtEndOfStatement() const {
  return Current().kind == TokenKind::kEndOfInput || AtOperator(";");
}

bool RecursiveDescentParser::ConsumeOperator(std::string_view op) {
  if (!AtOperator(op)) return false;
  Advance();
  return true;
}

bool RecursiveDescentParser::ConsumeWord(std::string_view upper_word) {
  if (!AtWord(upper_word)) return false;
  Advance();
  return true;
}

absl::Status RecursiveDescentParser::ExpectOperator(std::string_view op) {
  if (ConsumeOperator(op)) return absl::OkStatus();
  return ErrorExpected(absl::StrCat("'", std::string(op), "'"));
}

absl::Status RecursiveDescentParser::ExpectWord(std::string_view upper_word) {
  if (ConsumeWord(upper_word)) return absl::OkStatus();
  return ErrorExpected(upper_word);
}

absl::StatusOr<std::string> RecursiveDescentParser::ExpectName(std::string_view what) {
  if (!IsName(Current())) return ErrorExpected(what);
  std::string name = Current().text;
  Advance();
  return name;
}

absl::StatusOr<std::vector<std::string>> RecursiveDescentParser::ParseNameList(std::string_view what) {
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  std::vector<std::string> names;
  do {
    TESSERA_ASSIGN_OR_RETURN(std::string name, ExpectName(what));
    names.push_back(std::move(name));
  } while (ConsumeOperator(","));
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  return names;
}

std::string RecursiveDescentParser::SourceText(int first_index, int last_index) const {
  if (last_index < first_index) return "";
  const int begin = tokens_[first_index].position.offset;
  const int end = tokens_[last_index].end_offset;
  return std::string(sql_.substr(begin, end - begin));
}

std::string_view RecursiveDescentParser::TokenSource(const Token& token) const {
  return sql_.substr(token.position.offset, token.end_offset - token.position.offset);
}

absl::Status RecursiveDescentParser::ErrorAt(const SourcePosition& position, std::string_view what) const {
  return SyntaxError(sql_, position, what);
}

std::string RecursiveDescentParser::DescribeToken(const Token& token) const {
  switch (token.kind) {
    case TokenKind::kEndOfInput:
      return "end of input";
    case TokenKind::kString:
      return absl::StrCat("string literal ", QuoteForMessage(token.text));
    default:
      return QuoteForMessage(TokenSource(token));
  }
}

absl::Status RecursiveDescentParser::ErrorExpected(std::string_view what) const {
  if (Current().kind == TokenKind::kEndOfInput) {
    return ErrorAt(Current().position, absl::StrCat("unexpected end of input, expected ", std::string(what)));
  }
  return ErrorAt(Current().position,
                 absl::StrCat("expected ", std::string(what), ", found ", DescribeToken(Current())));
}

absl::Status RecursiveDescentParser::TooDeeplyNested() const {
  return ErrorAt(Current().position, "expression or query nested too deeply");
}

absl::StatusOr<std::vector<std::unique_ptr<Statement>>> RecursiveDescentParser::ParseStatementList() {
  std::vector<std::unique_ptr<Statement>> statements;
  while (true) {
    while (ConsumeOperator(";")) {
    }
    if (Current().kind == TokenKind::kEndOfInput) break;
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Statement> statement, ParseStatement());
    if (!AtEndOfStatement()) return ErrorExpected("end of statement");
    statements.push_back(std::move(statement));
  }
  return statements;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseSingleStatement() {
  while (ConsumeOperator(";")) {
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Statement> statement, ParseStatement());
  if (!AtEndOfStatement()) return ErrorExpected("end of statement");
  while (ConsumeOperator(";")) {
  }
  if (Current().kind != TokenKind::kEndOfInput) return ErrorExpected("end of input after the statement");
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseStatement() {
  NestingScope scope(nesting_);  // EXPLAIN EXPLAIN ... recurses here
  if (!scope.ok()) return TooDeeplyNested();
  const int first_index = index_;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Statement> statement, ParseStatementBody());
  statement->position = tokens_[first_index].position;
  statement->text = SourceText(first_index, index_ - 1);
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseStatementBody() {
  if (AtQueryStart()) {
    auto statement = std::make_unique<SelectQueryStatement>();
    TESSERA_ASSIGN_OR_RETURN(statement->query, ParseSelectStatement());
    if (ConsumeWord("OPTION")) {
      TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
      TESSERA_RETURN_IF_ERROR(ExpectWord("PRIORITY"));
      const Token& value = Current();
      if (value.kind != TokenKind::kInteger) return ErrorExpected("a priority (a positive integer)");
      if (!absl::SimpleAtoi(value.text, &statement->priority) || statement->priority < 1) {
        return ErrorAt(value.position, "priority must be a positive integer");
      }
      Advance();
      TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
    }
    return statement;
  }
  if (AtWord("CREATE")) return ParseCreate();
  if (AtWord("DROP")) return ParseDrop();
  if (AtWord("COPY")) return ParseCopy();
  if (AtWord("INSERT")) return ParseInsert();
  if (AtWord("EXPLAIN")) return ParseExplain();
  if (AtWord("ANALYZE")) return ParseAnalyze();
  if (AtWord("SET")) return ParseSet();
  if (AtWord("SHOW")) return ParseShow();
  if (AtWord("DESCRIBE") || AtWord("DESC")) return ParseDescribe();
  if (AtWord("DELETE")) return ParseDelete();
  if (AtWord("UPDATE")) return ParseUpdate();
  if (AtWord("VACUUM")) return ParseVacuum();
  if (AtWord("CANCEL")) return ParseCancelQuery();
  return ErrorExpected("a statement");
}

}  // namespace tessera::parser
