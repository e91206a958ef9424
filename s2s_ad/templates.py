"""Instantiating rule templates as Python ``ast`` expressions.

A template is an expression over ``x``, ``y`` (operands) and ``out`` (the
forward result); the module name ``math`` in it is replaced by the alias the
generated module imports it as.

>>> import ast
>>> from s2s_ad import ir
>>> t = ast.parse("math.cos(x) * out", mode="eval").body
>>> ast.unparse(instantiate(t, [ir.Value("a")], ir.Value("b"), {"math": "m"}))
'm.cos(a) * b'
"""

from __future__ import annotations

import ast
import copy
import math

from . import ir

PLACEHOLDERS = ("x", "y")


def operand_expr(a: ir.Operand, modules: dict[str, str]) -> ast.expr:
    if isinstance(a, ir.Value):
        return ast.Name(a.name, ast.Load())
    return const_expr(a.value, modules)


def const_expr(value, modules: dict[str, str]) -> ast.expr:
    if isinstance(value, float) and not math.isfinite(value):
        name = "nan" if math.isnan(value) else "inf"
        node = ast.Attribute(ast.Name(modules.get("math", "math"), ast.Load()), name, ast.Load())
        return ast.UnaryOp(ast.USub(), node) if value < 0 else node
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def instantiate(template: ast.expr, args, out: ir.Value | None, modules: dict[str, str]) -> ast.expr:
    """``template`` with placeholders replaced by the operands' expressions."""
    env = {name: operand_expr(a, modules) for name, a in zip(PLACEHOLDERS, args)}
    if out is not None:
        env["out"] = ast.Name(out.name, ast.Load())

    class Sub(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name):
            if node.id in env:
                return copy.deepcopy(env[node.id])
            if node.id in modules:
                return ast.Name(modules[node.id], ast.Load())
            return node

    return Sub().visit(copy.deepcopy(template))


def names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
