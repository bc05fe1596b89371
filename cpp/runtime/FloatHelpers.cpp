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
  // Round to float with round-to-odd, then to bfloat16 to nearest: with 16
  // more bits than bfloat16, round-to-odd keeps the sticky information, so
  // the two steps round exactly like one (no double rounding).
  float f = static_cast<float>(x);
  if (static_cast<double>(f) != x) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(x))
      f = std::nextafter(f, 0.0f); // rounded away from zero: truncate instead
    f = bitCast<float>(bitCast<uint32_t>(f) | 1u);
  }
  return bfloat16FromFloat(f);
}

_Float16 adjit_rt_truncsfbf2(float x) {
  return asHalfRegister(bfloat16FromFloat(x));
}

_Float16 adjit_rt_truncdfbf2(double x) {
  return asHalfRegister(bfloat16FromDouble(x));
}
