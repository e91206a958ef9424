"""A ``slice`` object as a value: ``sl = slice(1, n)``, then ``x[sl]``.

Contract: :func:`make` lowers the call ``slice(...)`` (one to three
positional arguments, each an int or ``None``) to a :class:`SliceObject`
holding its bounds as operands, lowered where the call is, as Python
evaluates them there. It exists only while lowering: an index that is a
name bound to one (``x[sl]``, ``m[sl, 1:]``, ``xs[sl]`` of a list, ``y[sl] =
v``), or the call itself written as an index (``x[slice(1, n)]``), is read
as the slice written inline with those bounds (:func:`spliced`), so the
read, its adjoint and its checks are a written slice's. The bounds are
integers (``mark_int``: a parameter in them has no gradient). Anything else
done with it (passing it to a helper, returning it, its ``.start``) is
refused, located, with the rewrite (pass the bounds; :func:`refuse_value`).

Before → after, for ``sl = slice(1, n)`` then ``np.sum(x[sl] ** 2)``::

    sl = SliceObject(start=1, stop=n, step=None)     (no op)
    t1 = array.getitem x  index=(slice 1 n)          (# x[1:sl.stop])
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.frontend import numpy_attrs, syntax

_PARTS = ("start", "stop", "step")


class SliceObject:
    """``slice(start, stop, step)``: its bounds, operands or None."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def is_slice_call(lo, node: ast.expr) -> bool:
    """Is ``node`` a call of the builtin ``slice``?"""
    return isinstance(node, ast.Call) and node.func.__class__ is ast.Name \
        and node.func.id not in lo.local_fns and numpy_attrs.is_slice(lo, node)


def make(lo, node: ast.Call) -> SliceObject:
    """The :class:`SliceObject` of the call ``slice(...)``."""
    if node.keywords or not 1 <= len(node.args) <= 3 \
            or any(isinstance(a, ast.Starred) for a in node.args):
        raise lo.src.error(node, "`slice` takes 1 to 3 positional arguments here")
    parts = []
    for a in node.args:
        if isinstance(a, ast.Constant) and a.value is None:
            parts.append(None)
            continue
        value = lo.expr(a)
        if isinstance(value, ir.Const) and value.value is None:
            parts.append(None)
            continue
        if isinstance(value, ir.Const) and type(value.value) is not int \
                or isinstance(value, ir.Value) and value.kind not in ("int", "float", "array") \
                or not isinstance(value, (ir.Const, ir.Value)):
            raise lo.src.error(a, f"a bound of `{ast.unparse(node)}` must be an int or None "
                               "(a number known where the slice is made)")
        lo.mark_int(value, a, "a slice bound")
        parts.append(value)
    if len(parts) == 1:
        parts = [None, parts[0], None]
    while len(parts) < 3:
        parts.append(None)
    if isinstance(parts[2], ir.Const) and parts[2].value == 0:
        raise lo.src.error(node.args[2], "a slice step must not be zero")
    return SliceObject(*parts)


def _slice_at(lo, node: ast.expr):
    """The :class:`SliceObject` ``node`` (an index or an item of one) stands
    for: a name bound to one or a ``slice(...)`` call; else None."""
    if isinstance(node, ast.Name) and isinstance(lo.env.get(node.id), SliceObject):
        return node.id, lo.env[node.id]
    if is_slice_call(lo, node):
        return ast.unparse(node), make(lo, node)
    return None


def spliced(lo, node: ast.Subscript) -> ast.Subscript:
    """``node`` with each index item that is a slice object written as the
    slice itself (``x[sl]`` → ``x[sl.start:sl.stop]``, the bounds names
    bound to their operands: ``lo.spliced``, which the caller clears);
    ``node`` itself where there is none."""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    found = [_slice_at(lo, e) for e in items]
    if not any(found):
        return node
    out = []
    for e, f in zip(items, found):
        if not f:
            out.append(e)
            continue
        name, obj = f
        bounds = []
        for part in _PARTS:
            v = getattr(obj, part)
            if v is None:
                bounds.append(None)
            elif isinstance(v, ir.Const):
                bounds.append(ast.copy_location(ast.Constant(v.value), e))
            else:
                bounds.append(syntax.bound(lo, f"{name}.{part}", v, e))
        out.append(ast.copy_location(ast.Slice(*bounds), e))
    index = ast.copy_location(ast.Tuple(out, ast.Load()), node.slice) \
        if isinstance(node.slice, ast.Tuple) else out[0]
    return ast.copy_location(ast.Subscript(node.value, index, node.ctx), node)


def refuse_value(lo, node: ast.AST, name: str):
    """The refusal of the slice object ``name`` used other than as an index."""
    return lo.src.error(node, f"`{name}` is a slice object, which s2s-ad reads only as an "
                        "index (`x[sl]`, `m[sl, 0]`, `xs[sl]`) in the function that makes it; "
                        "pass its bounds instead (`h(x, lo, hi)` reading `z[lo:hi]`)")


def unbind(lo, mark: int) -> None:
    """Drop the bound names :func:`spliced` made since ``lo.spliced`` had
    ``mark`` items."""
    for name in lo.spliced[mark:]:
        if name not in lo.spliced[:mark]:  # (`y[sl] = x[sl]`: the target's, bound first)
            lo.env.pop(name, None)
    del lo.spliced[mark:]
