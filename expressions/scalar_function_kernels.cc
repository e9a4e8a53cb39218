// Kernels of the scalar functions with any number of arguments (ScalarFunctionPlan in vector_kernels.h):
// concat and ||, round / ceil / floor, sqrt / exp / ln / log10 / power, greatest / least, the trim family,
// lpad / rpad, replace, strpos, split_part, starts_with, date_trunc. Strings are UTF-8 and positions count characters.
// Argument types are as the binder cast them (optimizer/function_binder.cc): numeric functions get DOUBLE, or
// the DECIMAL / integer type they keep; string arguments VARCHAR; counts and positions INTEGER.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "expressions/vector_kernels.h"

namespace tessera {
namespace {

using Args = const ColumnVector* const*;

// ---------------------------------------------------------------- strings

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

size_t CharacterCount(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += !IsContinuation(c);
  return n;
}

// Byte length of the first `characters` characters of `s` (all of it when it has fewer).
size_t PrefixBytes(std::string_view s, int64_t characters) {
  size_t i = 0;
  for (int64_t seen = 0; i < s.size(); ++i) {
    if (!IsContinuation(s[i]) && seen++ == characters) break;
  }
  return i;
}

template <bool kSkipNulls>
absl::Status Concat(const KernelContext&, Args args, size_t count, ActiveRows rows, ColumnVector* out) {
  std::string_view* o = out->mutable_strings();
  ForEachRow(rows, [&](uint32_t r) {
    if (!kSkipNulls && out->IsNull(r)) return;
    size_t size = 0;
    for (size_t a = 0; a < count; ++a) {
      if (!args[a]->IsNull(r)) size += args[a]->strings()[r].size();
    }
    char* buffer = out->AllocateInArena(size);
    size_t at = 0;
    for (size_t a = 0; a < count; ++a) {
      if (args[a]->IsNull(r)) continue;
      const std::string_view s = args[a]->strings()[r];
      if (!s.empty()) std::memcpy(buffer + at, s.data(), s.size());
      at += s.size();
    }
    o[r] = std::string_view(buffer, size);
  });
  return absl::OkStatus();
}

// trim / ltrim / rtrim (string [, characters]): the characters are bytes unless non-ASCII, then UTF-8
// characters are compared whole.
template <bool kLeft, bool kRight>
absl::Status Trim(const KernelContext&, Args args, size_t count, ActiveRows rows, ColumnVector* out) {
  std::string_view* o = out->mutable_strings();
  ForEachRow(rows, [&](uint32_t r) {
    if (out->IsNull(r)) return;
    std::string_view s = args[0]->strings()[r];
    const std::string_view set = count > 1 ? args[1]->strings()[r] : std::string_view(" ");
    auto in_set = [&](std::string_view character) { return set.find(character) != std::string_view::npos; };
    if (kLeft) {
      while (!s.empty()) {
        size_t length = 1;
        while (length < s.size() && IsContinuation(s[length])) ++length;
        if (!in_set(s.substr(0, length))) break;
        s.remove_prefix(length);
      }
    }
    if (kRight) {
      while (!s.empty()) {
        size_t start = s.size() - 1;
        while (start > 0 && IsContinuation(s[start])) --start;
        if (!in_set(s.substr(start))) break;
        s.remove_suffix(s.size() - start);
      }
    }
    o[r] = s;  // a view into the input
  });
  return absl::OkStatus();
}

// lpad / rpad (string, length [, fill]): to `length` characters, cut when longer; '' fill leaves it as is.
template <bool kLeft>
absl::Status Pad(const KernelContext&, Args args, size_t count, ActiveRows rows, ColumnVector* out) {
  std::string_view* o = out->mutable_strings();
  const int32_t* lengths = args[1]->values<int32_t>();
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (out->IsNull(r) || !status.ok()) return;
    const std::string_view s = args[0]->strings()[r];
    const std::string_view fill = count > 2 ? args[2]->strings()[r] : std::string_view(" ");
    const int64_t target = std::max<int64_t>(lengths[r], 0);
    const int64_t have = static_cast<int64_t>(CharacterCount(s));
    if (have >= target) {
      o[r] = s.substr(0, PrefixBytes(s, target));
      return;
    }
    if (fill.empty()) {
      o[r] = s;
      return;
    }
    if (target > (int64_t{1} << 24)) {
      status = absl::InvalidArgumentError(absl::StrCat(kLeft ? "lpad" : "rpad", " length ", target, " is too large"));
      return;
    }
    const int64_t fill_characters = static_cast<int64_t>(CharacterCount(fill));
    const int64_t missing = target - have;
    // Whole fills, then a prefix of one.
    const size_t padding_bytes =
        static_cast<size_t>(missing / fill_characters) * fill.size() + PrefixBytes(fill, missing % fill_characters);
    char* buffer = out->AllocateInArena(s.size() + padding_bytes);
    char* padding = kLeft ? buffer : buffer + s.size();
    for (size_t at = 0; at < padding_bytes; at += fill.size()) {
      std::memcpy(padding + at, fill.data(), std::min(fill.size(), padding_bytes - at));
    }
    std::memcpy(kLeft ? buffer + padding_bytes : buffer, s.data(), s.size());
    o[r] = std::string_view(buffer, s.size() + padding_bytes);
  });
  return status;
}

