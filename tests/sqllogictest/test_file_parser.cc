#include "tests/sqllogictest/test_file_parser.h"

#include <optional>
#include <regex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace tessera::sqllogictest {
namespace {

constexpr absl::string_view kResultSeparator = "----";

bool IsBlank(absl::string_view line) { return absl::StripAsciiWhitespace(line).empty(); }
bool IsComment(absl::string_view line) { return absl::StartsWith(line, "#"); }

// Splits into lines, accepting "\n" and "\r\n" endings.
std::vector<absl::string_view> SplitLines(absl::string_view content) {
  std::vector<absl::string_view> lines = absl::StrSplit(content, '\n');
  for (absl::string_view& line : lines) {
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
  }
  // A final newline does not start another line.
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// std::regex reports bad patterns only by throwing; catching here keeps the runner exception-free.
bool IsValidRegex(const std::string& pattern) {
  try {
    std::regex compiled(pattern, std::regex::ECMAScript);
    return true;
  } catch (const std::regex_error&) {
    return false;
  }
}

std::optional<SortMode> ParseSortMode(absl::string_view word) {
  if (word == "nosort") return SortMode::kNoSort;
  if (word == "rowsort") return SortMode::kRowSort;
  if (word == "valuesort") return SortMode::kValueSort;
  return std::nullopt;
}

class Parser {
 public:
  Parser(absl::string_view content, absl::string_view file_name) : lines_(SplitLines(content)), file_name_(file_name) {}

  absl::StatusOr<TestFile> Parse() {
    while (next_ < lines_.size()) {
      absl::string_view line = lines_[next_];
      int line_number = static_cast<int>(next_) + 1;
      ++next_;
      if (IsBlank(line)) continue;
      if (IsComment(line)) {
        CaptureHeader(line);
        continue;
      }
      absl::Status status = ParseDirective(line, line_number);
      if (!status.ok()) return status;
    }
    if (pending_condition_line_ != 0) {
      return Error(pending_condition_line_, "skipif/onlyif is not followed by a record");
    }
    return std::move(file_);
  }

 private:
  absl::Status Error(int line_number, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(file_name_, ":", line_number, ": ", message));
  }

  void CaptureHeader(absl::string_view line) {
    absl::string_view body = absl::StripAsciiWhitespace(line.substr(1));
    if (absl::ConsumePrefix(&body, "name:") && file_.name.empty()) {
      file_.name = std::string(absl::StripAsciiWhitespace(body));
    } else if (absl::ConsumePrefix(&body, "group:") && file_.group.empty()) {
      file_.group = std::string(absl::StripAsciiWhitespace(body));
    }
  }

  absl::Status ParseDirective(absl::string_view line, int line_number) {
    std::vector<absl::string_view> words = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    absl::string_view directive = words[0];
    if (directive == "skipif" || directive == "onlyif") {
      if (words.size() != 2) return Error(line_number, absl::StrCat(directive, " needs exactly one engine name"));
      if (pending_condition_line_ != 0) return Error(line_number, "two skipif/onlyif lines for one record");
      bool is_us = absl::EqualsIgnoreCase(words[1], absl::string_view(kEngineName.data(), kEngineName.size()));
      pending_skip_ = directive == "skipif" ? is_us : !is_us;
      pending_condition_line_ = line_number;
      return absl::OkStatus();
    }
    if (directive == "mode") {
      if (words.size() == 2 && words[1] == "skip") {
        mode_skip_ = true;
        return absl::OkStatus();
      }
      if (words.size() == 2 && words[1] == "unskip") {
        mode_skip_ = false;
        return absl::OkStatus();
      }
      return Error(line_number, "only 'mode skip' and 'mode unskip' are supported");
    }

    TestRecord record;
    record.line = line_number;
    absl::Status status;
    if (directive == "statement") {
      status = ParseStatement(line, words, &record);
    } else if (directive == "query") {
      status = ParseQuery(words, &record);
    } else if (directive == "restart" || directive == "halt") {
      if (words.size() != 1) return Error(line_number, absl::StrCat(directive, " takes no arguments"));
      record.type = directive == "restart" ? RecordType::kRestart : RecordType::kHalt;
    } else if (directive == "require") {
      if (words.size() != 2) return Error(line_number, "require needs exactly one feature name");
      record.type = RecordType::kRequire;
      record.argument = std::string(words[1]);
    } else {
      return Error(line_number, absl::StrCat("unknown or unsupported directive '", directive, "'"));
    }
    if (!status.ok()) return status;

    record.skipped = mode_skip_ || pending_skip_;
    pending_skip_ = false;
    pending_condition_line_ = 0;
    file_.records.push_back(std::move(record));
    return absl::OkStatus();
  }

  absl::Status ParseStatement(absl::string_view line, const std::vector<absl::string_view>& words, TestRecord* record) {
    if (words.size() < 2 || (words[1] != "ok" && words[1] != "error")) {
      return Error(record->line, "expected 'statement ok' or 'statement error [<regex>]'");
    }
    if (words[1] == "ok") {
      if (words.size() != 2) return Error(record->line, "'statement ok' takes no arguments");
      record->type = RecordType::kStatementOk;
    } else {
      record->type = RecordType::kStatementError;
      // The regex is the rest of the line after "error", spaces inside it preserved.
      size_t error_at = line.find("error");
      absl::string_view regex = absl::StripAsciiWhitespace(line.substr(error_at + 5));
      record->expected_error_regex = std::string(regex);
      if (!regex.empty() && !IsValidRegex(record->expected_error_regex)) {
        return Error(record->line, absl::StrCat("invalid regex '", regex, "'"));
      }
    }
    bool has_separator = false;
    absl::Status status = ReadSql(record, &has_separator);
    if (!status.ok()) return status;
    if (!has_separator) return absl::OkStatus();
    if (record->type == RecordType::kStatementOk) {
      return Error(record->line, "'statement ok' cannot have a '----' section");
    }
    record->expected_error_substring = absl::StrJoin(ReadBlock(), "\n");
    return absl::OkStatus();
  }

  absl::Status ParseQuery(const std::vector<absl::string_view>& words, TestRecord* record) {
    record->type = RecordType::kQuery;
    if (words.size() < 2 || words.size() > 4) {
      return Error(record->line, "expected 'query <types> [nosort|rowsort|valuesort] [<label>]'");
    }
    record->column_types = std::string(words[1]);
    for (char letter : record->column_types) {
      if (!absl::ascii_isalpha(static_cast<unsigned char>(letter))) {
        return Error(record->line, absl::StrCat("column types must be letters, got '", words[1], "'"));
      }
    }
    if (words.size() >= 3) {
      std::optional<SortMode> mode = ParseSortMode(words[2]);
      if (!mode.has_value()) {
        return Error(record->line, absl::StrCat("unknown sort mode '", words[2], "' (nosort, rowsort, valuesort)"));
      }
      record->sort_mode = *mode;
    }
    if (words.size() == 4) record->label = std::string(words[3]);
    absl::Status status = ReadSql(record, &record->has_expected_results);
    if (!status.ok()) return status;
    if (record->has_expected_results) {
      for (absl::string_view line : ReadBlock()) record->expected_lines.emplace_back(line);
    }
    return absl::OkStatus();
  }

  // Reads SQL lines up to a blank line, the end of the file, or "----" (consumed; sets *has_separator).
  absl::Status ReadSql(TestRecord* record, bool* has_separator) {
    *has_separator = false;
    std::vector<absl::string_view> sql_lines;
    while (next_ < lines_.size() && !IsBlank(lines_[next_])) {
      absl::string_view line = lines_[next_++];
      if (absl::StripTrailingAsciiWhitespace(line) == kResultSeparator) {
        *has_separator = true;
        break;
      }
      if (!IsComment(line)) sql_lines.push_back(line);
    }
    if (sql_lines.empty()) return Error(record->line, "record has no SQL");
    record->sql = absl::StrJoin(sql_lines, "\n");
    return absl::OkStatus();
  }

  // Reads lines verbatim up to a blank line or the end of the file.
  std::vector<absl::string_view> ReadBlock() {
    std::vector<absl::string_view> block;
    while (next_ < lines_.size() && !IsBlank(lines_[next_])) block.push_back(lines_[next_++]);
    return block;
  }

  const std::vector<absl::string_view> lines_;
  const absl::string_view file_name_;
  size_t next_ = 0;
  TestFile file_;
  bool mode_skip_ = false;
  bool pending_skip_ = false;
  int pending_condition_line_ = 0;  // line of an unconsumed skipif/onlyif; 0 = none
};

}  // namespace

absl::StatusOr<TestFile> ParseTestFile(std::string_view content, std::string_view file_name) {
  // Debian's Abseil has its own absl::string_view (not an alias of std::string_view); convert once here.
  return Parser(absl::string_view(content.data(), content.size()),
                absl::string_view(file_name.data(), file_name.size()))
      .Parse();
}

bool IsSlowGroup(std::string_view group) { return group.find("[slow]") != std::string_view::npos; }

}  // namespace tessera::sqllogictest
