"""Frontend: autograd's ``flatten`` of a parameter structure, read as NumPy.

Contract: :func:`desugar` rewrites, in the ``def`` about to be lowered, each
call of autograd's ``autograd.misc.flatten`` (``flatten(params)``, which
returns the leaves of a structure of lists, tuples and dicts raveled and
concatenated, and a function undoing it) where the undoing function is not
used: ``flat, _ = flatten(params)`` (``_`` never read) or
``flatten(params)[0]``; as ``flat = ravel_leaves(params)``. Any other use is
refused, located (the function it returns is not read). :func:`lower` lowers
``ravel_leaves(e)``, ``e`` a structure known while lowering (a structure
parameter, a list of ``(W, b)`` tuples built here), as the NumPy code
``np.concatenate([np.ravel(leaf), ...])`` over its leaves in autograd's order
(lists and tuples in order, a dict's values by sorted key), so the gradient
flows back to each leaf through the rules of ``ravel`` and ``concatenate``.

Before → after, for ``params`` a list of two ``(W, b)`` tuples::

    flat, _ = flatten(params)     flat = np.concatenate([np.ravel(W0), np.ravel(b0),
                                                         np.ravel(W1), np.ravel(b1)])
"""

from __future__ import annotations

import ast
import sys

import numpy

from s2s_ad import ir
from s2s_ad.frontend import structures
from s2s_ad.frontend.library_forms import bind_global
from s2s_ad.syntax_walk import walk


def ravel_leaves(value):
    """What ``flatten(value)[0]`` computes (autograd's order of leaves)."""
    return numpy.concatenate([numpy.ravel(v) for v in _leaves(value)])


def _leaves(value) -> list:
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _leaves(value[k])]
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _leaves(item)]
    return [value]


def _is_flatten(obj) -> bool:
    """Whether ``obj`` is autograd's ``flatten`` (found in ``sys.modules``)."""
    module = sys.modules.get("autograd.misc.flatten")
    return module is not None and obj is getattr(module, "flatten", None)


def desugar(src) -> None:
    """Rewrite ``src.tree``'s calls of autograd's ``flatten`` (module docstring)."""
    calls = [n for n in walk(src.tree) if isinstance(n, ast.Call)
             and isinstance(n.func, (ast.Name, ast.Attribute))
             and _is_flatten(_resolve(src, n.func))]
    if not calls:
        return
    local = {a.arg for a in walk(src.tree) if isinstance(a, ast.arg)} | {
        n.id for n in walk(src.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    taken = {n.id for n in walk(src.tree) if isinstance(n, ast.Name)} | local | set(src.globals)
    name = bind_global(src, "ravel_leaves", ravel_leaves, taken, local, {})
    src.flatten_numpy = bind_global(src, "np", numpy, taken, local, {})
    read = {n.id for n in walk(src.tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}
    for node in walk(src.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and any(node.value is c for c in calls):
            target = node.targets[0]
            if isinstance(target, ast.Tuple) and len(target.elts) == 2 \
                    and all(isinstance(e, ast.Name) for e in target.elts) \
                    and target.elts[1].id not in read:
                node.targets = [target.elts[0]]
                _renamed(node.value, name)
        elif isinstance(node, ast.Subscript) and any(node.value is c for c in calls) \
                and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
            _renamed(node.value, name)
    for call in calls:
        if not getattr(call, "_s2s_flatten", False):
            raise src.error(call, f"`{ast.unparse(call)}`: autograd's flatten is read where the "
                            "function it returns is not used: `flat, _ = flatten(params)` "
                            "(`_` never read) or `flatten(params)[0]`; write the unflattening "
                            "with NumPy (slices and reshapes of the flat vector)")
    _subscripts(src.tree)
    ast.fix_missing_locations(src.tree)


def _resolve(src, node):
    """The global object ``node`` (a name or attribute chain) names, or None."""
    if isinstance(node, ast.Name):
        return src.globals.get(node.id)
    if not isinstance(node, ast.Attribute):
        return None  # (`(a + b).f`: not a global's)
    base = _resolve(src, node.value)
    try:
        return getattr(base, node.attr, None) if base is not None else None
    except Exception:  # a property of some global object raising: not autograd's flatten
        return None


def _renamed(call: ast.Call, name: str) -> None:
    call.func = ast.copy_location(ast.Name(name, ast.Load()), call.func)
    call._s2s_flatten = True


def _subscripts(tree) -> None:
    """``ravel_leaves(e)[0]`` (from ``flatten(e)[0]``) as ``ravel_leaves(e)``."""
    class Drop(ast.NodeTransformer):
        def visit_Subscript(self, node):
            self.generic_visit(node)
            if isinstance(node.value, ast.Call) and getattr(node.value, "_s2s_flatten", False):
                return node.value
            return node
    Drop().visit(tree)


def lower(lo, node: ast.Call, var, hint) -> ir.Operand:
    """``ravel_leaves(e)``: ``np.concatenate`` of ``np.ravel`` of ``e``'s leaves."""
    if len(node.args) != 1 or node.keywords:
        raise lo.src.error(node, "autograd's `flatten` takes one structure here")
    arg = node.args[0]
    leaves = _known_leaves(lo, lo.expr(arg), arg)
    np_name = getattr(lo.src, "flatten_numpy", "np")
    parts = []
    for k, leaf in enumerate(leaves):
        temp = f"{ast.unparse(arg)} leaf {k}"  # (a text no variable can have)
        lo.env[temp] = leaf
        parts.append(ast.Call(ast.Attribute(ast.Name(np_name, ast.Load()), "ravel", ast.Load()),
                              [ast.Name(temp, ast.Load())], []))
    joined = ast.Call(ast.Attribute(ast.Name(np_name, ast.Load()), "concatenate", ast.Load()),
                      [ast.List(parts, ast.Load())], [])
    ast.copy_location(joined, node)
    ast.fix_missing_locations(joined)
    for n in walk(joined):
        if hasattr(n, "lineno"):
            n.lineno, n.col_offset = node.lineno, node.col_offset
            n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
    try:
        return lo.expr(joined, ast.Name(var, ast.Store()) if var else None, hint)
    finally:
        for k in range(len(leaves)):
            lo.env.pop(f"{ast.unparse(arg)} leaf {k}", None)


def _known_leaves(lo, value, node) -> list:
    """``value``'s leaves in autograd's order; refused, located, unless known
    while lowering."""
    if isinstance(value, structures.StaticDict):
        if not all(isinstance(k, str) for k in value.items):
            raise lo.src.error(node, "autograd's `flatten` of a dict is read for str keys here")
        return [x for k in sorted(value.items) for x in _known_leaves(lo, value.items[k], node)]
    if isinstance(value, structures.StaticList):
        return [x for item in value.items for x in _known_leaves(lo, item, node)]
    if isinstance(value, tuple):
        return [x for item in value for x in _known_leaves(lo, item, node)]
    if isinstance(value, ir.Const) and isinstance(value.value, (int, float)) \
            and not isinstance(value.value, bool) \
            or isinstance(value, ir.Value) and value.kind in ("float", "array"):
        return [value]
    raise lo.src.error(node, f"autograd's `flatten` of `{ast.unparse(node)}`: s2s-ad reads it "
                       "for lists, tuples and dicts of numbers and arrays known while lowering, "
                       f"not {structures.describe(value)}")
