#include "optimizer/plan_validation.h"

#include "absl/strings/str_cat.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/expression_format.h"
#include "optimizer/logical_window.h"

namespace tessera::optimizer {
namespace {

absl::Status Invalid(const LogicalOperator& node, std::string_view problem) {
  return absl::InternalError(absl::StrCat("invalid plan at '", node.Describe(), "': ", std::string(problem)));
}

absl::Status CheckExpression(const LogicalOperator& node, const BoundExpression& expression, int width,
                             std::string_view what) {
  std::vector<int> columns;
  CollectColumns(expression, &columns);
  for (int column : columns) {
    if (column < 0 || column >= width) {
      return Invalid(node, absl::StrCat(std::string(what), " references column #", column, " of ", width));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPredicate(const LogicalOperator& node, const BoundExpression& predicate, int width,
                            std::string_view what) {
  if (predicate.result_type.id() != TypeId::kBoolean) {
    return Invalid(node, absl::StrCat(std::string(what), " is not BOOLEAN"));
  }
  return CheckExpression(node, predicate, width, what);
}

size_t ExpectedChildren(LogicalOperatorKind kind) {
  switch (kind) {
    case LogicalOperatorKind::kTableScan:
    case LogicalOperatorKind::kValues:
    case LogicalOperatorKind::kSeries:
      return 0;
    case LogicalOperatorKind::kJoin:
    case LogicalOperatorKind::kSetOperation:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

absl::Status ValidatePlan(const LogicalOperator& node) {
  if (node.children.size() != ExpectedChildren(node.kind())) return Invalid(node, "wrong number of children");
  for (const auto& child : node.children) {
    absl::Status status = ValidatePlan(*child);
    if (!status.ok()) return status;
  }
  const int input = node.children.empty() ? 0 : node.children[0]->output_width();
  switch (node.kind()) {
    case LogicalOperatorKind::kTableScan: {
      const auto& scan = node.As<TableScan>();
      for (int column : scan.columns) {
        if (column < 0 || column >= static_cast<int>(scan.table->columns.size())) {
          return Invalid(node, "scan of a column the table does not have");
        }
      }
      if (scan.filter != nullptr) return CheckPredicate(node, *scan.filter, node.output_width(), "filter");
      return absl::OkStatus();
    }
    case LogicalOperatorKind::kFilter:
      return CheckPredicate(node, *node.As<Filter>().predicate, input, "predicate");
    case LogicalOperatorKind::kProject: {
      const auto& project = node.As<Project>();
      if (project.names.size() != project.expressions.size()) return Invalid(node, "names do not match expressions");
      for (const auto& expression : project.expressions) {
        absl::Status status = CheckExpression(node, *expression, input, "expression");
        if (!status.ok()) return status;
      }
      return absl::OkStatus();
    }
    case LogicalOperatorKind::kJoin: {
      const auto& join = node.As<Join>();
      const int right = node.children[1]->output_width();
      if (join.left_keys.size() != join.right_keys.size()) return Invalid(node, "unpaired keys");
      if (join.join_type == JoinType::kCross && (!join.left_keys.empty() || join.residual != nullptr)) {
        return Invalid(node, "cross join with a condition");
      }
      if (join.null_aware && (join.join_type != JoinType::kAnti || join.left_keys.empty())) {
        return Invalid(node, "null-aware flag on a join that is not an anti join with keys");
      }
      if (join.build_left &&
          (!(join.join_type == JoinType::kLeftOuter || join.join_type == JoinType::kSemi ||
             (join.join_type == JoinType::kAnti && !join.null_aware)) ||
           join.left_keys.empty() || join.lip_filter_id >= 0 || join.enforce_single_row || join.exact_filter)) {
        return Invalid(node, "built on its left side, which only a left outer, semi or anti join with keys may be");
      }
      if (join.filter_probe_by_build_keys) {
        bool columns = join.build_left;
        for (const auto& key : join.right_keys) columns = columns && key->kind == ExpressionKind::kColumn;
        if (!columns) return Invalid(node, "probe filter by build keys without a left build side on column keys");
      }
      for (size_t i = 0; i < join.left_keys.size(); ++i) {
        if (!(join.left_keys[i]->result_type == join.right_keys[i]->result_type)) {
          return Invalid(node, absl::StrCat("key pair ", i, " has types ", join.left_keys[i]->result_type.ToString(),
                                            " and ", join.right_keys[i]->result_type.ToString()));
        }
        absl::Status status = CheckExpression(node, *join.left_keys[i], input, "left key");
        if (status.ok()) status = CheckExpression(node, *join.right_keys[i], right, "right key");
        if (!status.ok()) return status;
      }
      if (join.residual != nullptr) return CheckPredicate(node, *join.residual, input + right, "residual");
      return absl::OkStatus();
    }
    case LogicalOperatorKind::kAggregate: {
      const auto& aggregate = node.As<Aggregate>();
      if (aggregate.group_names.size() != aggregate.group_by.size()) return Invalid(node, "group names missing");
      for (const auto& key : aggregate.group_by) {
        absl::Status status = CheckExpression(node, *key, input, "group key");
        if (!status.ok()) return status;
      }
      for (const AggregateCall& call : aggregate.aggregates) {
        if ((call.argument == nullptr) != (call.function == AggregateKind::kCountStar)) {
          return Invalid(node, "aggregate argument missing or unexpected");
        }
        if (call.argument != nullptr) {
          absl::Status status = CheckExpression(node, *call.argument, input, "aggregate argument");
          if (!status.ok()) return status;
        }
      }
      return absl::OkStatus();
    }
    case LogicalOperatorKind::kSort:
      for (const SortKey& key : node.As<Sort>().keys) {
        absl::Status status = CheckExpression(node, *key.expression, input, "sort key");
        if (!status.ok()) return status;
      }
      return absl::OkStatus();
    case LogicalOperatorKind::kSetOperation: {
      const auto& left = node.children[0]->output();
      const auto& right = node.children[1]->output();
      if (left.size() != right.size()) return Invalid(node, "inputs of different widths");
      for (size_t i = 0; i < left.size(); ++i) {
        if (!(left[i].type == right[i].type)) return Invalid(node, absl::StrCat("column ", i, " types differ"));
      }
      return absl::OkStatus();
    }
    case LogicalOperatorKind::kSeries:
      if (node.As<Series>().step == 0 || node.As<Series>().count < 0) return Invalid(node, "step 0 or negative count");
      return absl::OkStatus();
    case LogicalOperatorKind::kValues: {
      const auto& values = node.As<Values>();
      for (const auto& row : values.rows) {
        if (row.size() != values.columns.size()) return Invalid(node, "row of the wrong width");
      }
      return absl::OkStatus();
    }
    case LogicalOperatorKind::kWindow: {
      const auto& window = node.As<Window>();
      absl::Status status = absl::OkStatus();
      VisitWindowExpressions(window, [&](const BoundExpression& expression) {
        if (status.ok()) status = CheckExpression(node, expression, input, "window expression");
      });
      if (status.ok() && window.limit_call >= 0 && !WindowTopNApplies(window, window.limit_call)) {
        return Invalid(node, "a top-N limit on a call other than row_number or rank, or beside other functions");
      }
      return status;
    }
    case LogicalOperatorKind::kLimit:
    case LogicalOperatorKind::kDistinct:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace tessera::optimizer
