"""atomic_cas, atomic_exch, atomic_and, atomic_or, atomic_xor (Warp's signatures) against numpy.

On the CPU a kernel that uses atomic_exch or atomic_cas, or any atomic's old value, runs its threads in
thread-index order (adjit-atomic-order "serial"), so its results are those of the serial loop over the
threads and are checked exactly. and/or/xor with unused old values run in parallel: their result is the
same in every order.
"""
import re
import shutil
import subprocess

import numpy as np
import pytest

import adjit


@adjit.kernel
def claim_slots(owner: adjit.array(dtype=int), old: adjit.array(dtype=int)):
    # Each slot goes from 0 to the first thread's id + 1; the others see that value.
    i = adjit.tid()
    old[i] = adjit.atomic_cas(owner, i % 5, 0, i + 1)


def test_atomic_cas_claims_each_slot_for_the_first_thread():
    n = 23
    owner, old = adjit.zeros(5, dtype=int), adjit.full(n, -7, dtype=int)
    adjit.launch(claim_slots, dim=n, inputs=[owner, old])
    np.testing.assert_array_equal(owner.numpy(), [1, 2, 3, 4, 5])
    i = np.arange(n)
    np.testing.assert_array_equal(old.numpy(), np.where(i < 5, 0, i % 5 + 1))


@adjit.kernel
def spin_counter(count: adjit.array(dtype=adjit.int64), ticket: adjit.array(dtype=adjit.int64),
                 tries: adjit.array(dtype=int)):
    # The classic compare-and-swap loop: retry until no other thread changed the counter in between.
    i = adjit.tid()
    k = int(0)
    while True:
        k += 1
        cur = count[0]
        if adjit.atomic_cas(count, 0, cur, cur + adjit.int64(1)) == cur:
            ticket[i] = cur
            break
    tries[i] = k


def test_atomic_cas_spin_loop_counts_every_thread_once_in_thread_order():
    n = 3001
    count = adjit.array(np.array([10], dtype=np.int64))
    ticket, tries = adjit.zeros(n, dtype=adjit.int64), adjit.zeros(n, dtype=int)
    adjit.launch(spin_counter, dim=n, inputs=[count, ticket, tries])
    assert count.numpy()[0] == 10 + n
    np.testing.assert_array_equal(ticket.numpy(), 10 + np.arange(n))
    np.testing.assert_array_equal(tries.numpy(), np.ones(n))


@adjit.kernel
def cas_float(a: adjit.array(dtype=float), compare: adjit.array(dtype=float), value: adjit.array(dtype=float),
              old: adjit.array(dtype=float)):
    i = adjit.tid()
    old[i] = adjit.atomic_cas(a, i, compare[i], value[i])


@adjit.kernel
def cas_double_2d(a: adjit.array2d(dtype=adjit.float64), old: adjit.array2d(dtype=adjit.float64)):
    i, j = adjit.tid()
    old[i, j] = adjit.atomic_cas(a, i, j, adjit.float64(1.5), adjit.float64(i * 10 + j))


def test_float_atomic_cas_compares_bits():
    nan = np.frombuffer(np.uint32(0x7FC00001).tobytes(), np.float32)[0]
    other_nan = np.frombuffer(np.uint32(0x7FC00002).tobytes(), np.float32)[0]
    a = np.array([1.5, -0.0, 0.0, nan, nan, 2.0], np.float32)
    compare = np.array([1.5, 0.0, 0.0, nan, other_nan, 3.0], np.float32)
    value = np.array([9.0, 8.0, 7.0, 6.0, 5.0, 4.0], np.float32)
    arr, old = adjit.array(a), adjit.zeros(6)
    adjit.launch(cas_float, dim=6, inputs=[arr, adjit.array(compare), adjit.array(value), old])
    bits = lambda x: x.view(np.uint32)  # noqa: E731
    # Swapped where the bits match: 1.5, +0.0 and the same NaN; -0.0 != +0.0 and two NaNs differ.
    expected = np.array([9.0, -0.0, 7.0, 6.0, nan, 2.0], np.float32)
    np.testing.assert_array_equal(bits(arr.numpy()), bits(expected))
    np.testing.assert_array_equal(bits(old.numpy()), bits(a))

    grid = np.array([[1.5, 0.5, 1.5], [1.5, 1.5, -1.5]])
    arr, old = adjit.array(grid), adjit.zeros((2, 3), dtype=adjit.float64)
    adjit.launch(cas_double_2d, dim=(2, 3), inputs=[arr, old])
    np.testing.assert_array_equal(arr.numpy(), [[0.0, 0.5, 2.0], [10.0, 11.0, -1.5]])
    np.testing.assert_array_equal(old.numpy(), grid)


