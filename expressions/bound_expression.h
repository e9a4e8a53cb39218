#pragma once
// Bound scalar expressions: the binder's output (optimizer/) and the evaluator's input. Names are resolved to
// input column positions, every node has its result type, and implicit casts are explicit kCast nodes, so the
// evaluator never guesses. Immutable once built; shared freely between threads.
//
// Type rules the binder follows (and the evaluator relies on):
//   - arithmetic operands are cast to a common type first, except DECIMAL * DECIMAL, whose result type the
//     binder computes (p1+p2+1, s1+s2, capped at 38 digits) and the evaluator computes exactly in 128-bit
//     integers (overflow is a query error); DECIMAL / DECIMAL is DOUBLE (operands cast to DOUBLE), as in DuckDB.
//     The evaluator still divides DECIMALs exactly when it is given such a node;
//   - DATE + INTERVAL / DATE - INTERVAL yield DATE (month arithmetic clamps the day), DATE - DATE yields
//   INTEGER days;
//   - comparisons have operands of one common type (strings compare bytewise).

#include <memory>
#include <string>
#include <vector>

#include "catalog/types.h"
#include "catalog/value.h"

namespace tessera {

enum class ExpressionKind {
  kColumn,      // column_index into the input batch
  kConstant,    // constant (may be NULL of result_type)
  kCast,        // children[0] cast to result_type
  kArithmetic,  // op: kAdd, kSubtract, kMultiply, kDivide, kModulo, kNegate (one child)
  kComparison,  // op: kEqual ... kGreaterEqual; children[0], children[1]
  kAnd,         // n-ary, SQL three-valued logic
  kOr,          // n-ary
  kNot,
  kIsNull,    // negated = IS NOT NULL
  kLike,      // children[0] LIKE constant pattern (children[1] is a kConstant string); negated = NOT LIKE
  kInList,    // children[0] IN (children[1..]) all constants; negated = NOT IN (NULL semantics of SQL)
  kCase,      // children: WHEN0, THEN0, WHEN1, THEN1, ..., [ELSE]; has_else says whether the last is ELSE
  kFunction,  // function: see FunctionId; children are arguments
};

enum class ArithmeticOp { kAdd, kSubtract, kMultiply, kDivide, kModulo, kNegate };
enum class ComparisonOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual };

// The SQL spelling of an operator: "+", "-", "*", "/", "%" (kNegate: "-"); "=", "<>", "<", "<=", ">", ">=".
const char* ArithmeticSymbol(ArithmeticOp op);
const char* ComparisonSymbol(ComparisonOp op);
// The comparison with its operands swapped: `a op b` is `b FlipComparison(op) a` (< and >, <= and >= trade
// places; = and <> stay).
ComparisonOp FlipComparison(ComparisonOp op);
enum class FunctionId {
  kExtractYear,
  kExtractMonth,
  kExtractDay,  // (DATE or TIMESTAMP) -> INTEGER
  kExtractQuarter,
  kExtractDayOfWeek,  // 0 = Sunday ... 6 = Saturday
  kExtractDayOfYear,
  kExtractWeek,  // ISO 8601 week number
  kSubstring,    // (string, INTEGER start [, INTEGER length]) -> VARCHAR, 1-based, SQL semantics
  kCoalesce,     // n-ary, all arguments of result_type
  kNullIf,       // (a, b) of one type
  kAbs,
  kUpper,
  kLower,
  kLength,
  // Functions with a generic kernel (IsScalarFunction; expressions/scalar_function_kernels.cc); the binder casts
  // the arguments to the types given here.
  kConcat,        // (VARCHAR, ...) -> VARCHAR; NULL arguments are skipped
  kConcatStrict,  // a || b: (VARCHAR, VARCHAR) -> VARCHAR, NULL if either is
  kRound,         // (x [, INTEGER digits]): DOUBLE, DECIMAL (result scale min(s, digits)), INTEGER, BIGINT
  kCeil,          // (x): DOUBLE, DECIMAL (result scale 0), INTEGER, BIGINT
  kFloor,
  kSqrt,      // (DOUBLE) -> DOUBLE
  kExp,       // (DOUBLE) -> DOUBLE
  kLn,        // (DOUBLE) -> DOUBLE
  kLog10,     // (DOUBLE) -> DOUBLE
  kPower,     // (DOUBLE, DOUBLE) -> DOUBLE
  kGreatest,  // n-ary, all of result_type; NULL arguments are skipped
  kLeast,
  kTrim,  // (VARCHAR [, VARCHAR characters]) -> VARCHAR
  kLtrim,
  kRtrim,
  kLpad,  // (VARCHAR, INTEGER length [, VARCHAR fill]) -> VARCHAR
  kRpad,
  kReplace,     // (VARCHAR, VARCHAR from, VARCHAR to) -> VARCHAR
  kStrpos,      // (VARCHAR, VARCHAR) -> INTEGER (1-based character position, 0 if absent)
  kSplitPart,   // (VARCHAR, VARCHAR delimiter, INTEGER index) -> VARCHAR
  kStartsWith,  // (VARCHAR, VARCHAR) -> BOOLEAN
  kDateTrunc,   // (INTEGER DateTruncUnit, TIMESTAMP) -> TIMESTAMP
};

