"""Which loops the gradient checkpoints, and the loops it cannot.

Contract: :func:`run` takes a lowered function whose loops carry the budget a
``# s2s-ad: checkpoint`` comment gave them (``ir.For.checkpoint``, set by the
frontend) and the option given to ``grad(f, checkpoint=...)``:

* ``None``: the comments decide;
* ``False``: no loop is checkpointed, comments or not;
* ``True`` or a number ``K``: every loop inside no other loop is
  checkpointed, with its comment's budget if it has one, else ``K``
  (``True``: the default budget, 100 snapshots).

A loop may also be marked by a ``with s2s_ad.checkpoint():`` (or
``checkpoint(K)``) block around it: :class:`checkpoint` does nothing when the
function runs, and the frontend lowers the block's body in its place
(:func:`marks`), so the generated module never sees it.

It then refuses, located (``SourceError``), a checkpointed loop the reverse
transform cannot recompute (:mod:`s2s_ad.reverse.checkpoint`): one inside
another loop (checkpoint the outer one), one that writes into an array by
subscript (the array is changed in place: a snapshot would have to copy it),
and one that appends to a list grown at run time (likewise) made before the
loop (a list its body makes, in every iteration, is made again when the
loop is recomputed).
"""

from __future__ import annotations

import ast
import numbers
import re

from s2s_ad import ir
from s2s_ad.errors import SourceError


PRAGMA = re.compile(r"#\s*s2s-ad:\s*checkpoint\b(?:\s*\(\s*(?:snapshots\s*=\s*)?(\d+)\s*\))?")
DEFAULT_SNAPSHOTS = 100


def checkpoint_pragma(line: str) -> int:
    """The snapshot budget a ``# s2s-ad: checkpoint`` (or ``# s2s-ad:
    checkpoint(20)``) comment on a loop's line asks for; 0 without one."""
    m = PRAGMA.search(line)
    if m is None:
        return 0
    return max(1, int(m.group(1))) if m.group(1) else DEFAULT_SNAPSHOTS


class checkpoint:  # noqa: N801 - used as a statement, like a function: with checkpoint():
    """``with s2s_ad.checkpoint():`` (or ``checkpoint(snapshots)``) around
    loops of a function s2s-ad differentiates: their gradient keeps at most
    ``snapshots`` snapshots (default 100) of their carried values instead of a
    tape of every iteration (``docs/checkpointing.md``). When the function
    runs, it does nothing."""

    def __init__(self, snapshots: int | None = None):
        if snapshots is not None and (isinstance(snapshots, bool) or
                                      not isinstance(snapshots, numbers.Integral) or snapshots < 1):
            raise ValueError(f"checkpoint({snapshots!r}): a number of snapshots, 1 or more")
        self.snapshots = snapshots

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        return False


def marks(lowerer, stmt):
    """For a ``with checkpoint(...):`` statement: its body and the budget of
    each loop in it (by id of the ``ast`` node) — None for any other
    ``with`` (refused by the caller)."""
    if len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
        return None
    call = stmt.items[0].context_expr
    if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None
    try:
        target = lowerer.resolve(call.func)
    except SourceError:
        return None
    if target is not checkpoint:
        return None
    args = list(call.args) + [k.value for k in call.keywords if k.arg == "snapshots"]
    if len(args) > 1 or any(k.arg != "snapshots" for k in call.keywords) or (
            args and not (isinstance(args[0], ast.Constant) and type(args[0].value) is int
                          and args[0].value >= 1)):
        raise lowerer.src.error(call, "checkpoint() takes one number of snapshots, a constant "
                                "of 1 or more (`with s2s_ad.checkpoint(20):`)")
    k = args[0].value if args else DEFAULT_SNAPSHOTS
    found: dict[int, int] = {}

    def visit(stmts):
        for s in stmts:
            if isinstance(s, (ast.For, ast.While)):
                found[id(s)] = k
            elif isinstance(s, ast.If):
                visit(s.body)
                visit(s.orelse)
            elif isinstance(s, ast.With):
                visit(s.body)
    visit(stmt.body)
    if not found:
        raise lowerer.src.error(stmt, "this `with checkpoint():` block holds no loop to "
                                "checkpoint")
    return found


