#pragma once
// The typing rules of the binder (see the contract in expressions/bound_expression.h): common types for
// comparisons, CASE, COALESCE, IN and set operations; result and operand types of arithmetic; which casts
// exist; aggregate result types. Pure functions; thread-safe.
//
// Decisions (also in optimizer/README.md):
//   - INTEGER op INTEGER stays INTEGER and BIGINT op {INTEGER, BIGINT} is BIGINT for + - * / % (integer
//   division
//     truncates, overflow is a query error), as in PostgreSQL.
//   - DECIMAL + / - DECIMAL: both operands are cast to one DECIMAL with the larger scale and one extra
//   integer
//     digit (so the sum cannot overflow), which is also the result type. Common DECIMAL types keep the larger
//     scale; beyond 38 digits they give up integer digits (an overflow error at run time), never fraction
//     digits. Integers taking part in DECIMAL arithmetic are first widened to DECIMAL(10,0) (INTEGER) or
//     DECIMAL(19,0) (BIGINT).
//   - DECIMAL * DECIMAL -> DECIMAL(p1+p2+1, s1+s2), capped at 38 digits; DECIMAL / DECIMAL -> DOUBLE
//   (operands
//     cast to DOUBLE), as in DuckDB, so that ratios keep their relative precision.
//   - Anything with DOUBLE is DOUBLE.
//   - DATE +- INTERVAL and DATE +- INTEGER (days) are DATE (constant days are folded as intervals); DATE -
//   DATE
//     is INTEGER.
//   - Aggregates (as relational_operators/aggregation_table.h computes them): COUNT -> BIGINT; SUM(INTEGER) ->
//   BIGINT;
//     SUM(BIGINT) -> DECIMAL(38,0); SUM(DECIMAL(p,s)) -> DECIMAL(38,s); AVG(INTEGER/BIGINT/DOUBLE) -> DOUBLE;
//     AVG(DECIMAL(p,s)) -> DOUBLE (computed from the exact sum); MIN/MAX -> the argument's type (not
//     INTERVAL).

#include <optional>

#include "catalog/types.h"
#include "expressions/bound_expression.h"
#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// The type both operands are converted to before they are compared (or merged by CASE, COALESCE, IN, UNION);
// nullopt when the types are incompatible. NULL is compatible with everything; strings of different declared
// lengths meet in VARCHAR (unbounded if either is); DATE and TIMESTAMP meet in TIMESTAMP.
std::optional<Type> CommonType(Type a, Type b);

// INTEGER -> DECIMAL(10,0), BIGINT -> DECIMAL(19,0); a DECIMAL stays itself.
Type ExactDecimal(Type integer_or_decimal);

// The typing of `left op right` for a binary arithmetic operator: the types the operands are cast to and the
// result type. `swap_operands` is set when the evaluator wants them the other way round (INTERVAL + DATE).
struct ArithmeticTyping {
  Type left;
  Type right;
  Type result;
  bool swap_operands = false;
};
std::optional<ArithmeticTyping> TypeArithmetic(ArithmeticOp op, Type left, Type right);

// Whether CAST(x AS to) exists for a value of type `from` (Value::CastTo's rules).
bool CanCast(Type from, Type to);

// The result type of an aggregate over an argument of type `argument` (ignored for COUNT(*)); `argument_type`
// receives the type the argument must be cast to first. nullopt when the aggregate does not accept the type.
std::optional<Type> AggregateResultType(AggregateKind function, Type argument, Type* argument_type);

}  // namespace tessera::optimizer
