"""Deterministic CPU launches: float atomic adds land in thread order, so
forward results and gradients are bitwise the same on every run and for any
ADJIT_NUM_THREADS (docs/determinism.md)."""
import hashlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adjit as wp
from adjit import _runtime

N = 70_000  # over one launch window of threads (1 << 16 is the first), under two


@wp.kernel
def sum_squares(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


@wp.kernel
def scatter(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    y[idx[i]] += x[i]


@wp.kernel
def count_slots(counter: wp.array(dtype=int), slots: wp.array(dtype=int)):
    i = wp.tid()
    slots[i] = wp.atomic_add(counter, 0, 1)


def _data(n=N, bins=97):
    rng = np.random.default_rng(7)
    # Magnitudes from 1e-3 to 1e3: the order of float adds shows in the sums.
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
    return x, rng.integers(0, bins, n).astype(np.int32)


def test_ordered_adds_equal_numpy_adds_in_thread_order():
    """np.add.at adds in index order, in float32: what a one-thread run does."""
    x, idx = _data()
    y = wp.zeros(97, dtype=float)
    wp.launch(scatter, dim=N, inputs=[wp.array(x, dtype=float), wp.array(idx, dtype=int), y])
    expected = np.zeros(97, np.float32)
    np.add.at(expected, idx, x)
    assert y.numpy().tobytes() == expected.tobytes()

    loss = wp.zeros(1, dtype=float)
    wp.launch(sum_squares, dim=N, inputs=[wp.array(x, dtype=float), loss])
    expected = np.zeros(1, np.float32)
    np.add.at(expected, np.zeros(N, np.intp), x * x)
    assert loss.numpy().tobytes() == expected.tobytes()


@pytest.mark.parametrize("order", ["ordered", "serial"])
def test_each_order_adds_in_thread_order(monkeypatch, order):
    """A launch of an ordered kernel may run ordered (in parallel, adds
    logged) or serial (one thread, adding directly): the same bits."""
    from adjit.backends import cpu  # (the CPU backend chooses the order)
    monkeypatch.setattr(cpu, "_atomic_order", lambda *a: _runtime.ATOMIC_ORDERS[order])
    x, idx = _data()
    y = wp.zeros(97, dtype=float)
    wp.launch(scatter, dim=N, inputs=[wp.array(x, dtype=float), wp.array(idx, dtype=int), y])
    expected = np.zeros(97, np.float32)
    np.add.at(expected, idx, x)
    assert y.numpy().tobytes() == expected.tobytes()


def test_gradients_accumulate_in_thread_order():
    """The adjoint of a gather adds into x.grad at the gathered indices; of
    the reduction, 2 x loss.grad at each element, one thread each."""
    x, idx = _data(bins=N)
    xa = wp.array(x, dtype=float, requires_grad=True)
    y = wp.zeros(N, dtype=float, requires_grad=True)

    @wp.kernel
    def gather(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[idx[i]]

    tape = wp.Tape()
    with tape:
        wp.launch(gather, dim=N, inputs=[xa, wp.array(idx, dtype=int), y])
    seed = (x * 0.37).astype(np.float32)
    tape.backward(grads={y: wp.array(seed, dtype=float)})
    expected = np.zeros(N, np.float32)
    np.add.at(expected, idx, seed)
    assert xa.grad.numpy().tobytes() == expected.tobytes()


def test_old_values_follow_thread_order():
    """A kernel that uses an atomic's old value runs its threads in order:
    the slots a counter hands out are the thread indices."""
    counter = wp.zeros(1, dtype=int)
    slots = wp.zeros(N, dtype=int)
    wp.launch(count_slots, dim=N, inputs=[counter, slots])
    np.testing.assert_array_equal(slots.numpy(), np.arange(N))


def test_overlapping_arrays_run_in_order():
    """An ordered kernel whose arrays overlap (x is a view of y) runs in one
    thread: the adds it reads back are applied as it goes."""
    x, idx = _data(n=4096, bins=4096)
    buf = np.zeros(8192, np.float32)
    buf[:4096] = x
    y = wp.array(buf, dtype=float)
    wp.launch(scatter, dim=4096, inputs=[y, wp.array(idx + 4096, dtype=int), y])
    expected = buf.copy()
    for i in range(4096):  # each thread reads x[i] after the adds before it
        expected[idx[i] + 4096] += expected[i]
    assert y.numpy().tobytes() == expected.tobytes()


def test_nondeterministic_mode_is_opt_in_and_close():
    x, idx = _data()
    ordered = wp.zeros(97, dtype=float)
    wp.launch(scatter, dim=N, inputs=[wp.array(x, dtype=float), wp.array(idx, dtype=int), ordered])
    assert wp.config.deterministic is True
    wp.config.deterministic = False
    try:
        y = wp.zeros(97, dtype=float)
        wp.launch(scatter, dim=N, inputs=[wp.array(x, dtype=float), wp.array(idx, dtype=int), y])
    finally:
        wp.config.deterministic = True
    np.testing.assert_allclose(y.numpy(), ordered.numpy(), rtol=1e-4, atol=1e-2)
    with pytest.raises(TypeError):
        wp.config.deterministic = "yes"


RUNS = textwrap.dedent('''
    import hashlib, sys
    import numpy as np
    sys.path.insert(0, {here!r})
    import adjit as wp
    from test_determinism import N, _data, scatter, sum_squares

    @wp.kernel
    def springs(x: wp.array(dtype=wp.vec3), edges: wp.array(dtype=int), force: wp.array(dtype=wp.vec3)):
        e = wp.tid()
        a = edges[2 * e]
        b = edges[2 * e + 1]
        d = x[b] - x[a]
        f = d * (wp.length(d) - 1.0)
        wp.atomic_add(force, a, f)
        wp.atomic_sub(force, b, f)

    x, idx = _data()
    points = np.random.default_rng(3).standard_normal((N, 3)).astype(np.float32) * 5
    edges = np.random.default_rng(4).integers(0, 500, 2 * N).astype(np.int32)
    digests = set()
    for _ in range({runs}):
        h = hashlib.sha256()
        xa = wp.array(x, dtype=float, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        y = wp.zeros(97, dtype=float, requires_grad=True)
        pts = wp.array(points[:500], dtype=wp.vec3, requires_grad=True)
        force = wp.zeros(500, dtype=wp.vec3, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sum_squares, dim=N, inputs=[xa, loss])
            wp.launch(scatter, dim=N, inputs=[xa, wp.array(idx, dtype=int), y])
            wp.launch(springs, dim=N, inputs=[pts, wp.array(edges, dtype=int), force])
        tape.backward(grads={{loss: wp.array(np.ones(1, np.float32), dtype=float),
                              y: wp.array(np.linspace(-1, 1, 97, dtype=np.float32), dtype=float),
                              force: wp.array(np.ones((500, 3), np.float32), dtype=wp.vec3)}})
        for a in (loss, y, force, xa.grad, pts.grad):
            h.update(a.numpy().tobytes())
        digests.add(h.hexdigest())
    print(len(digests), digests.pop())
''')


def test_bitwise_identical_across_runs_and_thread_counts(tmp_path):
    """Each atomic kernel (a reduction, a scatter, vec3 adds and subtracts at
    two endpoints) and its backward, 20 times at 1, 2 and 7 threads: one bit
    pattern (the launches also try both the ordered and the serial order)."""
    script = tmp_path / "runs.py"
    script.write_text(RUNS.format(here=os.path.dirname(__file__), runs=20))
    results = set()
    for threads in (1, 2, 7):
        env = dict(os.environ, ADJIT_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        count, digest = out.stdout.split()
        assert count == "1", f"{threads} threads: {count} different results in 20 runs"
        results.add(digest)
    assert len(results) == 1, f"results differ between thread counts: {results}"


def test_kernels_without_float_adds_are_untouched():
    """No atomics, integer adds: launched as before (no ordering)."""
    orders = {}

    @wp.kernel
    def histogram(idx: wp.array(dtype=int), counts: wp.array(dtype=int)):
        i = wp.tid()
        wp.atomic_add(counts, idx[i], 1)

    from adjit import loader
    for k in (histogram, count_slots, scatter):
        orders[k.__name__] = loader.cpu_variant(k).atomic_order
    assert orders == {"histogram": _runtime.ATOMIC_ORDERS["parallel"],
                      "count_slots": _runtime.ATOMIC_ORDERS["serial"],
                      "scatter": _runtime.ATOMIC_ORDERS["ordered"]}
