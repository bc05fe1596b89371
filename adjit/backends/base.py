"""What a backend is given and what it does: the interface between the
device-independent launch (``adjit.launch``) and a device.

``adjit.launch`` checks and packs a launch's arguments into a
``PackedLaunch`` and runs one sequence for every kind of launch (forward,
adjoint, tangent, ...); a ``Backend`` does what depends on the device:
``prepare`` chooses the variant of the kernel to run (a ``VariantSpec``) and
loads its code, ``run`` runs it and raises the error of a failed check.
"""
from __future__ import annotations

import abc
import linecache
import re

import numpy as np

from ..errors import AdjitError, KernelAssertionError, NonFiniteError, OutOfBoundsError


class PackedLaunch:
    """One launch, its arguments packed: what a backend runs and what launch
    observers (``adjit.observe_launches``) see."""

    __slots__ = ("kernel", "dim", "total", "shape", "args", "primal", "adjoint", "tangent", "spec", "variant",
                 "device", "stream", "block_dim")

    def __init__(self, kernel, dim, total: int, shape: tuple, args: list, primal: list, adjoint: int = 0,
                 tangent: int = 0, device=None, stream: int | None = None, block_dim: int = 0):
        #: The kernel (a generic kernel's instance for these arguments).
        self.kernel = kernel
        #: The launch dim as given; ``total`` threads, ``shape``: its 4 extents.
        self.dim = dim
        self.total = total
        self.shape = shape
        #: The entry's arguments: each array's numpy buffer, each value's bytes.
        #: The kernel's come first; an adjoint's gradient arrays follow (one
        #: per array parameter and lane), a tangent kernel's tangents (one per
        #: float parameter and lane).
        self.args = args
        #: The kernel's arguments as given (struct values flattened).
        self.primal = primal
        #: Lanes of the adjoint and of the tangent kernel (see ``VariantSpec``).
        self.adjoint = adjoint
        self.tangent = tangent
        #: Set by ``Backend.prepare``: the variant the launch asks for (a
        #: ``VariantSpec``), and the loaded code that runs it (its ``spec``
        #: may differ by what the backend's settings choose, e.g. inline
        #: atomics; its ``digest`` says what it was compiled from).
        self.spec = None
        self.variant = None
        #: The device it runs on (``adjit.Device``; None: where its arrays
        #: are, the CPU for none, set by ``adjit.launch``), the CUDA stream
        #: handle given (None: the device's current stream) and the threads
        #: per block asked for (0: the backend's default).
        self.device = device
        self.stream = stream
        self.block_dim = block_dim

    def __repr__(self) -> str:
        return (f"<PackedLaunch of '{self.kernel.__name__}' dim={self.dim!r} "
                f"{self.spec.kind if self.spec else 'unprepared'}>")


class Backend(abc.ABC):
    """Runs packed launches on one kind of device."""

    #: ``VariantSpec.target`` of the code it runs.
    target: str

    @abc.abstractmethod
    def prepare(self, launch: PackedLaunch) -> None:
        """Chooses the variant ``launch`` runs and loads its code (compiling
        it where needed): sets ``launch.spec`` and ``launch.variant``."""

    @abc.abstractmethod
    def run(self, launch: PackedLaunch) -> None:
        """Runs the prepared ``launch`` to its end; raises the error of its
        first failed check (``OutOfBoundsError``, ``NonFiniteError``). The
        backend may run another variant than the one prepared (e.g. with
        every check kept) and then updates ``launch.spec`` and ``.variant``."""


def thread_coords(launch: PackedLaunch, thread: int) -> tuple:
    """The launch coordinates of linear thread index ``thread``."""
    extents = (launch.dim,) if np.ndim(launch.dim) == 0 else tuple(launch.dim)
    return tuple(int(c) for c in np.unravel_index(thread, [int(e) for e in extents]))


def check_failed(launch: PackedLaunch, variant, failure) -> AdjitError:
    """The error for a launch's first failed check (``failure`` as
    ``_runtime.launch_cpu`` returns it): an index out of range, or a
    non-finite value stored, or an assert that did not hold."""
    k = launch.kernel
    site_number, thread, indices, sizes = failure
    site = variant.sites[site_number]
    rank = site["rank"]
    array = site["array"]
    lane = re.match(r"tan\d*_", array) if launch.tangent else None
    seed = re.match(r"adj\d*_", array) if launch.adjoint else None
    if lane and array[lane.end():] in k.arg_names:
        array = f"'{array[lane.end():]}' (its tangent, in the tangent kernel)"
    elif seed and array[seed.end():] in k.arg_names:
        array = f"'{array[seed.end():]}' (its gradient, in the adjoint)"
    elif array in k.arg_names:
        array = f"'{array}'"
    coords = thread_coords(launch, thread)
    where = site["file"], site["line"]
    if site["access"] == "component index" and site["array"].startswith("assert "):
        # An assert (frontend.stmt_Assert): its check is a component index 1 of 1.
        return KernelAssertionError(k.__name__, *where, site["array"], coords, linecache.getline(*where) or None)
    error = NonFiniteError if "NaN or infinity" in site["access"] else OutOfBoundsError
    return error(k.__name__, *where, array, site["access"], tuple(indices[:rank]),
                 tuple(sizes[:rank]), coords, linecache.getline(*where) or None)
