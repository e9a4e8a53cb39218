#pragma once
// Exact decimal helpers shared by the expression kernels and the aggregate functions (internal to
// expressions/). Unscaled values are __int128 holding value * 10^scale; every function is pure,
// allocation-free and exact. Rounding is half away from zero everywhere (SQL CAST, PostgreSQL numeric).

#include <cstdint>

#include "catalog/text_conversion.h"
#include "catalog/types.h"

namespace tessera {

inline int128 AbsoluteValue(int128 v) { return v < 0 ? -v : v; }

// value / divisor rounded half away from zero. Precondition: divisor != 0, neither is INT128_MIN.
inline int128 DivideRoundHalfAway(int128 value, int128 divisor) {
  int128 quotient = value / divisor;
  const int128 remainder = AbsoluteValue(value % divisor);
  const int128 magnitude = AbsoluteValue(divisor);
  if (remainder >= magnitude - remainder) quotient += (value < 0) != (divisor < 0) ? -1 : 1;
  return quotient;
}

// Whether |unscaled| fits DECIMAL(precision, *).
inline bool FitsDecimalPrecision(int128 unscaled, int precision) {
  const int128 bound = PowerOfTen(precision);
  return unscaled < bound && unscaled > -bound;
}

// *out = round(numerator * 10^exponent / divisor) (half away from zero), exactly, for any exponent in
// [-76, 76]. Returns false when divisor == 0 or when |result| >= bound (bound > 0, at most 10^38).
bool ScaledDivide(int128 numerator, int exponent, int128 divisor, int128 bound, int128* out);

// Rescales `unscaled` from scale `from` to scale `to` (rounding half away from zero when `to` < `from`).
// Returns false if the result needs precision > `precision`.
bool RescaleDecimal(int128 unscaled, int from, int to, int precision, int128* out);

}  // namespace tessera