def checkpoint_blocks(lowerer, stmts: list) -> list:
    """``stmts`` with each ``with s2s_ad.checkpoint():`` replaced by its
    body, its loops marked in ``lowerer.checkpoint_marks``."""
    if not any(isinstance(s, ast.With) for s in stmts):
        return stmts
    out = []
    for s in stmts:
        found = marks(lowerer, s) if isinstance(s, ast.With) else None
        if found is None:
            out.append(s)
            continue
        lowerer.checkpoint_marks.update(found)
        out += checkpoint_blocks(lowerer, s.body)
    return out


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


def expression_block(lowerer, stmts: list) -> None:
    """Lower ``stmts``, the loop a comprehension, a slice or join of lists of
    any length, or a stack, join or sort of such a list stands for, marking
    its loops ``implicit``: ``checkpoint=True``
    checkpoints the loops the code writes, not these (a list made by an
    expression is appended to in place, which a snapshot would not restore;
    its loop is taped, or recomputed with the checkpointed loop it is in)."""
    ops = lowerer.ops
    start = len(ops)
    lowerer.block(stmts)
    for node in ops[start:]:
        if isinstance(node, ir.For):
            node.implicit = True


def run(func: ir.Function, option) -> None:
    k = budget(option)
    for loop, nested in _loops(func.body, False):
        if k == 0:
            loop.checkpoint = 0
        elif k is not None and not nested and not loop.checkpoint \
                and not (isinstance(loop, ir.For) and loop.implicit):
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


IN_PLACE = {
    "array.setitem": "writes into an array by subscript (changed in place, a snapshot would "
                     "have to copy it); build the new array instead, or leave the loop taped",
    "list.append": "appends to a list (changed in place: a snapshot would keep the list as it "
                   "is at the end, not as it was then); leave the loop taped",
    "list.set": "writes into a list by index (changed in place: a snapshot would keep the "
                "list as it is at the end, not as it was then); leave the loop taped",
}
"""Ops that change a value in place, which a snapshot of the loop's carried
values would not restore: such a loop is refused, with the reason."""


FRESH_LISTS = frozenset({"list.new", "list.fill"})
"""Ops that make a new list: one made by them in the loop's body is made
again by every iteration, and its recomputation too."""


def _made_in_body(loop, v) -> bool:
    """Is the list ``v`` (changed in place by an op of ``loop``'s body) made
    in that body, on every path (``items = []`` then `append` in arms, the
    form a filtered generator takes)? Then each iteration changes a list of
    its own, which no snapshot needs to keep."""
    defs: dict = {}
    for r in loop.regions:
        for node in ir.walk(r):
            if isinstance(node, ir.Op):
                defs[id(node.out)] = node
            elif isinstance(node, ir.If):
                defs.update((id(o), (k, (node.then, node.orelse), ())) for k, o in
                            enumerate(node.outs))
            else:
                for k, (c, o) in enumerate(zip(node.carried, node.outs)):
                    defs[id(c)] = defs[id(o)] = (k, (node.body,), node.inits)
    todo, seen = [v], set()
    while todo:
        v = todo.pop()
        if not isinstance(v, ir.Value) or id(v) in seen:
            continue
        seen.add(id(v))
        d = defs.get(id(v))
        if d is None:  # made before the loop (or carried by it)
            return False
        if isinstance(d, ir.Op):
            if d.prim in IN_PLACE:
                todo.append(d.args[0])
            elif d.prim not in FRESH_LISTS:
                return False
            continue
        k, regions, inits = d
        todo += [r.yields[k] for r in regions] + [inits[k]] if inits else \
            [r.yields[k] for r in regions]
    return True


def _check(loop, nested: bool) -> None:
    if nested:
        _refuse(loop, "cannot checkpoint a loop inside another loop; checkpoint the outer "
                "loop (its recomputation tapes this one)")
    for r in loop.regions:
        for node in ir.walk(r):
            why = IN_PLACE.get(node.prim) if isinstance(node, ir.Op) else None
            if why is not None and node.prim.startswith("list.") \
                    and _made_in_body(loop, node.args[0]):
                continue
            if why is not None:
                same_line = node.loc.line == loop.loc.line
                _refuse(loop, f"cannot checkpoint this loop: line {node.loc.line} {why}",
                        node.loc if same_line else None)
