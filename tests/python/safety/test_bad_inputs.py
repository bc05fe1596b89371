"""Careless and hostile inputs to the host API (issue 15): each is a clear
error (the exact exception type, and the words its message must hold) or
the correct result, never a crash or a silently wrong result.

Grouped by family: launches, arrays, the tape, ``adjit.config``. Cases that
could crash the interpreter if the check were missing run in a subprocess.
"""
import importlib
import logging
import os
import pickle
import subprocess
import sys
import textwrap
import threading
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import adjit

#: What ``adjit.config`` names, before these tests import ``adjit.config``.
_ADJIT_CONFIG = adjit.config


@adjit.kernel
def scale(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
    i = adjit.tid()
    y[i] = 2.0 * x[i]


@adjit.kernel
def fill_2d(y: adjit.array(dtype=float, ndim=2)):
    i, j = adjit.tid()
    y[i, j] = float(i * 10 + j)


def _xy(n=4, grad=False):
    x = adjit.array(np.arange(n, dtype=np.float32), requires_grad=grad)
    y = adjit.zeros(n, requires_grad=grad)
    return x, y


def _run_script(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    """Runs ``code`` (a script defining kernels) in a fresh interpreter."""
    script = tmp_path / "case.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))


# === launch ==========================================================================================

@pytest.mark.parametrize("dim, words", [
    (4.7, ["integers", "4.7"]),
    ((2, 2.5), ["integers", "2.5"]),
    (np.float32(3.0), ["integers"]),
    ("4", ["int or a tuple", "'4'"]),
    (None, ["int or a tuple", "None"]),
    (True, ["int or a tuple", "True"]),
    (object(), ["integers", "object"]),
    (-1, ["non-negative", "-1"]),
    ((4, -2), ["non-negative"]),
    (2**64, ["2**31 - 1", "int32", str(2**64)]),
    ((2**64,), ["2**31 - 1", "int32"]),
    (2**31, ["2**31 - 1", "int32"]),
    ((), ["1 to 4 extents"]),
    ((1, 1, 1, 1, 1), ["1 to 4 extents"]),
    ((2**31 - 1,) * 3, ["threads", "int64"]),
])
def test_launch_bad_dim(dim, words):
    x, y = _xy()
    with pytest.raises(adjit.LaunchError) as info:
        adjit.launch(scale, dim=dim, inputs=[x, y])
    message = str(info.value)
    assert "launch dim" in message
    for w in words:
        assert w in message, message
    assert not y.numpy().any()  # nothing ran


def test_launch_of_more_threads_than_an_int32_tid_holds_is_refused():
    # scale's i = tid() is the linear index: 2**32 threads would wrap it.
    x, y = _xy()
    with pytest.raises(adjit.LaunchError) as info:
        adjit.launch(scale, dim=(2**16, 2**16), inputs=[x, y])
    for words in ("4294967296 threads", "one int32 (i = tid())", "i, j = tid()"):
        assert words in str(info.value)
    assert not y.numpy().any()
    # i, j = tid() has one int32 per dimension: such launches are not refused.
    assert scale.linear_tid and not fill_2d.linear_tid


@pytest.mark.parametrize("dim", [4, np.int64(4), np.int32(4), (4,), [4], np.array([4])])
def test_launch_integer_dims_run(dim):
    x, y = _xy()
    adjit.launch(scale, dim=dim, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])


def test_launch_2d_dim_of_numpy_ints_runs():
    y = adjit.zeros((2, 3))
    adjit.launch(fill_2d, dim=(np.int64(2), np.int32(3)), inputs=[y])
    np.testing.assert_array_equal(y.numpy(), [[0, 1, 2], [10, 11, 12]])


@pytest.mark.parametrize("dim", ["2**31", "(2**31 - 1, 2**31 - 1, 2**31 - 1)"])
def test_launch_huge_dim_is_refused_in_a_fresh_process(tmp_path, dim):
    # Were the check missing, tid() would overflow int32 and write far out of
    # range (a crash): hence a subprocess.
    out = _run_script(tmp_path, f"""
        import adjit
        @adjit.kernel
        def scale(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
            i = adjit.tid()
            y[i] = 2.0 * x[i]
        x, y = adjit.zeros(4), adjit.zeros(4)
        try:
            adjit.launch(scale, dim={dim}, inputs=[x, y])
        except adjit.LaunchError as e:
            print("LaunchError:", e)
        """)
    assert out.returncode == 0, out.stderr
    assert "LaunchError: launch dim" in out.stdout


@pytest.mark.parametrize("what, inputs, outputs", [
    ("inputs", "set", ()),
    ("inputs", "array", ()),
    ("inputs", "generator", ()),
    ("inputs", "dict", ()),
    ("outputs", "list_x", "y_string"),
    ("outputs", "list_x", "array"),
])
def test_launch_arguments_not_a_list(what, inputs, outputs):
    x, y = _xy()
    values = {"set": {x, y}, "array": x, "generator": (a for a in (x, y)), "dict": {"x": x, "y": y},
              "list_x": [x], "y_string": "y"}
    outputs = values[outputs] if isinstance(outputs, str) else outputs
    if outputs is x:
        outputs = y
    with pytest.raises(adjit.LaunchError) as info:
        adjit.launch(scale, dim=4, inputs=values[inputs], outputs=outputs)
    assert f"{what} must be a list or tuple" in str(info.value)
    assert "scale" in str(info.value)


def test_launch_arguments_as_tuples_run():
    x, y = _xy()
    adjit.launch(scale, dim=4, inputs=(x,), outputs=(y,))
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])


