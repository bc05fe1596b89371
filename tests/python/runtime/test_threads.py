"""Launches and backward passes from several Python threads at once give the
results of some serial order of whole launches, and lose no update
(deterministic float adds included: their log is applied as plain
read-modify-writes, which must not interleave with another launch's)."""
import threading
import time

import numpy as np
import pytest

import adjit as wp

THREADS = 4


@wp.kernel
def scatter_add(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, i % 16, x[i])


@wp.kernel
def count(counter: wp.array(dtype=int), seen: wp.array(dtype=int)):
    i = wp.tid()
    seen[i] = wp.atomic_add(counter, 0, 1)  # the old value is used: a serial launch


@wp.kernel
def weighted_sum(x: wp.array(dtype=float), w: float, out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, i % 8, w * x[i] * x[i])


def _in_threads(work):
    errors = []

    def run(k):
        try:
            work(k)
        except BaseException as e:  # re-raised below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_concurrent_ordered_adds_equal_the_serial_result_bitwise():
    rng = np.random.default_rng(0)
    # 200,000 threads span several ordered windows; 1,000 run inline.
    for n, launches in ((200_000, 6), (1_000, 200)):
        x = wp.array(rng.normal(size=n).astype(np.float32))
        serial = wp.zeros(16, dtype=float)
        for _ in range(THREADS * launches):
            wp.launch(scatter_add, dim=n, inputs=[x, serial])
        out = wp.zeros(16, dtype=float)
        _in_threads(lambda k: [wp.launch(scatter_add, dim=n, inputs=[x, out]) for _ in range(launches)])
        np.testing.assert_array_equal(out.numpy(), serial.numpy())


def test_concurrent_serial_launches_lose_no_count():
    n, launches = 5_000, 20
    counter = wp.zeros(1, dtype=int)
    seen = [wp.zeros(n, dtype=int) for _ in range(THREADS)]
    _in_threads(lambda k: [wp.launch(count, dim=n, inputs=[counter, seen[k]]) for _ in range(launches)])
    assert counter.numpy()[0] == THREADS * launches * n
    # Each launch ran whole: its threads got consecutive old values, in order.
    for s in seen:
        values = s.numpy()
        np.testing.assert_array_equal(np.diff(values), 1)


def test_concurrent_backward_passes_into_one_gradient():
    n, passes = 100_000, 5
    rng = np.random.default_rng(1)
    x0 = rng.normal(size=n).astype(np.float32)

    def backward(x):
        out = wp.zeros(8, dtype=float, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(weighted_sum, dim=n, inputs=[x, 0.5, out])
        tape.backward(grads={out: np.ones(8, np.float32)})

    serial = wp.array(x0, requires_grad=True)
    for _ in range(THREADS * passes):
        backward(serial)
    x = wp.array(x0, requires_grad=True)
    _in_threads(lambda k: [backward(x) for _ in range(passes)])
    # d/dx of 0.5 x^2 is x, accumulated once per pass, in the same order of
    # whole passes: bitwise the serial gradient.
    np.testing.assert_array_equal(x.grad.numpy(), serial.grad.numpy())
    np.testing.assert_allclose(x.grad.numpy(), THREADS * passes * x0, rtol=1e-5)


@wp.kernel
def _heavy_to_compile(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), steps: int,
                      out: wp.array(dtype=float)):
    i = wp.tid()
    p = x[i]
    q = v[i]
    for s in range(steps):
        f = wp.vec3(wp.sin(p[0]), wp.cos(p[1]), wp.tanh(p[2])) - p * 0.5
        q = q + f * 0.01 + wp.cross(p, q) * 0.001
        p = p + q * 0.01
    out[i] = wp.length(p) + wp.dot(p, q)


def test_a_compile_leaves_other_threads_running():
    """The compiler's passes and code generation run without the GIL: a
    thread ticking every millisecond is never held up for long."""
    from adjit.compiler import driver
    from adjit.variant import VariantSpec
    gaps, done = [], threading.Event()

    def tick():
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
    ticker = threading.Thread(target=tick)
    ticker.start()
    start = time.perf_counter()
    try:
        for adjoint in (0, 1, 0, 1):
            driver.compile_cpu_object(_heavy_to_compile, VariantSpec(adjoint=adjoint), 3)
    finally:
        done.set()
        ticker.join()
    took = time.perf_counter() - start
    assert took > 0.1  # (long enough for the stalls to mean something)
    assert max(gaps) < 0.1, f"a compile of {took:.2f} s held another thread up for {max(gaps) * 1e3:.0f} ms"


