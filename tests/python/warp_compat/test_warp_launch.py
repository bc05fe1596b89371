"""``adjit.launch`` with Warp's signature: ``kernel=``, ``adj_inputs`` /
``adj_outputs`` with ``adjoint=True`` (gradients against the hand-derived
derivative and against the tape), ``record_tape``, ``record_cmd`` (a
``Launch`` to run later), and the CPU's checks of ``stream``,
``max_blocks`` and ``block_dim``."""
import numpy as np
import pytest

import adjit as wp


@wp.kernel
def scaled_sin(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * s


@wp.kernel
def spring(p: wp.array(dtype=wp.vec3d), rest: wp.float64, e: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = wp.length(p[i]) - rest
    e[i] = d * d


X = np.array([0.1, 0.5, 1.0, -2.0])


def test_keywords_as_warp_spells_them():
    x, y = wp.array(X), wp.zeros(4, dtype=wp.float64)
    wp.launch(kernel=scaled_sin, dim=4, inputs=[x, 2.0], outputs=[y], device="cpu", max_blocks=0, block_dim=128)
    np.testing.assert_allclose(y.numpy(), 2 * np.sin(X), rtol=1e-15)


def test_adjoint_launch_with_explicit_adjoint_arrays():
    x, y = wp.array(X), wp.zeros(4, dtype=wp.float64)
    adj_x = wp.array(np.full(4, 0.5))  # accumulated into, as Warp does
    adj_y = wp.array(np.array([1.0, 2.0, 3.0, 4.0]))
    wp.launch(scaled_sin, 4, inputs=[x, 3.0], outputs=[y], adj_inputs=[adj_x, 0.0], adj_outputs=[adj_y],
              adjoint=True)
    np.testing.assert_allclose(adj_x.numpy(), 0.5 + 3 * np.cos(X) * [1, 2, 3, 4], rtol=1e-15)
    np.testing.assert_array_equal(x.numpy(), X)


def test_adjoint_launch_none_entries_use_the_arrays_grad():
    # Warp's idiom (its test_grad): adj_inputs=[None, ...] means each array's own .grad; before, adjit
    # gave those arguments a scratch gradient, so x.grad silently stayed zero.
    x = wp.array(X, requires_grad=True)
    y = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    wp.launch(scaled_sin, 4, inputs=[x, 3.0], outputs=[y])
    y.grad = wp.array(np.array([1.0, 2.0, 3.0, 4.0]))
    wp.launch(scaled_sin, 4, inputs=[x, 3.0, y], adjoint=True, adj_inputs=[None, None, None])
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.cos(X) * [1, 2, 3, 4], rtol=1e-15)
    # mixed: an explicit adjoint array for x, .grad for y (seeded again: the adjoint of the store into y
    # consumed it, since y's old values no longer reach anything)
    y.grad.assign(np.array([1.0, 2.0, 3.0, 4.0]))
    adj_x = wp.zeros(4, dtype=wp.float64)
    wp.launch(scaled_sin, 4, inputs=[x, 3.0], outputs=[y], adj_inputs=[adj_x, None], adj_outputs=[None],
              adjoint=True)
    np.testing.assert_allclose(adj_x.numpy(), 3 * np.cos(X) * [1, 2, 3, 4], rtol=1e-15)


def test_adjoint_launch_without_adjoint_arrays_uses_grad_and_matches_the_tape():
    rng = np.random.default_rng(2)
    p0 = rng.normal(size=(5, 3))
    seed = rng.normal(size=5)
    # by hand: the adjoint launch with the arrays' .grad
    p, e = wp.array(p0, dtype=wp.vec3d, requires_grad=True), wp.zeros(5, dtype=wp.float64, requires_grad=True)
    wp.launch(spring, 5, inputs=[p, 0.7], outputs=[e])
    e.grad.assign(seed)
    wp.launch(spring, 5, inputs=[p, 0.7], outputs=[e], adjoint=True)
    # the tape
    q, f = wp.array(p0, dtype=wp.vec3d, requires_grad=True), wp.zeros(5, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(spring, 5, inputs=[q, 0.7], outputs=[f])
    tape.backward(grads={f: wp.array(seed)})
    np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    r = np.linalg.norm(p0, axis=1)
    np.testing.assert_allclose(p.grad.numpy(), (seed * 2 * (r - 0.7) / r)[:, None] * p0, rtol=1e-13)


def test_adjoint_launch_of_an_array_without_gradient_uses_scratch():
    x, y = wp.array(X), wp.zeros(4, dtype=wp.float64, requires_grad=True)
    y.grad.fill_(1.0)
    wp.launch(scaled_sin, 4, inputs=[x, 3.0], outputs=[y], adjoint=True)  # x has no .grad: nothing to keep
    assert x.grad is None


def test_record_tape_false_keeps_the_launch_off_the_tape():
    x = wp.array(X, requires_grad=True)
    y, z = wp.zeros(4, dtype=wp.float64, requires_grad=True), wp.zeros(4, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scaled_sin, 4, inputs=[x, 2.0], outputs=[y])
        wp.launch(scaled_sin, 4, inputs=[x, 5.0], outputs=[z], record_tape=False)
    np.testing.assert_allclose(z.numpy(), 5 * np.sin(X), rtol=1e-15)  # it ran
    tape.backward(grads={y: wp.array(np.ones(4)), z: wp.array(np.ones(4))})
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(X), rtol=1e-15)  # only the recorded launch


def test_record_cmd_returns_a_launch_to_run_later():
    x, y = wp.array(X), wp.zeros(4, dtype=wp.float64)
    cmd = wp.launch(scaled_sin, 4, inputs=[x, 2.0], outputs=[y], record_cmd=True)
    assert isinstance(cmd, wp.Launch)
    np.testing.assert_array_equal(y.numpy(), 0.0)  # not launched yet
    cmd.launch()
    np.testing.assert_allclose(y.numpy(), 2 * np.sin(X), rtol=1e-15)
    cmd.set_param_by_name("s", 10.0)
    cmd.set_dim(2)
    cmd.launch()
    np.testing.assert_allclose(y.numpy(), np.concatenate([10 * np.sin(X[:2]), 2 * np.sin(X[2:])]), rtol=1e-15)
    other = wp.zeros(4, dtype=wp.float64)
    cmd.set_param_at_index(2, other)
    cmd.launch()
    np.testing.assert_allclose(other.numpy()[:2], 10 * np.sin(X[:2]), rtol=1e-15)
    with pytest.raises(wp.LaunchError, match="no parameter 'q'"):
        cmd.set_param_by_name("q", 1.0)
    with pytest.raises(wp.LaunchError, match="no parameter at index 3"):
        cmd.set_param_at_index(3, 1.0)


@pytest.mark.parametrize("options, words", [
    (dict(stream=object()), "stream must be an adjit.Stream"),
    (dict(block_dim=0), "block_dim must be an int >= 1"),
    (dict(max_blocks=1.5), "max_blocks must be an int"),
    (dict(adjoint=True, adj_inputs=[wp.zeros(3, dtype=wp.float64), 0.0], adj_outputs=[wp.zeros(4, dtype=wp.float64)]),
     "the adjoint of argument 'x' of kernel 'scaled_sin' must be an array of its shape and dtype"),
    (dict(adjoint=True, adj_inputs=[None], adj_outputs=[]), "takes one adjoint per argument (3)"),
])
def test_bad_launch_options_are_errors(options, words):
    x, y = wp.array(X), wp.zeros(4, dtype=wp.float64)
    with pytest.raises(wp.LaunchError) as info:
        wp.launch(scaled_sin, 4, inputs=[x, 2.0], outputs=[y], **options)
    assert words in str(info.value)