@pytest.mark.parametrize("param", ["x", "y"])
def test_launch_read_only_buffer(param):
    x, y = _xy()
    # (numpy() hands out views, whose flags are their own: make the buffer
    # underneath read-only, as an Array over read-only memory would be)
    (x if param == "x" else y)._buffer.flags.writeable = False
    with pytest.raises(adjit.LaunchError) as info:
        adjit.launch(scale, dim=4, inputs=[x, y])
    message = str(info.value)
    assert f"argument '{param}'" in message and "read-only" in message, message
    assert "bad_cast" not in message


def test_a_read_only_view_from_numpy_does_not_make_the_array_read_only():
    x, y = _xy()
    x.numpy().flags.writeable = False
    adjit.launch(scale, dim=4, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])


def test_launch_array_over_a_read_only_numpy_buffer():
    data = np.arange(4, dtype=np.float32)
    data.flags.writeable = False
    x, y = adjit.Array(data, adjit.float32), adjit.zeros(4)
    with pytest.raises(adjit.LaunchError, match="argument 'x'.*read-only"):
        adjit.launch(scale, dim=4, inputs=[x, y])


def test_adjit_array_of_a_read_only_view_is_a_writable_copy():
    data = np.arange(4, dtype=np.float32)
    view = data[:]
    view.flags.writeable = False
    x, y = adjit.array(view), adjit.zeros(4)
    adjit.launch(scale, dim=4, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])
    assert not np.shares_memory(x.numpy(), data)


def test_from_jax_array_launches():
    jnp = pytest.importorskip("jax.numpy")
    x, y = adjit.from_jax(jnp.arange(4, dtype=jnp.float32)), adjit.zeros(4)
    adjit.launch(scale, dim=4, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])


def test_launch_on_a_strided_buffer_writes_through_it():
    # a view whose elements are not contiguous runs the strided variant: the
    # writes land in the view's elements (not in a temporary copy), and
    # only there
    x = adjit.array(np.arange(4, dtype=np.float32))
    backing = np.zeros(8, np.float32)
    y = adjit.Array(backing[::2], adjit.float32)
    adjit.launch(scale, dim=4, inputs=[x, y])
    np.testing.assert_array_equal(backing[::2], [0, 2, 4, 6])
    assert not backing[1::2].any()
    f = adjit.Array(np.zeros((2, 3), np.float32, order="F"), adjit.float32)
    adjit.launch(fill_2d, dim=(2, 3), inputs=[f])
    np.testing.assert_array_equal(f.numpy(), [[0, 1, 2], [10, 11, 12]])


def test_launch_on_a_reversed_buffer_is_refused():
    backing = np.zeros(8, np.float32)
    y = adjit.Array(backing[::-2], adjit.float32)
    with pytest.raises(adjit.LaunchError, match=r"argument 'y'.*strides \(-8,\) are not whole, non-negative"):
        adjit.launch(scale, dim=4, inputs=[adjit.array(np.arange(4, dtype=np.float32)), y])
    assert not backing.any()


def test_backward_with_a_read_only_gradient_buffer():
    x, y = _xy(grad=True)
    with adjit.Tape() as tape:
        adjit.launch(scale, dim=4, inputs=[x, y])
    x.grad._buffer.flags.writeable = False
    with pytest.raises(adjit.LaunchError, match="argument 'x'.*read-only"):
        tape.backward(grads={y: np.ones(4, np.float32)})


# === arrays ==========================================================================================

@pytest.mark.parametrize("data, shape, expected", [
    (np.arange(6), (2, 3), (2, 3)),
    (np.arange(6).reshape(2, 3), (3, 2), (3, 2)),
    (np.arange(6).reshape(2, 3), 6, (6,)),
    ([[1, 2], [3, 4]], (4,), (4,)),
])
def test_array_shape_reshapes_data_of_the_same_size(data, shape, expected):
    a = adjit.array(data, dtype=float, shape=shape)
    assert a.shape == expected
    np.testing.assert_array_equal(a.numpy().ravel(), np.ravel(data))


