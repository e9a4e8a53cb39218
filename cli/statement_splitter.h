#pragma once
// Splits SQL text into statements for the shell, without parsing it: a statement ends at a ';' outside string
// literals, quoted identifiers and comments, read the way the parser's lexer reads them ('it''s', "a""b",
// nested /* /* */ */ block comments, -- line comments). Text may arrive in pieces (a line at a time); the splitter
// keeps the unfinished statement and its lexical state between pieces.

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

class StatementSplitter {
 public:
  // Where the end of the pending text is, lexically (drives the shell's continuation prompt).
  enum class State { kCode, kString, kQuotedIdentifier, kBlockComment, kLineComment };

  // Appends `text` and returns the statements it completed, in order, each from its first character that is not
  // white space up to and including its ';'. Statements holding nothing but white space and comments are dropped.
  std::vector<std::string> Feed(std::string_view text);
  // Ends the input: returns the pending statement (without a ';') if it holds anything besides white space and
  // comments, else "", and starts afresh.
  std::string Finish();
  // Forgets the pending text (Ctrl-C at a continuation prompt).
  void Reset();

  // Whether the pending text holds anything (a comment counts: the user is in the middle of typing something).
  bool HasPendingText() const;
  State state() const { return state_; }

 private:
  // Scans pending_ from scanned_; `at_end`: no more text follows, so a trailing '-', '/' or '*' is final.
  void Scan(bool at_end, std::vector<std::string>* completed);
  void EmitStatement(size_t end, std::vector<std::string>* completed);

  std::string pending_;
  size_t scanned_ = 0;
  State state_ = State::kCode;
  int comment_depth_ = 0;
  // Whether pending_ up to scanned_ holds a character of a statement (not white space, not a comment, not ';').
  bool has_content_ = false;
};

}  // namespace tessera
