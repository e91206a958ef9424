"""An adjoint summed from several reads by index, added into one array.

Contract: :func:`run` rewrites, in place, a NumPy reverse sweep's chains

    dx = scatter(g1, x, i1)               # zeros shaped like x, g1 at x[i1]
    dx = dx + scatter(g2, x, i2)          # another array of zeros, and a sum

into ``dx[i2] += g2`` where the read's index is made of ints and slices
(or ``add_scattered(dx, i2, g2)``, which decides when it runs, for any other
index), adding ``g2`` into ``dx[i2]`` in place, where nothing reads ``dx``
between the two statements (and nothing
writes ``x`` or ``dx``): ``dx`` is then an array this sweep made and nobody
else holds, so adding into it gives the same values as the sum, without an
array of zeros and a copy per read. A read of several slices of a short
vector (a camera's 11 parameters read as ``cam[0:3]``, ``cam[3:6]``,
``cam[6]``...) paid three NumPy calls per read, each a microsecond. The
statements keep their place, comments and the op they differentiate
(``s2s-ad explain`` reads ``add_scattered(dx, i, g)`` as ``add_at`` and
``dx[i] += g`` as an element's contribution: added into ``dx``).

Where the read's index and those of the chain's earlier reads are written
with non-negative int constants and name different rows of the first axis
(``w2[1]`` after ``w2[2]``, ``c[3:6]`` after ``c[6]``), those rows still hold
the ``scatter``'s zeros: ``dx[i2] = g2``, the sum ``0 + g2`` without reading
the rows and adding (0.14 µs against 0.83 µs for a row of 14 floats; lstm's
``predict`` makes two a step). The same numbers, but that an element of
``g2`` that is -0.0 stays -0.0 (the sum gave 0.0).

A read whose ``scatter`` is followed at once by ``dx = dx + c``, ``c`` an
array the statement makes (an arithmetic result or its ``unbroadcast``,
which nothing else holds), becomes ``dx = added_into(c, x, i, g)``: ``g``
added into ``c[i]`` in place where the helper finds ``c`` an ndarray like
``x`` and ``i`` an int or a slice, else the sum ``c + scatter(g, x, i)``.

Before → after::

    dx = scatter(dt1, x, 0)               (a comment)
    dx = dx + unbroadcast(ddy * y_prev, x)  dx = added_into(unbroadcast(ddy * y_prev, x), x, 0, dt1)
    dcam = scatter(dt14, cam, slice(7, 9))      dcam = scatter(dt14, cam, slice(7, 9))
    dcam = dcam + scatter(dt11, cam, 6)   ──▶   dcam[6] = dt11
    dcam = dcam + scatter(dt12, cam, 7)         dcam[7] = dcam[7] + dt12  (after dcam[7:9])
    dx = dx + scatter(dt3, x, i)                add_scattered(dx, i, dt3)   (i an index array)
"""

from __future__ import annotations

import ast
import copy

from s2s_ad import ir
from s2s_ad.emit.code import Block, Stmt
from s2s_ad.emit.peephole import _rw
from s2s_ad.syntax_walk import walk


