"""Process events while kernels run: interpreter exit with daemon threads
inside launches, backward passes, compiles or the compiler's first import
exits cleanly; fork() while
another thread launches gives a child whose launches work (on a new thread
pool). Each case runs in its own interpreter."""
import os
import subprocess
import sys
import textwrap

import pytest

PRELUDE = textwrap.dedent("""
    import os, sys, threading, time
    import numpy as np
    import adjit as wp

    @wp.kernel
    def add(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(out, i % 16, x[i] * x[i])

    N = 1_000_000
    x = wp.array(np.ones(N, np.float32), requires_grad=True)
    busy = wp.zeros(16, dtype=float, requires_grad=True)
    wp.launch(add, dim=N, inputs=[x, busy])
""")


def _run(tmp_path, body: str, timeout: float = 120) -> subprocess.CompletedProcess:
    script = tmp_path / "case.py"  # a file: kernels need their source
    script.write_text(PRELUDE + textwrap.dedent(body))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=timeout,
                          cwd=os.path.dirname(__file__))


def _assert_clean(result):
    assert result.returncode == 0, result.stderr[-2000:]
    assert "terminate called" not in result.stderr and "Fatal" not in result.stderr, result.stderr[-2000:]


def test_exit_with_daemon_threads_inside_launches(tmp_path):
    _assert_clean(_run(tmp_path, """
        def spin():
            while True:
                wp.launch(add, dim=N, inputs=[x, busy])
        for _ in range(3):
            threading.Thread(target=spin, daemon=True).start()
        time.sleep(0.3)
    """))


COMPILING_THREADS = textwrap.dedent("""
    import importlib.util, pathlib, sys, threading, time
    import numpy as np
    import adjit as wp

    folder = pathlib.Path(sys.argv[1])

    def new_kernel(n):
        # (a kernel of its own source each time: every launch compiles)
        path = folder / f"k{n}.py"
        path.write_text("import adjit as wp\\n@wp.kernel\\n"
                        "def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):\\n"
                        f"    i = wp.tid()\\n    y[i] = wp.sin(x[i]) * {n}.0 + wp.exp(x[i])\\n")
        spec = importlib.util.spec_from_file_location(f"k{n}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.k

    def spin(j):
        for n in range(j * 1000, j * 1000 + 1000):
            x = wp.array(np.ones(8, np.float32), requires_grad=True)
            y = wp.zeros(8, requires_grad=True)
            with wp.Tape() as tape:
                wp.launch(new_kernel(n), dim=8, inputs=[x, y])
            tape.backward(grads={y: np.ones(8, np.float32)})

    for j in range(3):
        threading.Thread(target=spin, args=(j,), daemon=True).start()
    time.sleep(float(sys.argv[2]))
""")


@pytest.mark.parametrize("seconds", [0.2, 0.5, 0.9, 1.4])
def test_exit_with_daemon_threads_importing_the_compiler_and_compiling(tmp_path, seconds):
    # The main thread never compiles: the first compile imports MLIR's bindings in a daemon thread. Exit
    # waits for compiles (and that import) in flight; one cut by exit aborted about one run in ten.
    script = tmp_path / "case.py"
    script.write_text(COMPILING_THREADS)
    env = dict(os.environ, ADJIT_CACHE_DIR=str(tmp_path / "cache"))
    _assert_clean(subprocess.run([sys.executable, str(script), str(tmp_path), str(seconds)], capture_output=True,
                                 text=True, timeout=120, env=env))


