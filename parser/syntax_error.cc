#include "parser/syntax_error.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "parser/parser.h"

namespace tessera::parser {
namespace {

constexpr int kMaxShownCodePoints = 100;  // a longer line is shown as a window of this many code points
constexpr int kContextBeforeCaret = 50;   // code points of the window that precede the caret
constexpr size_t kMaxQuotedBytes = 40;

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Byte offsets of the start of each code point of `line`, plus line.size() at the end.
std::vector<size_t> CodePointStarts(std::string_view line) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < line.size(); ++i) {
    if (!IsContinuationByte(line[i])) starts.push_back(i);
  }
  starts.push_back(line.size());
  return starts;
}

}  // namespace

std::string RenderCaretLines(std::string_view sql, const SourcePosition& position) {
  size_t offset = static_cast<size_t>(std::clamp<int>(position.offset, 0, static_cast<int>(sql.size())));
  const size_t previous_newline = offset == 0 ? std::string_view::npos : sql.rfind('\n', offset - 1);
  const size_t line_start = previous_newline == std::string_view::npos ? 0 : previous_newline + 1;
  size_t line_end = sql.find('\n', offset);
  if (line_end == std::string_view::npos) line_end = sql.size();
  if (line_end > line_start && sql[line_end - 1] == '\r') line_end--;
  offset = std::min(offset, line_end);
  std::string_view line = sql.substr(line_start, line_end - line_start);

  std::vector<size_t> starts = CodePointStarts(line);
  const int code_points = static_cast<int>(starts.size()) - 1;
  // Index of the code point under the caret.
  const int caret =
      static_cast<int>(std::lower_bound(starts.begin(), starts.end(), offset - line_start) - starts.begin());
  int first = 0;
  int last = code_points;
  if (code_points > kMaxShownCodePoints) {
    first = std::max(0, caret - kContextBeforeCaret);
    last = std::min(code_points, first + kMaxShownCodePoints);
    first = std::max(0, std::min(first, last - kMaxShownCodePoints));
  }
  std::string shown(line.substr(starts[first], starts[last] - starts[first]));
  std::string prefix = first > 0 ? "..." : "";
  std::string suffix = last < code_points ? "..." : "";

  std::string caret_line(prefix.size(), ' ');
  for (int i = first; i < caret; ++i) caret_line.push_back(line[starts[i]] == '\t' ? '\t' : ' ');
  return absl::StrCat("\n  ", prefix, shown, suffix, "\n  ", caret_line, "^");
}

absl::Status SyntaxError(std::string_view sql, const SourcePosition& position, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("syntax error at line ", position.line, ", column ", position.column,
                                                 ": ", std::string(what), RenderCaretLines(sql, position)));
}

std::string QuoteForMessage(std::string_view text) {
  if (text.size() <= kMaxQuotedBytes) return absl::StrCat("'", std::string(text), "'");
  size_t cut = kMaxQuotedBytes;
  while (cut > 0 && IsContinuationByte(text[cut])) cut--;
  return absl::StrCat("'", std::string(text.substr(0, cut)), "...'");
}

std::string FormatErrorWithCaret(std::string_view sql, const SourcePosition& position, std::string_view message) {
  return absl::StrCat(std::string(message), " at line ", position.line, ", column ", position.column,
                      RenderCaretLines(sql, position));
}

absl::Status WithPositionIfMissing(const absl::Status& status, std::string_view sql, const SourcePosition& position) {
  if (status.ok() || absl::StrContains(status.message(), " at line ")) return status;
  return absl::Status(status.code(), FormatErrorWithCaret(sql, position, std::string(status.message())));
}

}  // namespace tessera::parser
