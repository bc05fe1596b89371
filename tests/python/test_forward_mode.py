"""Forward mode (adjit-tangent) run end to end on the CPU, in float64.

Until ``adjit.jvp`` exists, ``_jvp`` below compiles a kernel's tangent
kernel through the real stages (adjit -> optimized -> tangent via the
registered ``adjit-differentiate-forward`` pipeline -> cpu -> llvm), loads it
and launches it with the tangent arguments appended. Each kernel's tangents
are checked against float64 central differences along the same direction,
and with the dot-product identity <u, J v> (forward) == <J^T u, v> (reverse,
through adjit's Tape) to 1e-12.
"""
import numpy as np
import pytest

import adjit as wp
from adjit import _adjit, _runtime, loader
from adjit import types as T
from adjit.compiler import driver, stages as S
from adjit.launch import _check_buffer, _launch_shape, _pack_argument

_TANGENT_STAGES = [
    S.Stage("adjit"), S.Stage("optimized", "adjit-optimize"),
    S.Stage("tangent", "adjit-differentiate-forward"),
    S.Stage("cpu", "adjit-lower-cpu{noalias=false}"),
    S.Stage("llvm", "adjit-cpu-to-llvm{ordered-atomics=false}")]
_ENTRIES = {}


def _tangent_entry(k):
    if k not in _ENTRIES:
        module = driver.build_module(k, driver.new_context())
        S.run_stages(module, _TANGENT_STAGES, k.mlir_name, dump=False)
        entry = _adjit.symbol_name(_adjit.symbol_name(k.mlir_name, "tangent"), "cpu_entry")
        _ENTRIES[k] = loader._load(k, _adjit.compile_to_object(module.operation, 2), entry)
    return _ENTRIES[k]


def _is_float(t):
    return T.scalar_of(t.dtype if isinstance(t, T.ArrayType) else t).is_float


def _jvp(k, dim, args, tangents):
    """Launches k's tangent kernel on ``args`` (adjit arrays and scalars) with
    ``tangents`` (one per float argument, in order: numpy arrays for arrays,
    values for scalars). Returns the tangent arrays after the launch, as numpy
    arrays, in argument order (output tangents start at zero)."""
    packed = [_pack_argument(k, n, t, a) for n, t, a in zip(k.arg_names, k.arg_types, args)]
    tangent_arrays = []
    active = [(n, t, a) for n, t, a in zip(k.arg_names, k.arg_types, args) if _is_float(t)]
    assert len(active) == len(tangents)
    for (n, t, a), tan in zip(active, tangents):
        if isinstance(t, T.ArrayType):
            array = wp.array(np.asarray(tan, dtype=a.numpy().dtype), dtype=a.dtype)
            tangent_arrays.append(array)
            packed.append(_check_buffer(k, n, array._buffer))
        else:
            packed.append(_pack_argument(k, n, t, tan))
    total, shape = _launch_shape(dim)
    failure = _runtime.launch_cpu(_tangent_entry(k), total, shape, packed, [],
                                  _runtime.ATOMIC_ORDERS["serial"])
    assert failure is None, failure
    return [a.numpy().copy() for a in tangent_arrays]


def _primal(k, dim, make_args):
    args = make_args()
    wp.launch(k, dim=dim, inputs=args)
    return args


# --- kernels ----------------------------------------------------------------

@wp.kernel
def arith_math(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = x[i]
    b = wp.sin(a * s) + wp.exp(-a) * wp.log(a + wp.float64(2.0)) - wp.sqrt(a * a + s)
    c = wp.pow(a, wp.float64(3.0)) / (wp.float64(1.0) + wp.tanh(b)) + wp.atan2(b, a)
    y[i] = wp.max(b, c) * wp.min(a, s) + wp.abs(b - c)


@wp.kernel
def vectors(v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.vec3d),
            n: wp.array(dtype=wp.float64)):
    i = wp.tid()
    w = m[i] * v[i]
    u = wp.cross(w, v[i]) + wp.normalize(w) * wp.length(v[i])
    u.x = u.y * u.z
    out[i] = u
    n[i] = wp.dot(u, w) + wp.determinant(m[i])


