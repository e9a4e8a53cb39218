#include "optimizer/optimizer_options.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "optimizer/rules/rule_list.h"

namespace tessera::optimizer {

std::string RuleSettingName(std::string_view rule_name) {
  std::string name;
  for (size_t i = 0; i < rule_name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(rule_name[i]);
    if (std::isupper(c) && i > 0) name.push_back('_');
    name.push_back(static_cast<char>(std::tolower(c)));
  }
  return name;
}

absl::StatusOr<OptimizerOptions> ParseDisabledRules(std::string_view list_text) {
  const absl::string_view list(list_text.data(), list_text.size());  // absl's string_view is not std's here
  std::vector<std::string> valid;
  for (const auto& rule : RuleList()) valid.push_back(RuleSettingName(rule->name()));
  OptimizerOptions options;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(item));
    if (name.empty()) {
      if (absl::StripAsciiWhitespace(list).empty()) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("empty rule name in disabled_rules '", list, "'; valid rules: ", absl::StrJoin(valid, ", ")));
    }
    if (std::find(valid.begin(), valid.end(), name) == valid.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown optimizer rule '", name,
                                                     "' in disabled_rules; valid rules: ", absl::StrJoin(valid, ", ")));
    }
    options.disabled_rules.insert(name);
  }
  return options;
}

}  // namespace tessera::optimizer
