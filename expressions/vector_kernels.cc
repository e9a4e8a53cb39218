#include "expressions/vector_kernels.h"

#include <cstring>

#include "glog/logging.h"

namespace tessera {

PhysicalType PhysicalTypeOf(const Type& type) {
  switch (type.id()) {
    case TypeId::kNull:
      return PhysicalType::kNone;
    case TypeId::kBoolean:
      return PhysicalType::kBool;
    case TypeId::kInteger:
    case TypeId::kDate:
      return PhysicalType::kInt32;
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
      return PhysicalType::kInt64;
    case TypeId::kDecimal:
      return type.IsWideDecimal() ? PhysicalType::kInt128 : PhysicalType::kInt64;
    case TypeId::kDouble:
      return PhysicalType::kDouble;
    case TypeId::kInterval:
      return PhysicalType::kInterval;
    case TypeId::kChar:
    case TypeId::kVarchar:
      return PhysicalType::kString;
  }
  return PhysicalType::kNone;
}

void PropagateNulls(const ColumnVector& a, const ColumnVector* b, ActiveRows rows, ColumnVector* out) {
  const bool a_nulls = a.has_nulls();
  const bool b_nulls = b != nullptr && b->has_nulls();
  if (!a_nulls && !b_nulls) return;
  if (!b_nulls) {
    out->BorrowValidityFrom(a);
    return;
  }
  if (!a_nulls) {
    out->BorrowValidityFrom(*b);
    return;
  }
  uint8_t* validity = out->MutableValidity();
  ForEachRow(rows, [&](uint32_t r) {
    if (a.IsNull(r) || b->IsNull(r)) ClearBit(validity, r);
  });
}

namespace {

template <typename T>
void CopyValues(const ColumnVector& from, ActiveRows rows, ColumnVector* to) {
  const T* source = from.values<T>();
  T* destination = to->mutable_values<T>();
  ForEachRow(rows, [&](uint32_t r) { destination[r] = source[r]; });
}

}  // namespace

void CopyRows(const ColumnVector& from, ActiveRows rows, ColumnVector* to) {
  switch (PhysicalTypeOf(to->type())) {
    case PhysicalType::kNone:
      break;
    case PhysicalType::kBool:
      CopyValues<uint8_t>(from, rows, to);
      break;
    case PhysicalType::kInt32:
      CopyValues<int32_t>(from, rows, to);
      break;
    case PhysicalType::kInt64:
      CopyValues<int64_t>(from, rows, to);
      break;
    case PhysicalType::kInt128:
      CopyValues<int128>(from, rows, to);
      break;
    case PhysicalType::kDouble:
      CopyValues<double>(from, rows, to);
      break;
    case PhysicalType::kInterval:
      CopyValues<Interval>(from, rows, to);
      break;
    case PhysicalType::kString:
      CopyValues<std::string_view>(from, rows, to);
      break;
  }
  if (from.has_nulls() || from.type().id() == TypeId::kNull) {
    ForEachRow(rows, [&](uint32_t r) {
      if (from.type().id() == TypeId::kNull || from.IsNull(r)) to->SetNull(r);
    });
  }
}

namespace {

template <typename T>
void Fill(T value, uint32_t size, ColumnVector* out) {
  T* values = out->mutable_values<T>();
  for (uint32_t r = 0; r < size; ++r) values[r] = value;
}

}  // namespace

void SetRowValue(const Value& value, uint32_t row, ColumnVector* out) {
  if (value.is_null() || out->type().id() == TypeId::kNull) {
    out->SetNull(row);
    return;
  }
  switch (PhysicalTypeOf(out->type())) {
    case PhysicalType::kNone:
      break;
    case PhysicalType::kBool:
      out->mutable_values<uint8_t>()[row] = value.AsBool() ? 1 : 0;
      break;
    case PhysicalType::kInt32:
      out->mutable_values<int32_t>()[row] = static_cast<int32_t>(value.AsInt64());
      break;
    case PhysicalType::kInt64:
      out->mutable_values<int64_t>()[row] = static_cast<int64_t>(value.AsInt128());
      break;
    case PhysicalType::kInt128:
      out->mutable_values<int128>()[row] = value.AsInt128();
      break;
    case PhysicalType::kDouble:
      out->mutable_values<double>()[row] = value.AsDouble();
      break;
    case PhysicalType::kInterval:
      out->mutable_values<Interval>()[row] = value.AsInterval();
      break;
    case PhysicalType::kString:
      out->mutable_strings()[row] = out->AppendToArena(value.AsString());
      break;
  }
}

void FillConstant(const Value& value, uint32_t size, ColumnVector* out) {
  const Type& type = out->type();
  if (value.is_null() || type.id() == TypeId::kNull) {
    if (size > 0) std::memset(out->MutableValidity(), 0, BitmapBytes(size));
    return;
  }
  switch (PhysicalTypeOf(type)) {
    case PhysicalType::kNone:
      break;
    case PhysicalType::kBool:
      Fill<uint8_t>(value.AsBool() ? 1 : 0, size, out);
      break;
    case PhysicalType::kInt32:
      Fill<int32_t>(static_cast<int32_t>(value.AsInt64()), size, out);
      break;
    case PhysicalType::kInt64:
      Fill<int64_t>(static_cast<int64_t>(value.AsInt128()), size, out);
      break;
    case PhysicalType::kInt128:
      Fill<int128>(value.AsInt128(), size, out);
      break;
    case PhysicalType::kDouble:
      Fill<double>(value.AsDouble(), size, out);
      break;
    case PhysicalType::kInterval:
      Fill<Interval>(value.AsInterval(), size, out);
      break;
    case PhysicalType::kString:
      Fill<std::string_view>(out->AppendToArena(value.AsString()), size, out);
      break;
  }
}

}  // namespace tessera
