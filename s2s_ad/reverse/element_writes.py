"""A list adjoint's element that gets one contribution is set, not added to.

Contract: :func:`run` rewrites, in place, a reverse sweep's ``dc[i] += g``
into ``dc[i] = g`` where that is the only statement of the sweep that writes
into ``dc`` (a list parameter's adjoint, made of zeros just before) and it
sits in a top-level loop ``for i in reversed(range(...))`` whose values are
never negative and which nothing in its body reassigns: ``i`` then names a
different element on every iteration, each still ``0.0`` when it is set, so
both statements compute the same list. (A negative ``i`` could name an
element a positive one names too, and a loop inside another loop visits its
indices again: those keep ``+=``.) Scalar sweeps only: a NumPy adjoint set
into the list would be shared with the variable it came from.

Before → after::

    dc = [0.0] * len(c)                   dc = [0.0] * len(c)
    for i in reversed(range(100)):        for i in reversed(range(100)):
        dc[i] += ds                ──▶        dc[i] = ds
        dx += ds * s                          dx += ds * s
"""

from __future__ import annotations

import ast
from collections import Counter

from s2s_ad.emit.code import Block, Stmt
from s2s_ad.emit.peephole import _rw, names_in


def run(reverse: list, list_adjoints: set[str]) -> None:
    if not list_adjoints:
        return
    counts: Counter = Counter()
    for s in reverse:
        counts += names_in(s)
    for block in reverse:
        if not (isinstance(block, Block) and isinstance(block.head, ast.For)):
            continue
        index = _index(block.head)
        if index is None or any(index in _rw(s)[1] for s in _flat(block.body)):
            continue
        for s in _flat(block.body, into_loops=False):
            node = s.node
            if (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
                    and isinstance(node.target, ast.Subscript)
                    and isinstance(node.target.value, ast.Name)
                    and node.target.value.id in list_adjoints
                    and counts[node.target.value.id] == 2  # made, then this one write
                    and isinstance(node.target.slice, ast.Name)
                    and node.target.slice.id == index):
                s.node = ast.Assign([node.target], node.value)


def _index(head: ast.For) -> str | None:
    """``i`` of ``for i in reversed(range(...))`` (or of ``range(...)[:n]``)
    when every value of the range is ≥ 0."""
    it = head.iter
    if not (isinstance(head.target, ast.Name) and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name) and it.func.id == "reversed" and len(it.args) == 1):
        return None
    rng = it.args[0]
    if isinstance(rng, ast.Subscript) and isinstance(rng.slice, ast.Slice) \
            and rng.slice.lower is None and rng.slice.step is None:
        rng = rng.value  # the first n iterations of a loop that may stop early
    if not (isinstance(rng, ast.Call) and isinstance(rng.func, ast.Name)
            and rng.func.id == "range" and not rng.keywords and 1 <= len(rng.args) <= 3):
        return None
    if len(rng.args) >= 2 and not _int_at_least(rng.args[0], 0):
        return None
    if len(rng.args) == 3 and not _int_at_least(rng.args[2], 1):
        return None
    return head.target.id


def _int_at_least(e: ast.expr, low: int) -> bool:
    return isinstance(e, ast.Constant) and type(e.value) is int and e.value >= low


def _flat(stmts: list, into_loops: bool = True):
    """The simple statements of ``stmts``, those of branches included (and of
    nested loops, with ``into_loops``)."""
    for s in stmts:
        if isinstance(s, Stmt):
            yield s
        elif into_loops or not isinstance(s.head, (ast.For, ast.While)):
            yield from _flat(s.body + s.orelse, into_loops)
