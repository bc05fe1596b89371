"""Python AST -> adjit dialect.

Python locals become SSA values (``b = a`` is a rename) and every component
write on a local vector/matrix is a functional ``adjit.insert``, so aliases
keep their values. Control flow becomes ``scf`` ops whose results carry the
locals assigned inside them. Everything is type-checked here, before any IR
is built, and every op carries the Python file:line:col as its location.

``ModuleBuilder`` (module.py) builds a module: a kernel and the device
functions it calls, each by a ``FunctionBuilder`` (function.py), which is
composed of one mixin per room:

- control_flow.py: blocks, if, for, while, ``a if c else b``, ``and``/``or``
- assignment.py: assignments and their targets (components, array elements, fields)
- expressions.py: expression dispatch, names, constants, attribute and subscript reads
- operators.py: unary, binary and comparison operators
- calls.py: what a call calls; builtin calls
- func_calls.py: @func calls (overloads, by-reference arguments) and ``grad(f)``
- constructors.py: vectors, matrices, quaternions and transforms built
- components.py: component and array indices, extract and insert
- structs.py: struct locals as their fields
- conversions.py: literals, coercion, casts, conditions
- printing.py: print, printf, expect_*

Each room calls the others' methods through ``self``; helpers.py holds what
several share. The frontend's other helpers are modules beside this package
(desugar, values, views, slices, by_reference, local_arrays, struct_arrays,
indexed_arrays, branch_locals).
"""
from .function import FunctionBuilder
from .module import ModuleBuilder

__all__ = ["FunctionBuilder", "ModuleBuilder"]
