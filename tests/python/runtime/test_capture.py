"""Graph capture: launches, copies and fills recorded once and replayed,
bitwise as running them eagerly (runtime/capture.py)."""
import numpy as np
import pytest

import adjit as wp


@wp.kernel
def step(x: wp.array(dtype=float), v: wp.array(dtype=float), dt: float):
    i = wp.tid()
    v[i] = v[i] - x[i] * dt
    x[i] = x[i] + v[i] * dt


@wp.kernel
def add_into(total: wp.array(dtype=float), x: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i])


@wp.kernel
def count_down(counter: wp.array(dtype=int), steps: wp.array(dtype=int)):
    counter[0] = counter[0] - 1
    steps[0] = steps[0] + 1


def _frames(x, v, scratch):
    for _ in range(3):
        wp.launch(step, dim=x.shape[0], inputs=[x, v, 0.1])
    wp.copy(scratch, x)
    v.fill_(0.5)
    scratch.assign(scratch.numpy() * 0 + 2.0)


def test_a_replay_is_bitwise_the_eager_run_and_nothing_runs_while_capturing():
    start = np.linspace(0, 1, 16).astype(np.float32)
    x, v, scratch = wp.array(start), wp.zeros(16), wp.zeros(16)
    ex, ev, escratch = wp.clone(x), wp.clone(v), wp.clone(scratch)
    with wp.ScopedCapture() as capture:
        _frames(x, v, scratch)
    np.testing.assert_array_equal(x.numpy(), start)  # recorded, not run
    np.testing.assert_array_equal(v.numpy(), 0)
    assert len(capture.graph) == 6 and not capture.active
    for _ in range(5):
        wp.capture_launch(capture.graph)
        _frames(ex, ev, escratch)
        np.testing.assert_array_equal(x.numpy(), ex.numpy())
        np.testing.assert_array_equal(v.numpy(), ev.numpy())
        np.testing.assert_array_equal(scratch.numpy(), escratch.numpy())


def test_arrays_made_in_a_capture_get_their_first_values_at_each_replay():
    x = wp.array(np.arange(4, dtype=np.float32))
    with wp.ScopedCapture() as capture:
        total = wp.zeros(1)
        wp.launch(add_into, dim=4, inputs=[total, x])
    for _ in range(3):
        wp.capture_launch(capture.graph)
        assert total.numpy()[0] == 6.0  # re-zeroed each time, as a CUDA graph's memset is


def test_replays_see_values_written_between_them():
    x, v = wp.array(np.ones(4, np.float32)), wp.zeros(4)
    with wp.ScopedCapture() as capture:
        wp.launch(step, dim=4, inputs=[x, v, 1.0])
    x.assign(np.full(4, 3.0))
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(v.numpy(), -3.0)
    np.testing.assert_array_equal(x.numpy(), 0.0)


def test_capture_while_and_capture_if_decide_at_each_replay():
    counter, steps = wp.array(np.array([3], np.int32)), wp.zeros(1, dtype=int)
    with wp.ScopedCapture() as capture:
        wp.capture_while(counter, lambda: wp.launch(count_down, dim=1, inputs=[counter, steps]))
    assert steps.numpy()[0] == 0
    wp.capture_launch(capture.graph)
    assert steps.numpy()[0] == 3 and counter.numpy()[0] == 0
    counter.assign(np.array([5], np.int32))
    wp.capture_launch(capture.graph)
    assert steps.numpy()[0] == 8

    flag, total = wp.array(np.array([0], np.int32)), wp.zeros(1)
    x = wp.array(np.ones(3, np.float32))
    with wp.ScopedCapture() as capture:
        wp.capture_if(flag, on_true=lambda: wp.launch(add_into, dim=3, inputs=[total, x]),
                      on_false=lambda: total.fill_(-1.0))
    wp.capture_launch(capture.graph)
    assert total.numpy()[0] == -1.0
    flag.assign(np.array([1], np.int32))
    wp.capture_launch(capture.graph)
    assert total.numpy()[0] == 2.0
    # outside a capture they decide at once
    wp.capture_if(flag, on_true=lambda: total.fill_(7.0))
    assert total.numpy()[0] == 7.0
    assert wp.is_conditional_graph_supported()


