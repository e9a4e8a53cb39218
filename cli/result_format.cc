#include "cli/result_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

constexpr char kEllipsis[] = "…";
constexpr char kDimOn[] = "\x1b[2m";
constexpr char kStyleOff[] = "\x1b[0m";
// Text columns are not cut narrower than this (numbers are never cut: a cut number would mislead).
constexpr size_t kNarrowestTextColumn = 8;
// When middle columns are left out, the columns shown are picked as if this wide (or narrower if they are).
constexpr size_t kElidedTableColumnWidth = 16;
// Separators: " " before the first column, " | " between columns, " " (in the rule: "-") after the last.
constexpr size_t kSeparatorWidth = 3;
constexpr size_t kBorderWidth = 2;

// `text` cut to `width` code points, the last of them "…", when it is wider.
std::string Truncate(const std::string& text, size_t width) {
  if (DisplayWidth(text) <= width) return text;
  if (width == 0) return "";
  size_t keep = width - 1, bytes = 0;
  while (bytes < text.size()) {
    if ((static_cast<unsigned char>(text[bytes]) & 0xC0) != 0x80) {
      if (keep == 0) break;
      --keep;
    }
    ++bytes;
  }
  return text.substr(0, bytes) + kEllipsis;
}

// Control characters would break the table's lines (or drive the terminal): shown as escapes.
std::string EscapeControlCharacters(std::string text) {
  bool clean = std::none_of(text.begin(), text.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (clean) return text;
  std::string out;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) {
      char escape[5];
      std::snprintf(escape, sizeof(escape), "\\x%02x", u);
      out += escape;
    } else {
      out.push_back(c);
    }
  }
  return out;
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

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c == '\t') {
      *out += "\\t";
    } else if (c == '\r') {
      *out += "\\r";
    } else if (u < 0x20) {
      char escape[7];
      std::snprintf(escape, sizeof(escape), "\\u%04x", u);
      *out += escape;
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

void AppendJsonValue(const Value& value, std::string* out) {
  if (value.is_null()) {
    *out += "null";
    return;
  }
  switch (value.type().id()) {
    case TypeId::kBoolean:
      *out += value.AsBool() ? "true" : "false";
      return;
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kDecimal:
      *out += value.ToString();
      return;
    case TypeId::kDouble:
      *out += std::isfinite(value.AsDouble()) ? value.ToString() : "null";
      return;
    default:
      AppendJsonString(value.ToString(), out);
      return;
  }
}

std::string FormatJson(const QueryResult& result) {
  std::string out = "[";
  for (size_t r = 0; r < result.rows.size(); ++r) {
    out += r == 0 ? "{" : ",\n{";
    for (size_t c = 0; c < result.columns.size(); ++c) {
      if (c > 0) out.push_back(',');
      AppendJsonString(result.columns[c].name, &out);
      out.push_back(':');
      AppendJsonValue(result.rows[r][c], &out);
    }
    out.push_back('}');
  }
  out += "]\n";
  return out;
}

std::string FormatDelimited(const QueryResult& result, OutputFormat format) {
  std::string out;
  const bool csv = format == OutputFormat::kCsv;
  const char delimiter = csv ? ',' : '\t';
  for (size_t c = 0; c < result.columns.size(); ++c) {
    if (c > 0) out.push_back(delimiter);
    out += csv ? CsvField(result.columns[c].name, delimiter) : result.columns[c].name;
  }
  out.push_back('\n');
  for (const auto& row : result.rows) {
    for (size_t c = 0; c < result.columns.size(); ++c) {
      if (c > 0) out.push_back(delimiter);
      if (row[c].is_null()) continue;
      std::string text = row[c].ToString();
      out += csv ? CsvField(text, delimiter) : text;
    }
    out.push_back('\n');
  }
  return out;
}

size_t TableWidth(const std::vector<size_t>& widths) {
  size_t total = kBorderWidth;
  for (size_t w : widths) total += w;
  return total + kSeparatorWidth * (widths.empty() ? 0 : widths.size() - 1);
}

// Cuts the widest columns (down to their floors) until the widths sum to at most `budget`: every column gets
// min(natural, max(floor, cap)) for the largest cap that fits.
void ShrinkToBudget(std::vector<size_t>& widths, const std::vector<size_t>& floors, size_t budget) {
  auto total_for = [&](size_t cap) {
    size_t total = 0;
    for (size_t c = 0; c < widths.size(); ++c) total += std::min(widths[c], std::max(floors[c], cap));
    return total;
  };
  size_t low = 0, high = *std::max_element(widths.begin(), widths.end());
  if (total_for(high) <= budget) return;
  while (low < high) {  // the largest cap with total_for(cap) <= budget
    size_t mid = (low + high + 1) / 2;
    if (total_for(mid) <= budget) low = mid;
    else high = mid - 1;
  }
  size_t spare = budget - total_for(low);
  for (size_t c = 0; c < widths.size(); ++c) {
    size_t width = std::min(widths[c], std::max(floors[c], low));
    if (spare > 0 && width == low && widths[c] > low) {  // hand out what rounding left over
      ++width;
      --spare;
    }
    widths[c] = width;
  }
}

struct Cell {
  std::string text;
  bool is_null = false;
};

std::string FormatAligned(const QueryResult& result, const FormatOptions& options) {
  const size_t columns = result.columns.size();
  const size_t total_rows = result.rows.size();
  // Rows shown: all, or the first and last halves of max_rows.
  std::vector<size_t> shown;
  const bool elide_rows = options.max_rows > 0 && total_rows > options.max_rows;
  if (elide_rows) {
    size_t head = (options.max_rows + 1) / 2, tail = options.max_rows / 2;
    for (size_t r = 0; r < head; ++r) shown.push_back(r);
    for (size_t r = total_rows - tail; r < total_rows; ++r) shown.push_back(r);
  } else {
    for (size_t r = 0; r < total_rows; ++r) shown.push_back(r);
  }

  std::vector<std::string> names(columns), types(columns);
  std::vector<size_t> widths(columns), floors(columns);
  for (size_t c = 0; c < columns; ++c) {
    names[c] = EscapeControlCharacters(result.columns[c].name);
    types[c] = result.columns[c].type.ToString();
    widths[c] = std::max(DisplayWidth(names[c]), DisplayWidth(types[c]));
  }
  std::vector<std::vector<Cell>> cells;
  cells.reserve(shown.size());
  for (size_t r : shown) {
    std::vector<Cell> row(columns);
    for (size_t c = 0; c < columns; ++c) {
      const Value& value = result.rows[r][c];
      row[c].is_null = value.is_null();
      row[c].text = value.is_null() ? "NULL" : EscapeControlCharacters(value.ToString());
      widths[c] = std::max(widths[c], DisplayWidth(row[c].text));
    }
    cells.push_back(std::move(row));
  }

  // Columns shown: all, or (when even narrow columns do not fit) the first and last ones around a "…" column.
  std::vector<size_t> visible;
  for (size_t c = 0; c < columns; ++c) visible.push_back(c);
  size_t elided_at = columns;  // the "…" column stands before visible[elided_at]
  if (options.max_width > 0 && TableWidth(widths) > options.max_width) {
    for (size_t c = 0; c < columns; ++c) {
      floors[c] = result.columns[c].type.IsNumeric() ? widths[c] : std::min(widths[c], kNarrowestTextColumn);
    }
    if (TableWidth(floors) > options.max_width && columns > 1) {
      // Take columns alternately from the left and the right while they fit next to the "…" column.
      std::vector<size_t> left, right;
      size_t used = kBorderWidth + DisplayWidth(kEllipsis);
      size_t next_left = 0, next_right = columns - 1;
      bool from_left = true;
      while (next_left <= next_right && next_right < columns) {
        size_t c = from_left ? next_left : next_right;
        const size_t width = std::min(widths[c], std::max(floors[c], kElidedTableColumnWidth));
        if (used + width + kSeparatorWidth > options.max_width) break;
        used += width + kSeparatorWidth;
        if (from_left) left.push_back(next_left++);
        else right.push_back(next_right--);
        from_left = !from_left;
      }
      if (left.empty()) left.push_back(0);  // one column at least, even if it overflows
      visible = left;
      elided_at = left.size();
      visible.insert(visible.end(), right.rbegin(), right.rend());
    }
    std::vector<size_t> visible_widths, visible_floors;
    for (size_t c : visible) {
      visible_widths.push_back(widths[c]);
      visible_floors.push_back(floors[c]);
    }
    size_t overhead = kBorderWidth + kSeparatorWidth * (visible.size() - 1);
    if (elided_at < columns) overhead += DisplayWidth(kEllipsis) + kSeparatorWidth;
    size_t floor_sum = 0;
    for (size_t f : visible_floors) floor_sum += f;
    size_t budget = options.max_width > overhead ? options.max_width - overhead : 0;
    ShrinkToBudget(visible_widths, visible_floors, std::max(budget, floor_sum));
    for (size_t i = 0; i < visible.size(); ++i) widths[visible[i]] = visible_widths[i];
  }

  std::string out;
  auto append_line = [&](auto text_of, auto is_null_of, auto right_aligned_of, const char* elided_text) {
    for (size_t i = 0; i < visible.size(); ++i) {
      if (i == elided_at) {
        out += i == 0 ? " " : " | ";
        out += elided_text;
      }
      const size_t c = visible[i];
      out += (i == 0 && elided_at != 0) ? " " : " | ";
      std::string text = Truncate(text_of(c), widths[c]);
      std::string spaces(widths[c] - DisplayWidth(text), ' ');
      if (right_aligned_of(c)) out += spaces;
      const bool dim = is_null_of(c) && options.terminal_styles;
      if (dim) out += kDimOn;
      out += text;
      if (dim) out += kStyleOff;
      if (!right_aligned_of(c)) out += spaces;
    }
    if (elided_at == visible.size() && elided_at < columns) absl::StrAppend(&out, " | ", elided_text);
    out += "\n";
  };
  auto never = [](size_t) { return false; };
  append_line([&](size_t c) { return names[c]; }, never, never, kEllipsis);
  append_line([&](size_t c) { return types[c]; }, never, never, " ");
  for (size_t i = 0; i < visible.size(); ++i) {
    if (i == elided_at) out += "-+--";
    out += (i == 0 && elided_at != 0) ? "-" : "-+-";
    out += std::string(widths[visible[i]], '-');
  }
  if (elided_at == visible.size() && elided_at < columns) out += "-+--";
  out += "-\n";
  auto numeric = [&](size_t c) { return result.columns[c].type.IsNumeric(); };
  const size_t head_rows = elide_rows ? (options.max_rows + 1) / 2 : shown.size();
  for (size_t i = 0; i < cells.size(); ++i) {
    if (elide_rows && i == head_rows) {
      append_line([](size_t) { return std::string(kEllipsis); }, never, numeric, kEllipsis);
    }
    const std::vector<Cell>& row = cells[i];
    append_line([&](size_t c) { return row[c].text; }, [&](size_t c) { return row[c].is_null; }, numeric, kEllipsis);
  }
  absl::StrAppend(&out, "(", total_rows, total_rows == 1 ? " row" : " rows");
  if (elide_rows) absl::StrAppend(&out, ", ", shown.size(), " shown");
  if (elided_at < columns) absl::StrAppend(&out, ", ", columns - visible.size(), " columns not shown");
  out += ")\n";
  return out;
}

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

std::string FormatResult(const QueryResult& result, const FormatOptions& options) {
  if (!result.returns_rows) {
    if (options.format == OutputFormat::kJson || result.status_message.empty()) return "";
    return result.status_message + "\n";
  }
  switch (options.format) {
    case OutputFormat::kCsv:
    case OutputFormat::kTsv:
      return FormatDelimited(result, options.format);
    case OutputFormat::kJson:
      return FormatJson(result);
    case OutputFormat::kAligned:
      break;
  }
  return FormatAligned(result, options);
}

}  // namespace tessera
