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
``np.sin(y)``; not ``y[...]``, another write, or the operations of
:data:`SHAPE_ONLY` such as ``np.sum(y)`` and ``y + c``, whose derivatives read
only its shape) comes before it in program order or shares a loop with it (an
earlier iteration's read).
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
aliased: :func:`s2s_ad.frontend.numpy_index._sole_owner`), is created at the top
level of the function, and its versions flow only into each other or into a
value that is only returned (``return y`` inside a loop); otherwise the
copying code path (``y = assign(y, i, v)``) is used.

Array parameters read by index inside a loop get the same kind of adjoint
(:func:`assign_adjoints`): created once, added to in place (``dx[i] += dt``).

Before → after, for ``for i in range(1, n): y[i] = y[i - 1] * a + x[i]``
(forward pass, then reverse sweep)::

    y = np.zeros(n)                        dy = float_zeros(y)
    for i in range(1, n):                  ...
        t4 = i - 1                         for i in reversed(range(1, n)):
        t5 = y[t4]                             t4 = i - 1
        y[i] = t5 * a + x[i]                   t5 = y[t4]
                                               dt8 = dy[i]
                                               ...
                                               dy[t4] += dt5

(``t5`` read again and no ``dy[i] = 0.0``: :mod:`s2s_ad.reverse.fresh_writes`;
``dy[i]`` itself, a number: :mod:`s2s_ad.reverse.ranks`.)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from s2s_ad import ir
from s2s_ad.reverse import fresh_writes
from s2s_ad.reverse.arrays import _as_value
from s2s_ad.emit.code import Stmt, reverse_comment, call as _call
from s2s_ad.names import Namer
from s2s_ad.rules.numpy import DTYPE_ONLY, is_view
from s2s_ad.rules.templates import index_expr, index_operands

CONSTRUCTORS = {"np.zeros", "np.ones", "np.full", "array.zeros_as", "array.ones_as",
                "array.full_as", "np.zeros_like", "np.ones_like", "np.eye", "np.identity",
                "np.full_like", "np.copy"}

SHAPE_ONLY = frozenset({"add", "sub", "neg", "pos", "np.negative", "np.sum", "np.mean",
                        "np.copy", "len", "shape", "np.ndim", "np.size", "lt", "le", "gt", "ge",
                        "eq", "ne", "np.zeros_like", "np.ones_like",
                        "np.full_like"}) | DTYPE_ONLY
"""Operations whose reverse statements read their operands' shapes only
(``unbroadcast(g, y)``, ``spread(g, y)``) or nothing: a read of the array by
one of them needs no earlier write undone (tests/test_numpy_inplace.py checks
this against the rule table)."""


class Unsupported(Exception):
    """The reverse sweep reads an array written in place where the analysis
    did not expect it: the transform falls back to keeping every version."""


