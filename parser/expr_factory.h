#pragma once
// Small constructors for AST expression nodes, shared by the parser's source files.

#include <memory>
#include <string>
#include <utility>

#include "parser/ast.h"

namespace tessera::parser {

inline std::unique_ptr<ParsedExpr> MakeExpr(ExprKind kind, const SourcePosition& position) {
  auto expr = std::make_unique<ParsedExpr>();
  expr->kind = kind;
  expr->position = position;
  return expr;
}

inline std::unique_ptr<ParsedExpr> MakeLiteral(LiteralKind literal_kind, std::string text,
                                               const SourcePosition& position) {
  auto literal = MakeExpr(ExprKind::kLiteral, position);
  literal->literal_kind = literal_kind;
  literal->literal_text = std::move(text);
  return literal;
}

}  // namespace tessera::parser
