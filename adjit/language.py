"""The kernel language's objects: ``@kernel``, ``@func``, ``tid()`` and friends.

These are what kernel authors write; they hold source and declarations only.
Compiling them is the compiler's job (``adjit.compiler.driver``), finding and
loading their compiled code the loader's (``adjit.loader``), and running them
the launcher's (``adjit.launch``).
"""
from __future__ import annotations

import ast
import inspect
import itertools
import re
import sys
import types
import weakref

from . import config
from . import types as T
from .builtins import Builtin
from .errors import KernelTypeError
from .source import SourceInfo, parameter_types


def tid():
    """The calling thread's index; ``i, j = tid()`` in a 2-D launch. Kernels only."""
    raise RuntimeError("adjit.tid() can only be called inside an @adjit.kernel")


def printf(fmt: str, *args):
    """``printf("%d: %f\\n", i, x)`` in a kernel: C's printf of integer and
    float values (the format is checked when the kernel compiles). Kernels
    that print run their threads in order, so lines come out in thread
    order. Kernels only; ``print(...)`` works too."""
    raise RuntimeError("adjit.printf() can only be called inside an @adjit.kernel or @adjit.func")


def address_array(address, extent, dtype, name: str):
    """In adjit's own kernel-language libraries (adjit.geometry), not user
    kernels: the 1-d array of ``extent`` elements of ``dtype`` at ``address``
    (memory adjit made, such as a Mesh's points), named ``name`` in range
    reports; constant for differentiation (adjit/compiler/address_arrays.py)."""
    raise RuntimeError("address_array() can only be called inside adjit's kernel-language libraries")


def expect_eq(a, b):
    """In a kernel: prints a line naming the file, line and values when
    ``a != b`` (numbers, vectors, matrices); the launch goes on (as Warp's).
    Kernels that check run their threads in order, like kernels that print."""
    raise RuntimeError("adjit.expect_eq() can only be called inside an @adjit.kernel or @adjit.func")


def expect_neq(a, b):
    """In a kernel: prints a line naming the file, line and value when ``a == b``."""
    raise RuntimeError("adjit.expect_neq() can only be called inside an @adjit.kernel or @adjit.func")


def expect_near(a, b, tolerance=1.0e-6):
    """In a kernel: prints a line when a component of ``a`` and ``b`` differs
    by more than ``tolerance`` (floats, float vectors and matrices)."""
    raise RuntimeError("adjit.expect_near() can only be called inside an @adjit.kernel or @adjit.func")


def constant(x):
    """Returns ``x``: marks a module-level value used by kernels (as in Warp).

    Kernels read numbers, numpy scalars (``adjit.float32(2)``) and vector,
    matrix and quaternion values (``adjit.vec3(...)``) from module globals
    whether or not they are wrapped; the value is compiled in (and part of the
    compile cache key).
    """
    return x


#: Evaluates a func called from Python (set by adjit.host_calls).
host_call = None

#: Counts the definitions that can change what an existing kernel compiles
#: to (a @func, a @kernel, a func_grad or func_jvp): the loader checks a
#: loaded kernel's sources again when it moves (adjit/loader.py).
definitions = 0


def _defined() -> None:
    global definitions
    definitions += 1


class Function:
    """A device function (``@adjit.func``): callable from kernels and other funcs.

    ``differentiable=False`` makes its results carry no gradient; a
    hand-written adjoint can be attached with ``@adjit.func_grad(f)``.
    """

    def __init__(self, pyfunc, differentiable: bool = True):
        _defined()
        self.pyfunc = pyfunc
        self.__name__ = pyfunc.__name__
        self.__qualname__ = pyfunc.__qualname__
        self.__doc__ = pyfunc.__doc__
        self.differentiable = differentiable
        #: Warp's function key and module (``@func(name=, module=)``; kept only)
        self.key = pyfunc.__qualname__.replace("<", "").replace(">", "").replace(".", "__")
        self.module = None
        self.custom_grad = None
        #: A hand-written tangent rule (``@adjit.func_jvp(f)``).
        self.custom_jvp = None
        #: The functions of this name a call chooses from by argument types
        #: (Warp's overloading: a module defines the same @func name again
        #: with other parameter types), this one included.
        self.overloads: list[Function] = [self]

    def __call__(self, *args, **kwargs):
        """Evaluated on the host, as in a kernel (adjit/host_calls.py sets the hook)."""
        if host_call is None:
            raise RuntimeError(f"@adjit.func '{self.__name__}' can only be called inside kernels here "
                               "(import adjit to evaluate funcs on the host)")
        return host_call(self, args, kwargs)


#: Warp's module options and their defaults. adjit honours
#: ``enable_backward`` and ``fast_math``; the others are stored (and returned
#: by get_module_options) but change nothing: adjit compiles each kernel
#: alone, with its own settings (``adjit.config``). ``fast_math`` defaults to
#: True in adjit (False in Warp): on the CPU, f32 sin, cos, exp, log, log2,
#: tanh and erf are polynomial code within a few ulp (docs/simd.md); False
#: keeps libm's calls.
MODULE_OPTIONS = {
    "max_unroll": 16, "enable_backward": True, "enable_mathdx_gemm": None, "enable_mathdx_solver": None,
    "enable_mathdx_fft": None, "fast_math": True, "fuse_fp": True, "lineinfo": False, "cuda_output": None,
    "mode": None, "optimization_level": None, "cpu_compiler_flags": None, "block_dim": 256,
    "compile_time_trace": False, "strip_hash": False, "extra_build_options": None, "deterministic": None,
    "deterministic_max_records": 0, "default_grid_stride": None,
}
#: The options that change what adjit does.
HONOURED_MODULE_OPTIONS = ("enable_backward", "fast_math")