@adjit.kernel
def exchange(x: adjit.array(dtype=float), last: adjit.array(dtype=float), prev: adjit.array(dtype=float),
             k: adjit.array(dtype=adjit.uint64), kprev: adjit.array(dtype=adjit.uint64)):
    i = adjit.tid()
    prev[i] = adjit.atomic_exch(last, 0, x[i])
    kprev[i] = adjit.atomic_exch(k, i % 2, adjit.uint64(i) * adjit.uint64(0x100000001))


@adjit.kernel
def exchange_unused(x: adjit.array(dtype=adjit.float64), last: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    adjit.atomic_exch(last, 0, x[i])


def test_atomic_exch_returns_the_previous_values_in_thread_order():
    rng = np.random.default_rng(5)
    n = 1000
    x = rng.normal(size=n).astype(np.float32)
    x[3] = -0.0
    last, prev = adjit.full(1, 0.25), adjit.zeros(n)
    k = adjit.array(np.array([7, 2**64 - 1], dtype=np.uint64))
    kprev = adjit.zeros(n, dtype=adjit.uint64)
    adjit.launch(exchange, dim=n, inputs=[adjit.array(x), last, prev, k, kprev])
    bits = lambda v: v.view(np.uint32)  # noqa: E731
    np.testing.assert_array_equal(bits(prev.numpy()), bits(np.concatenate([[np.float32(0.25)], x[:-1]])))
    np.testing.assert_array_equal(bits(last.numpy()), bits(x[-1:]))
    i = np.arange(n, dtype=np.uint64)
    written = i * np.uint64(0x100000001)
    expected = np.empty(n, np.uint64)
    expected[:2] = [7, 2**64 - 1]
    expected[2:] = written[:-2]
    np.testing.assert_array_equal(kprev.numpy(), expected)
    np.testing.assert_array_equal(k.numpy(), written[-2:])
    # Unused old values: still the last thread's value (the kernel runs in thread order).
    xd = rng.normal(size=20000)
    lastd = adjit.zeros(1, dtype=adjit.float64)
    adjit.launch(exchange_unused, dim=20000, inputs=[adjit.array(xd), lastd])
    assert lastd.numpy()[0] == xd[-1]


@adjit.kernel
def bits_used(v: adjit.array(dtype=adjit.uint32), w: adjit.array(dtype=adjit.int64),
              a: adjit.array(dtype=adjit.uint32), o: adjit.array(dtype=adjit.int64), x: adjit.array(dtype=int),
              old_a: adjit.array(dtype=adjit.uint32), old_o: adjit.array(dtype=adjit.int64),
              old_x: adjit.array(dtype=int)):
    i = adjit.tid()
    old_a[i] = adjit.atomic_and(a, i % 3, v[i])
    old_o[i] = adjit.atomic_or(o, i % 2, w[i])
    old_x[i] = adjit.atomic_xor(x, 0, int(v[i] >> adjit.uint32(1)))


@adjit.kernel
def bits_unused(v: adjit.array(dtype=adjit.uint32), w: adjit.array(dtype=adjit.int64),
                a: adjit.array(dtype=adjit.uint32), o: adjit.array(dtype=adjit.int64), x: adjit.array(dtype=int),
                pairs: adjit.array(dtype=adjit.vec2i)):
    i = adjit.tid()
    adjit.atomic_and(a, i % 3, v[i])
    adjit.atomic_or(o, i % 2, w[i])
    adjit.atomic_xor(x, 0, int(v[i] >> adjit.uint32(1)))
    adjit.atomic_or(pairs, i % 4, adjit.vec2i(1 << (i % 31), 1 << ((i + 7) % 31)))
    adjit.atomic_xor(pairs, 4, adjit.vec2i(i, -i))


def _bit_inputs(rng, n):
    v = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32) | np.uint32(0x80000000)
    w = np.int64(1) << rng.integers(0, 63, n).astype(np.int64)
    return v, w


