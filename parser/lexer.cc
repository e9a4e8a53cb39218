#include "parser/lexer.h"

#include <climits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "parser/keywords.h"
#include "parser/syntax_error.h"

namespace tessera::parser {
namespace {

bool IsWordStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool IsWordPart(char c) { return IsWordStart(c) || absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '$'; }
bool IsDigit(char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Walks the text once, keeping line and column in step with the byte offset.
class Lexer {
 public:
  explicit Lexer(std::string_view sql) : sql_(sql) {}

  absl::StatusOr<std::vector<Token>> Run() {
    if (sql_.size() > static_cast<size_t>(INT_MAX)) {
      return absl::InvalidArgumentError("syntax error: the statement text is larger than 2 GiB");
    }
    std::vector<Token> tokens;
    SourcePosition end_of_last_token;
    while (true) {
      absl::Status skipped = SkipSpaceAndComments();
      if (!skipped.ok()) return skipped;
      if (AtEnd()) break;
      absl::StatusOr<Token> token = NextToken();
      if (!token.ok()) return token.status();
      tokens.push_back(*std::move(token));
      end_of_last_token = Position();
    }
    Token end;
    end.kind = TokenKind::kEndOfInput;
    end.position = end_of_last_token;
    end.end_offset = end_of_last_token.offset;
    tokens.push_back(std::move(end));
    return tokens;
  }

 private:
  bool AtEnd() const { return offset_ >= sql_.size(); }
  char Peek(size_t ahead = 0) const { return offset_ + ahead < sql_.size() ? sql_[offset_ + ahead] : '\0'; }
  SourcePosition Position() const { return SourcePosition{line_, column_, static_cast<int>(offset_)}; }

  void Advance() {
    const char c = sql_[offset_++];
    if (c == '\n') {
      line_++;
      column_ = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      column_++;
    }
  }

  absl::Status SkipSpaceAndComments() {
    while (!AtEnd()) {
      if (IsSpace(Peek())) {
        Advance();
      } else if (Peek() == '-' && Peek(1) == '-') {
        while (!AtEnd() && Peek() != '\n') Advance();
      } else if (Peek() == '/' && Peek(1) == '*') {
        const SourcePosition start = Position();
        Advance();
        Advance();
        int open_comments = 1;  // block comments nest, as in PostgreSQL and the SQL standard
        while (open_comments > 0) {
          if (AtEnd()) return SyntaxError(sql_, start, "unterminated block comment");
          if (Peek() == '/' && Peek(1) == '*') {
            Advance();
            open_comments++;
          } else if (Peek() == '*' && Peek(1) == '/') {
            Advance();
            open_comments--;
          }
          Advance();
        }
      } else {
        break;
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Token> NextToken() {
    Token token;
    token.position = Position();
    const char c = Peek();
    absl::Status status;
    if (IsWordStart(c)) {
      LexWord(token);
    } else if (IsDigit(c) || (c == '.' && IsDigit(Peek(1)))) {
      status = LexNumber(token);
    } else if (c == '\'') {
      status = LexQuoted(token, '\'');
    } else if (c == '"') {
      status = LexQuoted(token, '"');
    } else {
      status = LexOperator(token);
    }
    if (!status.ok()) return status;
    token.end_offset = static_cast<int>(offset_);
    return token;
  }

  void LexWord(Token& token) {
    const size_t start = offset_;
    while (!AtEnd() && IsWordPart(Peek())) Advance();
    const std::string word(sql_.substr(start, offset_ - start));
    token.upper = absl::AsciiStrToUpper(word);
    if (IsReservedKeyword(token.upper)) {
      token.kind = TokenKind::kKeyword;
      token.text = token.upper;
    } else {
      token.kind = TokenKind::kIdentifier;
      token.text = absl::AsciiStrToLower(word);
    }
  }

  absl::Status LexNumber(Token& token) {
    const size_t start = offset_;
    token.kind = TokenKind::kInteger;
    while (IsDigit(Peek())) Advance();
    if (Peek() == '.') {
      token.kind = TokenKind::kDecimal;
      Advance();
      while (IsDigit(Peek())) Advance();
    }
    if ((Peek() == 'e' || Peek() == 'E') &&
        (IsDigit(Peek(1)) || ((Peek(1) == '+' || Peek(1) == '-') && IsDigit(Peek(2))))) {
      token.kind = TokenKind::kDecimal;
      Advance();
      if (Peek() == '+' || Peek() == '-') Advance();
      while (IsDigit(Peek())) Advance();
    }
    if (IsWordPart(Peek())) {
      return SyntaxError(sql_, token.position, "trailing junk after numeric literal");
    }
    token.text = std::string(sql_.substr(start, offset_ - start));
    return absl::OkStatus();
  }

  // Lexes 'string' or "identifier", where a doubled quote stands for one.
  absl::Status LexQuoted(Token& token, char quote) {
    const bool is_string = quote == '\'';
    token.kind = is_string ? TokenKind::kString : TokenKind::kQuotedIdentifier;
    Advance();
    while (true) {
      if (AtEnd()) {
        return SyntaxError(sql_, token.position,
                           is_string ? "unterminated string literal" : "unterminated quoted identifier");
      }
      const char c = Peek();
      Advance();
      if (c == quote) {
        if (Peek() != quote) break;
        Advance();
      }
      token.text.push_back(c);
    }
    if (!is_string && token.text.empty()) {
      return SyntaxError(sql_, token.position, "zero-length quoted identifier");
    }
    return absl::OkStatus();
  }

  absl::Status LexOperator(Token& token) {
    token.kind = TokenKind::kOperator;
    const char c = Peek();
    const char next = Peek(1);
    int length = 0;
    switch (c) {
      case '=':
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
      case '(':
      case ')':
      case ',':
      case '.':
      case ';':
        length = 1;
        break;
      case '<':
        length = (next == '>' || next == '=') ? 2 : 1;
        break;
      case '>':
        length = next == '=' ? 2 : 1;
        break;
      case '!':
        length = next == '=' ? 2 : 0;
        break;
      case '|':
        length = next == '|' ? 2 : 0;
        break;
      case ':':
        length = next == ':' ? 2 : 0;
        break;
      default:
        break;
    }
    if (length == 0) {
      return SyntaxError(sql_, token.position, absl::StrCat("unexpected character ", DescribeCharacter(c)));
    }
    token.text = std::string(sql_.substr(offset_, length));
    if (token.text == "!=") token.text = "<>";
    for (int i = 0; i < length; ++i) Advance();
    return absl::OkStatus();
  }

  static std::string DescribeCharacter(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return absl::StrFormat("0x%02X", byte);
    return absl::StrCat("'", std::string(1, c), "'");
  }

  std::string_view sql_;
  size_t offset_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

absl::StatusOr<std::vector<Token>> Tokenize(std::string_view sql) { return Lexer(sql).Run(); }

}  // namespace tessera::parser
