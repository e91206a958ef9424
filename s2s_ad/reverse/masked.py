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
elementwise (``np.sqrt(u)``, ``u ** 0.5``, ``s / n``), so its backward is
elementwise too before it is summed to an operand's shape; and ``c`` is a
comparison of one of its operands, or of ``v``, with a number (or an
``&`` of such comparisons), so ``c``'s
shape broadcasts into ``v``'s (the where's adjoint was not summed over axes
``c`` broadcast ``v`` to, and an element of an operand that ``v`` was
broadcast from meets one value of ``c``). A masked element's adjoint is
then zero by structure, not by value, and the backward's value there is the
zero it would be with a finite derivative. The safe mean, ``np.where(n >
0, s / n, 0.0)``, is the same case:

    ds = unbroadcast(np.where(t1, dt2 / n, 0.0), s)
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.emit.code import may_be_infinite
from s2s_ad.reverse import analysis
from s2s_ad.rules import RULES
from s2s_ad.rules.numpy import BROADCASTING, SAME_SHAPE

_COMPARISONS = frozenset(("gt", "ge", "lt", "le", "eq", "ne"))


def _elementwise(op: ir.Op) -> list[ir.Value] | None:
    """The array operands of an elementwise op (its other operands numbers
    written in the code), or None for any other op."""
    rule = RULES.get(op.prim)
    if op.callee is not None or rule is None or op.prim == "array.setitem" \
            or op.prim not in SAME_SHAPE and op.prim not in BROADCASTING and not rule.broadcast:
        return None
    if any(not isinstance(a, (ir.Value, ir.Const)) for a in op.args):
        return None
    return [a for a in op.args if isinstance(a, ir.Value)] or None


def _compared(test: ir.Op | None, producers: dict, depth: int = 0) -> list[ir.Value] | None:
    """What a comparison with a number compares, or the comparisons a
    ``np.logical_and`` of them (``(a > 0) & (a < 5.0)``) makes, or None."""
    if test is None or depth > 8:
        return None
    if test.prim == "np.logical_and":
        if any(not isinstance(a, ir.Value) for a in test.args):
            return None
        parts = [_compared(producers.get(id(a)), producers, depth + 1) for a in test.args]
        return None if any(p is None for p in parts) else [v for p in parts for v in p]
    if test.prim not in _COMPARISONS:
        return None
    values = [a for a in test.args if isinstance(a, ir.Value)]
    if len(values) != 1 or any(not isinstance(a, (ir.Value, ir.Const)) for a in test.args):
        return None
    return values


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
        compared = _compared(producers.get(id(op.args[0])), producers)
        if compared is None:
            continue
        if uses is None:
            uses, scope = analysis.uses(func), analysis.scopes(func)
        for i in (1, 2):
            v = op.args[i]
            made = producers.get(id(v)) if isinstance(v, ir.Value) else None
            operands = _elementwise(made) if made is not None else None
            if operands is None or uses.get(id(v)) != 1 \
                    or any(c is not v and not any(a is c for a in operands) for c in compared) \
                    or scope[id(v)].region is not scope[id(op.out)].region:
                continue
            out[id(made)] = (op.args[0], i == 1)
    return out


def wrap(sweep, op: ir.Op, i: int, contrib: ast.expr) -> ast.expr:
    """``op``'s backward ``contrib`` to operand ``i`` under its mask, where it
    has one and the backward may be infinite; else ``contrib``. The mask
    applies to the backward before it is summed to the operand's shape
    (``unbroadcast(np.where(c, g / n, 0.0), s)`` for ``s / n``), or to all of
    it where the operand has the result's shape."""
    mask = sweep.masks.get(id(op))
    if mask is None or not may_be_infinite(contrib):
        return contrib
    test, keep = mask

    def masked(e: ast.expr) -> ast.expr:
        picked = [e, ast.Constant(0.0)] if keep else [ast.Constant(0.0), e]
        return ast.Call(ast.Attribute(ast.Name(sweep.modules["numpy"], ast.Load()), "where",
                                      ast.Load()), [sweep.ref(test)] + picked, [])

    unbroadcast = sweep.arrays.named("unbroadcast")

    def under(e: ast.expr, same_shape: bool) -> ast.expr | None:
        if isinstance(e, ast.IfExp):  # `g if flat else unbroadcast(g, x)` (flat_shapes)
            body, orelse = under(e.body, True), under(e.orelse, same_shape)
            return None if body is None or orelse is None else ast.IfExp(e.test, body, orelse)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) \
                and e.func.id == unbroadcast and len(e.args) == 2:
            return ast.Call(e.func, [masked(e.args[0]), e.args[1]], e.keywords)
        return masked(e) if same_shape else None

    shapes = sweep.arrays.shapes
    same = len(_elementwise(op)) == 1 or shapes.get(id(op.args[i])) is not None \
        and shapes.get(id(op.args[i])) is shapes.get(id(op.out))  # the operand has the result's shape
    made = under(contrib, same)
    return contrib if made is None else made
