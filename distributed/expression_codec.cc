#include "distributed/expression_codec.h"

namespace tessera::distributed {
namespace {

constexpr int kMaxDepth = 10000;

std::unique_ptr<BoundExpression> ReadExpressionAt(ByteReader& in, int depth) {
  if (depth > kMaxDepth) return nullptr;
  auto expression = std::make_unique<BoundExpression>();
  uint8_t kind = 0, arithmetic = 0, comparison = 0, flags = 0;
  uint32_t column = 0, function = 0, children = 0;
  std::string constant;
  if (!in.GetU8(&kind) || !ReadType(in, &expression->result_type) || !in.GetU32(&column) || !in.GetString(&constant) ||
      !in.GetU8(&arithmetic) || !in.GetU8(&comparison) || !in.GetU32(&function) || !in.GetU8(&flags) ||
      !in.GetU32(&children)) {
    return nullptr;
  }
  if (kind > static_cast<uint8_t>(ExpressionKind::kFunction) ||
      arithmetic > static_cast<uint8_t>(ArithmeticOp::kNegate) ||
      comparison > static_cast<uint8_t>(ComparisonOp::kGreaterEqual) ||
      function > static_cast<uint32_t>(FunctionId::kDateTrunc)) {
    return nullptr;
  }
  absl::StatusOr<Value> constant_value = Value::Deserialize(constant);
  if (!constant_value.ok()) return nullptr;
  expression->kind = static_cast<ExpressionKind>(kind);
  expression->column_index = static_cast<int>(column) - 1;
  expression->constant = *std::move(constant_value);
  expression->arithmetic = static_cast<ArithmeticOp>(arithmetic);
  expression->comparison = static_cast<ComparisonOp>(comparison);
  expression->function = static_cast<FunctionId>(function);
  expression->negated = (flags & 1) != 0;
  expression->has_else = (flags & 2) != 0;
  for (uint32_t i = 0; i < children; ++i) {
    std::unique_ptr<BoundExpression> child = ReadExpressionAt(in, depth + 1);
    if (child == nullptr) return nullptr;
    expression->children.push_back(std::move(child));
  }
  return expression;
}

}  // namespace

void WriteExpression(ByteWriter& out, const BoundExpression& expression) {
  out.PutU8(static_cast<uint8_t>(expression.kind));
  WriteType(out, expression.result_type);
  out.PutU32(static_cast<uint32_t>(expression.column_index + 1));
  out.PutString(expression.constant.Serialize());
  out.PutU8(static_cast<uint8_t>(expression.arithmetic));
  out.PutU8(static_cast<uint8_t>(expression.comparison));
  out.PutU32(static_cast<uint32_t>(expression.function));
  out.PutU8((expression.negated ? 1 : 0) | (expression.has_else ? 2 : 0));
  out.PutU32(static_cast<uint32_t>(expression.children.size()));
  for (const auto& child : expression.children) WriteExpression(out, *child);
}

std::unique_ptr<BoundExpression> ReadExpression(ByteReader& in) { return ReadExpressionAt(in, 0); }

void WriteOptionalExpression(ByteWriter& out, const BoundExpression* expression) {
  out.PutU8(expression != nullptr ? 1 : 0);
  if (expression != nullptr) WriteExpression(out, *expression);
}

bool ReadOptionalExpression(ByteReader& in, std::unique_ptr<BoundExpression>* expression) {
  uint8_t present = 0;
  if (!in.GetU8(&present) || present > 1) return false;
  expression->reset();
  if (present == 0) return true;
  *expression = ReadExpression(in);
  return *expression != nullptr;
}

void WriteType(ByteWriter& out, Type type) { out.PutString(Value::Null(type).Serialize()); }

bool ReadType(ByteReader& in, Type* type) {
  std::string bytes;
  if (!in.GetString(&bytes)) return false;
  absl::StatusOr<Value> value = Value::Deserialize(bytes);
  if (!value.ok()) return false;
  *type = value->type();
  return true;
}

}  // namespace tessera::distributed
