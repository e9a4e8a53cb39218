#include "cli/completion.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace tessera {
namespace {

bool IsWordCharacter(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool StartsWithIgnoringCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (absl::ascii_tolower(static_cast<unsigned char>(text[i])) !=
        absl::ascii_tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

bool IsAllUpper(std::string_view word) {
  return std::none_of(word.begin(), word.end(),
                      [](char c) { return absl::ascii_islower(static_cast<unsigned char>(c)); });
}

}  // namespace

Completion CompleteWord(std::string_view line_before_cursor, const std::vector<std::string>& words) {
  size_t start = line_before_cursor.size();
  while (start > 0 && IsWordCharacter(line_before_cursor[start - 1])) --start;
  const std::string_view typed = line_before_cursor.substr(start);
  Completion completion;
  if (typed.empty()) return completion;
  const bool typed_lower = std::none_of(typed.begin(), typed.end(),
                                        [](char c) { return absl::ascii_isupper(static_cast<unsigned char>(c)); });
  std::vector<std::string> matches;
  for (const std::string& word : words) {
    if (word.size() <= typed.size() || !StartsWithIgnoringCase(word, typed)) continue;
    matches.push_back(typed_lower && IsAllUpper(word) ? absl::AsciiStrToLower(word) : word);
  }
  std::sort(matches.begin(), matches.end());
  matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
  if (matches.empty()) return completion;
  if (matches.size() == 1) {
    completion.insert = matches[0].substr(typed.size()) + " ";
    return completion;
  }
  size_t common = matches[0].size();
  for (const std::string& match : matches) {
    size_t i = 0;
    while (i < common && i < match.size() && match[i] == matches[0][i]) ++i;
    common = i;
  }
  if (common > typed.size()) {
    completion.insert = matches[0].substr(typed.size(), common - typed.size());
  } else {
    completion.candidates = std::move(matches);
  }
  return completion;
}

const std::vector<std::string>& CompletionKeywords() {
  static const std::vector<std::string> keywords = {
      "ALL",      "ANALYZE",  "AND",    "AS",        "ASC",     "AVG",    "BETWEEN", "BIGINT",   "BOOLEAN",   "BY",
      "CASE",     "CAST",     "CHAR",   "COPY",      "COUNT",   "CREATE", "DATE",    "DECIMAL",  "DELIMITER", "DESC",
      "DESCRIBE", "DISTINCT", "DOUBLE", "DROP",      "ELSE",    "END",    "EXISTS",  "EXPLAIN",  "EXTRACT",   "FALSE",
      "FORMAT",   "FROM",     "GROUP",  "HAVING",    "HEADER",  "IF",     "IN",      "INNER",    "INSERT",    "INTEGER",
      "INTERVAL", "INTO",     "IS",     "JOIN",      "LEFT",    "LIKE",   "LIMIT",   "MAX",      "MEMORY",    "MIN",
      "NOT",      "NULL",     "OFFSET", "ON",        "OR",      "ORDER",  "OUTER",   "PRIORITY", "REPLACE",   "SELECT",
      "SET",      "SHOW",     "STATS",  "SUBSTRING", "SUM",     "TABLE",  "TABLES",  "THEN",     "TIMESTAMP", "TO",
      "TRUE",     "UNION",    "USING",  "VALUES",    "VARCHAR", "VIEW",   "WHEN",    "WHERE",    "WITH"};
  return keywords;
}

}  // namespace tessera
