"""Subscript assignment in loops and branches, written in place.

Contract: :func:`families` finds, in a function with loops or branches, the
arrays whose subscript assignments the gradient program may perform in place:
every SSA version of one user variable (``y``, ``y_1``, ``y_2`` from
``y = np.zeros(n)`` and ``y[i] = ...``) is then one buffer under one name,
``y``, with one adjoint buffer ``dy``. The generated code keeps one invariant:

    when the reverse sweep reaches the statements of an op, the buffer holds
    what it held when the forward pass ran that op.

It holds because every forward write ``y[idx] = v`` is undone by the reverse
sweep at the write's own place (walking backwards): the forward pass first
pushes the elements it overwrites (``y_old.append(y[idx].copy())``) and the
reverse sweep puts them back (``y[idx] = y_old.pop()``). Only writes that
something read *before* them needs are saved: a write is saved when an op
whose reverse statements may read the array's values (``y * w``,
``np.sum(y * y)``, anything but ``y[...]`` and another write) comes before it
in program order or shares a loop with it (an earlier iteration's read).
Reads ``t = y[idx]`` that the reverse sweep keeps are copies (a view would
change with the next write), and nothing that reads ``y`` is recomputed in
the reverse sweep (it is taped): both would read the buffer at another place
than the op's own.

The adjoint ``dy`` is created once (``np.zeros_like``) and only ever changed
in place: a write's reverse reads the assigned elements' adjoint
(``dv = dy[i]``, a copy) and zeroes them (``dy[i] = 0.0``); a read
``t = y[i]`` adds ``dy[i] += dt``; any other use adds ``dy += ...``.

An array qualifies when the frontend accepted it for assignment under control
flow (bound once, before any loop or branch, to a new array, and never
aliased: :func:`s2s_ad.frontend_numpy._sole_owner`) and its versions flow only
into each other; otherwise the copying code path (``y = assign(y, i, v)``)
is used.

Before → after, for ``for i in range(1, n): y[i] = y[i - 1] * a + x[i]``::

    for i in range(1, n):                  for i in reversed(range(1, n)):
        t3 = y[i - 1]                          ...
        t3_tape.append(t3)                     dt7 = np.sum(dy[i])
        y[i] = t3 * a + x[i]                   dy[i] = 0.0
                                               ...
                                               dy[i - 1] += dt3
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from . import ir
from .names import Namer
from .rules.numpy import VIEWS

CONSTRUCTORS = {"np.zeros", "np.ones", "np.full", "np.zeros_like", "np.ones_like",
                "np.full_like", "np.copy"}


@dataclass(eq=False)
class Family:
    """The versions of one array written in place."""

    name: str
    """The buffer's variable in the generated code (the first version's name)."""
    root: ir.Value
    members: set[int]
    writes: list[ir.Op]
    readers: set[int] = field(default_factory=set)
    """ids of the ops whose reverse statements may read the buffer's values."""
    saved: set[int] = field(default_factory=set)
    """ids of the writes whose overwritten elements are pushed and restored."""
    stack: str | None = None
    """The list holding the saved elements (None when nothing is saved)."""
    adj: str | None = None
    """The adjoint buffer, when a version is active."""
    seeds: list = field(default_factory=list)
    """Seeds of returned versions, added to the adjoint when it is created."""


def families(func: ir.Function, namer: Namer) -> dict[int, Family]:
    """id(version) -> its :class:`Family`, for every array written in place."""
    writes: dict[str, list[ir.Op]] = {}
    for node in ir.walk(func.body):
        if isinstance(node, ir.Op) and node.prim == "array.setitem" and node.out.var:
            writes.setdefault(node.out.var, []).append(node)
    out: dict[int, Family] = {}
    for var, ops in writes.items():
        fam = _family(func, var, ops)
        if fam is None:
            continue
        order = _positions(func.body)
        readers = _readers(func, fam)
        fam.readers = {id(r) for r in readers}
        for w in ops:
            # A read before the write, or in an earlier iteration of a loop
            # around both, needs the elements the write overwrites.
            if any(order[id(r)][0] < order[id(w)][0] or order[id(r)][1] & order[id(w)][1]
                   for r in readers):
                fam.saved.add(id(w))
        if fam.saved:
            fam.stack = namer.fresh(f"{fam.name}_old")
        for m in fam.members:
            out[m] = fam
    return out


