"""Adjoints ``np.where`` leaves zero at the elements it did not pick.

``np.where(c, v, y)`` passes its adjoint to ``v`` where ``c`` holds and
zero elsewhere. The elements of ``v`` it does not pick may be where ``v``'s
own producer has an infinite local derivative (its result there is nan or
inf, which ``np.where`` discards: the guard the code is written for), and
the zero adjoint times that derivative is nan:

    t1 = a > 0
    t2 = np.sqrt(a)               # nan where a < 0, discarded below
    t3 = np.where(t1, t2, 0.0)

    dt2 = np.where(t1, dt3, 0.0)
    da = dt2 / (2.0 * t2)          # nan where a < 0: should be 0

Central differences give 0 there (the function is 0 near such an ``a``),
and so does forward mode, whose ``np.where`` picks the tangent. The sweep
takes the producer's backward under the same condition, as the guard of a
branch (``s2s_ad.reverse.untouched``) does for numbers:

    da = np.where(t1, dt2 / (2.0 * t2), 0.0)

Only where that is exact: the ``np.where`` is the only contribution to
``v``'s adjoint, in the same region as ``v``'s producer; the producer is
elementwise with one array operand ``u`` (``np.sqrt(u)``, ``1.0 / u``,
``u ** 0.5``, ``np.maximum(u, 0.1)``), so its backward is elementwise too; and ``c`` is a
comparison of ``u`` or ``v`` with a number, so it has their shape (the
where's adjoint was not summed over axes ``c`` broadcast ``v`` to). A
masked element's adjoint is then zero by structure, not by value, and the
backward's value there is the zero it would be with a finite derivative.
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.emit.code import may_be_infinite
from s2s_ad.reverse import analysis
from s2s_ad.rules import RULES
from s2s_ad.rules.numpy import BROADCASTING, SAME_SHAPE

_COMPARISONS = frozenset(("gt", "ge", "lt", "le", "eq", "ne"))


def _one_array_operand(op: ir.Op) -> ir.Value | None:
    """The operand of an elementwise op whose other operands are numbers
    written in the code, or None."""
    rule = RULES.get(op.prim)
    if op.callee is not None or rule is None or op.prim == "array.setitem" \
            or op.prim not in SAME_SHAPE and op.prim not in BROADCASTING and not rule.broadcast:
        return None
    values = [a for a in op.args if isinstance(a, ir.Value)]
    if len(values) != 1 or any(not isinstance(a, (ir.Value, ir.Const)) for a in op.args):
        return None
    return values[0]


def _compared(test: ir.Op | None) -> ir.Value | None:
    """What a comparison with a number compares, or None."""
    if test is None or test.prim not in _COMPARISONS:
        return None
    values = [a for a in test.args if isinstance(a, ir.Value)]
    if len(values) != 1 or any(not isinstance(a, (ir.Value, ir.Const)) for a in test.args):
        return None
    return values[0]


def plan(func: ir.Function) -> dict:
    """id of each op whose backward is taken under a mask -> (the where's
    condition, whether it keeps the elements where the condition holds)."""
    ops = [node for node in ir.walk(func.body) if isinstance(node, ir.Op)]
    producers = {id(op.out): op for op in ops}
    uses = scope = None
    out: dict = {}
    for op in ops:
        if op.prim != "np.where" or not isinstance(op.args[0], ir.Value):
            continue
        compared = _compared(producers.get(id(op.args[0])))
        if compared is None:
            continue
        if uses is None:
            uses, scope = analysis.uses(func), analysis.scopes(func)
        for i in (1, 2):
            v = op.args[i]
            made = producers.get(id(v)) if isinstance(v, ir.Value) else None
            if made is None or uses.get(id(v)) != 1 \
                    or compared is not _one_array_operand(made) and compared is not v \
                    or scope[id(v)].region is not scope[id(op.out)].region:
                continue
            out[id(made)] = (op.args[0], i == 1)
    return out


def wrap(sweep, op: ir.Op, contrib: ast.expr) -> ast.expr:
    """``op``'s backward ``contrib`` under its mask, where it has one and the
    backward may be infinite; else ``contrib``."""
    mask = sweep.masks.get(id(op))
    if mask is None or not may_be_infinite(contrib) or _one_array_operand(op) is None:
        return contrib
    test, keep = mask
    zero = ast.Constant(0.0)
    picked = [contrib, zero] if keep else [zero, contrib]
    return ast.Call(ast.Attribute(ast.Name(sweep.modules["numpy"], ast.Load()), "where",
                                  ast.Load()), [sweep.ref(test)] + picked, [])
