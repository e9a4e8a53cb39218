#include "tests/sqllogictest/result_comparison.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tessera::sqllogictest {
namespace {

constexpr double kRelativeTolerance = 1e-9;
constexpr double kMoneyTolerance = 0.01;

// The whole text must be a number; from_chars accepts "inf"/"nan" but not a leading '+'.
bool ParseReal(std::string_view text, double* value) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  std::from_chars_result result = std::from_chars(text.data(), text.data() + text.size(), *value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

// "[+-]digits.dd" exactly: the shape of a value rounded to cents.
bool HasExactlyTwoFractionDigits(std::string_view text) {
  size_t point = text.find('.');
  if (point == std::string_view::npos || text.size() - point - 1 != 2) return false;
  std::string_view fraction = text.substr(point + 1);
  return std::all_of(fraction.begin(), fraction.end(), [](char c) { return c >= '0' && c <= '9'; });
}

RenderedRows Flatten(const RenderedRows& rows) {
  RenderedRows values;
  for (const std::vector<std::string>& row : rows) {
    for (const std::string& value : row) values.push_back({value});
  }
  return values;
}

void AppendRows(const char* title, const RenderedRows& rows, std::string* out) {
  absl::StrAppend(out, "\n  ", title, " (", rows.size(), rows.size() == 1 ? " row" : " rows", "):");
  size_t printed = std::min(rows.size(), kMaxPrintedRows);
  for (size_t i = 0; i < printed; ++i) absl::StrAppend(out, "\n    ", absl::StrJoin(rows[i], "\t"));
  if (rows.size() > printed) absl::StrAppend(out, "\n    ... ", rows.size() - printed, " more");
}

// `expected` may be null when the expectation itself could not be read.
ComparisonOutcome Mismatch(std::string what, const RenderedRows* expected, const RenderedRows& actual) {
  ComparisonOutcome outcome;
  outcome.matched = false;
  outcome.explanation = std::move(what);
  if (expected != nullptr) AppendRows("expected", *expected, &outcome.explanation);
  AppendRows("actual", actual, &outcome.explanation);
  return outcome;
}

constexpr absl::string_view kRegexPrefix = "<REGEX>:";
constexpr absl::string_view kNotRegexPrefix = "<!REGEX>:";

bool IsPatternLine(const std::string& line) {
  return absl::StartsWith(line, kRegexPrefix) || absl::StartsWith(line, kNotRegexPrefix);
}

// Every expected line is a pattern: each must match (<REGEX>:) or not match (<!REGEX>:) the whole result text.
ComparisonOutcome ComparePatterns(const std::vector<std::string>& expected_lines, const RenderedResult& actual) {
  const std::string text = absl::StrJoin(RowsToLines(actual.rows), "\n");
  for (const std::string& line : expected_lines) {
    if (!IsPatternLine(line)) {
      return Mismatch(absl::StrCat("expected lines mix <REGEX>: patterns with values: '", line, "'"), nullptr,
                      actual.rows);
    }
    const bool negated = absl::StartsWith(line, kNotRegexPrefix);
    const std::string pattern = line.substr(negated ? kNotRegexPrefix.size() : kRegexPrefix.size());
    bool found = false;
    try {
      found = std::regex_search(text, std::regex(pattern, std::regex::ECMAScript));
    } catch (const std::regex_error& error) {
      return Mismatch(absl::StrCat("regex '", pattern, "' failed: ", error.what()), nullptr, actual.rows);
    }
    if (found == negated) {
      return Mismatch(absl::StrCat("the result ", negated ? "matches" : "does not match", " regex '", pattern, "'"),
                      nullptr, actual.rows);
    }
  }
  return ComparisonOutcome();
}

}  // namespace

absl::StatusOr<RenderedRows> SplitExpectedRows(const std::vector<std::string>& expected_lines, size_t column_count) {
  RenderedRows rows;
  if (expected_lines.empty()) return rows;
  if (column_count == 0) return absl::InvalidArgumentError("expected values given for a result without columns");
  bool has_tabs = std::any_of(expected_lines.begin(), expected_lines.end(),
                              [](const std::string& line) { return absl::StrContains(line, '\t'); });
  if (has_tabs || column_count == 1) {
    for (size_t i = 0; i < expected_lines.size(); ++i) {
      std::vector<std::string> row = absl::StrSplit(expected_lines[i], '\t');
      if (row.size() != column_count) {
        return absl::InvalidArgumentError(absl::StrCat("expected-results line ", i + 1, " has ", row.size(),
                                                       " tab-separated value(s) but the query has ", column_count,
                                                       " column(s): '", expected_lines[i], "'"));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }
  // One value per line.
  if (expected_lines.size() % column_count != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the query has ", column_count, " columns but its ", expected_lines.size(),
                     " expected line(s) contain no tab; separate values with tabs (spaces do not separate), or put "
                     "exactly one value per line"));
  }
  for (size_t i = 0; i < expected_lines.size(); i += column_count) {
    rows.emplace_back(expected_lines.begin() + i, expected_lines.begin() + i + column_count);
  }
  return rows;
}

ComparisonOutcome CompareQueryResult(std::string_view column_types, SortMode sort_mode,
                                     const std::vector<std::string>& expected_lines, const RenderedResult& actual) {
  if (!expected_lines.empty() && IsPatternLine(expected_lines[0])) return ComparePatterns(expected_lines, actual);
  RenderedRows actual_rows = actual.rows;
  if (actual.column_names.size() != column_types.size()) {
    return Mismatch(absl::StrCat("the query declares ", column_types.size(), " column(s) ('", std::string(column_types),
                                 "') but the result has ", actual.column_names.size(), ": [",
                                 absl::StrJoin(actual.column_names, ", "), "]"),
                    nullptr, actual_rows);
  }
  absl::StatusOr<RenderedRows> split = SplitExpectedRows(expected_lines, column_types.size());
  if (!split.ok()) return Mismatch(std::string(split.status().message()), nullptr, actual_rows);
  RenderedRows expected_rows = *std::move(split);

  std::string value_types(column_types);
  if (sort_mode == SortMode::kValueSort) {
    expected_rows = Flatten(expected_rows);
    actual_rows = Flatten(actual_rows);
    bool all_real = std::all_of(column_types.begin(), column_types.end(), [](char t) { return t == 'R'; });
    value_types = all_real ? "R" : "T";
  }
  if (sort_mode != SortMode::kNoSort) {
    std::sort(expected_rows.begin(), expected_rows.end());
    std::sort(actual_rows.begin(), actual_rows.end());
  }
  if (expected_rows.size() != actual_rows.size()) {
    const char* unit = sort_mode == SortMode::kValueSort ? " values" : " rows";
    return Mismatch(absl::StrCat("expected ", expected_rows.size(), unit, " but got ", actual_rows.size()),
                    &expected_rows, actual_rows);
  }
  for (size_t row = 0; row < actual_rows.size(); ++row) {
    for (size_t column = 0; column < value_types.size(); ++column) {
      const std::string& expected = expected_rows[row][column];
      const std::string& got = actual_rows[row][column];
      bool equal = value_types[column] == 'R' ? RealValuesMatch(expected, got) : expected == got;
      if (!equal) {
        const char* position = sort_mode == SortMode::kValueSort ? "sorted value " : "row ";
        return Mismatch(
            absl::StrCat(position, row + 1, ", column ", column + 1, " ('", std::string(1, value_types[column]),
                         "'): expected '", expected, "' but got '", got, "'"),
            &expected_rows, actual_rows);
      }
    }
  }
  return ComparisonOutcome();
}

bool RealValuesMatch(std::string_view expected, std::string_view actual) {
  if (expected == actual) return true;
  double expected_value = 0;
  double actual_value = 0;
  if (!ParseReal(expected, &expected_value) || !ParseReal(actual, &actual_value)) return false;
  if (std::isnan(expected_value) || std::isnan(actual_value)) {
    return std::isnan(expected_value) && std::isnan(actual_value);
  }
  if (std::isinf(expected_value) || std::isinf(actual_value)) return expected_value == actual_value;
  double slack = kRelativeTolerance * std::max(1.0, std::fabs(expected_value));
  double difference = std::fabs(actual_value - expected_value);
  if (difference <= slack) return true;
  // The slack also absorbs binary rounding of the two decimal texts (1.24 - 1.23 > 0.01 in doubles).
  return HasExactlyTwoFractionDigits(expected) && difference <= kMoneyTolerance + slack;
}

ComparisonOutcome CheckErrorMessage(std::string_view message, const std::string& regex, const std::string& substring) {
  ComparisonOutcome outcome;
  if (!substring.empty() && message.find(substring) == std::string_view::npos) {
    outcome.matched = false;
    outcome.explanation =
        absl::StrCat("error message does not contain '", substring, "'\n  actual error: ", std::string(message));
    return outcome;
  }
  if (regex.empty()) return outcome;
  // std::regex reports failures only by throwing (error_complexity on pathological input); contain them.
  bool found = false;
  try {
    found = std::regex_search(message.begin(), message.end(), std::regex(regex, std::regex::ECMAScript));
  } catch (const std::regex_error& error) {
    outcome.matched = false;
    outcome.explanation = absl::StrCat("regex '", regex, "' failed: ", error.what());
    return outcome;
  }
  if (!found) {
    outcome.matched = false;
    outcome.explanation =
        absl::StrCat("error message does not match regex '", regex, "'\n  actual error: ", std::string(message));
  }
  return outcome;
}

std::vector<std::string> RowsToLines(const RenderedRows& rows) {
  std::vector<std::string> lines;
  lines.reserve(rows.size());
  for (const std::vector<std::string>& row : rows) lines.push_back(absl::StrJoin(row, "\t"));
  return lines;
}

}  // namespace tessera::sqllogictest
