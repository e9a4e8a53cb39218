#include "expressions/expression_evaluator.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "expressions/in_list_probe.h"
#include "expressions/like_matcher.h"
#include "expressions/vector_kernels.h"
#include "glog/logging.h"

namespace tessera {
namespace {

// One compiled expression node. Nodes live in a flat array (children before parents); a node's result vector
// is reused across batches.
struct Node {
  ExpressionKind kind = ExpressionKind::kConstant;
  Type type;
  std::vector<int> children;

  ColumnVector vector;  // owned result (or constant, or zero-copy view)
  const ColumnVector* output = nullptr;
  Value constant;  // kConstant
  int column_index = -1;

  ArithmeticOp arithmetic = ArithmeticOp::kAdd;
  FunctionId function = FunctionId::kCoalesce;
  bool negated = false;
  bool has_else = false;

  UnaryKernel unary = nullptr;
  BinaryKernel binary = nullptr;
  ScalarFunctionPlan scalar;                   // IsScalarFunction nodes
  std::vector<const ColumnVector*> arguments;  // their evaluated arguments (scratch)
  bool zero_copy = false;
  ComparisonPlan comparison;
  KernelContext context;
  std::string text;
  std::unique_ptr<LikeMatcher> like;
  std::unique_ptr<InListProbe> in_list;
  bool list_has_null = false;

  // Scratch row lists and a per-row byte mask, sized kVectorSize for the node kinds that need them.
  std::vector<uint32_t> rows_a, rows_b, rows_c;
  std::vector<uint8_t> mask;

  bool is_constant() const { return kind == ExpressionKind::kConstant; }
  void NeedScratch() {
    rows_a.resize(kVectorSize);
    rows_b.resize(kVectorSize);
    rows_c.resize(kVectorSize);
    mask.resize(kVectorSize);
  }
};

bool IsBooleanValueTrue(const Value& value) {
  return !value.is_null() && value.type().id() == TypeId::kBoolean && value.AsBool();
}

int IntegerDigits(const Type& type) {
  switch (type.id()) {
    case TypeId::kInteger:
      return 10;
    case TypeId::kBigInt:
      return 19;
    case TypeId::kDecimal:
      return type.precision() - type.scale();
    default:
      return 0;
  }
}

// The type both operands of a comparison (or NULLIF) are cast to when they differ.
absl::StatusOr<Type> CommonType(const Type& a, const Type& b) {
  if (a == b) return a;
  if (a.id() == TypeId::kNull) return b;
  if (b.id() == TypeId::kNull) return a;
  if (a.IsString() && b.IsString()) return Type::Varchar();
  if (a.IsNumeric() && b.IsNumeric()) {
    if (a.id() == TypeId::kDouble || b.id() == TypeId::kDouble) return Type::Double();
    if (a.id() == TypeId::kDecimal || b.id() == TypeId::kDecimal) {
      const int scale =
          std::max(a.id() == TypeId::kDecimal ? a.scale() : 0, b.id() == TypeId::kDecimal ? b.scale() : 0);
      const int precision = std::min(kMaxDecimalPrecision, std::max(IntegerDigits(a), IntegerDigits(b)) + scale);
      return Type::Decimal(precision, std::min(scale, precision));
    }
    return Type::BigInt();
  }
  if ((a.id() == TypeId::kDate || a.id() == TypeId::kTimestamp) &&
      (b.id() == TypeId::kDate || b.id() == TypeId::kTimestamp)) {
    return Type::Timestamp();
  }
  return absl::InvalidArgumentError(absl::StrCat("cannot compare ", a.ToString(), " with ", b.ToString()));
}

// Whether values of `from` can be used as `to` without conversion (same physical form, same meaning).
bool SameRepresentation(const Type& from, const Type& to) {
  if (from == to) return true;
  if (from.IsString() && to.IsString()) return true;
  return from.id() == TypeId::kDecimal && to.id() == TypeId::kDecimal && from.scale() == to.scale() &&
         from.precision() <= to.precision() && from.IsWideDecimal() == to.IsWideDecimal();
}

// Removes from sorted a[0..na) the rows in sorted b[0..nb) (a subset of a); returns the new count.
uint32_t SubtractRows(uint32_t* a, uint32_t na, const uint32_t* b, uint32_t nb) {
  uint32_t k = 0, j = 0;
  for (uint32_t i = 0; i < na; ++i) {
    const uint32_t r = a[i];
    while (j < nb && b[j] < r) ++j;
    if (j < nb && b[j] == r) continue;
    a[k++] = r;
  }
  return k;
}

// Materializes the active rows into `buffer` (an explicit list even for the dense case).
ActiveRows CopyActiveRows(ActiveRows rows, uint32_t* buffer) {
  if (rows.rows == nullptr) {
    std::iota(buffer, buffer + rows.count, 0u);
  } else if (rows.rows != buffer) {
    std::memcpy(buffer, rows.rows, rows.count * sizeof(uint32_t));
  }
  return ActiveRows{buffer, rows.count};
}

// The relative cost of evaluating one term of an AND that cannot fail (a comparison, IS NULL, IN or LIKE over
// column references and constants), or -1 for a term that might (arithmetic, casts, functions: an earlier term
// may be what guards it, as in `x <> 0 AND 10 / x > 1`).
int TermCost(const BoundExpression& e) {
  auto plain = [](const BoundExpression& operand) {
    return operand.kind == ExpressionKind::kColumn || operand.kind == ExpressionKind::kConstant;
  };
  for (const auto& child : e.children) {
    if (!plain(*child)) return -1;
  }
  const bool strings = !e.children.empty() && e.children[0]->result_type.IsString();
  switch (e.kind) {
    case ExpressionKind::kComparison:
      return strings ? 2 : 0;
    case ExpressionKind::kIsNull:
      return 1;
    case ExpressionKind::kInList:
      return strings ? 2 : 1;
    case ExpressionKind::kLike:
      return 3;
    default:
      return -1;
  }
}

// The order in which AND evaluates its terms: cheap fixed-width comparisons before IN lists, string
// comparisons and LIKE (TPC-H Q12's `l_shipmode IN ('MAIL', 'SHIP')` on all 6 M rows before the date
// comparisons that keep 1 in 7; Q16's NOT LIKE before `p_size IN (...)`). AND is commutative; a term that might
// fail is a barrier: terms are reordered only within the runs between such terms, so a guard stays in front.
std::vector<int> TermOrder(const BoundExpression& conjunction) {
  std::vector<int> order(conjunction.children.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::vector<int> cost(order.size());
  for (size_t i = 0; i < order.size(); ++i) cost[i] = TermCost(*conjunction.children[i]);
  for (size_t begin = 0; begin < order.size();) {
    if (cost[begin] < 0) {
      ++begin;
      continue;
    }
    size_t end = begin;
    while (end < order.size() && cost[end] >= 0) ++end;
    std::stable_sort(order.begin() + begin, order.begin() + end, [&](int a, int b) { return cost[a] < cost[b]; });
    begin = end;
  }
  return order;
}

}  // namespace

class ExpressionEvaluator::Program {
 public:
  explicit Program(const BoundExpression& expr) {
    root_ = Compile(expr);
    result_type_ = nodes_[root_]->type;
  }

