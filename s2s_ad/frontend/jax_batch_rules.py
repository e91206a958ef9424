"""Frontend: the batching rules of :mod:`s2s_ad.frontend.jax_batching` for
NumPy functions that take an axis or build arrays: reductions, ``cumsum``
and ``cumprod``, ``roll``, ``full``, ``einsum``.

Contract: :class:`OperationRules` is mixed into the batching rewrite (which
gives it ``expr``, ``verbatim``, ``call``, ``named``, ``flat``,
``trailing``, ``reads_batched``); each method returns ``(expression,
batched)`` for one call whose array operand is batched (its rows on the last
axis), or raises :class:`NoRule`, and the mapped body keeps its loop. An axis
``k`` of a row is the axis ``k`` of the batched value for ``k >= 0`` and
``k - 1`` for ``k < 0``; an axis of ``None`` (the whole row) is axis 0 of
``np.reshape(x, (-1, n))``.

Before → after (rows on the last axis)::

    jnp.sum(x, axis=-1)        ──▶    jnp.sum(x, axis=-2)
    jnp.cumsum(x)              ──▶    jnp.cumsum(jnp.reshape(x, (-1, jnp.shape(x)[-1])), axis=0)
    jnp.einsum("ij,j->i", a, w) ──▶   jnp.einsum("ijz,j->iz", a, w)      (a batched, w not)
"""

from __future__ import annotations

import ast
import copy

import numpy

from s2s_ad.frontend import runtime_checks


class NoRule(Exception):
    """An operation of the mapped body has no batching rule: keep the loop."""


def _twins(names, module=numpy) -> set:
    return {id(getattr(module, n)) for n in names if hasattr(module, n)}


REDUCTIONS = {"sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std"}
REDUCE_FNS = _twins(REDUCTIONS)
CUMULATIVE = {"cumsum", "cumprod"}
SAME_SHAPE = _twins(("zeros_like", "ones_like", "copy"))
ELEMENTWISE_FNS = _twins(("where", "clip"))
COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.Mod, ast.FloorDiv)


def logsumexp():
    try:
        import scipy.special
        return scipy.special.logsumexp
    except ImportError:  # scipy is optional
        return None




