// Table functions in FROM, as DuckDB has them (checked with its Python package, 2.0.1):
//   generate_series(stop) / generate_series(start, stop[, step]): start, start + step, ... up to and including
//     stop (start 0 when only stop is given);
//   range(stop) / range(start, stop[, step]): the same without stop.
// The arguments are constant integers (INTEGER or BIGINT); one BIGINT column named after the function; a NULL
// argument gives no rows; step 0 is an error; a step whose sign points away from stop gives no rows. Bound as a
// Series node (SeriesOperator writes the rows in parallel work orders).
//   generate_series / range(start, stop, step) over TIMESTAMP (or DATE) bounds and an INTERVAL step: a TIMESTAMP
//     column, start, start + step, (start + step) + step, ... (the step added again and again, so months clamp
//     as DuckDB's do: 2024-01-31, 02-29, 03-29); the step's parts must not have mixed signs and must not all be 0.
//     At most kMaxTimestampSeriesRows rows, bound as a Values node.
//   read_csv('file' [, header = true, delim = ',', quote = '"', nullstr = '']) / read_csv_auto(...): the file's
//     rows with the dialect and types detected from its text (csv_text.h). The file is read while binding through
//     OptimizerOptions::read_file (which applies the server's file access policy and a size limit), and its rows
//     become a Values node.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "common/status_macros.h"
#include "optimizer/constant_folding.h"
#include "optimizer/csv_text.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/query_binder.h"
#include "optimizer/rules/rule_list.h"

namespace tessera::optimizer {
namespace {

// The number of values from start toward stop (step != 0), in int128 so that no bound overflows.
int128 SeriesLength(int64_t start, int64_t stop, int64_t step, bool inclusive) {
  const int128 distance = step > 0 ? int128{stop} - start : int128{start} - stop;
  const int128 stride = step > 0 ? int128{step} : -int128{step};
  if (inclusive ? distance < 0 : distance <= 0) return 0;
  return (distance - (inclusive ? 0 : 1)) / stride + 1;
}

}  // namespace

absl::StatusOr<BoundRelation> QueryBinder::BindTableFunction(const parser::TableRef& ref) {
  const std::string name = absl::AsciiStrToLower(ref.name);
  if (name == "read_csv" || name == "read_csv_auto") return BindReadCsv(ref, name);
  const bool inclusive = name == "generate_series";
  if (!inclusive && name != "range") {
    return ErrorAt(absl::StatusCode::kNotFound, ref.position,
                   absl::StrCat("table function '", ref.name, "' does not exist (table functions: generate_series, ",
                                "range, read_csv, read_csv_auto)"));
  }
  if (ref.arguments.empty() || ref.arguments.size() > 3) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat(name, " takes one to three arguments: (stop), (start, stop) or (start, stop, step)"));
  }
  // The arguments as 64-bit integers; a NULL one gives no rows.
  std::vector<int64_t> values;
  bool any_null = false;
  Scope empty;
  for (const auto& argument : ref.arguments) {
    ExpressionContext context;
    context.scope = &empty;
    context.clause = absl::StrCat("arguments of ", name);
    absl::StatusOr<ExpressionPtr> bound_or = BindExpression(*argument, context);
    if (absl::IsNotFound(bound_or.status()) && argument->kind == parser::ExprKind::kColumnRef) {
      return ErrorAt(absl::StatusCode::kUnimplemented, argument->position,
                     absl::StrCat("the arguments of ", name, " must be constants or columns of earlier FROM items"));
    }
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, std::move(bound_or));
    bound = FoldConstantsDeep(std::move(bound));
    const TypeId type = bound->result_type.id();
    if (type == TypeId::kTimestamp || type == TypeId::kDate || type == TypeId::kInterval) {
      return BindTimestampSeries(ref, name, inclusive);
    }
    const bool integer = type == TypeId::kInteger || type == TypeId::kBigInt || type == TypeId::kNull;
    if (bound->kind != ExpressionKind::kConstant || !integer) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, argument->position,
                     absl::StrCat("the arguments of ", name, " must be constant integers, not ",
                                  bound->kind != ExpressionKind::kConstant ? "an expression over columns"
                                                                           : bound->result_type.ToString()));
    }
    any_null |= bound->constant.is_null();
    values.push_back(bound->constant.is_null() ? 0 : bound->constant.AsInt64());
  }
  const int64_t start = values.size() == 1 ? 0 : values[0];
  const int64_t stop = values.size() == 1 ? values[0] : values[1];
  const int64_t step = values.size() == 3 ? values[2] : 1;
  if (step == 0 && !any_null) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.arguments[2]->position,
                   absl::StrCat("the step of ", name, " cannot be 0"));
  }
  const int128 count = any_null ? 0 : SeriesLength(start, stop, step, inclusive);
  if (count > INT64_MAX) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat(name, " would make more than ", INT64_MAX, " rows"));
  }
  auto series = std::make_unique<Series>();
  series->column_name = name;
  series->start = start;
  series->step = step == 0 ? 1 : step;
  series->count = static_cast<int64_t>(count);
  series->RecomputeOutput();
  BoundRelation relation;
  relation.names = series->OutputNames();
  relation.plan = std::move(series);
  return relation;
}

