// CAST kernels. Semantics match Value::CastTo exactly (catalog/value.h), which also produces the error
// message of a failing row, so the vectorized and row-at-a-time paths agree on results and wording.

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "expressions/decimal_arithmetic.h"
#include "expressions/vector_kernels.h"

namespace tessera {
namespace {

absl::Status CannotCast(const Type& from, const Type& to) {
  return absl::InvalidArgumentError(absl::StrCat("cannot cast ", from.ToString(), " to ", to.ToString()));
}

// The error for casting row `row` of `input` to `to`, worded by Value::CastTo (slow path, errors only).
absl::Status RowCastError(const ColumnVector& input, uint32_t row, const Type& to) {
  const Value value = input.GetValue(row);
  absl::StatusOr<Value> cast = value.CastTo(to);
  if (!cast.ok()) return cast.status();
  return absl::InvalidArgumentError(absl::StrCat("value ", value.ToString(), " is out of range for ", to.ToString()));
}

int ScaleOf(const Type& type) { return type.id() == TypeId::kDecimal ? type.scale() : 0; }

// Inclusive range of unscaled values a type holds.
void RangeOf(const Type& type, int128* lo, int128* hi) {
  switch (type.id()) {
    case TypeId::kInteger:
      *lo = std::numeric_limits<int32_t>::min();
      *hi = std::numeric_limits<int32_t>::max();
      return;
    case TypeId::kBigInt:
      *lo = std::numeric_limits<int64_t>::min();
      *hi = std::numeric_limits<int64_t>::max();
      return;
    case TypeId::kDecimal:
      *hi = MaxDecimalUnscaled(type.precision());
      *lo = -*hi;
      return;
    default:
      *lo = std::numeric_limits<int64_t>::min();
      *hi = std::numeric_limits<int64_t>::max();
  }
}

template <typename T>
T LoadValue(const ColumnVector& v, uint32_t row) {
  return v.values<T>()[row];
}

// ---- exact numeric -> exact numeric (INTEGER, BIGINT, DECIMAL, BOOLEAN source) ----
template <typename From, typename To, typename Compute>
absl::Status ExactToExact(const KernelContext& context, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const int from_scale = ScaleOf(context.left_type);
  const int to_scale = ScaleOf(context.result_type);
  int128 lo128, hi128;
  RangeOf(context.result_type, &lo128, &hi128);
  const From* in = input.values<From>();
  To* result = out->mutable_values<To>();
  bool suspicious = false;
  if (to_scale >= from_scale) {
    const int digits = to_scale - from_scale;
    if (digits > kMaxDecimalPrecision) {
      // Only zero fits; not reachable for valid DECIMAL types, kept for safety.
      ForEachRow(rows, [&](uint32_t r) {
        suspicious |= in[r] != 0;
        result[r] = 0;
      });
    } else {
      const Compute factor = static_cast<Compute>(PowerOfTen(digits));
      const Compute lo = static_cast<Compute>(lo128), hi = static_cast<Compute>(hi128);
      ForEachRow(rows, [&](uint32_t r) {
        Compute v;
        const bool overflow = __builtin_mul_overflow(static_cast<Compute>(in[r]), factor, &v);
        suspicious |= overflow | (v < lo) | (v > hi);
        result[r] = static_cast<To>(v);
      });
    }
  } else {
    const int128 divisor = PowerOfTen(from_scale - to_scale);
    const Compute lo = static_cast<Compute>(lo128), hi = static_cast<Compute>(hi128);
    const Compute d = static_cast<Compute>(divisor);
    ForEachRow(rows, [&](uint32_t r) {
      const Compute u = static_cast<Compute>(in[r]);
      Compute q = u / d;
      const Compute rem = u % d;
      const Compute abs_rem = rem < 0 ? -rem : rem;
      if (abs_rem >= d - abs_rem) q += u < 0 ? -1 : 1;
      suspicious |= (q < lo) | (q > hi);
      result[r] = static_cast<To>(q);
    });
  }
  if (suspicious) {
    absl::Status status = absl::OkStatus();
    ForEachRow(rows, [&](uint32_t r) {
      if (!status.ok() || input.IsNull(r)) return;
      int128 check;
      if (!RescaleDecimal(static_cast<int128>(in[r]), from_scale, to_scale, kMaxDecimalPrecision, &check) ||
          check < lo128 || check > hi128) {
        status = RowCastError(input, r, context.result_type);
      }
    });
    return status;
  }
  return absl::OkStatus();
}

template <typename From>
absl::Status ExactToBoolean(const KernelContext&, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const From* in = input.values<From>();
  uint8_t* result = out->mutable_values<uint8_t>();
  ForEachRow(rows, [&](uint32_t r) { result[r] = in[r] != 0; });
  return absl::OkStatus();
}

// ---- exact -> DOUBLE (as Value::AsDouble: one correctly rounded division when both operands are exact) ----
template <typename From>
absl::Status ExactToDouble(const KernelContext& context, const ColumnVector& input, ActiveRows rows,
                           ColumnVector* out) {
  const int scale = ScaleOf(context.left_type);
  const From* in = input.values<From>();
  double* result = out->mutable_values<double>();
  if (scale == 0 && sizeof(From) <= 8) {
    ForEachRow(rows, [&](uint32_t r) { result[r] = static_cast<double>(in[r]); });
    return absl::OkStatus();
  }
  constexpr int128 kExactDoubleLimit = int128{1} << 53;
  const double divisor = static_cast<double>(PowerOfTen(scale));
  ForEachRow(rows, [&](uint32_t r) {
    const int128 u = static_cast<int128>(in[r]);
    if (AbsoluteValue(u) <= kExactDoubleLimit && scale <= 22) {
      result[r] = static_cast<double>(u) / divisor;
      return;
    }
    context.text->clear();
    AppendDecimal(u, scale, context.text);
    double value = 0;
    std::from_chars(context.text->data(), context.text->data() + context.text->size(), value);
    result[r] = value;
  });
  return absl::OkStatus();
}

// ---- DOUBLE -> exact ----
template <typename To>
absl::Status DoubleToInteger(const KernelContext& context, const ColumnVector& input, ActiveRows rows,
                             ColumnVector* out) {
  const double* in = input.values<double>();
  To* result = out->mutable_values<To>();
  const double lo = sizeof(To) == 4 ? -2147483648.0 : -0x1p63;
  const double hi = sizeof(To) == 4 ? 2147483648.0 : 0x1p63;  // exclusive
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    const double rounded = std::round(in[r]);  // half away from zero
    const bool ok = rounded >= lo && rounded < hi;
    suspicious |= !ok;
    result[r] = ok ? static_cast<To>(rounded) : To{0};
  });
  if (suspicious) {
    absl::Status status = absl::OkStatus();
    ForEachRow(rows, [&](uint32_t r) {
      if (!status.ok() || input.IsNull(r)) return;
      const double rounded = std::round(in[r]);
      if (!(rounded >= lo && rounded < hi)) status = RowCastError(input, r, context.result_type);
    });
    return status;
  }
  return absl::OkStatus();
}