absl::Status Replace(const KernelContext&, Args args, size_t, ActiveRows rows, ColumnVector* out) {
  std::string_view* o = out->mutable_strings();
  ForEachRow(rows, [&](uint32_t r) {
    if (out->IsNull(r)) return;
    const std::string_view s = args[0]->strings()[r];
    const std::string_view from = args[1]->strings()[r];
    const std::string_view to = args[2]->strings()[r];
    if (from.empty() || s.find(from) == std::string_view::npos) {
      o[r] = s;
      return;
    }
    size_t matches = 0;
    for (size_t at = s.find(from); at != std::string_view::npos; at = s.find(from, at + from.size())) ++matches;
    const size_t size = s.size() - matches * from.size() + matches * to.size();
    char* buffer = out->AllocateInArena(size);
    size_t written = 0, done = 0;
    for (size_t at = s.find(from); at != std::string_view::npos; at = s.find(from, at + from.size())) {
      std::memcpy(buffer + written, s.data() + done, at - done);
      written += at - done;
      if (!to.empty()) std::memcpy(buffer + written, to.data(), to.size());
      written += to.size();
      done = at + from.size();
    }
    std::memcpy(buffer + written, s.data() + done, s.size() - done);
    o[r] = std::string_view(buffer, size);
  });
  return absl::OkStatus();
}

// strpos(string, substring): the 1-based character position of the first match, 0 when there is none.
absl::Status Strpos(const KernelContext&, Args args, size_t, ActiveRows rows, ColumnVector* out) {
  int32_t* o = out->mutable_values<int32_t>();
  ForEachRow(rows, [&](uint32_t r) {
    if (out->IsNull(r)) return;
    const std::string_view s = args[0]->strings()[r];
    const size_t at = s.find(args[1]->strings()[r]);
    o[r] = at == std::string_view::npos ? 0 : static_cast<int32_t>(CharacterCount(s.substr(0, at)) + 1);
  });
  return absl::OkStatus();
}

// split_part(string, delimiter, index): part `index` (1-based; negative counts from the end), '' when there is
// no such part. With an empty delimiter every character is a part.
absl::Status SplitPart(const KernelContext&, Args args, size_t, ActiveRows rows, ColumnVector* out) {
  std::string_view* o = out->mutable_strings();
  const int32_t* indexes = args[2]->values<int32_t>();
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (out->IsNull(r) || !status.ok()) return;
    const std::string_view s = args[0]->strings()[r];
    const std::string_view delimiter = args[1]->strings()[r];
    const int64_t index = indexes[r];
    if (index == 0) {
      status = absl::InvalidArgumentError("split_part: field position must not be zero");
      return;
    }
    if (delimiter.empty()) {  // every character is a part (DuckDB)
      const int64_t characters = static_cast<int64_t>(CharacterCount(s));
      const int64_t position = index > 0 ? index - 1 : characters + index;
      if (position < 0 || position >= characters) {
        o[r] = std::string_view();
        return;
      }
      const size_t begin = PrefixBytes(s, position);
      o[r] = s.substr(begin, PrefixBytes(s.substr(begin), 1));
      return;
    }
    // Part i starts after the i-th delimiter.
    auto next = [&](size_t from) { return delimiter.empty() ? std::string_view::npos : s.find(delimiter, from); };
    int64_t parts = 1;
    for (size_t at = next(0); at != std::string_view::npos; at = next(at + delimiter.size())) ++parts;
    const int64_t position = index > 0 ? index - 1 : parts + index;
    if (position < 0 || position >= parts) {
      o[r] = std::string_view();
      return;
    }
    size_t start = 0;
    for (int64_t i = 0; i < position; ++i) start = next(start) + delimiter.size();
    const size_t end = next(start);
    o[r] = s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  });
  return status;
}

