"""Frontend, NumPy part: the calls of :mod:`s2s_ad.rules.numpy_more` that
are lowered to several ops, or that return a tuple.

Contract: each function takes the lowering (``lo``, in array mode) and the
call, and returns IR operands (a tuple of them where the call returns one),
or raises its located ``SourceError``.

* ``w, v = np.linalg.eigh(x)``: two ops, the eigenvalues and the
  eigenvectors (each with its rule), as a tuple to unpack.
* ``X, Y = np.meshgrid(x, y, indexing="xy")``: each input flattened and
  reshaped to lie along its axis, broadcast to the grid's shape and copied
  (NumPy's meshgrid returns copies; ``own`` is ``v.copy()``)::

      X, Y = np.meshgrid(x, y)   ──▶   X = own(np.broadcast_to(np.reshape(x, (1, -1)),
                                                               (np.size(y), np.size(x))))

* ``np.add(x, y)``, ``np.subtract``, ``np.multiply``, ``np.divide`` (which
  ``np.true_divide`` is), ``np.mod`` (``np.remainder``), ``np.floor_divide``:
  the operator's op, ``x + y`` ... (a list or tuple
  written out as an operand is the array ``np.array`` makes of it)::

      z = np.multiply(a, 3.0)    ──▶   z = a * 3.0

* ``scipy.linalg.solve_triangular``, ``cho_factor``, ``cho_solve``, where
  scipy is installed: ``c, low = cho_factor(a, lower=...)`` is the factor
  (one op) and ``low`` a constant, which ``cho_solve((c, low), b)`` reads.
"""

from __future__ import annotations

import ast
import sys

import numpy

from s2s_ad import ir
from s2s_ad.frontend import structures

SCIPY_LINALG = ("solve_triangular", "cho_factor", "cho_solve")
"""The scipy.linalg functions with a rule (scipy.linalg.NAME)."""


OPERATOR_UFUNCS = {numpy.add: ("add", "+"), numpy.subtract: ("sub", "-"),
                   numpy.multiply: ("mul", "*"), numpy.divide: ("div", "/"),
                   numpy.mod: ("mod", "%"), numpy.floor_divide: ("floordiv", "//")}
"""NumPy's ufuncs of two operands that are Python's operators on arrays ->
(the operator's op, its symbol): read as the operator, with its rule
(``np.mod(i, rows)`` is ``i % rows``; ``np.remainder`` and ``np.true_divide``
are the same objects; ``np.power`` has its own rule)."""


def special_call(lo, fn, node: ast.Call, var, hint):
    """The lowering of ``fn``'s call, if this module has one; else None."""
    if isinstance(fn, numpy.ufunc) and fn in OPERATOR_UFUNCS:
        return operator_call(lo, fn, node, var, hint)
    if fn is numpy.linalg.eigh:
        return eigh_call(lo, node)
    if fn is numpy.meshgrid:
        return meshgrid_call(lo, node)
    prim = scipy_linalg_prim(fn)
    if prim is None:
        return None
    if "scipy.linalg" not in lo.modules:
        lo.modules["scipy.linalg"] = lo.namer.claim("scipy_linalg")
    if prim == "scipy.linalg.cho_factor":
        return cho_factor_call(lo, node, var, hint)
    if prim == "scipy.linalg.cho_solve":
        return cho_solve_call(lo, node, var, hint)
    return lo.numpy_call(prim, node, var, hint)


def scipy_linalg_prim(fn) -> str | None:
    """The rule of a scipy.linalg function, if it has one; scipy is looked
    for only where the user's code has imported it."""
    linalg = sys.modules.get("scipy.linalg")
    if linalg is None:
        return None
    for name in SCIPY_LINALG:
        if fn is getattr(linalg, name, None):
            return f"scipy.linalg.{name}"
    return None


def _array(lo, node: ast.expr, what: str) -> ir.Operand:
    if isinstance(node, ast.Starred):
        raise lo.src.error(node, "`*args` in calls is not supported")
    v = lo.expr(node)
    if isinstance(v, tuple) or structures.is_structure(v):
        raise lo.src.error(node, f"`{what}` takes an array here")
    return v


def _keywords(lo, node: ast.Call, allowed: tuple) -> dict:
    what = ast.unparse(node.func)
    given = {}
    for k in node.keywords:
        if k.arg not in allowed:
            raise lo.src.error(k.value if k.arg else node,
                               f"`{what}`: the keyword argument {k.arg!r} is not supported")
        given[k.arg] = k.value
    return given


def operator_call(lo, fn, node: ast.Call, var, hint) -> ir.Operand:
    """``np.multiply(x, y)`` and the other ufuncs of :data:`OPERATOR_UFUNCS`:
    the operator's op on two numbers or arrays, as ``x * y`` is lowered
    (broadcasting alike)."""
    what = ast.unparse(node.func)
    prim, symbol = OPERATOR_UFUNCS[fn]
    if len(node.args) != 2 or node.keywords:
        raise lo.src.error(node, f"`{what}` is supported with two operands and no keywords "
                           f"(`{what}(x, y)`, which is `x {symbol} y`); `out`, `where` and "
                           "`dtype` are not supported")
    operands = []
    for a in node.args:
        if isinstance(a, (ast.List, ast.Tuple)):  # the array NumPy makes of it
            operands.append(lo.array_literal(a, None, None, None, set()))
            continue
        if isinstance(a, ast.Starred):
            raise lo.src.error(a, "`*args` in calls is not supported")
        v = lo.expr(a)
        if isinstance(v, tuple) or structures.is_structure(v) \
                or isinstance(v, ir.Value) and v.kind == "list":
            raise lo.src.error(a, f"`{what}` of a list or tuple: NumPy reads it as an array; "
                               f"make the array first, `np.array({ast.unparse(a)})`")
        operands.append(v)
    return lo.emit(prim, operands, node, var, hint=hint)


