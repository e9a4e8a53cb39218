#pragma once
// Evaluates constant expressions (literals, unary minus, CAST) to values: INSERT ... VALUES rows, DEFAULT
// clauses, COPY and SET options. Errors carry the expression's position with a caret.
//
// This is the session's row-at-a-time path for utility statements; queries over tables use the vectorized
// evaluator of expressions/ (relational_operators/).

#include <string_view>

#include "absl/status/statusor.h"
#include "catalog/value.h"
#include "parser/ast.h"

namespace tessera {

absl::StatusOr<Value> EvaluateConstant(const parser::ParsedExpr& expr, std::string_view sql);

}  // namespace tessera
