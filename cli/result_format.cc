#include "cli/result_format.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

size_t DisplayWidth(const std::string& s) {
  size_t width = 0;
  for (unsigned char c : s) width += (c & 0xC0) != 0x80;
  return width;
}

std::string CsvField(const std::string& text, char delimiter) {
  if (text.find_first_of(std::string{delimiter, '"', '\n', '\r'}) == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

}  // namespace

std::string FormatResult(const QueryResult& result, OutputFormat format) {
  if (!result.returns_rows) return result.status_message.empty() ? "" : result.status_message + "\n";
  std::string out;
  const size_t columns = result.columns.size();
  if (format != OutputFormat::kAligned) {
    const char delimiter = format == OutputFormat::kCsv ? ',' : '\t';
    for (size_t c = 0; c < columns; ++c) {
      if (c > 0) out.push_back(delimiter);
      out += format == OutputFormat::kCsv ? CsvField(result.columns[c].name, delimiter) : result.columns[c].name;
    }
    out.push_back('\n');
    for (const auto& row : result.rows) {
      for (size_t c = 0; c < columns; ++c) {
        if (c > 0) out.push_back(delimiter);
        if (row[c].is_null()) continue;
        std::string text = row[c].ToString();
        out += format == OutputFormat::kCsv ? CsvField(text, delimiter) : text;
      }
      out.push_back('\n');
    }
    return out;
  }
  std::vector<std::string> types(columns);
  std::vector<size_t> widths(columns);
  for (size_t c = 0; c < columns; ++c) {
    types[c] = result.columns[c].type.ToString();
    widths[c] = std::max(DisplayWidth(result.columns[c].name), DisplayWidth(types[c]));
  }
  std::vector<std::vector<std::string>> cells;
  cells.reserve(result.rows.size());
  for (const auto& row : result.rows) {
    std::vector<std::string> texts(columns);
    for (size_t c = 0; c < columns; ++c) {
      texts[c] = row[c].is_null() ? "NULL" : row[c].ToString();
      widths[c] = std::max(widths[c], DisplayWidth(texts[c]));
    }
    cells.push_back(std::move(texts));
  }
  auto pad = [&](const std::string& text, size_t width, bool right) {
    std::string spaces(width - DisplayWidth(text), ' ');
    return right ? spaces + text : text + spaces;
  };
  auto line = [&](const std::vector<std::string>& texts, bool numbers_right) {
    for (size_t c = 0; c < columns; ++c) {
      out += c == 0 ? " " : " | ";
      out += pad(texts[c], widths[c], numbers_right && result.columns[c].type.IsNumeric());
    }
    out += "\n";
  };
  std::vector<std::string> names;
  for (const auto& column : result.columns) names.push_back(column.name);
  line(names, false);
  line(types, false);
  for (size_t c = 0; c < columns; ++c) out += (c == 0 ? "-" : "-+-") + std::string(widths[c], '-');
  out += "-\n";
  for (const auto& texts : cells) line(texts, true);
  out += absl::StrCat("(", result.rows.size(), result.rows.size() == 1 ? " row)\n" : " rows)\n");
  return out;
}

}  // namespace tessera