class Module:
    """Warp's module: the kernels of one Python module (or one ``module=``
    name) and their ``options`` (see ``set_module_options``)."""

    def __init__(self, name: str):
        self.name = name
        self.options = dict(MODULE_OPTIONS)
        # As in Warp, a module takes these defaults from the config when made.
        self.options["enable_backward"] = config.enable_backward
        self.options["max_unroll"] = config.max_unroll

    def __repr__(self) -> str:
        return f"adjit.Module({self.name!r})"


_modules: dict[str, Module] = {}


def get_module(name: str) -> Module:
    """The Module of ``name`` (a Python module's ``__name__``), created on
    first use (as Warp's)."""
    if not isinstance(name, str):
        raise TypeError(f"get_module(name): name must be a str, got {type(name).__name__}")
    module = _modules.get(name)
    if module is None:
        module = _modules[name] = Module(name)
    return module


def _module_of(module, depth: int) -> Module:
    """The Module named by ``module`` (a Module, a name, a Python module),
    or for None that of the code ``depth`` frames up the stack."""
    if module is None:
        return get_module(sys._getframe(depth + 1).f_globals.get("__name__", "__main__"))
    if isinstance(module, Module):
        return module
    if isinstance(module, str):
        return get_module(module)
    if isinstance(module, types.ModuleType):
        return get_module(module.__name__)
    raise TypeError(f"module must be an adjit Module, a module name or a Python module, got {module!r}")


def set_module_options(options: dict, module=None) -> None:
    """Sets options of ``module`` (default: the calling code's module), as
    Warp's. ``enable_backward`` (True/False) is honoured: kernels of a module
    with ``enable_backward=False`` have no adjoint, so ``backward()`` through
    a recorded launch of one raises GradientError (a kernel's own
    ``@kernel(enable_backward=...)`` takes precedence). ``deterministic``
    (None, a bool or an ``adjit.DeterministicMode``) is checked and stored:
    ``GPU_TO_GPU`` raises WarpDeterminismError; adjit's launches follow
    ``adjit.config.deterministic`` (RUN_TO_RUN by default) for every module.
    ``fast_math`` (True by default in adjit, unlike Warp): CPU code computes
    f32 transcendental functions with inline polynomials (vectorized in SIMD
    bodies, within the error bounds of docs/simd.md); False keeps libm's
    scalar calls, bitwise as libm. Kernels compile again for a new value.
    Warp's other options (``mode``, ``max_unroll``, ``block_dim``, ...) are
    stored and have no effect in adjit. An unknown option is a KeyError."""
    if not isinstance(options, dict):
        raise TypeError(f"set_module_options: options must be a dict, got {type(options).__name__}")
    unknown = [k for k in options if k not in MODULE_OPTIONS]
    if unknown:
        raise KeyError(f"set_module_options: unknown option(s) {', '.join(map(repr, unknown))}; Warp's module "
                       f"options are {', '.join(MODULE_OPTIONS)}")
    for name in HONOURED_MODULE_OPTIONS:
        if name in options and type(options[name]) is not bool:
            raise TypeError(f"set_module_options: {name} must be True or False, got {options[name]!r}")
    if options.get("deterministic") is not None:
        from .determinism import deterministic_flag
        deterministic_flag(options["deterministic"], "set_module_options: the option 'deterministic'")
    target = _module_of(module, 1)
    if "fast_math" in options and options["fast_math"] != target.options.get("fast_math"):
        config.settings_changed()  # (launch plans hold variants compiled with the old value)
    target.options.update(options)


def get_module_options(module=None) -> dict:
    """The options of ``module`` (default: the calling code's module): the
    module's own dict, as Warp returns it (change it with set_module_options)."""
    return _module_of(module, 1).options


#: Every kernel made in this process (also generic kernels' instances), so
#: ``adjit.load_module`` can find those of a module (``_serial``: their order).
_kernels: "weakref.WeakSet[Kernel]" = weakref.WeakSet()
_serials = itertools.count()


