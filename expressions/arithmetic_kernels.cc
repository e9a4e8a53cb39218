// Arithmetic kernels: INTEGER/BIGINT with overflow checks, DOUBLE, exact DECIMAL (64- and 128-bit), and
// DATE/TIMESTAMP/INTERVAL arithmetic; negation and ABS.
//
// Error checks never branch out of the hot loop: each loop ORs a "suspicious" flag, and only when it is set
// does a second pass find the first non-NULL offending row (NULL rows may hold garbage that looks like an
// overflow).

#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "expressions/decimal_arithmetic.h"
#include "expressions/vector_kernels.h"

namespace tessera {
namespace {

absl::Status DivisionByZero() { return absl::InvalidArgumentError("division by zero"); }
absl::Status DecimalOverflow() { return absl::OutOfRangeError("DECIMAL overflow"); }
absl::Status TypeOutOfRange(const Type& type) {
  return absl::OutOfRangeError(absl::StrCat(type.ToString(), " out of range"));
}

// Finds the first active non-NULL row for which `bad(row)` holds; returns its error, else OK.
template <typename Bad, typename Error>
absl::Status FirstError(const ColumnVector& out, ActiveRows rows, Bad bad, Error error) {
  absl::Status status = absl::OkStatus();
  ForEachRow(rows, [&](uint32_t r) {
    if (status.ok() && !out.IsNull(r) && bad(r)) status = error(r);
  });
  return status;
}

// ---- INTEGER / BIGINT ----
template <typename T, ArithmeticOp kOp>
inline bool IntegerOp(T x, T y, T* v, bool* zero) {
  constexpr T kMin = std::numeric_limits<T>::min();
  switch (kOp) {
    case ArithmeticOp::kAdd:
      return __builtin_add_overflow(x, y, v);
    case ArithmeticOp::kSubtract:
      return __builtin_sub_overflow(x, y, v);
    case ArithmeticOp::kMultiply:
      return __builtin_mul_overflow(x, y, v);
    case ArithmeticOp::kDivide: {
      const bool z = y == 0;
      const bool overflow = x == kMin && y == -1;
      *zero = z;
      *v = x / ((z | overflow) ? T{1} : y);
      return overflow;
    }
    case ArithmeticOp::kModulo: {
      const bool z = y == 0;
      *zero = z;
      *v = (z | (y == -1)) ? T{0} : x % y;
      return false;
    }
    default:
      return false;
  }
}

template <typename T, ArithmeticOp kOp>
absl::Status IntegerArithmetic(const KernelContext& context, const ColumnVector& left, const ColumnVector& right,
                               ActiveRows rows, ColumnVector* out) {
  const T* a = left.values<T>();
  const T* b = right.values<T>();
  T* o = out->mutable_values<T>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    bool zero = false;
    suspicious |= IntegerOp<T, kOp>(a[r], b[r], &o[r], &zero) | zero;
  });
  if (!suspicious) return absl::OkStatus();
  return FirstError(
      *out, rows,
      [&](uint32_t r) {
        T v;
        bool zero = false;
        return IntegerOp<T, kOp>(a[r], b[r], &v, &zero) || zero;
      },
      [&](uint32_t r) {
        T v;
        bool zero = false;
        IntegerOp<T, kOp>(a[r], b[r], &v, &zero);
        return zero ? DivisionByZero() : TypeOutOfRange(context.result_type);
      });
}

// ---- DOUBLE ----
template <ArithmeticOp kOp>
absl::Status DoubleArithmetic(const KernelContext&, const ColumnVector& left, const ColumnVector& right,
                              ActiveRows rows, ColumnVector* out) {
  const double* a = left.values<double>();
  const double* b = right.values<double>();
  double* o = out->mutable_values<double>();
  bool zero = false;
  ForEachRow(rows, [&](uint32_t r) {
    switch (kOp) {
      case ArithmeticOp::kAdd:
        o[r] = a[r] + b[r];
        break;
      case ArithmeticOp::kSubtract:
        o[r] = a[r] - b[r];
        break;
      case ArithmeticOp::kMultiply:
        o[r] = a[r] * b[r];
        break;
      case ArithmeticOp::kDivide:
        zero |= b[r] == 0;
        o[r] = a[r] / b[r];
        break;
      case ArithmeticOp::kModulo:
        zero |= b[r] == 0;
        o[r] = std::fmod(a[r], b[r]);
        break;
      default:
        break;
    }
  });
  if (!zero) return absl::OkStatus();
  return FirstError(
      *out, rows, [&](uint32_t r) { return b[r] == 0; }, [](uint32_t) { return DivisionByZero(); });
}

