#include "optimizer/logical_window.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "optimizer/expression_format.h"

namespace tessera::optimizer {

WindowCall WindowCall::Clone() const {
  WindowCall copy;
  copy.function = function;
  copy.argument = argument == nullptr ? nullptr : argument->Clone();
  copy.parameter = parameter;
  copy.default_value = default_value;
  copy.frame = frame;
  copy.result_type = result_type;
  copy.name = name;
  return copy;
}

void Window::RecomputeOutput() {
  output_ = children[0]->output();
  for (const WindowCall& call : calls) {
    const bool nullable = call.function != WindowFunction::kCount && call.function != WindowFunction::kCountStar &&
                          call.function != WindowFunction::kRowNumber && call.function != WindowFunction::kRank &&
                          call.function != WindowFunction::kDenseRank &&
                          call.function != WindowFunction::kPercentRank && call.function != WindowFunction::kCumeDist &&
                          call.function != WindowFunction::kNtile;
    output_.push_back({call.name, call.result_type, nullable, ""});
  }
}

std::unique_ptr<LogicalOperator> Window::Clone() const {
  auto copy = std::make_unique<Window>();
  for (const ExpressionPtr& key : partition_by) copy->partition_by.push_back(key->Clone());
  for (const SortKey& key : order_by) copy->order_by.push_back(key.Clone());
  for (const WindowCall& call : calls) copy->calls.push_back(call.Clone());
  copy->limit_call = limit_call;
  copy->limit = limit;
  CloneChildrenInto(*copy);
  return copy;
}

bool WindowTopNApplies(const Window& window, int call) {
  if (call < 0 || call >= static_cast<int>(window.calls.size())) return false;
  const WindowFunction limited = window.calls[call].function;
  if (limited != WindowFunction::kRowNumber && limited != WindowFunction::kRank) return false;
  return std::all_of(window.calls.begin(), window.calls.end(), [](const WindowCall& other) {
    return other.function == WindowFunction::kRowNumber || other.function == WindowFunction::kRank ||
           other.function == WindowFunction::kDenseRank;
  });
}

void VisitWindowExpressions(Window& window, const std::function<void(ExpressionPtr&)>& visit) {
  for (ExpressionPtr& key : window.partition_by) visit(key);
  for (SortKey& key : window.order_by) visit(key.expression);
  for (WindowCall& call : window.calls) {
    if (call.argument != nullptr) visit(call.argument);
  }
}

void VisitWindowExpressions(const Window& window, const std::function<void(const BoundExpression&)>& visit) {
  for (const ExpressionPtr& key : window.partition_by) visit(*key);
  for (const SortKey& key : window.order_by) visit(*key.expression);
  for (const WindowCall& call : window.calls) {
    if (call.argument != nullptr) visit(*call.argument);
  }
}

std::string Window::Describe() const {
  const std::vector<std::string> names = DisplayNames(children[0]->output());
  std::vector<std::string> partition;
  for (const ExpressionPtr& key : partition_by) partition.push_back(FormatExpression(*key, names));
  std::vector<std::string> order;
  for (const SortKey& key : order_by) {
    std::string item = absl::StrCat(FormatExpression(*key.expression, names), key.ascending ? " ASC" : " DESC");
    if (key.nulls_first != !key.ascending) item += key.nulls_first ? " NULLS FIRST" : " NULLS LAST";
    order.push_back(std::move(item));
  }
  std::vector<std::string> functions;
  for (const WindowCall& call : calls) {
    std::vector<std::string> arguments;
    if (call.argument != nullptr) arguments.push_back(FormatExpression(*call.argument, names));
    if (call.function == WindowFunction::kCountStar) arguments.push_back("*");
    if (call.function == WindowFunction::kNtile || call.function == WindowFunction::kNthValue ||
        ((call.function == WindowFunction::kLag || call.function == WindowFunction::kLead) &&
         (call.parameter != 1 || !call.default_value.is_null()))) {
      arguments.push_back(absl::StrCat(call.parameter));
    }
    if (!call.default_value.is_null()) arguments.push_back(FormatConstant(call.default_value));
    std::string text = absl::StrCat(WindowFunctionName(call.function), "(", absl::StrJoin(arguments, ", "), ")");
    if (WindowFunctionUsesFrame(call.function)) {
      absl::StrAppend(&text, " ", WindowFrameText(call.frame));
    }
    functions.push_back(std::move(text));
  }
  std::string text = absl::StrCat("Window partition=[", absl::StrJoin(partition, ", "), "] order=[",
                                  absl::StrJoin(order, ", "), "] functions=[", absl::StrJoin(functions, ", "), "]");
  if (limit_call >= 0 && limit_call < static_cast<int>(functions.size()))
    absl::StrAppend(&text, " top ", limit, " per partition by ", functions[limit_call]);
  return text;
}

}  // namespace tessera::optimizer
