#include "server/pg_statements.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessera::pg {

const char kServerVersion[] = "15.0";
const char kVersionString[] =
    "PostgreSQL 15.0 (Tessera 0.1: an in-memory analytical database speaking the PostgreSQL protocol), 64-bit";

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWordStart(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }
bool IsWordPart(char c) { return IsWordStart(c) || IsDigit(c) || c == '$' || c == '.'; }

// Calls code(i) for every byte of `sql` outside string literals, quoted identifiers and comments (quotes and
// comment delimiters included in what is skipped). `code` returns the index to continue from (normally i + 1).
template <typename F>
void ForEachCodeByte(std::string_view sql, F code) {
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {
      ++i;
      while (i < sql.size()) {
        if (sql[i] == c) {
          if (i + 1 < sql.size() && sql[i + 1] == c) {
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      ++i;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      int depth = 1;
      i += 2;
      while (i < sql.size() && depth > 0) {
        if (sql[i] == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
          ++depth;
          i += 2;
        } else if (sql[i] == '*' && i + 1 < sql.size() && sql[i + 1] == '/') {
          --depth;
          i += 2;
        } else {
          ++i;
        }
      }
    } else {
      i = code(i);
    }
  }
}

// A $n placeholder at `i` (sql[i] == '$'): its number and length, or length 0 when there is none.
size_t PlaceholderAt(std::string_view sql, size_t i, int64_t* number) {
  if (i > 0 && IsWordPart(sql[i - 1])) return 0;  // part of a word such as a$1
  size_t end = i + 1;
  *number = 0;
  while (end < sql.size() && IsDigit(sql[end])) {
    if (*number <= 1'000'000) *number = *number * 10 + (sql[end] - '0');
    ++end;
  }
  return end > i + 1 ? end - i : 0;
}

// Words and literals of a statement for recognizing the few forms answered here: lower-cased words, 'string'
// contents (kind 's'), "identifier" contents ('i'), numbers and other characters ('p').
struct Token {
  char kind;  // 'w' word, 's' string, 'i' quoted identifier, 'n' number, 'p' punctuation
  std::string text;
};

std::vector<Token> Tokenize(std::string_view sql) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (IsSpace(c) || c == ';') {
      ++i;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == '\'' || c == '"') {
      Token token{c == '\'' ? 's' : 'i', ""};
      ++i;
      while (i < sql.size()) {
        if (sql[i] == c) {
          if (i + 1 < sql.size() && sql[i + 1] == c) {
            token.text.push_back(c);
            i += 2;
            continue;
          }
          break;
        }
        token.text.push_back(sql[i++]);
      }
      ++i;
      tokens.push_back(std::move(token));
    } else if (IsWordStart(c)) {
      size_t end = i;
      while (end < sql.size() && IsWordPart(sql[end])) ++end;
      tokens.push_back({'w', absl::AsciiStrToLower(std::string(sql.substr(i, end - i)))});
      i = end;
    } else if (IsDigit(c) || ((c == '-' || c == '+' || c == '.') && i + 1 < sql.size() && IsDigit(sql[i + 1]))) {
      size_t end = i + 1;
      while (end < sql.size() && (IsDigit(sql[end]) || sql[end] == '.')) ++end;
      tokens.push_back({'n', std::string(sql.substr(i, end - i))});
      i = end;
    } else {
      tokens.push_back({'p', std::string(1, c)});
      ++i;
    }
  }
  return tokens;
}

bool IsWord(const std::vector<Token>& tokens, size_t i, std::string_view word) {
  return i < tokens.size() && tokens[i].kind == 'w' && tokens[i].text == word;
}

QueryResult Tag(std::string tag) {
  QueryResult result;
  result.status_message = std::move(tag);
  return result;
}

QueryResult OneValue(const std::string& column, const std::string& value) {
  QueryResult result;
  result.returns_rows = true;
  result.columns = {{column, Type::Varchar()}};
  result.rows = {{Value::String(value)}};
  return result;
}