def eigh_call(lo, node: ast.Call) -> tuple:
    """``w, v = np.linalg.eigh(x)`` (``UPLO="L"``, NumPy's default, only)."""
    what = ast.unparse(node.func)
    uplo = _keywords(lo, node, ("UPLO",)).get("UPLO")
    if len(node.args) != 1 or uplo is not None and not (
            isinstance(uplo, ast.Constant) and uplo.value == "L"):
        raise lo.src.error(node, f"`{what}` takes one argument, a symmetric matrix (or a stack), "
                           "and reads its lower triangle (`UPLO=\"U\"` is not supported)")
    x = _array(lo, node.args[0], what)
    text = ast.unparse(node)
    return (lo.emit("np.linalg.eigh_values", [x], node, hint="w", text=text),
            lo.emit("np.linalg.eigh_vectors", [x], node, hint="v", text=text))


def meshgrid_call(lo, node: ast.Call) -> tuple:
    """``np.meshgrid(*xs, indexing="xy")``: one copied broadcast per input."""
    what = ast.unparse(node.func)
    given = _keywords(lo, node, ("indexing",))
    indexing = given.get("indexing", ast.Constant("xy"))
    if not (isinstance(indexing, ast.Constant) and indexing.value in ("xy", "ij")):
        raise lo.src.error(indexing, f"`{what}`: `indexing` must be \"xy\" or \"ij\" "
                           "(`sparse` and `copy` are not supported)")
    if not node.args:
        raise lo.src.error(node, f"`{what}` needs at least one array")
    xs = [_array(lo, a, what) for a in node.args]
    text = ast.unparse(node)
    n = len(xs)
    # the axis each input lies along: "xy" swaps the first two (x along columns)
    axis = [k for k in range(n)]
    if indexing.value == "xy" and n >= 2:
        axis[0], axis[1] = 1, 0
    sizes = [lo.emit("np.size", [x], node, text=text) for x in xs]
    by_axis = [sizes[axis.index(a)] for a in range(n)]
    grid = lo.emit("tuple", by_axis, node, text=text)
    out = []
    for k, x in enumerate(xs):
        shape = lo.emit("tuple", [ir.Const(-1 if a == axis[k] else 1) for a in range(n)], node,
                        text=text)
        lying = lo.emit("np.reshape", [x, shape], node, text=text)
        spread = lo.emit("np.broadcast_to", [lying, grid], node, text=text)
        # a copy (NumPy's meshgrid returns copies) by the array's own method, which
        # another array library (Dask) has where it lacks np.copy
        out.append(lo.emit("own.own", [spread], node, text=text))
    return tuple(out)


def _lower(lo, node: ast.Call, given: dict, at: int) -> bool:
    """The ``lower`` argument (by keyword, or at position ``at``): a constant bool."""
    what = ast.unparse(node.func)
    arg = given.get("lower", node.args[at] if len(node.args) > at else None)
    if arg is None:
        return False
    value = lo.const_attr(arg, "lower")
    if not isinstance(value, bool):
        raise lo.src.error(arg, f"`{what}`: `lower` must be True or False, a constant")
    return value


def cho_factor_call(lo, node: ast.Call, var, hint) -> tuple:
    """``c, low = scipy.linalg.cho_factor(a, lower=False)``: the factor and a
    constant."""
    what = ast.unparse(node.func)
    given = _keywords(lo, node, ("lower",))
    if not 1 <= len(node.args) <= 2:
        raise lo.src.error(node, f"`{what}` takes a matrix and `lower`")
    lower = _lower(lo, node, given, 1)
    a = _array(lo, node.args[0], what)
    c = lo.emit("scipy.linalg.cho_factor", [a], node, hint="c", text=ast.unparse(node),
                attrs={"lower": lower})
    return (c, ir.Const(lower))


def cho_solve_call(lo, node: ast.Call, var, hint) -> ir.Operand:
    """``scipy.linalg.cho_solve((c, low), b)``, ``low`` known when the
    gradient is generated (from ``cho_factor`` or a constant)."""
    what = ast.unparse(node.func)
    _keywords(lo, node, ())
    if len(node.args) != 2:
        raise lo.src.error(node, f"`{what}` takes `(c, lower)` and an array")
    pair = lo.expr(node.args[0])
    if isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], ir.Const) \
            and isinstance(pair[1].value, bool) and not isinstance(pair[0], tuple):
        c, lower = pair[0], pair[1].value
    else:
        raise lo.src.error(node.args[0], f"`{what}` takes the pair `cho_factor` returns, "
                           "`(c, lower)` with `lower` a constant True or False")
    b = _array(lo, node.args[1], what)
    text = f"{var} = {ast.unparse(node)}" if var else ast.unparse(node)
    return lo.emit("scipy.linalg.cho_solve", [c, b], node, var, hint=hint, text=text,
                   attrs={"lower": lower})
