#include "expressions/decimal_arithmetic.h"

namespace tessera {

using uint128 = unsigned __int128;

bool ScaledDivide(int128 numerator, int exponent, int128 divisor, int128 bound, int128* out) {
  if (divisor == 0) return false;
  // Fast paths: the scaled operand fits in 128 bits.
  if (exponent >= 0 && exponent <= kMaxDecimalPrecision) {
    int128 scaled;
    if (!__builtin_mul_overflow(numerator, PowerOfTen(exponent), &scaled)) {
      const int128 q = DivideRoundHalfAway(scaled, divisor);
      if (q >= bound || q <= -bound) return false;
      *out = q;
      return true;
    }
  } else if (exponent < 0) {
    int128 scaled_divisor;
    if (-exponent <= kMaxDecimalPrecision && !__builtin_mul_overflow(divisor, PowerOfTen(-exponent), &scaled_divisor)) {
      const int128 q = DivideRoundHalfAway(numerator, scaled_divisor);
      if (q >= bound || q <= -bound) return false;
      *out = q;
      return true;
    }
    // |divisor * 10^-exponent| >= 2^127 > 2 |numerator|: the quotient rounds to zero.
    *out = 0;
    return true;
  }
  // Long division in base 10 on magnitudes: the remainder stays below |divisor| < 2^127, so remainder * 10
  // fits in 128 unsigned bits, and the quotient is checked against bound (<= 10^38) before every
  // multiplication.
  const bool negative = (numerator < 0) != (divisor < 0);
  const uint128 a = static_cast<uint128>(AbsoluteValue(numerator));
  const uint128 b = static_cast<uint128>(AbsoluteValue(divisor));
  const uint128 limit = static_cast<uint128>(bound);
  uint128 q = a / b;
  uint128 r = a % b;
  if (q >= limit) return false;
  for (int i = 0; i < exponent; ++i) {
    r *= 10;
    q = q * 10 + r / b;
    r %= b;
    if (q >= limit) return false;
  }
  if (r >= b - r) ++q;
  if (q >= limit) return false;
  *out = negative ? -static_cast<int128>(q) : static_cast<int128>(q);
  return true;
}

bool RescaleDecimal(int128 unscaled, int from, int to, int precision, int128* out) {
  int128 result = unscaled;
  if (to > from) {
    if (to - from > kMaxDecimalPrecision || __builtin_mul_overflow(unscaled, PowerOfTen(to - from), &result)) {
      return false;
    }
  } else if (to < from) {
    result = from - to > kMaxDecimalPrecision ? 0 : DivideRoundHalfAway(unscaled, PowerOfTen(from - to));
  }
  if (!FitsDecimalPrecision(result, precision)) return false;
  *out = result;
  return true;
}

}  // namespace tessera
