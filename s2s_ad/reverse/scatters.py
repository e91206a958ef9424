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

Before → after::

    dcam = scatter(dt14, cam, slice(7, 9))      dcam = scatter(dt14, cam, slice(7, 9))
    dcam = dcam + scatter(dt11, cam, 6)   ──▶   dcam[6] += dt11
    dx = dx + scatter(dt3, x, i)                add_scattered(dx, i, dt3)   (i an index array)
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.emit.code import Block, Stmt
from s2s_ad.emit.peephole import _rw


def run(stmts: list, arrays) -> None:
    """Rewrite the chains in ``stmts`` and in the blocks it holds;
    ``arrays`` is the sweep's :class:`~s2s_ad.reverse.arrays.ArraySweep`."""
    scatter = arrays._helper_names.get("scatter")
    if scatter is None:
        return  # no read by index in this sweep
    fresh: dict[str, str] = {}
    """adjoint made by scatter, not read since -> the forward name it is shaped like."""
    for s in stmts:
        if isinstance(s, Block):
            run(s.body, arrays)
            run(s.orelse, arrays)
        node = s.node if isinstance(s, Stmt) else None
        add = _scatter(node, scatter, added=True)
        if add is not None and fresh.get(add[0]) == add[1]:
            target, _, g, index = add
            subscript = _plain(s.origin, index, arrays.zero_d)
            if subscript is not None:  # ints and slices: dx[i] += g, no call to decide it
                s.node = ast.AugAssign(ast.Subscript(ast.Name(target, ast.Load()), subscript,
                                                     ast.Store()), ast.Add(), g)
                continue
            call = ast.Call(ast.Name(arrays.helper("add_scattered"), ast.Load()),
                            [ast.Name(target, ast.Load()), index, g], [])
            s.node = ast.Expr(call)
            continue
        reads, writes = _rw(s)
        for name, x in list(fresh.items()):
            if name in reads or name in writes or x in writes:
                del fresh[name]
        made = _scatter(node, scatter, added=False)
        if made is not None:
            fresh[made[0]] = made[1]


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
    if target in {n.id for n in ast.walk(g) if isinstance(n, ast.Name)} | {
            n.id for n in ast.walk(index) if isinstance(n, ast.Name)}:
        return None
    return target, x.id, g, index