  const absl::Status& status() const { return status_; }
  const Type& result_type() const { return result_type_; }

  absl::StatusOr<const ColumnVector*> Evaluate(const Batch& input, const SelectionVector* selection) {
    TESSERA_RETURN_IF_ERROR(Begin(input));
    const ActiveRows rows =
        selection != nullptr ? ActiveRows{selection->rows.data(), selection->count} : ActiveRows{nullptr, input.size};
    TESSERA_RETURN_IF_ERROR(Eval(root_, rows));
    const ColumnVector* output = nodes_[root_]->output;
    if (output->size() != input.size) {
      // A constant holds kVectorSize rows; callers (e.g. COUNT over the result) rely on size() == batch size.
      sized_view_.set_type(output->type());
      sized_view_.BorrowFixed(output->raw_values(), output->validity(), output->validity_bit_offset(), input.size);
      output = &sized_view_;
    }
    return output;
  }

  absl::Status Filter(const Batch& input, const SelectionVector* in, SelectionVector* out) {
    TESSERA_RETURN_IF_ERROR(Begin(input));
    if (out->rows.size() < kVectorSize) out->rows.resize(kVectorSize);
    const ActiveRows rows = in != nullptr ? ActiveRows{in->rows.data(), in->count} : ActiveRows{nullptr, input.size};
    uint32_t count = 0;
    TESSERA_RETURN_IF_ERROR(Select(root_, rows, out->rows.data(), &count));
    out->count = count;
    return absl::OkStatus();
  }

 private:
  absl::Status Begin(const Batch& input) {
    if (!status_.ok()) return status_;
    if (input.size > kVectorSize) {
      return absl::InvalidArgumentError(absl::StrCat("batch of ", input.size, " rows exceeds ", kVectorSize));
    }
    batch_ = &input;
    batch_size_ = input.size;
    return absl::OkStatus();
  }

  // ---------------------------------------------------------------- compilation
  void Fail(absl::Status status) {
    if (status_.ok()) status_ = std::move(status);
  }

  int NewNode(ExpressionKind kind, const Type& type) {
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->type = type;
    node->vector.set_type(type);
    if (kind != ExpressionKind::kColumn) node->vector.Reserve(kVectorSize);
    node->context.result_type = type;
    node->context.text = &node->text;
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }

  void MakeConstant(Node& node, Value value) {
    node.kind = ExpressionKind::kConstant;
    node.children.clear();
    node.constant = std::move(value);
    node.vector.set_type(node.type);
    node.vector.ResetOwned(kVectorSize);
    FillConstant(node.constant, kVectorSize, &node.vector);
    node.output = &node.vector;
  }

  int AddConstant(Value value, const Type& type) {
    const int id = NewNode(ExpressionKind::kConstant, type);
    MakeConstant(*nodes_[id], std::move(value));
    return id;
  }

  int AddNull(const Type& type) { return AddConstant(Value::Null(type), type); }

  // Evaluates a node whose children are all constants once, and turns it into a constant. A failure (e.g.
  // 1/0) leaves the node alone: the error then surfaces only if a row actually evaluates it (CASE may skip
  // it).
  void TryFold(int id) {
    Node& node = *nodes_[id];
    if (node.is_constant() || node.kind == ExpressionKind::kColumn || !status_.ok()) return;
    for (int child : node.children) {
      if (!nodes_[child]->is_constant()) return;
    }
    batch_ = nullptr;
    batch_size_ = 1;
    if (!Eval(id, ActiveRows{nullptr, 1}).ok()) return;
    Value value = node.output->GetValue(0);
    if (!value.is_null() && value.type() != node.type) {
      absl::StatusOr<Value> cast = value.CastTo(node.type);
      if (!cast.ok()) return;
      value = *std::move(cast);
    }
    MakeConstant(node, std::move(value));
  }

