"""NumPy functions read as NumPy code the rule table already covers.

Contract: :func:`desugar` rewrites, in the ``def`` about to be lowered, the
calls below into expressions of primitives with rules (slices, ``*``,
``np.sum``, ``np.minimum``/``np.maximum``, ``np.expand_dims``), each
computing what NumPy computes, so their gradients, tangents and second
derivatives are those of the table's rules (verified there), on NumPy or
Dask arrays alike. A call it cannot read (another keyword, a non-constant
``n``) is refused, located.

* ``np.diff(a, n=1, axis=-1, prepend=None, append=None)``: ``a[..., 1:] -
  a[..., :-1]``, ``n`` times, along ``axis`` (NumPy's own definition), after
  ``np.concatenate`` of ``prepend``, ``a`` and ``append`` where given (a
  number broadcast to the shape of ``a``'s first slice, as NumPy does); an
  ``axis`` known only when the code runs moved to the front first
  (``np.moveaxis``) and back;
* ``np.polyval(p, x)``, ``p`` a list or tuple written out: Horner's scheme as
  NumPy runs it, ``((0 * x + p0) * x + p1) * x + p2``; ``p`` an array:
  ``np.sum(x[..., None] ** k * p, axis=-1)``, ``k = len(p) - 1, ..., 0``;
* ``np.interp(x, xp, fp)``: the piecewise-linear interpolant as a sum of ramps,
  ``Σⱼ (fp[j+1] - fp[j]) · min(max(0, (x - xp[j]) / (xp[j+1] - xp[j])), 1) + fp[0]``,
  which for increasing ``xp`` equals NumPy's (``fp[0]`` left of ``xp[0]``,
  ``fp[-1]`` right of ``xp[-1]``): ``x``, ``xp`` and ``fp`` all get their
  derivatives; at a knot the derivative is the one from the left
  (``np.maximum``/``np.minimum`` give a tie to their first operand);
* ``for v in x.tolist():``: ``for v in x:`` (a 1-D array's elements, as
  numbers), after a check, kept in the generated code, that ``x`` is 1-D;
* ``np.column_stack([a, b])``: ``np.concatenate`` along axis 1 of each piece
  reshaped to ``(its rows, -1)`` (a 1-D piece a column);
* ``np.select(conds, values, default)`` (lists written out, or names bound
  once to such lists and not changed): nested ``np.where``, the first true
  condition's value;
* ``np.linalg.matrix_power(m, n)``, ``n`` a constant int ≥ 1: ``m @ m @ ...``;
* ``np.add.reduce``, ``np.multiply.reduce``, ``np.maximum.reduce``,
  ``np.minimum.reduce``, ``np.logical_and/or.reduce``, ``np.add.accumulate``,
  ``np.multiply.accumulate``: ``np.sum``, ``np.prod``, ``np.max``, ``np.min``,
  ``np.all``/``np.any``, ``np.cumsum``, ``np.cumprod`` with ``axis=0`` unless
  given (the ufunc methods' default).

Before → after::

    d = np.diff(y)                      d = y[..., 1:] - y[..., :-1]
"""

from __future__ import annotations

import ast
import copy

import numpy

from s2s_ad.errors import SourceError
from s2s_ad.frontend.jax_batching import located
from s2s_ad.names import unused
from s2s_ad.syntax_walk import walk

_MISSING = object()


def desugar(src) -> None:
    """Rewrite ``src.tree``'s calls of ``np.diff``, ``np.polyval``,
    ``np.interp`` and its ``for ... in x.tolist()`` loops (see the module
    docstring)."""
    if getattr(src, "numpy_desugared", False):
        return
    src.numpy_desugared = True
    tree = src.tree
    names: set[str] = set()
    stored: set[str] = set()
    method = False
    for n in walk(tree):  # (once: every function lowered is read here)
        if isinstance(n, ast.Name):
            names.add(n.id)
            if isinstance(n.ctx, ast.Store):
                stored.add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr in ("diff", "polyval", "interp", "tolist", "norm", "select",
                                    "column_stack", "matrix_power", "reduce", "accumulate"):
            method = True
    local = stored | {a.arg for a in walk(tree.args) if isinstance(a, ast.arg)}
    if not method and not any(n not in local and _target(src.globals.get(n, _MISSING))
                              for n in names):
        return
    taken = names | set(src.globals)
    _Forms(src, local, taken).visit(tree)
    ast.fix_missing_locations(tree)