def test_array_shape_of_vectors_reshapes():
    a = adjit.array(np.arange(6), dtype=adjit.vec3, shape=2)
    assert a.shape == (2,) and a.dtype is adjit.vec3
    np.testing.assert_array_equal(a.numpy(), [[0, 1, 2], [3, 4, 5]])


@pytest.mark.parametrize("data, shape", [
    (np.arange(6), (4,)),
    (np.arange(6), (2, 4)),
    ([1.0, 2.0], 3),
])
def test_array_shape_that_does_not_fit_the_data(data, shape):
    with pytest.raises(ValueError) as info:
        adjit.array(data, dtype=float, shape=shape)
    assert "does not fit" in str(info.value) and f"shape={shape!r}" in str(info.value)


def test_array_negative_shape_with_data():
    with pytest.raises(ValueError, match="non-negative"):
        adjit.array(np.arange(6), dtype=float, shape=(-1, 3))


def test_array_ndim_that_does_not_match_the_data():
    with pytest.raises(ValueError, match="ndim=2"):
        adjit.array(np.arange(6), dtype=float, ndim=2)


def test_array_copies_its_data():
    data = np.arange(4, dtype=np.float32)
    a = adjit.array(data, shape=(2, 2))
    data[0] = 99
    assert a.numpy()[0, 0] == 0


@pytest.mark.parametrize("src_shape", [(3, 2), (6,), (1, 2, 3), (2, 3, 1), (4,)])
def test_assign_of_another_shape(src_shape):
    a = adjit.zeros((2, 3))
    with pytest.raises(ValueError) as info:
        a.assign(np.ones(src_shape))
    message = str(info.value)
    assert f"{src_shape}" in message and "(2, 3)" in message and "broadcast" in message
    assert not a.numpy().any()


@pytest.mark.parametrize("src, expected", [
    (5.0, np.full((2, 3), 5.0)),
    ([1, 2, 3], [[1, 2, 3], [1, 2, 3]]),
    ([[1], [2]], [[1, 1, 1], [2, 2, 2]]),
    (np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)),
])
def test_assign_of_the_same_or_a_broadcastable_shape(src, expected):
    a = adjit.zeros((2, 3))
    a.assign(src)
    np.testing.assert_array_equal(a.numpy(), expected)


def test_assign_a_vector_to_every_element():
    a = adjit.zeros(3, dtype=adjit.vec3)
    a.assign(adjit.vec3(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(a.numpy(), [[1, 2, 3]] * 3)


def test_assign_from_an_array_of_another_shape():
    with pytest.raises(ValueError, match="shapes/dtypes differ"):
        adjit.zeros((2, 3)).assign(adjit.zeros((3, 2)))


def test_assign_of_non_numbers():
    with pytest.raises(ValueError, match="assign: cannot convert str"):
        adjit.zeros(3).assign("abc")


def test_requires_grad_set_after_creation_gets_a_gradient():
    x, y = _xy()
    x.requires_grad = True
    y.requires_grad = True
    assert x.grad is not None and x.grad.shape == x.shape and not x.grad.numpy().any()
    with adjit.Tape() as tape:
        adjit.launch(scale, dim=4, inputs=[x, y])
    tape.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2, 2])


def test_requires_grad_unset_after_creation_drops_the_gradient():
    x = adjit.zeros(4, requires_grad=True)
    x.requires_grad = False
    assert x.grad is None and x.requires_grad is False
    with pytest.raises(adjit.GradientError, match="requires_grad=True"):
        adjit.Tape().backward(loss=x)


def test_requires_grad_true_twice_keeps_the_gradient():
    x = adjit.zeros(4, requires_grad=True)
    x.grad.numpy()[:] = 3
    x.requires_grad = True
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3, 3, 3])


@pytest.mark.parametrize("value", ["yes", None, 2])
def test_requires_grad_must_be_a_bool(value):
    with pytest.raises(TypeError, match="requires_grad must be True or False"):
        adjit.zeros(4).requires_grad = value


def test_pickled_array_round_trips_and_launches():
    x = adjit.array(np.arange(4, dtype=np.float32), requires_grad=True)
    x.grad.numpy()[:] = 7
    x2 = pickle.loads(pickle.dumps(x))
    assert x2.dtype is adjit.float32 and x2.requires_grad and x2.shape == (4,)
    np.testing.assert_array_equal(x2.grad.numpy(), [7, 7, 7, 7])
    assert not np.shares_memory(x2.numpy(), x.numpy())
    y = adjit.zeros(4)
    adjit.launch(scale, dim=4, inputs=[x2, y])
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])


