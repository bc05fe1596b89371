"""The derivative rule table (cpp/lib/Autodiff/DerivativeRules.def) is the
only way an op gets a derivative rule: every op with an adjoint rule has a
tangent rule and vice versa, unless the table declares it one-mode (with a
reason)."""
from adjit import _adjit
from adjit.compiler.driver import new_context


def _rules():
    modes, declared = {}, {}
    for line in _adjit.derivative_rules(new_context()).splitlines():
        kind, rest = line.split(" ", 1)
        if kind == "rule":
            op, *found = rest.split()
            modes[op] = set(found)
        else:
            assert kind == "declared", line
            head, why = rest.split(": ", 1)
            op, mode = head.split()
            declared[op] = ({mode}, why)
    return modes, declared


def test_every_op_has_both_modes_or_is_declared_one_mode():
    modes, declared = _rules()
    one_mode = {op: found for op, found in modes.items() if found != {"adjoint", "tangent"}}
    assert one_mode == {op: mode for op, (mode, _) in declared.items()}, (
        "ops with one mode's rule only must be declared so in DerivativeRules.def "
        "(ADJIT_TANGENT_ONLY / ADJIT_ADJOINT_ONLY, with the reason), or get the other mode's rule")
    assert all(why.strip() for _, why in declared.values())


def test_the_table_covers_the_differentiable_ops():
    modes, _ = _rules()
    # A sample of each dialect's differentiable ops: the table was read.
    for op in ("arith.addf", "arith.select", "math.sin", "math.powf", "math.floor", "vector.broadcast",
               "vector.shape_cast", "adjit.load", "adjit.atomic_add", "adjit.stop_gradient", "adjit.call"):
        assert modes.get(op) == {"adjoint", "tangent"}, op
    # Ops without derivatives (integers, comparisons) get no rule.
    for op in ("arith.addi", "arith.cmpf", "adjit.atomic_and", "adjit.tid"):
        assert op not in modes, op