// ---- DECIMAL ----
// Operands L and R (int64_t or int128 unscaled), result O, computed in C (int64_t only when all are int64_t).
struct DecimalParams {
  int left_scale, right_scale, result_scale;
  int128 bound;  // 10^result precision
};

DecimalParams MakeDecimalParams(const KernelContext& context) {
  return {context.left_type.scale(), context.right_type.scale(), context.result_type.scale(),
          PowerOfTen(context.result_type.precision())};
}

// a * b with overflow detection; products of two 64-bit values (the common case) need no check in 128 bits,
// which avoids the slow generic 128-bit overflow multiplication.
template <typename C>
[[gnu::always_inline]] inline bool MultiplyChecked(C a, C b, C* out) {
  if constexpr (sizeof(C) == 16) {
    constexpr int128 kLow = std::numeric_limits<int64_t>::min(), kHigh = std::numeric_limits<int64_t>::max();
    if (a >= kLow && a <= kHigh && b >= kLow && b <= kHigh) {
      *out = static_cast<int128>(static_cast<int64_t>(a)) * static_cast<int64_t>(b);
      return false;
    }
  }
  return __builtin_mul_overflow(a, b, out);
}

// Adjusts `v` from scale `from` to `to` in place; true on overflow.
template <typename C>
[[gnu::always_inline]] inline bool AdjustScale(C* v, C up, C down) {
  if (up != 1) return MultiplyChecked(*v, up, v);
  if (down != 1) {
    C q = *v / down;
    const C rem = *v % down;
    const C abs_rem = rem < 0 ? -rem : rem;
    if (abs_rem >= down - abs_rem) q += *v < 0 ? -1 : 1;
    *v = q;
  }
  return false;
}

// Per-batch constants of a decimal operation computed in C.
template <typename C>
struct DecimalConstants {
  C left_factor, right_factor;  // bring the operands to the common scale (add, subtract, modulo)
  C up, down;                   // then from the common scale to the result scale
  C bound;                      // 10^result precision (capped at C's maximum)
};

// How a batch adjusts scales, chosen once per batch so the row loop has no such branches.
enum class ScaleMode { kNone, kUp, kDown };

template <typename C, ArithmeticOp kOp, bool kFactors, ScaleMode kMode, typename L, typename R>
[[gnu::always_inline]] inline bool DecimalRow(L left, R right, const DecimalConstants<C>& k, C* v, bool* zero) {
  bool overflow = false;
  if constexpr (kOp == ArithmeticOp::kMultiply && sizeof(C) == 16 && sizeof(L) == 8 && sizeof(R) == 8) {
    *v = static_cast<int128>(left) * static_cast<int128>(right);  // exact: |product| < 2^126
  } else {
    C x = static_cast<C>(left);
    C y = static_cast<C>(right);
    if constexpr (kFactors) {
      overflow |= MultiplyChecked(x, k.left_factor, &x);
      overflow |= MultiplyChecked(y, k.right_factor, &y);
    }
    switch (kOp) {
      case ArithmeticOp::kAdd:
        overflow |= __builtin_add_overflow(x, y, v);
        break;
      case ArithmeticOp::kSubtract:
        overflow |= __builtin_sub_overflow(x, y, v);
        break;
      case ArithmeticOp::kMultiply:
        overflow |= MultiplyChecked(x, y, v);
        break;
      case ArithmeticOp::kModulo:
        *zero = y == 0;
        *v = (y == 0) | (y == -1) ? C{0} : x % y;  // x % -1 is 0 (and would trap for the minimum)
        break;
      default:
        break;
    }
  }
  if constexpr (kMode == ScaleMode::kUp) overflow |= MultiplyChecked(*v, k.up, v);
  if constexpr (kMode == ScaleMode::kDown) AdjustScale<C>(v, 1, k.down);
  overflow |= (*v >= k.bound) | (*v <= -k.bound);
  return overflow;
}

