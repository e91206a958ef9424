"""Calls of the standard library's ``operator``, ``functools.reduce`` and
``statistics`` read as the Python they compute.

Contract: :func:`call` lowers each of these calls as the arithmetic it is,
so its derivative is that of the arithmetic, or returns None for anything
else:

* ``operator.add(a, b)``, ``mul``, ``sub``, ``truediv``, ``pow``,
  ``floordiv``, ``mod``, ``matmul``, ``neg``, ``pos``, ``abs`` and the
  comparisons: ``a + b``, ...;
* ``divmod(a, b)``: ``(a // b, a % b)``; ``min(xs, default=d)`` and ``max``
  of a sequence whose items are known while lowering: ``min(xs)``, or ``d``
  for an empty one;
* ``math.isnan(x)``, ``isinf``, ``isfinite``: ``x != x``, ``abs(x) == inf``,
  ``x - x == 0.0`` (comparisons, no derivative);
* ``math.isclose(a, b, rel_tol=1e-09, abs_tol=0.0)``: CPython's test,
  ``a == b or (abs(a - b) <= max(rel_tol * max(abs(a), abs(b)), abs_tol)
  and abs(a - b) != inf)`` (a comparison, no derivative);
* ``functools.reduce(f, xs, init)`` over a sequence known while lowering:
  ``f(f(init, x0), x1)...`` (without ``init``, from ``x0``), ``f`` a function
  of yours, a ``lambda``, ``operator.mul``, ``max``, ...;
* ``statistics.mean(xs)``, ``fmean``: ``sum(xs) / len(xs)`` (``mean``'s
  exact fractions are not reproduced: the same value up to rounding);
  ``variance``, ``stdev``, ``pvariance``, ``pstdev``: the sum of squared
  deviations from the mean over ``n - 1`` (``n``), its square root;
* ``statistics.median(xs)``, ``median_low``, ``median_high`` of a sequence
  whose length is known while lowering: the middle item(s) of ``sorted(xs)``
  (:mod:`s2s_ad.frontend.sorting`), ``s[n // 2]`` for an odd length,
  ``(s[n // 2 - 1] + s[n // 2]) / 2`` for an even one (``median_low``:
  ``s[(n - 1) // 2]``, ``median_high``: ``s[n // 2]``); a length known only
  when the code runs, or none, is refused, located.

Other functions of the standard library (whose source is not the user's)
are refused at the call, by :func:`is_standard_library`, rather than read
from their own source."""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import math
import operator
import os
import statistics
import sysconfig
import types

from s2s_ad import ir
from s2s_ad.frontend import sorting, structures, syntax
from s2s_ad.frontend.jax_batching import located
from s2s_ad.frontend.runtime_checks import raise_unless

__all__ = ["call", "is_standard_library"]

BINARY = {operator.add: ast.Add, operator.sub: ast.Sub, operator.mul: ast.Mult,
          operator.truediv: ast.Div, operator.pow: ast.Pow, operator.floordiv: ast.FloorDiv,
          operator.mod: ast.Mod, operator.matmul: ast.MatMult}
UNARY = {operator.neg: ast.USub, operator.pos: ast.UAdd}
COMPARE = {operator.lt: ast.Lt, operator.le: ast.LtE, operator.gt: ast.Gt,
           operator.ge: ast.GtE, operator.eq: ast.Eq, operator.ne: ast.NotEq}
FLOAT_TESTS = {math.isnan: "isnan", math.isinf: "isinf", math.isfinite: "isfinite"}
MEANS = (statistics.mean, statistics.fmean)
SPREADS = {statistics.variance: (1, False), statistics.stdev: (1, True),
           statistics.pvariance: (0, False), statistics.pstdev: (0, True)}
"""function -> (the degrees of freedom taken off ``n``, whether a square root)."""
MEDIANS = (statistics.median, statistics.median_low, statistics.median_high)


def call(lo, fn, node: ast.Call, var: str | None, hint: str | None):
    """The call ``node`` of ``fn`` lowered (see the module), or None."""
    try:
        hash(fn)
    except TypeError:
        return None
    if fn in BINARY or fn in UNARY or fn in COMPARE or fn is operator.abs:
        if node.keywords:
            raise lo.src.error(node, f"`{ast.unparse(node.func)}` takes positional arguments")
        args = node.args
        want = 2 if fn in BINARY or fn in COMPARE else 1
        if len(args) != want:
            raise lo.src.error(node, f"`{ast.unparse(node.func)}` takes {want} argument(s)")
        if fn in BINARY:
            new = ast.BinOp(args[0], BINARY[fn](), args[1])
        elif fn in COMPARE:
            new = ast.Compare(args[0], [COMPARE[fn]()], [args[1]])
        elif fn is operator.abs:
            new = ast.Call(ast.Name("abs", ast.Load()), [args[0]], [])
            if "abs" in lo.env or lo.src.globals.get("abs", abs) is not abs:
                return None
        else:
            new = ast.UnaryOp(UNARY[fn](), args[0])
        return lo.expr(located(new, node), var)
    if fn in FLOAT_TESTS and len(node.args) == 1 and not node.keywords:
        return lo.expr(located(_float_test(FLOAT_TESTS[fn], node.args[0]), node), var)
    if fn is builtins.divmod:
        return _divmod(lo, node, var)
    if (fn is builtins.min or fn is builtins.max) and len(node.args) == 1 \
            and [k.arg for k in node.keywords] == ["default"]:
        return _with_default(lo, fn, node, var)
    if fn is functools.reduce:
        return _reduce(lo, node, var)
    if fn in MEANS or fn in SPREADS:
        return _statistics(lo, fn, node, var)
    if fn in MEDIANS:
        return _median(lo, fn, node, var)
    if fn is math.isclose:
        return _isclose(lo, node, var)
    return None