absl::StatusOr<BoundRelation> QueryBinder::BindTimestampSeries(const parser::TableRef& ref, const std::string& name,
                                                               bool inclusive) {
  if (ref.arguments.size() != 3) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat(name, " over timestamps takes (start, stop, step) with an INTERVAL step"));
  }
  Scope empty;
  std::vector<Value> values;
  for (size_t a = 0; a < 3; ++a) {
    const parser::ParsedExpr& argument = *ref.arguments[a];
    ExpressionContext context;
    context.scope = &empty;
    context.clause = absl::StrCat("arguments of ", name);
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(argument, context));
    bound = FoldConstantsDeep(std::move(bound));
    const TypeId type = bound->result_type.id();
    const bool fits = a == 2 ? type == TypeId::kInterval || type == TypeId::kNull
                             : type == TypeId::kTimestamp || type == TypeId::kDate || type == TypeId::kNull;
    if (bound->kind != ExpressionKind::kConstant || !fits) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, argument.position,
                     absl::StrCat("the arguments of ", name, " over timestamps must be a constant TIMESTAMP or DATE ",
                                  "start and stop and an INTERVAL step, not ",
                                  bound->kind != ExpressionKind::kConstant ? "an expression over columns"
                                                                           : bound->result_type.ToString()));
    }
    values.push_back(bound->constant);
  }
  auto series = std::make_unique<Values>();
  series->columns.push_back({name, Type::Timestamp(), false, ""});
  const bool any_null = std::any_of(values.begin(), values.end(), [](const Value& v) { return v.is_null(); });
  if (!any_null) {
    constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000 * 1000;
    auto micros = [&](const Value& v) {
      return v.type().id() == TypeId::kDate ? v.AsInt64() * kMicrosPerDay : v.AsInt64();
    };
    const int64_t start = micros(values[0]);
    const int64_t stop = micros(values[1]);
    const Interval step = values[2].AsInterval();
    const bool positive = step.months > 0 || step.days > 0 || step.micros > 0;
    const bool negative = step.months < 0 || step.days < 0 || step.micros < 0;
    if (positive == negative) {
      return ErrorAt(
          absl::StatusCode::kInvalidArgument, ref.arguments[2]->position,
          absl::StrCat("the step of ", name, positive ? " cannot mix positive and negative parts" : " cannot be 0"));
    }
    for (int64_t at = start; positive ? (inclusive ? at <= stop : at < stop) : (inclusive ? at >= stop : at > stop);
         at = AddIntervalToTimestamp(at, step)) {
      if (static_cast<int64_t>(series->rows.size()) == kMaxTimestampSeriesRows) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                       absl::StrCat(name, " over timestamps makes at most ", kMaxTimestampSeriesRows,
                                    " rows (they are bound as constants)"));
      }
      series->rows.push_back({Value::Timestamp(at)});
    }
  }
  series->RecomputeOutput();
  BoundRelation relation;
  relation.names = series->OutputNames();
  relation.plan = std::move(series);
  return relation;
}

