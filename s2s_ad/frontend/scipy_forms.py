"""SciPy's and NumPy's statistics helpers read as NumPy code the rule table
already covers.

Contract: :func:`desugar` rewrites, in the ``def`` about to be lowered, the
calls below into expressions of primitives with rules, each computing what
SciPy or NumPy computes (equal up to rounding), so their gradients, tangents
and second derivatives are those of the table's rules. A call it cannot read
(another keyword, an argument read twice that calls something other than
NumPy or SciPy) is refused, located.

* ``scipy.special.softmax(x, axis=None)``: ``np.exp(x - logsumexp(x, axis,
  keepdims=True))``; ``scipy.special.log_softmax(x, axis=None)``: ``x -
  logsumexp(x, axis, keepdims=True)`` (the max-shifted ``logsumexp`` of
  ``numpy_attrs.logsumexp_call``);
* ``np.trapezoid(y, x=None, dx=1.0, axis=-1)`` (and ``np.trapz`` where NumPy
  still has it): ``np.sum(d * (y[1:] + y[:-1]), axis) / 2`` along ``axis``,
  ``d`` the constant ``dx`` or ``x[1:] - x[:-1]`` (``x`` given: along the last
  axis only, where a 1-D ``x`` broadcasts as NumPy's does);
* ``scipy.stats.norm.logpdf(x, loc=0, scale=1)``, ``.pdf``, ``.cdf``,
  ``.logcdf``, ``.sf``, ``.logsf`` (``norm`` imported from ``scipy.stats`` or
  read as ``scipy.stats.norm`` / ``stats.norm``): with ``z = (x - loc) /
  scale``, ``-z²/2 - log(scale) - log(2π)/2``, its ``exp``,
  ``scipy.special.ndtr(z)``, ``log_ndtr(z)``, ``ndtr(-z)``, ``log_ndtr(-z)``;
* ``scipy.stats.poisson.logpmf(k, mu)``: ``xlogy(k, mu) - mu - gammaln(k + 1)``;
* ``scipy.stats.t.logpdf(x, df, loc=0, scale=1)`` (and ``.pdf``): with ``z = (x -
  loc) / scale``, ``gammaln((df + 1) / 2) - gammaln(df / 2) - log(df π) / 2 -
  log(scale) - (df + 1) / 2 · log1p(z² / df)``;
* ``scipy.stats.multivariate_normal.logpdf(x, mean, cov)`` (and ``.pdf``):
  ``-(k log 2π + 2 Σ log diag L + Σ z²) / 2``, ``L = np.linalg.cholesky(cov)``,
  ``z = np.linalg.solve(L, (x - mean).T)`` (the lower triangle of ``cov`` read,
  as SciPy reads it);
* ``np.cov(m, bias=False, ddof=None)``: ``np.squeeze(c @ c.T / (n - ddof))``,
  ``c`` the rows of ``np.atleast_2d(m)`` centred on their means.

Before → after::

    norm.logpdf(y, mu, s)    -((y - mu) / s) ** 2 / 2 - np.log(s) - 0.9189385332046727
"""

from __future__ import annotations

import ast
import copy
import math
import sys
import types

import numpy

from s2s_ad.frontend import library_names
from s2s_ad.frontend.jax_batching import located
from s2s_ad.frontend.library_forms import bind_global
from s2s_ad.frontend.numpy_forms import _along, call_arguments
from s2s_ad.syntax_walk import walk

_MISSING = object()
_STATS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def desugar(src) -> None:
    """Rewrite ``src.tree``'s calls listed in the module docstring."""
    if getattr(src, "scipy_desugared", False):
        return
    src.scipy_desugared = True
    names = ("softmax", "log_softmax", "trapezoid", "trapz", "logpmf", "cov") + _STATS
    if not any(isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr
                                            in names or isinstance(n.func, ast.Name)
                                            and n.func.id in names)
               or isinstance(n, ast.Name) and _which(src.globals.get(n.id))
               for n in walk(src.tree)):
        return
    _Forms(src).visit(src.tree)
    ast.fix_missing_locations(src.tree)


