"""tile_fft and tile_ifft (Warp's FFTs of tiles of vec2) on the CPU.

Their emitters are registered into ``tiles._HANDLERS`` when this module is
imported (by the frontend's calls module, as tile_linalg's). Each element of
the tile is a complex number (component 0 real, 1 imaginary); the transform
runs along the last dimension, every leading position a batch, in place
(the tile's local is rebound). As Warp's: the forward transform is numpy's
``fft``, the inverse ``ifft`` times ``N`` (unnormalized).

The batches are transformed together: the tile is transposed to
``vector<2 x N x batches>`` and each of its 2N rows (the real and imaginary
parts of one position across the batches) is one value, so each butterfly is
a few vector ops over the batches. A power-of-two ``N`` takes the radix-2
Cooley-Tukey network (``N log2 N / 2`` butterflies; twiddles of 1 and of
``-i`` are exact swaps), another ``N`` the direct sum (``N^2`` products).
The transform is linear, so the adjoint and tangent passes differentiate it
through the ops' own rules: the adjoint of ``fft`` is ``N ifft`` of the
adjoint (Warp's).
"""
from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, vector as vector_d

from .. import types as T
from ..errors import KernelTypeError, KernelValueError
from .tiles import _handler, _rebind, _tile
from .values import Val, constant


class _Complex:
    """Arithmetic on (real, imaginary) pairs of ``vector<batches>`` values."""

    def __init__(self, batch_t: T.TileType):
        self.t = batch_t

    def const(self, x: float) -> ir.Value:
        return constant(self.t, x)

    def add(self, a, b):
        return arith.AddFOp(a[0], b[0]).result, arith.AddFOp(a[1], b[1]).result

    def sub(self, a, b):
        return arith.SubFOp(a[0], b[0]).result, arith.SubFOp(a[1], b[1]).result

    def times(self, a, w: complex, exact: bool):
        """``a * w`` for a constant ``w``; ``exact``: w is 1, -1, i or -i (a swap, no product)."""
        if exact:
            re, im = round(w.real), round(w.imag)
            if (re, im) == (1, 0):
                return a
            if (re, im) == (-1, 0):
                return arith.NegFOp(a[0]).result, arith.NegFOp(a[1]).result
            if (re, im) == (0, 1):  # i (x + iy) = -y + ix
                return arith.NegFOp(a[1]).result, a[0]
            return a[1], arith.NegFOp(a[0]).result  # -i (x + iy) = y - ix
        wr, wi = self.const(w.real), self.const(w.imag)
        re = arith.SubFOp(arith.MulFOp(wr, a[0]).result, arith.MulFOp(wi, a[1]).result).result
        im = arith.AddFOp(arith.MulFOp(wr, a[1]).result, arith.MulFOp(wi, a[0]).result).result
        return re, im


def _twiddle(k: int, n: int, sign: int):
    """exp(sign 2 pi i k / n), and whether it is exactly 1, -1, i or -i."""
    k %= n
    exact = (4 * k) % n == 0
    if exact:
        quarter = 4 * k // n
        return [1, 1j, -1, -1j][(quarter if sign > 0 else -quarter) % 4], True
    angle = sign * 2 * math.pi * k / n
    return complex(math.cos(angle), math.sin(angle)), False


def _transform(c: _Complex, x: list, sign: int) -> list:
    n = len(x)
    if n & (n - 1) == 0:  # radix 2, decimation in time: bit-reversed inputs, then log2(n) stages
        bits = n.bit_length() - 1
        x = [x[int(format(k, f"0{bits}b")[::-1], 2) if bits else 0] for k in range(n)]
        m = 2
        while m <= n:
            half = m // 2
            for start in range(0, n, m):
                for j in range(half):
                    w, exact = _twiddle(j, m, sign)
                    t = c.times(x[start + j + half], w, exact)
                    u = x[start + j]
                    x[start + j], x[start + j + half] = c.add(u, t), c.sub(u, t)
            m *= 2
        return x
    out = []
    for k in range(n):  # the direct sum
        acc = None
        for j in range(n):
            w, exact = _twiddle(j * k, n, sign)
            term = c.times(x[j], w, exact)
            acc = term if acc is None else c.add(acc, term)
        out.append(acc)
    return out


def _fft(inverse: bool):
    name = "tile_ifft" if inverse else "tile_fft"

    def emit(fb, a, node):
        tile = _tile(fb, a["inout"], f"{name}()'s argument", node, composite=True)
        t = tile.type
        if type(t.dtype) is not T.VectorType or t.dtype.length != 2 or t.scalar not in (T.float32, T.float64):
            raise fb.error(f"{name}() argument must be a tile of vec2f or vec2d (interpreted as complex) entries, "
                           f"got {t.dtype}", node, KernelTypeError)
        if t.ndim < 2:
            raise fb.error(f"{name}() argument must be a tile with at least 2 dimensions, got {t.ndim}D", node,
                           KernelValueError)
        if t.storage != "register":
            raise fb.error(f"{name}() argument must have 'register' storage, got {t.storage}", node,
                           KernelValueError)
        n = t.shape[-1]
        batches = t.size // n
        s = t.scalar.mlir()
        rows = vector_d.ShapeCastOp(ir.VectorType.get([batches, n, 2], s), tile.value).result
        parts = vector_d.TransposeOp(ir.VectorType.get([2, n, batches], s), rows, [2, 1, 0]).result
        x = [(vector_d.ExtractOp(parts, [], [0, k]).result, vector_d.ExtractOp(parts, [], [1, k]).result)
             for k in range(n)]
        y = _transform(_Complex(T.TileType((batches,), t.scalar)), x, 1 if inverse else -1)
        out = constant(T.TileType((2, n, batches), t.scalar), 0)
        for k, (re, im) in enumerate(y):
            out = vector_d.InsertOp(re, out, [], [0, k]).result
            out = vector_d.InsertOp(im, out, [], [1, k]).result
        rows = vector_d.TransposeOp(ir.VectorType.get([batches, n, 2], s), out, [2, 1, 0]).result
        result = vector_d.ShapeCastOp(t.mlir(), rows).result
        _rebind(fb, a["inout"], Val(t, result), f"{name}()", node)
        return None

    return emit


_handler("tile_fft")(_fft(False))
_handler("tile_ifft")(_fft(True))
