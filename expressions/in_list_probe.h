#pragma once
// Membership test for `x IN (constants)` (internal to expressions/): the non-NULL constants of the list, kept
// sorted (binary search; a linear scan for short lists). SQL's NULL rules (a NULL in the list, NOT IN) are
// applied by the evaluator. Immutable after construction; thread-safe.

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/value.h"
#include "expressions/column_vector.h"
#include "expressions/vector_kernels.h"

namespace tessera {

class InListProbe {
 public:
  virtual ~InListProbe() = default;
  // match[r] = whether input[r] equals a list value, for active non-NULL rows (NULL rows: unspecified).
  virtual void Probe(const ColumnVector& input, ActiveRows rows, uint8_t* match) const = 0;

  // `values` are non-NULL and of `type` (already cast). InvalidArgument for types without an IN kernel.
  static absl::StatusOr<std::unique_ptr<InListProbe>> Make(const Type& type, const std::vector<Value>& values);
};

}  // namespace tessera