class Kernel:
    """A kernel (``@adjit.kernel``): launched over a 1-4-D grid of threads.

    ``Kernel(func, key=None, module=None, options=None)`` is Warp's way of
    making one without the decorator (the same function under several keys,
    e.g. closures over a type): ``key`` names it (default: from the
    function's qualified name), ``options`` are kernel options (Warp's
    module option names; ``enable_backward`` is honoured, the others are
    stored). Warp's ``code_transformers`` and ``source`` are not supported
    (a TypeError). ``no_grad``, ``bounds_check`` and ``enable_backward``
    are ``@adjit.kernel``'s."""

    #: What launches keep on the kernel (adjit/launch.py's fast path, the
    #: variants loader.prepared_variant chose): None until its first
    #: launch (class defaults, so launches read them without a getattr default).
    _launch_plan = None
    _prepared = None

    def __init__(self, func, key: str | None = None, module=None, options: dict | None = None,
                 code_transformers=None, source=None, *, no_grad=(), bounds_check: bool | None = None,
                 enable_backward: bool | None = None):
        pyfunc = func
        if not callable(pyfunc) or not hasattr(pyfunc, "__code__"):
            raise TypeError(f"Kernel(func=...) needs a Python function, got {func!r}")
        if key is not None and not isinstance(key, str):
            raise TypeError(f"Kernel(key=...) must be a str, got {key!r}")
        if code_transformers:
            raise TypeError("Kernel(code_transformers=...): adjit compiles the function's source as written; "
                            "AST transformers are not supported")
        if source is not None:
            raise TypeError("Kernel(source=...): adjit reads the function's source from its file (inspect); "
                            "a source string is not supported")
        options = dict(options or {})
        unknown = [k for k in options if k not in MODULE_OPTIONS]
        if unknown:
            raise KeyError(f"Kernel(options=...): unknown option(s) {', '.join(map(repr, unknown))}; the options "
                           f"are Warp's module options: {', '.join(MODULE_OPTIONS)}")
        for name in HONOURED_MODULE_OPTIONS:
            if name in options and type(options[name]) is not bool:
                raise TypeError(f"Kernel(options=...): {name} must be True or False, got {options[name]!r}")
        if "enable_backward" in options:
            if enable_backward is None:
                enable_backward = options["enable_backward"]
        _defined()
        self.pyfunc = pyfunc
        #: The kernel's own options (Warp's ``Kernel.options``).
        self.options = options
        #: Warp's CUDA launch hints given to @kernel (no effect on the CPU).
        self.cuda_options: dict = {}
        #: Parameters whose values carry no gradient (reads are constants).
        self.no_grad = tuple(no_grad)
        #: Range checks on array accesses: True, False, or None (follow
        #: ``adjit.config.bounds_check``).
        self.bounds_check = bounds_check
        #: The kernel's own enable_backward (None: its module's option).
        self._enable_backward = enable_backward
        #: Warp's key: given, else the qualified name, "." as "__" (``outer__locals__k``).
        self.key = key or pyfunc.__qualname__.replace("<", "").replace(">", "").replace(".", "__")
        if module == "unique":
            module = Module(f"{self.key}_{id(self):x}")
        self._module = None if module is None else _module_of(module, 1)
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__
        self.source = SourceInfo.of(pyfunc)
        #: The parameters as written; arg_names / arg_types are the kernel's
        #: arguments, a struct parameter flattened into its fields ("s.x").
        self.param_names = [a.arg for a in self.source.tree.args.args]
        self._param_types: list | None = None
        #: Instances of a generic kernel, by parameter types (overload()).
        self._instances: dict = {}
        self._arg_names: list | None = None
        self._arg_types: list | None = None
        self._array_args: int | None = None
        self._has_struct_params: bool | None = None
        self._linear_tid: bool | None = None
        self._serial = next(_serials)
        _kernels.add(self)

    @property
    def module(self) -> Module:
        """The kernel's Module: that of the Python module defining it, unless
        ``@kernel(module=...)`` named another (``"unique"``: its own)."""
        if self._module is None:
            # (code run by exec() with globals that have no __name__ belongs to no module: __main__'s)
            name = self.pyfunc.__module__
            self._module = get_module(name if isinstance(name, str) else "__main__")
        return self._module

    @property
    def enable_backward(self) -> bool:
        """False: the kernel has no adjoint (``@kernel(enable_backward=False)``,
        or its module's option when the kernel sets none)."""
        if self._enable_backward is not None:
            return self._enable_backward
        return self.module.options.get("enable_backward", True) is not False

    @enable_backward.setter
    def enable_backward(self, value: bool | None) -> None:
        self._enable_backward = value

    @property
    def fast_math(self) -> bool:
        """Whether CPU code computes f32 transcendental math with polynomials
        (the kernel's ``fast_math`` option, else its module's) or libm."""
        value = self.options.get("fast_math")
        if value is None:
            value = self.module.options.get("fast_math", True)
        return value is not False

    @property
    def mlir_name(self) -> str:
        """The kernel's symbol name in IR and object code."""
        return re.sub(r"\W", "_", self.pyfunc.__name__)

    def _declared_types(self) -> list:
        """The annotations: a type, or None for ``typing.Any`` (generic)."""
        self._generic_patterns = {}
        types = parameter_types(self.pyfunc, self.source, "kernel", self._generic_patterns)
        hints = getattr(self.pyfunc, "__annotations__", {})
        for name, t, node in zip(self.param_names, types, self.source.tree.args.args):
            if t is None and hints.get(name) is None:
                raise self.source.error(KernelTypeError, f"kernel parameter '{name}' needs a type annotation "
                                        "(typing.Any makes the kernel generic)", node)
        # array(dtype=Any): generic too (None, with the array's rank kept in _generic_ranks)
        self._generic_ranks = {name: t.ndim for name, t in zip(self.param_names, types)
                               if isinstance(t, T.ArrayType) and t.dtype is None}
        self._generic_patterns.update({name: t.dtype_pattern for name, t in zip(self.param_names, types)
                                       if isinstance(t, T.ArrayType) and t.dtype_pattern is not None})
        return [None if isinstance(t, T.ArrayType) and t.dtype is None else t for t in types]

    @property
    def is_generic(self) -> bool:
        """Whether a parameter is ``typing.Any`` (Warp's generic kernels): each
        launch's argument types make an instance (``adjit.overload``)."""
        if self._param_types is not None:
            return False
        return any(t is None for t in self._declared_types())

    @property
    def param_types(self) -> list:
        """The kernel-language types of the parameters (annotations are required)."""
        if self._param_types is None:
            types = self._declared_types()
            for name, t, node in zip(self.param_names, types, self.source.tree.args.args):
                if t is None:
                    raise self.source.error(KernelTypeError,
                                            f"kernel '{self.__name__}' is generic (its parameter '{name}' is "
                                            "typing.Any): launch it, or make an instance with "
                                            "adjit.overload(kernel, types)", node)
            self._param_types = types
        return self._param_types

    @property
    def adj(self) -> "KernelAdjoint":
        """Warp's ``Kernel.adj`` (its code generator's state), as far as
        programs read it: ``adj.args``, the parameters (``.label``, ``.type``)."""
        return KernelAdjoint(self)

    @property
    def overloads(self) -> list:
        """The instances made so far of a generic kernel (Warp's ``Kernel.overloads``)."""
        return list(self._instances.values())

    def overload(self, types) -> "Kernel":
        """The instance of a generic kernel for ``types`` (a list in parameter
        order, or a dict by name, for its ``typing.Any`` parameters or all),
        made once (Warp's ``wp.overload``)."""
        declared = self._declared_types()
        if isinstance(types, dict):
            unknown = set(types) - set(self.param_names)
            if unknown:
                raise TypeError(f"kernel '{self.__name__}' has no parameters {sorted(unknown)}")
            types = [types.get(name) for name in self.param_names]
        if len(types) != len(declared):
            raise TypeError(f"kernel '{self.__name__}' takes {len(declared)} parameter types, got {len(types)}")
        concrete = []
        for name, want, given in zip(self.param_names, declared, types):
            if given is not None and not isinstance(given, (T.ArrayType, T.StructType, T.IndexedArrayType)):
                given = T.value_type_of(given)
            if want is not None and given is not None and given != want:
                raise TypeError(f"kernel '{self.__name__}' parameter '{name}' is {want}, not {given}")
            rank = self._generic_ranks.get(name)
            if rank is not None and given is not None and not (isinstance(given, T.ArrayType)
                                                               and given.ndim == rank):
                raise TypeError(f"kernel '{self.__name__}' parameter '{name}' is an array of {rank} "
                                f"dimension(s) of any type, not {given}")
            pattern = self._generic_patterns.get(name)
            if pattern is not None and given is not None and not pattern.matches(
                    given.dtype if rank is not None and isinstance(given, T.ArrayType) else given):
                raise TypeError(f"kernel '{self.__name__}' parameter '{name}' is {pattern}, not {given}")
            if want is None and given is None:
                raise TypeError(f"kernel '{self.__name__}' parameter '{name}' is typing.Any: give its type")
            concrete.append(want if want is not None else given)
        key = tuple(concrete)
        instance = self._instances.get(key)
        if instance is None:
            instance = Kernel(self.pyfunc, self.key, options=self.options, no_grad=self.no_grad,
                              bounds_check=self.bounds_check, enable_backward=self._enable_backward)
            instance._module = self._module
            instance._param_types = concrete
            self._instances[key] = instance
        return instance

    def _flatten_signature(self) -> None:
        names, types = [], []
        for name, t in zip(self.param_names, self.param_types):
            leaves = t.leaves(name) if isinstance(t, (T.StructType, T.StructArrayType, T.IndexedArrayType)) \
                else [(name, t)]
            names += [n for n, _ in leaves]
            types += [lt for _, lt in leaves]
        self._arg_names, self._arg_types = names, types

    @property
    def arg_names(self) -> list:
        """The kernel's argument names: the parameters, a struct's fields as
        ``s.field`` (an array of structs': the array of each field, ``a.field``)."""
        if self._arg_names is None:
            self._flatten_signature()
        return self._arg_names

    @property
    def arg_types(self) -> list:
        """The types of ``arg_names`` (no structs nor arrays of structs: they are flattened)."""
        if self._arg_types is None:
            self._flatten_signature()
        return self._arg_types

    @property
    def has_struct_params(self) -> bool:
        if self._has_struct_params is None:  # (asked at every launch)
            self._has_struct_params = any(isinstance(t, (T.StructType, T.StructArrayType, T.IndexedArrayType))
                                          for t in self.param_types)
        return self._has_struct_params

    def flatten_arguments(self, args: list) -> list:
        """Launch arguments in parameter order -> kernel arguments (struct
        values expanded into their fields, arrays of structs into the arrays
        of their fields)."""
        if not self.has_struct_params:
            return list(args)
        out = []
        for name, t, value in zip(self.param_names, self.param_types, args):
            if isinstance(t, T.StructArrayType):
                if getattr(value, "dtype", None) is not t.dtype or not hasattr(value, "leaf_arrays"):
                    raise TypeError(f"kernel '{self.__name__}' argument '{name}' must be an array of {t.dtype.name}"
                                    f", got {_describe_argument(value)}")
                if value.ndim != t.ndim:
                    raise TypeError(f"kernel '{self.__name__}' argument '{name}' must be a {t.ndim}-d array, got "
                                    f"{value.ndim}-d")
                out += value.leaf_arrays()
                continue
            if isinstance(t, T.IndexedArrayType):
                from .runtime.indexed_array import check_argument
                out += check_argument(self.__name__, name, t, value)
                continue
            if not isinstance(t, T.StructType):
                out.append(value)
                continue
            if not (isinstance(value, T.StructValue) and value._type is t):
                raise TypeError(f"kernel '{self.__name__}' argument '{name}' must be a {t.name} struct value, "
                                f"got {value!r}")
            out += value.leaf_values()
        return out

    @property
    def array_args(self) -> int:
        """How many of the kernel's parameters are arrays."""
        if self._array_args is None:
            self._array_args = sum(isinstance(t, T.ArrayType) for t in self.arg_types)
        return self._array_args

    @property
    def linear_tid(self) -> bool:
        """Whether the kernel may take its thread index as one int32
        (``i = tid()``, not ``i, j = tid()``): a launch of more than 2**31 - 1
        threads would overflow it. Read from the source; a call to anything
        named ``tid`` counts."""
        if self._linear_tid is None:
            tree = self.source.tree
            unpacked = {id(node.value) for node in ast.walk(tree)
                        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple)}
            self._linear_tid = any(
                isinstance(node, ast.Call) and id(node) not in unpacked
                and (getattr(node.func, "id", None) == "tid" or getattr(node.func, "attr", None) == "tid")
                for node in ast.walk(tree))
        return self._linear_tid

    def __call__(self, *args):
        raise RuntimeError(f"kernel '{self.__name__}' must be launched with adjit.launch()")


