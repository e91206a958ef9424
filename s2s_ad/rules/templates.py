"""Instantiating rule templates as Python ``ast`` expressions.

A template is an expression over ``x``, ``y`` (operands) and ``out`` (the
forward result); the module names ``math`` and ``np`` in it are replaced by
the aliases the generated module imports ``math`` and ``numpy`` as.

NumPy rules use a few more placeholders: ``g`` (the output's adjoint),
``x0, x1, ...`` (operands by position), ``args`` and ``rest`` (all operands,
or all but the first, as a tuple), the op's keyword attributes by name
(``axis``, ``keepdims``), and ``keep(e)``: ``e`` with the axes a reduction
removed restored as length-1 axes (``np.expand_dims(e, axis)``, or ``e``
itself when nothing was removed), and ``reduced_size(e)``: how many elements
of ``e`` the reduction combines into each result element. A keyword argument whose attribute the user
did not give (forward) or whose value is None is left out.

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
import weakref

from s2s_ad import ir
from s2s_ad.syntax_walk import walk

PLACEHOLDERS = ("x", "y")
TEMPLATE_MODULES = {"np": "numpy", "math": "math", "scipy_special": "scipy.special",
                    "scipy_linalg": "scipy.linalg"}
"""Module names as rule templates spell them -> the module they stand for."""


def copy_expr(node):
    """A deep copy of an ``ast`` tree (what ``copy.deepcopy`` gives, several
    times faster: every rule instantiation copies its template and operands,
    which made ``deepcopy`` a sixth of the transform's time)."""
    if isinstance(node, ast.AST):
        new = node.__class__.__new__(node.__class__)
        for k, v in node.__dict__.items():
            new.__dict__[k] = copy_expr(v)
        return new
    if isinstance(node, list):
        return [copy_expr(x) for x in node]
    if node is None or isinstance(node, (str, int, float, complex, bytes, type(Ellipsis))):
        return node
    return copy.deepcopy(node)


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


def instantiate(template: ast.expr, args, out: ir.Value | None, modules: dict[str, str], *,
                g: ast.expr | None = None, attrs: dict | None = None,
                given: dict | None = None, exprs: list | None = None,
                out_expr: ast.expr | None = None, extra: dict | None = None) -> ast.expr:
    """``template`` with placeholders replaced by the operands' expressions.

    ``attrs`` maps attribute names to their values (defaults included);
    ``given``, when not None, holds the attributes the user wrote: keywords
    naming any other attribute are dropped (forward templates). ``extra``
    maps more names to expressions (a forward recipe's locals and tangents)."""
    # ``exprs``/``out_expr``: how the operands and result read where the code
    # runs (a reverse loop reads popped values), when not simply their names.
    ops = exprs if exprs is not None else [operand_expr(a, modules) for a in args]
    env = {name: e for name, e in zip(PLACEHOLDERS, ops)}
    env.update({f"x{i}": e for i, e in enumerate(ops)})
    env["args"] = ast.Tuple([copy_expr(e) for e in ops], ast.Load())
    env["rest"] = ast.Tuple([copy_expr(e) for e in ops[1:]], ast.Load())
    if out_expr is not None:
        env["out"] = out_expr
    elif out is not None:
        env["out"] = ast.Name(out.name, ast.Load())
    if g is not None:
        env["g"] = g
    env.update(extra or {})
    attrs = attrs or {}
    for name, value in attrs.items():
        env[name] = attr_expr(value)
    if "index" in attrs:  # a subscript's structure, over the op's operands
        env["index"] = index_expr(attrs["index"], [copy_expr(e) for e in ops])

    class Sub(_Substitution):
        def visit_Call(self, node: ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "keep":
                return self.visit(_keep(node.args[0], attrs))
            if isinstance(node.func, ast.Name) and node.func.id == "reduced_size":
                return self.visit(_reduced_size(node.args[0], attrs))
            kept = []
            for k in node.keywords:
                name = k.value.id if isinstance(k.value, ast.Name) else None
                if name in attrs and (attrs[name] is None
                                      or (given is not None and name not in given)):
                    continue
                kept.append(k)
            node.keywords = kept
            self.generic_visit(node)
            # f(*args) with args a tuple of operands: f(a, b), not f(*(a, b))
            expanded = []
            for a in node.args:
                if isinstance(a, ast.Starred) and isinstance(a.value, ast.Tuple):
                    expanded += a.value.elts
                else:
                    expanded.append(a)
            node.args = expanded
            return node

    return Sub(env, modules).visit(copy_expr(template))


def _keep(e: ast.expr, attrs: dict) -> ast.expr:
    """``keep(e)``: restore the axes a reduction removed (see the module docstring)."""
    if attrs.get("axis") is None or attrs.get("keepdims"):
        return e
    return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "expand_dims", ast.Load()),
                    [e, attr_expr(attrs["axis"])], [])


