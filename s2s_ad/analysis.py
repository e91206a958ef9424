"""Analyses the reverse transform relies on.

* **activity**: a value is *active* when it depends on a ``wrt`` parameter
  through differentiable operands (``varied``) and the result depends on it
  (``useful``). Only active values get adjoints; integers, constants and
  values that don't reach the output never do.
* **to-be-recorded**: :func:`needed_forward` — which forward ops the reverse
  sweep needs (the values it reads, and what computes them).

>>> from s2s_ad import ir
"""

from __future__ import annotations

from . import ir
from .rules import RULES


def differentiable(op: ir.Op) -> list[bool]:
    """Per operand: may the op's result have a non-zero derivative with
    respect to it? A call to a user function is assumed to, for every operand
    (its own backward pass returns zeros where it does not)."""
    if op.callee is not None:
        return [True] * len(op.args)
    if op.prim == "item":
        return [True, False]
    rule = RULES[op.prim]
    return [rule.flows(i) for i in range(len(op.args))]


def varied(func: ir.Function, wrt: list[ir.Value]) -> set[int]:
    """ids of values that depend differentiably on ``wrt``."""
    out = {id(v) for v in wrt}
    for op in func.body.ops:
        if op.out.kind not in ir.DIFFERENTIABLE | {"tuple"}:
            continue
        if any(isinstance(a, ir.Value) and id(a) in out and d
               for a, d in zip(op.args, differentiable(op))):
            out.add(id(op.out))
    return out


def useful(func: ir.Function) -> set[int]:
    """ids of values the result depends on differentiably."""
    results = func.outputs if func.result is None and func.outputs else [func.result]
    out = {id(r) for r in results if isinstance(r, ir.Value)}
    for op in reversed(func.body.ops):
        if id(op.out) not in out:
            continue
        for a, d in zip(op.args, differentiable(op)):
            if isinstance(a, ir.Value) and d:
                out.add(id(a))
    return out


def active(func: ir.Function, wrt: list[ir.Value]) -> set[int]:
    return varied(func, wrt) & useful(func)


def needed_forward(func: ir.Function, read: set[int]) -> list[ir.Op]:
    """The forward ops that compute the values in ``read`` (ids), in order."""
    need = set(read)
    keep = []
    for op in reversed(func.body.ops):
        if id(op.out) in need:
            keep.append(op)
            need.update(id(a) for a in op.args if isinstance(a, ir.Value))
    keep.reverse()
    return keep
