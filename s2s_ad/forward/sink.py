"""Tangents computed where they are read: inside the arm of a branch.

The forward-mode module computes a value's tangent beside the value. When
the value is read only inside one arm of a later branch, and its local
derivative may be infinite where the other arm runs, the tangent beside it
fails although nothing reads it:

    r = math.sqrt(x * x + y * y)
    dr = (2.0 * (dx * x) + 2.0 * (dy * y)) / (2 * r)    # 0 / 0 at the origin
    if r < 1e-4:
        return 1.0 + x, dx                              # dr not read

So a tangent line whose expression divides, raises to a power or calls a
function, and which only such arms read, moves to the start of each arm
that reads it (the reverse sweep does the same on the recorded decision:
s2s_ad/reverse/untouched.py). It moves only when nothing between its
place and those arms assigns a name it reads, so it computes the same
value where it lands: a name written in place (``dxs.append(v)``,
``dxs[i] = v`` on a list of tangents) counts as assigned.
"""

from __future__ import annotations

import ast
import copy

from s2s_ad.emit.code import Block, Stmt, may_be_infinite
from s2s_ad.emit.peephole import _rw, names_in
from s2s_ad.syntax_walk import walk


def _written(item) -> set[str]:
    """The names ``item`` (a statement or a block, at any depth) assigns or
    changes in place (``xs.append(v)``, ``xs[i] = v``)."""
    if isinstance(item, Stmt):
        return _rw(item)[1]
    out = {n.id for n in walk(item.head) if type(n) is ast.Name
           and isinstance(n.ctx, ast.Store)}
    for s in item.body + item.orelse:
        out |= _written(s)
    return out


def _reads(item, name: str) -> bool:
    return names_in(item)[name] > 0


def into_arms(out: list, tangents: set[str], live: set[str] = frozenset()) -> list:
    """``out`` (a region's forward statements) with each singular tangent
    line read only inside arms of later branches moved into those arms;
    ``live``: names read after ``out`` (a φ's or a carried value's tangent
    under its own name, a returned tangent), whose lines stay. The lines are
    taken last to first, so that a chain (``sqrt(sqrt(s))``: the outer
    root's tangent reads the inner one's) moves together, and a moved line
    moves on into the arms nested in its arm that alone read it (an
    ``elif`` chain, a branch in each arm)."""
    for i in range(len(out) - 1, -1, -1):
        _move(out, i, tangents, live)
    return out


def _move(out: list, i: int, tangents: set[str], live: set[str]) -> None:
    """Move ``out[i]``, if it is a singular tangent line read only inside
    arms of later branches, into those arms (and on, from there)."""
    s = out[i]
    node = s.node if isinstance(s, Stmt) else None
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and type(node.targets[0]) is ast.Name and node.targets[0].id in tangents
            and node.targets[0].id not in live and may_be_infinite(node.value)):
        return
    t = node.targets[0].id
    later = out[i + 1:]
    readers = [k for k, item in enumerate(later) if _reads(item, t)]
    if not readers or not all(
            isinstance(later[k], Block) and isinstance(later[k].head, ast.If)
            and names_in(Block(ast.If(later[k].head.test, [], []), []))[t] == 0
            for k in readers):
        return
    inputs = {n.id for n in walk(node.value) if type(n) is ast.Name} | {t}
    if any(_written(item) & inputs for item in later[:readers[-1] + 1]):
        return
    del out[i]
    for k in readers:
        block = later[k]
        for arm in (block.body, block.orelse):
            if any(_reads(item, t) for item in arm):
                arm.insert(0, Stmt(copy.deepcopy(node), s.comment, s.origin))
                _move(arm, 0, tangents, live)
