// The typed settings registry: every name `SET name = value` accepts, declared once in settings.cc with its type,
// default, allowed values, help text and scope, and parsed, validated, applied and shown from that declaration.
//
// Scopes: a session setting is kept by the session that SETs it (SessionSettings) and applied to the options of
// its queries (QueryRunOptions); SHOW name / SHOW ALL answer its value, or its default until SET. A server-wide
// setting (scheduler_policy, admission_threshold) changes the Database's Foreman for every session at once; SET
// applies it there, SHOW name reads it back, and SHOW ALL leaves it out.
//
// Adding a setting: one line in AllSettings() (settings.cc) naming its type (OnOff, PositiveInteger, Fraction,
// OneOf, Milliseconds, or a custom parser), the QueryRunOptions field it sets (or, server-wide, how it is applied
// and read back), and its help text; SHOW ALL, SHOW name, the unknown-name hint and the error messages follow.
//
// Threads: the registry is immutable after its first use and may be read from any thread; a SessionSettings
// belongs to its session and is used by one thread at a time, as the Session is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera {

class Database;
struct QueryRunOptions;

// A parsed setting value: on/off, an integer, a fraction or a text (a choice, a list).
using SettingValue = std::variant<bool, int64_t, double, std::string>;

// A value as SET parsed it: the typed value and the text SHOW shows (as written, or normalized where the type
// says so: statement_timeout shows milliseconds).
struct ParsedSetting {
  SettingValue value;
  std::string text;
};

enum class SettingScope { kSession, kServer };

struct SettingDefinition {
  std::string name;
  SettingScope scope = SettingScope::kSession;
  std::string help;
  // The value's kind for people: "on or off", "a positive integer", ... (SHOW settings' type).
  std::string type;
  // Parses and validates a SET value given as text; InvalidArgument with a message naming the setting otherwise.
  std::function<absl::StatusOr<ParsedSetting>(const std::string& text)> parse;
  // Session scope: the default's text (what SHOW answers before SET) and where the value goes in a query's options.
  std::function<std::string(const Database& database)> default_text;
  std::function<void(const SettingValue& value, QueryRunOptions* options)> apply;
  // Server scope: applies the value to the database's Foreman, and reads the current value back.
  std::function<absl::Status(Database& database, const SettingValue& value)> set_on_database;
  std::function<absl::StatusOr<std::string>(Database& database)> show_from_database;
};

// Every setting, sorted by name.
const std::vector<SettingDefinition>& AllSettings();

// The setting named `name` (lower case); InvalidArgument "unknown setting 'x'" with the closest known name and
// the list of names otherwise.
absl::StatusOr<const SettingDefinition*> FindSetting(const std::string& name);

// One session's values of the session settings.
class SessionSettings {
 public:
  // SET name = text: parses and validates it; a session setting is kept, a server-wide one applied to `database`.
  absl::Status Set(Database& database, const std::string& name, const std::string& text);

  // SHOW name ("all": every session setting, by name) as (name, value) rows: the value SET, else the default.
  // NotFound naming the closest known name for an unknown name.
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Show(Database& database,
                                                                        const std::string& name) const;

  // Sets the fields of `options` that the session's settings control: the value SET, else the default.
  void Apply(const Database& database, QueryRunOptions* options) const;

 private:
  std::map<std::string, ParsedSetting> values_;  // by name; session settings SET in this session
};

}  // namespace tessera
