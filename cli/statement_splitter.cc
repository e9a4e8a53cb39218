#include "cli/statement_splitter.h"

#include <cctype>

namespace tessera {
namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::vector<std::string> StatementSplitter::Feed(std::string_view text) {
  pending_.append(text);
  std::vector<std::string> completed;
  Scan(/*at_end=*/false, &completed);
  return completed;
}

std::string StatementSplitter::Finish() {
  std::vector<std::string> completed;  // stays empty: Feed already emitted every ';'
  Scan(/*at_end=*/true, &completed);
  std::string rest;
  if (has_content_) {
    size_t start = 0;
    while (start < pending_.size() && IsSpace(pending_[start])) ++start;
    rest = pending_.substr(start);
  }
  Reset();
  return rest;
}

void StatementSplitter::Reset() {
  pending_.clear();
  scanned_ = 0;
  state_ = State::kCode;
  comment_depth_ = 0;
  has_content_ = false;
}

bool StatementSplitter::HasPendingText() const {
  for (char c : pending_) {
    if (!IsSpace(c)) return true;
  }
  return false;
}

void StatementSplitter::EmitStatement(size_t end, std::vector<std::string>* completed) {
  if (has_content_) {
    size_t start = 0;
    while (start < end && IsSpace(pending_[start])) ++start;
    completed->push_back(pending_.substr(start, end - start));
  }
  pending_.erase(0, end);
  scanned_ = 0;
  has_content_ = false;
}

void StatementSplitter::Scan(bool at_end, std::vector<std::string>* completed) {
  size_t i = scanned_;
  while (i < pending_.size()) {
    const char c = pending_[i];
    const bool has_next = i + 1 < pending_.size();
    const char next = has_next ? pending_[i + 1] : '\0';
    // Two-character tokens ("--", "/*", "*/") need the next character; wait for it unless the input ended.
    const bool may_start_pair = c == '-' || c == '/' || c == '*';
    if (may_start_pair && !has_next && !at_end) break;
    switch (state_) {
      case State::kLineComment:
        if (c == '\n') state_ = State::kCode;
        ++i;
        break;
      case State::kBlockComment:
        if (c == '/' && next == '*') {
          ++comment_depth_;
          i += 2;
        } else if (c == '*' && next == '/') {
          if (--comment_depth_ == 0) state_ = State::kCode;
          i += 2;
        } else {
          ++i;
        }
        break;
      case State::kString:
        // A doubled quote leaves and re-enters the literal, which reads the same.
        if (c == '\'') state_ = State::kCode;
        ++i;
        break;
      case State::kQuotedIdentifier:
        if (c == '"') state_ = State::kCode;
        ++i;
        break;
      case State::kCode:
        if (c == '-' && next == '-') {
          state_ = State::kLineComment;
          i += 2;
        } else if (c == '/' && next == '*') {
          state_ = State::kBlockComment;
          comment_depth_ = 1;
          i += 2;
        } else if (c == ';') {
          EmitStatement(i + 1, completed);
          i = 0;
        } else {
          if (c == '\'') state_ = State::kString;
          if (c == '"') state_ = State::kQuotedIdentifier;
          if (!IsSpace(c)) has_content_ = true;
          ++i;
        }
        break;
    }
  }
  scanned_ = i;
}

}  // namespace tessera