def test_exit_with_daemon_threads_inside_backward_passes(tmp_path):
    _assert_clean(_run(tmp_path, """
        def spin():
            while True:
                out = wp.zeros(16, dtype=float, requires_grad=True)
                with wp.Tape() as tape:
                    wp.launch(add, dim=N, inputs=[x, out])
                tape.backward(grads={out: np.ones(16, np.float32)})
        for _ in range(3):
            threading.Thread(target=spin, daemon=True).start()
        time.sleep(0.5)
    """))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_while_another_thread_launches(tmp_path):
    result = _run(tmp_path, """
        stop = False
        def spin():
            while not stop:
                wp.launch(add, dim=N, inputs=[x, busy])
        t = threading.Thread(target=spin)
        t.start()
        ok = 0
        for _ in range(8):
            time.sleep(0.02)
            pid = os.fork()
            if pid == 0:
                # the child's pool is new: an ordered launch over many windows
                out = wp.zeros(16, dtype=float)
                wp.launch(add, dim=N, inputs=[x, out])
                os._exit(0 if out.numpy().sum() == N else 3)
            deadline = time.time() + 30
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.time() > deadline:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    print("a child hung", file=sys.stderr)
                    sys.exit(1)
                time.sleep(0.01)
            ok += os.waitstatus_to_exitcode(status) == 0
        stop = True
        t.join()
        sys.exit(0 if ok == 8 else 2)
    """, timeout=300)
    _assert_clean(result)


INTERRUPTED_FIRST_COMPILE = textwrap.dedent("""
    import os, signal, sys, threading, time
    import numpy as np
    import adjit as wp

    @wp.kernel
    def bump(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] + 1.0

    threading.Timer(float(sys.argv[1]), lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    try:
        wp.launch(bump, dim=4, inputs=[wp.zeros(4, dtype=float)])  # imports the compiler, compiles
        time.sleep(5)  # the interrupt comes during the compile or here
    except KeyboardInterrupt:
        pass
    import gc
    gc.collect()
    x = wp.zeros(4, dtype=float)
    wp.launch(bump, dim=4, inputs=[x])
    sys.exit(0 if list(x.numpy()) == [1.0] * 4 else 2)
""")


@pytest.mark.parametrize("delay", [0.005, 0.01, 0.02, 0.04, 0.08])
def test_ctrl_c_during_the_first_compile_leaves_a_usable_process(tmp_path, delay):
    """A KeyboardInterrupt while the compiler is first imported (a notebook
    user stopping the first cell) crashed the process at the next launch."""
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED_FIRST_COMPILE)
    result = subprocess.run([sys.executable, str(script), str(delay)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "ADJIT_CACHE": "0"})
    _assert_clean(result)


REDEFINE = '''
import gc, linecache, sys
import adjit as wp

SOURCE = """
import adjit as wp
@wp.kernel
def k(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 2.0 + float(%d)
"""

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

def mappings():
    return sum(1 for _ in open("/proc/self/maps"))

x = wp.zeros(4)

def define(n, constant):
    # a kernel defined anew, as a notebook cell run again or a kernel factory does
    name = f"<cell {n}>"
    text = SOURCE % constant
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    scope = {"__name__": f"cell{n}"}
    exec(compile(text, name, "exec"), scope)
    wp.launch(scope["k"], dim=4, inputs=[x])
    del linecache.cache[name]

count, distinct = int(sys.argv[1]), sys.argv[2] == "distinct"
for n in range(100):
    define(n, n if distinct else 0)
gc.collect()
rss, maps = rss_mb(), mappings()
for n in range(100, 100 + count):
    define(n, n if distinct else 0)
gc.collect()
print(f"{rss_mb() - rss:.2f} {mappings() - maps}")
'''


@pytest.mark.parametrize("count, kind", [(10_000, "identical"), (300, "distinct")])
def test_redefined_kernels_do_not_keep_their_code(tmp_path, count, kind):
    """Identical redefinitions share one loaded object; an unreachable
    kernel's code is unmapped (10,000 identical ones: under 10 MB)."""
    script = tmp_path / "redefine.py"
    script.write_text(REDEFINE)
    out = subprocess.run([sys.executable, str(script), str(count), kind], capture_output=True, text=True,
                         timeout=600, env=dict(os.environ, ADJIT_CACHE_DIR=str(tmp_path / "cache")))
    assert out.returncode == 0, out.stderr
    grown_mb, new_mappings = out.stdout.split()
    assert float(grown_mb) < (10 if kind == "identical" else 3), out.stdout
    assert int(new_mappings) <= 4, out.stdout


