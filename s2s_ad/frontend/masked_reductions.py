"""NumPy keyword forms read as the calls the rule table has.

Contract: for the lowering's ``numpy_call`` (array mode),

* :func:`where_reduction` lowers ``np.sum(x, where=m)``, ``np.mean(x,
  where=m)`` (and the methods ``x.sum(where=m)``, ``x.mean(where=m)``, with
  ``axis``/``keepdims`` as given) as the reduction of ``np.where(m, x, 0.0)``:
  the elements ``m`` leaves out add nothing (nor their NaNs), and their
  derivative is 0. The mean divides by the number of elements kept along the
  same axes, ``np.sum(np.where(m, np.ones_like(x), 0.0), ...)``, a constant.
  ``x`` and ``m`` are lowered once each; the kept values are brought to
  ``x``'s shape (``np.broadcast_to``), which raises, as NumPy's reduction
  does, where the mask has more axes or longer ones (``np.where`` would
  broadcast ``x`` to it, and the sum count elements more than once).
* :func:`clip_bounds` reads ``np.clip(a, a_min=..., a_max=...)``,
  ``np.clip(a, min=..., max=...)`` and ``a.clip(min=...)``/``a.clip(max=...)``
  as the positional call ``np.clip(a, lo, hi)``, a bound not given ``None``
  (``np.clip(x, None, hi)`` is ``np.minimum(x, hi)``).

Before → after, for ``s = np.mean(x, where=x > 0.0)``::

    t1 = np.broadcast_to(np.where(x > 0.0, x, 0.0), np.shape(x))
    t2 = np.where(x > 0.0, np.ones_like(x), 0.0)
    s = np.sum(t1) / np.sum(t2)
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.names import unused


def where_reduction(lo, prim: str, node: ast.Call, var, hint, text) -> ir.Operand:
    """``np.sum(x, ..., where=m)`` or ``np.mean(x, ..., where=m)`` (``node``
    a call with a ``where`` keyword; see the module docstring)."""
    what = ast.unparse(node.func)
    where = next(k.value for k in node.keywords if k.arg == "where")
    keywords = [k for k in node.keywords if k.arg != "where"]
    if not node.args or isinstance(node.args[0], ast.Starred):
        raise lo.src.error(node, f"`{what}` with `where=` takes the array first")
    x = lo.expr(node.args[0])
    mask = lo.expr(where)
    for value, at in ((x, node.args[0]), (mask, where)):
        if not isinstance(value, (ir.Value, ir.Const)) or isinstance(value, ir.Value) \
                and value.kind in ("tuple", "list"):
            raise lo.src.error(at, f"`{what}` with `where=` takes an array and a mask of "
                               "its shape (or one broadcast to it)")
    zero = ir.Const(0.0)
    kept = lo.emit("np.where", [mask, x, zero], where, hint="kept")
    # NumPy broadcasts the mask to x's shape and raises where it cannot (a mask
    # of more axes, or longer ones), where np.where broadcasts x to the mask's
    # and would sum more: the kept values brought to x's shape raise as NumPy
    # does (the mask itself stays the comparison it is, for reverse/masked.py)
    shape = lo.emit("shape", [x], where, hint="shape")
    kept = lo.emit("np.broadcast_to", [kept, shape], where, hint="kept")
    total = _reduce(lo, kept, node, keywords, "np.sum",
                    var if prim == "np.sum" else None, hint, text)
    if prim == "np.sum":
        return total
    ones = lo.emit("np.ones_like", [x], where, hint="ones")
    count = _reduce(lo, lo.emit("np.where", [mask, ones, zero], where, hint="kept"),
                    node, keywords, "np.sum", None, "count", None)
    return lo.emit("div", [total, count], node, var, hint=hint, text=text)


def _reduce(lo, value: ir.Value, node: ast.Call, keywords: list, prim: str, var, hint,
            text) -> ir.Operand:
    """``np.sum(value, *rest, **keywords)``, ``value`` bound to a name of its
    own while the call is lowered (the other arguments as written)."""
    name = unused("masked", set(lo.env) | set(lo.namer.taken))
    lo.env[name] = value
    try:
        call = ast.Call(node.func, [ast.Name(name, ast.Load()), *node.args[1:]], keywords)
        ast.copy_location(call, node)
        ast.fix_missing_locations(call)
        return lo.numpy_call(prim, call, var, hint, text)
    finally:
        lo.env.pop(name, None)


_BOUNDS = {"a_min": 1, "a_max": 2, "min": 1, "max": 2}


def clip_bounds(lo, node: ast.Call) -> ast.Call:
    """``node``, a call of ``np.clip`` (or ``a.clip``, read as one), with its
    bounds given by keyword moved to their positions; the call itself when
    none is."""
    if not any(k.arg in _BOUNDS for k in node.keywords):
        return node
    what = ast.unparse(node.func)
    args: list = list(node.args)
    if any(isinstance(a, ast.Starred) for a in args) or len(args) > 3 or not args:
        raise lo.src.error(node, f"`{what}` takes the array and its two bounds here")
    args += [None] * (3 - len(args))
    rest = []
    for k in node.keywords:
        at = _BOUNDS.get(k.arg)
        if at is None:
            rest.append(k)
            continue
        if args[at] is not None:
            raise lo.src.error(k.value, f"`{what}`: the bound `{k.arg}` is given twice")
        args[at] = k.value
    args = [ast.copy_location(ast.Constant(None), node) if a is None else a for a in args]
    call = ast.Call(node.func, args, rest)
    return ast.copy_location(call, node)
