"""Which loops the gradient checkpoints, and the loops it cannot.

Contract: :func:`run` takes a lowered function whose loops carry the budget a
``# s2s-ad: checkpoint`` comment gave them (``ir.For.checkpoint``, set by the
frontend) and the option given to ``grad(f, checkpoint=...)``:

* ``None``: the comments decide;
* ``False``: no loop is checkpointed, comments or not;
* ``True`` or a number ``K``: every loop inside no other loop is
  checkpointed, with its comment's budget if it has one, else ``K``
  (``True``: the default budget, 100 snapshots).

It then refuses, located (``SourceError``), a checkpointed loop the reverse
transform cannot recompute (:mod:`s2s_ad.reverse.checkpoint`): one inside
another loop (checkpoint the outer one), and one that writes into an array by
subscript (the array is changed in place: a snapshot would have to copy it).
"""

from __future__ import annotations

import numbers

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend.control import DEFAULT_SNAPSHOTS


def budget(option) -> int | None:
    """The snapshot budget ``checkpoint=option`` gives every outer loop (0:
    none, comments ignored; None: the comments decide)."""
    if option is None:
        return None
    if option is True:
        return DEFAULT_SNAPSHOTS
    if option is False:
        return 0
    if isinstance(option, numbers.Integral) and option >= 1:
        return int(option)
    raise ValueError(f"checkpoint={option!r}: pass True, False, None or a number of "
                     "snapshots (1 or more)")


def run(func: ir.Function, option) -> None:
    k = budget(option)
    for loop, nested in _loops(func.body, False):
        if k == 0:
            loop.checkpoint = 0
        elif k is not None and not nested and not loop.checkpoint:
            loop.checkpoint = k
        if loop.checkpoint:
            _check(loop, nested)


def _loops(r: ir.Region, nested: bool):
    for node in r.ops:
        if isinstance(node, ir.If):
            yield from _loops(node.then, nested)
            yield from _loops(node.orelse, nested)
        elif isinstance(node, (ir.For, ir.While)):
            yield node, nested
            for r2 in node.regions:
                yield from _loops(r2, True)


def _refuse(loop, message: str, loc: ir.Loc | None = None, line: str = "") -> None:
    loc = loc or loop.loc
    raise SourceError(message, loc.file, loc.line, loc.col, line or loop.source_line)


def _check(loop, nested: bool) -> None:
    if nested:
        _refuse(loop, "cannot checkpoint a loop inside another loop; checkpoint the outer "
                "loop (its recomputation tapes this one)")
    for r in loop.regions:
        for node in ir.walk(r):
            if isinstance(node, ir.Op) and node.prim == "array.setitem":
                same_line = node.loc.line == loop.loc.line
                _refuse(loop, f"cannot checkpoint this loop: line {node.loc.line} writes into "
                        "an array by subscript (changed in place, a snapshot would have to "
                        "copy it); build the new array instead, or leave the loop taped",
                        None if not same_line else node.loc)