template <typename L, typename R, typename O, typename C, ArithmeticOp kOp, bool kFactors, ScaleMode kMode>
absl::Status DecimalLoop(const ColumnVector& left, const ColumnVector& right, ActiveRows rows, ColumnVector* out,
                         const DecimalConstants<C>& k) {
  const L* a = left.values<L>();
  const R* b = right.values<R>();
  O* o = out->mutable_values<O>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    C v = 0;
    bool zero = false;
    suspicious |= DecimalRow<C, kOp, kFactors, kMode>(a[r], b[r], k, &v, &zero) | zero;
    o[r] = static_cast<O>(v);
  });
  if (!suspicious) return absl::OkStatus();
  bool zero = false;
  return FirstError(
      *out, rows,
      [&](uint32_t r) {
        C v = 0;
        zero = false;
        return DecimalRow<C, kOp, kFactors, kMode>(a[r], b[r], k, &v, &zero) || zero;
      },
      [&](uint32_t) { return zero ? DivisionByZero() : DecimalOverflow(); });
}

template <typename L, typename R, typename O, typename C, ArithmeticOp kOp, bool kFactors>
absl::Status DecimalDispatchMode(const ColumnVector& left, const ColumnVector& right, ActiveRows rows,
                                 ColumnVector* out, const DecimalConstants<C>& k) {
  if (k.up != 1) return DecimalLoop<L, R, O, C, kOp, kFactors, ScaleMode::kUp>(left, right, rows, out, k);
  if (k.down != 1) return DecimalLoop<L, R, O, C, kOp, kFactors, ScaleMode::kDown>(left, right, rows, out, k);
  return DecimalLoop<L, R, O, C, kOp, kFactors, ScaleMode::kNone>(left, right, rows, out, k);
}

template <typename L, typename R, typename O, typename C, ArithmeticOp kOp>
absl::Status DecimalArithmetic(const KernelContext& context, const ColumnVector& left, const ColumnVector& right,
                               ActiveRows rows, ColumnVector* out) {
  const DecimalParams p = MakeDecimalParams(context);
  // Operands are brought to a common scale (add, subtract, modulo) or multiplied as they are (scale s1 + s2);
  // the result is then rescaled to the result type's scale.
  const int common =
      kOp == ArithmeticOp::kMultiply ? p.left_scale + p.right_scale : std::max(p.left_scale, p.right_scale);
  DecimalConstants<C> k;
  k.left_factor = kOp == ArithmeticOp::kMultiply ? 1 : static_cast<C>(PowerOfTen(common - p.left_scale));
  k.right_factor = kOp == ArithmeticOp::kMultiply ? 1 : static_cast<C>(PowerOfTen(common - p.right_scale));
  k.up = p.result_scale > common ? static_cast<C>(PowerOfTen(p.result_scale - common)) : 1;
  k.down = p.result_scale < common ? static_cast<C>(PowerOfTen(common - p.result_scale)) : 1;
  k.bound = static_cast<C>(std::min(p.bound, static_cast<int128>(std::numeric_limits<C>::max())));
  if constexpr (kOp != ArithmeticOp::kMultiply) {
    if (k.left_factor != 1 || k.right_factor != 1) {
      return DecimalDispatchMode<L, R, O, C, kOp, true>(left, right, rows, out, k);
    }
  }
  return DecimalDispatchMode<L, R, O, C, kOp, false>(left, right, rows, out, k);
}

// Division: round(a * 10^(S + s2 - s1) / b), exact in 128 bits (long division when the scaled dividend does
// not fit), rounded half away from zero.
template <typename L, typename R, typename O>
absl::Status DecimalDivide(const KernelContext& context, const ColumnVector& left, const ColumnVector& right,
                           ActiveRows rows, ColumnVector* out) {
  const DecimalParams p = MakeDecimalParams(context);
  const L* a = left.values<L>();
  const R* b = right.values<R>();
  O* o = out->mutable_values<O>();
  const int exponent = p.result_scale + p.right_scale - p.left_scale;
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    int128 q = 0;
    suspicious |= !ScaledDivide(static_cast<int128>(a[r]), exponent, static_cast<int128>(b[r]), p.bound, &q);
    o[r] = static_cast<O>(q);
  });
  if (!suspicious) return absl::OkStatus();
  return FirstError(
      *out, rows,
      [&](uint32_t r) {
        int128 q;
        return !ScaledDivide(static_cast<int128>(a[r]), exponent, static_cast<int128>(b[r]), p.bound, &q);
      },
      [&](uint32_t r) { return b[r] == 0 ? DivisionByZero() : DecimalOverflow(); });
}