def test_pickled_vector_array_keeps_its_dtype():
    a = adjit.zeros((2, 2), dtype=adjit.mat22d)
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype is adjit.mat22d and b.shape == (2, 2) and not b.requires_grad and b.grad is None


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "int64", "bool_", "vec3", "vec2i", "vec4d",
                                  "mat33", "mat44d", "quat", "quatd"])
def test_pickled_types_are_the_interned_ones(name):
    t = getattr(adjit, name)
    assert pickle.loads(pickle.dumps(t)) is t


def test_pickled_unnamed_types_are_the_interned_ones():
    for t in (adjit.vector(2, adjit.int64), adjit.matrix((2, 3), adjit.float64),
              adjit.types.quaternion(adjit.float64)):
        assert pickle.loads(pickle.dumps(t)) is t
    annotation = adjit.array(dtype=adjit.vec3, ndim=2)
    assert pickle.loads(pickle.dumps(annotation)) == annotation


# === tape ============================================================================================

def test_nested_tapes_both_record():
    x, y = _xy(grad=True)
    with adjit.Tape() as outer:
        with adjit.Tape() as inner:
            adjit.launch(scale, dim=4, inputs=[x, y])
    assert len(outer._steps) == 1 and len(inner._steps) == 1
    outer.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2, 2])
    outer.zero()
    inner.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2, 2])


def test_nested_tapes_outer_sees_launches_before_and_after_the_inner():
    x = adjit.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y, z, w = (adjit.zeros(4, requires_grad=True) for _ in range(3))
    with adjit.Tape() as outer:
        adjit.launch(scale, dim=4, inputs=[x, y])
        with adjit.Tape() as inner:
            adjit.launch(scale, dim=4, inputs=[y, z])
        adjit.launch(scale, dim=4, inputs=[z, w])
    assert (len(outer._steps), len(inner._steps)) == (3, 1)
    outer.backward(grads={w: np.ones(4, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [8, 8, 8, 8])


def test_nested_tapes_record_copies_on_both():
    x = adjit.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = adjit.zeros(4, requires_grad=True)
    with adjit.Tape() as outer:
        with adjit.Tape() as inner:
            adjit.copy(y, x)
    assert len(outer._steps) == 1 and len(inner._steps) == 1
    outer.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1, 1, 1])


def test_the_same_tape_entered_twice_records_once():
    x, y = _xy(grad=True)
    tape = adjit.Tape()
    with tape:
        with tape:
            adjit.launch(scale, dim=4, inputs=[x, y])
    assert len(tape._steps) == 1
    tape.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2, 2])


def test_tape_exit_without_enter():
    with pytest.raises(RuntimeError, match="without a matching __enter__"):
        adjit.Tape().__exit__(None, None, None)


def _threads(n, target):
    errors = []

    def run(k):
        try:
            target(k)
        except BaseException as e:  # reported by the test
            errors.append(e)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_threads_recording_onto_one_tape():
    n_threads, rounds = 8, 25
    xs = [adjit.array(np.full(64, k, np.float32), requires_grad=True) for k in range(n_threads)]
    ys = [[adjit.zeros(64, requires_grad=True) for _ in range(rounds)] for _ in range(n_threads)]
    tape = adjit.Tape()

    def work(k):
        with tape:
            for r in range(rounds):
                adjit.launch(scale, dim=64, inputs=[xs[k], ys[k][r]])

    _threads(n_threads, work)
    assert len(tape._steps) == n_threads * rounds
    tape.backward(grads={y: np.ones(64, np.float32) for row in ys for y in row})
    for k in range(n_threads):
        np.testing.assert_array_equal(xs[k].grad.numpy(), np.full(64, 2.0 * rounds))
        np.testing.assert_array_equal(ys[k][0].numpy(), np.full(64, 2.0 * k))


def test_threads_with_their_own_tapes_get_their_own_gradients():
    n_threads = 8
    results = [None] * n_threads

    def work(k):
        x = adjit.array(np.full(16, k, np.float32), requires_grad=True)
        y = adjit.zeros(16, requires_grad=True)
        for _ in range(10):
            with adjit.Tape() as tape:
                adjit.launch(scale, dim=16, inputs=[x, y])
            tape.backward(grads={y: np.full(16, k, np.float32)})
        results[k] = x.grad.numpy().copy()

    _threads(n_threads, work)
    for k in range(n_threads):
        np.testing.assert_array_equal(results[k], np.full(16, 20.0 * k))


