#include "optimizer/partial_aggregation.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "optimizer/type_rules.h"

namespace tessera::optimizer {
namespace {

AggregateCall MakeCall(AggregateKind function, ExpressionPtr argument, std::string name) {
  AggregateCall call;
  call.function = function;
  Type argument_type;
  call.result_type = *AggregateResultType(function, argument->result_type, &argument_type);
  call.argument = std::move(argument);
  call.name = std::move(name);
  return call;
}

ExpressionPtr CastIfNeeded(ExpressionPtr expression, Type type) {
  if (expression->result_type == type) return expression;
  return MakeCast(std::move(expression), type);
}

}  // namespace

bool Decomposable(const AggregateCall& call) {
  switch (call.function) {
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      return true;
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
    case AggregateKind::kSum:
    case AggregateKind::kAvg:
      return !call.distinct;
    default:
      return false;
  }
}

void AddPartials(const AggregateCall& call, std::vector<AggregateCall>* partials) {
  if (call.function == AggregateKind::kAvg) {
    partials->push_back(MakeCall(AggregateKind::kSum, call.argument->Clone(), "partial_sum"));
    partials->push_back(MakeCall(AggregateKind::kCount, call.argument->Clone(), "partial_count"));
    return;
  }
  AggregateCall partial = call.Clone();
  partial.distinct = false;  // MIN / MAX (DISTINCT x) = MIN / MAX (x)
  partials->push_back(std::move(partial));
}

AggregateCall MergeCall(AggregateKind function, int column, Type type) {
  const AggregateKind merge =
      function == AggregateKind::kMin || function == AggregateKind::kMax ? function : AggregateKind::kSum;
  return MakeCall(merge, MakeColumn(column, type), absl::StrCat("merge_", column));
}

ExpressionPtr FinalValue(const AggregateCall& call, const std::vector<OutputColumn>& merged, int first) {
  ExpressionPtr value = MakeColumn(first, merged[first].type);
  switch (call.function) {
    case AggregateKind::kCountStar:
    case AggregateKind::kCount: {
      // The sum of counts over no finer groups (the empty set over empty input) is NULL, the count 0.
      std::vector<ExpressionPtr> arguments;
      const Type type = value->result_type;
      arguments.push_back(std::move(value));
      arguments.push_back(MakeConstant(*Value::BigInt(0).CastTo(type)));
      return CastIfNeeded(MakeFunction(FunctionId::kCoalesce, std::move(arguments), type), call.result_type);
    }
    case AggregateKind::kAvg: {
      ExpressionPtr count = MakeCast(MakeColumn(first + 1, merged[first + 1].type), Type::Double());
      std::vector<ExpressionPtr> arguments;
      arguments.push_back(std::move(count));
      arguments.push_back(MakeConstant(Value::Double(0)));
      ExpressionPtr divisor = MakeFunction(FunctionId::kNullIf, std::move(arguments), Type::Double());
      return CastIfNeeded(MakeArithmetic(ArithmeticOp::kDivide, MakeCast(std::move(value), Type::Double()),
                                         std::move(divisor), Type::Double()),
                          call.result_type);
    }
    default:
      return CastIfNeeded(std::move(value), call.result_type);
  }
}

LogicalOperatorPtr MakePartialAggregate(const Aggregate& aggregate) {
  auto partial = std::make_unique<Aggregate>();
  for (const ExpressionPtr& key : aggregate.group_by) partial->group_by.push_back(key->Clone());
  partial->group_names = aggregate.group_names;
  for (const AggregateCall& call : aggregate.aggregates) AddPartials(call, &partial->aggregates);
  partial->children.push_back(aggregate.children[0]->Clone());
  partial->RecomputeOutput();
  return partial;
}

LogicalOperatorPtr MergePartialAggregates(const Aggregate& aggregate, LogicalOperatorPtr partials) {
  const int keys = static_cast<int>(aggregate.group_by.size());
  const std::vector<OutputColumn> input = partials->output();
  auto merge = std::make_unique<Aggregate>();
  for (int k = 0; k < keys; ++k) merge->group_by.push_back(MakeColumn(k, input[k].type));
  merge->group_names = aggregate.group_names;
  // The partials' functions in order (AddPartials: AVG's SUM then COUNT).
  std::vector<AggregateCall> partial_calls;
  std::vector<int> first_partial;
  for (const AggregateCall& call : aggregate.aggregates) {
    first_partial.push_back(keys + static_cast<int>(partial_calls.size()));
    AddPartials(call, &partial_calls);
  }
  for (size_t p = 0; p < partial_calls.size(); ++p) {
    const int column = keys + static_cast<int>(p);
    merge->aggregates.push_back(MergeCall(partial_calls[p].function, column, input[column].type));
  }
  merge->children.push_back(std::move(partials));
  merge->RecomputeOutput();
  const std::vector<OutputColumn> merged = merge->output();
  std::vector<ExpressionPtr> expressions;
  std::vector<std::string> names;
  for (int k = 0; k < keys; ++k) {
    expressions.push_back(MakeColumn(k, merged[k].type));
    names.push_back(aggregate.group_names[k]);
  }
  for (size_t j = 0; j < aggregate.aggregates.size(); ++j) {
    expressions.push_back(FinalValue(aggregate.aggregates[j], merged, first_partial[j]));
    names.push_back(aggregate.aggregates[j].name);
  }
  return MakeProject(std::move(merge), std::move(expressions), std::move(names));
}

}  // namespace tessera::optimizer
