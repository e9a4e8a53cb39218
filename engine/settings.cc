#include "engine/settings.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catalog/schema.h"
#include "engine/session.h"
#include "engine/statement_handlers.h"
#include "glog/logging.h"
#include "optimizer/optimizer_options.h"
#include "scheduler/policy.h"

namespace tessera {
namespace {

// A kind of value: how a SET text becomes a value (or the error), and its description.
struct SettingKind {
  std::string type;
  std::function<absl::StatusOr<ParsedSetting>(const std::string& name, const std::string& text)> parse;
};

absl::Status MustBe(const std::string& name, const std::string& expected, const std::string& text) {
  return absl::InvalidArgumentError(absl::StrCat(name, " must be ", expected, ", not '", text, "'"));
}

// on / off (true / false), case-insensitive; shown as written.
SettingKind OnOff() {
  return {"on or off", [](const std::string& name, const std::string& text) -> absl::StatusOr<ParsedSetting> {
            const std::string value = absl::AsciiStrToLower(text);
            if (value == "on" || value == "true") return ParsedSetting{true, text};
            if (value == "off" || value == "false") return ParsedSetting{false, text};
            return MustBe(name, "on or off", text);
          }};
}

// A whole number from 1 to `maximum`.
SettingKind PositiveInteger(int64_t maximum = std::numeric_limits<int64_t>::max()) {
  return {"a positive integer",
          [maximum](const std::string& name, const std::string& text) -> absl::StatusOr<ParsedSetting> {
            int64_t value = 0;
            if (!absl::SimpleAtoi(text, &value) || value < 1 || value > maximum) {
              return MustBe(name, "a positive integer", text);
            }
            return ParsedSetting{value, text};
          }};
}

// A number in [0, 1]; `zero` says what 0 means in the error message ("" for nothing).
SettingKind Fraction(const std::string& zero = "") {
  const std::string expected = absl::StrCat("a fraction in [0, 1]", zero.empty() ? "" : " (0 = " + zero + ")");
  return {expected, [expected](const std::string& name, const std::string& text) -> absl::StatusOr<ParsedSetting> {
            double value = -1;
            if (!absl::SimpleAtod(text, &value) || !(value >= 0 && value <= 1)) return MustBe(name, expected, text);
            return ParsedSetting{value, text};
          }};
}

// One of `values`, case-insensitive; shown as written.
SettingKind OneOf(std::vector<std::string> values) {
  std::string expected = absl::StrJoin(values.begin(), values.end() - 1, ", ") + " or " + values.back();
  return {expected,
          [values, expected](const std::string& name, const std::string& text) -> absl::StatusOr<ParsedSetting> {
            if (std::find(values.begin(), values.end(), absl::AsciiStrToLower(text)) == values.end()) {
              return MustBe(name, expected, text);
            }
            return ParsedSetting{text, text};
          }};
}

// Milliseconds as a whole number (5000), or a string with a unit ('5s', '500ms', '2min'); kept and shown in
// milliseconds.
SettingKind Milliseconds() {
  static constexpr char kExpected[] =
      "a whole number of milliseconds or a string such as '5s', '500ms' or '2min' (0 = none)";
  return {kExpected, [](const std::string& name, const std::string& text) -> absl::StatusOr<ParsedSetting> {
            std::string number = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
            int64_t multiplier = 1;
            for (auto [suffix, factor] : {std::pair<const char*, int64_t>{"ms", 1}, {"min", 60'000}, {"s", 1'000}}) {
              if (absl::EndsWith(number, suffix)) {
                number = std::string(absl::StripAsciiWhitespace(number.substr(0, number.size() - strlen(suffix))));
                multiplier = factor;
                break;
              }
            }
            int64_t value = 0;
            if (!absl::SimpleAtoi(number, &value) || value < 0 ||
                value > std::numeric_limits<int64_t>::max() / multiplier) {
              return MustBe(name, kExpected, text);
            }
            return ParsedSetting{value * multiplier, absl::StrCat(value * multiplier)};
          }};
}

// A text that `check` validates with its own message; shown as written.
SettingKind CheckedText(std::string type, std::function<absl::Status(const std::string& text)> check) {
  return {std::move(type), [check](const std::string&, const std::string& text) -> absl::StatusOr<ParsedSetting> {
            if (absl::Status valid = check(text); !valid.ok()) return valid;
            return ParsedSetting{text, text};
          }};
}

std::string DefaultText(bool value) { return value ? "on" : "off"; }
std::string DefaultText(int64_t value) { return absl::StrCat(value); }
std::string DefaultText(int value) { return absl::StrCat(value); }
std::string DefaultText(double value) { return absl::StrCat(value); }

// What every setting has: its name, scope, help and the parser of its kind.
SettingDefinition Declare(std::string name, SettingScope scope, SettingKind kind, std::string help) {
  SettingDefinition definition;
  definition.name = std::move(name);
  definition.scope = scope;
  definition.help = std::move(help);
  definition.type = kind.type;
  definition.parse = [name = definition.name, parse = std::move(kind.parse)](const std::string& text) {
    return parse(name, text);
  };
  return definition;
}

// A session setting kept in one field of QueryRunOptions; its default is the field's default.
template <typename Field>
SettingDefinition SessionSetting(std::string name, SettingKind kind, Field QueryRunOptions::*field, std::string help) {
  SettingDefinition definition = Declare(std::move(name), SettingScope::kSession, std::move(kind), std::move(help));
  definition.default_text = [field](const Database&) { return DefaultText(QueryRunOptions{}.*field); };
  definition.apply = [field](const SettingValue& value, QueryRunOptions* options) {
    if constexpr (std::is_same_v<Field, bool>) {
      options->*field = std::get<bool>(value);
    } else if constexpr (std::is_integral_v<Field>) {
      options->*field = static_cast<Field>(std::get<int64_t>(value));
    } else {
      options->*field = std::get<double>(value);
    }
  };
  return definition;
}

// A session setting whose default and effect are given as functions.
SettingDefinition SessionSetting(std::string name, SettingKind kind,
                                 std::function<std::string(const Database&)> default_text,
                                 std::function<void(const SettingValue&, QueryRunOptions*)> apply, std::string help) {
  SettingDefinition definition = Declare(std::move(name), SettingScope::kSession, std::move(kind), std::move(help));
  definition.default_text = std::move(default_text);
  definition.apply = std::move(apply);
  return definition;
}

// A server-wide setting: applied to the database's Foreman, read back from it.
SettingDefinition ServerSetting(std::string name, SettingKind kind,
                                std::function<absl::Status(Database&, const SettingValue&)> set_on_database,
                                std::function<absl::StatusOr<std::string>(Database&)> show_from_database,
                                std::string help) {
  SettingDefinition definition = Declare(std::move(name), SettingScope::kServer, std::move(kind), std::move(help));
  definition.set_on_database = std::move(set_on_database);
  definition.show_from_database = std::move(show_from_database);
  return definition;
}

const std::string& Text(const SettingValue& value) { return std::get<std::string>(value); }

// SET pipelining: eager (or on, true), lazy (or off, false) or elastic, case-insensitive. False for anything else.
bool ParsePipelining(const std::string& text, bool* pipelining, bool* elastic) {
  const std::string value = absl::AsciiStrToLower(text);
  *elastic = value == "elastic";
  if (*elastic || value == "eager" || value == "on" || value == "true") {
    *pipelining = true;
  } else if (value == "lazy" || value == "off" || value == "false") {
    *pipelining = false;
  } else {
    return false;
  }
  return true;
}

absl::Status CheckPipelining(const std::string& text) {
  bool pipelining = false, elastic = false;
  if (ParsePipelining(text, &pipelining, &elastic)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("pipelining must be eager (on), lazy (off) or elastic, not '", text, "'"));
}

std::vector<SettingDefinition> Declarations() {
  return {
      ServerSetting(
          "admission_threshold", Fraction(),
          [](Database& database, const SettingValue& value) {
            return database.foreman().SetLoadControl(std::get<double>(value),
                                                     database.options().scheduler.load_control.max_query_fraction);
          },
          [](Database& database) -> absl::StatusOr<std::string> {
            absl::StatusOr<ForemanStats> stats = database.foreman().GetStats();
            if (!stats.ok()) return stats.status();
            return absl::StrCat(stats->load.threshold_fraction);
          },
          "server-wide: queries are admitted while their estimated memory fits under this fraction of the memory "
          "limit (0 = admission control off)"),
      SessionSetting(
          "auto_analyze_threshold", Fraction("never"), &QueryRunOptions::auto_analyze_threshold,
          "a DELETE or UPDATE that leaves more than this fraction of a table's rows stale queues an ANALYZE"),
      SessionSetting("compaction_threshold", Fraction("never"), &QueryRunOptions::compaction_threshold,
                     "a DELETE or UPDATE that leaves more than this fraction of a table's rows deleted queues a "
                     "compaction"),
      SessionSetting("compression", OnOff(), &QueryRunOptions::compress_loads,
                     "whether COPY and INSERT build compressed base blocks"),
      SessionSetting(
          "disabled_rules",
          CheckedText("a comma-separated list of rewrite rules",
                      [](const std::string& text) { return optimizer::ParseDisabledRules(text).status(); }),
          [](const Database&) { return std::string(); },
          [](const SettingValue& value, QueryRunOptions* options) {
            options->optimizer.disabled_rules = optimizer::ParseDisabledRules(Text(value))->disabled_rules;
          },
          "rewrite rules the optimizer skips (EXPLAIN ANALYZE lists them)"),
      SessionSetting(
          "max_recursion_depth", PositiveInteger(),
          [](const Database&) { return absl::StrCat(optimizer::OptimizerOptions::kDefaultMaxRecursionDepth); },
          [](const SettingValue& value, QueryRunOptions* options) {
            options->optimizer.max_recursion_depth = std::get<int64_t>(value);
          },
          "the most steps of a WITH RECURSIVE query that may still yield rows"),
      SessionSetting(
          "pipelining", CheckedText("eager (on), lazy (off) or elastic", CheckPipelining),
          [](const Database&) { return DefaultText(QueryRunOptions{}.pipelining); },
          [](const SettingValue& value, QueryRunOptions* options) {
            ParsePipelining(Text(value), &options->pipelining, &options->elastic_pipelining);
          },
          "eager (on): an operator's filled blocks feed its consumer at once; lazy (off): every edge blocking; "
          "elastic: eager with per-operator limits from measured rates (scheduler/elastic_pipelining.h)"),
      SessionSetting(
          "validate_plans", OnOff(),
          [](const Database&) { return DefaultText(optimizer::OptimizerOptions::kValidatePlansByDefault); },
          [](const SettingValue& value, QueryRunOptions* options) {
            options->optimizer.validate_plans = std::get<bool>(value);
          },
          "check the logical plan as bound and after every optimizer rule (on in Debug builds and the SQL tests)"),
      SessionSetting("priority", PositiveInteger(std::numeric_limits<int>::max()), &QueryRunOptions::priority,
                     "the priority of this session's queries under the scheduling policy"),
      SessionSetting(
          "scan_sharing", OneOf({"off", "full", "batch"}),
          [](const Database& database) { return std::string(ScanSharingName(database.options().scan_sharing)); },
          [](const SettingValue& value, QueryRunOptions* options) {
            ParseScanSharing(Text(value), &options->scan_sharing);
          },
          "whether this session's scans share base-table blocks with other queries' (default: the server's "
          "--scan-sharing)"),
      ServerSetting(
          "scheduler_policy",
          CheckedText("a scheduling policy", [](const std::string& text) { return ParsePolicy(text).status(); }),
          [](Database& database, const SettingValue& value) {
            return database.foreman().SetPolicy(*ParsePolicy(Text(value)));
          },
          [](Database& database) -> absl::StatusOr<std::string> {
            absl::StatusOr<ForemanStats> stats = database.foreman().GetStats();
            if (!stats.ok()) return stats.status();
            return stats->policy;
          },
          "server-wide: the Foreman's policy (fair, hpf, pp, pp-exp, lottery, fcfs, srpt, ifsrpt, static)"),
      SessionSetting("statement_timeout", Milliseconds(), &QueryRunOptions::statement_timeout_ms,
                     "a query running longer than this is cancelled (0 = none)"),
  };
}

std::vector<std::string> SettingNames() {
  std::vector<std::string> names;
  for (const SettingDefinition& setting : AllSettings()) names.push_back(setting.name);
  return names;
}

}  // namespace

const std::vector<SettingDefinition>& AllSettings() {
  static const std::vector<SettingDefinition>* const settings = [] {
    auto* declared = new std::vector<SettingDefinition>(Declarations());
    std::sort(declared->begin(), declared->end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return declared;
  }();
  return *settings;
}

absl::StatusOr<const SettingDefinition*> FindSetting(const std::string& name) {
  for (const SettingDefinition& setting : AllSettings()) {
    if (setting.name == name) return &setting;
  }
  const std::vector<std::string> names = SettingNames();
  const std::string hint = ClosestName(name, names);
  return absl::InvalidArgumentError(absl::StrCat("unknown setting '", name, "'",
                                                 hint.empty() ? "" : absl::StrCat("; did you mean '", hint, "'?"),
                                                 " (settings: ", absl::StrJoin(names, ", "), ")"));
}

absl::Status SessionSettings::Set(Database& database, const std::string& name, const std::string& text) {
  absl::StatusOr<const SettingDefinition*> setting = FindSetting(name);
  if (!setting.ok()) return setting.status();
  absl::StatusOr<ParsedSetting> parsed = (*setting)->parse(text);
  if (!parsed.ok()) return parsed.status();
  if ((*setting)->scope == SettingScope::kServer) return (*setting)->set_on_database(database, parsed->value);
  values_[name] = *std::move(parsed);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SessionSettings::Show(Database& database,
                                                                                       const std::string& name) const {
  std::vector<std::pair<std::string, std::string>> rows;
  if (name != "all") {
    absl::StatusOr<const SettingDefinition*> setting = FindSetting(name);
    if (!setting.ok()) return absl::NotFoundError(setting.status().message());
    if ((*setting)->scope == SettingScope::kServer) {
      absl::StatusOr<std::string> value = (*setting)->show_from_database(database);
      if (!value.ok()) return value.status();
      rows.emplace_back(name, *value);
      return rows;
    }
  }
  for (const SettingDefinition& setting : AllSettings()) {
    if (setting.scope == SettingScope::kServer || (name != "all" && name != setting.name)) continue;
    auto it = values_.find(setting.name);
    rows.emplace_back(setting.name, it != values_.end() ? it->second.text : setting.default_text(database));
  }
  return rows;
}

void SessionSettings::Apply(const Database& database, QueryRunOptions* options) const {
  for (const SettingDefinition& setting : AllSettings()) {
    if (setting.scope == SettingScope::kServer) continue;
    auto it = values_.find(setting.name);
    if (it != values_.end()) {
      setting.apply(it->second.value, options);
      continue;
    }
    // Defaults parse: they are declared in the setting's own syntax.
    absl::StatusOr<ParsedSetting> fallback = setting.parse(setting.default_text(database));
    DCHECK(fallback.ok()) << setting.name << ": " << fallback.status();
    if (fallback.ok()) setting.apply(fallback->value, options);
  }
}

}  // namespace tessera