def run(stmts: list, arrays) -> None:
    """Rewrite the chains in ``stmts`` and in the blocks it holds;
    ``arrays`` is the sweep's :class:`~s2s_ad.reverse.arrays.ArraySweep`."""
    scatter = arrays._helper_names.get("scatter")
    if scatter is None:
        return  # no read by index in this sweep
    fresh: dict[str, str] = {}
    """adjoint made by scatter, not read since -> the forward name it is shaped like."""
    chains: dict[str, list] = {}
    """such an adjoint -> (position, statement, g, index) of each read it sums."""
    for k, s in enumerate(stmts):
        if isinstance(s, Block):
            run(s.body, arrays)
            run(s.orelse, arrays)
        node = s.node if isinstance(s, Stmt) else None
        add = _scatter(node, scatter, added=True)
        if add is not None and fresh.get(add[0]) == add[1]:
            target, _, g, index = add
            untouched = _apart(index, [c[3] for c in chains[target]])
            chains[target].append((k, s, g, index))
            subscript = _plain(s.origin, index, arrays.zero_d)
            if subscript is not None:  # ints and slices: dx[i] += g, no call to decide it
                place = ast.Subscript(ast.Name(target, ast.Load()), subscript, ast.Store())
                # elements no read of the chain reached are still scatter's zeros:
                # g is their sum (dx[i] = g, without reading dx[i] and adding)
                s.node = ast.Assign([place], g) if untouched \
                    else ast.AugAssign(place, ast.Add(), g)
                continue
            call = ast.Call(ast.Name(arrays.helper("add_scattered"), ast.Load()),
                            [ast.Name(target, ast.Load()), index, g], [])
            s.node = ast.Expr(call)
            continue
        into = _added_to_scatter(node, k, fresh, chains, arrays)
        if into is not None:  # dx = scatter(g, x, i); dx = dx + c: g added into c
            name, c = into
            _, first, g, index = chains.pop(name)[0]
            first.node = None
            first.comment += f" (added into {name} below)"
            s.node = ast.Assign([ast.Name(name, ast.Store())], ast.Call(
                ast.Name(arrays.helper("added_into"), ast.Load()),
                [c, ast.Name(fresh.pop(name), ast.Load()), index, g], []))
            s.folded = first
            continue
        reads, writes = _rw(s)
        for name, x in list(fresh.items()):
            if name in reads or name in writes or x in writes:
                del fresh[name]
                _join(stmts, name, x, chains.pop(name), arrays)
        made = _scatter(node, scatter, added=False)
        if made is not None:
            fresh[made[0]] = made[1]
            chains[made[0]] = [(k, s, made[2], made[3])]
    for name, chain in chains.items():
        _join(stmts, name, fresh[name], chain, arrays)


def _added_to_scatter(node, k: int, fresh: dict, chains: dict, arrays):
    """``(dx, c)`` where ``node`` (statement ``k``) is ``dx = dx + c`` right
    after ``dx = scatter(g, x, i)``, ``c`` an array the statement makes (an
    arithmetic result, or its ``unbroadcast``) that does not read ``dx``:
    ``added_into(c, x, i, g)`` adds ``g`` into it, as the ode's ``dy[0] =
    x[0]`` beside ``x * y_prev`` (no array of zeros, no sum); else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.BinOp)
            and isinstance(node.value.op, ast.Add) and isinstance(node.value.left, ast.Name)):
        return None
    name = node.targets[0].id
    chain = chains.get(name)
    if node.value.left.id != name or name not in fresh or chain is None or len(chain) != 1 \
            or chain[0][0] != k - 1:
        return None
    c = node.value.right
    if not _made_here(c, arrays._helper_names.get("unbroadcast")) \
            or name in {n.id for n in walk(c) if isinstance(n, ast.Name)}:
        return None
    return name, c


def _made_here(e: ast.expr, unbroadcast: str | None) -> bool:
    """Is ``e``'s value an array (or a number) that nothing else holds: an
    arithmetic result, its negation, a choice between two such, or one of
    them summed back by ``unbroadcast`` (which returns it, or a new sum)?"""
    if isinstance(e, ast.BinOp) or isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return True
    if isinstance(e, ast.IfExp):
        return _made_here(e.body, unbroadcast) and _made_here(e.orelse, unbroadcast)
    return (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and unbroadcast is not None
            and e.func.id == unbroadcast and len(e.args) == 2 and not e.keywords
            and _made_here(e.args[0], unbroadcast))


END = None
"""The linear form of a slice's missing stop: the end of the axis."""