def _describe_argument(value) -> str:
    dtype = getattr(value, "dtype", None)
    if hasattr(value, "shape") and dtype is not None:
        return f"an array of {getattr(dtype, 'name', dtype)}"
    return repr(value)


class KernelArg:
    """A kernel parameter as Warp's ``Kernel.adj.args`` lists it: ``label``
    (its name) and ``type`` (its annotation: an adjit type, ``typing.Any``,
    or for ``array(dtype=Any)`` an array type whose ``dtype`` is
    ``typing.Any``, as Warp's)."""

    __slots__ = ("label", "type")

    def __init__(self, label: str, type):
        self.label, self.type = label, type

    def __repr__(self) -> str:
        return f"{self.label}: {self.type!r}"


class KernelAdjoint:
    """What adjit has of Warp's ``Kernel.adj`` (the code generator's state
    for a kernel): ``args``. Other names raise NotInAdjitError."""

    def __init__(self, kernel: Kernel):
        import copy
        import typing
        hints = getattr(kernel.pyfunc, "__annotations__", {})
        args = []
        for arg in kernel.source.tree.args.args:
            ann = hints.get(arg.arg)
            if isinstance(ann, str):
                try:
                    ann = eval(ann, kernel.pyfunc.__globals__)
                except Exception:  # noqa: BLE001  (compiling the kernel says why)
                    pass
            ann = T.without_none(ann)
            if isinstance(ann, T.ArrayType) and ann.dtype is None and ann.dtype_pattern is None:
                ann = copy.copy(ann)
                ann.dtype = typing.Any  # Warp's array(dtype=Any); a view only, never compiled
            args.append(KernelArg(arg.arg, ann))
        self.args = args

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        from .errors import NotInAdjitError
        raise NotInAdjitError(f"Kernel.adj.{name} is not in adjit yet: of the state of Warp's code generator for a "
                              "kernel (Kernel.adj), adjit has args", name=name)