def _target(obj) -> str | None:
    for name in ("diff", "polyval", "interp", "column_stack", "select"):
        if obj is getattr(numpy, name):
            return name
    if obj is numpy.linalg.matrix_power:
        return "matrix_power"
    if isinstance(getattr(obj, "__self__", None), numpy.ufunc) \
            and getattr(obj, "__name__", None) in ("reduce", "accumulate") \
            and (obj.__self__.__name__, obj.__name__) in _UFUNC_METHODS:
        return "ufunc_method"
    return None


_UFUNC_METHODS = {("add", "reduce"): "sum", ("multiply", "reduce"): "prod",
                  ("maximum", "reduce"): "max", ("minimum", "reduce"): "min",
                  ("logical_and", "reduce"): "all", ("logical_or", "reduce"): "any",
                  ("add", "accumulate"): "cumsum", ("multiply", "accumulate"): "cumprod"}
"""``np.add.reduce`` and the other ufunc methods read as the reduction they
compute (their axis defaults to 0, not None: written out)."""
UFUNC_METHOD_NAMES = frozenset({"reduce", "accumulate", "reduceat", "outer", "at"})
"""The methods of a NumPy ufunc (``np.add.outer``): read as functions, each
then lowered by a rule, rewritten above, or refused by name."""


def ufunc_method_refusal(src, node: ast.Call, fn) -> SourceError:
    """The located refusal of a ufunc method s2s-ad has no rule for
    (``np.maximum.reduceat``, ``np.add.outer``, ``np.subtract.accumulate``):
    it names the method, those that are supported, and how to give it a rule."""
    from s2s_ad.rules import RULES
    what = ast.unparse(node.func)
    ufunc = fn.__self__
    name = (f"np.{ufunc.__name__}.{fn.__name__}"
            if getattr(numpy, ufunc.__name__, None) is ufunc else what)  # (SciPy's ufuncs too)
    if name == "np.add.at":
        return src.error(node, f"`{what}` is supported as a statement, `np.add.at(y, idx, v)` "
                         "(it returns None; see docs/numpy.md)")
    known = sorted({f"np.{u}.{m}" for u, m in _UFUNC_METHODS} | {
        p for p in RULES if p.startswith("np.") and p.count(".") == 2
        and p.rsplit(".", 1)[1] in UFUNC_METHOD_NAMES} | {"np.add.at"})
    return src.error(node, f"`{what}`: the ufunc method `{name}` is not supported (no "
                     "derivative rule in s2s-ad); the ufunc methods it knows are "
                     + ", ".join(f"`{k}`" for k in known) + " (see docs/numpy.md); to "
                     "differentiate through this one, call it in a function of your own and "
                     "give that function a rule (s2s_ad.defvjp, see docs/custom_rules.md), or "
                     "write it with the functions s2s-ad knows")


