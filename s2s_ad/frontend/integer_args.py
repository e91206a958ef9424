"""Parameters that become integers through a call.

Contract: :func:`propagate` marks, in every function of a call graph, each
parameter passed to a helper's parameter that the helper uses as an integer
(a ``range`` bound, an index, a size: ``ir.Function.integers``), directly or
through integer arithmetic on it (``n + 1``, ``2 * n``, ``-n``; not ``x * 2.0``,
a float, which no index or bound takes: the helper's other paths run), as an
integer of the caller too, to a fixed point (a chain of helpers). Such a
parameter has no derivative: the function is a step function of it (it sets
a trip count or picks an element), however else it is used. So, as where the
function itself uses it as an integer, ``grad(f, wrt="s")`` is refused,
located at the call that passes it, ``wrt=None`` leaves it out and ``vjp``
returns ``None`` for it.

Before, for ``def f(x, s): return step(x, s) * 2.0`` with ``step`` looping
``for i in range(s)`` and also computing ``h = 1.0 / s``: the derivative
with respect to ``s`` through ``h`` alone, a number that is no derivative
of ``f`` (its trip count moves with ``s`` too); after: refused.
"""

from __future__ import annotations

from s2s_ad import ir
from s2s_ad.errors import IntegerUse

ARITHMETIC = frozenset(("add", "sub", "mul", "neg", "pos"))
"""Integer arithmetic through which a parameter still sets the integer."""


def propagate(graph) -> None:
    """Mark the callers' parameters (see the module docstring); ``graph`` is a
    :class:`s2s_ad.frontend.calls.CallGraph`."""
    funcs = [graph.main] + list(graph.callees)
    changed = True
    while changed:
        changed = False
        for f in funcs:
            changed |= _caller(f, graph)


def _caller(f: ir.Function, graph) -> bool:
    params = {id(p.value): p.value for p in f.params}
    defs: dict | None = None
    changed = False
    for op in ir.walk(f.body):
        if not isinstance(op, ir.Op) or op.callee is None or op.callee.rule is not None:
            continue
        callee = graph.lowered.get((op.callee.fn, op.callee.kinds))  # calls.key
        if callee is None or not callee.integers:
            continue
        inner = callee.param_values
        for k, a in enumerate(op.args):
            if k >= len(inner) or inner[k].var not in callee.integers \
                    or inner[k].kind == "static":
                continue
            if defs is None:
                defs = {id(n.out): n for n in ir.walk(f.body)
                        if isinstance(n, ir.Op) and n.out is not None}
            for v in _roots(a, params, defs):
                if v.var in f.integers:
                    continue
                why = callee.integers[inner[k].var]
                f.integers[v.var] = IntegerUse(
                    f"cannot differentiate with respect to `{v.var}`: `{op.text}` passes it to "
                    f"`{callee.name}`, whose parameter `{inner[k].var}` is used as an integer "
                    f"(at {why.file}:{why.line}:{why.col + 1}); a step function of it has no "
                    "derivative", op.loc.file, op.loc.line, op.loc.col, _line(graph, op),
                    use=f"passed to `{callee.name}`, whose `{inner[k].var}` is used as an "
                    "integer")
                changed = True
    return changed


def _roots(a, params: dict, defs: dict, depth: int = 0) -> list:
    """The parameters ``a`` is, or is integer arithmetic on."""
    if not isinstance(a, ir.Value) or depth > 8:
        return []
    if id(a) in params:
        return [a]
    op = defs.get(id(a))
    if op is None or op.prim not in ARITHMETIC or op.callee is not None or any(
            isinstance(x, ir.Const) and not isinstance(x.value, int) for x in op.args):
        # (arithmetic with a float constant, `x * 2.0`, makes a float: no list
        # index or range bound; the call means the helper's other paths)
        return []
    return [v for x in op.args for v in _roots(x, params, defs, depth + 1)]


def _line(graph, op: ir.Op) -> str | None:
    """The caller's line holding ``op``, for the message."""
    for src in graph.sources.values():
        if src.file == op.loc.file:
            return src.line(op.loc.line)
    return None