def test_gradient_stops_warning_once_per_tape(caplog):
    x = adjit.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y, z = adjit.zeros(4), adjit.zeros(4)
    with caplog.at_level(logging.WARNING, logger="adjit.tape"):
        with adjit.Tape():
            adjit.launch(scale, dim=4, inputs=[x, y])
            adjit.launch(scale, dim=4, inputs=[x, z])
    records = [r for r in caplog.records if r.name == "adjit.tape"]
    assert len(records) == 1
    message = records[0].getMessage()
    assert "'scale'" in message and "'x'" in message and "'y'" in message
    assert "gradient stops" in message and "requires_grad=True" in message


def test_gradient_stops_warning_again_on_a_new_tape(caplog):
    x = adjit.array(np.arange(4, dtype=np.float32), requires_grad=True)
    with caplog.at_level(logging.WARNING, logger="adjit.tape"):
        for _ in range(2):
            with adjit.Tape():
                adjit.launch(scale, dim=4, inputs=[x, adjit.zeros(4)])
    assert len([r for r in caplog.records if r.name == "adjit.tape"]) == 2


@pytest.mark.parametrize("x_grad, y_grad", [(True, True), (False, False), (False, True)])
def test_no_gradient_stops_warning_otherwise(caplog, x_grad, y_grad):
    x = adjit.array(np.arange(4, dtype=np.float32), requires_grad=x_grad)
    y = adjit.zeros(4, requires_grad=y_grad)
    with caplog.at_level(logging.WARNING, logger="adjit.tape"):
        with adjit.Tape():
            adjit.launch(scale, dim=4, inputs=[x, y])
    assert not [r for r in caplog.records if r.name == "adjit.tape"]


# === config ==========================================================================================

@pytest.fixture
def config():
    """The fixed-field settings module, restored afterwards (and without
    changing which object ``adjit.config`` names)."""
    before = adjit.__dict__.get("config")
    module = importlib.import_module("adjit.config")
    saved = {n: getattr(module, n) for n in module.FIELDS}
    yield module
    for name, value in saved.items():
        setattr(module, name, value)
    adjit.config = before


def test_config_debug_mode_is_accepted_and_means_verify_fp(config):
    from adjit import loader

    @adjit.kernel
    def k(x: adjit.array(dtype=float)):
        x[adjit.tid()] = 1.0

    assert loader.checks(k) == (True, False)
    config.mode = "debug"
    assert config.mode == "debug" and loader.checks(k) == (True, True)


def test_config_unknown_mode(config):
    with pytest.raises(ValueError, match="mode must be one of 'release', 'debug', got 'fast'"):
        config.mode = "fast"


def test_config_release_mode(config):
    config.mode = "release"
    assert config.mode == "release"


@pytest.mark.parametrize("name", ["boundscheck", "verifyfp", "cache_directory", "FIELDS", "reset"])
def test_config_unknown_setting(config, name):
    with pytest.raises(AttributeError) as info:
        setattr(config, name, False)
    message = str(info.value)
    assert f"no setting '{name}'" in message and "cache_dir, cache, bounds_check, verify_fp, mode" in message


def test_config_reading_an_unknown_setting(config):
    with pytest.raises(AttributeError, match="no setting 'debug'.*cache_dir, cache, bounds_check, verify_fp, mode"):
        config.debug


@pytest.mark.parametrize("name, value, error, words", [
    ("cache", "no", TypeError, "cache must be True or False"),
    ("cache", 0, TypeError, "cache must be True or False"),
    ("cache_dir", 3, TypeError, "cache_dir must be a folder path"),
    ("bounds_check", 1, TypeError, "bounds_check must be True or False"),
    ("verify_fp", "on", TypeError, "verify_fp must be True or False"),
])
def test_config_wrong_value_type(config, name, value, error, words):
    with pytest.raises(error, match=words):
        setattr(config, name, value)


def test_config_cache_dir_takes_a_path(config, tmp_path):
    config.cache_dir = tmp_path
    assert config.cache_dir == str(tmp_path)
    config.cache_dir = None
    assert config.cache_dir is None


def test_config_fields_cannot_be_deleted(config):
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del config.cache


def test_adjit_config_is_the_fixed_field_config(config):
    assert _ADJIT_CONFIG is config
    with pytest.raises(AttributeError, match="no setting 'verifyfp'"):
        _ADJIT_CONFIG.verifyfp = False


# --- kernel decorator options ---------------------------------------------------------------

def test_kernel_decorator_refuses_unknown_keywords():
    with pytest.raises(TypeError, match="enable_backwards"):
        @adjit.kernel(enable_backwards=False)
        def k(x: adjit.array(dtype=float)):
            x[adjit.tid()] = 1.0