# --- more process events (issue 25, item 9) -----------------------------------------------------------

SLOW = textwrap.dedent("""
    import _thread, atexit, os, signal, sys, threading, time
    import numpy as np
    import adjit as wp

    @wp.kernel
    def slow(x: wp.array(dtype=float), steps: int, out: wp.array(dtype=float)):
        i = wp.tid()
        s = float(0.0)
        for k in range(steps):
            s = s + wp.sin(x[i] * float(k))
        out[i] = s

    n = 20_000
    STEPS = 2_000  # a launch of about half a second
    x = wp.array(np.linspace(0, 1, n).astype(np.float32), requires_grad=True)
    out = wp.zeros(n, requires_grad=True)
    wp.launch(slow, dim=n, inputs=[x, STEPS, out])
    whole = out.numpy().copy()

    def usable():
        y = wp.zeros(n)
        wp.launch(slow, dim=n, inputs=[x, 3, y])
        xs = x.numpy()
        return np.allclose(y.numpy(), np.sin(0 * xs) + np.sin(xs) + np.sin(2 * xs), rtol=1e-5, atol=1e-6)
""")


def _run_slow(tmp_path, body: str, timeout: float = 120, env=None) -> subprocess.CompletedProcess:
    script = tmp_path / "slow_case.py"
    script.write_text(SLOW + textwrap.dedent(body))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=timeout,
                          cwd=os.path.dirname(__file__), env=env)


@pytest.mark.parametrize("how", ["_thread.interrupt_main()", "os.kill(os.getpid(), signal.SIGINT)"])
def test_ctrl_c_during_a_long_launch_arrives_after_it_whole(tmp_path, how):
    """The KeyboardInterrupt is raised when the launch returns; the launch
    ran whole (every thread wrote), and the process launches again."""
    result = _run_slow(tmp_path, f"""
        out.zero_()
        threading.Timer(0.05, lambda: {how}).start()
        started = time.perf_counter()
        try:
            wp.launch(slow, dim=n, inputs=[x, STEPS, out])
            time.sleep(5)
            sys.exit(3)  # never interrupted
        except KeyboardInterrupt:
            pass
        assert np.array_equal(out.numpy(), whole), "the interrupted launch did not run whole"
        sys.exit(0 if usable() else 2)
    """)
    _assert_clean(result)


def test_ctrl_c_during_a_backward_pass_leaves_tapes_usable(tmp_path):
    result = _run_slow(tmp_path, """
        def backward():
            x.grad.zero_()
            y = wp.zeros(n, requires_grad=True)
            with wp.Tape() as tape:
                wp.launch(slow, dim=n, inputs=[x, STEPS // 4, y])
            tape.backward(grads={y: np.ones(n, np.float32)})
            return x.grad.numpy().copy()
        backward()  # (compiles the adjoint)
        started = time.perf_counter()
        reference = backward()
        took = time.perf_counter() - started
        # (most likely inside backward(); a signal, not interrupt_main(), so that sleep() below wakes)
        threading.Timer(0.7 * took, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            backward()
            time.sleep(5)
            sys.exit(3)
        except KeyboardInterrupt:
            pass
        assert np.array_equal(backward(), reference)
        sys.exit(0 if usable() else 2)
    """)
    _assert_clean(result)


def test_another_exception_from_a_signal_handler_during_a_launch(tmp_path):
    """A SIGALRM handler raising (a timeout idiom): the exception comes out of
    the launch call once it returns, and the next launches work."""
    result = _run_slow(tmp_path, """
        class Timeout(Exception):
            pass
        def on_alarm(signum, frame):
            raise Timeout()
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        out.zero_()
        try:
            wp.launch(slow, dim=n, inputs=[x, STEPS, out])
            time.sleep(5)
            sys.exit(3)
        except Timeout:
            pass
        assert np.array_equal(out.numpy(), whole)
        sys.exit(0 if usable() else 2)
    """)
    _assert_clean(result)


