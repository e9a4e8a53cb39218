#pragma once
// Structural helpers over bound expressions used by the binder and the rules: equality, column references,
// re-indexing, conjunct splitting, nullability. Pure functions; thread-safe.

#include <functional>
#include <memory>
#include <vector>

#include "expressions/bound_expression.h"
#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// Same structure, kinds, types, constants, operators and column indexes.
bool ExpressionsEqual(const BoundExpression& a, const BoundExpression& b);

// Appends the column indexes `expression` references (with repetitions) to `columns`.
void CollectColumns(const BoundExpression& expression, std::vector<int>* columns);
// True if every referenced column index is in [begin, end) (vacuously true for constants).
bool ReferencesOnlyRange(const BoundExpression& expression, int begin, int end);
// True if some referenced column index is in [begin, end).
bool ReferencesRange(const BoundExpression& expression, int begin, int end);
// Smallest / largest referenced column index, or -1 when there is none.
int MaxColumnIndex(const BoundExpression& expression);

// Replaces every column index i by mapping(i) in place.
void RemapColumns(BoundExpression* expression, const std::function<int(int)>& mapping);
// Adds `delta` to every column index in place.
void ShiftColumns(BoundExpression* expression, int delta);
// A copy of `expression` in which column i is replaced by a copy of *replacements[i].
ExpressionPtr SubstituteColumns(const BoundExpression& expression,
                                const std::vector<const BoundExpression*>& replacements);

// Splits nested ANDs into their terms (a NULL pointer yields nothing).
std::vector<ExpressionPtr> SplitConjuncts(ExpressionPtr expression);
// AND of the terms: null for none, the term itself for one.
ExpressionPtr CombineConjuncts(std::vector<ExpressionPtr> terms);
// OR of the terms (at least one).
ExpressionPtr CombineDisjuncts(std::vector<ExpressionPtr> terms);
// Appends `predicate` to `out` with the conjuncts common to every branch of an OR factored out:
// (A AND B) OR (A AND C) appends A and (B OR C); a branch left empty makes the OR true (A only). Anything but an
// OR is appended as is (TRUE is dropped).
void FactorCommonConjuncts(ExpressionPtr predicate, std::vector<ExpressionPtr>* out);

// Conservative: false only when the expression can never be NULL given the input's nullability.
bool IsNullable(const BoundExpression& expression, const std::vector<OutputColumn>& input);

// True if `expression` is NULL whenever a column in [begin, end) it reads is NULL along a strict path (casts,
// arithmetic, functions other than COALESCE / NULLIF / concat / greatest / least).
bool StrictIn(const BoundExpression& expression, int begin, int end);
// True if the predicate is never TRUE when all columns in [begin, end) are NULL.
bool RejectsNulls(const BoundExpression& predicate, int begin, int end);

bool IsBooleanConstant(const BoundExpression& expression, bool value);
bool IsColumn(const BoundExpression& expression);

// A column reference to input column `index`, typed as input[index].
ExpressionPtr MakeInputColumn(const std::vector<OutputColumn>& input, int index);

}  // namespace tessera::optimizer