def test_enable_backward_false_is_honoured():
    @adjit.kernel(enable_backward=False, module="unique")
    def double(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = adjit.tid()
        y[i] = 2.0 * x[i]

    x = adjit.array(np.ones(3, np.float32), requires_grad=True)
    y = adjit.zeros(3, requires_grad=True)
    with adjit.Tape() as tape:
        adjit.launch(double, dim=3, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), 2.0)  # the forward runs
    with pytest.raises(adjit.GradientError, match="'double'.*enable_backward=False"):
        tape.backward(grads={y: 1.0})
    with pytest.raises(TypeError, match="enable_backward"):
        adjit.kernel(enable_backward="no")


def test_mixed_precision_vector_constructor_is_refused(tmp_path):
    path = tmp_path / "mixed_precision.py"
    path.write_text("import adjit as wp\n\n@wp.kernel\ndef k(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):\n"
                    "    y[0] = wp.vec3(x[0], wp.float64(1.0), 2.0)\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(adjit.KernelTypeError, match=r"component 1 is float64, not float32") as info:
        adjit.launch(namespace["k"], dim=1, inputs=[adjit.zeros(1), adjit.zeros(1, dtype=adjit.vec3)])
    assert f"{path}:5" in str(info.value)


# --- Warp's config names -------------------------------------------------------------------------------

def test_config_warp_aliases_are_the_same_settings(config, tmp_path):
    config.kernel_cache_dir = tmp_path
    assert config.cache_dir == str(tmp_path) == config.kernel_cache_dir
    config.cache_kernels = False
    assert config.cache is False and config.cache_kernels is False
    with pytest.raises(TypeError, match="cache must be True or False"):
        config.cache_kernels = "no"


def test_config_enable_backward_is_new_modules_default(config):
    from adjit.language import Module
    config.enable_backward = False
    assert Module("adjit_test_config_off").options["enable_backward"] is False
    config.enable_backward = True
    assert Module("adjit_test_config_on").options["enable_backward"] is True
    config.max_unroll = 4
    assert Module("adjit_test_config_unroll").options["max_unroll"] == 4
    with pytest.raises(TypeError, match="max_unroll must be an int >= 0"):
        config.max_unroll = -1


def test_config_enable_backward_false_gives_kernels_no_adjoint(config):
    config.enable_backward = False

    @adjit.kernel(module="unique")
    def square(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = adjit.tid()
        y[i] = x[i] * x[i]

    config.enable_backward = True  # the module took the value when it was made
    x = adjit.array(np.ones(2, np.float32), requires_grad=True)
    y = adjit.zeros(2, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(square, 2, inputs=[x, y])
    with pytest.raises(adjit.GradientError, match="enable_backward=False"):
        tape.backward(grads={y: adjit.array(np.ones(2, np.float32))})


def test_config_log_level_is_the_adjit_loggers(config):
    import logging
    assert config.log_level == logging.getLogger("adjit").level
    config.log_level = adjit.LOG_DEBUG
    assert logging.getLogger("adjit").level == logging.DEBUG == config.log_level
    config.log_level = 0
    assert logging.getLogger("adjit").level == logging.NOTSET
    with pytest.raises(TypeError, match="log_level must be an int >= 0"):
        config.log_level = "debug"


def test_config_print_launches(config, capsys):
    @adjit.kernel
    def ones(a: adjit.array(dtype=float)):
        a[adjit.tid()] = 1.0

    a = adjit.zeros(3)
    adjit.launch(ones, 3, inputs=[a])
    assert capsys.readouterr().out == ""
    config.print_launches = True
    adjit.launch(ones, 3, inputs=[a])
    assert capsys.readouterr().out == ("kernel: ones dim: 3 inputs: [Array(shape=(3,), dtype=float32)] outputs: [] "
                                       "device: cpu\n")


@pytest.mark.parametrize("name, words", [("lineinfo", "a CUDA build setting"),
                                         ("cpu_compiler_flags", "Warp's C\\+\\+ compiler"),
                                         ("track_memory", "ScopedMemoryTracker")])
def test_config_warp_settings_without_a_counterpart_say_why(config, name, words):
    with pytest.raises(AttributeError, match=f"no setting '{name}' \\({name} is Warp's: .*{words}"):
        setattr(config, name, True)


def test_config_enable_vector_component_overwrites_is_stored_and_overwrites_stay_exact(config):
    config.enable_vector_component_overwrites = False  # Warp's default: adjit stays exact anyway
    assert config.enable_vector_component_overwrites is False

    @adjit.kernel
    def overwrite(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = adjit.tid()
        v = adjit.vec3(x[i], 0.0, 0.0)
        v[0] = v[0] * v[0]
        v[0] = v[0] * x[i]  # x^3
        y[i] = v[0]

    x = adjit.array(np.array([2.0, -1.0], np.float32), requires_grad=True)
    y = adjit.zeros(2, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(overwrite, 2, inputs=[x, y])
    tape.backward(grads={y: adjit.array(np.ones(2, np.float32))})
    np.testing.assert_allclose(y.numpy(), [8.0, -1.0])
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 3.0])  # 3 x^2
    with pytest.raises(TypeError, match="must be True or False"):
        config.enable_vector_component_overwrites = 1


def test_config_verify_autograd_array_access_keeps_the_check_on(config):
    config.verify_autograd_array_access = False  # adjit checks whatever it says

    @adjit.kernel
    def double(x: adjit.array(dtype=float), y: adjit.array(dtype=float)):
        i = adjit.tid()
        y[i] = x[i] * x[i]

    x = adjit.array(np.ones(2, np.float32), requires_grad=True)
    y = adjit.zeros(2, requires_grad=True)
    tape = adjit.Tape()
    with tape:
        adjit.launch(double, 2, inputs=[x, y])
    x.assign(np.full(2, 3.0, np.float32))  # overwrites what the launch read, unrecorded
    with pytest.raises(adjit.GradientError):
        tape.backward(grads={y: adjit.array(np.ones(2, np.float32))})


# --- vague errors made clear (issue 25, item 8) -------------------------------------------------

@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_constructors_name_a_numpy_template(name):
    args = (np.zeros(3),) + ((1.0,) if name == "full_like" else ())
    with pytest.raises(TypeError, match=rf"{name}: the template must be an adjit array, got numpy.ndarray"):
        getattr(adjit, name)(*args)


def test_dump_dir_naming_a_file_is_a_clear_error(tmp_path, monkeypatch):
    afile = tmp_path / "not_a_folder"
    afile.write_text("")

    @adjit.kernel
    def dumped_kernel(x: adjit.array(dtype=float)):
        i = adjit.tid()
        x[i] = x[i] + 1.0

    monkeypatch.setenv("ADJIT_DUMP_DIR", str(afile))
    monkeypatch.setenv("ADJIT_CACHE", "0")
    with pytest.raises(adjit.CompileError, match="ADJIT_DUMP_DIR=.* is not a directory"):
        adjit.launch(dumped_kernel, dim=2, inputs=[adjit.zeros(2)])


@pytest.mark.parametrize("value, warned", [("abc", "not a positive integer"), ("0", "not a positive integer"),
                                           ("-3", "not a positive integer"), ("2.5", "not a positive integer"),
                                           ("5000", "at most 1024"), ("3", None)])
def test_unusable_num_threads_is_warned_about(value, warned):
    code = "import warnings; warnings.simplefilter('error'); import adjit"
    result = subprocess.run([sys.executable, "-c", code], env={**os.environ, "ADJIT_NUM_THREADS": value},
                            capture_output=True, text=True)
    if warned is None:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode != 0 and f"ADJIT_NUM_THREADS='{value}'" in result.stderr
        assert warned in result.stderr


@adjit.kernel
def _takes_narrow_floats(s: float, v: adjit.vec3, h: adjit.float16, y: adjit.array(dtype=float)):
    y[0] = s + v[0] + float(h)


@pytest.mark.parametrize("args, name, range_of", [
    ((1e39, adjit.vec3(), 1.0), "s", "float32"),
    ((np.float64(3.5e38), adjit.vec3(), 1.0), "s", "float32"),
    ((1.0, np.array([0.0, 1e39, 0.0]), 1.0), "v", "float32"),
    ((1.0, adjit.vec3(), 1e5), "h", "float16"),
])
def test_a_float_argument_out_of_its_range_is_named(args, name, range_of):
    y = adjit.zeros(1)
    with pytest.raises(adjit.LaunchError, match=f"argument '{name}' is .* outside the range of {range_of}") as info:
        adjit.launch(_takes_narrow_floats, dim=1, inputs=[*args, y])
    assert info.value.filename == __file__


def test_infinity_given_as_such_is_an_argument():
    y = adjit.zeros(1)
    adjit.launch(_takes_narrow_floats, dim=1, inputs=[float("inf"), adjit.vec3(), np.float16(1.0), y])
    assert y.numpy()[0] == np.inf


# --- more bad inputs (issue 25, item 9) ------------------------------------------------------------------

@pytest.mark.parametrize("dim, words", [
    (np.uint64(2**63), ["2**31 - 1", "int32"]),
    (1 + 0j, ["integers", "complex"]),
    (np.array([[2]]), ["integers", "ndarray"]),
    (np.array(4), ["integers", "ndarray"]),
    ((np.int64(-1),), ["non-negative"]),
    (np.bool_(True), ["int or a tuple"]),
    (Fraction(4, 1), ["integers", "Fraction"]),
    (Decimal(4), ["integers", "Decimal"]),
    ((4, None), ["integers", "NoneType"]),
])
def test_launch_more_bad_dims(dim, words):
    x, y = _xy()
    with pytest.raises(adjit.LaunchError) as info:
        adjit.launch(scale, dim=dim, inputs=[x, y])
    message = str(info.value)
    assert "launch dim" in message and all(w in message for w in words), message
    assert not y.numpy().any()


@pytest.mark.parametrize("dim", [0, (0, 5), (3, 0)])
def test_launch_of_no_threads_runs_nothing(dim):
    x, y = _xy()
    y.fill_(7.0)
    adjit.launch(scale, dim=dim, inputs=[x, y])
    np.testing.assert_array_equal(y.numpy(), 7.0)


def test_launch_of_more_threads_than_the_arrays_hold_names_the_line():
    x, y = _xy()
    with pytest.raises(adjit.OutOfBoundsError) as info:
        adjit.launch(scale, dim=6, inputs=[x, y])
    e = info.value
    assert (e.filename, e.lineno) == (__file__, scale.source.first_line + 3)
    assert (e.array, e.index, e.thread, e.shape) == ("'x'", (4,), (4,), (4,))
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6])  # the threads in range ran


@adjit.kernel
def _takes_every_float(s: float, h: adjit.float16, m: adjit.mat22, q: adjit.quat, n: int,
                       y: adjit.array(dtype=float)):
    y[0] = s
    y[1] = float(h)
    y[2] = m[0, 0]
    y[3] = q[3]
    y[4] = float(n)


_GOOD = {"s": 1.0, "h": 1.0, "m": adjit.mat22(), "q": adjit.quat(), "n": 1}


@pytest.mark.parametrize("name, value, words", [
    ("s", -1e39, "outside the range of float32"),
    ("s", 3.4028236e38, "outside the range of float32"),  # rounds to infinity, not to the largest float32
    ("s", 10**40, "outside the range of float32"),
    ("h", -7e4, "outside the range of float16"),
    ("h", 65520.0, "outside the range of float16"),  # the first value rounding to infinity
    ("h", np.float32(1e5), "outside the range of float16"),
    ("m", [[1e39, 0.0], [0.0, 0.0]], "outside the range of float32"),
    ("q", (0.0, 0.0, 0.0, -1e40), "outside the range of float32"),
    ("q", adjit.quatd(0.0, 0.0, 0.0, 1e300), "outside the range of float32"),
    ("n", 2**31, "must be int32"),
    ("n", -2**31 - 1, "must be int32"),
])
def test_more_arguments_out_of_their_range_are_named(name, value, words):
    y = adjit.zeros(5)
    with pytest.raises(adjit.LaunchError) as info:
        adjit.launch(_takes_every_float, dim=1, inputs=[*{**_GOOD, name: value}.values(), y])
    message = str(info.value)
    assert f"argument '{name}'" in message and words in message, message
    assert info.value.filename == __file__ and info.value.lineno == _takes_every_float.source.first_line + 1
    assert not y.numpy().any()


@pytest.mark.parametrize("name, value, expected", [
    ("s", 3.4028235e38, np.float32(3.4028235e38)),  # the largest float32
    ("h", 65519.0, 65504.0),  # rounds down to float16's largest
    ("s", float("nan"), np.nan),
    ("n", -2**31, -2.0**31),
])
def test_arguments_at_the_edge_of_their_range_pass(name, value, expected):
    y = adjit.zeros(5)
    adjit.launch(_takes_every_float, dim=1, inputs=[*{**_GOOD, name: value}.values(), y])
    position = list(_GOOD).index(name)
    np.testing.assert_array_equal(y.numpy()[position], np.float32(expected))


@pytest.mark.parametrize("value, warned", [("", "not a positive integer"), ("1e3", "not a positive integer"),
                                           ("0x10", "not a positive integer"), ("\u0663", "not a positive integer"),
                                           ("1025", "at most 1024"), (" 4", None), ("+2", None), ("1024", None)])
def test_more_num_threads_values(value, warned):
    code = "import warnings; warnings.simplefilter('error'); import adjit"
    result = subprocess.run([sys.executable, "-c", code], env={**os.environ, "ADJIT_NUM_THREADS": value},
                            capture_output=True, text=True, timeout=120)
    if warned is None:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode != 0 and f"ADJIT_NUM_THREADS={value!r}" in result.stderr, result.stderr
        assert warned in result.stderr
