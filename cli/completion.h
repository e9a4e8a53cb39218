#pragma once
// Tab completion for the shell: what to insert for the word before the cursor, given the words that may complete
// it (SQL keywords, table, view and column names). Pure logic; the line editor calls it on Tab.

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct Completion {
  // Text to insert at the cursor: the rest of the only match (with a space after it), or the part all matches
  // share beyond what was typed; empty when there is nothing to add.
  std::string insert;
  // When several words match and typing more is needed: all of them (sorted, as they would be inserted), to list.
  std::vector<std::string> candidates;
};

// The word being typed is the run of letters, digits and '_' before the cursor (empty: nothing to complete).
// Words match it ignoring case; keywords (given upper-case) take the case of what was typed when that is all
// lower-case.
Completion CompleteWord(std::string_view line_before_cursor, const std::vector<std::string>& words);

// SQL keywords and functions the shell offers on Tab, upper-case.
const std::vector<std::string>& CompletionKeywords();

}  // namespace tessera