template <typename L, typename R, typename O, typename C>
absl::StatusOr<BinaryKernel> DecimalKernelFor(ArithmeticOp op) {
  switch (op) {
    case ArithmeticOp::kAdd:
      return &DecimalArithmetic<L, R, O, C, ArithmeticOp::kAdd>;
    case ArithmeticOp::kSubtract:
      return &DecimalArithmetic<L, R, O, C, ArithmeticOp::kSubtract>;
    case ArithmeticOp::kMultiply:
      return &DecimalArithmetic<L, R, O, C, ArithmeticOp::kMultiply>;
    case ArithmeticOp::kModulo:
      return &DecimalArithmetic<L, R, O, C, ArithmeticOp::kModulo>;
    case ArithmeticOp::kDivide:
      return &DecimalDivide<L, R, O>;
    default:
      return absl::InvalidArgumentError("unsupported DECIMAL operation");
  }
}

template <typename L, typename R>
absl::StatusOr<BinaryKernel> DecimalKernelForResult(ArithmeticOp op, const Type& left, const Type& right,
                                                    const Type& result) {
  const int common =
      op == ArithmeticOp::kMultiply ? left.scale() + right.scale() : std::max(left.scale(), right.scale());
  // 64-bit computation only when every factor and intermediate provably fits: narrow operands and result, and
  // scale adjustments of at most 18 digits (the bound check then catches every overflow).
  const bool narrow =
      sizeof(L) == 8 && sizeof(R) == 8 && !result.IsWideDecimal() && common <= 18 && result.scale() <= 18;
  if (result.IsWideDecimal()) return DecimalKernelFor<L, R, int128, int128>(op);
  if (narrow) return DecimalKernelFor<L, R, int64_t, int64_t>(op);
  return DecimalKernelFor<L, R, int64_t, int128>(op);
}

// ---- DATE / TIMESTAMP / INTERVAL ----
constexpr int64_t kMaxDateDays = 1000000000;    // ~2.7 million years: far beyond 1..9999, keeps month math exact
constexpr int32_t kMaxIntervalMonths = 120000;  // 10,000 years

absl::Status DateOutOfRange() { return absl::OutOfRangeError("DATE out of range"); }
absl::Status TimestampOutOfRange() { return absl::OutOfRangeError("TIMESTAMP out of range"); }

// days + sign * interval for a DATE (the interval's time part counts whole days, floored); false if out of
// range.
inline bool AddIntervalToDate(int32_t days, const Interval& interval, int sign, int32_t* out) {
  if (days > kMaxDateDays || days < -kMaxDateDays || interval.months > kMaxIntervalMonths ||
      interval.months < -kMaxIntervalMonths) {
    return false;
  }
  int64_t result = days;
  if (interval.months != 0) result = AddMonthsToDate(days, sign * interval.months);
  const int64_t micro_days =
      interval.micros >= 0 ? interval.micros / kMicrosPerDay : -((-(interval.micros + 1)) / kMicrosPerDay) - 1;
  result += sign * (static_cast<int64_t>(interval.days) + micro_days);
  if (result > kMaxDateDays || result < -kMaxDateDays) return false;
  *out = static_cast<int32_t>(result);
  return true;
}

inline bool AddIntervalToTimestampChecked(int64_t micros, const Interval& interval, int sign, int64_t* out) {
  if (interval.months > kMaxIntervalMonths || interval.months < -kMaxIntervalMonths) return false;
  int64_t days = micros >= 0 ? micros / kMicrosPerDay : (micros - (kMicrosPerDay - 1)) / kMicrosPerDay;
  const int64_t time = micros - days * kMicrosPerDay;
  if (interval.months != 0) days = AddMonthsToDate(static_cast<int32_t>(days), sign * interval.months);
  int64_t result;
  if (__builtin_add_overflow(days, sign * static_cast<int64_t>(interval.days), &days) ||
      __builtin_mul_overflow(days, kMicrosPerDay, &result) || __builtin_add_overflow(result, time, &result) ||
      __builtin_add_overflow(result, sign * interval.micros, &result)) {
    return false;
  }
  *out = result;
  return true;
}

