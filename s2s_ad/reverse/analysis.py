"""Analyses the reverse transform relies on.

* **activity**: a value is *active* when it depends on a ``wrt`` parameter
  through differentiable operands (``varied``) and the result depends on it
  (``useful``). Only active values get adjoints; integers, constants and
  values that don't reach the output never do. Through loops both are fixed
  points: a carried value is varied when its initial or its next value is.
* **scopes**: :func:`scopes` — for each value, the region that defines it and
  the innermost loop around that region (None outside loops). The reverse
  sweep reads a value defined inside a loop from the tape (or recomputes it);
  one defined outside every loop is still alive.
* **to-be-recorded**: :func:`needed_forward` — which forward ops the reverse
  sweep needs (the values it reads, and what computes them).

>>> from s2s_ad import ir
"""

from __future__ import annotations

from dataclasses import dataclass

from s2s_ad import ir
from s2s_ad.rules import RULES


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


def _differentiable(kind: str) -> bool:
    return kind in ir.DIFFERENTIABLE | {"tuple", "list"}


def varied(func: ir.Function, wrt: list[ir.Value]) -> set[int]:
    """ids of values that depend differentiably on ``wrt``."""
    out = {id(v) for v in wrt}

    def is_v(a) -> bool:
        return isinstance(a, ir.Value) and id(a) in out

    def region(r: ir.Region) -> None:
        for node in r.ops:
            if isinstance(node, ir.Op):
                if not _differentiable(node.out.kind):
                    continue
                if any(is_v(a) and d for a, d in zip(node.args, differentiable(node))):
                    out.add(id(node.out))
            elif isinstance(node, ir.If):
                region(node.then)
                region(node.orelse)
                for o, a, b in zip(node.outs, node.then.yields, node.orelse.yields):
                    if _differentiable(o.kind) and (is_v(a) or is_v(b)):
                        out.add(id(o))
            else:
                while True:
                    before = len(out)
                    for c, init, y in zip(node.carried, node.inits, node.body.yields):
                        if _differentiable(c.kind) and (is_v(init) or is_v(y)):
                            out.add(id(c))
                    for r2 in node.regions:
                        region(r2)
                    if len(out) == before:
                        break
                for o, c in zip(node.outs, node.carried):
                    if id(c) in out:
                        out.add(id(o))

    region(func.body)
    return out


def useful(func: ir.Function) -> set[int]:
    """ids of values the result depends on differentiably."""
    results = func.outputs if func.result is None and func.outputs else [func.result]
    out = {id(r) for r in results if isinstance(r, ir.Value)}

    def add(a) -> None:
        if isinstance(a, ir.Value):
            out.add(id(a))

    def region(r: ir.Region) -> None:
        for node in reversed(r.ops):
            if isinstance(node, ir.Op):
                if id(node.out) not in out:
                    continue
                for a, d in zip(node.args, differentiable(node)):
                    if d:
                        add(a)
            elif isinstance(node, ir.If):
                for o, a, b in zip(node.outs, node.then.yields, node.orelse.yields):
                    if id(o) in out:
                        add(a)
                        add(b)
                region(node.then)
                region(node.orelse)
            else:
                while True:
                    before = len(out)
                    for o, c, init, y in zip(node.outs, node.carried, node.inits, node.body.yields):
                        if id(o) in out or id(c) in out:
                            add(c)
                            add(y)
                            add(init)
                    region(node.body)
                    if len(out) == before:
                        break

    region(func.body)
    return out


def active(func: ir.Function, wrt: list[ir.Value]) -> set[int]:
    from s2s_ad.reverse.shifts import cancelled  # shifts reads this module's use counts

    return (varied(func, wrt) & useful(func)) - cancelled(func)


@dataclass
class Scope:
    region: ir.Region
    loop: object
    """The innermost For/While whose body (or a branch inside it) defines the
    value; None outside loops."""
    node: object = None
    """The node that defines the value (None for parameters and loop indices)."""


def scopes(func: ir.Function) -> dict[int, Scope]:
    """For every value: where it is defined (see the module docstring)."""
    out: dict[int, Scope] = {}
    for p in func.params:
        out[id(p.value)] = Scope(func.body, None)

    def region(r: ir.Region, loop) -> None:
        for node in r.ops:
            for v in ir.defined(node):
                out[id(v)] = Scope(r, loop, node)
            if isinstance(node, ir.If):
                region(node.then, loop)
                region(node.orelse, loop)
            elif isinstance(node, (ir.For, ir.While)):
                if isinstance(node, ir.For):
                    out[id(node.index)] = Scope(node.body, node)
                for c in node.carried:
                    out[id(c)] = Scope(node.body, node)
                for r2 in node.regions:
                    region(r2, node)

    region(func.body, None)
    return out


def uses(func: ir.Function) -> dict[int, int]:
    """How many times each value is read (ops, yields, structured operands)."""
    count: dict[int, int] = {}

    def use(a) -> None:
        if isinstance(a, ir.Value):
            count[id(a)] = count.get(id(a), 0) + 1

    def region(r: ir.Region) -> None:
        for node in r.ops:
            for a in ir.operands(node):
                use(a)
            if not isinstance(node, ir.Op):
                for r2 in node.regions:
                    region(r2)
        for y in r.yields:
            use(y)

    region(func.body)
    use(func.result)
    return count


def needed_forward(func: ir.Function, read: set[int]) -> list[ir.Op]:
    """The top-level forward ops that compute the values in ``read`` (ids), in
    order (straight-line functions)."""
    need = set(read)
    keep = []
    for op in reversed(func.body.ops):
        if id(op.out) in need:
            keep.append(op)
            need.update(id(a) for a in op.args if isinstance(a, ir.Value))
    keep.reverse()
    return keep


def prune(region: ir.Region, live: set[int], inside: set[int], kept: set[int]) -> None:
    """Add to ``kept`` the ids of the nodes of ``region`` (nested ones
    included) the forward pass must run, given ``live`` (ids of values needed
    later or by the reverse sweep; updated with what the kept nodes read) and
    ``inside`` (ids of structured nodes holding values the reverse sweep
    reads). A kept structured node keeps all its yields."""
    for node in reversed(region.ops):
        if not (any(id(v) in live for v in ir.defined(node)) or id(node) in inside):
            continue
        kept.add(id(node))
        live.update(id(a) for a in ir.operands(node) if isinstance(a, ir.Value))
        if not isinstance(node, ir.Op):
            for r in reversed(node.regions):
                live.update(id(y) for y in r.yields if isinstance(y, ir.Value))
                prune(r, live, inside, kept)
