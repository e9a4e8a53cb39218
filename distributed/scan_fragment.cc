#include "distributed/scan_fragment.h"

#include "common/byte_stream.h"

namespace tessera::distributed {
namespace {

constexpr int kMaxDepth = 10000;

void WriteExpression(ByteWriter& out, const BoundExpression& expression) {
  out.PutU8(static_cast<uint8_t>(expression.kind));
  out.PutString(Value::Null(expression.result_type).Serialize());
  out.PutU32(static_cast<uint32_t>(expression.column_index + 1));
  out.PutString(expression.constant.Serialize());
  out.PutU8(static_cast<uint8_t>(expression.arithmetic));
  out.PutU8(static_cast<uint8_t>(expression.comparison));
  out.PutU32(static_cast<uint32_t>(expression.function));
  out.PutU8((expression.negated ? 1 : 0) | (expression.has_else ? 2 : 0));
  out.PutU32(static_cast<uint32_t>(expression.children.size()));
  for (const auto& child : expression.children) WriteExpression(out, *child);
}

std::unique_ptr<BoundExpression> ReadExpression(ByteReader& in, int depth) {
  if (depth > kMaxDepth) return nullptr;
  auto expression = std::make_unique<BoundExpression>();
  uint8_t kind = 0, arithmetic = 0, comparison = 0, flags = 0;
  uint32_t column = 0, function = 0, children = 0;
  std::string type, constant;
  if (!in.GetU8(&kind) || !in.GetString(&type) || !in.GetU32(&column) || !in.GetString(&constant) ||
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
  absl::StatusOr<Value> type_value = Value::Deserialize(type);
  absl::StatusOr<Value> constant_value = Value::Deserialize(constant);
  if (!type_value.ok() || !constant_value.ok()) return nullptr;
  expression->kind = static_cast<ExpressionKind>(kind);
  expression->result_type = type_value->type();
  expression->column_index = static_cast<int>(column) - 1;
  expression->constant = *std::move(constant_value);
  expression->arithmetic = static_cast<ArithmeticOp>(arithmetic);
  expression->comparison = static_cast<ComparisonOp>(comparison);
  expression->function = static_cast<FunctionId>(function);
  expression->negated = (flags & 1) != 0;
  expression->has_else = (flags & 2) != 0;
  for (uint32_t i = 0; i < children; ++i) {
    std::unique_ptr<BoundExpression> child = ReadExpression(in, depth + 1);
    if (child == nullptr) return nullptr;
    expression->children.push_back(std::move(child));
  }
  return expression;
}

}  // namespace

std::string EncodeScanFragment(const ScanFragment& fragment) {
  ByteWriter out;
  out.PutString(fragment.table);
  out.PutU32(static_cast<uint32_t>(fragment.columns.size()));
  for (int column : fragment.columns) out.PutU32(static_cast<uint32_t>(column));
  out.PutU8(fragment.filter != nullptr ? 1 : 0);
  if (fragment.filter != nullptr) WriteExpression(out, *fragment.filter);
  return out.Release();
}

absl::StatusOr<ScanFragment> DecodeScanFragment(std::string_view message) {
  ByteReader in(message);
  ScanFragment fragment;
  uint32_t columns = 0;
  uint8_t has_filter = 0;
  auto malformed = [] { return absl::DataLossError("malformed scan fragment from the master"); };
  if (!in.GetString(&fragment.table) || !in.GetU32(&columns) || columns > message.size()) return malformed();
  for (uint32_t i = 0; i < columns; ++i) {
    uint32_t column = 0;
    if (!in.GetU32(&column)) return malformed();
    fragment.columns.push_back(static_cast<int>(column));
  }
  if (!in.GetU8(&has_filter)) return malformed();
  if (has_filter) {
    fragment.filter = ReadExpression(in, 0);
    if (fragment.filter == nullptr) return malformed();
  }
  if (!in.AtEnd()) return malformed();
  return fragment;
}

}  // namespace tessera::distributed