template <int kSign, bool kIntervalFirst>
absl::Status DateIntervalKernel(const KernelContext&, const ColumnVector& left, const ColumnVector& right,
                                ActiveRows rows, ColumnVector* out) {
  const ColumnVector& dates = kIntervalFirst ? right : left;
  const ColumnVector& intervals = kIntervalFirst ? left : right;
  const int32_t* d = dates.values<int32_t>();
  const Interval* iv = intervals.values<Interval>();
  int32_t* o = out->mutable_values<int32_t>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) { suspicious |= !AddIntervalToDate(d[r], iv[r], kSign, &o[r]); });
  if (!suspicious) return absl::OkStatus();
  return FirstError(
      *out, rows,
      [&](uint32_t r) {
        int32_t v;
        return !AddIntervalToDate(d[r], iv[r], kSign, &v);
      },
      [](uint32_t) { return DateOutOfRange(); });
}

template <int kSign, bool kIntervalFirst>
absl::Status TimestampIntervalKernel(const KernelContext&, const ColumnVector& left, const ColumnVector& right,
                                     ActiveRows rows, ColumnVector* out) {
  const ColumnVector& stamps = kIntervalFirst ? right : left;
  const ColumnVector& intervals = kIntervalFirst ? left : right;
  const int64_t* t = stamps.values<int64_t>();
  const Interval* iv = intervals.values<Interval>();
  int64_t* o = out->mutable_values<int64_t>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    int64_t v = 0;
    suspicious |= !AddIntervalToTimestampChecked(t[r], iv[r], kSign, &v);
    o[r] = v;
  });
  if (!suspicious) return absl::OkStatus();
  return FirstError(
      *out, rows,
      [&](uint32_t r) {
        int64_t v;
        return !AddIntervalToTimestampChecked(t[r], iv[r], kSign, &v);
      },
      [](uint32_t) { return TimestampOutOfRange(); });
}

// DATE +/- integer days (either order for +).
template <typename I, int kSign, bool kIntegerFirst>
absl::Status DateIntegerKernel(const KernelContext&, const ColumnVector& left, const ColumnVector& right,
                               ActiveRows rows, ColumnVector* out) {
  const int32_t* d = (kIntegerFirst ? right : left).values<int32_t>();
  const I* n = (kIntegerFirst ? left : right).values<I>();
  int32_t* o = out->mutable_values<int32_t>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    int64_t v;
    bool overflow = __builtin_add_overflow(static_cast<int64_t>(d[r]), kSign * static_cast<int64_t>(n[r]), &v);
    overflow |= v > kMaxDateDays || v < -kMaxDateDays;
    suspicious |= overflow;
    o[r] = static_cast<int32_t>(v);
  });
  if (!suspicious) return absl::OkStatus();
  return FirstError(
      *out, rows,
      [&](uint32_t r) {
        int64_t v;
        return __builtin_add_overflow(static_cast<int64_t>(d[r]), kSign * static_cast<int64_t>(n[r]), &v) ||
               v > kMaxDateDays || v < -kMaxDateDays;
      },
      [](uint32_t) { return DateOutOfRange(); });
}

template <typename O>
absl::Status DateDifference(const KernelContext&, const ColumnVector& left, const ColumnVector& right, ActiveRows rows,
                            ColumnVector* out) {
  const int32_t* a = left.values<int32_t>();
  const int32_t* b = right.values<int32_t>();
  O* o = out->mutable_values<O>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    const int64_t v = static_cast<int64_t>(a[r]) - b[r];
    suspicious |= v > std::numeric_limits<O>::max() || v < std::numeric_limits<O>::min();
    o[r] = static_cast<O>(v);
  });
  if (!suspicious) return absl::OkStatus();
  return FirstError(
      *out, rows,
      [&](uint32_t r) {
        const int64_t v = static_cast<int64_t>(a[r]) - b[r];
        return v > std::numeric_limits<O>::max() || v < std::numeric_limits<O>::min();
      },
      [](uint32_t) { return absl::OutOfRangeError("INTEGER out of range"); });
}

// ---- negation and ABS ----
template <typename T, bool kAbs>
absl::Status NegateOrAbsInteger(const KernelContext& context, const ColumnVector& input, ActiveRows rows,
                                ColumnVector* out) {
  const T* a = input.values<T>();
  T* o = out->mutable_values<T>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    const T x = a[r];
    suspicious |= x == std::numeric_limits<T>::min();
    using U = std::make_unsigned_t<T>;
    const T negated = static_cast<T>(U{0} - static_cast<U>(x));  // wraps for the minimum, which is reported
    o[r] = kAbs ? (x < 0 ? negated : x) : negated;
  });
  if (!suspicious) return absl::OkStatus();
  return FirstError(
      *out, rows, [&](uint32_t r) { return a[r] == std::numeric_limits<T>::min(); },
      [&](uint32_t) { return TypeOutOfRange(context.result_type); });
}

