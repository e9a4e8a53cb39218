#pragma once
// Statement text as PostgreSQL clients send it, before the engine sees it: splitting a simple Query into its
// statements, finding and substituting $n parameters, and the statements a PostgreSQL server answers itself that
// Tessera's SQL does not have (transaction control, PostgreSQL's session parameters, version()).
//
// The lexical scan follows the parser's lexer: 'strings' and "identifiers" with doubled quotes, -- line comments
// and nested /* */ comments. Thread-safe: no state, except PgParameters, which belongs to one connection.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/query_result.h"

namespace tessera::pg {

// One statement of a Query message: its text (without the ';', trimmed) and where it starts in the query.
struct StatementText {
  std::string_view text;
  size_t offset = 0;
};

// The statements of `sql`, split at ';' outside quotes and comments; statements holding only white space and
// comments are dropped.
std::vector<StatementText> SplitStatements(std::string_view sql);

// The highest $n placeholder in `sql` (0 when none); InvalidArgument for $0 or a number above 65535.
absl::StatusOr<int> CountParameters(std::string_view sql);

// `sql` with each $n replaced by literals[n - 1], and where each replacement lies, so that a position in the
// substituted text maps back to the client's text (OriginalOffset).
struct SubstitutedSql {
  struct Replacement {
    size_t original_offset, original_length, offset, length;
  };
  std::string sql;
  std::vector<Replacement> replacements;

  size_t OriginalOffset(size_t offset) const;
};
// Precondition: literals.size() >= CountParameters(sql).
SubstitutedSql SubstituteParameters(std::string_view sql, const std::vector<std::string>& literals);

// The statement's first word, lower-cased, skipping opening parentheses and comments ("" when it starts with
// something else).
std::string FirstWord(std::string_view statement);
// Whether the statement returns rows (SELECT, WITH, VALUES, SHOW, EXPLAIN, DESCRIBE), by its first word.
bool ReturnsRows(std::string_view statement);
// Whether it is a query that may stand in FROM ( ... ) (SELECT, WITH, VALUES).
bool IsQuery(std::string_view statement);

// The settings in a startup packet's "options" parameter, as libpq's PGOPTIONS writes them: "-c name=value" (also
// "-cname=value") and "--name=value", separated by spaces, a backslash escaping the next character.
// InvalidArgument for anything else.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseStartupOptions(std::string_view options);

// PostgreSQL's session parameters of one connection (client_encoding, DateStyle, TimeZone, application_name, ...):
// the values reported at startup and what SET/SHOW/RESET of them do.
class PgParameters {
 public:
  PgParameters();
  // The startup packet's parameters (user, database, options, replication are not session parameters).
  absl::Status ApplyStartup(const std::vector<std::pair<std::string, std::string>>& parameters);
  // The parameters PostgreSQL reports with ParameterStatus at startup and when they change.
  std::vector<std::pair<std::string, std::string>> Reported() const;

  // SET name = value: NotFound when `name` is no PostgreSQL parameter known here (the caller then asks the
  // engine); InvalidArgument for values Tessera cannot honour (a client_encoding other than UTF8, a DateStyle
  // without ISO, standard_conforming_strings off). `*notice` is set when the setting is
  // accepted but has no effect in Tessera; `*reported` when clients must be told of the new value.
  absl::Status Set(const std::string& name, const std::string& value, std::string* notice, bool* reported);
  std::optional<std::string> Get(const std::string& name) const;
  void Reset(const std::string& name);
  void ResetAll();

 private:
  std::map<std::string, std::string> values_;  // lower-case names
  std::map<std::string, std::string> defaults_;
};

// A statement answered at the protocol layer (never by the engine).
struct CompatOutcome {
  QueryResult result;              // rows, or a tag in status_message
  std::string notice;              // a NoticeResponse to send first, when not empty
  bool parameter_changed = false;  // a reported parameter changed: send ParameterStatus
  enum class Transaction { kNone, kBegin, kCommit, kRollback } transaction = Transaction::kNone;
};

// Transaction control, SET/SHOW/RESET of PostgreSQL parameters and `SELECT version()`. nullopt when the statement
// is for the engine (including SET/SHOW of Tessera's own settings); an error for a refused setting.
std::optional<absl::StatusOr<CompatOutcome>> HandleCompatStatement(std::string_view statement,
                                                                   PgParameters& parameters);

// The version string: "PostgreSQL 15.0 (Tessera ...)" (clients parse the leading PostgreSQL version).
extern const char kServerVersion[];
extern const char kVersionString[];

}  // namespace tessera::pg