def _family(func: ir.Function, var: str, writes: list[ir.Op]) -> Family | None:
    """The versions of ``var`` if all of them share one buffer that nothing
    else refers to; else None (the copying path handles it)."""
    if any(p.value.var == var or p.value.name == var for p in func.params):
        return None
    roots = [op for op in func.body.ops if isinstance(op, ir.Op) and op.out.var == var
             and op.prim != "array.setitem"]
    if len(roots) != 1 or roots[0].prim not in CONSTRUCTORS or roots[0].callee is not None:
        return None
    root = roots[0].out
    members = {id(root)}
    changed = True
    # Versions: writes into a version, and φs of versions (a loop's carried
    # value is one through its initial value already).
    while changed:
        changed = False
        for node in ir.walk(func.body):
            for v, inputs in _flows(node):
                if id(v) not in members and any(
                        isinstance(a, ir.Value) and id(a) in members for a in inputs):
                    members.add(id(v))
                    changed = True
    for node in ir.walk(func.body):
        for v, inputs in _flows(node):
            if id(v) in members and v.var != var:
                return None  # a version flows into another variable (an alias)
            if id(v) in members and not all(isinstance(a, ir.Value) and id(a) in members
                                            for a in inputs):
                return None  # a φ of a version and something else
            if v.var == var and id(v) not in members:
                return None
        if isinstance(node, ir.Op):
            if node.out.var == var and id(node.out) not in members and node is not root:
                return None
            uses = [k for k, a in enumerate(node.args) if isinstance(a, ir.Value)
                    and id(a) in members]
            if uses and (node.callee is not None or node.out.kind in ("tuple", "list")
                         or (node.prim in VIEWS and node.prim != "array.getitem" and 0 in uses)
                         or (node.prim == "array.setitem" and 1 in uses)):
                return None
    return Family(root.name, root, members, writes)


def _flows(node) -> list[tuple[ir.Value, list]]:
    """(value, the values it is a version of): a write's base, a φ's inputs."""
    if isinstance(node, ir.Op):
        return [(node.out, [node.args[0]])] if node.prim == "array.setitem" else []
    if isinstance(node, ir.If):
        return [(o, [node.then.yields[j], node.orelse.yields[j]])
                for j, o in enumerate(node.outs)]
    out = []
    for j, c in enumerate(node.carried):
        out.append((c, [node.inits[j], node.body.yields[j]]))
        out.append((node.outs[j], [c]))
    return out


def _readers(func: ir.Function, fam: Family) -> list[ir.Op]:
    """The ops whose reverse statements may read the buffer's values: every
    op with a version as an operand, except reads ``y[...]`` (their reverse
    adds into ``dy``) and writes into it (undone separately)."""
    out = []
    for node in ir.walk(func.body):
        if not isinstance(node, ir.Op):
            continue
        for k, a in enumerate(node.args):
            if isinstance(a, ir.Value) and id(a) in fam.members and not (
                    k == 0 and node.prim in ("array.getitem", "array.setitem")):
                out.append(node)
                break
    return out


def _positions(body: ir.Region) -> dict[int, tuple[int, frozenset]]:
    """id(op) -> (its place in program order, the ids of the loops around it)."""
    out: dict[int, tuple[int, frozenset]] = {}

    def walk(r: ir.Region, loops: frozenset) -> None:
        for node in r.ops:
            out[id(node)] = (len(out), loops)
            if not isinstance(node, ir.Op):
                inner = loops | {id(node)} if isinstance(node, (ir.For, ir.While)) else loops
                for r2 in node.regions:
                    walk(r2, inner)

    walk(body, frozenset())
    return out


def contains_saved(node, fams: dict[int, Family]) -> bool:
    """Whether a branch or loop holds a write whose old elements are restored
    (its reverse code must run even if no adjoint flows through it)."""
    for r in node.regions:
        for n in ir.walk(r):
            if isinstance(n, ir.Op) and id(n.out) in fams and id(n) in fams[id(n.out)].saved:
                return True
    return False


def copy_of(e: ast.expr) -> ast.expr:
    """``e.copy()``: an array, or a NumPy scalar, that later writes cannot change."""
    return ast.Call(ast.Attribute(e, "copy", ast.Load()), [], [])


def name(n: str) -> ast.Name:
    return ast.Name(n, ast.Load())