// DECIMAL and DOUBLE: symmetric ranges, no overflow.
template <typename T, bool kAbs>
absl::Status NegateOrAbsSymmetric(const KernelContext&, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const T* a = input.values<T>();
  T* o = out->mutable_values<T>();
  ForEachRow(rows, [&](uint32_t r) { o[r] = kAbs ? (a[r] < 0 ? -a[r] : a[r]) : -a[r]; });
  return absl::OkStatus();
}

template <bool kAbs>
absl::Status NegateOrAbsDouble(const KernelContext&, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const double* a = input.values<double>();
  double* o = out->mutable_values<double>();
  ForEachRow(rows, [&](uint32_t r) { o[r] = kAbs ? std::fabs(a[r]) : -a[r]; });
  return absl::OkStatus();
}

absl::Status NegateInterval(const KernelContext&, const ColumnVector& input, ActiveRows rows, ColumnVector* out) {
  const Interval* a = input.values<Interval>();
  Interval* o = out->mutable_values<Interval>();
  bool suspicious = false;
  ForEachRow(rows, [&](uint32_t r) {
    const Interval& x = a[r];
    suspicious |= x.months == std::numeric_limits<int32_t>::min() || x.days == std::numeric_limits<int32_t>::min() ||
                  x.micros == std::numeric_limits<int64_t>::min();
    o[r] = Interval{static_cast<int32_t>(0u - static_cast<uint32_t>(x.months)),
                    static_cast<int32_t>(0u - static_cast<uint32_t>(x.days)),
                    static_cast<int64_t>(0ull - static_cast<uint64_t>(x.micros))};
  });
  if (!suspicious) return absl::OkStatus();
  return FirstError(
      *out, rows,
      [&](uint32_t r) {
        const Interval& x = a[r];
        return x.months == std::numeric_limits<int32_t>::min() || x.days == std::numeric_limits<int32_t>::min() ||
               x.micros == std::numeric_limits<int64_t>::min();
      },
      [](uint32_t) { return absl::OutOfRangeError("INTERVAL out of range"); });
}

template <bool kAbs>
absl::StatusOr<UnaryKernel> PlanNegateOrAbs(const Type& type) {
  switch (type.id()) {
    case TypeId::kInteger:
      return &NegateOrAbsInteger<int32_t, kAbs>;
    case TypeId::kBigInt:
      return &NegateOrAbsInteger<int64_t, kAbs>;
    case TypeId::kDouble:
      return &NegateOrAbsDouble<kAbs>;
    case TypeId::kDecimal:
      return type.IsWideDecimal() ? &NegateOrAbsSymmetric<int128, kAbs> : &NegateOrAbsSymmetric<int64_t, kAbs>;
    case TypeId::kInterval:
      if (!kAbs) return &NegateInterval;
      break;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cannot apply ", kAbs ? "ABS" : "unary minus", " to ", type.ToString()));
}

template <typename T>
absl::StatusOr<BinaryKernel> IntegerKernelFor(ArithmeticOp op) {
  switch (op) {
    case ArithmeticOp::kAdd:
      return &IntegerArithmetic<T, ArithmeticOp::kAdd>;
    case ArithmeticOp::kSubtract:
      return &IntegerArithmetic<T, ArithmeticOp::kSubtract>;
    case ArithmeticOp::kMultiply:
      return &IntegerArithmetic<T, ArithmeticOp::kMultiply>;
    case ArithmeticOp::kDivide:
      return &IntegerArithmetic<T, ArithmeticOp::kDivide>;
    case ArithmeticOp::kModulo:
      return &IntegerArithmetic<T, ArithmeticOp::kModulo>;
    default:
      return absl::InvalidArgumentError("unsupported integer operation");
  }
}

absl::StatusOr<BinaryKernel> DoubleKernelFor(ArithmeticOp op) {
  switch (op) {
    case ArithmeticOp::kAdd:
      return &DoubleArithmetic<ArithmeticOp::kAdd>;
    case ArithmeticOp::kSubtract:
      return &DoubleArithmetic<ArithmeticOp::kSubtract>;
    case ArithmeticOp::kMultiply:
      return &DoubleArithmetic<ArithmeticOp::kMultiply>;
    case ArithmeticOp::kDivide:
      return &DoubleArithmetic<ArithmeticOp::kDivide>;
    case ArithmeticOp::kModulo:
      return &DoubleArithmetic<ArithmeticOp::kModulo>;
    default:
      return absl::InvalidArgumentError("unsupported DOUBLE operation");
  }
}

}  // namespace

