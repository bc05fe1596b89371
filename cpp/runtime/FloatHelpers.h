//===- FloatHelpers.h - conversion helpers compiled kernels call -*- C++ -*-===//
//
// LLVM lowers some float conversions to calls into compiler-rt/libgcc
// (`fptrunc float to bfloat` becomes `__truncsfbf2`; half conversions do on
// CPUs without F16C). Which of these the host's libgcc has depends on its
// version (the bfloat16 ones came with GCC 13), so the runtime carries its
// own and the object loader takes such helpers from the runtime only
// (runtimeSymbol, OrderedAtomics.h): a kernel loads, and computes the same
// bits, on every machine, and a helper the runtime lacks fails everywhere.
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

/// The IEEE half nearest to `x` (ties to even), as its bits; NaNs quiet.
uint16_t halfFromFloat(float x);

/// The IEEE half nearest to `x`, rounded once (not through float).
uint16_t halfFromDouble(double x);

/// The value of IEEE half bits `h` (exact).
float floatFromHalf(uint16_t h);

} // namespace runtime
} // namespace adjit

// bfloat16 and half travel in the low 16 bits of the first floating-point
// register (xmm0 on x86-64, h0 on AArch64), as _Float16 does.
extern "C" {
_Float16 adjit_rt_truncsfbf2(float x);  // __truncsfbf2
_Float16 adjit_rt_truncdfbf2(double x); // __truncdfbf2
_Float16 adjit_rt_truncsfhf2(float x);  // __truncsfhf2
_Float16 adjit_rt_truncdfhf2(double x); // __truncdfhf2
float adjit_rt_extendhfsf2(_Float16 h); // __extendhfsf2
}

#endif // ADJIT_RUNTIME_FLOATHELPERS_H