def test_atomic_and_or_xor_accumulate_bits_and_return_the_old_values():
    rng = np.random.default_rng(9)
    n = 300
    v, w = _bit_inputs(rng, n)
    a = adjit.full(3, 0xFFFFFFFF, dtype=adjit.uint32)
    o = adjit.array(np.array([0, -(2**63)], dtype=np.int64))
    x = adjit.full(1, 12345, dtype=int)
    old_a, old_o = adjit.zeros(n, dtype=adjit.uint32), adjit.zeros(n, dtype=adjit.int64)
    old_x = adjit.zeros(n, dtype=int)
    adjit.launch(bits_used, dim=n, inputs=[adjit.array(v), adjit.array(w), a, o, x, old_a, old_o, old_x])
    i = np.arange(n)
    ref_a, ref_o = np.full(3, 0xFFFFFFFF, np.uint32), np.array([0, -(2**63)], np.int64)
    ref_x = np.int32(12345)
    exp_a, exp_o, exp_x = np.empty(n, np.uint32), np.empty(n, np.int64), np.empty(n, np.int32)
    for t in range(n):  # the serial loop over the threads
        exp_a[t], ref_a[t % 3] = ref_a[t % 3], ref_a[t % 3] & v[t]
        exp_o[t], ref_o[t % 2] = ref_o[t % 2], ref_o[t % 2] | w[t]
        exp_x[t], ref_x = ref_x, ref_x ^ np.int32(v[t] >> 1)
    np.testing.assert_array_equal(old_a.numpy(), exp_a)
    np.testing.assert_array_equal(old_o.numpy(), exp_o)
    np.testing.assert_array_equal(old_x.numpy(), exp_x)
    np.testing.assert_array_equal(a.numpy(), ref_a)
    np.testing.assert_array_equal(o.numpy(), ref_o)
    assert x.numpy()[0] == ref_x
    # The reductions in closed form.
    np.testing.assert_array_equal(ref_a, [np.bitwise_and.reduce(v[i % 3 == k]) for k in range(3)])
    np.testing.assert_array_equal(ref_o, [np.bitwise_or.reduce(w[i % 2 == 0]),
                                          np.int64(-(2**63)) | np.bitwise_or.reduce(w[i % 2 == 1])])


def test_atomic_and_or_xor_with_unused_results_on_many_threads_match_numpy():
    rng = np.random.default_rng(10)
    n = 200_003
    v, w = _bit_inputs(rng, n)
    a = adjit.full(3, 0xFFFFFFFF, dtype=adjit.uint32)
    o, x = adjit.zeros(2, dtype=adjit.int64), adjit.zeros(1, dtype=int)
    pairs = adjit.zeros(5, dtype=adjit.vec2i)
    adjit.launch(bits_unused, dim=n, inputs=[adjit.array(v), adjit.array(w), a, o, x, pairs])
    i = np.arange(n)
    np.testing.assert_array_equal(a.numpy(), [np.bitwise_and.reduce(v[i % 3 == k]) for k in range(3)])
    np.testing.assert_array_equal(o.numpy(), [np.bitwise_or.reduce(w[i % 2 == k]) for k in range(2)])
    assert x.numpy()[0] == np.bitwise_xor.reduce((v >> 1).astype(np.int32))
    p = pairs.numpy()
    for k in range(4):
        sel = i[i % 4 == k]
        assert p[k, 0] == np.bitwise_or.reduce(np.int32(1) << (sel % 31).astype(np.int32))
        assert p[k, 1] == np.bitwise_or.reduce(np.int32(1) << ((sel + 7) % 31).astype(np.int32))
    np.testing.assert_array_equal(p[4], [np.bitwise_xor.reduce(i.astype(np.int32)),
                                         np.bitwise_xor.reduce(-i.astype(np.int32))])


@adjit.kernel
def cas_out_of_range(a: adjit.array(dtype=int), idx: adjit.array(dtype=int)):
    i = adjit.tid()
    adjit.atomic_cas(a, idx[i], 0, i)


@adjit.kernel
def or_out_of_range(a: adjit.array2d(dtype=int), idx: adjit.array(dtype=int)):
    i = adjit.tid()
    adjit.atomic_or(a, 0, idx[i], 1)


def test_out_of_range_indices_are_located_errors():
    a = adjit.zeros(3, dtype=int)
    with pytest.raises(adjit.OutOfBoundsError) as info:
        adjit.launch(cas_out_of_range, dim=3, inputs=[a, adjit.array(np.array([0, 5, 1], dtype=np.int32))])
    assert (info.value.access, info.value.index, info.value.thread) == ("atomic_cas", (5,), (1,))
    assert "adjit.atomic_cas(a, idx[i], 0, i)" in str(info.value)
    g = adjit.zeros((1, 2), dtype=int)
    with pytest.raises(adjit.OutOfBoundsError) as info:
        adjit.launch(or_out_of_range, dim=2, inputs=[g, adjit.array(np.array([1, -1], dtype=np.int32))])
    assert info.value.access == "atomic_or" and info.value.thread == (1,)
    assert "adjit.atomic_or(a, 0, idx[i], 1)" in str(info.value)


@adjit.kernel
def and_on_floats(f: adjit.array(dtype=float)):
    adjit.atomic_and(f, 0, 1.0)


@adjit.kernel
def exch_on_vectors(v: adjit.array(dtype=adjit.vec3)):
    adjit.atomic_exch(v, 0, v[0])


@adjit.kernel
def cas_without_compare(n: adjit.array(dtype=int)):
    adjit.atomic_cas(n, 0, 1)


@adjit.kernel
def cas_float_compare(n: adjit.array(dtype=int)):
    adjit.atomic_cas(n, 0, float(n[0]), 2)  # a float compare