def _reduced_size(e: ast.expr, attrs: dict) -> ast.expr:
    """``reduced_size(e)``: how many elements of ``e`` a reduction combines
    into each element of its result — ``np.size(e)`` for ``axis=None``, the
    product of the reduced axes' lengths otherwise (known without the result)."""
    axis = attrs.get("axis")
    if axis is None:
        return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "size", ast.Load()), [e], [])
    lengths = [ast.Subscript(ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "shape",
                                                    ast.Load()), [copy_expr(e)], []),
                             attr_expr(a), ast.Load())
               for a in (axis if isinstance(axis, tuple) else (axis,))]
    if not lengths:  # axis=(): no axis reduced, one element each
        return ast.Constant(1)
    out = lengths[0]
    for n in lengths[1:]:
        out = ast.BinOp(out, ast.Mult(), n)
    return out


def attr_expr(value) -> ast.expr:
    """An attribute's value (int, bool, None, tuple of them) as an expression."""
    if isinstance(value, tuple):
        return ast.Tuple([attr_expr(v) for v in value], ast.Load())
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def names_read(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


_TEMPLATE_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def template_names(template: ast.expr) -> frozenset[str]:
    """:func:`names_read` of a rule's template, remembered while the template
    lives (a template is parsed once and never changed: instantiating it
    copies it; every reverse statement asks)."""
    names = _TEMPLATE_NAMES.get(template)
    if names is None:
        names = _TEMPLATE_NAMES[template] = frozenset(names_read(template))
    return names


def index_operands(index: tuple):
    """``(operand position, item)`` for every operand an index tuple refers
    to: an ``("op", k)`` item, and the bounds of ``("slice", ...)`` items."""
    for item in index:
        if item[0] == "op":
            yield item[1], item
        elif item[0] == "slice":
            for p in item[1:]:
                if p is not None:
                    yield p[1], item


def index_expr(index: tuple, operands: list[ast.expr]) -> ast.expr:
    """The subscript expression ``index`` describes, over ``operands``'
    expressions (indexed as in the op's operands)."""
    def part(p):
        return None if p is None else operands[p[1]]

    items = []
    for item in index:
        if item[0] == "op":
            items.append(operands[item[1]])
        elif item[0] == "slice":
            items.append(ast.Slice(part(item[1]), part(item[2]), part(item[3])))
        elif item[0] == "none":
            items.append(ast.Constant(None))
        else:
            items.append(ast.Constant(Ellipsis))
    return items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())


def substitute(template: ast.expr, env: dict[str, ast.expr], modules: dict[str, str]) -> ast.expr:
    """``template`` with the names in ``env`` replaced by (copies of) their
    expressions and module names by their aliases: a copy made in one pass
    (what :class:`_Substitution` gives on a :func:`copy_expr` of the
    template; every reverse statement is made here, and copying then
    visiting was a tenth of the transform's time)."""
    if type(template) is ast.Name:
        return _substituted_name(template, env, modules)
    if not isinstance(template, ast.AST):
        return copy_expr(template)
    new = template.__class__.__new__(template.__class__)
    fields = template._fields
    for k, v in template.__dict__.items():
        if k not in fields:
            new.__dict__[k] = copy_expr(v)  # (a position: lineno, col_offset, ...)
        elif isinstance(v, list):
            new.__dict__[k] = [substitute(x, env, modules) for x in v]
        else:
            new.__dict__[k] = substitute(v, env, modules)
    return new


def _substituted_name(node: ast.Name, env: dict[str, ast.expr], modules: dict[str, str]):
    """A placeholder's expression, a module's alias or (a copy of) ``node``."""
    if node.id in env:
        return copy_expr(env[node.id])
    module = TEMPLATE_MODULES.get(node.id, node.id)
    if module in modules:
        return ast.Name(modules[module], ast.Load())
    return copy_expr(node)


class _Substitution(ast.NodeTransformer):
    """Replaces placeholder names by expressions and module names by the
    aliases the generated module imports them as (in place: on a copy)."""

    def __init__(self, env: dict[str, ast.expr], modules: dict[str, str]):
        self.env = env
        self.modules = modules

    def visit_Name(self, node: ast.Name):
        if node.id in self.env or TEMPLATE_MODULES.get(node.id, node.id) in self.modules:
            return _substituted_name(node, self.env, self.modules)
        return node