// date_trunc's units, as the first argument of a kDateTrunc node.
enum class DateTruncUnit : int32_t { kYear, kQuarter, kMonth, kWeek, kDay, kHour, kMinute, kSecond };

// Whether `function` is one of the functions with a generic kernel (kConcat ... kDateTrunc).
bool IsScalarFunction(FunctionId function);
// The SQL name of `function` as EXPLAIN shows it ("concat", "round"; EXTRACT fields as "YEAR", ...).
const char* FunctionSqlName(FunctionId function);

struct BoundExpression {
  ExpressionKind kind = ExpressionKind::kConstant;
  Type result_type;
  int column_index = -1;
  Value constant;
  ArithmeticOp arithmetic = ArithmeticOp::kAdd;
  ComparisonOp comparison = ComparisonOp::kEqual;
  FunctionId function = FunctionId::kCoalesce;
  bool negated = false;
  bool has_else = false;
  std::vector<std::unique_ptr<BoundExpression>> children;

  std::unique_ptr<BoundExpression> Clone() const;
  // Readable form for EXPLAIN, e.g. "(#3 * (1 - #6))"; `column_names` (optional) replaces #i by names.
  std::string ToString(const std::vector<std::string>* column_names = nullptr) const;
};

// Convenience constructors used by the binder and tests.
std::unique_ptr<BoundExpression> MakeColumn(int index, Type type);
std::unique_ptr<BoundExpression> MakeConstant(Value value);
std::unique_ptr<BoundExpression> MakeCast(std::unique_ptr<BoundExpression> input, Type target);
std::unique_ptr<BoundExpression> MakeArithmetic(ArithmeticOp op, std::unique_ptr<BoundExpression> left,
                                                std::unique_ptr<BoundExpression> right, Type result_type);
std::unique_ptr<BoundExpression> MakeComparison(ComparisonOp op, std::unique_ptr<BoundExpression> left,
                                                std::unique_ptr<BoundExpression> right);
// kAnd / kOr of `terms`; a single term is returned as is, no terms give TRUE (AND) or FALSE (OR).
std::unique_ptr<BoundExpression> MakeConjunction(ExpressionKind and_or,
                                                 std::vector<std::unique_ptr<BoundExpression>> terms);
std::unique_ptr<BoundExpression> MakeNot(std::unique_ptr<BoundExpression> input);
std::unique_ptr<BoundExpression> MakeIsNull(std::unique_ptr<BoundExpression> input, bool negated = false);
// `pattern` is a string constant (or NULL).
std::unique_ptr<BoundExpression> MakeLike(std::unique_ptr<BoundExpression> input, Value pattern, bool negated = false);
// `list` values are constants of `input`'s type (or NULL).
std::unique_ptr<BoundExpression> MakeInList(std::unique_ptr<BoundExpression> input, std::vector<Value> list,
                                            bool negated = false);
// `when_then` alternates WHEN, THEN; `otherwise` may be null (no ELSE: NULL).
std::unique_ptr<BoundExpression> MakeCase(std::vector<std::unique_ptr<BoundExpression>> when_then,
                                          std::unique_ptr<BoundExpression> otherwise, Type result_type);
std::unique_ptr<BoundExpression> MakeFunction(FunctionId function,
                                              std::vector<std::unique_ptr<BoundExpression>> arguments,
                                              Type result_type);

}  // namespace tessera