// Via the shortest round-trip text, as Value::CastTo: 0.1 becomes exactly 0.1 and 2.675 rounds to 2.68.
template <typename To>
absl::Status DoubleToDecimal(const KernelContext& context, const ColumnVector& input, ActiveRows rows,
                             ColumnVector* out) {
  const double* in = input.values<double>();
  To* result = out->mutable_values<To>();
  const int precision = context.result_type.precision();
  const int scale = context.result_type.scale();
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (!status.ok() || input.IsNull(r)) return;
    const double d = in[r];
    int128 u = 0;
    char buffer[64];
    bool ok = std::isfinite(d);
    if (ok) {
      auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), d);
      ok = ec == std::errc() && ParseDecimal(std::string_view(buffer, end - buffer), precision, scale, &u);
    }
    if (!ok) {
      status = RowCastError(input, r, context.result_type);
      return;
    }
    result[r] = static_cast<To>(u);
  });
  return status;
}

// ---- DATE <-> TIMESTAMP ----
absl::Status DateToTimestamp(const KernelContext& context, const ColumnVector& input, ActiveRows rows,
                             ColumnVector* out) {
  const int32_t* in = input.values<int32_t>();
  int64_t* result = out->mutable_values<int64_t>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    suspicious |= __builtin_mul_overflow(static_cast<int64_t>(in[r]), kMicrosPerDay, &result[r]);
  });
  if (suspicious) {
    absl::Status status = absl::OkStatus();
    ForEachRow(rows, [&](uint32_t r) {
      int64_t ignored;
      if (status.ok() && !input.IsNull(r) &&
          __builtin_mul_overflow(static_cast<int64_t>(in[r]), kMicrosPerDay, &ignored)) {
        status = RowCastError(input, r, context.result_type);
      }
    });
    return status;
  }
  return absl::OkStatus();
}