  int AddCast(int child, const Type& to) {
    const Type from = nodes_[child]->type;
    if (from.id() == TypeId::kNull || (nodes_[child]->is_constant() && nodes_[child]->constant.is_null())) {
      return AddNull(to);
    }
    absl::StatusOr<CastPlan> plan = PlanCast(from, to);
    const int id = NewNode(ExpressionKind::kCast, to);
    Node& node = *nodes_[id];
    node.children = {child};
    node.context.left_type = from;
    if (!plan.ok()) {
      Fail(plan.status());
      return AddNull(to);
    }
    node.unary = plan->kernel;
    node.zero_copy = plan->zero_copy;
    TryFold(id);
    return id;
  }

  // Node `id` as type `type` (a NULL of any type becomes a NULL of `type`).
  int Coerce(int id, const Type& type) {
    const Type& have = nodes_[id]->type;
    if (have.id() == TypeId::kNull) return AddNull(type);
    if (SameRepresentation(have, type)) return id;
    return AddCast(id, type);
  }

  int CompileAs(const BoundExpression& e, const Type& type) { return Coerce(Compile(e), type); }

  int Compile(const BoundExpression& e) {
    switch (e.kind) {
      case ExpressionKind::kColumn: {
        if (e.column_index < 0) Fail(absl::InvalidArgumentError("column reference without an index"));
        const int id = NewNode(ExpressionKind::kColumn, e.result_type);
        nodes_[id]->column_index = e.column_index;
        return id;
      }
      case ExpressionKind::kConstant: {
        Type type = e.result_type;
        Value value = e.constant;
        if (type.id() == TypeId::kNull) type = value.type();
        if (!value.is_null() && value.type() != type) {
          absl::StatusOr<Value> cast = value.CastTo(type);
          if (!cast.ok()) {
            Fail(cast.status());
            return AddNull(type);
          }
          value = *std::move(cast);
        }
        return AddConstant(std::move(value), type);
      }
      case ExpressionKind::kCast:
        if (!CheckArity(e, 1, 1)) return AddNull(e.result_type);
        return AddCast(Compile(*e.children[0]), e.result_type);
      case ExpressionKind::kArithmetic:
        return CompileArithmetic(e);
      case ExpressionKind::kComparison:
        return CompileComparison(e);
      case ExpressionKind::kAnd:
      case ExpressionKind::kOr:
      case ExpressionKind::kNot: {
        if (!CheckArity(e, 1, e.kind == ExpressionKind::kNot ? 1 : SIZE_MAX)) return AddNull(Type::Boolean());
        const int id = NewNode(e.kind, Type::Boolean());
        std::vector<int> children;
        if (e.kind == ExpressionKind::kAnd) {
          for (int term : TermOrder(e)) children.push_back(CompileAs(*e.children[term], Type::Boolean()));
        } else {
          for (const auto& child : e.children) children.push_back(CompileAs(*child, Type::Boolean()));
        }
        nodes_[id]->children = std::move(children);
        if (e.kind != ExpressionKind::kNot) nodes_[id]->NeedScratch();
        TryFold(id);
        return id;
      }
      case ExpressionKind::kIsNull: {
        if (!CheckArity(e, 1, 1)) return AddNull(Type::Boolean());
        const int child = Compile(*e.children[0]);
        const int id = NewNode(ExpressionKind::kIsNull, Type::Boolean());
        nodes_[id]->children = {child};
        nodes_[id]->negated = e.negated;
        TryFold(id);
        return id;
      }
      case ExpressionKind::kLike:
        return CompileLike(e);
      case ExpressionKind::kInList:
        return CompileInList(e);
      case ExpressionKind::kCase:
        return CompileCase(e);
      case ExpressionKind::kFunction:
        return CompileFunction(e);
    }
    Fail(absl::InvalidArgumentError("unknown expression kind"));
    return AddNull(e.result_type);
  }

  bool CheckArity(const BoundExpression& e, size_t min, size_t max) {
    if (e.children.size() >= min && e.children.size() <= max) return true;
    Fail(absl::InvalidArgumentError(
        absl::StrCat("malformed expression ", e.ToString(), ": ", e.children.size(), " operands")));
    return false;
  }

