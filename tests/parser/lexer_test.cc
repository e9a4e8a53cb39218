#include "parser/lexer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::parser {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<Token> TokenizeOk(std::string_view sql) {
  absl::StatusOr<std::vector<Token>> tokens = Tokenize(sql);
  EXPECT_TRUE(tokens.ok()) << tokens.status().message();
  return tokens.ok() ? *std::move(tokens) : std::vector<Token>{};
}

// "kind:text" for every token but the final end-of-input token.
std::vector<std::string> Describe(std::string_view sql) {
  std::vector<std::string> described;
  for (const Token& token : TokenizeOk(sql)) {
    std::string kind;
    switch (token.kind) {
      case TokenKind::kKeyword:
        kind = "kw";
        break;
      case TokenKind::kIdentifier:
        kind = "id";
        break;
      case TokenKind::kQuotedIdentifier:
        kind = "qid";
        break;
      case TokenKind::kInteger:
        kind = "int";
        break;
      case TokenKind::kDecimal:
        kind = "dec";
        break;
      case TokenKind::kString:
        kind = "str";
        break;
      case TokenKind::kOperator:
        kind = "op";
        break;
      case TokenKind::kEndOfInput:
        continue;
    }
    described.push_back(kind + ":" + token.text);
  }
  return described;
}

std::string TokenizeError(std::string_view sql) {
  absl::StatusOr<std::vector<Token>> tokens = Tokenize(sql);
  EXPECT_FALSE(tokens.ok());
  return tokens.ok() ? "" : std::string(tokens.status().message());
}

TEST(LexerTest, EmptyInputHasOnlyEndOfInput) {
  std::vector<Token> tokens = TokenizeOk("");
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].kind, TokenKind::kEndOfInput);
  EXPECT_EQ(TokenizeOk("  -- only a comment\n /* and another */ ").size(), 1u);
}

TEST(LexerTest, WordsAreKeywordsOrIdentifiersCaseInsensitively) {
  EXPECT_THAT(Describe("SeLeCt Foo, DATE from BAR_1$x"),
              ElementsAre("kw:SELECT", "id:foo", "op:,", "id:date", "kw:FROM", "id:bar_1$x"));
  std::vector<Token> tokens = TokenizeOk("count Date");
  EXPECT_EQ(tokens[0].upper, "COUNT");
  EXPECT_EQ(tokens[1].upper, "DATE");
}

