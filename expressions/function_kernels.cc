// Scalar function kernels: EXTRACT (YEAR, MONTH, DAY, QUARTER, DOW, DOY, WEEK), UPPER/LOWER (ASCII letters only; other bytes unchanged), LENGTH (UTF-8
// characters), SUBSTRING (UTF-8 characters, SQL semantics for out-of-range starts).

#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "expressions/vector_kernels.h"

namespace tessera {
namespace {

// ISO 8601 weeks in `year`: 53 when it starts on a Thursday, or on a Wednesday in a leap year.
inline int IsoWeeksInYear(int year) {
  auto p = [](int y) { return ((y + y / 4 - y / 100 + y / 400) % 7 + 7) % 7; };
  return 52 + (p(year) == 4 || p(year - 1) == 3 ? 1 : 0);
}

inline int64_t FloorDays(int64_t micros) {
  return micros >= 0 ? micros / kMicrosPerDay : -((-(micros + 1)) / kMicrosPerDay) - 1;
}

template <typename In, typename Out, FunctionId kField>
absl::Status Extract(const KernelContext&, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const In* in = input.values<In>();
  Out* o = out->mutable_values<Out>();
  ForEachRow(rows, [&](uint32_t r) {
    int32_t days;
    if constexpr (sizeof(In) == 8) {
      const int64_t d = FloorDays(in[r]);
      days = static_cast<int32_t>(d);
    } else {
      days = in[r];
    }
    int year;
    unsigned month, day;
    CivilFromDays(days, &year, &month, &day);
    switch (kField) {
      case FunctionId::kExtractYear:
        o[r] = static_cast<Out>(year);
        break;
      case FunctionId::kExtractMonth:
        o[r] = static_cast<Out>(month);
        break;
      case FunctionId::kExtractQuarter:
        o[r] = static_cast<Out>((month - 1) / 3 + 1);
        break;
      case FunctionId::kExtractDayOfWeek:  // 1970-01-01 was a Thursday (4)
        o[r] = static_cast<Out>(((days % 7) + 11) % 7);
        break;
      case FunctionId::kExtractDayOfYear:
        o[r] = static_cast<Out>(days - DaysFromCivil(year, 1, 1) + 1);
        break;
      case FunctionId::kExtractWeek: {
        const int iso_weekday = (((days % 7) + 10) % 7) + 1;  // Monday 1 ... Sunday 7
        const int day_of_year = days - DaysFromCivil(year, 1, 1) + 1;
        int week = (day_of_year - iso_weekday + 10) / 7;
        if (week < 1) {
          week = IsoWeeksInYear(year - 1);
        } else if (week > IsoWeeksInYear(year)) {
          week = 1;
        }
        o[r] = static_cast<Out>(week);
        break;
      }
      default:
        o[r] = static_cast<Out>(day);
        break;
    }
  });
  return absl::OkStatus();
}

template <typename In, typename Out>
absl::StatusOr<UnaryKernel> ExtractFor(FunctionId field) {
  switch (field) {
    case FunctionId::kExtractYear:
      return &Extract<In, Out, FunctionId::kExtractYear>;
    case FunctionId::kExtractMonth:
      return &Extract<In, Out, FunctionId::kExtractMonth>;
    case FunctionId::kExtractDay:
      return &Extract<In, Out, FunctionId::kExtractDay>;
    case FunctionId::kExtractQuarter:
      return &Extract<In, Out, FunctionId::kExtractQuarter>;
    case FunctionId::kExtractDayOfWeek:
      return &Extract<In, Out, FunctionId::kExtractDayOfWeek>;
    case FunctionId::kExtractDayOfYear:
      return &Extract<In, Out, FunctionId::kExtractDayOfYear>;
    case FunctionId::kExtractWeek:
      return &Extract<In, Out, FunctionId::kExtractWeek>;
    default:
      return absl::InvalidArgumentError("not an EXTRACT field");
  }
}

template <bool kUpper>
absl::Status ChangeCase(const KernelContext&, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const std::string_view* in = input.strings();
  std::string_view* o = out->mutable_strings();
  constexpr char kFrom = kUpper ? 'a' : 'A';
  ForEachRow(rows, [&](uint32_t r) {
    if (input.IsNull(r)) {
      o[r] = {};
      return;
    }
    const std::string_view s = in[r];
    size_t first = 0;
    while (first < s.size() && static_cast<unsigned char>(s[first] - kFrom) >= 26) ++first;
    if (first == s.size()) {
      o[r] = s;  // nothing to change: view the input
      return;
    }
    char* copy = out->AllocateInArena(s.size());
    std::memcpy(copy, s.data(), s.size());
    for (size_t i = first; i < s.size(); ++i) {
      if (static_cast<unsigned char>(copy[i] - kFrom) < 26) copy[i] = static_cast<char>(copy[i] ^ 0x20);
    }
    o[r] = std::string_view(copy, s.size());
  });
  return absl::OkStatus();
}

inline size_t CharacterCount(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

template <typename Out>
absl::Status Length(const KernelContext&, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const std::string_view* in = input.strings();
  Out* o = out->mutable_values<Out>();
  ForEachRow(rows, [&](uint32_t r) { o[r] = input.IsNull(r) ? 0 : static_cast<Out>(CharacterCount(in[r])); });
  return absl::OkStatus();
}

// Byte offset of character `index` (0-based) in `s`, or s.size() if it has fewer characters.
inline size_t ByteOffsetOfCharacter(std::string_view s, int64_t index) {
  if (index <= 0) return 0;
  int64_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == index) return i;
      ++seen;
    }
  }
  return s.size();
}

}  // namespace