def kernel(fn=None, *, no_grad=(), bounds_check: bool | None = None, enable_backward: bool | None = None,
           module=None, name: str | None = None, module_options: dict | None = None, launch_bounds=None,
           cuda_max_registers: int | None = None, enable_cuda_smem_spilling: bool | None = None,
           cluster_dim: int | None = None, grid_stride: bool | None = None, entry_point_abi: str | None = None):
    """Decorator: a Python function written in the kernel language becomes a Kernel.

    ``no_grad=("x",)``: reads of parameter ``x`` carry no gradient.
    ``bounds_check=False``: no range checks on this kernel's array accesses
    (default: ``adjit.config.bounds_check``, on). ``enable_backward=False``
    (Warp's): the kernel has no adjoint; ``backward()`` through a recorded
    launch of it raises ``GradientError`` (None: the module's option, see
    ``set_module_options``). ``module=`` (Warp's): the Module whose options
    the kernel follows (a name, a Python module, a Module, or ``"unique"``
    for its own); adjit still compiles each kernel alone. ``name`` (Warp's):
    the kernel's key. ``module_options`` (Warp's): options of the kernel's own
    module (needs ``module="unique"``, a ValueError otherwise; checked as
    ``set_module_options`` checks them).
    Warp's CUDA launch hints ``launch_bounds``, ``cuda_max_registers``,
    ``enable_cuda_smem_spilling``, ``cluster_dim`` and ``grid_stride`` are
    checked and kept in ``kernel.cuda_options``; they change nothing on the
    CPU (as in Warp, where they apply to CUDA kernels only).
    ``entry_point_abi`` may be None or ``"warp"``.
    Any other keyword is a ``TypeError``.
    """
    cuda_options = _check_cuda_options(launch_bounds, cuda_max_registers, enable_cuda_smem_spilling,
                                       cluster_dim, grid_stride)
    if entry_point_abi not in (None, "warp"):
        raise ValueError(f"@adjit.kernel(entry_point_abi={entry_point_abi!r}): adjit's kernels have Warp's "
                         "launch ABI only ('warp'); 'external_constant_params' is a CUDA entry point")
    if name is not None and (not isinstance(name, str) or not name.isidentifier()):
        raise ValueError(f"@adjit.kernel(name=...) must be an identifier, got {name!r}")
    if module_options is not None:
        if module != "unique":
            raise ValueError("@adjit.kernel(module_options=...) needs module=\"unique\" (use set_module_options "
                             "for a shared module)")
        if not isinstance(module_options, dict):
            raise TypeError(f"@adjit.kernel(module_options=...) must be a dict, got {module_options!r}")
    if bounds_check is not None and type(bounds_check) is not bool:
        raise TypeError(f"@adjit.kernel(bounds_check=...) must be True, False or None, got {bounds_check!r}")
    if enable_backward is not None and type(enable_backward) is not bool:
        raise TypeError(f"@adjit.kernel(enable_backward=...) must be True, False or None, got "
                        f"{enable_backward!r}")
    if module is not None and not isinstance(module, (str, Module, types.ModuleType)):
        raise TypeError(f"@adjit.kernel(module=...) must be a module name, a Python module, an adjit Module or "
                        f"'unique', got {module!r}")

    def make(f):
        k = Kernel(f, key=name, module=module, no_grad=no_grad, bounds_check=bounds_check,
                   enable_backward=enable_backward)
        if module_options:
            set_module_options(module_options, k.module)
        k.cuda_options = cuda_options
        return k
    return make if fn is None else make(fn)