class _Forms(ast.NodeTransformer):
    def __init__(self, src, local: set, taken: set):
        self.src, self.local, self.taken = src, local, taken
        self.np = next((k for k, v in src.globals.items() if v is numpy and k not in local),
                       None)
        self.before: list[ast.stmt] | None = None
        """Statements to run before the statement being rewritten (a norm's
        checks); None where a norm cannot be given them (see :meth:`norm`)."""

    def visit(self, node):
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            saved = self.before
            walrus = any(isinstance(n, ast.NamedExpr) for n in walk(node))
            self.before = None if walrus or isinstance(node, ast.While) else []
            try:
                out = super().visit(node)
                before = self.before or []
            finally:
                self.before = saved
            if before:
                return before + (out if isinstance(out, list) else [out])
            return out
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp, ast.IfExp, ast.BoolOp)):
            # evaluated elsewhere, later or not at all: no statement before it
            saved, self.before = self.before, None
            try:
                return super().visit(node)
            finally:
                self.before = saved
        return super().visit(node)

    def visit_If(self, node: ast.If):
        node.test = self.visit(node.test)  # (its checks go before the `if`)
        node.body = self.statements(node.body)
        node.orelse = self.statements(node.orelse)
        return node

    def statements(self, body: list) -> list:
        out = []
        for stmt in body:
            new = self.visit(stmt)
            out.extend(new if isinstance(new, list) else [new])
        return out

    def fresh(self, base: str) -> str:
        return unused(base, self.taken)

    def resolve(self, node: ast.expr):
        if isinstance(node, ast.Name):
            return _MISSING if node.id in self.local else self.src.globals.get(node.id, _MISSING)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return _MISSING if base is _MISSING else getattr(base, node.attr, _MISSING)
        return _MISSING

    def npattr(self, name: str, at: ast.AST) -> ast.expr:
        if self.np is None:
            raise self.src.error(at, f"`{ast.unparse(at)}` is read as NumPy code and needs "
                                 "`import numpy as np` in its module")
        return ast.Attribute(ast.Name(self.np, ast.Load()), name, ast.Load())

    # -- for v in x.tolist() ---------------------------------------------

    def visit_For(self, node: ast.For):
        self.generic_visit(node)
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
                and it.func.attr == "tolist" and not it.args and not it.keywords
                and isinstance(it.func.value, ast.Name) and self.np is not None):
            return node
        x = it.func.value
        check = ast.Assert(
            ast.Compare(ast.Call(self.npattr("ndim", it), [ast.Name(x.id, ast.Load())], []),
                        [ast.Eq()], [ast.Constant(1)]),
            ast.Constant(f"`for ... in {x.id}.tolist()` is differentiated for a 1-D array "
                         f"{x.id} (its elements, numbers); iterate over rows with "
                         f"`for row in {x.id}:`"))
        node.iter = ast.Name(x.id, ast.Load())
        for n in (check,):
            for sub in walk(n):
                if isinstance(sub, (ast.expr, ast.stmt)):
                    ast.copy_location(sub, it)
        return [check, node]

    # -- calls -------------------------------------------------------------

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if self.resolve(node.func) is numpy.linalg.norm:
            return self.norm(node)
        which = _target(self.resolve(node.func))
        if which is None:
            return node
        return located(getattr(self, which)(node), node)

    def arguments(self, node: ast.Call, names: tuple, defaults: dict) -> dict:
        return call_arguments(self.src, node, names, defaults)

    def int_constant(self, node: ast.expr, what: str) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
            return -node.operand.value
        if isinstance(node, ast.Name) and node.id not in self.local \
                and type(self.src.globals.get(node.id)) is int:
            return self.src.globals[node.id]
        raise self.src.error(node, f"{what} must be a constant int here (s2s-ad writes the "
                             "slices it stands for)")

    def once(self, node: ast.expr) -> tuple[ast.expr, ast.expr]:
        """``node`` as a first use and a later one: a name as it is, else
        bound by ``:=`` at the first use."""
        if isinstance(node, ast.Name):
            return node, ast.Name(node.id, ast.Load())
        name = self.fresh("np_arg")
        return (ast.NamedExpr(ast.Name(name, ast.Store()), node), ast.Name(name, ast.Load()))

    def diff(self, node: ast.Call) -> ast.expr:
        """``np.diff(a, n, axis, prepend, append)``: ``prepend``, ``a`` and
        ``append`` joined along ``axis`` (a number broadcast to the shape of
        ``a``'s first slice along it, as NumPy does), then ``n``
        differences of neighbours. An ``axis`` known only when the code runs
        (not a constant int) is moved to the front first and back after."""
        got = self.arguments(node, ("a", "n", "axis", "prepend", "append"),
                             {"n": 1, "axis": -1, "prepend": None, "append": None})
        n = self.int_constant(got["n"], "`n` of `np.diff`")
        if n < 0:
            raise self.src.error(got["n"], "`np.diff`: the order `n` must be non-negative")
        try:
            axis, moved = self.int_constant(got["axis"], "`axis` of `np.diff`"), None
        except SourceError:
            if isinstance(got["axis"], ast.Constant):
                raise
            axis, moved = 0, got["axis"]  # an int where the code runs (NumPy checks it)
        out = got["a"]
        if moved is not None:
            out = ast.Call(self.npattr("moveaxis", node), [out, moved, ast.Constant(0)], [])
        ends = {k: got[k] for k in ("prepend", "append")
                if not (isinstance(got[k], ast.Constant) and got[k].value is None)}
        if ends:
            first, again = self.once(self.named(out, "diff_arg", node))
            reads = iter([first, again, copy.deepcopy(again)])  # in the order they run
            parts = []
            for k in ("prepend", "a", "append"):
                if k == "a":
                    parts.append(next(reads))
                elif k in ends:
                    parts.append(self._end(ends[k], moved, _along(
                        next(reads), axis, ast.Slice(None, ast.Constant(1), None)), node))
            out = ast.Call(self.npattr("concatenate", node), [ast.Tuple(parts, ast.Load())],
                           [ast.keyword("axis", ast.Constant(axis))])
        for _ in range(n):
            first, again = self.once(out)
            out = ast.BinOp(_along(first, axis, ast.Slice(ast.Constant(1), None, None)),
                            ast.Sub(),
                            _along(again, axis, ast.Slice(None, ast.Constant(-1), None)))
        if moved is not None:
            out = ast.Call(self.npattr("moveaxis", node),
                           [out, ast.Constant(0), copy.deepcopy(moved)], [])
        return out

    def named(self, value: ast.expr, base: str, node: ast.Call) -> ast.expr:
        """``value`` itself where it is a name or a constant, else a fresh
        name it is assigned to in a statement before (read in an arm of a
        conditional expression, where ``:=`` is not lowered); refused, located,
        where no statement can go before (a comprehension, a lambda, ...)."""
        if isinstance(value, (ast.Name, ast.Constant)):
            return value
        if self.before is None:
            raise self.src.error(node, f"`{ast.unparse(node)}` here: assign its arguments to "
                                 "names first")
        name = self.fresh(base)
        self.before.append(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value),
                                             node))
        return ast.Name(name, ast.Load())

    def _end(self, end: ast.expr, moved, first: ast.expr, node: ast.Call) -> ast.expr:
        """``prepend``/``append`` of ``np.diff`` as NumPy joins it: a number
        broadcast to the shape of ``first`` (``a``'s first slice along the
        axis), an array as it is (``np.concatenate`` checks its shape), its
        axis ``moved`` to the front where the axis is known only when the code
        runs."""
        end = self.named(end, "diff_end", node)
        again = copy.deepcopy(end)
        array = copy.deepcopy(again)
        if moved is not None:
            array = ast.Call(self.npattr("moveaxis", node),
                             [array, copy.deepcopy(moved), ast.Constant(0)], [])
        return ast.IfExp(ast.Compare(ast.Call(self.npattr("ndim", node), [end], []), [ast.Eq()],
                                     [ast.Constant(0)]),
                         ast.Call(self.npattr("broadcast_to", node), [again, ast.Call(
                             self.npattr("shape", node), [first], [])], []), array)

    def polyval(self, node: ast.Call) -> ast.expr:
        got = self.arguments(node, ("p", "x"), {})
        p, x = got["p"], got["x"]
        if isinstance(p, (ast.List, ast.Tuple)):
            if not p.elts or any(isinstance(e, ast.Starred) for e in p.elts):
                raise self.src.error(p, "`np.polyval` of an empty or starred list")
            first, again = self.once(x)
            out = ast.BinOp(ast.BinOp(ast.Constant(0.0), ast.Mult(), first), ast.Add(), p.elts[0])
            for c in p.elts[1:]:
                out = ast.BinOp(ast.BinOp(out, ast.Mult(), copy.deepcopy(again)), ast.Add(), c)
            return out
        first, again = self.once(p)
        powers = ast.BinOp(
            ast.Call(self.npattr("expand_dims", node), [x, ast.Constant(-1)], []), ast.Pow(),
            ast.Call(self.npattr("arange", node),
                     [ast.BinOp(ast.Subscript(ast.Call(self.npattr("shape", node), [first], []),
                                              ast.Constant(0), ast.Load()),
                                ast.Sub(), ast.Constant(1)),
                      ast.Constant(-1), ast.Constant(-1)], []))
        return ast.Call(self.npattr("sum", node), [ast.BinOp(powers, ast.Mult(), again)],
                        [ast.keyword("axis", ast.Constant(-1))])

    def norm(self, node: ast.Call) -> ast.expr:
        """``np.linalg.norm(x, ord)`` without ``axis``: NumPy's vector norm of a
        1-D ``x``, its matrix norm of a 2-D one, decided where the code runs
        (``VECTOR if np.ndim(x) == 1 else MATRIX``), after checks kept in the
        generated code: ``x`` has 1 or 2 dimensions (NumPy's ValueError), and
        is 1-D for an ``ord`` whose matrix norm has no rule (2: the spectral
        norm). The vector and matrix norms are ``np.linalg.norm`` along an
        axis (frontend/numpy_attrs.norm_call): for a matrix, ord 1 / -1 the
        max / min of the columns' 1-norms, ±inf those of the rows'."""
        names = ("x", "ord", "axis", "keepdims")
        if len(node.args) > 4 or any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg not in names for k in node.keywords):
            return node
        got = dict(zip(names, node.args))
        got.update((k.arg, k.value) for k in node.keywords)
        order = _order(got.get("ord"), self.resolve)
        if order is None or "x" not in got or not _none_or_false(got.get("axis")) \
                or not _none_or_false(got.get("keepdims")):
            return node  # a 2-norm / Frobenius, or an axis: norm_call reads it as it is
        if self.before is None or self.np is None:
            return node  # (refused where it is lowered: give `axis`)
        x = got["x"]
        if isinstance(x, ast.Name):
            t = x.id
        else:
            t = self.fresh("norm_arg")
            self.before.append(ast.Assign([ast.Name(t, ast.Store())], x))

        def arr() -> ast.Name:
            return ast.Name(t, ast.Load())

        def ndim() -> ast.expr:
            return ast.Call(self.npattr("ndim", node), [arr()], [])

        def vector_norm(axis: int) -> ast.expr:
            return ast.Call(
                ast.Attribute(self.npattr("linalg", node), "norm", ast.Load()),
                [arr(), copy.deepcopy(got["ord"])] if axis == -1 else [arr(), ast.Constant(1)],
                [ast.keyword("axis", ast.Constant(axis))])

        def check(test: ast.expr, message: str) -> ast.stmt:
            return ast.If(test, [ast.Raise(ast.Call(ast.Name("ValueError", ast.Load()),
                                                    [ast.Constant(message)], []), None)], [])

        self.before.append(check(
            ast.BoolOp(ast.And(), [ast.Compare(ndim(), [ast.NotEq()], [ast.Constant(1)]),
                                   ast.Compare(ndim(), [ast.NotEq()], [ast.Constant(2)])]),
            "Improper number of dimensions to norm."))
        vector = vector_norm(-1)
        if order not in (1, -1, numpy.inf, -numpy.inf):
            self.before.append(check(
                ast.Compare(ndim(), [ast.NotEq()], [ast.Constant(1)]),
                f"`{ast.unparse(node)}` of a matrix (its matrix norm of that order) is not "
                "differentiated by s2s-ad; give `axis` for vector norms"))
            out = vector
        else:
            along = 0 if order in (1, -1) else 1
            matrix = ast.Call(self.npattr("max" if order > 0 else "min", node),
                              [vector_norm(along)], [])
            out = ast.IfExp(ast.Compare(ndim(), [ast.Eq()], [ast.Constant(1)]), vector, matrix)
        for n in self.before:
            for sub in walk(n):
                if isinstance(sub, (ast.expr, ast.stmt)) and not hasattr(sub, "lineno"):
                    ast.copy_location(sub, node)
                    sub.end_lineno, sub.end_col_offset = node.end_lineno, node.end_col_offset
        return out

    def column_stack(self, node: ast.Call) -> ast.expr:
        """``np.column_stack((a, b))``: each piece as a matrix of its rows
        (``np.reshape(v, (np.shape(v)[0], -1))``: a 1-D one a column, a 2-D
        one as it is), joined along axis 1, as NumPy does."""
        got = self.arguments(node, ("tup",), {})
        seq = got["tup"]
        if not isinstance(seq, (ast.List, ast.Tuple)) or not seq.elts \
                or any(isinstance(e, ast.Starred) for e in seq.elts):
            raise self.src.error(seq, "`np.column_stack` of a list or tuple written out "
                                 "(`np.column_stack([a, b])`)")
        pieces = []
        for e in seq.elts:
            first, again = self.once(e)
            rows = ast.Subscript(ast.Call(self.npattr("shape", node), [again], []),
                                 ast.Constant(0), ast.Load())  # (after `first`: a `:=`)
            pieces.append(ast.Call(self.npattr("reshape", node), [first, ast.Tuple(
                [rows, ast.Constant(-1)], ast.Load())], []))
        return ast.Call(self.npattr("concatenate", node), [ast.List(pieces, ast.Load())],
                        [ast.keyword("axis", ast.Constant(1))])

    def select(self, node: ast.Call) -> ast.expr:
        """``np.select([c0, c1], [v0, v1], default)``: the value of the first
        true condition, ``np.where(c0, v0, np.where(c1, v1, default))``."""
        got = self.arguments(node, ("condlist", "choicelist", "default"), {"default": 0})
        conds, values = self.items(got["condlist"]), self.items(got["choicelist"])
        if not conds or not values or len(conds) != len(values):
            raise self.src.error(node, "`np.select` of two lists of the same length written "
                                 "out (`np.select([a > 0, a < 0], [a, -a], 0.0)`), or "
                                 "bound once to names (`condlist = [x < 3, x > 3]`)")
        out = got["default"]
        for c, v in reversed(list(zip(conds, values))):
            out = ast.Call(self.npattr("where", node), [c, v, out], [])
        return out

    def items(self, node: ast.expr) -> list | None:
        """The items of a list or tuple written out, or of a name bound once, to
        one written out, and not changed (``condlist = [x < 3, x > 3]``, then
        ``condlist[0]``, ...); None otherwise."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return None if any(isinstance(e, ast.Starred) for e in node.elts) else node.elts
        if not isinstance(node, ast.Name):
            return None
        binds = [n for n in walk(self.src.tree) if isinstance(n, ast.Name)
                 and n.id == node.id and not isinstance(n.ctx, ast.Load)]
        made = [n for n in walk(self.src.tree) if isinstance(n, ast.Assign)
                and len(n.targets) == 1 and n.targets[0] in binds]
        changed = any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                      and n.value.id == node.id or isinstance(n, ast.Subscript)
                      and isinstance(n.value, ast.Name) and n.value.id == node.id
                      and not isinstance(n.ctx, ast.Load) for n in walk(self.src.tree))
        if len(binds) != 1 or len(made) != 1 or changed \
                or not isinstance(made[0].value, (ast.List, ast.Tuple)) \
                or any(isinstance(e, ast.Starred) for e in made[0].value.elts):
            return None
        return [ast.Subscript(ast.Name(node.id, ast.Load()), ast.Constant(k), ast.Load())
                for k in range(len(made[0].value.elts))]

    def matrix_power(self, node: ast.Call) -> ast.expr:
        """``np.linalg.matrix_power(m, n)``, ``n`` a constant int of at least
        1: ``m @ m @ ... @ m``."""
        got = self.arguments(node, ("a", "n"), {})
        n = self.int_constant(got["n"], "the power of `np.linalg.matrix_power`")
        if n < 1:
            raise self.src.error(got["n"], "`np.linalg.matrix_power` is differentiated for "
                                 "powers of at least 1 (for 0, `np.eye(n)`; for negative "
                                 "ones, of `np.linalg.inv(m)`)")
        first, again = self.once(got["a"])
        out = first
        for _ in range(n - 1):
            out = ast.BinOp(out, ast.MatMult(), copy.deepcopy(again))
        return out

    def ufunc_method(self, node: ast.Call) -> ast.expr:
        """``np.add.reduce(x, axis=0)``, ``np.multiply.accumulate(x)``, ...: the
        reduction (``np.sum``, ``np.cumprod``, ...) along ``axis``, 0 unless
        given, as the ufunc's method defaults to."""
        fn = self.resolve(node.func)
        name = _UFUNC_METHODS[(fn.__self__.__name__, fn.__name__)]
        keys = ("array", "axis", "keepdims") if fn.__name__ == "reduce" else ("array", "axis")
        given = {k.arg for k in node.keywords} | set(keys[:len(node.args)])
        got = self.arguments(node, keys, {"axis": 0, "keepdims": False}
                             if fn.__name__ == "reduce" else {"axis": 0})
        keywords = [ast.keyword(k, got[k]) for k in keys[1:] if k == "axis" or k in given]
        return ast.Call(self.npattr(name, node), [got["array"]], keywords)

    def interp(self, node: ast.Call) -> ast.expr:
        got = self.arguments(node, ("x", "xp", "fp"), {})
        xp, xp2 = self.once(got["xp"])
        fp, fp2 = self.once(got["fp"])
        xp3, fp3 = copy.deepcopy(xp2), copy.deepcopy(fp2)

        def part(name: ast.expr, s: ast.Slice) -> ast.expr:
            return ast.Subscript(copy.deepcopy(name), s, ast.Load())

        def head(name):
            return part(name, ast.Slice(None, ast.Constant(-1), None))

        def tail(name):
            return part(name, ast.Slice(ast.Constant(1), None, None))
        # the ramps: (x - xp[j]) / (xp[j+1] - xp[j]), held to [0, 1]
        ramp = ast.BinOp(
            ast.BinOp(ast.Call(self.npattr("expand_dims", node), [got["x"], ast.Constant(-1)],
                               []), ast.Sub(), head(xp)),
            ast.Div(), ast.BinOp(tail(xp2), ast.Sub(), head(xp3)))
        held = ast.Call(self.npattr("minimum", node), [
            ast.Call(self.npattr("maximum", node), [ast.Constant(0.0), ramp], []),
            ast.Constant(1.0)], [])
        steps = ast.BinOp(tail(fp), ast.Sub(), head(fp2))
        total = ast.Call(self.npattr("sum", node), [ast.BinOp(steps, ast.Mult(), held)],
                         [ast.keyword("axis", ast.Constant(-1))])
        # (fp[0] after the sum, where a `:=` binding fp comes first)
        return ast.BinOp(total, ast.Add(), ast.Subscript(fp3, ast.Constant(0), ast.Load()))


