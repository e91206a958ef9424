"""Adjoint additions in a NumPy reverse sweep written out of place.

Contract: :func:`run` rewrites, in place, every ``target += c`` and
``target -= c`` of a NumPy reverse sweep (in the blocks too) as
``target = target + c`` (``-``), ``target`` a name or a subscript. The
values are the same; what changes is which array holds the sum.

Why: an adjoint array the sweep made with ``np.zeros_like(y)`` is a NumPy
array wherever the function made ``y`` with NumPy (``np.zeros((n, 3))``
filled from its arguments), while the contributions added into it are
arrays of the arguments' library where the function reads those (a Dask
array's adjoint is a Dask array). ``dy += c`` and ``dy[i] += c`` then ask
NumPy to add a Dask array into a NumPy array in place (``np.add(..., out=)``),
which Dask refuses; ``dy = dy + c`` dispatches (the sum is a Dask array)
and ``dy[i] = dy[i] + c`` writes the computed sum into the element. So the
same generated module runs on NumPy arrays and on arrays of other
libraries. Rebinding a name instead of adding into its array in place is
safe here: an adjoint is read through its name only (``own(dy[i])`` copies
what is read from an array that later statements change).

Before → after::

    dtr += matmul_adjoint(dout, b, tr, 1)    ──▶   dtr = dtr + matmul_adjoint(dout, b, tr, 1)
    drelatives[i] += dt8                     ──▶   drelatives[i] = drelatives[i] + dt8
"""

from __future__ import annotations

import ast
import copy

from s2s_ad.emit.code import Block, Stmt
from s2s_ad.syntax_walk import walk


def run(stmts: list) -> None:
    """Rewrite the additions in ``stmts`` and in the blocks it holds."""
    for s in stmts:
        if isinstance(s, Block):
            run(s.body)
            run(s.orelse)
        elif isinstance(s, Stmt) and isinstance(s.node, ast.AugAssign) \
                and isinstance(s.node.op, (ast.Add, ast.Sub)) \
                and isinstance(s.node.target, (ast.Name, ast.Subscript)):
            s.node = out_of_place(s.node)


def out_of_place(node: ast.AugAssign) -> ast.Assign:
    """``t = t + v`` for ``t += v`` (``-`` for ``-=``)."""
    read = _loaded(node.target)
    target = node.target
    target.ctx = ast.Store()
    return ast.fix_missing_locations(ast.copy_location(
        ast.Assign([target], ast.BinOp(read, node.op, node.value)), node))


def adds_to(node: ast.stmt) -> ast.expr | None:
    """The value ``node`` adds to its target when it is ``t = t + v`` with
    ``t`` a subscript (as :func:`run` writes ``t += v``): ``v``; else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            and isinstance(node.targets[0], ast.Subscript) \
            and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add) \
            and ast.dump(_loaded(node.value.left)) == ast.dump(_loaded(node.targets[0])):
        return node.value.right
    return None


def _loaded(e: ast.expr) -> ast.expr:
    e = copy.deepcopy(e)
    for n in walk(e):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return e