def _check_cuda_options(launch_bounds, cuda_max_registers, enable_cuda_smem_spilling, cluster_dim,
                        grid_stride) -> dict:
    """Warp's CUDA launch hints, checked as Warp documents them."""
    def positive_int(v):
        return isinstance(v, int) and not isinstance(v, bool) and v > 0
    if launch_bounds is not None and not (positive_int(launch_bounds) or (
            isinstance(launch_bounds, tuple) and 1 <= len(launch_bounds) <= 2
            and all(positive_int(v) for v in launch_bounds))):
        raise ValueError(f"@adjit.kernel(launch_bounds=...) must be a positive int or a tuple of 1-2 positive "
                         f"ints, got {launch_bounds!r}")
    if cuda_max_registers is not None:
        if not positive_int(cuda_max_registers):
            raise ValueError(f"@adjit.kernel(cuda_max_registers=...) must be a positive int, got "
                             f"{cuda_max_registers!r}")
        if launch_bounds is not None:
            raise ValueError("@adjit.kernel: cuda_max_registers cannot be combined with launch_bounds")
    if cluster_dim is not None and not (positive_int(cluster_dim) and cluster_dim <= 16):
        raise ValueError(f"@adjit.kernel(cluster_dim=...) must be an int from 1 to 16, got {cluster_dim!r}")
    for flag, value in (("enable_cuda_smem_spilling", enable_cuda_smem_spilling), ("grid_stride", grid_stride)):
        if value is not None and type(value) is not bool:
            raise TypeError(f"@adjit.kernel({flag}=...) must be True, False or None, got {value!r}")
    return {k: v for k, v in (("launch_bounds", launch_bounds), ("cuda_max_registers", cuda_max_registers),
                              ("enable_cuda_smem_spilling", enable_cuda_smem_spilling),
                              ("cluster_dim", cluster_dim), ("grid_stride", grid_stride)) if v is not None}


def func(fn=None, *, differentiable: bool = True, name: str | None = None, module=None):
    """Decorator: a device function callable from kernels.

    ``@adjit.func(differentiable=False)``: no gradient flows through its
    results (as if they were constants). ``name`` and ``module`` (Warp's):
    the function's key (``f.key``) and the module it is registered in
    (``f.module``: a name, a Python module, a Module or ``"unique"``); both
    are checked and kept, and change nothing: adjit compiles a function
    into each kernel that calls it.

    Defining a module-level function of an existing @func's name again, with
    every parameter annotated and other parameter types, adds an overload (as
    in Warp): calls choose by argument types. The same parameter types
    replace that overload.
    """
    if name is not None and (not isinstance(name, str) or not name.isidentifier()):
        raise ValueError(f"@adjit.func(name=...) must be an identifier, got {name!r}")
    if module is not None and not isinstance(module, (str, Module, types.ModuleType)):
        raise TypeError(f"@adjit.func(module=...) must be a module name, a Python module, an adjit Module or "
                        f"'unique', got {module!r}")

    def make(f):
        new = Function(f, differentiable)
        new.key, new.module = name or new.key, module
        previous = f.__globals__.get(f.__name__) if "<locals>" not in f.__qualname__ else None
        if isinstance(previous, Function) and previous.__qualname__ == f.__qualname__:
            signature = _annotations(f)
            others = [o for o in previous.overloads if _annotations(o.pyfunc) != signature]
            if signature is not None and others and all(_annotations(o.pyfunc) is not None for o in others):
                new.overloads = others + [new]
        return new
    return make if fn is None else make(fn)


def _annotations(pyfunc) -> tuple | None:
    """The parameter annotations of ``pyfunc`` (None if one is missing)."""
    names = pyfunc.__code__.co_varnames[:pyfunc.__code__.co_argcount]
    hints = getattr(pyfunc, "__annotations__", {})
    if any(n not in hints for n in names):
        return None
    return tuple(repr(hints[n]) for n in names)


