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


def _moved_axis(axis):
    """An axis of the row as an axis of the batched value (the batch axis
    last): ``k`` for ``k >= 0``, ``k - 1`` for ``k < 0``; a tuple item by item."""
    if isinstance(axis, ast.Tuple):
        return ast.Tuple([_moved_axis(a) for a in axis.elts], ast.Load())
    k = _int(axis)
    if k is None:
        raise NoRule
    value = k if k >= 0 else k - 1
    return ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))


def _int(node):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None