absl::Status StartsWith(const KernelContext&, Args args, size_t, ActiveRows rows, ColumnVector* out) {
  uint8_t* o = out->mutable_values<uint8_t>();
  ForEachRow(rows, [&](uint32_t r) {
    if (!out->IsNull(r)) o[r] = args[0]->strings()[r].starts_with(args[1]->strings()[r]);
  });
  return absl::OkStatus();
}

// ---------------------------------------------------------------- dates

int64_t FloorDivide(int64_t value, int64_t divisor) {
  const int64_t quotient = value / divisor;
  return value % divisor < 0 ? quotient - 1 : quotient;
}

// date_trunc(unit, TIMESTAMP): the start of the unit the timestamp lies in (weeks start on Monday, ISO 8601).
absl::Status DateTrunc(const KernelContext&, Args args, size_t, ActiveRows rows, ColumnVector* out) {
  const int32_t* units = args[0]->values<int32_t>();
  const int64_t* in = args[1]->values<int64_t>();
  int64_t* o = out->mutable_values<int64_t>();
  ForEachRow(rows, [&](uint32_t r) {
    const int64_t micros = in[r];
    const int64_t days = FloorDivide(micros, kMicrosPerDay);
    int year;
    unsigned month, day;
    CivilFromDays(static_cast<int32_t>(days), &year, &month, &day);
    switch (static_cast<DateTruncUnit>(units[r])) {
      case DateTruncUnit::kYear:
        o[r] = DaysFromCivil(year, 1, 1) * kMicrosPerDay;
        break;
      case DateTruncUnit::kQuarter:
        o[r] = DaysFromCivil(year, (month - 1) / 3 * 3 + 1, 1) * kMicrosPerDay;
        break;
      case DateTruncUnit::kMonth:
        o[r] = DaysFromCivil(year, month, 1) * kMicrosPerDay;
        break;
      case DateTruncUnit::kWeek:  // 1970-01-01 was a Thursday: Monday is 3 days before
        o[r] = (days - ((days + 3) - FloorDivide(days + 3, 7) * 7)) * kMicrosPerDay;
        break;
      case DateTruncUnit::kDay:
        o[r] = days * kMicrosPerDay;
        break;
      case DateTruncUnit::kHour:
        o[r] = FloorDivide(micros, kMicrosPerHour) * kMicrosPerHour;
        break;
      case DateTruncUnit::kMinute:
        o[r] = FloorDivide(micros, kMicrosPerMinute) * kMicrosPerMinute;
        break;
      case DateTruncUnit::kSecond:
        o[r] = FloorDivide(micros, kMicrosPerSecond) * kMicrosPerSecond;
        break;
    }
  });
  return absl::OkStatus();
}

// ---------------------------------------------------------------- numbers

template <typename T>
int128 Load(const ColumnVector& v, uint32_t r) {
  return static_cast<int128>(v.values<T>()[r]);
}

int128 LoadExact(const ColumnVector& v, uint32_t r) {
  switch (PhysicalTypeOf(v.type())) {
    case PhysicalType::kInt32:
      return Load<int32_t>(v, r);
    case PhysicalType::kInt64:
      return Load<int64_t>(v, r);
    default:
      return Load<int128>(v, r);
  }
}

void StoreExact(ColumnVector* out, uint32_t r, int128 value) {
  switch (PhysicalTypeOf(out->type())) {
    case PhysicalType::kInt32:
      out->mutable_values<int32_t>()[r] = static_cast<int32_t>(value);
      break;
    case PhysicalType::kInt64:
      out->mutable_values<int64_t>()[r] = static_cast<int64_t>(value);
      break;
    default:
      out->mutable_values<int128>()[r] = value;
  }
}

int ExactScale(const Type& type) { return type.id() == TypeId::kDecimal ? type.scale() : 0; }

enum class Rounding { kHalfAway, kCeil, kFloor };