absl::StatusOr<BoundRelation> QueryBinder::BindReadCsv(const parser::TableRef& ref, const std::string& name) {
  if (ref.arguments.empty()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat(name, " takes a file name, then options such as header = true"));
  }
  Scope empty;
  // A constant argument (the file name, an option's value), folded.
  auto constant = [&](const parser::ParsedExpr& argument, const std::string& what) -> absl::StatusOr<Value> {
    ExpressionContext context;
    context.scope = &empty;
    context.clause = absl::StrCat("arguments of ", name);
    absl::StatusOr<ExpressionPtr> bound_or = BindExpression(argument, context);
    if (absl::IsNotFound(bound_or.status()) && argument.kind == parser::ExprKind::kColumnRef) {
      return ErrorAt(
          absl::StatusCode::kUnimplemented, argument.position,
          absl::StrCat("the arguments of ", name,
                       " must be constants: reading columns of earlier FROM items (LATERAL) is not supported"));
    }
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, std::move(bound_or));
    bound = FoldConstantsDeep(std::move(bound));
    if (bound->kind != ExpressionKind::kConstant || bound->constant.is_null()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, argument.position,
                     absl::StrCat("the ", what, " of ", name, " must be a constant that is not NULL"));
    }
    return bound->constant;
  };
  TESSERA_ASSIGN_OR_RETURN(Value path_value, constant(*ref.arguments[0], "file name"));
  if (path_value.type().id() != TypeId::kVarchar && path_value.type().id() != TypeId::kChar) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.arguments[0]->position,
                   absl::StrCat("the file name of ", name, " must be a string, not ", path_value.type().ToString()));
  }
  const std::string path(path_value.AsString());
  CsvOptions csv;
  for (size_t a = 1; a < ref.arguments.size(); ++a) {
    const parser::ParsedExpr& argument = *ref.arguments[a];
    if (argument.kind != parser::ExprKind::kBinary || argument.name != "=" ||
        argument.children[0]->kind != parser::ExprKind::kColumnRef || !argument.children[0]->qualifier.empty()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, argument.position,
                     absl::StrCat("the options of ", name, " are written name = value (header = true, delim = ',')"));
    }
    const std::string option = absl::AsciiStrToLower(argument.children[0]->name);
    const std::string what = absl::StrCat("option ", option);
    TESSERA_ASSIGN_OR_RETURN(Value value, constant(*argument.children[1], what));
    if (option == "header") {
      if (value.type().id() != TypeId::kBoolean) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, argument.children[1]->position,
                       absl::StrCat("the option header of ", name, " must be true or false"));
      }
      csv.header = value.AsBool();
      continue;
    }
    const bool character = option == "delim" || option == "sep" || option == "delimiter" || option == "quote";
    if (!character && option != "nullstr") {
      return ErrorAt(
          absl::StatusCode::kInvalidArgument, argument.children[0]->position,
          absl::StrCat("unknown option '", option, "' of ", name, " (options: header, delim / sep, quote, nullstr)"));
    }
    if (value.type().id() != TypeId::kVarchar && value.type().id() != TypeId::kChar) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, argument.children[1]->position,
                     absl::StrCat("the option ", option, " of ", name, " must be a string"));
    }
    std::string text(value.AsString());
    if (option == "nullstr") {
      csv.null_string = std::move(text);
      continue;
    }
    if (text == "\\t") text = "\t";
    const bool quote = option == "quote";
    if (text.size() > 1 || (text.empty() && !quote) || text == "\n" || text == "\r") {
      return ErrorAt(absl::StatusCode::kInvalidArgument, argument.children[1]->position,
                     absl::StrCat("the option ", option, " of ", name, " must be one character",
                                  quote ? " or '' (no quoting)" : "", " other than a line break"));
    }
    if (quote) {
      csv.quote = text.empty() ? '\0' : text[0];
    } else {
      csv.delimiter = text[0];
    }
  }
  if (options_ == nullptr || !options_->read_file) {
    return ErrorAt(absl::StatusCode::kUnimplemented, ref.position,
                   absl::StrCat(name,
                                " is not available here: it reads its file when a query is planned (not in a "
                                "view's definition)"));
  }
  const std::string source = absl::StrCat(name, "('", path, "')");
  absl::StatusOr<std::string> text = options_->read_file(path);
  if (!text.ok()) return Rewrap(text.status(), ref.position);
  absl::StatusOr<CsvTable> table = ReadCsvText(*text, csv, source);
  if (!table.ok()) return Rewrap(table.status(), ref.position);
  auto values = std::make_unique<Values>();
  for (size_t c = 0; c < table->names.size(); ++c)
    values->columns.push_back({table->names[c], table->types[c], true, ""});
  values->rows = std::move(table->rows);
  values->RecomputeOutput();
  BoundRelation relation;
  relation.names = values->OutputNames();
  relation.plan = std::move(values);
  return relation;
}

}  // namespace tessera::optimizer