@wp.kernel
def control(x: wp.array(dtype=wp.float64), steps: int, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = x[i]
    acc = wp.float64(0.0)
    for j in range(steps):
        if acc > wp.float64(2.0):
            acc = wp.sqrt(acc) + a
        else:
            acc = acc + a * a + wp.float64(j) * wp.float64(0.1)
    k = int(0)
    while acc > wp.float64(1.0):
        acc = acc * wp.float64(0.6) + wp.float64(0.1) * a
        k += 1
        if k > 20:
            break
    y[i] = acc


@wp.kernel
def accumulate(x: wp.array(dtype=wp.float64), total: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(total, 0, wp.sin(x[i]) * x[i])


# --- cases: (kernel, dim, make_args, float argument positions, outputs) -----

rng = np.random.default_rng(7)
N = 32
X = rng.uniform(0.3, 1.4, N)
V = rng.uniform(-1.0, 1.0, (N, 3))
M = rng.uniform(-1.0, 1.0, (N, 3, 3)) + 2.0 * np.eye(3)

CASES = {
    "arith_math": (arith_math, N,
                   lambda x=X, s=0.7: [wp.array(x, dtype=wp.float64), s, wp.zeros(N, dtype=wp.float64)],
                   [0, 1], [2]),
    "vectors": (vectors, N,
                lambda v=V, m=M: [wp.array(v, dtype=wp.vec3d), wp.array(m, dtype=wp.mat33d),
                                  wp.zeros(N, dtype=wp.vec3d), wp.zeros(N, dtype=wp.float64)],
                [0, 1], [2, 3]),
    "control": (control, N,
                lambda x=X: [wp.array(x, dtype=wp.float64), 7, wp.zeros(N, dtype=wp.float64)],
                [0], [2]),
    "accumulate": (accumulate, N,
                   lambda x=X: [wp.array(x, dtype=wp.float64), wp.zeros(1, dtype=wp.float64)],
                   [0], [1]),
}


def _value(a):
    return a.numpy() if isinstance(a, wp.array) else np.asarray(a, dtype=np.float64)


def _perturbed(make_args, inputs, direction, h):
    """make_args with each input (by position) moved by h * its direction."""
    args = make_args()
    for pos, d in zip(inputs, direction):
        a = args[pos]
        if isinstance(a, wp.array):
            args[pos] = wp.array(a.numpy() + h * d, dtype=a.dtype)
        else:
            args[pos] = a + h * d
    return args


@pytest.mark.parametrize("name", CASES)
def test_tangent_matches_central_differences(name):
    k, dim, make_args, inputs, outputs = CASES[name]
    args = make_args()
    direction = [rng.normal(size=np.shape(_value(args[p]))) for p in inputs]
    float_args = [p for p, t in enumerate(k.arg_types) if _is_float(t)]
    tangents = [direction[inputs.index(p)] if p in inputs else np.zeros(np.shape(_value(args[p])))
                for p in float_args]
    jvp = _jvp(k, dim, args, tangents)
    h = 1e-6
    plus = _perturbed(make_args, inputs, direction, h)
    minus = _perturbed(make_args, inputs, direction, -h)
    wp.launch(k, dim=dim, inputs=plus)
    wp.launch(k, dim=dim, inputs=minus)
    for out in outputs:
        fd = (plus[out].numpy() - minus[out].numpy()) / (2 * h)
        tangent = jvp[[p for p in float_args if isinstance(k.arg_types[p], T.ArrayType)].index(out)]
        np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-7)
        assert np.abs(tangent).max() > 0


@pytest.mark.parametrize("name", CASES)
def test_forward_and_reverse_agree(name):
    """<u, J v> from the tangent kernel == <J^T u, v> from the adjoint."""
    k, dim, make_args, inputs, outputs = CASES[name]
    arrays_in = [p for p in inputs if isinstance(k.arg_types[p], T.ArrayType)]
    args = make_args()
    v = {p: rng.normal(size=args[p].numpy().shape) for p in arrays_in}
    float_args = [p for p, t in enumerate(k.arg_types) if _is_float(t)]
    tangents = [v.get(p, np.zeros(np.shape(_value(args[p])))) for p in float_args]
    jvp = _jvp(k, dim, args, tangents)
    array_floats = [p for p in float_args if isinstance(k.arg_types[p], T.ArrayType)]

    args = make_args()
    for p in arrays_in + outputs:
        args[p] = wp.array(args[p].numpy(), dtype=args[p].dtype, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k, dim=dim, inputs=args)
    u = {p: rng.normal(size=args[p].numpy().shape) for p in outputs}
    for p in outputs:
        args[p].grad = wp.array(u[p], dtype=args[p].dtype)
    tape.backward()
    forward = sum(float(np.sum(u[p] * jvp[array_floats.index(p)])) for p in outputs)
    reverse = sum(float(np.sum(args[p].grad.numpy() * v[p])) for p in arrays_in)
    assert forward == pytest.approx(reverse, rel=1e-12, abs=1e-12)
