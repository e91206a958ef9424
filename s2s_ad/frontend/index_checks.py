"""The checks s2s-ad's own modules make around integer index arrays, read back.

Contract: ``read(lo, test)`` takes the condition of a check (``if test:
raise ...``) and, where it is exactly the text s2s-ad writes for the ops of
:mod:`s2s_ad.frontend.index_exprs` — that a write by index arrays picks
distinct elements (``index.distinct``) or that a parameter an index array is
computed from is an int (``index.is_int``) — returns ``(value, negated)``:
that op, lowered again with its operands (no derivative: it only decides
whether the check raises), and whether the test was its ``not``. Anything
else gives None, and is lowered (or refused) like any other condition. So a
gradient or JVP module of a function using index arrays, read back from its
text, is differentiated again (second order) with the same checks in it.

Before → after::

    if not np.all(np.unique(np.reshape(         t = index.distinct m rows cols
            np.arange(np.size(m)), np.shape(m))     index=[op1, op2]
            [rows, cols], return_counts=True)[1]
            == 1):
        raise ValueError('`m[rows, cols]` ...')  check t  negate=True
"""

from __future__ import annotations

import ast
import builtins
import types

import numpy

from s2s_ad import ir

_DISTINCT = "{np}.all({np}.unique({picked}, return_counts=True)[1] == 1)"
_NUMBERED = "{np}.reshape({np}.arange({np}.size({b})), {np}.shape({b}))"
"""The text of rule ``index.distinct`` (:mod:`s2s_ad.rules.numpy`), NumPy as
``{np}``: the unique elements ``{picked}`` of the array numbering ``{b}``'s
elements (``_NUMBERED``) at the index."""
_IS_INT = "isinstance({x}, (int, {np}.integer)) and (not isinstance({x}, bool))"
"""The text of rule ``index.is_int``, as ``ast.unparse`` prints it."""
_IS_INDEX = "hasattr(type({x}), '__index__')"
"""The text of rule ``index.is_index``."""


def read(lo, test: ast.expr) -> tuple | None:
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if negated else test
    value = distinct(lo, inner)
    if value is None:
        value = is_int(lo, inner)
    if value is None:
        value = is_index(lo, inner)
    return None if value is None else (value, negated)


def _numpy_alias(lo, node: ast.expr) -> str | None:
    """The name ``node`` (``np.all``-like) reaches NumPy by, if it does."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id not in lo.env \
            and isinstance(lo.src.globals.get(node.value.id), types.ModuleType) \
            and lo.src.globals[node.value.id] is numpy:
        return node.value.id
    return None


def _local(lo, node: ast.expr) -> ir.Value | None:
    if isinstance(node, ast.Name) and isinstance(lo.env.get(node.id), ir.Value):
        return lo.env[node.id]
    return None


def distinct(lo, node: ast.expr, var: str | None = None) -> ir.Value | None:
    """``node`` as an ``index.distinct`` op where it is that rule's text."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1
            and isinstance(node.args[0], ast.Compare)):
        return None
    np_ = _numpy_alias(lo, node.func)
    if np_ is None:
        return None
    try:
        picked = node.args[0].left.value.args[0]        # (...)[1] -> unique(...) -> its array
        base = picked.value.args[1].args[0]             # reshape(arange(...), shape(B)) -> B
        index = picked.slice
    except (AttributeError, IndexError):
        return None
    b = _local(lo, base)
    if b is None or b.kind != "array" \
            or ast.unparse(node) != _DISTINCT.format(np=np_, picked=ast.unparse(picked)) \
            or ast.unparse(picked.value) != _NUMBERED.format(np=np_, b=base.id):
        return None
    operands: list = [b]
    shape = lo.index(index, operands)
    return lo.emit("index.distinct", operands, node, var, hint="distinct",
                   attrs={"index": shape})


def is_int(lo, node: ast.expr, var: str | None = None) -> ir.Value | None:
    """``node`` as an ``index.is_int`` op where it is that rule's text (in a
    check's test, or bound to a name the check then tests)."""
    if not (isinstance(node, ast.BoolOp) and len(node.values) == 2
            and isinstance(node.values[0], ast.Call) and node.values[0].args):
        return None
    name = node.values[0].args[0]
    x = _local(lo, name)
    kind = node.values[0].args[1] if len(node.values[0].args) == 2 else None
    np_ = _numpy_alias(lo, kind.elts[1]) if isinstance(kind, ast.Tuple) and len(kind.elts) == 2 \
        else None
    if x is None or np_ is None or any(lo.src.globals.get(n, getattr(builtins, n)) is not
                                       getattr(builtins, n) or n in lo.env
                                       for n in ("isinstance", "int", "bool")):
        return None
    if ast.unparse(node) != _IS_INT.format(x=name.id, np=np_):
        return None
    return lo.emit("index.is_int", [x], node, var, hint="is_int")


def is_index(lo, node: ast.expr, var: str | None = None) -> ir.Value | None:
    """``node`` as an ``index.is_index`` op where it is that rule's text."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Call)
            and node.args[0].args):
        return None
    name = node.args[0].args[0]
    x = _local(lo, name)
    if x is None or any(lo.src.globals.get(n, getattr(builtins, n)) is not getattr(builtins, n)
                        or n in lo.env for n in ("hasattr", "type")):
        return None
    if ast.unparse(node) != _IS_INDEX.format(x=name.id):
        return None
    return lo.emit("index.is_index", [x], node, var, hint="is_int")