absl::Status TimestampToDate(const KernelContext&, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const int64_t* in = input.values<int64_t>();
  int32_t* result = out->mutable_values<int32_t>();
  ForEachRow(rows, [&](uint32_t r) {
    const int64_t micros = in[r];
    result[r] = static_cast<int32_t>(micros >= 0 ? micros / kMicrosPerDay : -((-(micros + 1)) / kMicrosPerDay) - 1);
  });
  return absl::OkStatus();
}

// ---- strings ----
size_t CharacterCount(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Applies CHAR(n)/VARCHAR(n)'s length rule to `text`: returns false if it is too long (beyond trailing
// spaces), else shortens it by the excess trailing spaces.
bool FitStringLength(uint32_t max_length, std::string_view* text) {
  if (max_length == 0 || text->size() <= max_length) return true;
  const size_t count = CharacterCount(*text);
  if (count <= max_length) return true;
  const size_t excess = count - max_length;
  size_t spaces = 0;
  while (spaces < text->size() && (*text)[text->size() - 1 - spaces] == ' ') ++spaces;
  if (spaces < excess) return false;
  text->remove_suffix(excess);
  return true;
}

absl::Status StringToString(const KernelContext& context, const ColumnVector& input, ActiveRows rows,
                            ColumnVector* out) {
  const std::string_view* in = input.strings();
  std::string_view* result = out->mutable_strings();
  const uint32_t max_length = context.result_type.length();
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (!status.ok()) return;
    if (input.IsNull(r)) {
      result[r] = {};
      return;
    }
    std::string_view text = in[r];
    if (!FitStringLength(max_length, &text)) status = RowCastError(input, r, context.result_type);
    result[r] = text;  // a view into the input's memory, which outlives this result
  });
  return status;
}

std::string_view TrimSpaces(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

enum class ParseTarget { kBoolean, kInteger, kBigInt, kDouble, kDecimal64, kDecimal128, kDate, kTimestamp, kInterval };

template <ParseTarget kTarget>
bool ParseText(std::string_view text, const Type& type, void* values, uint32_t row) {
  switch (kTarget) {
    case ParseTarget::kBoolean: {
      bool b;
      if (!ParseBoolean(text, &b)) return false;
      static_cast<uint8_t*>(values)[row] = b;
      return true;
    }
    case ParseTarget::kInteger:
      return ParseInt32(text, static_cast<int32_t*>(values) + row);
    case ParseTarget::kBigInt:
      return ParseInt64(text, static_cast<int64_t*>(values) + row);
    case ParseTarget::kDouble:
      return ParseDouble(text, static_cast<double*>(values) + row);
    case ParseTarget::kDecimal64:
    case ParseTarget::kDecimal128: {
      int128 u;
      if (!ParseDecimal(text, type.precision(), type.scale(), &u)) return false;
      if (kTarget == ParseTarget::kDecimal64) {
        static_cast<int64_t*>(values)[row] = static_cast<int64_t>(u);
      } else {
        static_cast<int128*>(values)[row] = u;
      }
      return true;
    }
    case ParseTarget::kDate: {
      if (ParseDate(text, static_cast<int32_t*>(values) + row)) return true;
      int64_t micros;
      if (!ParseTimestamp(text, &micros)) return false;
      static_cast<int32_t*>(values)[row] =
          static_cast<int32_t>(micros >= 0 ? micros / kMicrosPerDay : -((-(micros + 1)) / kMicrosPerDay) - 1);
      return true;
    }
    case ParseTarget::kTimestamp:
      return ParseTimestamp(text, static_cast<int64_t*>(values) + row);
    case ParseTarget::kInterval:
      return ParseInterval(text, "", static_cast<Interval*>(values) + row);
  }
  return false;
}

template <ParseTarget kTarget>
absl::Status StringToValue(const KernelContext& context, const ColumnVector& input, ActiveRows rows,
                           ColumnVector* out) {
  const std::string_view* in = input.strings();
  void* result = out->mutable_values<uint8_t>();
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (!status.ok() || input.IsNull(r)) return;
    if (!ParseText<kTarget>(TrimSpaces(in[r]), context.result_type, result, r)) {
      status = RowCastError(input, r, context.result_type);
    }
  });
  return status;
}