  int CompileArithmetic(const BoundExpression& e) {
    const Type& result = e.result_type;
    if (e.arithmetic == ArithmeticOp::kNegate) {
      if (!CheckArity(e, 1, 1)) return AddNull(result);
      const int child = CompileAs(*e.children[0], result);
      if (result.id() == TypeId::kNull) return AddNull(result);
      absl::StatusOr<UnaryKernel> kernel = PlanNegate(result);
      if (!kernel.ok()) {
        Fail(kernel.status());
        return AddNull(result);
      }
      const int id = NewNode(ExpressionKind::kArithmetic, result);
      Node& node = *nodes_[id];
      node.arithmetic = ArithmeticOp::kNegate;
      node.children = {child};
      node.unary = *kernel;
      node.context.left_type = result;
      TryFold(id);
      return id;
    }
    if (!CheckArity(e, 2, 2)) return AddNull(result);
    int left = Compile(*e.children[0]);
    int right = Compile(*e.children[1]);
    if (result.id() == TypeId::kNull || nodes_[left]->type.id() == TypeId::kNull ||
        nodes_[right]->type.id() == TypeId::kNull) {
      return AddNull(result);
    }
    absl::StatusOr<BinaryKernel> kernel = PlanArithmetic(e.arithmetic, nodes_[left]->type, nodes_[right]->type, result);
    if (!kernel.ok()) {
      // Implicit casts the binder may have left out: operands to the result type (integers to DECIMAL(10|19,
      // 0) for a DECIMAL result, whose kernels handle any operand scales; DATE to TIMESTAMP for a TIMESTAMP
      // result).
      auto coerce = [&](int id) {
        const Type& have = nodes_[id]->type;
        if (result.id() == TypeId::kDecimal) {
          if (have.id() == TypeId::kInteger) return Coerce(id, Type::Decimal(10, 0));
          if (have.id() == TypeId::kBigInt) return Coerce(id, Type::Decimal(19, 0));
          if (have.id() == TypeId::kDecimal) return id;
          return Coerce(id, result);
        }
        if (result.id() == TypeId::kTimestamp || result.id() == TypeId::kDate) {
          if (have.id() == TypeId::kDate && result.id() == TypeId::kTimestamp) return Coerce(id, result);
          return id;
        }
        return Coerce(id, result);
      };
      left = coerce(left);
      right = coerce(right);
      kernel = PlanArithmetic(e.arithmetic, nodes_[left]->type, nodes_[right]->type, result);
      if (!kernel.ok()) {
        Fail(kernel.status());
        return AddNull(result);
      }
    }
    const int id = NewNode(ExpressionKind::kArithmetic, result);
    Node& node = *nodes_[id];
    node.arithmetic = e.arithmetic;
    node.children = {left, right};
    node.binary = *kernel;
    node.context.left_type = nodes_[left]->type;
    node.context.right_type = nodes_[right]->type;
    TryFold(id);
    return id;
  }

  int CompileComparison(const BoundExpression& e) {
    if (!CheckArity(e, 2, 2)) return AddNull(Type::Boolean());
    int left = Compile(*e.children[0]);
    int right = Compile(*e.children[1]);
    ComparisonOp op = e.comparison;
    absl::StatusOr<Type> common = CommonType(nodes_[left]->type, nodes_[right]->type);
    if (!common.ok()) {
      Fail(common.status());
      return AddNull(Type::Boolean());
    }
    if (common->id() == TypeId::kNull) return AddNull(Type::Boolean());
    left = Coerce(left, *common);
    right = Coerce(right, *common);
    const bool left_constant = nodes_[left]->is_constant();
    const bool right_constant = nodes_[right]->is_constant();
    if ((left_constant && nodes_[left]->constant.is_null()) || (right_constant && nodes_[right]->constant.is_null())) {
      return AddNull(Type::Boolean());
    }
    if (left_constant && !right_constant) {
      std::swap(left, right);
      op = FlipComparison(op);
    }
    absl::StatusOr<ComparisonPlan> plan = PlanComparison(op, *common, nodes_[right]->is_constant());
    if (!plan.ok()) {
      Fail(plan.status());
      return AddNull(Type::Boolean());
    }
    const int id = NewNode(ExpressionKind::kComparison, Type::Boolean());
    nodes_[id]->children = {left, right};
    nodes_[id]->comparison = *plan;
    TryFold(id);
    return id;
  }

