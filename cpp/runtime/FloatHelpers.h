//===- FloatHelpers.h - conversion helpers compiled kernels call -*- C++ -*-===//
//
// LLVM lowers some float conversions to calls into compiler-rt/libgcc
// (`fptrunc float to bfloat` becomes `__truncsfbf2`). libgcc gained the
// bfloat16 ones only in GCC 13, so on an older system (Debian 12, Ubuntu
// 22.04) a kernel using bfloat16 would not load. The runtime carries its own
// copies, resolved before the process's (runtimeSymbol, OrderedAtomics.h),
// so every machine computes the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef ADJIT_RUNTIME_FLOATHELPERS_H
#define ADJIT_RUNTIME_FLOATHELPERS_H

#include <cstdint>

namespace adjit {
namespace runtime {

/// The bfloat16 nearest to `x` (ties to even), as its bits; NaNs stay NaNs
/// (quiet, sign kept).
uint16_t bfloat16FromFloat(float x);

/// The bfloat16 nearest to `x`, rounded once (not through float).
uint16_t bfloat16FromDouble(double x);

} // namespace runtime
} // namespace adjit

// bfloat16 travels in the low 16 bits of the first floating-point register
// (xmm0 on x86-64, h0 on AArch64), as _Float16 does.
extern "C" {
_Float16 adjit_rt_truncsfbf2(float x);
_Float16 adjit_rt_truncdfbf2(double x);
}

#endif // ADJIT_RUNTIME_FLOATHELPERS_H