enum class Format { kBoolean, kInt32, kInt64, kDecimal64, kDecimal128, kDouble, kDate, kTimestamp, kInterval };

template <Format kFormat>
void AppendText(const ColumnVector& input, uint32_t row, int scale, std::string* out) {
  switch (kFormat) {
    case Format::kBoolean:
      *out += input.values<uint8_t>()[row] != 0 ? "true" : "false";
      return;
    case Format::kInt32:
      AppendInt64(input.values<int32_t>()[row], out);
      return;
    case Format::kInt64:
      AppendInt64(input.values<int64_t>()[row], out);
      return;
    case Format::kDecimal64:
      AppendDecimal(input.values<int64_t>()[row], scale, out);
      return;
    case Format::kDecimal128:
      AppendDecimal(input.values<int128>()[row], scale, out);
      return;
    case Format::kDouble:
      AppendDouble(input.values<double>()[row], out);
      return;
    case Format::kDate:
      AppendDate(input.values<int32_t>()[row], out);
      return;
    case Format::kTimestamp:
      AppendTimestamp(input.values<int64_t>()[row], out);
      return;
    case Format::kInterval:
      AppendInterval(input.values<Interval>()[row], out);
      return;
  }
}

template <Format kFormat>
absl::Status ValueToString(const KernelContext& context, const ColumnVector& input, ActiveRows rows,
                           ColumnVector* out) {
  std::string_view* result = out->mutable_strings();
  const int scale = ScaleOf(context.left_type);
  const uint32_t max_length = context.result_type.length();
  std::string& text = *context.text;
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (!status.ok()) return;
    if (input.IsNull(r)) {
      result[r] = {};
      return;
    }
    text.clear();
    AppendText<kFormat>(input, r, scale, &text);
    std::string_view view = text;
    if (!FitStringLength(max_length, &view)) {
      status = RowCastError(input, r, context.result_type);
      return;
    }
    result[r] = out->AppendToArena(view);
  });
  return status;
}

template <typename From>
absl::StatusOr<CastPlan> PlanExactSource(const Type& from, const Type& to) {
  const bool narrow_compute =
      sizeof(From) <= 8 && to.FixedWidth() <= 8 && ScaleOf(to) - ScaleOf(from) <= kMaxInt64DecimalPrecision;
  switch (to.id()) {
    case TypeId::kInteger:
      return CastPlan{narrow_compute ? &ExactToExact<From, int32_t, int64_t> : &ExactToExact<From, int32_t, int128>};
    case TypeId::kBigInt:
      return CastPlan{narrow_compute ? &ExactToExact<From, int64_t, int64_t> : &ExactToExact<From, int64_t, int128>};
    case TypeId::kDecimal:
      if (to.IsWideDecimal()) return CastPlan{&ExactToExact<From, int128, int128>};
      return CastPlan{narrow_compute ? &ExactToExact<From, int64_t, int64_t> : &ExactToExact<From, int64_t, int128>};
    case TypeId::kDouble:
      return CastPlan{&ExactToDouble<From>};
    default:
      return CannotCast(from, to);
  }
}

}  // namespace