def test_a_graph_launched_in_a_capture_is_part_of_it():
    x, v = wp.array(np.ones(4, np.float32)), wp.zeros(4)
    with wp.ScopedCapture() as inner:
        wp.launch(step, dim=4, inputs=[x, v, 0.5])
    with wp.ScopedCapture() as outer:
        wp.capture_launch(inner.graph)
        wp.capture_launch(inner.graph)
    ex, ev = wp.array(np.ones(4, np.float32)), wp.zeros(4)
    wp.capture_launch(outer.graph)
    for _ in range(2):
        wp.launch(step, dim=4, inputs=[ex, ev, 0.5])
    np.testing.assert_array_equal(x.numpy(), ex.numpy())


def test_what_cannot_be_captured_is_a_clear_error():
    x, v = wp.array(np.ones(4, np.float32), requires_grad=True), wp.zeros(4, requires_grad=True)
    with pytest.raises(wp.CaptureError, match="recorded on a Tape cannot be captured"):
        with wp.ScopedCapture():
            with wp.Tape():
                v.fill_(1.0)  # (an array operation's adjoint is not captured yet; launches' are)
    with pytest.raises(wp.CaptureError, match="no capture is open"):
        wp.capture_end()
    wp.capture_begin()
    try:
        with pytest.raises(wp.CaptureError, match="already open"):
            wp.capture_begin()
    finally:
        wp.capture_end()
    with pytest.raises(TypeError, match="takes an adjit.Graph"):
        wp.capture_launch("not a graph")
    # a failed capture keeps no graph and leaves nothing open
    scoped = wp.ScopedCapture()
    with pytest.raises(ZeroDivisionError):
        with scoped:
            1 / 0
    assert scoped.graph is None and not scoped.active
    wp.launch(step, dim=4, inputs=[x, v, 0.5])  # runs again
    assert v.numpy()[0] == -0.5


def test_dot_print(tmp_path):
    x, v = wp.array(np.ones(4, np.float32)), wp.zeros(4)
    with wp.ScopedCapture() as capture:
        wp.launch(step, dim=4, inputs=[x, v, 0.5])
        v.zero_()
    path = tmp_path / "graph.dot"
    wp.capture_debug_dot_print(capture.graph, str(path), verbose=True)
    text = path.read_text()
    assert text.startswith("digraph") and "step (forward, dim=4)" in text and "op0 -> op1" in text


@wp.kernel
def predict(w: wp.array(dtype=float), xs: wp.array(dtype=float), ys: wp.array(dtype=float),
            loss: wp.array(dtype=float)):
    i = wp.tid()
    r = w[0] * xs[i] + w[1] - ys[i]
    wp.atomic_add(loss, 0, r * r)


@wp.kernel
def sgd(w: wp.array(dtype=float), g: wp.array(dtype=float), rate: float):
    i = wp.tid()
    w[i] = w[i] - rate * g[i]


def _train_step(w, xs, ys, loss, tape):
    with tape:
        wp.launch(predict, dim=xs.shape[0], inputs=[w, xs, ys, loss])
    tape.backward(loss)
    wp.launch(sgd, dim=2, inputs=[w, w.grad, 0.01])
    tape.zero()
    loss.zero_()


def test_a_training_step_with_its_tape_is_captured_and_replayed():
    """Warp's training-loop pattern: the forward launches, the tape's
    backward pass, the update and tape.zero() captured once, replayed per
    iteration: bitwise the eager loop."""
    rng = np.random.default_rng(0)
    xs_np = rng.standard_normal(64).astype(np.float32)
    ys_np = (3.0 * xs_np - 1.0 + 0.1 * rng.standard_normal(64)).astype(np.float32)

    def problem():
        return (wp.zeros(2, requires_grad=True), wp.array(xs_np), wp.array(ys_np), wp.zeros(1, requires_grad=True))

    w, xs, ys, loss = problem()
    with wp.ScopedCapture() as capture:
        _train_step(w, xs, ys, loss, wp.Tape())
    np.testing.assert_array_equal(w.numpy(), 0)  # nothing ran
    ew, exs, eys, eloss = problem()
    for _ in range(20):
        wp.capture_launch(capture.graph)
        _train_step(ew, exs, eys, eloss, wp.Tape())
        np.testing.assert_array_equal(w.numpy(), ew.numpy())
        np.testing.assert_array_equal(w.grad.numpy(), ew.grad.numpy())
    assert abs(w.numpy()[0] - 3.0) < abs(0.0 - 3.0)  # (it learns)
