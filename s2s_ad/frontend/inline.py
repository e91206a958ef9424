"""Inlining small helpers: their ops copied into the caller, no pair.

Contract: :func:`run` rewrites, in place, each function of a call graph so
that a call to a *small straight-line helper* becomes the helper's ops, with
fresh SSA names, its parameters replaced by the call's arguments and its
result defined as the call's result. What is left called keeps its
forward/backward pair; the call graph's callees are narrowed to those.

A call pays for its pair: a tuple built for the tape, a function call each
way, the tape unpacked. For a helper of a few operations that costs more
than the operations (``term(a, b) = 100 * (b - a*a)**2 + (1 - a)**2`` called
9 times ran 2.2x the hand-written gradient as pairs). Inlined, the caller's
one sweep differentiates the ops directly and keeps on its tape only what it
reads. A helper is inlined when

* it has no branch, loop or call of its own, and at most :data:`MAX_OPS` ops;
* it returns one value it computes (not a tuple, a constant or a parameter);
* it is lowered in the caller's mode (the same ``math``/``numpy`` names), writes
  no array element and has no list or tuple parameter (a parameter it uses
  as an integer, ``z[:b]``, is fine: :mod:`s2s_ad.frontend.integer_args`
  has already marked the caller's argument, and the caller's sweep gives an
  int no adjoint);
* it is not one with a user-registered derivative rule.

Before → after, for ``def sq(x): return x * x`` called as ``y = sq(a) + b``::

    sq_1 = call sq(a)      ──▶     sq_1 = mul a a     (its comment: sq: x * x)
    y = add sq_1 b                 y = add sq_1 b

The comments of the copied ops name the helper (and its file, when that is
not the caller's): ``# line 7: scaled in scaling.py: w * v``.
"""

from __future__ import annotations

import os

from s2s_ad import ir
from s2s_ad.names import Namer

MAX_OPS = 16
"""Ops in a helper inlined at each call: a few lines of arithmetic."""


def run(graph) -> None:
    """Inline the small helpers of ``graph`` (a :class:`~s2s_ad.calls.CallGraph`)."""
    by_fn = graph.lowered
    inlinable = {id(f) for f in graph.callees if _small(f)}
    if not inlinable:
        return
    for f in [graph.main] + list(graph.callees):
        namer = Namer(reserved=f.names)
        if _region(f.body, f, by_fn, inlinable, namer):
            f.names = frozenset(f.names | namer.taken)
    reached: set[int] = set()
    for f in [graph.main] + list(graph.callees):
        if f is graph.main or id(f) in reached:
            for node in ir.walk(f.body):
                if isinstance(node, ir.Op) and node.callee is not None \
                        and node.callee.rule is None and node.callee.key in by_fn:
                    reached.add(id(by_fn[node.callee.key]))
    # callees are in first-call order: a callee is reached only through earlier ones
    graph.callees = [f for f in graph.callees if id(f) in reached]


def _small(f: ir.Function) -> bool:
    ops = f.body.ops
    return (len(ops) <= MAX_OPS and all(isinstance(op, ir.Op) and op.callee is None
                                        and op.prim != "array.setitem" for op in ops)
            and f.outputs is None and isinstance(f.result, ir.Value)
            and any(op.out is f.result for op in ops)
            and all(p.items is None for p in f.params))


def _region(r: ir.Region, caller: ir.Function, by_fn: dict, inlinable: set[int],
            namer: Namer) -> bool:
    changed = False
    out: list = []
    for node in r.ops:
        if not isinstance(node, ir.Op):
            for r2 in node.regions:
                changed |= _region(r2, caller, by_fn, inlinable, namer)
            out.append(node)
            continue
        callee = by_fn.get(node.callee.key) if node.callee is not None \
            and node.callee.rule is None else None
        if callee is None or id(callee) not in inlinable or callee.modules != caller.modules \
                or len(node.args) != len(callee.params) or node.out.kind == "tuple":
            out.append(node)
            continue
        out += _copy(callee, node, namer)
        changed = True
    r.ops[:] = out
    return changed


def _copy(callee: ir.Function, call: ir.Op, namer: Namer) -> list[ir.Op]:
    """The callee's ops for this call: parameters → arguments, fresh names,
    the result → the call's result."""
    env: dict[int, ir.Operand] = {id(p.value): a for p, a in zip(callee.params, call.args)}
    ops = []
    where = callee.name if callee.loc.file == call.loc.file \
        else f"{callee.name} in {os.path.basename(callee.loc.file)}"
    for op in callee.body.ops:
        if op.out is callee.result:
            out = call.out
        else:
            out = ir.Value(namer.fresh(op.out.name), op.out.kind, None)
        env[id(op.out)] = out
        args = tuple(env.get(id(a), a) if isinstance(a, ir.Value) else a for a in op.args)
        ops.append(ir.Op(op.prim, args, out, op.loc, f"{where}: {op.text}",
                         None, dict(op.attrs)))
    return ops
