#include "server/wire_format.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "catalog/stored_type.h"
#include "catalog/text_conversion.h"

namespace tessera {
namespace {

// Which ColumnBatch array a column of this type uses.
enum class Slot { kNone, kInt, kDouble, kString, kInterval };

Slot SlotOf(Type type) {
  switch (type.id()) {
    case TypeId::kBoolean:
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kDate:
    case TypeId::kTimestamp:
      return Slot::kInt;
    case TypeId::kDecimal:
      return type.IsWideDecimal() ? Slot::kString : Slot::kInt;
    case TypeId::kDouble:
      return Slot::kDouble;
    case TypeId::kChar:
    case TypeId::kVarchar:
      return Slot::kString;
    case TypeId::kInterval:
      return Slot::kInterval;
    case TypeId::kNull:
      return Slot::kNone;
  }
  return Slot::kNone;
}

// Whether a value of type `value_type` can be written into a column of `column_type` without a cast.
bool EncodesAs(Type value_type, Type column_type) {
  if (value_type.id() != column_type.id()) return false;
  if (column_type.id() == TypeId::kDecimal) {
    return value_type.scale() == column_type.scale() && value_type.IsWideDecimal() == column_type.IsWideDecimal();
  }
  return true;
}

void AppendValue(const Value& value, Slot slot, v1::ColumnBatch* column) {
  switch (slot) {
    case Slot::kInt:
      column->add_int_values(value.is_null() ? 0 : value.AsInt64());
      break;
    case Slot::kDouble:
      column->add_double_values(value.is_null() ? 0 : value.AsDouble());
      break;
    case Slot::kString:
      if (value.is_null()) {
        column->add_string_values();
      } else if (value.type().id() == TypeId::kDecimal) {
        column->add_string_values(Int128ToString(value.AsInt128()));
      } else {
        column->add_string_values(value.AsString());
      }
      break;
    case Slot::kInterval: {
      v1::IntervalValue* interval = column->add_interval_values();
      if (!value.is_null()) {
        interval->set_months(value.AsInterval().months);
        interval->set_days(value.AsInterval().days);
        interval->set_micros(value.AsInterval().micros);
      }
      break;
    }
    case Slot::kNone:
      break;
  }
}

int SlotLength(const v1::ColumnBatch& column, Slot slot) {
  switch (slot) {
    case Slot::kInt:
      return column.int_values_size();
    case Slot::kDouble:
      return column.double_values_size();
    case Slot::kString:
      return column.string_values_size();
    case Slot::kInterval:
      return column.interval_values_size();
    case Slot::kNone:
      return -1;
  }
  return -1;
}

absl::StatusOr<Value> DecodeValue(const v1::ColumnBatch& column, int row, Type type) {
  switch (type.id()) {
    case TypeId::kNull:
      return Value::Null();
    case TypeId::kBoolean:
      return Value::Boolean(column.int_values(row) != 0);
    case TypeId::kInteger:
      return Value::Integer(static_cast<int32_t>(column.int_values(row)));
    case TypeId::kBigInt:
      return Value::BigInt(column.int_values(row));
    case TypeId::kDate:
      return Value::Date(static_cast<int32_t>(column.int_values(row)));
    case TypeId::kTimestamp:
      return Value::Timestamp(column.int_values(row));
    case TypeId::kDouble:
      return Value::Double(column.double_values(row));
    case TypeId::kChar:
    case TypeId::kVarchar:
      return Value::String(column.string_values(row), type);
    case TypeId::kInterval: {
      const v1::IntervalValue& interval = column.interval_values(row);
      return Value::IntervalValue(Interval{interval.months(), interval.days(), interval.micros()});
    }
    case TypeId::kDecimal: {
      if (!type.IsWideDecimal()) return Value::Decimal(column.int_values(row), type);
      int128 unscaled = 0;
      if (!ParseDecimal(column.string_values(row), kMaxDecimalPrecision, 0, &unscaled)) {
        return absl::InvalidArgumentError(
            absl::StrCat("malformed DECIMAL value '", column.string_values(row), "' in a row batch"));
      }
      return Value::Decimal(unscaled, type);
    }
  }
  return absl::InvalidArgumentError("unknown column type in a row batch");
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode both number the canonical codes 0..16 identically.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

void TypeToProto(Type type, v1::ColumnType* out) {
  out->set_id(static_cast<v1::TypeId>(type.id()));
  out->set_precision(type.precision());
  out->set_scale(type.scale());
  out->set_length(type.length());
  out->set_sql_name(type.ToString());
}

absl::StatusOr<Type> TypeFromProto(const v1::ColumnType& type) {
  // v1::TypeId numbers the types as TypeId does (TypeToProto); the parameters are checked as the catalog file's are.
  const bool is_string = type.id() == v1::TYPE_CHAR || type.id() == v1::TYPE_VARCHAR;
  absl::StatusOr<Type> made =
      TypeFromStoredParts(type.id(), is_string ? type.length() : type.precision(), type.scale());
  if (!made.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("bad column type in a result header: ", made.status().message()));
  }
  return made;
}

void HeaderToProto(const std::vector<ResultColumn>& columns, v1::ResultHeader* out) {
  for (const ResultColumn& column : columns) {
    v1::Column* proto = out->add_columns();
    proto->set_name(column.name);
    TypeToProto(column.type, proto->mutable_type());
  }
}

absl::StatusOr<std::vector<ResultColumn>> HeaderFromProto(const v1::ResultHeader& header) {
  std::vector<ResultColumn> columns;
  columns.reserve(header.columns_size());
  for (const v1::Column& column : header.columns()) {
    absl::StatusOr<Type> type = TypeFromProto(column.type());
    if (!type.ok()) return type.status();
    columns.push_back(ResultColumn{column.name(), *type});
  }
  return columns;
}

void RowsToBatch(const QueryResult& result, size_t begin, size_t end, v1::RowBatch* out) {
  const int row_count = static_cast<int>(end - begin);
  out->set_row_count(row_count);
  for (size_t c = 0; c < result.columns.size(); ++c) {
    const Type column_type = result.columns[c].type;
    const Slot slot = SlotOf(column_type);
    v1::ColumnBatch* column = out->add_columns();
    bool any_null = false;
    for (size_t r = begin; r < end; ++r) any_null |= result.rows[r][c].is_null();
    if (any_null) column->mutable_nulls()->Reserve(row_count);
    for (size_t r = begin; r < end; ++r) {
      const Value& value = result.rows[r][c];
      if (any_null) column->add_nulls(value.is_null());
      if (value.is_null() || EncodesAs(value.type(), column_type)) {
        AppendValue(value, slot, column);
        continue;
      }
      absl::StatusOr<Value> cast = value.CastTo(column_type);
      // A value the engine put into a column it cannot be cast to is an engine bug; send NULL rather than crash.
      if (!cast.ok()) {
        if (!any_null) {
          any_null = true;
          for (size_t earlier = begin; earlier < r; ++earlier) column->add_nulls(false);
          column->add_nulls(true);
        } else {
          column->set_nulls(column->nulls_size() - 1, true);
        }
        AppendValue(Value::Null(column_type), slot, column);
        continue;
      }
      AppendValue(*cast, slot, column);
    }
  }
}

absl::Status AppendBatchRows(const v1::RowBatch& batch, const std::vector<ResultColumn>& columns,
                             std::vector<std::vector<Value>>* rows) {
  if (batch.columns_size() != static_cast<int>(columns.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("row batch has ", batch.columns_size(), " columns, the header ", columns.size()));
  }
  const int64_t row_count = batch.row_count();
  for (size_t c = 0; c < columns.size(); ++c) {
    const v1::ColumnBatch& column = batch.columns(c);
    const int length = SlotLength(column, SlotOf(columns[c].type));
    if ((length != -1 && length != row_count) || (column.nulls_size() != 0 && column.nulls_size() != row_count) ||
        (length == -1 && column.nulls_size() != row_count)) {
      return absl::InvalidArgumentError(absl::StrCat("row batch column ", c, " does not hold ", row_count, " rows"));
    }
  }
  const size_t first = rows->size();
  rows->resize(first + row_count);
  for (int64_t r = 0; r < row_count; ++r) (*rows)[first + r].reserve(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    const v1::ColumnBatch& column = batch.columns(c);
    const bool has_nulls = column.nulls_size() != 0;
    for (int64_t r = 0; r < row_count; ++r) {
      if (has_nulls && column.nulls(r)) {
        (*rows)[first + r].push_back(Value::Null(columns[c].type));
        continue;
      }
      absl::StatusOr<Value> value = DecodeValue(column, static_cast<int>(r), columns[c].type);
      if (!value.ok()) return value.status();
      (*rows)[first + r].push_back(*std::move(value));
    }
  }
  return absl::OkStatus();
}

void ProgressToProto(const QueryProgress& progress, v1::ProgressResponse* out) {
  out->set_scheduler_query_id(progress.query_id);
  out->set_work_orders_issued(progress.issued);
  out->set_work_orders_finished(progress.finished);
  out->set_fraction_done(progress.fraction_done);
  out->set_cancelled(progress.cancelled);
  out->set_admission(progress.admission);
  out->set_priority(progress.priority);
  for (const OperatorProgress& op : progress.operators) {
    v1::OperatorProgress* proto = out->add_operators();
    proto->set_operator_id(op.operator_id);
    proto->set_name(op.name);
    proto->set_state(op.state == OperatorState::kDone      ? v1::OPERATOR_DONE
                     : op.state == OperatorState::kRunning ? v1::OPERATOR_RUNNING
                                                           : v1::OPERATOR_WAITING);
    proto->set_work_orders_issued(op.issued);
    proto->set_work_orders_finished(op.finished);
    proto->set_work_orders_estimated(op.estimated_total);
    proto->set_rows_out(op.rows_out);
  }
}

QueryProgress ProgressFromProto(const v1::ProgressResponse& progress) {
  QueryProgress out;
  out.query_id = progress.query_id();
  out.issued = progress.work_orders_issued();
  out.finished = progress.work_orders_finished();
  out.fraction_done = progress.fraction_done();
  out.cancelled = progress.cancelled();
  if (!progress.admission().empty()) out.admission = progress.admission();
  if (progress.priority() > 0) out.priority = progress.priority();
  for (const v1::OperatorProgress& proto : progress.operators()) {
    OperatorProgress op;
    op.operator_id = proto.operator_id();
    op.name = proto.name();
    op.state = proto.state() == v1::OPERATOR_DONE      ? OperatorState::kDone
               : proto.state() == v1::OPERATOR_RUNNING ? OperatorState::kRunning
                                                       : OperatorState::kWaiting;
    op.issued = proto.work_orders_issued();
    op.finished = proto.work_orders_finished();
    op.estimated_total = proto.work_orders_estimated();
    op.rows_out = proto.rows_out();
    out.operators.push_back(std::move(op));
  }
  return out;
}

}  // namespace tessera
