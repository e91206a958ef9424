"""A module's list of numbers read through the module: ``consts.COEFFS``.

Contract: :func:`inline` rewrites, in a located function's tree, every
attribute chain read off a module of yours (``consts.COEFFS``,
``pkg.consts.COEFFS``; not NumPy's, math's or another library's) that holds
a non-empty list or tuple of numbers into one name spelled as the chain,
bound in the function's globals (a copy of them) to that list. It is then
read as a module-level list of numbers of the function's own module is
(:func:`s2s_ad.frontend.structures.module_numbers`): at constant indices and
an index known only as the code runs, iterated, given to ``len``, ``zip``,
comprehensions, in code of numbers and NumPy code; its numbers are
constants of the gradient, read when the gradient is made, and a later
change of the list (rebound or changed in place) makes new code
(:mod:`s2s_ad.fingerprint` watches the module's attribute).

A chain whose first name is a parameter or a local of the function is left
alone, and so is one naming anything else (a number is read as it was; an
array, a function: as before).

Before → after::

    import consts                       def f(x):
    def f(x):                               s = 0.0
        s = 0.0                             for c in `consts.COEFFS`:
        for c in consts.COEFFS:                 s = s * x + c
            s = s * x + c                   return s
        return s
"""

from __future__ import annotations

import ast
import numbers
import types

from s2s_ad.frontend import syntax
from s2s_ad.frontend.library_names import LIBRARY_MODULES
from s2s_ad.syntax_walk import walk


def inline(src) -> None:
    """Rewrite ``src.tree`` (see the module docstring)."""
    if not _reads_a_module(src):
        return
    syntax.check_nesting(src)  # (the rewrite below recurses per level of nesting)
    local = {a.arg for a in walk(src.tree.args) if isinstance(a, ast.arg)} | {
        n.id for n in walk(src.tree) if isinstance(n, ast.Name)
        and isinstance(n.ctx, (ast.Store, ast.Del))}
    found: dict[str, object] = {}

    class Chains(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute):
            value = _resolve(src.globals, node, local)
            if value is not None and isinstance(node.ctx, ast.Load):
                name = ast.unparse(node)
                found[name] = value
                return ast.copy_location(ast.Name(name, ast.Load()), node)
            self.generic_visit(node)
            return node

    tree = Chains().visit(src.tree)
    if not found:
        return
    src.tree = tree
    if src.globals is getattr(src.fn, "__globals__", None):
        src.globals = dict(src.globals)
    src.globals.update(found)


def _reads_a_module(src) -> bool:
    """Does an attribute chain of ``src.tree`` start at a global name holding a
    module of yours? (Most functions read none: no rewrite then.)"""
    for node in walk(src.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            obj = src.globals.get(node.value.id)
            if isinstance(obj, types.ModuleType) and not _library(obj):
                return True
    return False


def _resolve(namespace: dict, node: ast.expr, local: set):
    """The list of numbers ``node`` (a chain off a module of yours) names, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id in local or not parts:
        return None
    obj = namespace.get(node.id)
    for part in reversed(parts):
        if not isinstance(obj, types.ModuleType) or _library(obj):
            return None
        obj = getattr(obj, part, None)
    if isinstance(obj, (list, tuple)) and obj and all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in obj):
        return obj
    return None


def _library(module: types.ModuleType) -> bool:
    return (module.__name__ or "").split(".")[0] in LIBRARY_MODULES


def not_a_number(node: ast.Attribute, obj) -> str:
    """Why ``node`` (an attribute chain s2s-ad does not read as a value) is
    refused, and the rewrite."""
    text = ast.unparse(node)
    if isinstance(node.value, (ast.Name, ast.Attribute)) and (
            isinstance(obj, (list, tuple, dict)) or hasattr(obj, "shape")):
        return (f"`{text}` is not a number s2s-ad can use: data of another module read "
                f"through it are read as lists or tuples of numbers only; import it by name "
                f"(`from {ast.unparse(node.value)} import {node.attr}`) and read "
                f"`{node.attr}`, module data the gradient reads on every call, or pass it as "
                "a parameter")
    if callable(obj):  # `{"tanh": math.tanh}`, `f = np.sin`: a function kept as a value
        return (f"`{text}` is a function, used here as a value (kept in a dict, list or "
                f"name); s2s-ad reads a function where it is called: call it where it is "
                f"chosen (`if kind == \"tanh\": y = {text}(x)`), or wrap it in a function "
                f"of yours (`lambda t: {text}(t)`) passed to a helper that calls it")
    return f"`{text}` is not a number s2s-ad can use"