TEST(LexerTest, QuotedIdentifiersKeepCaseAndUnescapeDoubledQuotes) {
  EXPECT_THAT(Describe(R"("MixedCase" "a""b" "select")"), ElementsAre("qid:MixedCase", R"(qid:a"b)", "qid:select"));
}

TEST(LexerTest, NumbersKeepTheirExactText) {
  EXPECT_THAT(Describe("0 42 007 1.5 .5 1. 1e10 2.5E-3 3e+2 0.0001000000 99999999999999999999999"),
              ElementsAre("int:0", "int:42", "int:007", "dec:1.5", "dec:.5", "dec:1.", "dec:1e10", "dec:2.5E-3",
                          "dec:3e+2", "dec:0.0001000000", "int:99999999999999999999999"));
}

TEST(LexerTest, StringsUnescapeDoubledQuotesAndMaySpanLines) {
  EXPECT_THAT(Describe("'it''s' '' 'a\nb' 'x\\y'"), ElementsAre("str:it's", "str:", "str:a\nb", "str:x\\y"));
}

TEST(LexerTest, Operators) {
  EXPECT_THAT(Describe("= <> != < <= > >= + - * / % || :: ( ) , . ;"),
              ElementsAre("op:=", "op:<>", "op:<>", "op:<", "op:<=", "op:>", "op:>=", "op:+", "op:-", "op:*", "op:/",
                          "op:%", "op:||", "op:::", "op:(", "op:)", "op:,", "op:.", "op:;"));
  EXPECT_THAT(Describe("a<=b<>c||d::int"),
              ElementsAre("id:a", "op:<=", "id:b", "op:<>", "id:c", "op:||", "id:d", "op:::", "id:int"));
  EXPECT_THAT(Describe("t.c 1-2"), ElementsAre("id:t", "op:.", "id:c", "int:1", "op:-", "int:2"));
}

TEST(LexerTest, CommentsAreSkippedAndBlockCommentsNest) {
  EXPECT_THAT(Describe("a -- comment ; b\n b /* x /* nested */ still comment */ c"),
              ElementsAre("id:a", "id:b", "id:c"));
  EXPECT_THAT(Describe("a/**/b"), ElementsAre("id:a", "id:b"));
  EXPECT_THAT(Describe("a --"), ElementsAre("id:a"));
}

TEST(LexerTest, PositionsAreLineColumnAndOffset) {
  std::vector<Token> tokens = TokenizeOk("SELECT a,\n  \tbc -- x\n/* y\n */ 'é' d");
  ASSERT_EQ(tokens.size(), 7u);
  EXPECT_EQ(tokens[0].position.line, 1);
  EXPECT_EQ(tokens[0].position.column, 1);
  EXPECT_EQ(tokens[0].position.offset, 0);
  EXPECT_EQ(tokens[0].end_offset, 6);
  EXPECT_EQ(tokens[2].text, ",");
  EXPECT_EQ(tokens[2].position.column, 9);
  EXPECT_EQ(tokens[3].text, "bc");
  EXPECT_EQ(tokens[3].position.line, 2);
  EXPECT_EQ(tokens[3].position.column, 4);
  EXPECT_EQ(tokens[3].position.offset, 13);
  EXPECT_EQ(tokens[4].text, "é");
  EXPECT_EQ(tokens[4].position.line, 4);
  EXPECT_EQ(tokens[4].position.column, 5);
  // Columns count code points: 'é' is two bytes but one column.
  EXPECT_EQ(tokens[5].text, "d");
  EXPECT_EQ(tokens[5].position.column, 9);
  EXPECT_EQ(tokens[5].position.offset, tokens[4].end_offset + 1);
  // End of input sits right after the last token.
  EXPECT_EQ(tokens[6].kind, TokenKind::kEndOfInput);
  EXPECT_EQ(tokens[6].position.column, 10);
}

TEST(LexerTest, NonAsciiLettersArePartOfIdentifiers) {
  EXPECT_THAT(Describe("größe Ñame"), ElementsAre("id:größe", "id:Ñame"));
}

TEST(LexerTest, Errors) {
  EXPECT_EQ(TokenizeError("SELECT 'abc"),
            "syntax error at line 1, column 8: unterminated string literal\n  SELECT 'abc\n         ^");
  EXPECT_EQ(TokenizeError("SELECT \"abc"),
            "syntax error at line 1, column 8: unterminated quoted identifier\n  SELECT \"abc\n         ^");
  EXPECT_EQ(TokenizeError("SELECT 1 /* a /* b */"),
            "syntax error at line 1, column 10: unterminated block comment\n  SELECT 1 /* a /* b */\n"
            "           ^");
  EXPECT_EQ(TokenizeError("SELECT \"\""),
            "syntax error at line 1, column 8: zero-length quoted identifier\n  SELECT \"\"\n         ^");
  EXPECT_EQ(TokenizeError("SELECT 12abc"),
            "syntax error at line 1, column 8: trailing junk after numeric literal\n  SELECT 12abc\n         ^");
  EXPECT_THAT(TokenizeError("SELECT a ? b"), StartsWith("syntax error at line 1, column 10: unexpected character '?'"));
  EXPECT_THAT(TokenizeError("a | b"), HasSubstr("unexpected character '|'"));
  EXPECT_THAT(TokenizeError("a ! b"), HasSubstr("unexpected character '!'"));
  EXPECT_THAT(TokenizeError("a : b"), HasSubstr("unexpected character ':'"));
  EXPECT_THAT(TokenizeError(std::string("a \x01 b", 5)), HasSubstr("unexpected character 0x01"));
  EXPECT_THAT(TokenizeError(std::string("a \0 b", 5)), HasSubstr("unexpected character 0x00"));
}

TEST(LexerTest, ErrorOnLaterLineShowsThatLine) {
  EXPECT_EQ(TokenizeError("SELECT a,\n       'oops\n more"),
            "syntax error at line 2, column 8: unterminated string literal\n         'oops\n         ^");
}

}  // namespace
}  // namespace tessera::parser
