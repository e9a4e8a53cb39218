#include "parser/keywords.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace tessera::parser {
namespace {

// Sorted, for binary search. Kept close to the SQL standard's and PostgreSQL's reserved lists, minus words
// that are common column names in analytical schemas (DATE, YEAR, VALUE, ...).
constexpr std::array<std::string_view, 56> kReservedKeywords = {
    "ALL",   "AND",     "ANY",   "AS",       "ASC",    "BETWEEN", "BY",     "CASE",   "CAST",      "CREATE",
    "CROSS", "DEFAULT", "DESC",  "DISTINCT", "ELSE",   "END",     "EXCEPT", "EXISTS", "FALSE",     "FETCH",
    "FOR",   "FROM",    "FULL",  "GROUP",    "HAVING", "ILIKE",   "IN",     "INNER",  "INTERSECT", "INTO",
    "IS",    "JOIN",    "LEFT",  "LIKE",     "LIMIT",  "NATURAL", "NOT",    "NULL",   "OFFSET",    "ON",
    "OR",    "ORDER",   "OUTER", "PRIMARY",  "RIGHT",  "SELECT",  "TABLE",  "THEN",   "TO",        "TRUE",
    "UNION", "USING",   "WHEN",  "WHERE",    "WINDOW", "WITH",
};

constexpr bool IsSorted() {
  for (size_t i = 1; i < kReservedKeywords.size(); ++i) {
    if (!(kReservedKeywords[i - 1] < kReservedKeywords[i])) return false;
  }
  return true;
}
static_assert(IsSorted(), "kReservedKeywords must be sorted");

}  // namespace

bool IsReservedKeyword(std::string_view upper_word) {
  return std::binary_search(kReservedKeywords.begin(), kReservedKeywords.end(), upper_word);
}

}  // namespace tessera::parser