namespace tessera::optimizer {

absl::StatusOr<std::optional<BoundRelation>> QueryBinder::BindLateralSeries(
    const parser::TableRef& ref, BoundRelation* left, const Scope& left_scope, const Scope* outer,
    parser::JoinType type, const parser::ParsedExpr* condition, Scope* scope) {
  const std::string name = absl::AsciiStrToLower(ref.name);
  const bool inclusive = name == "generate_series";
  if ((!inclusive && name != "range") || ref.arguments.empty() || ref.arguments.size() > 3) return std::nullopt;
  Scope earlier = left_scope;
  earlier.set_parent(nullptr);
  std::vector<ExpressionPtr> arguments;
  bool reads_columns = false;
  for (const auto& argument : ref.arguments) {
    ExpressionContext context;
    context.scope = &earlier;
    context.clause = absl::StrCat("arguments of ", name);
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(*argument, context));
    reads_columns |= MaxColumnIndex(*bound) >= 0;
    arguments.push_back(std::move(bound));
  }
  if (!reads_columns) return std::nullopt;
  for (size_t a = 0; a < arguments.size(); ++a) {
    const TypeId id = arguments[a]->result_type.id();
    if (id != TypeId::kInteger && id != TypeId::kBigInt && id != TypeId::kNull) {
      return ErrorAt(absl::StatusCode::kUnimplemented, ref.arguments[a]->position,
                     absl::StrCat("the arguments of ", name, " that read earlier FROM items must be integers, not ",
                                  arguments[a]->result_type.ToString()));
    }
    if (id != TypeId::kBigInt) arguments[a] = MakeCast(std::move(arguments[a]), Type::BigInt());
  }

  // The distinct argument tuples, evaluated now (as WITH RECURSIVE's steps are), and their series as Values.
  auto distinct = std::make_unique<Aggregate>();
  for (size_t a = 0; a < arguments.size(); ++a) {
    distinct->group_by.push_back(arguments[a]->Clone());
    distinct->group_names.push_back(absl::StrCat("argument", a));
  }
  distinct->children.push_back(left->plan->Clone());
  distinct->RecomputeOutput();
  std::vector<std::vector<Value>> tuples;
  if (options_ != nullptr) {
    if (!options_->run_plan) {
      return ErrorAt(absl::StatusCode::kUnimplemented, ref.position,
                     absl::StrCat(name, " over earlier FROM items cannot be evaluated here"));
    }
    TESSERA_ASSIGN_OR_RETURN(LogicalOperatorPtr plan, RunRules(std::move(distinct), *options_, nullptr));
    TESSERA_ASSIGN_OR_RETURN(tuples, options_->run_plan(*plan));
  }
  auto series = std::make_unique<Values>();
  for (size_t a = 0; a < arguments.size(); ++a) {
    series->columns.push_back(OutputColumn{absl::StrCat("argument", a), Type::BigInt(), false, ""});
  }
  series->columns.push_back(OutputColumn{name, Type::BigInt(), false, ""});
  int64_t total = 0;
  for (const std::vector<Value>& tuple : tuples) {
    if (std::any_of(tuple.begin(), tuple.end(), [](const Value& v) { return v.is_null(); })) continue;
    const int64_t start = tuple.size() == 1 ? 0 : tuple[0].AsInt64();
    const int64_t stop = tuple.size() == 1 ? tuple[0].AsInt64() : tuple[1].AsInt64();
    const int64_t step = tuple.size() == 3 ? tuple[2].AsInt64() : 1;
    if (step == 0) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, ref.arguments[2]->position,
                     absl::StrCat("the step of ", name, " cannot be 0"));
    }
    const int128 count = SeriesLength(start, stop, step, inclusive);
    if (count > kMaxLateralSeriesRows - total) {
      return ErrorAt(absl::StatusCode::kUnimplemented, ref.position,
                     absl::StrCat(name, " over earlier FROM items would make more than ", kMaxLateralSeriesRows,
                                  " rows for their distinct arguments"));
    }
    total += static_cast<int64_t>(count);
    for (int128 i = 0; i < count; ++i) {
      std::vector<Value> row = tuple;
      row.push_back(Value::BigInt(static_cast<int64_t>(start + i * step)));
      series->rows.push_back(std::move(row));
    }
  }
  series->RecomputeOutput();

  LateralSide side;
  side.plan = std::move(series);
  side.keys = std::move(arguments);
  side.null_safe = false;  // a NULL argument gives no rows
  side.names.push_back(name);
  TESSERA_ASSIGN_OR_RETURN(BoundRelation joined, JoinLateral(ref, std::move(*left), left_scope, outer, type, condition,
                                                             std::move(side), scope));
  return joined;
}

}  // namespace tessera::optimizer