def _along(base: ast.expr, axis: int, s: ast.Slice) -> ast.expr:
    """``base[..., s]`` along ``axis`` (``base[:, s]`` for axis 1,
    ``base[..., s, :]`` for axis -2)."""
    if axis == -1:
        index = ast.Tuple([ast.Constant(...), s], ast.Load())
    elif axis >= 0:
        index = ast.Tuple([ast.Slice(None, None, None)] * axis + [s], ast.Load()) if axis \
            else s
    else:
        index = ast.Tuple([ast.Constant(...), s] + [ast.Slice(None, None, None)] * (-axis - 1),
                          ast.Load())
    return ast.Subscript(base, index, ast.Load())


def _none_or_false(node) -> bool:
    return node is None or isinstance(node, ast.Constant) and (node.value is None
                                                                or node.value is False)


def _order(node, resolve):
    """The number ``ord`` is (``1``, ``-2``, ``np.inf``, ``-np.inf``), or None
    (absent, None, 'fro', or not a constant)."""
    if node is None:
        return None
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    inner = node.operand if negative else node
    if isinstance(inner, ast.Constant) and type(inner.value) in (int, float):
        value = inner.value
    elif isinstance(inner, (ast.Attribute, ast.Name)) and resolve(inner) == numpy.inf:
        value = numpy.inf
    else:
        return None
    if value == 0:
        return None
    return -value if negative else value


def call_arguments(src, node: ast.Call, names: tuple, defaults: dict) -> dict:
    """The arguments of the library call ``node`` by the parameter ``names``
    the source form reads, ``defaults`` (values or expressions) for those not
    given; anything else (``*args``, another keyword, too many) refused,
    located."""
    what = ast.unparse(node.func)
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords):
        raise src.error(node, f"`{what}`: `*args`/`**kwargs` are not supported here")
    if len(node.args) > len(names):
        raise src.error(node, f"`{what}` takes the arguments {', '.join(names)} here")
    got = dict(zip(names, node.args))
    for k in node.keywords:
        if k.arg not in names or k.arg in got:
            raise src.error(k.value, f"`{what}`: the keyword `{k.arg}` is not "
                            f"supported (s2s-ad reads {', '.join(names)})")
        got[k.arg] = k.value
    for name, value in defaults.items():
        if name not in got:
            got[name] = value if isinstance(value, ast.AST) else ast.Constant(value)
    missing = [n for n in names if n not in got]
    if missing:
        raise src.error(node, f"`{what}` needs {', '.join(missing)}")
    return got