// `value` / 10^digits rounded to an integer.
int128 DivideRounded(int128 value, int digits, Rounding rounding) {
  if (digits <= 0) return value;
  const int128 divisor = PowerOfTen(digits);
  int128 quotient = value / divisor;
  const int128 remainder = value % divisor;
  switch (rounding) {
    case Rounding::kHalfAway:
      if (remainder * 2 >= divisor) ++quotient;
      if (remainder * 2 <= -divisor) --quotient;
      break;
    case Rounding::kCeil:
      if (remainder > 0) ++quotient;
      break;
    case Rounding::kFloor:
      if (remainder < 0) --quotient;
      break;
  }
  return quotient;
}

// round / ceil / floor of an exact number (INTEGER, BIGINT, DECIMAL) to `digits` fraction digits (round's second
// argument, 0 for ceil and floor; negative rounds to tens, hundreds, ...), written at the result's scale.
template <Rounding kRounding>
absl::Status RoundExact(const KernelContext& context, Args args, size_t count, ActiveRows rows, ColumnVector* out) {
  const int input_scale = ExactScale(args[0]->type());
  const int result_scale = ExactScale(context.result_type);
  const TypeId result_id = context.result_type.id();
  const int128 limit = result_id == TypeId::kDecimal   ? MaxDecimalUnscaled(context.result_type.precision())
                       : result_id == TypeId::kInteger ? static_cast<int128>(std::numeric_limits<int32_t>::max())
                                                       : static_cast<int128>(std::numeric_limits<int64_t>::max());
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (out->IsNull(r) || !status.ok()) return;
    const int digits = count > 1 ? std::clamp(args[1]->values<int32_t>()[r], -38, input_scale) : 0;
    const int drop = input_scale - digits;
    if (drop > 38) {
      StoreExact(out, r, 0);
      return;
    }
    int128 value = DivideRounded(LoadExact(*args[0], r), drop, kRounding);  // at scale `digits`
    if (result_scale > digits) value *= PowerOfTen(result_scale - digits);
    if (value > limit || value < -limit) {
      status = absl::OutOfRangeError(absl::StrCat("value out of range for ", context.result_type.ToString()));
      return;
    }
    StoreExact(out, r, value);
  });
  return status;
}

template <Rounding kRounding>
absl::Status RoundDouble(const KernelContext&, Args args, size_t count, ActiveRows rows, ColumnVector* out) {
  const double* in = args[0]->values<double>();
  double* o = out->mutable_values<double>();
  ForEachRow(rows, [&](uint32_t r) {
    const int digits = count > 1 ? args[1]->values<int32_t>()[r] : 0;
    if (kRounding == Rounding::kCeil) {
      o[r] = std::ceil(in[r]);
    } else if (kRounding == Rounding::kFloor) {
      o[r] = std::floor(in[r]);
    } else if (digits == 0) {
      o[r] = std::round(in[r]);
    } else {
      const double scale = std::pow(10.0, digits);
      const double rounded = std::round(in[r] * scale) / scale;
      o[r] = std::isfinite(rounded) ? rounded : in[r];
    }
  });
  return absl::OkStatus();
}

enum class MathFunction { kSqrt, kExp, kLn, kLog10, kPower };

// IEEE results outside the domain, as DuckDB: sqrt(-1) and ln(-1) are NaN, ln(0) is -infinity.
template <MathFunction kFunction>
absl::Status Math(const KernelContext&, Args args, size_t, ActiveRows rows, ColumnVector* out) {
  const double* x = args[0]->values<double>();
  double* o = out->mutable_values<double>();
  ForEachRow(rows, [&](uint32_t r) {
    switch (kFunction) {
      case MathFunction::kSqrt:
        o[r] = std::sqrt(x[r]);
        break;
      case MathFunction::kExp:
        o[r] = std::exp(x[r]);
        break;
      case MathFunction::kLn:
        o[r] = std::log(x[r]);
        break;
      case MathFunction::kLog10:
        o[r] = std::log10(x[r]);
        break;
      case MathFunction::kPower:
        o[r] = std::pow(x[r], args[1]->values<double>()[r]);
        break;
    }
  });
  return absl::OkStatus();
}

// greatest / least: the extreme of the non-NULL arguments, NULL when all are NULL (PostgreSQL, DuckDB).
template <typename T, bool kGreatest>
absl::Status Extreme(const KernelContext&, Args args, size_t count, ActiveRows rows, ColumnVector* out) {
  ForEachRow(rows, [&](uint32_t r) {
    const T* best = nullptr;
    for (size_t a = 0; a < count; ++a) {
      if (args[a]->IsNull(r)) continue;
      const T& value = args[a]->template values<T>()[r];
      if (best == nullptr || (kGreatest ? *best < value : value < *best)) best = &value;
    }
    if (best == nullptr) {
      out->SetNull(r);
    } else {
      out->template mutable_values<T>()[r] = *best;  // strings stay views into their argument
    }
  });
  return absl::OkStatus();
}