@pytest.mark.parametrize("kernel,arg,message", [
    (and_on_floats, lambda: adjit.zeros(1), r"atomic_and\(\) needs an array of integers"),
    (exch_on_vectors, lambda: adjit.zeros(1, dtype=adjit.vec3), r"atomic_exch\(\) needs an array of integer or float"),
    (cas_without_compare, lambda: adjit.zeros(1, dtype=int),
     r"atomic_cas\(\) takes an array, one index per dimension and a compare and a value"),
    (cas_float_compare, lambda: adjit.zeros(1, dtype=int),
     r"atomic_cas\(\) on an array of int32 needs compare, value of type int32, got float"),
], ids=lambda v: getattr(v, "__name__", None))
def test_type_errors_name_the_atomic(kernel, arg, message):
    with pytest.raises(adjit.AdjitError, match=message):
        adjit.launch(kernel, dim=1, inputs=[arg()])


@adjit.kernel
def exch_loss(x: adjit.array(dtype=adjit.float64), last: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    adjit.atomic_exch(last, 0, x[i] * x[i])


@adjit.kernel
def int_atomics_beside_a_float_loss(x: adjit.array(dtype=adjit.float64), flags: adjit.array(dtype=int),
                                    y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    adjit.atomic_or(flags, 0, 1 << i)
    adjit.atomic_cas(flags, 1, 0, i + 1)
    y[i] = x[i] * x[i]


def test_float_atomic_exch_is_a_located_gradient_error_and_integer_atomics_carry_no_gradient():
    x = adjit.array(np.array([1.0, -2.0, 3.0]), dtype=adjit.float64, requires_grad=True)
    last = adjit.zeros(1, dtype=adjit.float64, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(exch_loss, dim=3, inputs=[x, last])
    assert last.numpy()[0] == 9.0
    with pytest.raises(adjit.GradientError, match=r"atomic_exch of float values has no adjoint: the value it "
                       r"leaves in the element \(and the old value it returns\) depends on the order the threads "
                       r"run in") as info:
        tape.backward(grads={last: np.ones(1)})
    assert "adjit.atomic_exch(last, 0, x[i] * x[i])" in str(info.value)

    x = adjit.array(np.array([1.0, -2.0, 3.0]), dtype=adjit.float64, requires_grad=True)
    flags, y = adjit.zeros(2, dtype=int), adjit.zeros(3, dtype=adjit.float64, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(int_atomics_beside_a_float_loss, dim=3, inputs=[x, flags, y])
    tape.backward(grads={y: np.ones(3)})
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -4.0, 6.0])
    # The backward pass did not run the atomics again.
    np.testing.assert_array_equal(flags.numpy(), [7, 1])


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
@pytest.mark.parametrize("kernel", [spin_counter, cas_float, cas_double_2d, exchange, bits_used, bits_unused],
                         ids=lambda k: k.__name__)
def test_ptx_of_the_atomics_assembles(tmp_path, kernel):
    ptx = adjit.compile(kernel, target="cuda", arch="sm_80")
    assert re.search(r"\batom\.[\w.]*(cas|exch|and|or|xor)\.b(32|64)", ptx)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run(["ptxas", "-arch=sm_80", str(src), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@adjit.kernel
def bitwise_augmented(flags: adjit.array(dtype=adjit.uint32), bits: adjit.array(dtype=int)):
    i = adjit.tid()
    flags[0] |= adjit.uint32(1) << adjit.uint32(i % 32)
    flags[1] &= ~(adjit.uint32(1) << adjit.uint32(i % 32))
    flags[2] ^= adjit.uint32(i)
    bits[i % 2] |= i


def test_augmented_bitwise_assignments_on_elements_are_atomics():
    flags = adjit.array(np.array([0, 0xFFFFFFFF, 0], np.uint32), dtype=adjit.uint32)
    bits = adjit.zeros(2, dtype=int)
    adjit.launch(bitwise_augmented, dim=1000, inputs=[flags, bits])
    x = 0
    for i in range(1000):
        x ^= i
    np.testing.assert_array_equal(flags.numpy(), [0xFFFFFFFF, 0, x])
    np.testing.assert_array_equal(bits.numpy(), [np.bitwise_or.reduce(np.arange(0, 1000, 2)),
                                                 np.bitwise_or.reduce(np.arange(1, 1000, 2))])


@adjit.kernel
def bitwise_on_floats(x: adjit.array(dtype=float)):
    x[0] |= 1.0


def test_augmented_bitwise_assignment_needs_integers():
    with pytest.raises(adjit.KernelTypeError, match="needs 32- or 64-bit integers"):
        adjit.launch(bitwise_on_floats, dim=1, inputs=[adjit.zeros(1)])