class OperationRules:
    """Rules for the NumPy functions that take an axis or build arrays."""

    def rows_first(self, e) -> ast.Call:
        """``np.moveaxis(e, -1, 0)``: the rows of a batched value in front."""
        return self.call("moveaxis", e, _minus_one(), ast.Constant(0))

    def rows_last(self, e) -> ast.Call:
        """``np.moveaxis(e, 0, -1)``: the rows in front moved back last."""
        return self.call("moveaxis", e, ast.Constant(0), _minus_one())

    def reduced(self, name: str, callee, x, args: list, keywords: list, method: bool):
        """A reduction or cumulative function of the batched ``x``."""
        if len(args) > 1:
            raise NoRule
        given = {"axis": args[0]} if args else {}
        allowed = {"axis", "keepdims"} | ({"ddof"} if name in ("var", "std") else set())
        if name in CUMULATIVE:
            allowed = {"axis"}
        for k in keywords:
            if k.arg not in allowed or k.arg in given:
                raise NoRule
            given[k.arg] = k.value
        if any(self.reads_batched(v) for v in given.values()):
            raise NoRule
        axis = given.pop("axis", None)
        keep = given.get("keepdims")
        rest = [ast.keyword(k, self.verbatim(v)) for k, v in given.items()]
        if axis is None or isinstance(axis, ast.Constant) and axis.value is None:
            if keep is not None and not (isinstance(keep, ast.Constant) and keep.value is False):
                raise NoRule
            x = self.flat(self.named(x, "reduced"))
            axis_node = ast.Constant(0)
        else:
            axis_node = _moved_axis(axis)
        target = callee(x)
        args_out = [] if method else [x]
        return ast.Call(target, args_out, [ast.keyword("axis", axis_node)] + rest), True

    def rolled(self, fn, node: ast.Call):
        given = dict(zip(("a", "shift", "axis"), node.args))
        for k in node.keywords:
            if k.arg not in ("shift", "axis") or k.arg in given:
                raise NoRule
            given[k.arg] = k.value
        if "a" not in given or "shift" not in given or self.reads_batched(given["shift"]) \
                or "axis" in given and self.reads_batched(given["axis"]):
            raise NoRule
        x, batched = self.expr(given["a"])
        if not batched:
            raise NoRule
        shift = self.verbatim(given["shift"])
        axis = given.get("axis")
        if axis is None or isinstance(axis, ast.Constant) and axis.value is None:
            x = self.named(x, "rolled")
            inner = ast.Call(fn, [self.flat(copy.deepcopy(x)), shift],
                             [ast.keyword("axis", ast.Constant(0))])
            return self.call("reshape", inner, self.call("shape", copy.deepcopy(x))), True
        return ast.Call(fn, [x, shift], [ast.keyword("axis", _moved_axis(axis))]), True

    def full(self, node: ast.Call):
        if len(node.args) != 2 or node.keywords or self.reads_batched(node.args[0]):
            raise NoRule
        v, _ = self.expr(node.args[1])
        zeros = self.call("zeros", self.verbatim(node.args[0]))
        return ast.BinOp(self.trailing(zeros), ast.Add(), v), True

    def einsum(self, fn, node: ast.Call):
        if node.keywords or not node.args or not isinstance(node.args[0], ast.Constant) \
                or not isinstance(node.args[0].value, str):
            raise NoRule
        subscripts = node.args[0].value.replace(" ", "")
        if "..." in subscripts or subscripts.count("->") != 1:
            raise NoRule
        inputs, output = subscripts.split("->")
        terms = inputs.split(",")
        if len(terms) != len(node.args) - 1:
            raise NoRule
        letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                      if c not in subscripts)
        operands = []
        for i, a in enumerate(node.args[1:]):
            e, batched = self.expr(a)
            operands.append(e)
            if batched:
                terms[i] += letter
        text = ",".join(terms) + "->" + output + letter
        return ast.Call(fn, [ast.Constant(text)] + operands, []), True

    def crossed(self, fn, node: ast.Call):
        """``np.cross(a, b)`` of rows of vectors: the rows moved in front,
        where ``np.cross`` broadcasts them over its last axis (the rows'
        last), and back. An operand the same in every row stays as it is:
        it broadcasts from the right, as the rows' vectors do."""
        if len(node.args) != 2 or node.keywords:
            raise NoRule
        parts = []
        for a in node.args:
            e, batched = self.expr(a)
            parts.append(self.rows_first(e) if batched else e)
        return self.rows_last(ast.Call(fn, parts, [])), True

    def dotted(self, fn, node: ast.Call):
        """``np.dot(a, b)``, each row of ``a`` an array of one axis or more:
        for ``b`` the same in every row, ``np.dot`` of the rows moved in
        front (it contracts their last axis, as each row's); for rows of
        vectors ``b``, the products summed over the vector's axis,
        ``np.sum(a * b, axis=-2)``. Checks where the code runs raise
        ValueError for other ranks (a row of ``a`` that is a number; rows of
        ``b`` with two axes or more: another contraction, which these forms
        do not compute), saying to keep the loop."""
        if len(node.args) != 2 or node.keywords:
            raise NoRule
        (a, a_batched), (b, b_batched) = [self.expr(x) for x in node.args]
        if not (a_batched or b_batched):
            return ast.Call(fn, [a, b], []), False
        message = (f"{described(node)}: in a loop computed at once, np.dot takes an array of "
                   "one axis or more for each iteration's first operand, and for its second "
                   "the same array in every iteration or a vector; for other ranks keep the "
                   "loop (mark it `# s2s-ad: loop`)")

        def check(e, op, rank: int):
            test = ast.Compare(self.call("ndim", copy.deepcopy(e)), [op], [ast.Constant(rank)])
            self.emit(runtime_checks.bound_check(ast.UnaryOp(ast.Not(), test), "ValueError",
                                                 message))
        if not b_batched:
            a = self.named(a, "dot_a")
            check(a, ast.GtE(), 2)
            return self.rows_last(ast.Call(fn, [self.rows_first(copy.deepcopy(a)), b], [])), True
        a = self.named(a if a_batched else self.trailing(a), "dot_a")
        b = self.named(b, "dot_b")
        check(b, ast.Eq(), 2)
        check(a, ast.GtE(), 2)
        product = ast.BinOp(copy.deepcopy(a), ast.Mult(), copy.deepcopy(b))
        return self.call("sum", product, axis=ast.UnaryOp(ast.USub(), ast.Constant(2))), True

    def matmul(self, fn, operands: list, node):
        """``a @ b`` (``np.matmul``; ``fn`` None: the operator). With ``b``
        the same in every row (a matrix or a vector), the rows of ``a`` moved
        in front, where matmul broadcasts them as a stack; with ``a`` the
        same in every row (a matrix or a vector) and ``b`` a matrix or a
        vector of each row, ``np.tensordot`` of ``a``'s last axis with the
        rows' first; both of each row: matrices, moved in front. Checks
        where the code runs raise ValueError for other ranks (a stack of
        matrices the same in every row, whose stack axes the rows' would
        meet), saying to keep the loop."""
        (a, a_batched), (b, b_batched) = [self.expr(x) for x in operands]
        if not (a_batched or b_batched):
            return (ast.BinOp(a, ast.MatMult(), b) if fn is None
                    else ast.Call(fn, [a, b], [])), False
        message = (f"{described(node)}: in a loop computed at once, a matrix product takes "
                   "a matrix or a vector the same in every iteration, and a matrix (or a "
                   "vector) of each iteration; for other ranks keep the loop (mark it "
                   "`# s2s-ad: loop`)")
        a, b = self.named(a, "matmul_a"), self.named(b, "matmul_b")

        def ndim(e):
            return self.call("ndim", copy.deepcopy(e))

        def check(bad):
            self.emit(runtime_checks.bound_check(bad, "ValueError", message))

        def front(e):
            return self.rows_first(copy.deepcopy(e))
        if not b_batched:  # (B, ..., n) @ (n, p) or (n,)
            check(ast.Compare(ndim(b), [ast.Gt()], [ast.Constant(2)]))
            parts = [front(a), copy.deepcopy(b)]
        elif not a_batched:  # (m, n) or (n,) with (n, p, B) or (n, B)
            check(ast.BoolOp(ast.Or(), [ast.Compare(ndim(a), [ast.Gt()], [ast.Constant(2)]),
                                        ast.Compare(ndim(b), [ast.Gt()], [ast.Constant(3)])]))
            axes = ast.Tuple([ast.Tuple([ast.UnaryOp(ast.USub(), ast.Constant(1))], ast.Load()),
                              ast.Tuple([ast.Constant(0)], ast.Load())], ast.Load())
            return self.call("tensordot", copy.deepcopy(a), copy.deepcopy(b), axes=axes), True
        else:  # (B, m, n) @ (B, n, p)
            check(ast.BoolOp(ast.Or(), [ast.Compare(ndim(a), [ast.NotEq()], [ast.Constant(3)]),
                                        ast.Compare(ndim(b), [ast.NotEq()], [ast.Constant(3)])]))
            parts = [front(a), front(b)]
        product = ast.BinOp(parts[0], ast.MatMult(), parts[1]) if fn is None \
            else ast.Call(fn, parts, [])
        return self.rows_last(product), True


def described(node) -> str:
    """```source` (line N)``: the user's expression, for a message."""
    line = getattr(node, "lineno", None)
    return f"`{ast.unparse(node)}`" + (f" (line {line})" if line else "")


def is_items(result) -> bool:
    """Whether a rewritten ``result`` is a tuple of results (``return a, b``
    written out), not one ``(expression, batched)`` pair."""
    return isinstance(result, tuple) and not (len(result) == 2 and isinstance(result[1], bool))


def _minus_one():
    return ast.UnaryOp(ast.USub(), ast.Constant(1))


def _moved_axis(axis):
    """An axis of the row as an axis of the batched value (the batch axis
    last): ``k`` for ``k >= 0``, ``k - 1`` for ``k < 0``; a tuple item by item."""
    if isinstance(axis, ast.Tuple):
        return ast.Tuple([_moved_axis(a) for a in axis.elts], ast.Load())
    k = int_value(axis)
    if k is None:
        raise NoRule
    value = k if k >= 0 else k - 1
    return ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))


def int_value(node):
    """The value of an int literal (``-1`` too), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None
