#pragma once
// Aggregate functions for the scalar and hash aggregation operators: COUNT(*), COUNT(x), SUM, AVG, MIN, MAX.
// (COUNT(DISTINCT x) is the operator's business: it deduplicates, then uses COUNT.)
//
// An AggregateFunction describes one aggregate over one input type: its result type, and the size and
// alignment of its state, a plain block of bytes the operator places wherever it likes (one per group in a
// hash table row, or one for a scalar aggregate). States are trivially copyable and position independent
// (they may be moved with memcpy), need no destructor, and are at most 8-byte aligned.
//
// Result types (the binder takes them from result_type()):
//   COUNT(*), COUNT(x)  BIGINT, never NULL
//   SUM(INTEGER)        BIGINT (exceeding BIGINT is an error at Finalize: "BIGINT out of range")
//   SUM(BIGINT)         DECIMAL(38,0)  (exact, as DuckDB's HUGEINT / PostgreSQL's numeric)
//   SUM(DECIMAL(p,s))   DECIMAL(38,s)  (exact; beyond 38 digits: "DECIMAL overflow")
//   SUM(DOUBLE)         DOUBLE
//   AVG(INTEGER|BIGINT|DOUBLE)  DOUBLE
//   AVG(DECIMAL(p,s))   DECIMAL(38, max(s, 6)): the exact average rounded half away from zero. Exact rather
//   than
//                       DOUBLE (DuckDB's choice) so that results do not depend on the order in which partial
//                       states were merged.
//   MIN/MAX(x)          x's type, for BOOLEAN, INTEGER, BIGINT, DECIMAL, DOUBLE (NaN above every number),
//   DATE,
//                       TIMESTAMP, CHAR/VARCHAR (bytewise)
// SUM/AVG/MIN/MAX of no non-NULL rows are NULL. Integer and decimal sums accumulate in 128 bits.
//
// String MIN/MAX states keep up to 15 bytes inline; longer values live in a StringArena that the caller
// passes to Update*/Merge and that must outlive the states (one arena per aggregation hash table or per
// thread). A state reuses its arena bytes when a new extreme fits and otherwise takes a buffer of twice the
// size, so the arena holds at most about twice the final value per group. Only functions with needs_arena()
// use it; others accept null. FinalizeBatch copies string results into the output vector's arena, so they
// outlive the states.
//
// Threading: an AggregateFunction is immutable and may be shared by all threads; a state (and an arena)
// belongs to one thread at a time. Merge combines partial states, e.g. per-thread tables into the final one.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "expressions/column_vector.h"
#include "expressions/string_arena.h"

namespace tessera {

// (Named apart from relational_operators' own AggregateKind so both headers can be included together.)
enum class AggregateFunctionKind { kCountStar, kCount, kSum, kAvg, kMin, kMax };

class AggregateFunction {
 public:
  // InvalidArgument for combinations without a kernel, e.g. SUM(VARCHAR) or MIN(INTERVAL). `input_type` is
  // ignored for COUNT(*).
  static absl::StatusOr<AggregateFunction> Create(AggregateFunctionKind kind, const Type& input_type);

  AggregateFunctionKind kind() const { return kind_; }
  const Type& input_type() const { return input_type_; }
  const Type& result_type() const { return result_type_; }
  size_t state_size() const;
  size_t state_alignment() const;
  bool needs_arena() const;
  // "SUM(DECIMAL(15,2))"
  std::string ToString() const;

  void Initialize(uint8_t* state) const;

  // Folds the active rows of `input` (all of 0..input.size()-1 when `selection` is null) into one state.
  // COUNT(*) only looks at how many rows are active, so any vector of the batch will do.
  absl::Status UpdateScalar(uint8_t* state, const ColumnVector& input, const SelectionVector* selection,
                            StringArena* arena = nullptr) const;
  // Row r of `input` goes to the state at `states[r] + state_offset` (states indexed by row position, as a
  // hash table's probe leaves them; rows sharing a group share a pointer).
  absl::Status UpdateGrouped(uint8_t* const* states, size_t state_offset, const ColumnVector& input,
                             const SelectionVector* selection, StringArena* arena = nullptr) const;
  // destination = combine(destination, source); `source` is left as it was.
  absl::Status Merge(uint8_t* destination, const uint8_t* source, StringArena* arena = nullptr) const;

  absl::StatusOr<Value> Finalize(const uint8_t* state) const;
  // Writes the results of `count` states (states[i] + state_offset) to rows 0..count-1 of `out`, which is
  // reset to result_type().
  absl::Status FinalizeBatch(const uint8_t* const* states, size_t state_offset, uint32_t count,
                             ColumnVector* out) const;

  struct Ops;  // the typed implementation (aggregate_function.cc)

 private:
  AggregateFunction(AggregateFunctionKind kind, Type input_type, Type result_type, const Ops* ops)
      : kind_(kind), input_type_(input_type), result_type_(result_type), ops_(ops) {}

  AggregateFunctionKind kind_;
  Type input_type_;
  Type result_type_;
  const Ops* ops_;
};

}  // namespace tessera