template <bool kGreatest>
absl::StatusOr<NaryKernel> PlanExtreme(const Type& type) {
  switch (PhysicalTypeOf(type)) {
    case PhysicalType::kBool:
      return &Extreme<uint8_t, kGreatest>;
    case PhysicalType::kInt32:
      return &Extreme<int32_t, kGreatest>;
    case PhysicalType::kInt64:
      return &Extreme<int64_t, kGreatest>;
    case PhysicalType::kInt128:
      return &Extreme<int128, kGreatest>;
    case PhysicalType::kDouble:
      return &Extreme<double, kGreatest>;
    case PhysicalType::kString:
      return &Extreme<std::string_view, kGreatest>;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(kGreatest ? "greatest" : "least", " does not support ", type.ToString()));
  }
}

template <Rounding kRounding>
ScalarFunctionPlan PlanRounding(const Type& input) {
  if (input.id() == TypeId::kDouble) return {&RoundDouble<kRounding>, false};
  return {&RoundExact<kRounding>, false};
}

}  // namespace

absl::StatusOr<ScalarFunctionPlan> PlanScalarFunction(FunctionId function, const std::vector<Type>& arguments,
                                                      const Type& result) {
  if (arguments.empty()) return absl::InvalidArgumentError("a scalar function needs arguments");
  switch (function) {
    case FunctionId::kConcat:
      return ScalarFunctionPlan{&Concat<true>, true};
    case FunctionId::kConcatStrict:
      return ScalarFunctionPlan{&Concat<false>, false};
    case FunctionId::kRound:
      return PlanRounding<Rounding::kHalfAway>(arguments[0]);
    case FunctionId::kCeil:
      return PlanRounding<Rounding::kCeil>(arguments[0]);
    case FunctionId::kFloor:
      return PlanRounding<Rounding::kFloor>(arguments[0]);
    case FunctionId::kSqrt:
      return ScalarFunctionPlan{&Math<MathFunction::kSqrt>, false};
    case FunctionId::kExp:
      return ScalarFunctionPlan{&Math<MathFunction::kExp>, false};
    case FunctionId::kLn:
      return ScalarFunctionPlan{&Math<MathFunction::kLn>, false};
    case FunctionId::kLog10:
      return ScalarFunctionPlan{&Math<MathFunction::kLog10>, false};
    case FunctionId::kPower:
      return ScalarFunctionPlan{&Math<MathFunction::kPower>, false};
    case FunctionId::kGreatest: {
      absl::StatusOr<NaryKernel> kernel = PlanExtreme<true>(result);
      if (!kernel.ok()) return kernel.status();
      return ScalarFunctionPlan{*kernel, true};
    }
    case FunctionId::kLeast: {
      absl::StatusOr<NaryKernel> kernel = PlanExtreme<false>(result);
      if (!kernel.ok()) return kernel.status();
      return ScalarFunctionPlan{*kernel, true};
    }
    case FunctionId::kTrim:
      return ScalarFunctionPlan{&Trim<true, true>, false};
    case FunctionId::kLtrim:
      return ScalarFunctionPlan{&Trim<true, false>, false};
    case FunctionId::kRtrim:
      return ScalarFunctionPlan{&Trim<false, true>, false};
    case FunctionId::kLpad:
      return ScalarFunctionPlan{&Pad<true>, false};
    case FunctionId::kRpad:
      return ScalarFunctionPlan{&Pad<false>, false};
    case FunctionId::kReplace:
      return ScalarFunctionPlan{&Replace, false};
    case FunctionId::kStrpos:
      return ScalarFunctionPlan{&Strpos, false};
    case FunctionId::kSplitPart:
      return ScalarFunctionPlan{&SplitPart, false};
    case FunctionId::kStartsWith:
      return ScalarFunctionPlan{&StartsWith, false};
    case FunctionId::kDateTrunc:
      return ScalarFunctionPlan{&DateTrunc, false};
    default:
      return absl::InvalidArgumentError("not a scalar function with a generic kernel");
  }
}

}  // namespace tessera