def test_force_load_compiles_a_module_in_parallel(tmp_path, monkeypatch):
    import sys
    (tmp_path / "several_kernels.py").write_text("import adjit as wp\n" + "".join(f'''
@wp.kernel
def k{n}(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * {n + 1}.0
''' for n in range(6)))
    monkeypatch.syspath_prepend(str(tmp_path))
    import several_kernels
    from adjit import loader
    wp.force_load(modules=[several_kernels])
    for n in range(6):
        kernel = getattr(several_kernels, f"k{n}")
        assert {spec.adjoint for spec in loader._loaded(kernel).variants} == {0, 1}
        x, y = wp.array(np.array([0.5], np.float32)), wp.zeros(1)
        wp.launch(kernel, dim=1, inputs=[x, y])
        np.testing.assert_allclose(y.numpy(), np.sin(0.5) * (n + 1), rtol=1e-6)
    sys.modules.pop("several_kernels", None)


# --- more cases (issue 25, item 9) ---------------------------------------------------------------------

@wp.kernel
def scatter_add_f64(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, i % 16, x[i])


@wp.kernel
def scatter_add_vec3(x: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    wp.atomic_add(out, i % 16, x[i])


@pytest.mark.parametrize("kernel, dtype, shape", [(scatter_add_f64, wp.float64, ()), (scatter_add_vec3, wp.vec3, (3,))],
                         ids=["float64", "vec3"])
def test_concurrent_adds_of_wider_types_equal_the_serial_result_bitwise(kernel, dtype, shape):
    n, launches = 50_000, 4
    rng = np.random.default_rng(2)
    x = wp.array(rng.normal(size=(n,) + shape).astype(np.float64 if dtype is wp.float64 else np.float32),
                 dtype=dtype)
    serial = wp.zeros(16, dtype=dtype)
    for _ in range(THREADS * launches):
        wp.launch(kernel, dim=n, inputs=[x, serial])
    out = wp.zeros(16, dtype=dtype)
    _in_threads(lambda k: [wp.launch(kernel, dim=n, inputs=[x, out]) for _ in range(launches)])
    np.testing.assert_array_equal(out.numpy(), serial.numpy())


@wp.kernel
def int_adds_and_extremes(x: wp.array(dtype=int), total: wp.array(dtype=int), lo: wp.array(dtype=int),
                          hi: wp.array(dtype=int)):
    i = wp.tid()
    wp.atomic_add(total, i % 4, x[i])
    wp.atomic_min(lo, 0, x[i])
    wp.atomic_max(hi, 0, x[i])


def test_concurrent_integer_adds_mins_and_maxes_are_exact():
    n, launches = 20_000, 10
    values = [np.arange(n, dtype=np.int32) - 1000 * k for k in range(THREADS)]  # each thread its own data
    xs = [wp.array(v) for v in values]
    total, lo, hi = wp.zeros(4, dtype=int), wp.array(np.array([10**9], np.int32)), wp.array(np.array([-10**9], np.int32))
    _in_threads(lambda k: [wp.launch(int_adds_and_extremes, dim=n, inputs=[xs[k], total, lo, hi])
                           for _ in range(launches)])
    expected = sum(v.reshape(-1, 4).sum(axis=0, dtype=np.int64) for v in values) * launches
    np.testing.assert_array_equal(total.numpy(), expected)
    assert lo.numpy()[0] == min(v.min() for v in values) and hi.numpy()[0] == max(v.max() for v in values)


@wp.kernel
def gather_twice(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = x[idx[i]] * 2.0


def test_a_failed_check_is_raised_by_its_own_launch_only():
    """Threads with out-of-range indices and threads without launch at once:
    each failure is reported by the launch that made it, with its own index."""
    n, rounds = 5_000, 15
    x = wp.array(np.arange(n, dtype=np.float32))
    good = wp.array(np.arange(n, dtype=np.int32)[::-1].copy())
    bad = {k: wp.array(np.where(np.arange(n) == 17 * k, n + k, np.arange(n)).astype(np.int32)) for k in (1, 3)}
    caught = {k: 0 for k in bad}

    def work(k):
        out = wp.zeros(n, dtype=float)
        for _ in range(rounds):
            if k in bad:
                with pytest.raises(wp.OutOfBoundsError) as info:
                    wp.launch(gather_twice, dim=n, inputs=[bad[k], x, out])
                assert info.value.index == (n + k,) and info.value.thread == (17 * k,)
                caught[k] += 1
            else:
                wp.launch(gather_twice, dim=n, inputs=[good, x, out])
                np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(n)[::-1])
    _in_threads(work)
    assert caught == {1: rounds, 3: rounds}


def test_threads_launching_a_kernel_first_at_once_compile_it_once(tmp_path, monkeypatch):
    import sys
    from adjit.compiler import driver
    (tmp_path / "first_launch_race.py").write_text(
        "import adjit as wp\n\n\n@wp.kernel\ndef cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n    y[i] = x[i] * x[i] * x[i]\n")
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    compiled = []
    compile_cpu_object = driver.compile_cpu_object

    def counting(kernel, spec, *args):
        compiled.append((kernel.__name__, spec))
        return compile_cpu_object(kernel, spec, *args)
    monkeypatch.setattr(driver, "compile_cpu_object", counting)
    import first_launch_race
    x = wp.array(np.linspace(-2, 2, 64).astype(np.float32))
    start = threading.Barrier(THREADS)
    results = [None] * THREADS

    def work(k):
        y = wp.zeros(64)
        start.wait()
        wp.launch(first_launch_race.cube, dim=64, inputs=[x, y])
        results[k] = y.numpy().copy()
    _in_threads(work)
    xs = x.numpy()
    for r in results:
        np.testing.assert_array_equal(r, xs * xs * xs)
    assert compiled and len(compiled) == len(set(compiled)), compiled  # each variant compiled once
    sys.modules.pop("first_launch_race", None)


@wp.kernel
def gather_scaled(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = x[idx[i]] * x[idx[i]]


def test_concurrent_adjoint_scatters_into_one_gradient():
    """gather's adjoint scatters into x.grad through the indices (many
    threads hit one element): concurrent passes give the serial gradient bitwise."""
    n, m, passes = 60_000, 97, 4
    rng = np.random.default_rng(3)
    idx = wp.array(rng.integers(0, m, size=n).astype(np.int32))
    x0 = rng.normal(size=m).astype(np.float32)

    def backward(x):
        out = wp.zeros(n, dtype=float, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(gather_scaled, dim=n, inputs=[idx, x, out])
        tape.backward(grads={out: np.ones(n, np.float32)})

    serial = wp.array(x0, requires_grad=True)
    for _ in range(THREADS * passes):
        backward(serial)
    x = wp.array(x0, requires_grad=True)
    _in_threads(lambda k: [backward(x) for _ in range(passes)])
    np.testing.assert_array_equal(x.grad.numpy(), serial.grad.numpy())
    # (and it is the gradient: 2 x per read, each x read about n / m times; the
    # float32 sums of some 10,000 adds hold about 4 digits)
    counts = np.bincount(idx.numpy(), minlength=m)
    np.testing.assert_allclose(x.grad.numpy(), THREADS * passes * 2 * x0 * counts, rtol=1e-3)


def test_a_tape_recorded_in_one_thread_runs_backward_in_another():
    n = 1_000
    x = wp.array(np.linspace(0, 1, n).astype(np.float32), requires_grad=True)
    out = wp.zeros(8, dtype=float, requires_grad=True)
    tapes = []

    def record():
        with wp.Tape() as tape:
            wp.launch(weighted_sum, dim=n, inputs=[x, 3.0, out])
        tapes.append(tape)
    recorder = threading.Thread(target=record)
    recorder.start()
    recorder.join()
    # this thread recorded nothing: its own tape stays empty
    with wp.Tape() as mine:
        pass
    assert len(mine._steps) == 0 and len(tapes[0]._steps) == 1
    _in_threads(lambda k: tapes[0].backward(grads={out: np.ones(8, np.float32)}) if k == 0 else None)
    np.testing.assert_allclose(x.grad.numpy(), 6.0 * x.numpy(), rtol=1e-6)  # d(3 x^2)/dx