def _isclose(lo, node: ast.Call, var):
    """``math.isclose(a, b, rel_tol=1e-09, abs_tol=0.0)`` as CPython decides
    it: ``a == b or (d <= max(rel_tol * max(abs(a), abs(b)), abs_tol) and d
    != inf)``, ``d = abs(a - b)`` (an infinity is close only to itself, a nan
    to nothing); a comparison, no derivative."""
    if len(node.args) != 2 or any(k.arg not in ("rel_tol", "abs_tol") for k in node.keywords):
        raise lo.src.error(node, "`math.isclose` takes two numbers and the keywords rel_tol, "
                           "abs_tol")
    given = {k.arg: k.value for k in node.keywords}

    def once(e):  # each argument evaluated once, as Python does (a name or constant: as it is)
        return e if isinstance(e, (ast.Name, ast.Constant)) else \
            syntax.bound(lo, f"({ast.unparse(e)})", lo.expr(e), e)
    a, b = (once(e) for e in node.args)
    rel, tol = (once(given[k]) if k in given else ast.Constant(d)
                for k, d in (("rel_tol", 1e-09), ("abs_tol", 0.0)))
    ok = lo.expr(located(ast.BoolOp(ast.And(), [
        ast.Compare(t, [ast.GtE()], [ast.Constant(0.0)]) for t in (rel, tol)]), node))
    if not (isinstance(ok, ir.Const) and ok.value):  # Python's check, where the code runs
        raise_unless(lo, ok, node, f"{ast.unparse(node)}: tolerances", "ValueError",
                     "tolerances must be non-negative")

    def call(f, *args):
        return ast.Call(ast.Name(f, ast.Load()), list(args), [])
    d = call("abs", ast.BinOp(a, ast.Sub(), b))
    bound = call("max", ast.BinOp(rel, ast.Mult(), call("max", call("abs", a), call("abs", b))),
                 tol)
    test = ast.BoolOp(ast.Or(), [
        ast.Compare(a, [ast.Eq()], [b]),
        ast.BoolOp(ast.And(), [ast.Compare(d, [ast.LtE()], [bound]),
                               ast.Compare(copy.deepcopy(d), [ast.NotEq()],
                                           [ast.Constant(math.inf)])])])
    return lo.expr(located(test, node), var)


def _float_test(which: str, x: ast.expr) -> ast.expr:
    """``math.isnan(x)`` is ``x != x``, ``math.isinf(x)`` is ``abs(x) == inf``,
    ``math.isfinite(x)`` is ``x - x == 0.0`` (inf - inf and nan - nan are nan):
    comparisons, with no derivative."""
    if which == "isnan":
        return ast.Compare(x, [ast.NotEq()], [x])
    if which == "isinf":
        return ast.Compare(ast.Call(ast.Name("abs", ast.Load()), [x], []), [ast.Eq()],
                           [ast.Constant(math.inf)])
    return ast.Compare(ast.BinOp(x, ast.Sub(), x), [ast.Eq()], [ast.Constant(0.0)])


def _divmod(lo, node: ast.Call, var):
    """``divmod(a, b)`` is the tuple ``(a // b, a % b)``, ``a`` and ``b``
    evaluated once."""
    if node.keywords or len(node.args) != 2:
        raise lo.src.error(node, "`divmod` takes two positional arguments")
    a, b = (syntax.bound(lo, f"divmod:{k}:{ast.unparse(e)}", lo.expr(e), e)
            for k, e in enumerate(node.args))
    pair = ast.Tuple([ast.BinOp(a, ast.FloorDiv(), b), ast.BinOp(a, ast.Mod(), b)], ast.Load())
    return lo.expr(located(pair, node))


def _with_default(lo, fn, node: ast.Call, var):
    """``min(xs, default=d)`` (``max``) of a sequence whose items are known
    while lowering: ``min(xs)``, or ``d`` when it has none."""
    what = ast.unparse(node.func)
    seq = lo.expr(node.args[0])
    items = structures.known_items(seq)
    if items is None:
        items = structures.made_items(lo, seq)
    if items is None:
        raise lo.src.error(node, f"`{what}(..., default=...)` is read of a tuple or list whose "
                           "items are known while lowering (a display, or a structure built "
                           "in the function); for another sequence test its length first")
    if not items:
        return lo.expr(node.keywords[0].value, var)
    name = syntax.bound(lo, f"{what}:{ast.unparse(node.args[0])}", seq, node.args[0])
    return lo.expr(located(ast.Call(node.func, [name], []), node), var)