@dataclass(eq=False)
class Family:
    """The versions of one array written in place."""

    name: str
    """The buffer's variable in the generated code (the first version's name)."""
    root: ir.Value
    members: set[int]
    writes: list[ir.Op]
    readers: set[int] = field(default_factory=set)
    """ids of the ops whose reverse statements may read the buffer."""
    saved: set[int] = field(default_factory=set)
    """ids of the writes whose overwritten elements are pushed and restored."""
    fresh: set[int] = field(default_factory=set)
    """ids of the writes whose elements nothing read or wrote before
    (s2s_ad.reverse.fresh_writes): their reverse does not zero the adjoint."""
    settled: set[int] = field(default_factory=set)
    """ids of the reads ``y[i - c]`` the reverse sweep may read again from
    the buffer instead of taping them (s2s_ad.reverse.fresh_writes)."""
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
        values = [r for r in readers if r.prim not in SHAPE_ONLY]
        for w in ops:
            # A read of the values before the write, or in an earlier
            # iteration of a loop around both, needs the elements it overwrites.
            if any(order[id(r)][0] < order[id(w)][0] or order[id(r)][1] & order[id(w)][1]
                   for r in values):
                fam.saved.add(id(w))
        if fam.saved:
            fam.stack = namer.fresh(f"{fam.name}_old")
        root = next(op for op in func.body.ops if isinstance(op, ir.Op) and op.out is fam.root)
        fam.fresh = fresh_writes.fresh(func, root, fam.members, ops)
        fam.settled = fresh_writes.settled(func, fam.members, ops)
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
                if id(v) not in members and v.var == var and any(
                        isinstance(a, ir.Value) and id(a) in members for a in inputs):
                    members.add(id(v))
                    changed = True
    # Outlets: other variables a version flows into (the value a ``return``
    # inside a loop or branch leaves in the function's result). They hold
    # the buffer itself, so nothing may compute with them: only returned.
    outlets: set[int] = set()
    changed = True
    while changed:
        changed = False
        for node in ir.walk(func.body):
            for v, inputs in _flows(node):
                if id(v) not in members | outlets and any(
                        isinstance(a, ir.Value) and id(a) in members | outlets for a in inputs):
                    outlets.add(id(v))
                    changed = True
    for node in ir.walk(func.body):
        for v, inputs in _flows(node):
            if id(v) in members and not all(isinstance(a, ir.Value) and id(a) in members
                                            for a in inputs):
                return None  # a φ of a version and something else
            if v.var == var and id(v) not in members:
                return None
        flowing = {id(a) for _, inputs in _flows(node) for a in inputs if isinstance(a, ir.Value)}
        if any(isinstance(a, ir.Value) and id(a) in outlets and id(a) not in flowing
               for a in ir.operands(node)):
            return None  # something computes with an outlet
        if isinstance(node, ir.Op):
            if node.out.var == var and id(node.out) not in members and node is not root:
                return None
            uses = [k for k, a in enumerate(node.args) if isinstance(a, ir.Value)
                    and id(a) in members]
            if uses and (node.callee is not None or node.out.kind in ("tuple", "list")
                         or (is_view(node.prim, node.args, node.attrs)
                             and node.prim != "array.getitem"
                             and 0 in uses)
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
    """The ops whose reverse statements may read the buffer: every op with a
    version as an operand, except reads ``y[...]`` (their reverse adds into
    ``dy``) and writes into it (undone separately)."""
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


def aliases(func: ir.Function, fams: dict[int, Family]) -> set[int]:
    """ids of the values that may share memory with an array written in
    place: its versions, reads ``y[...]`` (views), and φs of those. Returned
    from the function, they are copied before the reverse sweep puts old
    elements back (:func:`restored` for a helper's pair)."""
    out = set(fams)
    changed = True
    while changed:
        changed = False
        for node in ir.walk(func.body):
            if isinstance(node, ir.Op):
                pairs = [(node.out, [node.args[0]])] if node.prim == "array.getitem" else []
            else:
                pairs = _flows(node)
            for v, inputs in pairs:
                if id(v) not in out and any(isinstance(a, ir.Value) and id(a) in out
                                            for a in inputs):
                    out.add(id(v))
                    changed = True
    return out


def restored(func: ir.Function, fams: dict[int, Family]) -> set[int]:
    """:func:`aliases` of the arrays a write into which saves elements: the
    values a helper's forward function copies before returning them. Where
    no write saves elements, the reverse sweep never writes into the buffer,
    and the helper's caller (generated code) writes into no array a helper
    returns (the frontend refuses a subscript assignment into it; ``z += x``
    makes a new array): the array itself is returned. A function a user
    calls (``vjp``) still returns a copy: its value is the user's."""
    return aliases(func, {key: fam for key, fam in fams.items() if fam.saved})


def held_pieces(func: ir.Function, fams: dict[int, Family], reads: set[int]) -> set[int]:
    """ids of the reads ``x = y[idx]`` of an array written in place whose
    value outlives the op that reads it: carried by a φ the reverse sweep
    reads (``x`` bound in a loop, read after it), or passed to a function of
    the user's (whose tape may keep it). The forward pass copies them: a view
    would change with a later write into ``y``, which the frontend allows
    only after the last read of ``x`` (s2s_ad.frontend.view_binds) but the
    reverse sweep reads ``x`` after every forward write."""
    into: dict[int, list[ir.Value]] = {}
    called: set[int] = set()
    for node in ir.walk(func.body):
        if isinstance(node, ir.Op):
            if node.callee is not None or node.out.kind in ("tuple", "list"):
                called.update(id(a) for a in node.args if isinstance(a, ir.Value))
            continue
        for v, inputs in _flows(node):
            for a in inputs:
                if isinstance(a, ir.Value):
                    into.setdefault(id(a), []).append(v)
    out: set[int] = set()
    for node in ir.walk(func.body):
        if not (isinstance(node, ir.Op) and node.prim == "array.getitem"
                and isinstance(node.args[0], ir.Value) and id(node.args[0]) in fams):
            continue
        seen = {id(node.out)}
        todo = list(into.get(id(node.out), []))
        held = id(node.out) in called
        while todo and not held:
            v = todo.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            held = id(v) in reads or id(v) in called
            todo += into.get(id(v), [])
        if held:
            out.add(id(node.out))
    return out


def contains_saved(node, fams: dict[int, Family]) -> bool:
    """Whether a branch or loop holds a write whose old elements are restored
    (its reverse code must run even if no adjoint flows through it)."""
    for r in node.regions:
        for n in ir.walk(r):
            if isinstance(n, ir.Op) and id(n.out) in fams and id(n) in fams[id(n.out)].saved:
                return True
    return False


def copy_of(arrays, e: ast.expr) -> ast.expr:
    """``own(e)``: ``e.copy()`` for an array, that later writes cannot change (a
    NumPy scalar needs no copy); ``arrays`` is the sweep's array emitter."""
    return ast.Call(ast.Name(arrays.helper("own"), ast.Load()), [e], [])


def element_copy(e: ast.expr) -> ast.expr:
    """``e + 0.0`` for ``e`` one element of an array (``dp[0]``), read by name
    after a later write into the array: the element, a NumPy scalar, is one
    the write cannot change, but a reader of the module that does not know
    the array's number of axes (the module read back) cannot tell it from a
    view of a row; ``+ 0.0`` makes it a new value to that reader too."""
    return ast.BinOp(e, ast.Add(), ast.Constant(0.0))


# -- the reverse sweep's statements (s2s_ad.reverse calls these) -----------------

def adjoint_inits(sweep) -> list:
    """``dy = np.zeros_like(y)`` for each array written in place that
    has an active version (plus the seed, if a version is returned): the
    one adjoint all its versions share, changed in place only; and
    likewise for the array parameters read by index in a loop."""
    out = []

    def zeros(v: str) -> ast.expr:
        # ``float_zeros(y)`` is ``np.zeros_like(y) + 0.0``: a float adjoint even
        # for an integer array or a list (``dx[i] += 0.5`` into an integer
        # array would truncate); float32 stays float32. One NumPy call for an
        # ndarray instead of a dispatched ``zeros_like`` and a sum.
        return ast.Call(ast.Name(sweep.arrays.helper("float_zeros"), ast.Load()),
                        [ast.Name(v, ast.Load())], [])

    for fam in {id(f): f for f in sweep.families.values()}.values():
        if fam.adj is None:
            continue
        out.append(Stmt(ast.Assign([ast.Name(fam.adj, ast.Store())], zeros(fam.name)),
                        f"the adjoint of {fam.name}, updated in place", role="inplace"))
        for seed in fam.seeds:
            # ``dy = dy + seed``, not ``+=``: the seed may be another array type
            # (a Dask array's adjoint into an array the function made with NumPy).
            out.append(Stmt(ast.Assign([ast.Name(fam.adj, ast.Store())],
                                       ast.BinOp(ast.Name(fam.adj, ast.Load()), ast.Add(),
                                                 ast.Name(seed, ast.Load()))),
                            f"{fam.name} is returned", role="inplace"))
    for key, adj in sweep.accumulators.items():
        v = sweep.values[key]
        out.append(Stmt(ast.Assign([ast.Name(adj, ast.Store())], zeros(v.name)),
                        f"the adjoint of {v.name}, read by index in a loop: added to in place",
                        role="inplace"))
    return out


def assign_adjoints(sweep) -> None:
    """One adjoint name for all active versions of each array written in
    place; seeds already given to a version (it is returned) are added to it.
    Array parameters read by index inside a loop get an adjoint the sweep
    adds into in place (``dx[i] += g``), not a ``scatter`` per iteration."""
    if sweep.in_place:
        read = {id(n.args[0]) for n in ir.walk(sweep.func.body) if isinstance(n, ir.Op)
                and n.prim == "array.getitem" and isinstance(n.args[0], ir.Value)
                and sweep.in_loop(n.out)}
        for p in sweep.func.params:
            v = p.value
            if v.kind == "array" and p.items is None and id(v) in sweep.act \
                    and id(v) in read and id(v) not in sweep.adj:
                sweep.accumulators[id(v)] = sweep.adj[id(v)] = sweep.namer.fresh(f"d{v.name}")
                sweep.reads.add(id(v))  # its adjoint takes its shape
                sweep.read_once |= fresh_writes.read_once(sweep.func, v)
    for fam in {id(f): f for f in sweep.families.values()}.values():
        fam.seeds = []
        active = [v for v in sweep.values.values()
                  if id(v) in fam.members and id(v) in sweep.act]
        if not active:
            continue
        fam.adj = sweep.namer.fresh(f"d{fam.name}")
        sweep.reads.add(id(fam.root))  # its adjoint takes the buffer's shape
        for v in active:
            if id(v) in sweep.adj and sweep.adj[id(v)] not in fam.seeds:
                fam.seeds.append(sweep.adj[id(v)])
            sweep.adj[id(v)] = fam.adj


def _index(sweep, op: ir.Op) -> ast.expr:
    """The subscript of a read or write of an array, in the reverse sweep
    (its operands, not the array, are read)."""
    skip = 2 if op.prim == "array.setitem" else 1
    exprs = [ast.Constant(None)] * skip + [sweep.ref(a) for a in op.args[skip:]]
    return index_expr(op.attrs["index"], exprs)


def whole(index: tuple) -> bool:
    """Does ``index`` (an op's ``index`` attribute) pick all of an array:
    ``y[()]`` or ``y[...]``?"""
    return all(item[0] not in ("op", "slice", "none") for item in index)


def reverse_read(sweep, op: ir.Op, g: ast.expr) -> Stmt:
    """``dy[idx] += dt`` for ``t = y[idx]`` (``np.add.at`` where an integer
    array index may repeat an element), ``y`` written in place or a
    parameter whose adjoint is added to in place."""
    target = sweep.adj[id(op.args[0])]
    idx = _index(sweep, op)
    if whole(op.attrs["index"]):
        # `y[()]`, `y[...]`: all of y, a 0-d array too, whose adjoint `dy + g`
        # makes a NumPy scalar (into which `dy[()] += g` could not write)
        node = ast.Assign([ast.Name(target, ast.Store())],
                          ast.BinOp(ast.Name(target, ast.Load()), ast.Add(), g))
    elif id(op) in sweep.read_once:  # the element's one contribution, into zeros
        node = ast.Assign([ast.Subscript(ast.Name(target, ast.Load()), idx, ast.Store())], g)
    elif sweep.arrays._basic(op, op.attrs["index"]) and not any(
            isinstance(a, ir.Value) and a.kind == "bool" for a in op.args[1:]):
        node = ast.AugAssign(ast.Subscript(ast.Name(target, ast.Load()), idx, ast.Store()),
                             ast.Add(), g)
    elif sweep.arrays._basic(op, op.attrs["index"]):
        # a mask: add_scattered adds in place where the array is NumPy's, and
        # by position where it is Dask's, whose masked reads have lengths it
        # knows only when it computes (dx[m] = dx[m] + g cannot match them)
        node = ast.Expr(_call(sweep.arrays.helper("add_scattered"),
                              [ast.Name(target, ast.Load()), _as_value(idx), g]))
    else:
        node = ast.Expr(_call(sweep.arrays.helper("add_at"),
                              [ast.Name(target, ast.Load()), _as_value(idx), g]))
    return Stmt(node, reverse_comment(op, 0, op.args[0], "scatter, in place"), op, 0,
                "scatter", target)


def reverse_write(sweep, op: ir.Op) -> list:
    """The reverse of ``y[idx] = v`` written in place: ``v``'s adjoint is
    the assigned elements' (a copy), those elements' adjoint becomes zero,
    and, if the write was saved, the old elements go back into ``y``."""
    fam = sweep.families[id(op.out)]
    base, value = op.args[0], op.args[1]
    out = []
    # integer arrays side by side: index items that are values of no int kind
    # (a slice's bounds are ints whatever their kind says: a tape's item)
    side_by_side = sum(item[0] == "op" and isinstance(op.args[k], ir.Value)
                       and op.args[k].kind not in ("int", "bool")
                       for k, item in index_operands(op.attrs.get("index", ()))) > 1
    if fam.adj is not None:
        idx = _index(sweep, op)
        gathered = ast.Subscript(ast.Name(fam.adj, ast.Load()), idx, ast.Load())
        if side_by_side:
            # integer arrays side by side (`y[:, rows, cols] = v`): `gather` picks
            # them from another library's array too (Dask has no such indexing)
            adj = ast.Name(fam.adj, ast.Load())
            gathered = _call(sweep.arrays.helper("gather"), [adj, _as_value(idx), adj])
        if id(op.out) in sweep.act and isinstance(value, ir.Value) and id(value) in sweep.act:
            if id(op) in sweep.arrays.elements:
                # one element: a NumPy scalar, which later writes cannot change
                # (the zero below, where it follows: element_copy)
                contrib = gathered if id(op) in fam.fresh else element_copy(gathered)
            elif sweep.arrays.number(value):
                contrib = ast.Call(ast.Name(sweep.arrays.helper("total"), ast.Load()), [gathered], [])
            else:
                # a copy: the zeros below go into the adjoint in place, and
                # `gather` returns a view where no index item is an array
                picked = copy_of(sweep.arrays, gathered)
                contrib = ast.Call(ast.Name(sweep.arrays.helper("unbroadcast"), ast.Load()),
                                   [picked, sweep.ref(value)], [])
            out += sweep.accumulate(value, contrib, False,
                                   reverse_comment(op, 1, value, "the assigned elements"),
                                   op, 1, "the assigned elements")
        if id(op) not in fam.fresh:  # else nothing reads the elements' adjoint again
            zero = ast.Assign([ast.Subscript(ast.Name(fam.adj, ast.Load()),
                                             _index(sweep, op), ast.Store())],
                              ast.Constant(0.0))
            if whole(op.attrs["index"]):  # all of it (a 0-d adjoint may be a NumPy scalar)
                zero = ast.Assign([ast.Name(fam.adj, ast.Store())],
                                  _call(sweep.arrays.helper("float_zeros"),
                                        [ast.Name(fam.adj, ast.Load())]))
            elif side_by_side:  # `zero_at` writes zeros there into a Dask array too
                zero = ast.Assign([ast.Name(fam.adj, ast.Store())],
                                  _call(sweep.arrays.helper("zero_at"),
                                        [ast.Name(fam.adj, ast.Load()),
                                         _as_value(_index(sweep, op))]))
            out.append(Stmt(zero, reverse_comment(op, 0, base, "0 at the overwritten elements"),
                            op, 0, "0", fam.adj))
    if id(op) in fam.saved:
        sweep.reads.add(id(fam.root))  # the backward pass of a pair needs the buffer
        restore = ast.Assign([ast.Subscript(ast.Name(fam.name, ast.Load()),
                                            _index(sweep, op), ast.Store())],
                             _call(f"{fam.stack}.pop", []))
        out.append(Stmt(restore, f"line {op.loc.line}: {op.text}, undone: {fam.name} as "
                                 "it was before", op, role="restore"))
    return out
