#pragma once
// Typed vector kernels behind ExpressionEvaluator (internal to expressions/). A kernel is chosen once per
// expression node by a Plan* function (the only place that switches on types) and then called once per batch
// through a function pointer; the kernels are templates over physical types, instantiated in the .cc files.
//
// Kernel contract: the caller has set up `out` (ResetOwned(batch size) and its NULLs: the union of the
// inputs' NULLs unless the kernel says otherwise). A kernel writes the values of the active rows only, never
// fails on a NULL row (values of NULL rows are unspecified and may be garbage), never allocates except in
// `out`'s arena and in KernelContext::text, and reports user errors (overflow, bad input) as InvalidArgument
// / OutOfRange.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "catalog/types.h"
#include "expressions/bound_expression.h"
#include "expressions/column_vector.h"

namespace tessera {

// The rows a kernel works on: rows[0..count) ascending, or 0..count-1 when `rows` is null.
struct ActiveRows {
  const uint32_t* rows = nullptr;
  uint32_t count = 0;
};

// Calls f(row) for every active row; the two loops let the dense case vectorize.
template <typename F>
inline void ForEachRow(ActiveRows active, F&& f) {
  if (active.rows == nullptr) {
    for (uint32_t r = 0; r < active.count; ++r) f(r);
  } else {
    for (uint32_t i = 0; i < active.count; ++i) f(active.rows[i]);
  }
}

enum class PhysicalType : uint8_t { kNone, kBool, kInt32, kInt64, kInt128, kDouble, kInterval, kString };
PhysicalType PhysicalTypeOf(const Type& type);

// Per-node data a kernel may need besides its vectors.
struct KernelContext {
  Type left_type;  // input of a unary kernel, left operand of a binary one
  Type right_type;
  Type result_type;
  std::string* text = nullptr;  // scratch for formatting; grows once, then reused
};

using UnaryKernel = absl::Status (*)(const KernelContext&, const ColumnVector& input, ActiveRows, ColumnVector* out);
using BinaryKernel = absl::Status (*)(const KernelContext&, const ColumnVector& left, const ColumnVector& right,
                                      ActiveRows, ColumnVector* out);

// Marks NULL in `out` every active row that is NULL in `a` or `b` (b may be null). Borrows a's or b's bitmap
// when only one of them has NULLs.
void PropagateNulls(const ColumnVector& a, const ColumnVector* b, ActiveRows rows, ColumnVector* out);

// ---- casts (cast_kernels.cc) ----
struct CastPlan {
  UnaryKernel kernel = nullptr;
  // Same physical representation and every value fits: the result may view the input's memory.
  bool zero_copy = false;
};
// InvalidArgument "cannot cast X to Y" for unsupported pairs. Kernels leave `out`'s NULLs as the caller set
// them (the input's).
absl::StatusOr<CastPlan> PlanCast(const Type& from, const Type& to);

// ---- arithmetic (arithmetic_kernels.cc) ----
// Operand types as the binder (or the evaluator's implicit casts) left them: equal to the result type for
// INTEGER/BIGINT/DOUBLE; any DECIMALs for a DECIMAL result; DATE/TIMESTAMP/INTERVAL combinations.
absl::StatusOr<BinaryKernel> PlanArithmetic(ArithmeticOp op, const Type& left, const Type& right, const Type& result);
absl::StatusOr<UnaryKernel> PlanNegate(const Type& type);
absl::StatusOr<UnaryKernel> PlanAbs(const Type& type);

// ---- comparisons (comparison_kernels.cc) ----
struct ComparisonPlan {
  // out[r] = left[r] op right[r] for active rows (NULLs are the caller's business).
  void (*values)(const ColumnVector& left, const ColumnVector& right, ActiveRows, uint8_t* out) = nullptr;
  // Writes the active rows where both sides are non-NULL and the comparison holds; returns their count.
  // `out` may alias rows.rows.
  uint32_t (*select)(const ColumnVector& left, const ColumnVector& right, ActiveRows, uint32_t* out) = nullptr;
};
// Both operands of `type`. With `right_is_constant`, right row 0 is used for every row (a constant vector).
absl::StatusOr<ComparisonPlan> PlanComparison(ComparisonOp op, const Type& type, bool right_is_constant);

// ---- string and date functions (function_kernels.cc) ----
absl::StatusOr<UnaryKernel> PlanExtract(FunctionId field, const Type& input, const Type& result);
UnaryKernel UpperKernel();
UnaryKernel LowerKernel();
absl::StatusOr<UnaryKernel> PlanLength(const Type& result);
// SUBSTRING(string, start [, length]); `length` may be null. NULLs already propagated into `out`.
absl::Status SubstringKernel(const ColumnVector& string, const ColumnVector& start, const ColumnVector* length,
                             ActiveRows rows, ColumnVector* out);

// ---- scalar functions of any number of arguments (scalar_function_kernels.cc) ----
// A kernel over the evaluated arguments `args[0..count)`, of the types the binder cast them to. Unless the plan
// says handles_nulls, the caller has marked `out` NULL where any argument is NULL, and the kernel skips those
// rows; otherwise the kernel decides each row's NULL itself (concat skips NULL arguments, greatest/least too).
using NaryKernel = absl::Status (*)(const KernelContext&, const ColumnVector* const* args, size_t count, ActiveRows,
                                    ColumnVector* out);
struct ScalarFunctionPlan {
  NaryKernel kernel = nullptr;
  bool handles_nulls = false;
};
// InvalidArgument for functions without such a kernel (see IsScalarFunction in bound_expression.h).
absl::StatusOr<ScalarFunctionPlan> PlanScalarFunction(FunctionId function, const std::vector<Type>& arguments,
                                                      const Type& result);

// Copies the active rows' values and NULLs of `from` into owned `to` (same physical type). Rows of `to` that
// were NULL and are copied from a non-NULL row must not occur (callers fill each row once, starting all
// valid).
void CopyRows(const ColumnVector& from, ActiveRows rows, ColumnVector* to);

// Writes `value` (NULL or of out's type) to row `row` of owned `out` (strings are copied into out's arena).
void SetRowValue(const Value& value, uint32_t row, ColumnVector* out);

// Fills rows 0..size-1 of owned `out` (already ResetOwned(size)) with `value`, which has out's type or is
// NULL. String bytes are copied into out's arena.
void FillConstant(const Value& value, uint32_t size, ColumnVector* out);

}  // namespace tessera