struct ParameterInfo {
  const char* name;  // as PostgreSQL spells it (SHOW's column, ParameterStatus)
  const char* default_value;
  bool reported;  // sent with ParameterStatus
  bool read_only;
  bool effective;  // honoured (or purely client-side): SET without a notice
};

// PostgreSQL parameters that drivers set or show. Those not effective are accepted with a notice.
constexpr ParameterInfo kParameters[] = {
    {"server_version", kServerVersion, true, true, true},
    {"server_encoding", "UTF8", true, true, true},
    {"client_encoding", "UTF8", true, false, true},
    {"application_name", "", true, false, true},
    {"DateStyle", "ISO, MDY", true, false, true},
    // Tessera's TIMESTAMP has no time zone, so the session's zone changes nothing; any zone is accepted (drivers
    // send the machine's).
    {"TimeZone", "UTC", true, false, false},
    {"IntervalStyle", "postgres", true, false, true},
    {"integer_datetimes", "on", true, true, true},
    {"standard_conforming_strings", "on", true, false, true},
    {"is_superuser", "on", true, true, true},
    {"session_authorization", "tessera", true, true, true},
    {"default_transaction_read_only", "off", true, false, true},
    {"in_hot_standby", "off", true, true, true},
    {"extra_float_digits", "1", false, false, true},
    {"client_min_messages", "notice", false, false, true},
    {"bytea_output", "hex", false, false, true},
    {"max_identifier_length", "63", false, true, true},
    {"transaction_isolation", "read committed", false, true, true},
    {"default_transaction_isolation", "read committed", false, false, false},
    {"search_path", "\"$user\", public", false, false, false},
    {"lock_timeout", "0", false, false, false},
    {"idle_in_transaction_session_timeout", "0", false, false, false},
    {"idle_session_timeout", "0", false, false, false},
    {"synchronous_commit", "on", false, false, false},
    {"work_mem", "4MB", false, false, false},
    {"jit", "off", false, false, false},
    {"lc_messages", "C", false, false, false},
    {"lc_monetary", "C", false, false, false},
    {"lc_numeric", "C", false, false, false},
    {"lc_time", "C", false, false, false},
    {"geqo", "on", false, false, false},
    {"row_security", "on", false, false, false},
};

const ParameterInfo* FindParameter(const std::string& lower_name) {
  for (const ParameterInfo& info : kParameters) {
    if (absl::AsciiStrToLower(info.name) == lower_name) return &info;
  }
  return nullptr;
}

std::string Unquoted(const std::string& value) {
  std::string lower = absl::AsciiStrToLower(value);
  lower.erase(std::remove_if(lower.begin(), lower.end(), [](char c) { return c == '-' || c == '_'; }), lower.end());
  return lower;
}

