"""Launches and backward passes from several Python threads at once give the
results of some serial order of whole launches, and lose no update
(deterministic float adds included: their log is applied as plain
read-modify-writes, which must not interleave with another launch's)."""
import threading
import time

import numpy as np

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
