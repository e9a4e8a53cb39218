#pragma once
// Bound expressions (and types) as bytes, for the plan fragments the master sends to the other ranks
// (query_execution/plan_fragment.h). An expression travels as its fields (kind, type, column, constant, operator,
// function, flags, children); constants and types through Value::Serialize, so every expression the binder can
// build round-trips exactly.

#include <memory>

#include "catalog/types.h"
#include "common/byte_stream.h"
#include "expressions/bound_expression.h"

namespace tessera::distributed {

void WriteExpression(ByteWriter& out, const BoundExpression& expression);
// Null on a malformed or truncated message (also expressions nested deeper than 10,000 levels).
std::unique_ptr<BoundExpression> ReadExpression(ByteReader& in);

// A present-or-absent expression (one flag byte, then the expression).
void WriteOptionalExpression(ByteWriter& out, const BoundExpression* expression);
// False on a malformed message; `*expression` is null when none was written.
bool ReadOptionalExpression(ByteReader& in, std::unique_ptr<BoundExpression>* expression);

void WriteType(ByteWriter& out, Type type);
bool ReadType(ByteReader& in, Type* type);

}  // namespace tessera::distributed