// The value words of SET name TO v1, v2 ... starting at tokens[i].
std::string SetValue(const std::vector<Token>& tokens, size_t i) {
  std::vector<std::string> parts;
  std::string current;
  for (; i < tokens.size(); ++i) {
    if (tokens[i].kind == 'p' && tokens[i].text == ",") {
      parts.push_back(current);
      current.clear();
      continue;
    }
    if (!current.empty()) current += " ";
    current += tokens[i].kind == 'i' ? absl::StrCat("\"", tokens[i].text, "\"") : tokens[i].text;
  }
  parts.push_back(current);
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::vector<StatementText> SplitStatements(std::string_view sql) {
  std::vector<StatementText> statements;
  size_t start = 0;
  bool has_code = false;
  auto emit = [&](size_t end) {
    if (has_code) {
      std::string_view text = sql.substr(start, end - start);
      size_t skip = 0;
      while (skip < text.size() && IsSpace(text[skip])) ++skip;
      text.remove_prefix(skip);
      while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
      statements.push_back({text, start + skip});
    }
    start = end + 1;
    has_code = false;
  };
  ForEachCodeByte(sql, [&](size_t i) {
    if (sql[i] == ';') {
      emit(i);
    } else if (!IsSpace(sql[i])) {
      has_code = true;
    }
    return i + 1;
  });
  // Quoted text counts as content too: a statement that is only a string literal still goes to the engine.
  if (!has_code) {
    std::string_view rest = sql.substr(std::min(start, sql.size()));
    has_code = std::any_of(rest.begin(), rest.end(), [](char c) { return c == '\'' || c == '"'; });
  }
  emit(sql.size());
  return statements;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseStartupOptions(std::string_view options) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < options.size(); ++i) {
    const char c = options[i];
    if (IsSpace(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\' && i + 1 < options.size()) {
      word.push_back(options[++i]);
    } else {
      word.push_back(c);
    }
  }
  if (in_word) words.push_back(std::move(word));
  std::vector<std::pair<std::string, std::string>> settings;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string setting;
    if (words[i] == "-c" && i + 1 < words.size()) {
      setting = words[++i];
    } else if (absl::StartsWith(words[i], "-c") && words[i].size() > 2) {
      setting = words[i].substr(2);
    } else if (absl::StartsWith(words[i], "--") && words[i].size() > 2) {
      setting = words[i].substr(2);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid startup option '", words[i], "' (use -c name=value or --name=value)"));
    }
    const size_t equals = setting.find('=');
    if (equals == std::string::npos || equals == 0) {
      return absl::InvalidArgumentError(absl::StrCat("invalid startup option '", setting, "' (use name=value)"));
    }
    std::string name = setting.substr(0, equals);
    std::replace(name.begin(), name.end(), '-', '_');
    settings.emplace_back(std::move(name), setting.substr(equals + 1));
  }
  return settings;
}

absl::StatusOr<int> CountParameters(std::string_view sql) {
  int64_t highest = 0;
  absl::Status status;
  ForEachCodeByte(sql, [&](size_t i) {
    if (sql[i] != '$') return i + 1;
    int64_t number;
    const size_t length = PlaceholderAt(sql, i, &number);
    if (length == 0) return i + 1;
    if ((number < 1 || number > 65535) && status.ok()) {
      status = absl::InvalidArgumentError(absl::StrCat("parameter $", number, " is out of range (1 .. 65535)"));
    }
    highest = std::max(highest, number);
    return i + length;
  });
  if (!status.ok()) return status;
  return static_cast<int>(highest);
}

SubstitutedSql SubstituteParameters(std::string_view sql, const std::vector<std::string>& literals) {
  SubstitutedSql result;
  size_t copied = 0;
  ForEachCodeByte(sql, [&](size_t i) {
    if (sql[i] != '$') return i + 1;
    int64_t number;
    const size_t length = PlaceholderAt(sql, i, &number);
    if (length == 0) return i + 1;
    if (number < 1 || number > static_cast<int64_t>(literals.size())) return i + length;
    result.sql.append(sql.substr(copied, i - copied));
    const std::string& literal = literals[number - 1];
    result.replacements.push_back({i, length, result.sql.size(), literal.size()});
    result.sql.append(literal);
    copied = i + length;
    return i + length;
  });
  result.sql.append(sql.substr(copied));
  return result;
}

size_t SubstitutedSql::OriginalOffset(size_t offset) const {
  int64_t shift = 0;
  for (const Replacement& r : replacements) {
    if (offset < r.offset) break;
    if (offset < r.offset + r.length) return r.original_offset;  // inside a literal: its placeholder
    shift = static_cast<int64_t>(r.original_offset + r.original_length) - static_cast<int64_t>(r.offset + r.length);
  }
  return static_cast<size_t>(static_cast<int64_t>(offset) + shift);
}

std::string FirstWord(std::string_view statement) {
  std::vector<Token> tokens = Tokenize(statement.substr(0, std::min<size_t>(statement.size(), 256)));
  size_t i = 0;
  while (i < tokens.size() && tokens[i].kind == 'p' && tokens[i].text == "(") ++i;
  return i < tokens.size() && tokens[i].kind == 'w' ? tokens[i].text : std::string();
}

bool IsQuery(std::string_view statement) {
  const std::string word = FirstWord(statement);
  return word == "select" || word == "with" || word == "values";
}

