#include "parser/ast.h"

// Out-of-line special members: they need the complete SelectStatement, TableRef and QueryBody types.

namespace tessera::parser {

ParsedExpr::ParsedExpr() = default;
ParsedExpr::~ParsedExpr() = default;
ParsedExpr::ParsedExpr(ParsedExpr&&) noexcept = default;
ParsedExpr& ParsedExpr::operator=(ParsedExpr&&) noexcept = default;

TableRef::TableRef() = default;
TableRef::~TableRef() = default;

QueryBody::QueryBody() = default;
QueryBody::~QueryBody() = default;

SelectStatement::SelectStatement() = default;
SelectStatement::~SelectStatement() = default;

}  // namespace tessera::parser
