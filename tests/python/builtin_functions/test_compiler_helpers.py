"""The compiler-runtime helpers the runtime carries (cpp/runtime/FloatHelpers.h).

LLVM turns some conversions into calls to libgcc/compiler-rt helpers
(`__truncsfbf2`, and the half ones on CPUs without F16C). The host's set
depends on its compiler's version, so the object loader takes every "__"
helper from the runtime and never from the process: a kernel needing one
the runtime lacks fails to load on every machine, CI included."""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from adjit import _runtime

SYMBOLS = _runtime.runtime_symbols()


def _half_returning(name, argtype):
    """Calls a helper returning a 16-bit float in xmm0: read back as the low
    bits of a float (the helpers zero the register's upper bits, so the
    float is a subnormal or zero and reads back exactly)."""
    fn = ctypes.CFUNCTYPE(ctypes.c_float, argtype)(SYMBOLS[name])
    return lambda x: int(np.float32(fn(x)).view(np.uint32)) & 0xFFFF


def _float32_patterns(seed):
    rng = np.random.default_rng(seed)
    special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF,
                        0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x7F7FFFFF,  # around 65504 / 65520
                        0x38800000, 0x387FFFFF, 0x38800FFF, 0x38801000, 0x33800000, 0x33800001,  # 2^-14, 2^-24
                        0x33000000, 0x33000001, 0x32FFFFFF, 0x00000001, 0x3F801000, 0x3F803000],
                       dtype=np.uint32)
    # every float32 whose dropped bits are exactly a half ulp (ties), and random bits
    ties = (rng.integers(0x33000000, 0x47800000, size=2000, dtype=np.uint32) & ~np.uint32(0x1FFF)) | 0x1000
    random = rng.integers(0, 2 ** 32, size=20000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([special, ties, random]).view(np.float32)


def test_float_to_half_rounds_as_numpy():
    trunc = _half_returning("__truncsfhf2", ctypes.c_float)
    x = _float32_patterns(1)
    got = np.array([trunc(float(v)) for v in x], np.uint16)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert np.all((got[nan] & 0x7E00) == 0x7E00)  # quiet NaNs
    np.testing.assert_array_equal(got[nan] >> 15, x[nan].view(np.uint32) >> 31)


def test_double_to_half_rounds_once():
    trunc = _half_returning("__truncdfhf2", ctypes.c_double)
    tie = 1.0 + 2.0 ** -11  # halfway between 1 and the next half
    # Just past a tie by less than a float32 ulp: through float32 it would
    # become the tie and round to even (down); rounded once, it rounds up.
    x = [tie + 2.0 ** -40, tie - 2.0 ** -40, tie, 65519.999999, 65520.0, 2.0 ** -25 * (1 + 2.0 ** -40),
         2.0 ** -25, -(2.0 ** -24) * 1.5, 1e-300, -1e300, np.inf, 0.0, -0.0]
    rng = np.random.default_rng(2)
    x = np.concatenate([x, rng.normal(size=3000) * 10.0 ** rng.integers(-9, 6, size=3000)])
    got = np.array([trunc(float(v)) for v in x], np.uint16)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)  # numpy rounds float64 -> float16 directly
    np.testing.assert_array_equal(got, want)
    assert got[0] == 0x3C01 and got[1] == 0x3C00


def test_half_to_float_is_exact_for_every_half():
    fn = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)(SYMBOLS["__extendhfsf2"])
    h = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16)
    # the half travels in the low bits of xmm0: pass it as the float with those bits
    carrier = h.astype(np.uint32).view(np.float32)
    got = np.array([fn(float(c)) for c in carrier], np.float32)
    want = h.view(np.float16).astype(np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    assert np.all(np.isnan(got[nan]))


def test_float_to_bfloat16_ties_to_even():
    trunc = _half_returning("__truncsfbf2", ctypes.c_float)
    x = _float32_patterns(3)
    got = np.array([trunc(float(v)) for v in x], np.uint16)
    bits = x.view(np.uint32).astype(np.uint64)
    want = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # finite and inf: RNE
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert np.all((got[nan] & 0x7FC0) == 0x7FC0)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to build the test object")
def test_the_loader_never_takes_helpers_from_the_process(tmp_path):
    """A "__" helper the runtime does not carry is refused even where the
    process has it (libgcc's __popcountdi2 here), naming it."""
    source = tmp_path / "needs_helper.c"
    source.write_text("extern int __popcountdi2(long);\n"
                      "int entry(long x) { return __popcountdi2(x); }\n")
    obj = tmp_path / "needs_helper.o"
    subprocess.run(["cc", "-c", "-fPIC", "-O1", str(source), "-o", str(obj)], check=True)
    with pytest.raises(RuntimeError, match="__popcountdi2.*compiler-runtime helper the runtime does not provide"):
        _runtime.load_object(obj.read_bytes(), ["entry"])