bool ReturnsRows(std::string_view statement) {
  const std::string word = FirstWord(statement);
  return IsQuery(statement) || word == "show" || word == "explain" || word == "describe";
}

PgParameters::PgParameters() {
  for (const ParameterInfo& info : kParameters) {
    defaults_[absl::AsciiStrToLower(info.name)] = info.default_value;
  }
  values_ = defaults_;
}

absl::Status PgParameters::ApplyStartup(const std::vector<std::pair<std::string, std::string>>& parameters) {
  for (const auto& [name, value] : parameters) {
    const std::string lower = absl::AsciiStrToLower(name);
    if (lower == "user") {
      defaults_["session_authorization"] = values_["session_authorization"] = value;
      continue;
    }
    if (lower == "database" || lower == "options" || lower == "replication" || absl::StartsWith(lower, "_pq_.")) {
      continue;
    }
    std::string notice;
    bool reported = false;
    absl::Status set = Set(lower, value, &notice, &reported);
    // Unknown startup parameters are ignored, as a server that does not know an extension's setting would.
    if (!set.ok() && set.code() != absl::StatusCode::kNotFound) return set;
    if (set.ok()) defaults_[lower] = values_[lower];
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> PgParameters::Reported() const {
  std::vector<std::pair<std::string, std::string>> reported;
  for (const ParameterInfo& info : kParameters) {
    if (info.reported) reported.emplace_back(info.name, values_.at(absl::AsciiStrToLower(info.name)));
  }
  return reported;
}

absl::Status PgParameters::Set(const std::string& name, const std::string& value, std::string* notice, bool* reported) {
  const std::string lower = absl::AsciiStrToLower(name);
  const ParameterInfo* info = FindParameter(lower);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("unknown parameter '", name, "'"));
  if (info->read_only) {
    return absl::InvalidArgumentError(absl::StrCat("parameter \"", info->name, "\" cannot be changed"));
  }
  std::string stored = absl::EqualsIgnoreCase(value, "default") ? defaults_.at(lower) : value;
  const std::string normalized = Unquoted(stored);
  if (lower == "client_encoding" && normalized != "utf8" && normalized != "unicode") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value for parameter \"client_encoding\": '", value, "' (Tessera speaks UTF8 only)"));
  }
  if (lower == "client_encoding") stored = "UTF8";
  if (lower == "datestyle" && !absl::StrContains(normalized, "iso")) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value for parameter \"DateStyle\": '", value, "' (dates are ISO only)"));
  }
  if (lower == "standard_conforming_strings" && normalized != "on" && normalized != "true") {
    return absl::InvalidArgumentError(absl::StrCat("invalid value for parameter \"standard_conforming_strings\": '",
                                                   value, "' (on only: backslashes in strings are literal)"));
  }
  if (lower == "intervalstyle" && normalized != "postgres") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value for parameter \"IntervalStyle\": '", value, "' (postgres only)"));
  }
  values_[lower] = stored;
  *reported = info->reported;
  if (!info->effective) {
    *notice = absl::StrCat("Tessera accepts but ignores the setting \"", info->name, "\"");
  }
  return absl::OkStatus();
}

