"""Tile stacks (Warp's tile_stack, push, pop, clear, count) on the CPU, where
a block is one thread: each call moves at most one element, at the top (last
in, first out); slots, counts, overflow, an empty pop, vector elements,
loops carrying a stack, a @func pushing onto its caller's stack, and bad
calls as errors naming the kernel's line."""
import numpy as np
import pytest

import adjit

CAP = 4


@adjit.func
def _push_42(s: adjit.tile_stack(capacity=CAP, dtype=int), val: int):
    adjit.tile_stack_push(s, val, True)


@adjit.kernel
def _compact(data: adjit.array(dtype=int), out: adjit.array(dtype=int), slots: adjit.array(dtype=int),
             num: adjit.array(dtype=int)):
    _i, lane = adjit.tid()
    s = adjit.tile_stack(capacity=CAP, dtype=int)
    for i in range(data.shape[0]):  # a runtime loop carries the stack
        slots[i] = adjit.tile_stack_push(s, data[i], data[i] > 5)
    num[0] = adjit.tile_stack_count(s)
    k = int(0)
    while adjit.tile_stack_count(s) > 0:
        value, slot = adjit.tile_stack_pop(s)
        out[k] = value
        slots[6 + k] = slot
        k += 1
    value, slot = adjit.tile_stack_pop(s)  # empty: (0, -1)
    slots[12] = slot
    out[5] = value
    _push_42(s, 42)
    num[1] = adjit.tile_stack_count(s)
    adjit.tile_stack_clear(s)
    num[2] = adjit.tile_stack_count(s)
    value, slot = adjit.tile_stack_pop(s)
    num[3] = slot


def test_push_pop_count_clear():
    data = adjit.array(np.array([1, 8, 7, 9, 6, 10], np.int32))
    out, slots, num = adjit.full(6, -7, dtype=int), adjit.zeros(13, dtype=int), adjit.zeros(4, dtype=int)
    adjit.launch_tiled(_compact, dim=1, inputs=[data, out, slots, num], block_dim=32)
    # 8, 7, 9, 6 fill the 4 slots; 1 is not offered, 10 finds the stack full (-1): dropped
    np.testing.assert_array_equal(slots.numpy()[:6], [-1, 0, 1, 2, 3, -1])
    np.testing.assert_array_equal(out.numpy(), [6, 9, 7, 8, -7, 0])  # last in, first out; an empty pop reads 0
    np.testing.assert_array_equal(slots.numpy()[6:], [3, 2, 1, 0, 0, 0, -1])
    np.testing.assert_array_equal(num.numpy(), [4, 1, 0, -1])


@adjit.kernel
def _elements(out: adjit.array(dtype=adjit.vec3), h: adjit.array(dtype=adjit.float16),
              m: adjit.array(dtype=adjit.mat22), slots: adjit.array(dtype=int)):
    vs = adjit.tile_stack(capacity=2, dtype=adjit.vec3)
    adjit.tile_stack_push(vs, adjit.vec3(1.0, 2.0, 3.0), True)
    adjit.tile_stack_push(vs, adjit.vec3(4.0, 5.0, 6.0), True)
    slots[0] = adjit.tile_stack_push(vs, adjit.vec3(7.0, 8.0, 9.0), True)
    v, slot = adjit.tile_stack_pop(vs)
    out[0] = v
    v, slot = adjit.tile_stack_pop(vs)
    out[1] = v
    slots[1] = slot
    hs = adjit.tile_stack(capacity=3, dtype=adjit.float16)
    adjit.tile_stack_push(hs, adjit.float16(2.5), True)
    x, slot = adjit.tile_stack_pop(hs)
    h[0] = x
    ms = adjit.tile_stack(capacity=1, dtype=adjit.mat22)
    adjit.tile_stack_push(ms, adjit.mat22(1.0, 2.0, 3.0, 4.0), True)
    y, slot = adjit.tile_stack_pop(ms)
    m[0] = y


def test_vector_matrix_and_half_elements():
    out, h = adjit.zeros(2, dtype=adjit.vec3), adjit.zeros(1, dtype=adjit.float16)
    m, slots = adjit.zeros(1, dtype=adjit.mat22), adjit.zeros(2, dtype=int)
    adjit.launch_tiled(_elements, dim=1, inputs=[out, h, m, slots], block_dim=8)
    np.testing.assert_array_equal(out.numpy(), [[4, 5, 6], [1, 2, 3]])
    np.testing.assert_array_equal(slots.numpy(), [-1, 0])
    assert h.numpy()[0] == np.float16(2.5)
    np.testing.assert_array_equal(m.numpy()[0], [[1, 2], [3, 4]])


def test_the_type_from_python():
    t = adjit.tile_stack(capacity=8, dtype=adjit.vec3)
    assert isinstance(t, adjit.types.TileStackType) and t.capacity == 8 and t.dtype == adjit.vec3
    assert t == adjit.tile_stack(capacity=8, dtype=adjit.vec3) != adjit.tile_stack(capacity=4, dtype=adjit.vec3)
    with pytest.raises(ValueError, match="positive integer"):
        adjit.tile_stack(capacity=0, dtype=int)
    with pytest.raises(ValueError, match="at most 127"):
        adjit.tile_stack(capacity=200, dtype=adjit.int8)  # (its count is kept in int8)
    with pytest.raises(TypeError, match="'dtype'"):
        adjit.tile_stack(capacity=3)


@adjit.kernel
def _bool_capacity():
    s = adjit.tile_stack(capacity=True, dtype=int)


@adjit.kernel
def _runtime_capacity(n: int):
    s = adjit.tile_stack(capacity=n, dtype=int)


@adjit.kernel
def _wrong_value():
    s = adjit.tile_stack(capacity=2, dtype=int)
    adjit.tile_stack_push(s, 1.0, True)


@adjit.kernel
def _not_a_tile(a: adjit.array(dtype=int)):
    s = adjit.tile_stack(capacity=2, dtype=int)
    adjit.tile_store(a, s)


@adjit.kernel
def _indexed():
    s = adjit.tile_stack(capacity=2, dtype=int)
    x = s[0]


@pytest.mark.parametrize("kernel,args,match", [
    (_bool_capacity, [], r"requires capacity to be a positive integer, got True"),
    (_runtime_capacity, [3], r"requires capacity to be a compile-time constant"),
    (_wrong_value, [], r"value type float32 does not match stack dtype int32"),
    (_not_a_tile, [adjit.zeros(2, dtype=int)], r"tile_store\(\)'s tile is a tile_stack\(capacity=2, dtype=int32\), "
                                               r"not a tile"),
    (_indexed, [], r"is a tile_stack\(capacity=2, dtype=int32\), not a tile"),
])
def test_bad_calls_are_errors_naming_the_line(kernel, args, match):
    with pytest.raises(adjit.AdjitError, match=match) as info:
        adjit.launch(kernel, dim=1, inputs=args)
    assert "test_tile_stack.py" in str(info.value)