def test_ctrl_c_while_a_second_kernel_compiles(tmp_path):
    """The compiler is imported already; the interrupt lands in the compile
    of a new kernel (or right after it): that kernel launches afterwards."""
    result = _run_slow(tmp_path, """
        @wp.kernel
        def fresh(x: wp.array(dtype=float), out: wp.array(dtype=float)):
            i = wp.tid()
            v = wp.vec3(x[i], wp.cos(x[i]), wp.tanh(x[i]))
            out[i] = wp.length(wp.cross(v, wp.vec3(1.0, 2.0, 3.0)))
        y = wp.zeros(n)
        threading.Timer(0.02, _thread.interrupt_main).start()
        try:
            wp.launch(fresh, dim=n, inputs=[x, y])
            time.sleep(5)
            sys.exit(3)
        except KeyboardInterrupt:
            pass
        y.zero_()
        wp.launch(fresh, dim=n, inputs=[x, y])
        xs = x.numpy().astype(np.float64)
        v = np.stack([xs, np.cos(xs), np.tanh(xs)], axis=1)
        expected = np.linalg.norm(np.cross(v, [1.0, 2.0, 3.0]), axis=1)
        sys.exit(0 if np.allclose(y.numpy(), expected, rtol=1e-5) and usable() else 2)
    """, env={**os.environ, "ADJIT_CACHE": "0"})
    _assert_clean(result)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_compiles_and_differentiates_a_new_kernel(tmp_path):
    """The child compiles a kernel the parent never loaded (cache off) and
    runs its backward pass, while the parent's other thread launches."""
    result = _run_slow(tmp_path, """
        @wp.kernel
        def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = x[i] * x[i] * x[i]
        stop = False
        def spin():
            while not stop:
                wp.launch(slow, dim=n, inputs=[x, 20, out])
        t = threading.Thread(target=spin)
        t.start()
        time.sleep(0.05)
        pid = os.fork()
        if pid == 0:
            a = wp.array(np.array([1.0, 2.0, -3.0], np.float32), requires_grad=True)
            b = wp.zeros(3, requires_grad=True)
            with wp.Tape() as tape:
                wp.launch(cube, dim=3, inputs=[a, b])
            tape.backward(grads={b: np.ones(3, np.float32)})
            ok = list(b.numpy()) == [1, 8, -27] and list(a.grad.numpy()) == [3, 12, 27]
            os._exit(0 if ok else 3)
        deadline = time.time() + 60
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.time() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                print("the child hung", file=sys.stderr)
                sys.exit(1)
            time.sleep(0.01)
        stop = True
        t.join()
        sys.exit(os.waitstatus_to_exitcode(status))
    """, env={**os.environ, "ADJIT_CACHE": "0"})
    _assert_clean(result)


def test_exit_with_daemon_threads_whose_launches_fail_checks(tmp_path):
    _assert_clean(_run(tmp_path, """
        @wp.kernel
        def gather(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
            i = wp.tid()
            out[i] = x[idx[i]]
        idx = wp.array((np.arange(N) * 7 % (N + 5)).astype(np.int32))  # some past the end
        def spin():
            out = wp.zeros(N, dtype=float)
            while True:
                try:
                    wp.launch(gather, dim=N, inputs=[idx, x, out])
                except wp.OutOfBoundsError:
                    pass
        for _ in range(3):
            threading.Thread(target=spin, daemon=True).start()
        time.sleep(0.3)
    """))


def test_a_launch_from_an_atexit_handler(tmp_path):
    result = _run(tmp_path, """
        import atexit
        def at_exit():
            out = wp.zeros(16, dtype=float)
            wp.launch(add, dim=N, inputs=[x, out])
            print("at exit:", int(out.numpy().sum()))
        atexit.register(at_exit)
    """)
    _assert_clean(result)
    assert "at exit: 1000000" in result.stdout, result.stdout