std::optional<std::string> PgParameters::Get(const std::string& name) const {
  auto it = values_.find(absl::AsciiStrToLower(name));
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

void PgParameters::Reset(const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (auto it = defaults_.find(lower); it != defaults_.end()) values_[lower] = it->second;
}

void PgParameters::ResetAll() { values_ = defaults_; }

std::optional<absl::StatusOr<CompatOutcome>> HandleCompatStatement(std::string_view statement,
                                                                   PgParameters& parameters) {
  const std::vector<Token> tokens = Tokenize(statement);
  if (tokens.empty() || tokens[0].kind != 'w') return std::nullopt;
  const std::string& first = tokens[0].text;
  CompatOutcome outcome;
  using Transaction = CompatOutcome::Transaction;

  if (first == "begin" || (first == "start" && IsWord(tokens, 1, "transaction"))) {
    outcome.result = Tag("BEGIN");
    outcome.transaction = Transaction::kBegin;
    return outcome;
  }
  if (first == "commit" || first == "end") {
    outcome.result = Tag("COMMIT");
    outcome.transaction = Transaction::kCommit;
    return outcome;
  }
  if (first == "rollback" || first == "abort") {
    outcome.result = Tag("ROLLBACK");
    outcome.transaction = Transaction::kRollback;
    return outcome;
  }
  if (first == "discard" || (first == "reset" && IsWord(tokens, 1, "all"))) {
    parameters.ResetAll();
    outcome.result = Tag(first == "discard" ? "DISCARD ALL" : "RESET");
    outcome.parameter_changed = true;
    return outcome;
  }
  if (first == "reset" && tokens.size() == 2 && tokens[1].kind == 'w') {
    if (!parameters.Get(tokens[1].text)) return std::nullopt;
    parameters.Reset(tokens[1].text);
    outcome.result = Tag("RESET");
    outcome.parameter_changed = true;
    return outcome;
  }
  if (first == "set") {
    size_t i = 1;
    if (IsWord(tokens, i, "session") || IsWord(tokens, i, "local")) ++i;
    if (IsWord(tokens, i, "transaction") || IsWord(tokens, i, "characteristics")) {
      outcome.result = Tag("SET");
      outcome.notice = "Tessera has no transactions: every statement commits on its own; SET TRANSACTION is ignored";
      return outcome;
    }
    std::string name;
    if (IsWord(tokens, i, "time") && IsWord(tokens, i + 1, "zone")) {
      name = "timezone";
      i += 2;
    } else if (IsWord(tokens, i, "names")) {
      name = "client_encoding";
      i += 1;
    } else if (i < tokens.size() && tokens[i].kind == 'w') {
      name = tokens[i].text;
      ++i;
      if (i < tokens.size() && (IsWord(tokens, i, "to") || (tokens[i].kind == 'p' && tokens[i].text == "="))) ++i;
    } else {
      return std::nullopt;
    }
    bool reported = false;
    absl::Status set = parameters.Set(name, SetValue(tokens, i), &outcome.notice, &reported);
    if (set.code() == absl::StatusCode::kNotFound) return std::nullopt;  // one of Tessera's settings, or unknown
    if (!set.ok()) return absl::StatusOr<CompatOutcome>(set);
    outcome.result = Tag("SET");
    outcome.parameter_changed = reported;
    return outcome;
  }
  if (first == "show" && tokens.size() >= 2 && tokens[1].kind == 'w') {
    if (tokens[1].text == "transaction" && IsWord(tokens, 2, "isolation")) {
      outcome.result = OneValue("transaction_isolation", "read committed");
      return outcome;
    }
    if (tokens.size() != 2) return std::nullopt;
    const ParameterInfo* info = FindParameter(tokens[1].text);
    if (info == nullptr) return std::nullopt;
    outcome.result = OneValue(info->name, parameters.Get(tokens[1].text).value_or(""));
    outcome.result.status_message = "SHOW";
    return outcome;
  }
  if (first == "select" && tokens.size() >= 2 && tokens[1].kind == 'w') {
    // SELECT f() alone, where f is one of the functions drivers call on connect.
    std::string function = tokens[1].text;
    if (absl::StartsWith(function, "pg_catalog.")) function = function.substr(11);
    const bool call = tokens.size() == 4 && tokens[2].text == "(" && tokens[3].text == ")";
    const bool bare = tokens.size() == 2;
    if ((function == "version" && call)) {
      outcome.result = OneValue("version", kVersionString);
    } else if (function == "current_database" && call) {
      outcome.result = OneValue("current_database", "tessera");
    } else if ((function == "current_schema" && (call || bare))) {
      outcome.result = OneValue("current_schema", "public");
    } else if ((function == "current_user" || function == "session_user" || function == "user") && bare) {
      outcome.result = OneValue(function, parameters.Get("session_authorization").value_or("tessera"));
    } else {
      return std::nullopt;
    }
    return outcome;
  }
  return std::nullopt;
}

}  // namespace tessera::pg