def _join(stmts: list, target: str, x: str, chain: list, arrays) -> None:
    """Where the reads of the chain are slices ``x[a:b]`` (one item, no step)
    that tile ``x``'s first axis — the first from 0, each from where the one
    before stops, the last to the end, every bound a sum of non-negative
    multiples of lengths and shapes that never decreases (so the slices
    cover each element once, however long ``x`` is) — the chain becomes one
    statement at its last place: ``dx = joined(x, (g1, ..., gk), (c1, ...))``,
    the slices' adjoints concatenated, instead of zeros and an addition
    into each slice (the four gates of an LSTM cell: one call instead of
    four). The earlier statements stay as comments."""
    if len(chain) < 2:
        return
    producers = {id(n.out): n for n in ir.walk(arrays.func.body) if isinstance(n, ir.Op)}
    parts = []
    for k, s, g, index in chain:
        op = s.origin
        if not (isinstance(op, ir.Op) and op.prim == "array.getitem" and isinstance(g, ast.Name)
                and isinstance(index, ast.Call) and len(index.args) == 2):
            return
        items = op.attrs.get("index", ())
        if len(items) != 1 or items[0][0] != "slice" or items[0][3] is not None:
            return
        lo = {} if items[0][1] is None else _linear(op.args[items[0][1][1]], producers)
        hi = END if items[0][2] is None else _linear(op.args[items[0][2][1]], producers)
        if lo is None or (hi is END and items[0][2] is not None):
            return
        parts.append((lo, hi, k, g, index.args[1]))
    ordered, at = [], {}
    while len(ordered) < len(parts):
        following = [p for p in parts if p[0] == at and p not in ordered]
        if len(following) != 1:
            return
        ordered.append(following[0])
        at = following[0][1]
        if at is END:
            break
        if any(c < 0 for c in _minus(at, following[0][0]).values()):
            return  # a slice that may stop before it starts
    if at is not END or len(ordered) != len(parts):
        return
    last = max(p[2] for p in parts)
    for _, _, k, g, _ in parts:  # each adjoint still holds its value at the last place
        if any(g.id in _rw(stmts[j])[1] for j in range(k + 1, last + 1)):
            return
    call = ast.Call(ast.Name(arrays.helper("joined"), ast.Load()),
                    [ast.Name(x, ast.Load()),
                     ast.Tuple([copy.deepcopy(p[3]) for p in ordered], ast.Load()),
                     ast.Tuple([copy.deepcopy(p[4]) for p in ordered[:-1]], ast.Load())], [])
    for k, s, _, _ in chain:
        if k == last:
            s.node = ast.Assign([ast.Name(target, ast.Store())], call)
        else:
            s.node = None
            s.comment += f" (joined into {target} below)"


def _linear(a, producers: dict, depth: int = 0) -> dict | None:
    """``a`` as ``{(): constant, id(atom): coefficient}``, a sum of non-negative
    multiples of non-negative integers (constants, lengths, shape items),
    or None."""
    if isinstance(a, ir.Const):
        return ({(): a.value} if a.value else {}) if type(a.value) is int and a.value >= 0 \
            else None
    p = producers.get(id(a))
    if p is None or p.callee is not None or depth > 12:
        return None
    if p.prim == "len" or (
            p.prim == "array.getitem" and isinstance(p.args[0], ir.Value)
            and getattr(producers.get(id(p.args[0])), "prim", None) == "shape"
            and len(p.args) == 2 and isinstance(p.args[1], ir.Const)):
        return {id(a): 1}
    if p.prim not in ("add", "mul") or len(p.args) != 2:
        return None
    f, g = (_linear(x, producers, depth + 1) for x in p.args)
    if f is None or g is None:
        return None
    if p.prim == "add":
        return {k: f.get(k, 0) + g.get(k, 0) for k in set(f) | set(g)}
    for c, other in ((f, g), (g, f)):
        if set(c) <= {()}:
            return {k: v * c.get((), 0) for k, v in other.items() if c.get((), 0)}
    return None


def _minus(f: dict, g: dict) -> dict:
    return {k: f.get(k, 0) - g.get(k, 0) for k in set(f) | set(g)}


