#pragma once
// Table schemas: columns with their types, NOT NULL constraints and defaults. Immutable once a table exists.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/types.h"
#include "catalog/value.h"

namespace tessera {

struct ColumnSchema {
  std::string name;
  Type type;
  bool not_null = false;
  std::optional<Value> default_value;  // already cast to `type`; unset = NULL
};

// Returns the index of the column named `name` (names are compared exactly; the parser lower-cases unquoted
// identifiers), or -1.
int FindColumn(const std::vector<ColumnSchema>& columns, std::string_view name);

// Returns the candidate closest to `name` by edit distance when it is close enough to be a plausible typo
// (distance <= max(2, |name| / 3)), else an empty string. Used for "did you mean ...?" hints.
std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace tessera