absl::StatusOr<UnaryKernel> PlanExtract(FunctionId field, const Type& input, const Type& result) {
  const bool wide_result = result.id() == TypeId::kBigInt;
  if (!wide_result && result.id() != TypeId::kInteger) {
    return absl::InvalidArgumentError(absl::StrCat("EXTRACT yields INTEGER, not ", result.ToString()));
  }
  if (input.id() == TypeId::kDate)
    return wide_result ? ExtractFor<int32_t, int64_t>(field) : ExtractFor<int32_t, int32_t>(field);
  if (input.id() == TypeId::kTimestamp) {
    return wide_result ? ExtractFor<int64_t, int64_t>(field) : ExtractFor<int64_t, int32_t>(field);
  }
  return absl::InvalidArgumentError(absl::StrCat("cannot EXTRACT from ", input.ToString()));
}

UnaryKernel UpperKernel() { return &ChangeCase<true>; }
UnaryKernel LowerKernel() { return &ChangeCase<false>; }

absl::StatusOr<UnaryKernel> PlanLength(const Type& result) {
  if (result.id() == TypeId::kInteger) return &Length<int32_t>;
  if (result.id() == TypeId::kBigInt) return &Length<int64_t>;
  return absl::InvalidArgumentError(absl::StrCat("LENGTH yields INTEGER, not ", result.ToString()));
}

absl::Status SubstringKernel(const ColumnVector& string, const ColumnVector& start, const ColumnVector* length,
                             ActiveRows rows, ColumnVector* out) {
  const std::string_view* in = string.strings();
  const int64_t* starts = start.values<int64_t>();
  const int64_t* lengths = length != nullptr ? length->values<int64_t>() : nullptr;
  std::string_view* o = out->mutable_strings();
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (!status.ok()) return;
    if (out->IsNull(r)) {
      o[r] = {};
      return;
    }
    const std::string_view s = in[r];
    // Characters [first, end) in 1-based positions, clipped to [1, infinity).
    const int64_t first = starts[r];
    int64_t end = std::numeric_limits<int64_t>::max();
    if (lengths != nullptr) {
      if (lengths[r] < 0) {
        status = absl::InvalidArgumentError("negative substring length not allowed");
        return;
      }
      if (__builtin_add_overflow(first, lengths[r], &end)) end = std::numeric_limits<int64_t>::max();
    }
    const int64_t clipped_first = first < 1 ? 1 : first;
    if (end <= clipped_first) {
      o[r] = {};
      return;
    }
    const size_t begin_byte = ByteOffsetOfCharacter(s, clipped_first - 1);
    const std::string_view rest = s.substr(begin_byte);
    const size_t end_byte =
        end == std::numeric_limits<int64_t>::max() ? rest.size() : ByteOffsetOfCharacter(rest, end - clipped_first);
    o[r] = rest.substr(0, end_byte);  // a view into the input
  });
  return status;
}

}  // namespace tessera