def _plain(op, index: ast.expr, zero_d: set) -> ast.expr | None:
    """The subscript ``index`` (a ``scatter`` argument: ``slice(a, b)``, ``2``,
    ``(i, slice(None, k))``) as written between brackets, when the read ``op``
    it comes from indexes by integers and slices only (constants, or values
    the code makes 0-d: ``zero_d``, :mod:`s2s_ad.reverse.ranks`), so
    that ``dx[index] += g`` is what ``add_scattered`` would do for any array
    type; else None (an integer array, a mask, ``None`` or ``...``: the helper
    decides when it runs)."""
    if not (isinstance(op, ir.Op) and op.prim == "array.getitem"):
        return None
    for item in op.attrs.get("index", ()):
        if item[0] not in ("op", "slice"):
            return None
        parts = [item] if item[0] == "op" else [p for p in item[1:] if p is not None]
        for p in parts:
            a = op.args[p[1]]
            if isinstance(a, ir.Const) and type(a.value) is not int or \
                    isinstance(a, ir.Value) and (a.kind != "int" or id(a) not in zero_d):
                return None
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    out = []
    for e in items:
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "slice":
            bounds = [None if isinstance(b, ast.Constant) and b.value is None else b
                      for b in e.args] + [None] * (3 - len(e.args))
            if len(e.args) == 1:  # slice(stop)
                bounds = [None, bounds[0], None]
            out.append(ast.Slice(*bounds))
        elif isinstance(e, (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp)):
            out.append(e)
        else:
            return None
    return out[0] if len(out) == 1 else ast.Tuple(out, ast.Load())


def _rows(index: ast.expr) -> tuple | None:
    """The rows ``[lo, hi)`` of the first axis a ``scatter`` index names, where
    it is written with non-negative int constants: ``2`` → ``(2, 3)``,
    ``slice(3, 6)`` → ``(3, 6)``, ``slice(3, None)`` → ``(3, None)`` (to the
    end), a tuple by its first item (``(0, j)`` → ``(0, 1)``); else None (a
    name, a negative bound that counts from the end, a step, ``None`` or
    ``...`` first, which index another axis)."""
    first = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index

    def bound(e):
        return e.value if isinstance(e, ast.Constant) and type(e.value) is int \
            and e.value >= 0 else None

    if isinstance(first, ast.Constant):
        lo = bound(first)
        return None if lo is None else (lo, lo + 1)
    if not (isinstance(first, ast.Call) and isinstance(first.func, ast.Name)
            and first.func.id == "slice" and not first.keywords and 1 <= len(first.args) <= 3):
        return None
    args = list(first.args) if len(first.args) > 1 else [ast.Constant(None), first.args[0]]
    none = [isinstance(a, ast.Constant) and a.value is None for a in args]
    if len(args) == 3 and not none[2]:
        return None  # a step
    lo = 0 if none[0] else bound(args[0])
    hi = None if none[1] else bound(args[1])
    if lo is None or hi is None and not none[1]:
        return None
    return lo, hi


def _apart(index: ast.expr, others: list) -> bool:
    """Does ``index`` name rows of the first axis none of ``others`` names
    (each a ``scatter`` index), all written with constants (:func:`_rows`)?
    Then what an earlier ``scatter`` of the chain made is still zero there."""
    mine = _rows(index)
    if mine is None:
        return False
    for other in others:
        rows = _rows(other)
        if rows is None:
            return False
        (a, b), (c, d) = mine, rows
        if (b is None or c < b) and (d is None or a < d):
            return False  # [a, b) and [c, d) share a row
    return True


def _scatter(node, scatter: str, added: bool):
    """``(target, x, g, index)`` of ``target = scatter(g, x, index)`` or, with
    ``added``, of ``target = target + scatter(g, x, index)``; else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return None
    target, value = node.targets[0].id, node.value
    if added:
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)
                and isinstance(value.left, ast.Name) and value.left.id == target):
            return None
        value = value.right
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id == scatter and len(value.args) == 3
            and not value.keywords and isinstance(value.args[1], ast.Name)):
        return None
    g, x, index = value.args
    if target in {n.id for n in walk(g) if isinstance(n, ast.Name)} | {
            n.id for n in walk(index) if isinstance(n, ast.Name)}:
        return None
    return target, x.id, g, index