absl::StatusOr<CastPlan> PlanCast(const Type& from, const Type& to) {
  if (from == to) return CastPlan{nullptr, true};
  const TypeId f = from.id();
  const TypeId t = to.id();
  if (to.IsString()) {
    if (from.IsString()) {
      if (to.length() == 0 || (from.length() != 0 && from.length() <= to.length())) return CastPlan{nullptr, true};
      return CastPlan{&StringToString};
    }
    switch (f) {
      case TypeId::kBoolean:
        return CastPlan{&ValueToString<Format::kBoolean>};
      case TypeId::kInteger:
        return CastPlan{&ValueToString<Format::kInt32>};
      case TypeId::kBigInt:
        return CastPlan{&ValueToString<Format::kInt64>};
      case TypeId::kDecimal:
        return CastPlan{from.IsWideDecimal() ? &ValueToString<Format::kDecimal128>
                                             : &ValueToString<Format::kDecimal64>};
      case TypeId::kDouble:
        return CastPlan{&ValueToString<Format::kDouble>};
      case TypeId::kDate:
        return CastPlan{&ValueToString<Format::kDate>};
      case TypeId::kTimestamp:
        return CastPlan{&ValueToString<Format::kTimestamp>};
      case TypeId::kInterval:
        return CastPlan{&ValueToString<Format::kInterval>};
      default:
        return CannotCast(from, to);
    }
  }
  if (from.IsString()) {
    switch (t) {
      case TypeId::kBoolean:
        return CastPlan{&StringToValue<ParseTarget::kBoolean>};
      case TypeId::kInteger:
        return CastPlan{&StringToValue<ParseTarget::kInteger>};
      case TypeId::kBigInt:
        return CastPlan{&StringToValue<ParseTarget::kBigInt>};
      case TypeId::kDouble:
        return CastPlan{&StringToValue<ParseTarget::kDouble>};
      case TypeId::kDecimal:
        return CastPlan{to.IsWideDecimal() ? &StringToValue<ParseTarget::kDecimal128>
                                           : &StringToValue<ParseTarget::kDecimal64>};
      case TypeId::kDate:
        return CastPlan{&StringToValue<ParseTarget::kDate>};
      case TypeId::kTimestamp:
        return CastPlan{&StringToValue<ParseTarget::kTimestamp>};
      case TypeId::kInterval:
        return CastPlan{&StringToValue<ParseTarget::kInterval>};
      default:
        return CannotCast(from, to);
    }
  }
  switch (f) {
    case TypeId::kBoolean:
      if (t == TypeId::kInteger) return CastPlan{&ExactToExact<uint8_t, int32_t, int64_t>};
      if (t == TypeId::kBigInt) return CastPlan{&ExactToExact<uint8_t, int64_t, int64_t>};
      return CannotCast(from, to);
    case TypeId::kInteger:
      if (t == TypeId::kBoolean) return CastPlan{&ExactToBoolean<int32_t>};
      return PlanExactSource<int32_t>(from, to);
    case TypeId::kBigInt:
      if (t == TypeId::kBoolean) return CastPlan{&ExactToBoolean<int64_t>};
      return PlanExactSource<int64_t>(from, to);
    case TypeId::kDecimal:
      if (t == TypeId::kDecimal && from.scale() == to.scale() && from.precision() <= to.precision() &&
          from.IsWideDecimal() == to.IsWideDecimal()) {
        return CastPlan{nullptr, true};
      }
      if (from.IsWideDecimal()) return PlanExactSource<int128>(from, to);
      return PlanExactSource<int64_t>(from, to);
    case TypeId::kDouble:
      switch (t) {
        case TypeId::kInteger:
          return CastPlan{&DoubleToInteger<int32_t>};
        case TypeId::kBigInt:
          return CastPlan{&DoubleToInteger<int64_t>};
        case TypeId::kDecimal:
          return CastPlan{to.IsWideDecimal() ? &DoubleToDecimal<int128> : &DoubleToDecimal<int64_t>};
        default:
          return CannotCast(from, to);
      }
    case TypeId::kDate:
      if (t == TypeId::kTimestamp) return CastPlan{&DateToTimestamp};
      return CannotCast(from, to);
    case TypeId::kTimestamp:
      if (t == TypeId::kDate) return CastPlan{&TimestampToDate};
      return CannotCast(from, to);
    default:
      return CannotCast(from, to);
  }
}

}  // namespace tessera
