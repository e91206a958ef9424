"""Loop-invariant arithmetic moved out of loops, before the transform.

Contract: :func:`run` rewrites a function in place so that an op in a loop
body that reads only values defined outside the loop (no carried value, no
index, nothing the body computes) is computed once, just before the loop.
The reverse transform then finds it outside the loop: it is read from
there, never taped once per iteration, and its adjoint is accumulated inside
the reverse loop like that of any outer value (``k`` below).

Before → after, for ``x = x + dt * (-k * x)`` in a 150-step loop::

    for i in range(150) carry (x_1=x)         t1 = neg k
      t1 = neg k                     ──▶      for i in range(150) carry (x_1=x)
      t3 = mul t1 x_1                           t3 = mul t1 x_1
      ...                                       ...

Without this the forward pass kept ``t1`` on a 150-slot tape that held the
same number 150 times.

Only ops that cannot raise move: ``+ - *``, unary ``-``/``+``, ``abs``,
``max``, ``min`` and ``float`` on numbers. A loop that runs zero times
never evaluated its body; moving ``1 / y`` or ``math.log(y)`` before it
would make such a call raise where the function does not. Array ops stay
(a shape mismatch would raise the same way), and so do calls. Ops inside a
branch of the body stay in the branch.
"""

from __future__ import annotations

from s2s_ad import ir

SAFE = frozenset({"add", "sub", "mul", "neg", "pos", "abs", "max", "min", "float"})
"""Primitives that never raise on numbers (overflow gives inf)."""

_NUMBER = frozenset({"float", "int", "bool"})


def run(func: ir.Function) -> None:
    """Hoist loop-invariant safe ops out of every loop of ``func``."""
    _region(func.body)


def _region(region: ir.Region) -> None:
    ops: list = []
    for node in region.ops:
        if not isinstance(node, ir.Op):
            for r in node.regions:
                _region(r)
            if isinstance(node, (ir.For, ir.While)):
                ops += _invariant(node)
        ops.append(node)
    region.ops[:] = ops


def _invariant(loop) -> list[ir.Op]:
    """Remove from ``loop``'s body the ops to compute before it; return them in order."""
    inside = {id(v) for v in loop.carried}
    if isinstance(loop, ir.For):
        inside.add(id(loop.index))
    for node in ir.walk(loop.body):
        inside.update(id(v) for v in ir.defined(node))
    moved, kept = [], []
    for node in loop.body.ops:
        if _movable(node, inside):
            moved.append(node)
            inside.discard(id(node.out))
        else:
            kept.append(node)
    if moved:
        loop.body.ops[:] = kept
    return moved


def _movable(node, inside: set) -> bool:
    if not isinstance(node, ir.Op) or node.prim not in SAFE or node.callee is not None:
        return False
    if node.out.kind not in _NUMBER:
        return False
    return all(isinstance(a, ir.Const) or (a.kind in _NUMBER and id(a) not in inside)
               for a in node.args)
