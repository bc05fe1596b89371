"""The benchmark kernels, one source text for both adjit and Warp (bench.py, peers.py).

``bench.load_kernels(backend)`` executes this file once per backend with the
global ``wp`` already bound to ``adjit`` or ``warp``, so the very same lines
are compiled by both. Every kernel is its own Warp module
(``module="unique"``, accepted and ignored by adjit), so Warp's first launch
of a kernel compiles that kernel alone, as adjit's does.
"""
try:
    wp  # noqa: B018  (bound by bench.load_kernels)
except NameError:  # imported directly: adjit
    import adjit as wp


@wp.kernel(module="unique")
def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel(module="unique")
def saxpy_out(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    # out-of-place saxpy: its gradients mean the same in adjit and Warp, and it is the
    # one bench.py compiles cold with its adjoint (bench.py times the in-place saxpy's
    # backward too, and records adjit's error if it cannot differentiate it)
    i = wp.tid()
    z[i] = a * x[i] + y[i]


@wp.kernel(module="unique")
def length_cross(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = wp.length(wp.cross(a[i], b[i])) * a[i]


@wp.kernel(module="unique")
def springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), rot: wp.array(dtype=wp.mat33),
            x_out: wp.array(dtype=wp.vec3), v_out: wp.array(dtype=wp.vec3),
            dt: float, stiffness: float, n_iter: int):
    # n_iter steps of a particle on a unit-rest-length spring to an anchor,
    # seen through a per-particle rotation, with drag, a Coriolis-like term
    # and an inelastic ground plane at y = 0.
    i = wp.tid()
    p = x[i]
    vel = v[i]
    R = rot[i]
    anchor = wp.vec3(0.0, 1.0, 0.0)
    omega = wp.vec3(0.1, 0.2, 0.3)
    for k in range(n_iter):
        q = R * p
        d = q - anchor
        L = wp.length(d)
        f = wp.vec3(0.0, 0.0, 0.0)
        if L > 1.0e-6:
            f = wp.normalize(d) * (-stiffness * (L - 1.0))
        else:
            f = wp.vec3(0.0, -1.0, 0.0)
        f = f - vel * 0.1 + wp.cross(omega, vel)
        vel = vel + f * dt
        p = p + vel * dt
        h = wp.dot(p, wp.vec3(0.0, 1.0, 0.0))
        if h < 0.0:
            p = p - wp.vec3(0.0, h, 0.0)
            vel = vel * 0.5
    x_out[i] = p
    v_out[i] = vel


@wp.kernel(module="unique")
def trivial(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = 1.0


@wp.kernel(module="unique")
def few_args(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float), s: float):
    i = wp.tid()
    c[i] = a[i] * s + b[i]


@wp.kernel(module="unique")
def gather(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    # an index read from memory: its bounds check cannot be proved per launch
    i = wp.tid()
    y[i] = x[idx[i]] * 2.0


@wp.kernel(module="unique")
def scatter_add(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(y, idx[i], x[i])


@wp.kernel(module="unique")
def sum_squares(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    # every thread adds into one element
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


@wp.kernel(module="unique")
def edge_forces(x: wp.array(dtype=wp.vec3), edges: wp.array(dtype=int), force: wp.array(dtype=wp.vec3)):
    # a spring per edge pushes its two points: vec3 adds at both ends
    e = wp.tid()
    a = edges[2 * e]
    b = edges[2 * e + 1]
    d = x[b] - x[a]
    f = d * (wp.length(d) - 1.0)
    wp.atomic_add(force, a, f)
    wp.atomic_sub(force, b, f)


@wp.kernel(module="unique")
def mandelbrot(cx: wp.array(dtype=float), cy: wp.array(dtype=float), width: int, max_iter: int,
               count: wp.array(dtype=int)):
    # escape count of z <- z^2 + c from z = 0: a data-dependent while loop (peers.py)
    i = wp.tid()
    c_re = cx[i % width]
    c_im = cy[i // width]
    zr = float(0.0)
    zi = float(0.0)
    n = int(0)
    while n < max_iter and zr * zr + zi * zi <= 4.0:
        t = zr * zr - zi * zi + c_re
        zi = 2.0 * zr * zi + c_im
        zr = t
        n += 1
    count[i] = n


@wp.kernel(module="unique")
def springs_step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), rot: wp.array(dtype=wp.mat33),
                 x_out: wp.array(dtype=wp.vec3), v_out: wp.array(dtype=wp.vec3), dt: float, stiffness: float):
    # one step of springs' loop body: Warp's gradient of springs (peers.py) launches it n_iter
    # times on a tape, one state array per step, since Warp's adjoint of springs' runtime loop
    # is wrong (docs/benchmarks.md)
    i = wp.tid()
    p = x[i]
    vel = v[i]
    R = rot[i]
    anchor = wp.vec3(0.0, 1.0, 0.0)
    omega = wp.vec3(0.1, 0.2, 0.3)
    q = R * p
    d = q - anchor
    L = wp.length(d)
    f = wp.vec3(0.0, 0.0, 0.0)
    if L > 1.0e-6:
        f = wp.normalize(d) * (-stiffness * (L - 1.0))
    else:
        f = wp.vec3(0.0, -1.0, 0.0)
    f = f - vel * 0.1 + wp.cross(omega, vel)
    vel = vel + f * dt
    p = p + vel * dt
    h = wp.dot(p, wp.vec3(0.0, 1.0, 0.0))
    if h < 0.0:
        p = p - wp.vec3(0.0, h, 0.0)
        vel = vel * 0.5
    x_out[i] = p
    v_out[i] = vel
