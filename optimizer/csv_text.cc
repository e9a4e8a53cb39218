#include "optimizer/csv_text.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"

namespace tessera::optimizer {
namespace {

// One field of a line: its text (quotes removed, "" unescaped) and whether it was quoted.
struct Field {
  std::string text;
  bool quoted = false;
};

// A line of the text with its 1-based number.
struct Line {
  std::string_view text;
  int64_t number = 0;
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  int64_t number = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number;
    if (!line.empty()) lines.push_back({line, number});
    begin = end + 1;
  }
  return lines;
}

// Splits `line` at `delimiter`; false with `error` set on a malformed quoted field.
bool SplitFields(std::string_view line, char delimiter, char quote, std::vector<Field>* fields, std::string* error) {
  fields->clear();
  size_t i = 0;
  while (true) {
    Field field;
    if (quote != '\0' && i < line.size() && line[i] == quote) {
      field.quoted = true;
      ++i;
      while (true) {
        if (i >= line.size()) {
          *error = "unterminated quoted field (quoted fields may not span lines)";
          return false;
        }
        if (line[i] == quote) {
          if (i + 1 < line.size() && line[i + 1] == quote) {
            field.text.push_back(quote);
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field.text.push_back(line[i++]);
      }
      if (i < line.size() && line[i] != delimiter) {
        *error = "unexpected character after a closing quote";
        return false;
      }
    } else {
      const size_t end = std::min(line.find(delimiter, i), line.size());
      field.text = std::string(line.substr(i, end - i));
      i = end;
    }
    fields->push_back(std::move(field));
    if (i >= line.size()) return true;
    ++i;  // the delimiter
  }
}

// The delimiter that splits the first lines into the most fields, the same number on each.
char DetectDelimiter(const std::vector<Line>& lines, char quote) {
  constexpr size_t kSampleLines = 20;
  char best = ',';
  size_t best_fields = 1;
  std::vector<Field> fields;
  std::string error;
  for (char candidate : {',', '|', ';', '\t'}) {
    size_t count = 0;
    bool consistent = true;
    for (size_t l = 0; l < lines.size() && l < kSampleLines && consistent; ++l) {
      consistent =
          SplitFields(lines[l].text, candidate, quote, &fields, &error) && (count == 0 || fields.size() == count);
      count = fields.size();
    }
    if (consistent && count > best_fields) {
      best = candidate;
      best_fields = count;
    }
  }
  return best;
}

// Candidate types, most specific first; VARCHAR (always possible) is last.
enum Candidate { kBoolean, kBigInt, kDouble, kDate, kTimestamp, kVarchar, kCandidates };

// Whether `text` is a value of `candidate`, and that value in *value.
bool ParseAs(Candidate candidate, std::string_view text, Value* value) {
  switch (candidate) {
    case kBoolean: {
      const absl::string_view view(text.data(), text.size());
      const bool is_true = absl::EqualsIgnoreCase(view, "true");
      if (!is_true && !absl::EqualsIgnoreCase(view, "false")) return false;
      *value = Value::Boolean(is_true);
      return true;
    }
    case kBigInt: {
      int64_t v;
      if (!ParseInt64(text, &v)) return false;
      *value = Value::BigInt(v);
      return true;
    }
    case kDouble: {
      double v;
      if (!ParseDouble(text, &v)) return false;
      *value = Value::Double(v);
      return true;
    }
    case kDate: {
      int32_t v;
      if (!ParseDate(text, &v)) return false;
      *value = Value::Date(v);
      return true;
    }
    case kTimestamp: {
      int64_t v;
      if (!ParseTimestamp(text, &v)) return false;
      *value = Value::Timestamp(v);
      return true;
    }
    default:
      *value = Value::String(std::string(text));
      return true;
  }
}

bool Parses(Candidate candidate, std::string_view text) {
  Value ignored;
  return candidate == kVarchar || ParseAs(candidate, text, &ignored);
}

Type CandidateType(Candidate candidate) {
  switch (candidate) {
    case kBoolean:
      return Type::Boolean();
    case kBigInt:
      return Type::BigInt();
    case kDouble:
      return Type::Double();
    case kDate:
      return Type::Date();
    case kTimestamp:
      return Type::Timestamp();
    default:
      return Type::Varchar();
  }
}

bool IsNull(const Field& field, const CsvOptions& options) {
  return !field.quoted && field.text == options.null_string;
}

// Per column, the candidates that every value seen so far parses as (bit c for Candidate c).
class TypeDetector {
 public:
  explicit TypeDetector(size_t columns) : possible_(columns, (1u << kCandidates) - 1) {}

  void Add(const std::vector<Field>& fields, const CsvOptions& options) {
    for (size_t c = 0; c < fields.size() && c < possible_.size(); ++c) {
      if (IsNull(fields[c], options)) continue;
      for (int k = 0; k < kVarchar; ++k) {
        if ((possible_[c] & (1u << k)) != 0 && !Parses(static_cast<Candidate>(k), fields[c].text)) {
          possible_[c] &= ~(1u << k);
        }
      }
    }
  }

  Candidate Detected(size_t column) const {
    for (int k = 0; k < kCandidates; ++k) {
      if ((possible_[column] & (1u << k)) != 0) return static_cast<Candidate>(k);
    }
    return kVarchar;
  }

 private:
  std::vector<uint32_t> possible_;
};

Value ToValue(const Field& field, Candidate candidate, const CsvOptions& options) {
  Value value = Value::Null(CandidateType(candidate));
  if (!IsNull(field, options)) ParseAs(candidate, field.text, &value);  // detected over these values: it parses
  return value;
}

std::vector<std::string> ColumnNames(const std::vector<Field>* header, size_t columns) {
  std::vector<std::string> names;
  const size_t digits = std::to_string(columns > 0 ? columns - 1 : 0).size();
  for (size_t c = 0; c < columns; ++c) {
    std::string name = header != nullptr ? (*header)[c].text : "";
    if (name.empty()) {
      const std::string number = std::to_string(c);
      name = absl::StrCat("column", std::string(digits - std::min(digits, number.size()), '0'), number);
    }
    const std::string base = name;
    for (int suffix = 1; std::find(names.begin(), names.end(), name) != names.end(); ++suffix) {
      name = absl::StrCat(base, "_", suffix);
    }
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

absl::StatusOr<CsvTable> ReadCsvText(std::string_view text, const CsvOptions& options, const std::string& source) {
  const std::vector<Line> lines = SplitLines(text);
  if (lines.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": the file is empty (no line to take columns from)"));
  }
  CsvTable table;
  table.delimiter = options.delimiter.has_value() ? *options.delimiter : DetectDelimiter(lines, options.quote);
  std::vector<std::vector<Field>> split(lines.size());
  std::string error;
  for (size_t l = 0; l < lines.size(); ++l) {
    if (!SplitFields(lines[l].text, table.delimiter, options.quote, &split[l], &error)) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": line ", lines[l].number, ": ", error));
    }
    if (split[l].size() != split[0].size()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": line ", lines[l].number, ": expected ", split[0].size(),
                                                     " fields, found ", split[l].size()));
    }
  }
  const size_t columns = split[0].size();
  TypeDetector rest(columns);
  for (size_t l = 1; l < lines.size(); ++l) rest.Add(split[l], options);
  if (options.header.has_value()) {
    table.header = *options.header;
  } else {
    bool all_varchar = true;
    bool first_fails = false;
    for (size_t c = 0; c < columns; ++c) {
      const Candidate type = rest.Detected(c);
      all_varchar &= type == kVarchar;
      first_fails |= !IsNull(split[0][c], options) && !Parses(type, split[0][c].text);
    }
    table.header = first_fails || all_varchar;
  }
  TypeDetector detector = rest;
  if (!table.header) detector.Add(split[0], options);
  table.names = ColumnNames(table.header ? &split[0] : nullptr, columns);
  std::vector<Candidate> types;
  for (size_t c = 0; c < columns; ++c) {
    types.push_back(detector.Detected(c));
    table.types.push_back(CandidateType(types.back()));
  }
  for (size_t l = table.header ? 1 : 0; l < lines.size(); ++l) {
    std::vector<Value> row;
    row.reserve(columns);
    for (size_t c = 0; c < columns; ++c) row.push_back(ToValue(split[l][c], types[c], options));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace tessera::optimizer
