#pragma once
// Builds batches from Values and runs expressions over them, for the expressions/ unit tests.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "catalog/value.h"
#include "expressions/batch.h"
#include "expressions/bound_expression.h"
#include "expressions/expression_evaluator.h"
#include "expressions/vector_kernels.h"
#include "gtest/gtest.h"

namespace tessera {
namespace testing {

// An owned vector of `type` holding `values` (each NULL or of `type`).
inline ColumnVector MakeVector(const Type& type, const std::vector<Value>& values) {
  ColumnVector vector(type);
  vector.ResetOwned(static_cast<uint32_t>(values.size()));
  for (uint32_t r = 0; r < values.size(); ++r) {
    const Value& v = values[r];
    if (v.is_null()) {
      vector.SetNull(r);
      continue;
    }
    switch (PhysicalTypeOf(type)) {
      case PhysicalType::kBool:
        vector.mutable_values<uint8_t>()[r] = v.AsBool();
        break;
      case PhysicalType::kInt32:
        vector.mutable_values<int32_t>()[r] = static_cast<int32_t>(v.AsInt64());
        break;
      case PhysicalType::kInt64:
        vector.mutable_values<int64_t>()[r] = static_cast<int64_t>(v.AsInt128());
        break;
      case PhysicalType::kInt128:
        vector.mutable_values<int128>()[r] = v.AsInt128();
        break;
      case PhysicalType::kDouble:
        vector.mutable_values<double>()[r] = v.AsDouble();
        break;
      case PhysicalType::kInterval:
        vector.mutable_values<Interval>()[r] = v.AsInterval();
        break;
      case PhysicalType::kString:
        vector.mutable_strings()[r] = vector.AppendToArena(v.AsString());
        break;
      case PhysicalType::kNone:
        break;
    }
  }
  return vector;
}

struct TestColumn {
  Type type;
  std::vector<Value> values;
};

inline Batch MakeBatch(const std::vector<TestColumn>& columns) {
  Batch batch;
  batch.size = columns.empty() ? 0 : static_cast<uint32_t>(columns[0].values.size());
  for (const TestColumn& column : columns) batch.columns.push_back(MakeVector(column.type, column.values));
  return batch;
}

inline Value Dec(const std::string& text, int precision, int scale) {
  return *Value::String(text).CastTo(Type::Decimal(precision, scale));
}
inline Value Str(const std::string& text) { return Value::String(text); }
inline Value Int(int32_t v) { return Value::Integer(v); }
inline Value Big(int64_t v) { return Value::BigInt(v); }
inline Value Dbl(double v) { return Value::Double(v); }
inline Value Bool(bool v) { return Value::Boolean(v); }
inline Value DateOf(const std::string& text) { return *Value::String(text).CastTo(Type::Date()); }
inline Value IntervalOf(const std::string& text) { return *Value::String(text).CastTo(Type::IntervalType()); }
inline Value Null(const Type& type) { return Value::Null(type); }

inline std::unique_ptr<BoundExpression> Col(int index, const Type& type) { return MakeColumn(index, type); }
inline std::unique_ptr<BoundExpression> Lit(Value value) { return MakeConstant(std::move(value)); }
inline std::unique_ptr<BoundExpression> Arith(ArithmeticOp op, std::unique_ptr<BoundExpression> l,
                                              std::unique_ptr<BoundExpression> r, const Type& type) {
  return MakeArithmetic(op, std::move(l), std::move(r), type);
}
inline std::unique_ptr<BoundExpression> Cmp(ComparisonOp op, std::unique_ptr<BoundExpression> l,
                                            std::unique_ptr<BoundExpression> r) {
  return MakeComparison(op, std::move(l), std::move(r));
}
template <typename... Terms>
std::unique_ptr<BoundExpression> Conj(ExpressionKind kind, Terms... terms) {
  std::vector<std::unique_ptr<BoundExpression>> list;
  (list.push_back(std::move(terms)), ...);
  return MakeConjunction(kind, std::move(list));
}
template <typename... Args>
std::unique_ptr<BoundExpression> Fn(FunctionId function, const Type& type, Args... args) {
  std::vector<std::unique_ptr<BoundExpression>> list;
  (list.push_back(std::move(args)), ...);
  return MakeFunction(function, std::move(list), type);
}

// Text of the result rows (all rows of the batch, or the selected ones): Value::ToString, "NULL" for NULL.
inline std::vector<std::string> Texts(const ColumnVector& vector, uint32_t size, const SelectionVector* selection) {
  std::vector<std::string> out;
  const uint32_t count = selection != nullptr ? selection->count : size;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t row = selection != nullptr ? selection->rows[i] : i;
    out.push_back(vector.GetValue(row).ToString());
  }
  return out;
}

// Evaluates `expr` and returns its results as text; fails the test on an error.
inline std::vector<std::string> Eval(const BoundExpression& expr, const Batch& batch,
                                     const SelectionVector* selection = nullptr) {
  ExpressionEvaluator evaluator(expr);
  absl::StatusOr<const ColumnVector*> result = evaluator.Evaluate(batch, selection);
  EXPECT_TRUE(result.ok()) << result.status() << " in " << expr.ToString();
  if (!result.ok()) return {};
  return Texts(**result, batch.size, selection);
}

// The error of evaluating `expr` (OK if it succeeds).
inline absl::Status EvalStatus(const BoundExpression& expr, const Batch& batch,
                               const SelectionVector* selection = nullptr) {
  ExpressionEvaluator evaluator(expr);
  return evaluator.Evaluate(batch, selection).status();
}

inline std::vector<uint32_t> FilterRows(const BoundExpression& expr, const Batch& batch,
                                        const SelectionVector* in = nullptr) {
  ExpressionEvaluator evaluator(expr);
  SelectionVector out;
  absl::Status status = evaluator.Filter(batch, in, &out);
  EXPECT_TRUE(status.ok()) << status << " in " << expr.ToString();
  return std::vector<uint32_t>(out.rows.begin(), out.rows.begin() + out.count);
}

inline SelectionVector Selection(const std::vector<uint32_t>& rows) {
  SelectionVector selection;
  selection.rows = rows;
  selection.rows.resize(kVectorSize);
  selection.count = static_cast<uint32_t>(rows.size());
  return selection;
}

inline std::string Message(const absl::Status& status) { return std::string(status.message()); }

}  // namespace testing
}  // namespace tessera
