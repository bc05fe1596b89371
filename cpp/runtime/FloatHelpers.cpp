//===- FloatHelpers.cpp - conversion helpers compiled kernels call --------===//

#include "FloatHelpers.h"

#include <cmath>
#include <cstring>

using namespace adjit::runtime;

namespace {

template <typename To, typename From> To bitCast(From from) {
  static_assert(sizeof(To) == sizeof(From), "bit casts keep the size");
  To to;
  std::memcpy(&to, &from, sizeof(to));
  return to;
}

_Float16 asHalfRegister(uint16_t bits) { return bitCast<_Float16>(bits); }

/// `x` rounded to float with round-to-odd: an inexact result gets its last
/// bit set. Rounding that to a format with at least 2 fewer significand bits
/// gives the correctly rounded result of `x` (no double rounding).
float roundToOddFloat(double x) {
  float f = static_cast<float>(x);
  if (std::isnan(x) || static_cast<double>(f) == x)
    return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(x))
    f = std::nextafter(f, 0.0f); // rounded away from zero: truncate instead
  return bitCast<float>(bitCast<uint32_t>(f) | 1u);
}

} // namespace

uint16_t adjit::runtime::bfloat16FromFloat(float x) {
  uint32_t bits = bitCast<uint32_t>(x);
  if (std::isnan(x))
    return uint16_t((bits >> 16) | 0x0040); // quiet, sign and payload top kept
  // Round to nearest, ties to even: add just under half an ulp of the result,
  // plus one when the kept part is odd. A carry into the exponent is right
  // (it rounds up to the next binade, or to infinity).
  uint32_t bias = 0x7fff + ((bits >> 16) & 1);
  return uint16_t((bits + bias) >> 16);
}

uint16_t adjit::runtime::bfloat16FromDouble(double x) {
  if (std::isnan(x))
    return uint16_t((bitCast<uint64_t>(x) >> 48) | 0x0040);
  return bfloat16FromFloat(roundToOddFloat(x));
}

uint16_t adjit::runtime::halfFromFloat(float x) {
  uint32_t bits = bitCast<uint32_t>(x);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t a = bits & 0x7fffffff;
  if (a > 0x7f800000) // NaN: quiet, the payload's top bits kept
    return sign | 0x7e00 | uint16_t((a >> 13) & 0x3ff);
  if (a >= 0x477ff000) // |x| >= 65520 (halfway past the largest, 65504)
    return sign | 0x7c00;
  if (a >= 0x38800000) { // a normal half (|x| >= 2^-14): rebias by 127 - 15
    uint32_t rounded = a + 0xfff + ((a >> 13) & 1); // ties to even at bit 13
    return sign | uint16_t((rounded - 0x38000000) >> 13);
  }
  // A subnormal half, in units of 2^-24: the 24-bit significand shifted
  // right, rounded to nearest even.
  uint32_t exponent = a >> 23;
  if (exponent < 101) // |x| < 2^-25: rounds to zero
    return sign;
  uint32_t significand = (a & 0x7fffff) | 0x800000;
  uint32_t shift = 126 - exponent; // 14..25
  uint32_t q = significand >> shift;
  uint32_t rest = significand & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1)))
    ++q; // may carry into the smallest normal, 0x0400: the right bits
  return sign | uint16_t(q);
}

uint16_t adjit::runtime::halfFromDouble(double x) {
  if (std::isnan(x))
    return uint16_t(((bitCast<uint64_t>(x) >> 48) & 0x8000) | 0x7e00 |
                    ((bitCast<uint64_t>(x) >> 42) & 0x3ff));
  return halfFromFloat(roundToOddFloat(x));
}

float adjit::runtime::floatFromHalf(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f) // inf or NaN (payload kept)
    return bitCast<float>(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) { // zero or subnormal: mantissa x 2^-24, exact
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return bitCast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

_Float16 adjit_rt_truncsfbf2(float x) {
  return asHalfRegister(bfloat16FromFloat(x));
}

_Float16 adjit_rt_truncdfbf2(double x) {
  return asHalfRegister(bfloat16FromDouble(x));
}

_Float16 adjit_rt_truncsfhf2(float x) { return asHalfRegister(halfFromFloat(x)); }

_Float16 adjit_rt_truncdfhf2(double x) {
  return asHalfRegister(halfFromDouble(x));
}

float adjit_rt_extendhfsf2(_Float16 h) {
  return floatFromHalf(bitCast<uint16_t>(h));
}
