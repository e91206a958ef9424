"""A ``range`` bound to a name: ``r = range(0, len(seq) - 1)``, then
``for t in r:`` and ``r[0]``.

Contract: :func:`make` lowers the call ``range(...)`` where it is a value
(not directly what a ``for`` iterates over) to a :class:`RangeObject`
holding its bounds (int operands, checked as ``range``'s bounds are where a
``for`` iterates over a call). It exists only while lowering: a ``for`` over
a name bound to one iterates over its bounds (:func:`bounds`), and ``r[k]``
with a constant ``k >= 0`` is ``start + k * step`` (:func:`item`; Python's
``IndexError`` past the end is not repeated, as for other reads by a
constant index). Anything else done with it (``len(r)``, passing it to a
helper, arithmetic) is refused, located, as a range. A parameter that is
``None`` by default and bound to a range in the function (``_range=None``,
``if _range is None: _range = range(...)``, as GradBench's LSTM writes it)
is the common case.
"""

from __future__ import annotations

import ast
import builtins

from s2s_ad import ir


class RangeObject:
    """``range(start, stop, step)``: its bounds, as operands."""

    is_range = True

    def __init__(self, start: ir.Operand, stop: ir.Operand, step: ir.Operand):
        self.start, self.stop, self.step = start, stop, step


def make(lo, node: ast.Call) -> RangeObject:
    return RangeObject(*call_bounds(lo, node))


def call_bounds(lo, node: ast.Call) -> list:
    """``[start, stop, step]`` of the call ``range(...)``, lowered and
    checked to be ints (as a ``for`` over it and a range bound to a name
    both need)."""
    if node.keywords or not 1 <= len(node.args) <= 3:
        raise lo.src.error(node, "`range` takes 1 to 3 positional arguments")
    args = [lo.expr(a) for a in node.args]
    for a, e in zip(args, node.args):
        if isinstance(a, tuple):
            raise lo.src.error(e, "a range bound must be an integer")
        lo.mark_int(a, e, "a `range` bound")
    if len(args) == 1:
        args = [ir.Const(0)] + args
    if len(args) == 2:
        args.append(ir.Const(1))
    if isinstance(args[2], ir.Const) and args[2].value == 0:
        raise lo.src.error(node.args[2], "`range` step must not be zero")
    for a, e in zip(args, node.args if len(node.args) == 3 else [None] * 3):
        if isinstance(a, ir.Const) and not isinstance(a.value, int):
            raise lo.src.error(e or node, "a range bound must be an integer")
    return args


def is_range(value) -> bool:
    return isinstance(value, RangeObject)


def bounds(value: RangeObject) -> list:
    return [value.start, value.stop, value.step]


def item(lo, value: RangeObject, node: ast.Subscript, var: str | None) -> ir.Operand:
    """``r[k]``, ``k`` a constant int ``>= 0``: ``start + k * step``."""
    k = node.slice
    if not (isinstance(k, ast.Constant) and type(k.value) is int and k.value >= 0):
        raise lo.src.error(k, "an item of a range is read here with a constant index >= 0 "
                           "(`r[0]`); iterate over it for the others")
    if k.value == 0:
        return value.start
    step = value.step
    offset = ir.Const(k.value * step.value) if isinstance(step, ir.Const) else \
        lo.emit("mul", [ir.Const(k.value), step], node)
    if isinstance(value.start, ir.Const) and isinstance(offset, ir.Const):
        return ir.Const(value.start.value + offset.value)
    return lo.emit("add", [value.start, offset], node, var)


def zipped(lo, node: ast.expr, name: ast.Name):
    """``range(a, b, s)`` (``s`` a constant) as a column of ``zip`` or
    ``enumerate`` in a ``for`` loop run when the code runs (``for k, v in
    zip(range(n), xs)``): its length, and the function of the loop's index
    ``j`` binding ``name`` to ``a + j * s``; None for anything else."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id not in lo.env and lo.resolve(node.func) is builtins.range):
        return None
    start, stop, step = call_bounds(lo, node)
    for b, e in zip((start, stop), node.args if len(node.args) > 1 else [node, node.args[0]]):
        if isinstance(b, ir.Value) and b.kind == "array":
            raise lo.src.error(e, "a `range` in `zip` or `enumerate` takes integer bounds" + (
                f"; `{e.id}` is a parameter, an array in NumPy code: annotate it "
                f"(`{e.id}: int`)" if isinstance(e, ast.Name) else ""))
    if not isinstance(step, ir.Const):
        raise lo.src.error(node, "a `range` in `zip` or `enumerate` takes a constant step")
    s = step.value
    if s == 1:
        length = stop if isinstance(start, ir.Const) and start.value == 0 \
            else lo.emit("sub", [stop, start], node)
    else:  # ceil((stop - start) / s), negative (no iteration) past the end
        span = lo.emit("sub", [stop, start] if s > 0 else [start, stop], node)
        length = lo.emit("floordiv", [lo.emit("add", [span, ir.Const(abs(s) - 1)], node),
                                      ir.Const(abs(s))], node)

    zero = isinstance(start, ir.Const) and start.value == 0

    def bind(k):
        if s == 1:
            return k if zero else lo.emit("add", [k, start], name, name.id)
        at = lo.emit("mul", [k, ir.Const(s)], name, None if not zero else name.id)
        return at if zero else lo.emit("add", [at, start], name, name.id)
    return length, (name, bind)