def func_grad(f: Function):
    """Decorator: a hand-written adjoint for device function ``f`` (as Warp's).

    The adjoint takes f's parameters followed by one adjoint per result of
    ``f`` and accumulates into ``adjit.adjoint[param]``::

        @adjit.func_grad(my_func)
        def adj_my_func(x: float, y: float, adj_ret: float):
            adjit.adjoint[x] += adj_ret * y
            adjit.adjoint[y] += adj_ret * x
    """
    if not isinstance(f, Function):
        raise TypeError("func_grad(f) needs an @adjit.func")

    def attach(grad_fn):
        f.custom_grad = grad_fn
        _defined()
        return grad_fn
    return attach


def func_replay(f: Function):
    """Warp's ``@func_replay(f)``: a replacement for ``f`` in the forward
    replay of the backward pass, for functions whose side effects (an atomic
    counter handing out slots) would differ when replayed. adjit takes the
    declaration and never replays: forward launches call ``f`` as usual, and
    a kernel whose gradient would need the replay is refused when it is
    differentiated. What such a function returns depends on the order the
    threads run in, so the gradient is defined only for one order; adjit's
    race analysis rejects those kernels at ``backward()`` (a GradientError
    naming the array) rather than pair each thread with a replayed slot that
    may be another's. To differentiate one, give each thread its slot
    deterministically instead, e.g. from an exclusive prefix sum of the
    counts (``adjit.utils.array_scan``)."""
    if not isinstance(f, Function):
        raise TypeError(f"func_replay(f) needs an @adjit.func, got {f!r}")

    def declare(replay_fn):
        f.replay = replay_fn  # kept only: adjit does not replay (see above)
        return replay_fn
    return declare


class RefusedFunction:
    """A device function of Warp's that adjit names but cannot run:
    ``refusal`` says why. Naming it succeeds (a module importing or declaring
    it imports); calling it on the host raises NotInAdjitError, and a kernel
    calling it fails to compile with that reason, at the call."""

    refusal = ""

    def __call__(self, *args, **kwargs):
        from .errors import NotInAdjitError
        raise NotInAdjitError(self.refusal, name=getattr(self, "__name__", None))


class NotInAdjitFunction(RefusedFunction):
    """A device function of a Warp library adjit lacks (``warp_name``, as
    Warp spells it), named so that modules importing it import."""

    def __init__(self, warp_name: str, why: str = ""):
        self.__name__ = self.__qualname__ = warp_name.rpartition(".")[2]
        self.warp_name = warp_name
        self.refusal = f"{warp_name} is not in adjit yet{': ' + why if why else ''}"

    def __repr__(self) -> str:
        return f"<{self.warp_name}: not in adjit yet>"


class NativeFunction(RefusedFunction):
    """What ``@func_native`` makes: a function whose body is a C++/CUDA
    snippet, which adjit cannot run. The declaration succeeds, so a module
    declaring one imports; calling it on the host raises NotInAdjitError, and
    a kernel calling it fails to compile, both saying why (``refusal``)."""

    def __init__(self, fn, snippet: str):
        code = getattr(fn, "__code__", None)
        self.pyfunc = fn
        self.snippet = snippet
        self.__name__ = getattr(fn, "__name__", repr(fn))
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.where = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""
        self.refusal = (f"@func_native {self.__name__!r}{' (' + self.where + ')' if self.where else ''} is not in "
                        "adjit: its body is a C++/CUDA snippet, and adjit compiles Python kernels through MLIR "
                        "with no native snippets; write the function in Python as an @adjit.func (with "
                        "@adjit.func_grad for a hand-written adjoint)")

    def __repr__(self) -> str:
        return f"<adjit func_native {self.__name__!r}: not in adjit>"


def func_native(snippet: str, adj_snippet: str | None = None, replay_snippet: str | None = None):
    """Warp's ``@func_native(snippet, adj_snippet)``: a device function whose
    body is a C++/CUDA snippet. adjit compiles Python through MLIR and has no
    native snippets (unchecked native code would escape its bounds checks,
    gradients and located errors): the decorated function is a
    ``NativeFunction``, declared so that its module imports, and refused
    where it is used (a NotInAdjitError when called on the host, a compile
    error naming it and where it is declared in a kernel that calls it);
    write it as an @adjit.func instead."""
    def decorate(fn):
        return NativeFunction(fn, snippet)
    return decorate


def func_jvp(f: Function):
    """Decorator: a hand-written forward-mode (tangent) rule for device
    function ``f``, the counterpart of ``func_grad``. It takes f's parameters
    followed by one tangent per float parameter (same types, in order) and
    returns the tangent of each float result of ``f``::

        @adjit.func_jvp(my_func)
        def my_func_jvp(x: float, y: float, dx: float, dy: float):
            return dx * y + x * dy

    Forward mode (``jvp``, ``jvp_batch``, forward Jacobians) calls it in place
    of differentiating f's body; reverse mode is unchanged (f's body, or its
    ``func_grad``). A kernel calling a function that has a ``func_grad`` but
    no ``func_jvp`` cannot be differentiated in forward mode (a
    ``GradientError`` naming it)."""
    if not isinstance(f, Function):
        raise TypeError("func_jvp(f) needs an @adjit.func")

    def attach(jvp_fn):
        f.custom_jvp = jvp_fn
        _defined()
        return jvp_fn
    return attach