def _reduce(lo, node: ast.Call, var):
    if node.keywords or not 2 <= len(node.args) <= 3:
        raise lo.src.error(node, "`functools.reduce` takes a function, a sequence and, "
                           "optionally, a start value")
    f, seq = node.args[0], node.args[1]
    items = list(structures.iteration(lo, seq))
    acc = node.args[2] if len(node.args) == 3 else None
    if acc is None:
        if not items:
            raise lo.src.error(node, "`functools.reduce` of an empty sequence without a "
                               "start value")
        acc = syntax.bound(lo, f"({ast.unparse(seq)})[0]", items.pop(0), node)
    for k, v in enumerate(items):
        item = syntax.bound(lo, f"({ast.unparse(seq)})[{k + (len(node.args) == 2)}]", v, node)
        acc = ast.Call(f, [acc, item], [])
    return lo.expr(located(acc, node), var)


def _statistics(lo, fn, node: ast.Call, var):
    what = ast.unparse(node.func)
    if node.keywords or len(node.args) != 1:
        raise lo.src.error(node, f"`{what}` takes one sequence here")
    seq = node.args[0]
    items = list(structures.iteration(lo, seq))
    minimum = 1 if fn in MEANS else 2 - (SPREADS[fn][0] == 0)
    if len(items) < minimum:
        raise lo.src.error(node, f"`{what}` of fewer than {minimum} items")
    names = [syntax.bound(lo, f"({ast.unparse(seq)})[{k}]", v, node) for k, v in enumerate(items)]
    n = len(names)
    total = names[0]
    for name in names[1:]:
        total = ast.BinOp(total, ast.Add(), name)
    mean = ast.BinOp(total, ast.Div(), ast.Constant(float(n)))
    if fn in MEANS:
        return lo.expr(located(mean, node), var)
    m = syntax.bound(lo, f"{what}:mean", lo.expr(located(mean, node)), node)
    squares = None
    for name in names:
        d = ast.BinOp(name, ast.Sub(), m)
        sq = ast.BinOp(d, ast.Mult(), d)
        squares = sq if squares is None else ast.BinOp(squares, ast.Add(), sq)
    ddof, root = SPREADS[fn]
    out = ast.BinOp(squares, ast.Div(), ast.Constant(float(n - ddof)))
    if root:
        out = ast.BinOp(out, ast.Pow(), ast.Constant(0.5))
    return lo.expr(located(out, node), var)


def _median(lo, fn, node: ast.Call, var):
    """``statistics.median(xs)``, ``median_low``, ``median_high``: ``s =
    sorted(xs)`` (:mod:`s2s_ad.frontend.sorting`: a compare-exchange network
    for a sequence known while lowering), then ``s[n // 2]`` for an odd length
    ``n`` (``median_high``: always; ``median_low``: ``s[(n - 1) // 2]``) and
    ``(s[n // 2 - 1] + s[n // 2]) / 2`` for an even one, as ``statistics``
    computes them. The length must be known while lowering: a list of any
    length is refused, located."""
    what = ast.unparse(node.func)
    if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        raise lo.src.error(node, f"`{what}` takes one sequence here")
    seq = node.args[0]
    ordered = located(ast.Call(ast.Name("sorted", ast.Load()), [seq], []), node)
    made = sorting.keyed_call(lo, builtins.sorted, ordered, None, None)
    items = structures.known_items(made)
    if items is None:
        raise lo.src.error(node, f"`{what}` of a sequence whose length is known only when the "
                           "code runs: s2s-ad reads it as the middle items of `sorted(xs)` for "
                           "a length known while lowering (a list or tuple written out, built "
                           "in the function with a length known then, or a list parameter); "
                           "for a list of any length, sort it and index it yourself, "
                           "`s = sorted(xs); s[len(s) // 2]`")
    n = len(items)
    if n == 0:
        raise lo.src.error(node, f"`{what}` of no items (Python raises StatisticsError)")
    if fn is statistics.median_low or fn is statistics.median and n % 2:
        return items[(n - 1) // 2]
    if fn is statistics.median_high:
        return items[n // 2]
    low, high = (syntax.bound(lo, f"sorted({ast.unparse(seq)})[{k}]", items[k], node)
                 for k in (n // 2 - 1, n // 2))
    mean = ast.BinOp(ast.BinOp(low, ast.Add(), high), ast.Div(), ast.Constant(2))
    return lo.expr(located(mean, node), var)


_STDLIB = tuple(os.path.realpath(p) + os.sep for p in {
    sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")} if p)


def is_standard_library(fn) -> bool:
    """Is ``fn`` a function of Python's standard library (its source file under
    the interpreter's stdlib folder, not under site-packages)?"""
    if not isinstance(fn, types.FunctionType):
        return False
    path = getattr(fn.__code__, "co_filename", "") or ""
    try:
        path = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return path.startswith(_STDLIB) and "site-packages" not in path \
        and "dist-packages" not in path
