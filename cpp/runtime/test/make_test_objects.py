#!/usr/bin/env python3
"""Compiles a few kernels to host objects for object_loader_test.cpp.

Usage: python cpp/runtime/test/make_test_objects.py OUTDIR, with the adjit
virtualenv active (from any directory, the repository root included: a
script gets its own directory on sys.path, not the current one). Writes
OUTDIR/<kernel>.o, one per kernel below; the C++ test knows each kernel's
arguments and computes the expected results itself. Each object holds `<kernel>_cpu_entry` (adjoints:
`<kernel>_adjoint_cpu_entry`), the ABI of cpp/runtime/CpuLaunch.h.

Also compiles, with the C compiler ($CC, else cc), small C and assembly
objects covering relocation types adjit's kernels do not use today (GOT
loads, 64-bit data pointers, COMMON and weak symbols, the large code model)
and objects the loader must refuse (non-PIC code, an unresolved symbol).
"""
import os
import shlex
import subprocess
import sys
from pathlib import Path

import adjit as wp
from adjit.compiler import driver
from adjit.variant import VariantSpec

OPT_LEVEL = 3
OFFSET = wp.constant(wp.vec3(1.0, -2.0, 0.5))


@wp.kernel
def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def libm_f32(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    out[i] = wp.sin(v) + wp.exp(v * 0.5) + wp.pow(wp.abs(v) + 1.0, 1.5) + wp.atan2(v, 2.0)


@wp.kernel
def libm_f64(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i]
    one = wp.float64(1.0)
    out[i] = wp.cos(v) * wp.exp(v) + wp.pow(wp.abs(v) + one, wp.float64(0.75)) + wp.log(v * v + one)


@wp.kernel
def vec3_math(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), lengths: wp.array(dtype=float),
              normals: wp.array(dtype=wp.vec3), crosses: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = a[i] + OFFSET
    lengths[i] = wp.length(p)
    normals[i] = wp.normalize(p)
    crosses[i] = wp.cross(p, b[i]) * 2.0


@wp.kernel
def row_sums(m: wp.array2d(dtype=float), count: int, out: wp.array(dtype=float)):
    i = wp.tid()
    s = float(0.0)
    for k in range(count):
        s += m[i, k] * float(k + 1)
    out[i] = s


@wp.kernel
def histogram(values: wp.array(dtype=int), counts: wp.array(dtype=int), total: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(counts, values[i] % 4, 1)
    wp.atomic_add(total, 0, float(values[i]) * 0.5)


@wp.kernel
def sin_times_x(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * x[i]


#: (kernel, adjoint) for each object written.
OBJECTS = [(saxpy, False), (libm_f32, False), (libm_f64, False), (vec3_math, False),
           (row_sums, False), (histogram, False), (sin_times_x, True)]


def compile_object(k, adjoint: bool) -> bytes:
    """The host object of kernel ``k`` (or of its adjoint), bypassing the cache."""
    return driver.compile_cpu_object(k, VariantSpec(adjoint=adjoint), OPT_LEVEL).code


#: Touches each kind of symbol the loader handles; checked by the C++ test.
RELOC_COVERAGE_C = r"""
#include <math.h>

extern char **environ;
int common_counter; /* COMMON, with -fcommon */
static double zeroed[512]; /* .bss */
static int add_one(int x) { return x + 1; }
static int twice(int x) { return 2 * x; }
int (*local_table[])(int) = {add_one, twice}; /* R_X86_64_64 to local code */
float (*math_table[])(float) = {sinf, expf}; /* R_X86_64_64 to libm */
extern void optional_hook(void) __attribute__((weak));

int cov_call_local(int x) { return local_table[0](x) + local_table[1](x); }
float cov_call_libm(float x) { return math_table[0](x) + math_table[1](x) + cosf(x); }
int cov_bump_common(int by) { return common_counter += by; }
double cov_fill_bss(int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += zeroed[i] += i;
  return sum;
}
int cov_has_hook(void) { return optional_hook != 0; }
char **cov_environ(void) { return environ; }
int *cov_common_address(void) { return &common_counter; }
"""

#: PC64, GOTPC32, GOT64, GOTOFF64 and an absolute symbol; each function
#: returns asm_target's address computed through one of them.
ASM_RELOCS_S = """
\t.text
\t.globl asm_target
asm_target:
\tret
\t.globl asm_through_pc64
asm_through_pc64:
\tleaq delta(%rip), %rax
\taddq (%rax), %rax
\tret
\t.globl asm_through_got
asm_through_got:
\tleaq _GLOBAL_OFFSET_TABLE_(%rip), %rax
\tmovabsq $asm_target@GOT, %rcx
\tmovq (%rax,%rcx), %rax
\tret
\t.globl asm_through_gotoff
asm_through_gotoff:
\tleaq _GLOBAL_OFFSET_TABLE_(%rip), %rax
\tmovabsq $asm_target@GOTOFF, %rcx
\taddq %rcx, %rax
\tret
\t.section .rodata
\t.p2align 3
delta:
\t.quad asm_target - .
\t.globl asm_absolute
\t.set asm_absolute, 0x12345
"""

MISSING_C = """
extern int adjit_test_missing_function(int);
int call_missing(int x) { return adjit_test_missing_function(x) + 1; }
"""

#: (object, source, flags) built with the C compiler.
C_OBJECTS = [
    ("reloc_pic.o", "reloc_coverage.c", "-O1 -fcommon -fPIC"),
    ("reloc_pic_norelax.o", "reloc_coverage.c", "-O1 -fcommon -fPIC -Wa,-mrelax-relocations=no"),
    ("reloc_pic_debug.o", "reloc_coverage.c", "-g -O1 -fcommon -fPIC"),
    ("reloc_large.o", "reloc_coverage.c", "-O1 -fcommon -fPIC -mcmodel=large"),
    ("reloc_nopic.o", "reloc_coverage.c", "-O1 -fcommon -fno-pic -mcmodel=small"),
    ("asm_relocs.o", "asm_relocs.s", ""),
    ("missing_symbol.o", "missing.c", "-O1 -fPIC"),
]


def compile_c_objects(out: Path) -> None:
    sources = {"reloc_coverage.c": RELOC_COVERAGE_C, "asm_relocs.s": ASM_RELOCS_S, "missing.c": MISSING_C}
    for name, text in sources.items():
        (out / name).write_text(text)
    cc = shlex.split(os.environ.get("CC", "cc"))
    for obj, source, flags in C_OBJECTS:
        subprocess.run(cc + shlex.split(flags) + ["-c", str(out / source), "-o", str(out / obj)], check=True)
        print(f"wrote {out / obj} ({source} {flags})")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTDIR")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for k, adjoint in OBJECTS:
        name = k.mlir_name + ("_adjoint" if adjoint else "")
        path = out / f"{name}.o"
        path.write_bytes(compile_object(k, adjoint))
        print(f"wrote {path} (entry {name}_cpu_entry)")
    # saxpy's variant for launches its arrays do not fit (every check kept)
    path = out / "saxpy_all_checked.o"
    path.write_bytes(driver.compile_cpu_object(saxpy, VariantSpec(all_checked=True), OPT_LEVEL).code)
    print(f"wrote {path} (entry saxpy_cpu_entry)")
    compile_c_objects(out)


if __name__ == "__main__":
    main()