class GradWrapper:
    """``adjit.grad(f)``: the gradient of ``f`` (an ``@adjit.func`` or a
    builtin with one float scalar result), called with ``f``'s arguments.
    It returns the derivative of the result with respect to each argument (a
    float scalar, vector or matrix: one gradient of the argument's type), one
    value for one argument and a tuple for several::

        @adjit.kernel
        def k(x: adjit.array(dtype=float), g: adjit.array(dtype=float)):
            i = adjit.tid()
            g[i] = adjit.grad(square)(x[i])

    A function with a ``func_grad`` gets it called; otherwise its body is
    differentiated in forward mode (one tangent lane per argument component),
    into ordinary ops that reverse and forward mode differentiate again:
    unlike Warp, where a ``grad()`` in a kernel is a constant to the backward
    pass, a kernel using it has exact gradients (second derivatives of f).
    Called from Python, it runs as a kernel of one thread."""

    def __init__(self, func):
        self.func = func
        self.__name__ = f"grad({getattr(func, '__name__', None) or func.name})"

    def __repr__(self) -> str:
        return f"adjit.{self.__name__}"

    def __call__(self, *args, **kwargs):
        if host_call is None:
            raise RuntimeError(f"{self!r} can only be called inside kernels here (import adjit to evaluate "
                               "it on the host)")
        return host_call(self, args, kwargs)


def grad(func) -> GradWrapper:
    """The gradient of a device function or builtin (Warp's ``wp.grad``);
    see ``GradWrapper``."""
    if not isinstance(func, (Function, Builtin)):
        raise TypeError(f"grad(func) needs an @adjit.func or a builtin, got {func!r}")
    if isinstance(func, Function) and not func.differentiable:
        raise TypeError(f"grad({func.__name__}): the function is declared differentiable=False")
    if isinstance(func, Builtin) and not func.differentiable:
        raise TypeError(f"grad({func.name}): the builtin is not differentiable")
    return GradWrapper(func)


def static(value):
    """``adjit.static(expr)`` in a kernel or func: ``expr`` is evaluated once,
    when the kernel is compiled, in the kernel's Python scope (its module's
    globals and closure), and its value is compiled in: a number, a vector or
    matrix value, or a @func or builtin to call (``adjit.static(table[k])(x)``).
    ``for i in range(adjit.static(n))`` is unrolled, ``i`` a constant in each
    copy. Outside kernels it returns ``value``."""
    return value


class _Adjoints:
    """``adjit.adjoint[x]`` inside an ``@adjit.func_grad``."""

    def __getitem__(self, item):
        raise RuntimeError("adjit.adjoint[...] can only be used inside an @adjit.func_grad")


adjoint = _Adjoints()


def overload(kernel, arg_types=None):
    """Warp's ``wp.overload``: the instance of the generic kernel ``kernel``
    (parameters annotated ``typing.Any``) for ``arg_types`` (a list in
    parameter order, or a dict by name). Launching a generic kernel makes the
    instance for its arguments' types by itself.

    As a decorator on a stub of the same name with concrete annotations
    (``@wp.overload`` then ``def k(x: float): ...``), it makes the instance of
    the generic kernel of that name in the calling scope for the stub's
    annotations, and returns the generic kernel (so the name still launches
    any instance). On a stub of a generic @func it checks the name and
    returns the func: funcs are instantiated for their argument types at
    each call."""
    if arg_types is None and isinstance(kernel, types.FunctionType):
        return _overload_stub(kernel, sys._getframe(1))
    if not isinstance(kernel, Kernel):
        raise TypeError(f"overload() takes an @adjit.kernel, got {kernel!r}")
    if arg_types is None:
        raise TypeError(f"overload(kernel '{kernel.__name__}'): give the parameter types (a list or a dict by "
                        "name), or use @overload on a stub function with concrete annotations")
    if not _declares(kernel):
        return kernel
    return kernel.overload(arg_types)


def _declares(kernel: Kernel) -> bool:
    """Whether ``kernel``'s own annotations resolve. Where one does not (a
    type adjit lacks, such as ``indexedarray(dtype=Any)``), declaring an
    instance does nothing (Warp programs declare them at import, so the
    module still imports) and the KernelTypeError saying why is raised where
    the kernel is launched or compiled, which resolve them again."""
    try:
        kernel._declared_types()
    except KernelTypeError:
        return False
    return True


def _overload_stub(stub, frame):
    name = stub.__name__
    generic = frame.f_locals.get(name, frame.f_globals.get(name))
    if isinstance(generic, Function):
        return generic
    if not isinstance(generic, Kernel):
        raise TypeError(f"@overload def {name}(...): no generic @kernel or @func named '{name}' is defined before "
                        f"it in this scope (found {generic!r})")
    try:
        hints = inspect.get_annotations(stub, eval_str=True)
    except Exception as e:  # an annotation that does not evaluate
        raise TypeError(f"@overload def {name}(...): its annotations do not evaluate: {e}") from None
    params = list(inspect.signature(stub).parameters)
    missing = [p for p in params if p not in hints]
    if missing:
        raise TypeError(f"@overload def {name}(...): annotate every parameter (missing: {', '.join(missing)})")
    if params != generic.param_names:
        raise TypeError(f"@overload def {name}({', '.join(params)}): the parameters must be those of the generic "
                        f"kernel ({', '.join(generic.param_names)})")
    if _declares(generic):
        generic.overload({p: hints[p] for p in params})
    return generic