  int CompileLike(const BoundExpression& e) {
    if (!CheckArity(e, 2, 2)) return AddNull(Type::Boolean());
    int input = Compile(*e.children[0]);
    if (!nodes_[input]->type.IsString()) input = Coerce(input, Type::Varchar());
    const int pattern = Compile(*e.children[1]);
    const Node& pattern_node = *nodes_[pattern];
    if (!pattern_node.is_constant()) {
      Fail(absl::InvalidArgumentError("LIKE pattern must be a constant"));
      return AddNull(Type::Boolean());
    }
    if (pattern_node.constant.is_null() || nodes_[input]->type.id() == TypeId::kNull) return AddNull(Type::Boolean());
    if (!pattern_node.type.IsString()) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat("LIKE pattern must be a string, not ", pattern_node.type.ToString())));
      return AddNull(Type::Boolean());
    }
    const int id = NewNode(ExpressionKind::kLike, Type::Boolean());
    nodes_[id]->children = {input};
    nodes_[id]->negated = e.negated;
    nodes_[id]->like = std::make_unique<LikeMatcher>(pattern_node.constant.AsString());
    TryFold(id);
    return id;
  }

  int CompileInList(const BoundExpression& e) {
    if (!CheckArity(e, 2, SIZE_MAX)) return AddNull(Type::Boolean());
    const int input = Compile(*e.children[0]);
    const Type type = nodes_[input]->type;
    if (type.id() == TypeId::kNull) return AddNull(Type::Boolean());
    std::vector<Value> values;
    bool has_null = false;
    for (size_t i = 1; i < e.children.size(); ++i) {
      const int item = Compile(*e.children[i]);
      if (!nodes_[item]->is_constant()) {
        Fail(absl::InvalidArgumentError("IN list items must be constants"));
        return AddNull(Type::Boolean());
      }
      const Value& value = nodes_[item]->constant;
      if (value.is_null()) {
        has_null = true;
        continue;
      }
      // Strings compare bytewise whatever their declared length, so a long item is no error (it matches
      // nothing).
      absl::StatusOr<Value> cast = value.CastTo(type.IsString() ? Type::Varchar() : type);
      if (!cast.ok()) {
        Fail(cast.status());
        return AddNull(Type::Boolean());
      }
      // A numeric item that the input's type cannot hold exactly (5.5 for an INTEGER column) matches nothing.
      if (value.type().IsNumeric() && type.IsNumeric() && cast->Compare(value) != 0) continue;
      values.push_back(*std::move(cast));
    }
    absl::StatusOr<std::unique_ptr<InListProbe>> probe = InListProbe::Make(type, values);
    if (!probe.ok()) {
      Fail(probe.status());
      return AddNull(Type::Boolean());
    }
    const int id = NewNode(ExpressionKind::kInList, Type::Boolean());
    Node& node = *nodes_[id];
    node.children = {input};
    node.negated = e.negated;
    node.in_list = *std::move(probe);
    node.list_has_null = has_null;
    node.NeedScratch();
    TryFold(id);
    return id;
  }

  int CompileCase(const BoundExpression& e) {
    const size_t pairs_end = e.has_else ? e.children.size() - 1 : e.children.size();
    if (e.children.size() < 2 || pairs_end % 2 != 0) {
      Fail(absl::InvalidArgumentError(absl::StrCat("malformed CASE expression ", e.ToString())));
      return AddNull(e.result_type);
    }
    std::vector<int> children;
    for (size_t i = 0; i < e.children.size(); ++i) {
      const bool is_condition = i < pairs_end && i % 2 == 0;
      children.push_back(CompileAs(*e.children[i], is_condition ? Type::Boolean() : e.result_type));
    }
    const int id = NewNode(ExpressionKind::kCase, e.result_type);
    nodes_[id]->children = std::move(children);
    nodes_[id]->has_else = e.has_else;
    nodes_[id]->NeedScratch();
    TryFold(id);
    return id;
  }

  int CompileFunction(const BoundExpression& e) {
    const Type& result = e.result_type;
    const int id = NewNode(ExpressionKind::kFunction, result);
    nodes_[id]->function = e.function;
    std::vector<int> children;
    auto fail = [&](absl::Status status) {
      Fail(std::move(status));
      return AddNull(result);
    };
    switch (e.function) {
      case FunctionId::kExtractYear:
      case FunctionId::kExtractMonth:
      case FunctionId::kExtractDay:
      case FunctionId::kExtractQuarter:
      case FunctionId::kExtractDayOfWeek:
      case FunctionId::kExtractDayOfYear:
      case FunctionId::kExtractWeek: {
        if (!CheckArity(e, 1, 1)) return AddNull(result);
        children.push_back(Compile(*e.children[0]));
        const Type input = nodes_[children[0]]->type;
        if (input.id() == TypeId::kNull) return AddNull(result);
        absl::StatusOr<UnaryKernel> kernel = PlanExtract(e.function, input, result);
        if (!kernel.ok()) return fail(kernel.status());
        nodes_[id]->unary = *kernel;
        break;
      }
      case FunctionId::kSubstring:
        if (!CheckArity(e, 2, 3)) return AddNull(result);
        children.push_back(CompileAs(*e.children[0], Type::Varchar()));
        for (size_t i = 1; i < e.children.size(); ++i) children.push_back(CompileAs(*e.children[i], Type::BigInt()));
        break;
      case FunctionId::kCoalesce:
        if (!CheckArity(e, 1, SIZE_MAX)) return AddNull(result);
        for (const auto& child : e.children) children.push_back(CompileAs(*child, result));
        nodes_[id]->NeedScratch();
        break;
      case FunctionId::kNullIf: {
        if (!CheckArity(e, 2, 2)) return AddNull(result);
        children.push_back(CompileAs(*e.children[0], result));
        children.push_back(CompileAs(*e.children[1], result));
        if (result.id() == TypeId::kNull) return AddNull(result);
        absl::StatusOr<ComparisonPlan> plan = PlanComparison(ComparisonOp::kEqual, result, false);
        if (!plan.ok()) return fail(plan.status());
        nodes_[id]->comparison = *plan;
        nodes_[id]->NeedScratch();
        break;
      }
      case FunctionId::kAbs: {
        if (!CheckArity(e, 1, 1)) return AddNull(result);
        children.push_back(CompileAs(*e.children[0], result));
        if (result.id() == TypeId::kNull) return AddNull(result);
        absl::StatusOr<UnaryKernel> kernel = PlanAbs(result);
        if (!kernel.ok()) return fail(kernel.status());
        nodes_[id]->unary = *kernel;
        break;
      }
      case FunctionId::kUpper:
      case FunctionId::kLower:
        if (!CheckArity(e, 1, 1)) return AddNull(result);
        children.push_back(CompileAs(*e.children[0], Type::Varchar()));
        nodes_[id]->unary = e.function == FunctionId::kUpper ? UpperKernel() : LowerKernel();
        break;
      case FunctionId::kLength: {
        if (!CheckArity(e, 1, 1)) return AddNull(result);
        children.push_back(CompileAs(*e.children[0], Type::Varchar()));
        absl::StatusOr<UnaryKernel> kernel = PlanLength(result);
        if (!kernel.ok()) return fail(kernel.status());
        nodes_[id]->unary = *kernel;
        break;
      }
      default: {  // IsScalarFunction: arguments as the binder typed them
        if (!CheckArity(e, 1, SIZE_MAX)) return AddNull(result);
        std::vector<Type> types;
        for (const auto& child : e.children) {
          children.push_back(Compile(*child));
          types.push_back(nodes_[children.back()]->type);
        }
        if (result.id() == TypeId::kNull) return AddNull(result);
        absl::StatusOr<ScalarFunctionPlan> plan = PlanScalarFunction(e.function, types, result);
        if (!plan.ok()) return fail(plan.status());
        nodes_[id]->scalar = *plan;
        nodes_[id]->arguments.resize(children.size());
        nodes_[id]->context.result_type = result;
        break;
      }
    }
    nodes_[id]->children = std::move(children);
    if (!nodes_[id]->children.empty()) nodes_[id]->context.left_type = nodes_[nodes_[id]->children[0]]->type;
    TryFold(id);
    return id;
  }

  // ---------------------------------------------------------------- evaluation
  // Prepares node `n`'s owned result for this batch.
  ColumnVector& ResetResult(Node& n) {
    n.vector.set_type(n.type);
    n.vector.ResetOwned(batch_size_);
    n.output = &n.vector;
    return n.vector;
  }

  const ColumnVector& Output(int id) const { return *nodes_[id]->output; }

  absl::Status Eval(int id, ActiveRows rows) {
    Node& n = *nodes_[id];
    switch (n.kind) {
      case ExpressionKind::kConstant:
        n.output = &n.vector;
        return absl::OkStatus();
      case ExpressionKind::kColumn:
        if (batch_ == nullptr || n.column_index >= static_cast<int>(batch_->columns.size())) {
          return absl::InvalidArgumentError(absl::StrCat("expression refers to column #", n.column_index,
                                                         " but the batch has ",
                                                         batch_ == nullptr ? 0 : batch_->columns.size(), " columns"));
        }
        n.output = &batch_->columns[n.column_index];
        return absl::OkStatus();
      case ExpressionKind::kCast: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        const ColumnVector& in = Output(n.children[0]);
        if (n.zero_copy) {
          n.vector.set_type(n.type);
          n.vector.BorrowFixed(in.raw_values(), in.validity(), in.validity_bit_offset(), in.size());
          n.output = &n.vector;
          return absl::OkStatus();
        }
        ColumnVector& out = ResetResult(n);
        out.BorrowValidityFrom(in);
        return n.unary(n.context, in, rows, &out);
      }
      case ExpressionKind::kArithmetic: {
        if (n.unary != nullptr) {
          TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
          const ColumnVector& in = Output(n.children[0]);
          ColumnVector& out = ResetResult(n);
          out.BorrowValidityFrom(in);
          return n.unary(n.context, in, rows, &out);
        }
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        TESSERA_RETURN_IF_ERROR(Eval(n.children[1], rows));
        const ColumnVector& left = Output(n.children[0]);
        const ColumnVector& right = Output(n.children[1]);
        ColumnVector& out = ResetResult(n);
        PropagateNulls(left, &right, rows, &out);
        return n.binary(n.context, left, right, rows, &out);
      }
      case ExpressionKind::kComparison: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        TESSERA_RETURN_IF_ERROR(Eval(n.children[1], rows));
        const ColumnVector& left = Output(n.children[0]);
        const ColumnVector& right = Output(n.children[1]);
        ColumnVector& out = ResetResult(n);
        PropagateNulls(left, &right, rows, &out);
        n.comparison.values(left, right, rows, out.mutable_values<uint8_t>());
        return absl::OkStatus();
      }
      case ExpressionKind::kAnd:
      case ExpressionKind::kOr:
        return EvalConjunction(n, rows);
      case ExpressionKind::kNot: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        const ColumnVector& in = Output(n.children[0]);
        ColumnVector& out = ResetResult(n);
        out.BorrowValidityFrom(in);
        const uint8_t* a = in.values<uint8_t>();
        uint8_t* o = out.mutable_values<uint8_t>();
        ForEachRow(rows, [&](uint32_t r) { o[r] = a[r] == 0; });
        return absl::OkStatus();
      }
      case ExpressionKind::kIsNull: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        const ColumnVector& in = Output(n.children[0]);
        ColumnVector& out = ResetResult(n);
        uint8_t* o = out.mutable_values<uint8_t>();
        const bool negated = n.negated;
        if (!in.has_nulls()) {
          ForEachRow(rows, [&](uint32_t r) { o[r] = negated; });
        } else {
          ForEachRow(rows, [&](uint32_t r) { o[r] = in.IsNull(r) != negated; });
        }
        return absl::OkStatus();
      }
      case ExpressionKind::kLike: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        const ColumnVector& in = Output(n.children[0]);
        ColumnVector& out = ResetResult(n);
        out.BorrowValidityFrom(in);
        n.like->Values(in, rows, n.negated, out.mutable_values<uint8_t>());
        return absl::OkStatus();
      }
      case ExpressionKind::kInList: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        const ColumnVector& in = Output(n.children[0]);
        ColumnVector& out = ResetResult(n);
        out.BorrowValidityFrom(in);
        uint8_t* o = out.mutable_values<uint8_t>();
        n.in_list->Probe(in, rows, o);
        const bool negated = n.negated;
        ForEachRow(rows, [&](uint32_t r) { o[r] = (o[r] != 0) != negated; });
        if (n.list_has_null) {
          // No match against a list holding NULL is NULL (x IN (1, NULL) with x = 2), for IN and NOT IN
          // alike.
          ForEachRow(rows, [&](uint32_t r) {
            if (!in.IsNull(r) && (o[r] != 0) == negated) out.SetNull(r);
          });
        }
        return absl::OkStatus();
      }
      case ExpressionKind::kCase:
        return EvalCase(n, rows);
      case ExpressionKind::kFunction:
        return EvalFunction(n, rows);
    }
    return absl::InternalError("unknown expression kind");
  }

  // AND / OR with three-valued logic. Each operand is evaluated only on the rows not yet decided (FALSE
  // decides AND, TRUE decides OR); a NULL operand leaves the row undecided but remembers that it cannot
  // become the neutral value.
  absl::Status EvalConjunction(Node& n, ActiveRows rows) {
    const bool is_and = n.kind == ExpressionKind::kAnd;
    const uint8_t neutral = is_and ? 1 : 0;
    ColumnVector& out = ResetResult(n);
    uint8_t* o = out.mutable_values<uint8_t>();
    uint8_t* saw_null = n.mask.data();
    ForEachRow(rows, [&](uint32_t r) {
      o[r] = neutral;
      saw_null[r] = 0;
    });
    ActiveRows active = CopyActiveRows(rows, n.rows_a.data());
    uint32_t* undecided = n.rows_a.data();
    for (int child : n.children) {
      if (active.count == 0) break;
      TESSERA_RETURN_IF_ERROR(Eval(child, active));
      const ColumnVector& c = Output(child);
      const uint8_t* v = c.values<uint8_t>();
      uint32_t k = 0;
      for (uint32_t i = 0; i < active.count; ++i) {
        const uint32_t r = undecided[i];
        if (c.IsNull(r)) {
          saw_null[r] = 1;
          undecided[k++] = r;
        } else if ((v[r] != 0) != (neutral != 0)) {
          o[r] = !neutral;
        } else {
          undecided[k++] = r;
        }
      }
      active.count = k;
    }
    for (uint32_t i = 0; i < active.count; ++i) {
      if (saw_null[undecided[i]]) out.SetNull(undecided[i]);
    }
    return absl::OkStatus();
  }

  absl::Status EvalCase(Node& n, ActiveRows rows) {
    ColumnVector& out = ResetResult(n);
    ActiveRows remaining = CopyActiveRows(rows, n.rows_a.data());
    uint32_t* matched = n.rows_b.data();
    const size_t pairs_end = n.has_else ? n.children.size() - 1 : n.children.size();
    for (size_t i = 0; i + 2 <= pairs_end; i += 2) {
      if (remaining.count == 0) break;
      uint32_t count = 0;
      TESSERA_RETURN_IF_ERROR(Select(n.children[i], remaining, matched, &count));
      if (count == 0) continue;
      const ActiveRows hit{matched, count};
      TESSERA_RETURN_IF_ERROR(Eval(n.children[i + 1], hit));
      CopyRows(Output(n.children[i + 1]), hit, &out);
      remaining.count = SubtractRows(n.rows_a.data(), remaining.count, matched, count);
    }
    if (remaining.count > 0) {
      if (n.has_else) {
        TESSERA_RETURN_IF_ERROR(Eval(n.children.back(), remaining));
        CopyRows(Output(n.children.back()), remaining, &out);
      } else {
        ForEachRow(remaining, [&](uint32_t r) { out.SetNull(r); });
      }
    }
    return absl::OkStatus();
  }

  absl::Status EvalFunction(Node& n, ActiveRows rows) {
    if (n.scalar.kernel != nullptr) {
      for (size_t i = 0; i < n.children.size(); ++i) {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[i], rows));
        n.arguments[i] = &Output(n.children[i]);
      }
      ColumnVector& out = ResetResult(n);
      if (!n.scalar.handles_nulls) {
        for (const ColumnVector* argument : n.arguments) {
          if (!argument->has_nulls()) continue;
          ForEachRow(rows, [&](uint32_t r) {
            if (argument->IsNull(r)) out.SetNull(r);
          });
        }
      }
      return n.scalar.kernel(n.context, n.arguments.data(), n.arguments.size(), rows, &out);
    }
    switch (n.function) {
      case FunctionId::kCoalesce: {
        ColumnVector& out = ResetResult(n);
        ActiveRows remaining = CopyActiveRows(rows, n.rows_a.data());
        uint32_t* found = n.rows_b.data();
        for (int child : n.children) {
          if (remaining.count == 0) break;
          TESSERA_RETURN_IF_ERROR(Eval(child, remaining));
          const ColumnVector& c = Output(child);
          uint32_t hits = 0, misses = 0;
          for (uint32_t i = 0; i < remaining.count; ++i) {
            const uint32_t r = n.rows_a[i];
            if (c.IsNull(r)) {
              n.rows_a[misses++] = r;
            } else {
              found[hits++] = r;
            }
          }
          CopyRows(c, ActiveRows{found, hits}, &out);
          remaining.count = misses;
        }
        ForEachRow(remaining, [&](uint32_t r) { out.SetNull(r); });
        return absl::OkStatus();
      }
      case FunctionId::kNullIf: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        TESSERA_RETURN_IF_ERROR(Eval(n.children[1], rows));
        const ColumnVector& a = Output(n.children[0]);
        const ColumnVector& b = Output(n.children[1]);
        ColumnVector& out = ResetResult(n);
        CopyRows(a, rows, &out);
        uint8_t* equal = n.mask.data();
        n.comparison.values(a, b, rows, equal);
        ForEachRow(rows, [&](uint32_t r) {
          if (!a.IsNull(r) && !b.IsNull(r) && equal[r]) out.SetNull(r);
        });
        return absl::OkStatus();
      }
      case FunctionId::kSubstring: {
        for (int child : n.children) TESSERA_RETURN_IF_ERROR(Eval(child, rows));
        const ColumnVector& string = Output(n.children[0]);
        const ColumnVector& start = Output(n.children[1]);
        const ColumnVector* length = n.children.size() > 2 ? &Output(n.children[2]) : nullptr;
        ColumnVector& out = ResetResult(n);
        PropagateNulls(string, &start, rows, &out);
        if (length != nullptr && length->has_nulls()) {
          ForEachRow(rows, [&](uint32_t r) {
            if (length->IsNull(r)) out.SetNull(r);
          });
        }
        return SubstringKernel(string, start, length, rows, &out);
      }
      default: {
        // Unary functions: EXTRACT, ABS, UPPER, LOWER, LENGTH.
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        const ColumnVector& in = Output(n.children[0]);
        ColumnVector& out = ResetResult(n);
        out.BorrowValidityFrom(in);
        return n.unary(n.context, in, rows, &out);
      }
    }
  }

  // Writes the active rows where node `id` is TRUE to `out` (ascending; may alias rows.rows).
  absl::Status Select(int id, ActiveRows rows, uint32_t* out, uint32_t* count) {
    Node& n = *nodes_[id];
    switch (n.kind) {
      case ExpressionKind::kConstant:
        if (IsBooleanValueTrue(n.constant)) {
          CopyActiveRows(rows, out);
          *count = rows.count;
        } else {
          *count = 0;
        }
        return absl::OkStatus();
      case ExpressionKind::kComparison:
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        TESSERA_RETURN_IF_ERROR(Eval(n.children[1], rows));
        *count = n.comparison.select(Output(n.children[0]), Output(n.children[1]), rows, out);
        return absl::OkStatus();
      case ExpressionKind::kAnd: {
        // Successive filters: each term sees only the rows all earlier terms kept.
        ActiveRows current = rows;
        for (int child : n.children) {
          uint32_t kept = 0;
          TESSERA_RETURN_IF_ERROR(Select(child, current, out, &kept));
          current = ActiveRows{out, kept};
          if (kept == 0) break;
        }
        if (current.rows != out) CopyActiveRows(current, out);
        *count = current.count;
        return absl::OkStatus();
      }
      case ExpressionKind::kOr: {
        const ActiveRows all = CopyActiveRows(rows, n.rows_a.data());
        ActiveRows remaining = CopyActiveRows(all, n.rows_b.data());
        uint32_t* hits = n.rows_c.data();
        uint8_t* selected = n.mask.data();
        ForEachRow(all, [&](uint32_t r) { selected[r] = 0; });
        for (int child : n.children) {
          if (remaining.count == 0) break;
          uint32_t found = 0;
          TESSERA_RETURN_IF_ERROR(Select(child, remaining, hits, &found));
          for (uint32_t i = 0; i < found; ++i) selected[hits[i]] = 1;
          remaining.count = SubtractRows(n.rows_b.data(), remaining.count, hits, found);
        }
        uint32_t k = 0;
        ForEachRow(all, [&](uint32_t r) {
          out[k] = r;
          k += selected[r];
        });
        *count = k;
        return absl::OkStatus();
      }
      case ExpressionKind::kIsNull: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        const ColumnVector& in = Output(n.children[0]);
        uint32_t k = 0;
        const bool negated = n.negated;
        ForEachRow(rows, [&](uint32_t r) {
          out[k] = r;
          k += in.IsNull(r) != negated;
        });
        *count = k;
        return absl::OkStatus();
      }
      case ExpressionKind::kLike:
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        *count = n.like->Select(Output(n.children[0]), rows, n.negated, out);
        return absl::OkStatus();
      case ExpressionKind::kInList: {
        TESSERA_RETURN_IF_ERROR(Eval(n.children[0], rows));
        const ColumnVector& in = Output(n.children[0]);
        uint8_t* match = n.mask.data();
        n.in_list->Probe(in, rows, match);
        // TRUE: IN with a match; NOT IN without a match and without a NULL in the list.
        const bool negated = n.negated;
        if (negated && n.list_has_null) {
          *count = 0;
          return absl::OkStatus();
        }
        uint32_t k = 0;
        ForEachRow(rows, [&](uint32_t r) {
          out[k] = r;
          k += !in.IsNull(r) && (match[r] != 0) != negated;
        });
        *count = k;
        return absl::OkStatus();
      }
      default: {
        TESSERA_RETURN_IF_ERROR(Eval(id, rows));
        const ColumnVector& result = *n.output;
        const uint8_t* v = result.values<uint8_t>();
        uint32_t k = 0;
        if (!result.has_nulls()) {
          ForEachRow(rows, [&](uint32_t r) {
            out[k] = r;
            k += v[r] != 0;
          });
        } else {
          ForEachRow(rows, [&](uint32_t r) {
            out[k] = r;
            k += !result.IsNull(r) && v[r] != 0;
          });
        }
        *count = k;
        return absl::OkStatus();
      }
    }
  }

  absl::Status status_;
  std::vector<std::unique_ptr<Node>> nodes_;
  int root_ = 0;
  Type result_type_;
  const Batch* batch_ = nullptr;
  uint32_t batch_size_ = 0;
  ColumnVector sized_view_;  // the root's result re-sized to the batch (constants)
};

ExpressionEvaluator::ExpressionEvaluator(const BoundExpression& expr) : program_(std::make_unique<Program>(expr)) {}
ExpressionEvaluator::~ExpressionEvaluator() = default;
ExpressionEvaluator::ExpressionEvaluator(ExpressionEvaluator&&) noexcept = default;
ExpressionEvaluator& ExpressionEvaluator::operator=(ExpressionEvaluator&&) noexcept = default;

const absl::Status& ExpressionEvaluator::status() const { return program_->status(); }
const Type& ExpressionEvaluator::result_type() const { return program_->result_type(); }

absl::StatusOr<const ColumnVector*> ExpressionEvaluator::Evaluate(const Batch& input,
                                                                  const SelectionVector* selection) {
  return program_->Evaluate(input, selection);
}

absl::Status ExpressionEvaluator::Filter(const Batch& input, const SelectionVector* in, SelectionVector* out) {
  return program_->Filter(input, in, out);
}

}  // namespace tessera
