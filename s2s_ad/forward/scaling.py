"""Constant factors of a tangent gathered into one, where that is exact.

A tangent chains local derivatives: the tangent of ``100.0 * t ** 2`` is
``dt * (2 * t) * 100.0``, three multiplications where two do (``dt * t *
200.0``), and that of ``(1.0 - x) ** 2`` is ``-dx * (2 * t)``. Multiplying by
a power of two only changes a float's exponent, so it commutes with the
rounding of the other products: the rewrites below give the same number, bit
for bit (barring overflow or underflow of an intermediate)::

    g * (k * t)          →  g * t * k        (k a power of two)
    a * k * c            →  a * (k·c)        (k a power of two; k·c is exact)
    -g * t * k           →  g * t * (-k)     (negation is exact)

:func:`run` applies them bottom-up to an expression.
"""

from __future__ import annotations

import ast
import math


def _power_of_two(node) -> bool:
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, float):
        return False
    v = abs(node.value)
    if v == 0 or not math.isfinite(v):
        return False
    m, _ = math.frexp(v)
    return m == 0.5


def _constant(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) \
        and math.isfinite(node.value)


def _mult(a, b) -> ast.BinOp:
    return ast.BinOp(a, ast.Mult(), b)


def run(node: ast.expr) -> ast.expr:
    """``node`` with the rewrites of the module docstring applied."""
    for field, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            setattr(node, field, run(value))
        elif isinstance(value, list):
            value[:] = [run(v) if isinstance(v, ast.expr) else v for v in value]
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return node
    left, right = node.left, node.right
    # g * (k * t), g * (t * k)  →  g * t * k
    if isinstance(right, ast.BinOp) and isinstance(right.op, ast.Mult) and not _constant(left):
        if _power_of_two(right.left) and not _constant(right.right):
            return run(_mult(_mult(left, right.right), right.left))
        if _power_of_two(right.right) and not _constant(right.left):
            return run(_mult(_mult(left, right.left), right.right))
    if _constant(right) and isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mult):
        # a * k * c, k * a * c  →  a * (k·c)
        if _power_of_two(left.right) and not _constant(left.left):
            return _mult(left.left, ast.Constant(_product(left.right.value, right.value)))
        if _power_of_two(left.left) and not _constant(left.right):
            return _mult(left.right, ast.Constant(_product(left.left.value, right.value)))
        # -g * t * k  →  g * t * (-k)
        inner = left.left
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.USub) \
                and not _constant(inner.operand):
            return _mult(_mult(inner.operand, left.right), ast.Constant(-right.value))
    return node


def _product(k, c):
    """``k * c`` as Python computes it: an int only when both are."""
    return k * c
