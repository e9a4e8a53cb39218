// GROUP BY: plain expressions, ROLLUP (...), CUBE (...), GROUPING SETS (...) and the empty set (), expanded into
// SelectCore::grouping_sets as SQL:2011 (7.9 <group by clause>) defines it: each grouping element stands for a list
// of grouping sets, and the clause's sets are the concatenations of one set from each element (the cross product).
//   ROLLUP (a, b)            -> (a, b), (a), ()
//   CUBE (a, b)              -> (a, b), (a), (b), ()
//   GROUPING SETS (a, (b, c), ()) -> (a), (b, c), ()
// An element of ROLLUP / CUBE / GROUPING SETS may be a parenthesized list, which acts as one unit.

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "parser/recursive_descent_parser.h"

namespace tessera::parser {
namespace {

// More grouping sets than this is almost certainly a mistake (CUBE of 13 columns) and would make a huge plan.
constexpr size_t kMaxGroupingSets = 4096;

using GroupingSet = std::vector<int>;  // indexes into SelectCore::group_by, ascending

GroupingSet Union(const GroupingSet& a, const GroupingSet& b) {
  GroupingSet out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The parse state of one GROUP BY clause: its distinct expressions, interned by their SQL text.
class GroupByBuilder {
 public:
  explicit GroupByBuilder(SelectCore& core) : core_(core) {}

  int Intern(std::unique_ptr<ParsedExpr> expr) {
    std::string key = ToString(*expr);
    auto [it, inserted] = index_.emplace(std::move(key), static_cast<int>(core_.group_by.size()));
    if (inserted) core_.group_by.push_back(std::move(expr));
    return it->second;
  }

 private:
  SelectCore& core_;
  absl::flat_hash_map<std::string, int> index_;
};

}  // namespace

absl::Status RecursiveDescentParser::ParseGroupBy(SelectCore& core) {
  GroupByBuilder builder(core);
  const SourcePosition clause_position = Current().position;
  bool only_expressions = true;

  // A parenthesized list `( e, ... )` or `()` as one set; a bare expression as a set of one.
  auto parse_unit = [&]() -> absl::StatusOr<GroupingSet> {
    GroupingSet set;
    if (ConsumeOperator("(")) {
      if (ConsumeOperator(")")) return set;
      TESSERA_ASSIGN_OR_RETURN(std::vector<ExprPtr> list, ParseExpressionList());
      TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
      for (ExprPtr& expr : list) set.push_back(builder.Intern(std::move(expr)));
    } else {
      TESSERA_ASSIGN_OR_RETURN(ExprPtr expr, ParseExpression());
      set.push_back(builder.Intern(std::move(expr)));
    }
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    return set;
  };
  auto parse_units = [&]() -> absl::StatusOr<std::vector<GroupingSet>> {
    TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
    std::vector<GroupingSet> units;
    do {
      TESSERA_ASSIGN_OR_RETURN(GroupingSet unit, parse_unit());
      units.push_back(std::move(unit));
    } while (ConsumeOperator(","));
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
    return units;
  };
  auto too_many = [&]() {
    return ErrorAt(clause_position, absl::StrCat("GROUP BY makes more than ", kMaxGroupingSets, " grouping sets"));
  };

  // One grouping element: the list of grouping sets it stands for.
  std::function<absl::StatusOr<std::vector<GroupingSet>>(bool)> parse_element;
  parse_element = [&](bool inside_grouping_sets) -> absl::StatusOr<std::vector<GroupingSet>> {
    std::vector<GroupingSet> sets;
    const bool rollup = AtWord("ROLLUP") && IsOperator(PeekToken(1), "(");
    const bool cube = AtWord("CUBE") && IsOperator(PeekToken(1), "(");
    if (rollup || cube) {
      only_expressions = false;
      Advance();
      TESSERA_ASSIGN_OR_RETURN(std::vector<GroupingSet> units, parse_units());
      if (rollup) {
        for (size_t n = units.size() + 1; n-- > 0;) {
          GroupingSet set;
          for (size_t i = 0; i < n; ++i) set = Union(set, units[i]);
          sets.push_back(std::move(set));
        }
      } else {
        if (units.size() >= 13) return too_many();
        const uint32_t all = (1u << units.size()) - 1;
        for (uint32_t mask = all + 1; mask-- > 0;) {  // (all units) first, () last
          GroupingSet set;
          for (size_t i = 0; i < units.size(); ++i) {
            if (mask & (1u << (units.size() - 1 - i))) set = Union(set, units[i]);
          }
          sets.push_back(std::move(set));
        }
      }
      return sets;
    }
    if (AtWord("GROUPING") && IsWord(PeekToken(1), "SETS")) {
      only_expressions = false;
      Advance();
      Advance();
      TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
      do {
        TESSERA_ASSIGN_OR_RETURN(std::vector<GroupingSet> nested, parse_element(/*inside_grouping_sets=*/true));
        for (GroupingSet& set : nested) sets.push_back(std::move(set));
        if (sets.size() > kMaxGroupingSets) return too_many();
      } while (ConsumeOperator(","));
      TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
      return sets;
    }
    if (AtOperator("(") && (inside_grouping_sets || IsOperator(PeekToken(1), ")"))) {
      only_expressions = false;
      TESSERA_ASSIGN_OR_RETURN(GroupingSet set, parse_unit());
      sets.push_back(std::move(set));
      return sets;
    }
    TESSERA_ASSIGN_OR_RETURN(ExprPtr expr, ParseExpression());
    sets.push_back({builder.Intern(std::move(expr))});
    return sets;
  };

  std::vector<GroupingSet> product = {GroupingSet{}};
  do {
    TESSERA_ASSIGN_OR_RETURN(std::vector<GroupingSet> element, parse_element(/*inside_grouping_sets=*/false));
    if (product.size() * element.size() > kMaxGroupingSets) return too_many();
    std::vector<GroupingSet> next;
    next.reserve(product.size() * element.size());
    for (const GroupingSet& left : product) {
      for (const GroupingSet& right : element) next.push_back(Union(left, right));
    }
    product = std::move(next);
  } while (ConsumeOperator(","));
  if (!only_expressions) core.grouping_sets = std::move(product);
  return absl::OkStatus();
}

}  // namespace tessera::parser
