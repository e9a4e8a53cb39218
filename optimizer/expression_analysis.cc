#include "optimizer/expression_analysis.h"

#include <algorithm>

namespace tessera::optimizer {

bool ExpressionsEqual(const BoundExpression& a, const BoundExpression& b) {
  if (a.kind != b.kind || !(a.result_type == b.result_type) || a.children.size() != b.children.size()) {
    return false;
  }
  switch (a.kind) {
    case ExpressionKind::kColumn:
      if (a.column_index != b.column_index) return false;
      break;
    case ExpressionKind::kConstant:
      if (!(a.constant == b.constant)) return false;
      break;
    case ExpressionKind::kArithmetic:
      if (a.arithmetic != b.arithmetic) return false;
      break;
    case ExpressionKind::kComparison:
      if (a.comparison != b.comparison) return false;
      break;
    case ExpressionKind::kFunction:
      if (a.function != b.function) return false;
      break;
    case ExpressionKind::kIsNull:
    case ExpressionKind::kLike:
    case ExpressionKind::kInList:
      if (a.negated != b.negated) return false;
      break;
    case ExpressionKind::kCase:
      if (a.has_else != b.has_else) return false;
      break;
    default:
      break;
  }
  for (size_t i = 0; i < a.children.size(); ++i) {
    if (!ExpressionsEqual(*a.children[i], *b.children[i])) return false;
  }
  return true;
}

void CollectColumns(const BoundExpression& expression, std::vector<int>* columns) {
  if (expression.kind == ExpressionKind::kColumn) columns->push_back(expression.column_index);
  for (const auto& child : expression.children) CollectColumns(*child, columns);
}

bool ReferencesOnlyRange(const BoundExpression& expression, int begin, int end) {
  if (expression.kind == ExpressionKind::kColumn) {
    return expression.column_index >= begin && expression.column_index < end;
  }
  for (const auto& child : expression.children) {
    if (!ReferencesOnlyRange(*child, begin, end)) return false;
  }
  return true;
}

bool ReferencesRange(const BoundExpression& expression, int begin, int end) {
  if (expression.kind == ExpressionKind::kColumn) {
    return expression.column_index >= begin && expression.column_index < end;
  }
  for (const auto& child : expression.children) {
    if (ReferencesRange(*child, begin, end)) return true;
  }
  return false;
}

int MaxColumnIndex(const BoundExpression& expression) {
  int result = expression.kind == ExpressionKind::kColumn ? expression.column_index : -1;
  for (const auto& child : expression.children) result = std::max(result, MaxColumnIndex(*child));
  return result;
}

void RemapColumns(BoundExpression* expression, const std::function<int(int)>& mapping) {
  if (expression->kind == ExpressionKind::kColumn) expression->column_index = mapping(expression->column_index);
  for (auto& child : expression->children) RemapColumns(child.get(), mapping);
}

void ShiftColumns(BoundExpression* expression, int delta) {
  if (delta == 0) return;
  RemapColumns(expression, [delta](int index) { return index + delta; });
}

ExpressionPtr SubstituteColumns(const BoundExpression& expression,
                                const std::vector<const BoundExpression*>& replacements) {
  if (expression.kind == ExpressionKind::kColumn && expression.column_index >= 0 &&
      expression.column_index < static_cast<int>(replacements.size()) &&
      replacements[expression.column_index] != nullptr) {
    return replacements[expression.column_index]->Clone();
  }
  auto copy = std::make_unique<BoundExpression>();
  copy->kind = expression.kind;
  copy->result_type = expression.result_type;
  copy->column_index = expression.column_index;
  copy->constant = expression.constant;
  copy->arithmetic = expression.arithmetic;
  copy->comparison = expression.comparison;
  copy->function = expression.function;
  copy->negated = expression.negated;
  copy->has_else = expression.has_else;
  for (const auto& child : expression.children) copy->children.push_back(SubstituteColumns(*child, replacements));
  return copy;
}

namespace {

void SplitInto(ExpressionPtr expression, std::vector<ExpressionPtr>* terms) {
  if (expression == nullptr) return;
  if (expression->kind == ExpressionKind::kAnd) {
    for (auto& child : expression->children) SplitInto(std::move(child), terms);
    return;
  }
  terms->push_back(std::move(expression));
}

ExpressionPtr Combine(ExpressionKind kind, std::vector<ExpressionPtr> terms) {
  if (terms.empty()) return nullptr;
  if (terms.size() == 1) return std::move(terms[0]);
  std::vector<ExpressionPtr> flat;
  for (auto& term : terms) {
    if (term->kind == kind) {
      for (auto& child : term->children) flat.push_back(std::move(child));
    } else {
      flat.push_back(std::move(term));
    }
  }
  auto result = std::make_unique<BoundExpression>();
  result->kind = kind;
  result->result_type = Type::Boolean();
  result->children = std::move(flat);
  return result;
}

}  // namespace

std::vector<ExpressionPtr> SplitConjuncts(ExpressionPtr expression) {
  std::vector<ExpressionPtr> terms;
  SplitInto(std::move(expression), &terms);
  return terms;
}

ExpressionPtr CombineConjuncts(std::vector<ExpressionPtr> terms) {
  return Combine(ExpressionKind::kAnd, std::move(terms));
}

ExpressionPtr CombineDisjuncts(std::vector<ExpressionPtr> terms) {
  return Combine(ExpressionKind::kOr, std::move(terms));
}

void FactorCommonConjuncts(ExpressionPtr predicate, std::vector<ExpressionPtr>* out) {
  if (predicate->kind != ExpressionKind::kOr) {
    if (!IsBooleanConstant(*predicate, true)) out->push_back(std::move(predicate));
    return;
  }
  std::vector<std::vector<ExpressionPtr>> branches;
  for (auto& child : predicate->children) branches.push_back(SplitConjuncts(child->Clone()));
  std::vector<ExpressionPtr> common;
  for (ExpressionPtr& term : branches[0]) {
    bool everywhere = true;
    for (size_t b = 1; b < branches.size() && everywhere; ++b) {
      bool found = false;
      for (const ExpressionPtr& other : branches[b]) found |= ExpressionsEqual(*term, *other);
      everywhere = found;
    }
    bool duplicate = false;
    for (const ExpressionPtr& c : common) duplicate |= ExpressionsEqual(*c, *term);
    if (everywhere && !duplicate) common.push_back(term->Clone());
  }
  if (common.empty()) {
    out->push_back(std::move(predicate));
    return;
  }
  std::vector<ExpressionPtr> remaining;
  bool implied = false;
  for (std::vector<ExpressionPtr>& branch : branches) {
    std::vector<ExpressionPtr> rest;
    for (ExpressionPtr& term : branch) {
      bool is_common = false;
      for (const ExpressionPtr& c : common) is_common |= ExpressionsEqual(*c, *term);
      if (!is_common) rest.push_back(std::move(term));
    }
    if (rest.empty()) implied = true;
    remaining.push_back(CombineConjuncts(std::move(rest)));
  }
  for (ExpressionPtr& c : common) out->push_back(std::move(c));
  if (!implied) out->push_back(CombineDisjuncts(std::move(remaining)));
}

bool StrictIn(const BoundExpression& e, int begin, int end) {
  switch (e.kind) {
    case ExpressionKind::kColumn:
      return e.column_index >= begin && e.column_index < end;
    case ExpressionKind::kCast:
    case ExpressionKind::kArithmetic:
      for (const auto& child : e.children) {
        if (StrictIn(*child, begin, end)) return true;
      }
      return false;
    case ExpressionKind::kFunction:
      if (e.function == FunctionId::kCoalesce || e.function == FunctionId::kNullIf ||
          e.function == FunctionId::kConcat || e.function == FunctionId::kGreatest ||
          e.function == FunctionId::kLeast) {
        return false;  // NULL arguments are replaced or skipped
      }
      for (const auto& child : e.children) {
        if (StrictIn(*child, begin, end)) return true;
      }
      return false;
    default:
      return false;
  }
}

bool RejectsNulls(const BoundExpression& e, int begin, int end) {
  switch (e.kind) {
    case ExpressionKind::kComparison:
      return StrictIn(*e.children[0], begin, end) || StrictIn(*e.children[1], begin, end);
    case ExpressionKind::kLike:
    case ExpressionKind::kInList:
      return StrictIn(*e.children[0], begin, end);
    case ExpressionKind::kIsNull:
      return e.negated && StrictIn(*e.children[0], begin, end);
    case ExpressionKind::kAnd:
      for (const auto& child : e.children) {
        if (RejectsNulls(*child, begin, end)) return true;
      }
      return false;
    case ExpressionKind::kOr:
      for (const auto& child : e.children) {
        if (!RejectsNulls(*child, begin, end)) return false;
      }
      return true;
    default:
      return false;
  }
}

bool IsNullable(const BoundExpression& e, const std::vector<OutputColumn>& input) {
  auto any_child = [&](size_t begin) {
    for (size_t i = begin; i < e.children.size(); ++i) {
      if (IsNullable(*e.children[i], input)) return true;
    }
    return false;
  };
  switch (e.kind) {
    case ExpressionKind::kColumn:
      return e.column_index < 0 || e.column_index >= static_cast<int>(input.size()) || input[e.column_index].nullable;
    case ExpressionKind::kConstant:
      return e.constant.is_null();
    case ExpressionKind::kIsNull:
      return false;
    case ExpressionKind::kCase: {
      if (!e.has_else) return true;
      const size_t pairs = (e.children.size() - 1) / 2;
      for (size_t i = 0; i < pairs; ++i) {
        if (IsNullable(*e.children[2 * i + 1], input)) return true;
      }
      return IsNullable(*e.children.back(), input);
    }
    case ExpressionKind::kFunction:
      if (e.function == FunctionId::kNullIf) return true;
      if (e.function == FunctionId::kCoalesce) {
        for (const auto& child : e.children) {
          if (!IsNullable(*child, input)) return false;
        }
        return true;
      }
      return any_child(0);
    default:
      return any_child(0);
  }
}

bool IsBooleanConstant(const BoundExpression& expression, bool value) {
  return expression.kind == ExpressionKind::kConstant && !expression.constant.is_null() &&
         expression.constant.type().id() == TypeId::kBoolean && expression.constant.AsBool() == value;
}

bool IsColumn(const BoundExpression& expression) { return expression.kind == ExpressionKind::kColumn; }

ExpressionPtr MakeInputColumn(const std::vector<OutputColumn>& input, int index) {
  return MakeColumn(index, input[index].type);
}

}  // namespace tessera::optimizer