def _which(obj) -> str | None:
    """The name of the form ``obj`` (a function resolved from the code) has."""
    if obj is None:
        return None
    if isinstance(obj, tuple):  # (distribution, method name)
        return obj[1]
    if any(obj is numpy.__dict__.get(name, _MISSING) for name in ("trapezoid", "trapz")):
        return "trapezoid"
    if obj is numpy.cov:
        return obj.__name__
    special = sys.modules.get("scipy.special")
    if special is not None:
        for name in ("softmax", "log_softmax"):
            if obj is getattr(special, name, None):
                return name
    return None


def _distribution(obj) -> str | None:
    stats = sys.modules.get("scipy.stats")
    if stats is None:
        return None
    for name in ("norm", "poisson", "multivariate_normal", "t"):
        if obj is getattr(stats, name, None):
            return name
    return None


class _Forms(ast.NodeTransformer):
    def __init__(self, src):
        self.src = src
        tree = src.tree
        self.local = {a.arg for a in walk(tree) if isinstance(a, ast.arg)} \
            | {n.id for n in walk(tree) if isinstance(n, ast.Name)
               and isinstance(n.ctx, ast.Store)} \
            | {n.name for n in walk(tree) if isinstance(n, ast.FunctionDef) and n is not tree}
        self.taken = {n.id for n in walk(tree) if isinstance(n, ast.Name)} | self.local \
            | set(src.globals)
        self.bound: dict = {}

    def resolve(self, node):
        """The global object ``node`` names; a distribution's method as the
        pair (distribution, method name)."""
        if isinstance(node, ast.Name):
            return None if node.id in self.local else self.src.globals.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, node.attr, None)
            dist = _distribution(base)
            methods = {"norm": _STATS, "poisson": ("logpmf",), "t": ("logpdf", "pdf"),
                       "multivariate_normal": ("logpdf", "pdf")}.get(dist, ())
            if node.attr in methods:
                prefix = {"multivariate_normal": "mvn_", "t": "t_"}.get(dist, "")
                return (dist, prefix + node.attr)
        return None

    def global_name(self, base: str, obj) -> str:
        return bind_global(self.src, base, obj, self.taken, self.local, self.bound)

    def np(self, name: str, *args, **keywords) -> ast.Call:
        return ast.Call(ast.Attribute(ast.Name(self.global_name("np", numpy), ast.Load()), name,
                                      ast.Load()), list(args),
                        [ast.keyword(k, v) for k, v in keywords.items()])

    def special(self, name: str, *args) -> ast.Call:
        import scipy.special
        return ast.Call(ast.Attribute(ast.Name(self.global_name("scipy_special", scipy.special),
                                               ast.Load()), name, ast.Load()), list(args), [])

    def twice(self, node: ast.expr, call: ast.Call) -> ast.expr:
        """``node`` read a second time: a copy of the expression, computed
        again; refused where it calls anything but NumPy or SciPy."""
        for n in walk(node):
            bad = isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom))
            if isinstance(n, ast.Call):
                obj = self.resolve(n.func)
                bad = not (library_names.belongs_to_numpy(obj) or isinstance(obj, tuple))
            if bad:
                raise self.src.error(node, f"`{ast.unparse(node)}` is read twice by the NumPy "
                                     f"form of `{ast.unparse(call.func)}`: assign it to a name "
                                     "first")
        return copy.deepcopy(node)

    def arguments(self, node: ast.Call, names: tuple, defaults: dict) -> dict:
        return call_arguments(self.src, node, names, defaults)

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        which = _which(self.resolve(node.func))
        if which is None:
            return node
        return located(getattr(self, which)(node), node)

    # -- the forms ------------------------------------------------------------

    def _lse(self, node: ast.Call):
        got = self.arguments(node, ("x", "axis"), {"axis": None})
        x = got["x"]
        lse = ast.Call(ast.Name(self.global_name("logsumexp", library_names.logsumexp),
                                ast.Load()), [self.twice(x, node)],
                       [ast.keyword("axis", got["axis"]),
                        ast.keyword("keepdims", ast.Constant(True))])
        return ast.BinOp(x, ast.Sub(), lse)

    def softmax(self, node: ast.Call) -> ast.expr:
        return self.np("exp", self._lse(node))

    def log_softmax(self, node: ast.Call) -> ast.expr:
        return self._lse(node)

    def trapezoid(self, node: ast.Call) -> ast.expr:
        got = self.arguments(node, ("y", "x", "dx", "axis"), {"x": None, "dx": 1.0, "axis": -1})
        axis = got["axis"]
        if not (isinstance(axis, ast.Constant) and type(axis.value) is int
                or isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub)
                and isinstance(axis.operand, ast.Constant) and type(axis.operand.value) is int):
            raise self.src.error(axis, "`axis` of `np.trapezoid` must be a constant int here")
        k = ast.literal_eval(axis)
        y = got["y"]
        head = _along(self.twice(y, node), k, ast.Slice(None, ast.Constant(-1), None))
        tail = _along(y, k, ast.Slice(ast.Constant(1), None, None))
        x = got["x"]
        if isinstance(x, ast.Constant) and x.value is None:
            d = got["dx"]
        else:
            if k != -1:
                raise self.src.error(node, "`np.trapezoid` with sample points `x` is read along "
                                     "the last axis only here (`axis=-1`); move the axis last "
                                     "with `np.moveaxis`")
            d = ast.BinOp(_along(x, -1, ast.Slice(ast.Constant(1), None, None)), ast.Sub(),
                          _along(self.twice(x, node), -1,
                                 ast.Slice(None, ast.Constant(-1), None)))
        total = self.np("sum", ast.BinOp(d, ast.Mult(), ast.BinOp(tail, ast.Add(), head)),
                        axis=ast.Constant(k))
        return ast.BinOp(total, ast.Div(), ast.Constant(2.0))

    def cov(self, node: ast.Call) -> ast.expr:
        got = self.arguments(node, ("m", "y", "rowvar", "bias", "ddof"),
                             {"y": None, "rowvar": True, "bias": False, "ddof": None})
        for name, want in (("y", None), ("rowvar", True)):
            if not (isinstance(got[name], ast.Constant) and got[name].value is want):
                raise self.src.error(got[name], f"`np.cov`: `{name}` is read as {want} only "
                                     "here (stack the variables as rows: `np.cov(m.T)`, "
                                     "`np.cov(np.stack([x, y]))`)")
        bias, ddof = got["bias"], got["ddof"]
        if not (isinstance(bias, ast.Constant) and type(bias.value) is bool):
            raise self.src.error(bias, "`np.cov`: `bias` must be True or False here")
        if isinstance(ddof, ast.Constant) and ddof.value is None:
            ddof = 0 if bias.value else 1
        else:
            ddof = self.int_constant(ddof, "`ddof` of `np.cov`")
        rows = self.np("atleast_2d", got["m"])
        centred = ast.BinOp(rows, ast.Sub(), self.np("mean", self.twice(rows, node),
                                                      axis=ast.Constant(1),
                                                      keepdims=ast.Constant(True)))
        again = self.twice(centred, node)
        n = ast.BinOp(ast.Subscript(ast.Attribute(self.twice(rows, node), "shape", ast.Load()),
                                    ast.Constant(1), ast.Load()), ast.Sub(), ast.Constant(ddof))
        product = ast.BinOp(centred, ast.MatMult(), ast.Attribute(again, "T", ast.Load()))
        return self.np("squeeze", ast.BinOp(product, ast.Div(), n))

    def int_constant(self, node: ast.expr, what: str) -> int:
        try:
            value = ast.literal_eval(node)
        except ValueError:
            value = None
        if type(value) is not int:
            raise self.src.error(node, f"{what} must be a constant int here")
        return value

    def _z(self, node: ast.Call):
        got = self.arguments(node, ("x", "loc", "scale"), {"loc": 0.0, "scale": 1.0})
        z = ast.BinOp(ast.BinOp(got["x"], ast.Sub(), got["loc"]), ast.Div(), got["scale"])
        return z, got["scale"]

    def logpdf(self, node: ast.Call) -> ast.expr:
        z, scale = self._z(node)
        square = ast.BinOp(ast.BinOp(z, ast.Pow(), ast.Constant(2)), ast.Div(), ast.Constant(2.0))
        out = ast.BinOp(ast.UnaryOp(ast.USub(), square), ast.Sub(),
                        self.np("log", self.twice(scale, node)))
        return ast.BinOp(out, ast.Sub(), ast.Constant(_HALF_LOG_2PI))

    def pdf(self, node: ast.Call) -> ast.expr:
        return self.np("exp", self.logpdf(node))

    def cdf(self, node: ast.Call) -> ast.expr:
        return self.special("ndtr", self._z(node)[0])

    def logcdf(self, node: ast.Call) -> ast.expr:
        return self.special("log_ndtr", self._z(node)[0])

    def sf(self, node: ast.Call) -> ast.expr:
        return self.special("ndtr", ast.UnaryOp(ast.USub(), self._z(node)[0]))

    def logsf(self, node: ast.Call) -> ast.expr:
        return self.special("log_ndtr", ast.UnaryOp(ast.USub(), self._z(node)[0]))

    def mvn_logpdf(self, node: ast.Call) -> ast.expr:
        got = self.arguments(node, ("x", "mean", "cov"), {})
        cov = got["cov"]
        factor = ast.Call(ast.Attribute(ast.Attribute(ast.Name(self.global_name("np", numpy),
                                                               ast.Load()), "linalg",
                                                      ast.Load()), "cholesky", ast.Load()),
                          [cov], [])
        gap = ast.BinOp(got["x"], ast.Sub(), got["mean"])
        solve = ast.Attribute(ast.Attribute(ast.Name(self.global_name("np", numpy), ast.Load()),
                                            "linalg", ast.Load()), "solve", ast.Load())
        z = ast.Call(solve, [factor, ast.Attribute(gap, "T", ast.Load())], [])
        square = self.np("sum", ast.BinOp(z, ast.Pow(), ast.Constant(2)), axis=ast.Constant(0))
        logdet = ast.BinOp(ast.Constant(2.0), ast.Mult(), self.np(
            "sum", self.np("log", self.np("diagonal", self.twice(factor, node)))))
        k = ast.Subscript(ast.Attribute(self.twice(cov, node), "shape", ast.Load()),
                          ast.UnaryOp(ast.USub(), ast.Constant(1)), ast.Load())
        total = ast.BinOp(ast.BinOp(ast.BinOp(k, ast.Mult(), ast.Constant(2 * _HALF_LOG_2PI)),
                                    ast.Add(), logdet), ast.Add(), square)
        return ast.BinOp(ast.Constant(-0.5), ast.Mult(), total)

    def mvn_pdf(self, node: ast.Call) -> ast.expr:
        return self.np("exp", self.mvn_logpdf(node))

    def t_logpdf(self, node: ast.Call) -> ast.expr:
        got = self.arguments(node, ("x", "df", "loc", "scale"), {"loc": 0.0, "scale": 1.0})
        df, scale = got["df"], got["scale"]
        z = ast.BinOp(ast.BinOp(got["x"], ast.Sub(), got["loc"]), ast.Div(), scale)
        half = ast.BinOp(ast.BinOp(self.twice(df, node), ast.Add(), ast.Constant(1.0)),
                         ast.Div(), ast.Constant(2.0))
        norming = ast.BinOp(self.special("gammaln", half), ast.Sub(), self.special(
            "gammaln", ast.BinOp(self.twice(df, node), ast.Div(), ast.Constant(2.0))))
        norming = ast.BinOp(norming, ast.Sub(), ast.BinOp(ast.Constant(0.5), ast.Mult(), self.np(
            "log", ast.BinOp(self.twice(df, node), ast.Mult(), ast.Constant(math.pi)))))
        norming = ast.BinOp(norming, ast.Sub(), self.np("log", self.twice(scale, node)))
        tail = self.np("log1p", ast.BinOp(ast.BinOp(z, ast.Pow(), ast.Constant(2)), ast.Div(),
                                          df))
        return ast.BinOp(norming, ast.Sub(), ast.BinOp(self.twice(half, node), ast.Mult(), tail))

    def t_pdf(self, node: ast.Call) -> ast.expr:
        return self.np("exp", self.t_logpdf(node))

    def logpmf(self, node: ast.Call) -> ast.expr:
        got = self.arguments(node, ("k", "mu"), {})
        k, mu = got["k"], got["mu"]
        out = ast.BinOp(self.special("xlogy", k, mu), ast.Sub(), self.twice(mu, node))
        return ast.BinOp(out, ast.Sub(), self.special(
            "gammaln", ast.BinOp(self.twice(k, node), ast.Add(), ast.Constant(1.0))))