absl::StatusOr<BinaryKernel> PlanArithmetic(ArithmeticOp op, const Type& left, const Type& right, const Type& result) {
  const TypeId l = left.id(), r = right.id(), t = result.id();
  const bool add = op == ArithmeticOp::kAdd, subtract = op == ArithmeticOp::kSubtract;
  // Date and time arithmetic.
  if (t == TypeId::kDate && (add || subtract)) {
    if (l == TypeId::kDate && r == TypeId::kInterval) {
      return add ? &DateIntervalKernel<1, false> : &DateIntervalKernel<-1, false>;
    }
    if (add && l == TypeId::kInterval && r == TypeId::kDate) return &DateIntervalKernel<1, true>;
    if (l == TypeId::kDate && r == TypeId::kInteger) {
      return add ? &DateIntegerKernel<int32_t, 1, false> : &DateIntegerKernel<int32_t, -1, false>;
    }
    if (l == TypeId::kDate && r == TypeId::kBigInt) {
      return add ? &DateIntegerKernel<int64_t, 1, false> : &DateIntegerKernel<int64_t, -1, false>;
    }
    if (add && r == TypeId::kDate && l == TypeId::kInteger) return &DateIntegerKernel<int32_t, 1, true>;
    if (add && r == TypeId::kDate && l == TypeId::kBigInt) return &DateIntegerKernel<int64_t, 1, true>;
  }
  if (t == TypeId::kTimestamp && (add || subtract)) {
    if (l == TypeId::kTimestamp && r == TypeId::kInterval) {
      return add ? &TimestampIntervalKernel<1, false> : &TimestampIntervalKernel<-1, false>;
    }
    if (add && l == TypeId::kInterval && r == TypeId::kTimestamp) return &TimestampIntervalKernel<1, true>;
  }
  if (subtract && l == TypeId::kDate && r == TypeId::kDate) {
    if (t == TypeId::kInteger) return &DateDifference<int32_t>;
    if (t == TypeId::kBigInt) return &DateDifference<int64_t>;
  }
  if (t == TypeId::kDecimal && l == TypeId::kDecimal && r == TypeId::kDecimal) {
    const int common =
        op == ArithmeticOp::kMultiply ? left.scale() + right.scale() : std::max(left.scale(), right.scale());
    if (common - result.scale() > kMaxDecimalPrecision || result.scale() - common > kMaxDecimalPrecision) {
      return absl::InvalidArgumentError(absl::StrCat("unsupported DECIMAL scales: ", left.ToString(), " ",
                                                     ArithmeticSymbol(op), " ", right.ToString(), " -> ",
                                                     result.ToString()));
    }
    if (left.IsWideDecimal()) {
      return right.IsWideDecimal() ? DecimalKernelForResult<int128, int128>(op, left, right, result)
                                   : DecimalKernelForResult<int128, int64_t>(op, left, right, result);
    }
    return right.IsWideDecimal() ? DecimalKernelForResult<int64_t, int128>(op, left, right, result)
                                 : DecimalKernelForResult<int64_t, int64_t>(op, left, right, result);
  }
  if (left == result && right == result) {
    if (t == TypeId::kInteger) return IntegerKernelFor<int32_t>(op);
    if (t == TypeId::kBigInt) return IntegerKernelFor<int64_t>(op);
    if (t == TypeId::kDouble) return DoubleKernelFor(op);
  }
  return absl::InvalidArgumentError(absl::StrCat("unsupported arithmetic: ", left.ToString(), " ", ArithmeticSymbol(op),
                                                 " ", right.ToString(), " -> ", result.ToString()));
}

absl::StatusOr<UnaryKernel> PlanNegate(const Type& type) { return PlanNegateOrAbs<false>(type); }
absl::StatusOr<UnaryKernel> PlanAbs(const Type& type) { return PlanNegateOrAbs<true>(type); }

}  // namespace tessera
