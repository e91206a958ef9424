"""``functools.partial`` in the function: bound there, or at module level, then
called.

Contract: :func:`make` lowers ``functools.partial(h, *args, **kw)`` (or
``partial(...)`` imported from ``functools``) written in the function to a
:class:`BoundPartial`: the function ``h`` names where the partial is made
(a nested function or lambda, a function of yours, a library function,
another such partial, whose arguments come first), and the operands of the
bound arguments, lowered there, in order, as Python evaluates them. It
exists only while lowering. :func:`expand` turns a call of a name bound to
one, or of a module-level ``functools.partial`` object (its bound arguments
numbers, strings, ``None``, tuples and lists of them), into the call Python makes,
``h(*args, *call_args, **{**kw, **call_kw})``, so the bound values are
arguments like any other: a value of the function (``k=y``) gets its
adjoint, a constant none.

Before → after::

    f = functools.partial(scaled, k=y)        (f: scaled with k=y, nothing emitted)
    return f(x) + f(y * y)                    return scaled(x, k=y) + scaled(y * y, k=y)

Refused, located: a partial made inside a loop the code keeps or an arm of
a branch (bind it before), or used other than by calling it (passed on,
returned, stored): call the function with the arguments written out.
"""

from __future__ import annotations

import ast
import functools
import numbers

from s2s_ad import ir
from s2s_ad.frontend import syntax
from s2s_ad.frontend.structures import StaticList

__all__ = ["BoundPartial", "expand", "is_partial_call", "make", "refuse_value"]


class BoundPartial:
    """``functools.partial(fn, *args, **keywords)``: operands bound."""

    def __init__(self, fn, args: list, keywords: dict):
        self.fn, self.args, self.keywords = fn, args, keywords


def is_partial_call(fn) -> bool:
    return fn is functools.partial


def make(lo, node: ast.Call) -> BoundPartial:
    """``functools.partial(h, ...)`` written in the function."""
    if lo.region_starts:
        raise lo.src.error(node, "a `functools.partial` made inside a loop or a branch is not "
                           "supported; make it before the loop or branch, or call the "
                           "function with the arguments written out")
    if not node.args or isinstance(node.args[0], ast.Starred):
        raise lo.src.error(node, "`functools.partial` takes the function first")
    head = node.args[0]
    inner = lo.env.get(head.id) if isinstance(head, ast.Name) else None
    if isinstance(inner, BoundPartial):  # partial(partial(h, a), b): h(a, b)
        fn, args, keywords = inner.fn, list(inner.args), dict(inner.keywords)
    else:
        if isinstance(head, ast.Name) and head.id in lo.env:
            raise lo.src.error(head, f"`{head.id}` is a local value; `functools.partial` takes "
                               "a function here (a nested `def`, a lambda, a function of yours)")
        fn, args, keywords = lo.resolve(head), [], {}
        if isinstance(fn, functools.partial):
            fn, args, keywords = _constants(lo, fn, head)
    for a in node.args[1:]:
        if isinstance(a, ast.Starred):
            raise lo.src.error(a, "`*args` in `functools.partial` is not supported; write the "
                               "arguments out")
        args.append(_operand(lo, a))
    for k in node.keywords:
        if k.arg is None:
            raise lo.src.error(k.value, "`**kw` in `functools.partial` is not supported; write "
                               "the keywords out")
        keywords[k.arg] = _operand(lo, k.value)
    return BoundPartial(fn, args, keywords)


def _operand(lo, node: ast.expr):
    value = lo.expr(node)
    if isinstance(value, BoundPartial):
        refuse_value(lo, node)
    return value


def _constants(lo, p: functools.partial, node: ast.AST):
    """A module-level partial's function and bound arguments, as constants."""
    def const(v, what):
        if isinstance(v, tuple):
            return tuple(const(i, what) for i in v)
        if type(v) is list:  # a list of its own per call, as a list built in the function
            return StaticList([const(i, what) for i in v])
        if v is None or isinstance(v, (str, bool, numbers.Number)):
            return ir.Const(v)
        raise lo.src.error(node, f"`{ast.unparse(node)}` is a functools.partial binding "
                           f"{what} to a {type(v).__name__}: s2s-ad calls module-level "
                           "partials whose bound arguments are numbers, strings, None, or "
                           "tuples and lists of them; "
                           "call the function with that argument written out")
    args = [const(v, f"argument {i}") for i, v in enumerate(p.args)]
    keywords = {k: const(v, f"`{k}`") for k, v in p.keywords.items()}
    fn = p.func
    if isinstance(fn, functools.partial):
        fn, inner_args, inner_keywords = _constants(lo, fn, node)
        args, keywords = inner_args + args, {**inner_keywords, **keywords}
    return fn, args, keywords


def expand(lo, node: ast.Call) -> ast.Call:
    """``node`` as the call Python makes where it calls a partial; ``node``
    itself otherwise."""
    func = node.func
    if isinstance(func, ast.Name) and isinstance(lo.env.get(func.id), BoundPartial):
        p = lo.env[func.id]
        fn, args, keywords = p.fn, p.args, p.keywords
    elif isinstance(func, (ast.Name, ast.Attribute)) and lo.is_global_path(func):
        try:
            fn = lo.resolve(func)
        except Exception:  # not a callee of a known object: lowered (or refused) as written
            return node
        if not isinstance(fn, functools.partial):
            return node
        fn, args, keywords = _constants(lo, fn, func)
    else:
        return node
    # names that are no identifiers (never the user's), one set per call
    # (`f(f(x))`: the inner call's are unbound before the outer call's are read)
    base = f"{ast.unparse(func)}#{len(lo.spliced)}"
    callee = f"{base}.func"
    lo.local_fns[callee] = fn
    given = {k.arg for k in node.keywords}
    out = ast.Call(
        ast.copy_location(ast.Name(callee, ast.Load()), func),
        [syntax.bound(lo, f"{base}.args[{i}]", v, node) for i, v in enumerate(args)]
        + node.args,
        [ast.keyword(k, syntax.bound(lo, f"{base}.keywords[{k!r}]", v, node))
         for k, v in keywords.items() if k not in given] + node.keywords)
    ast.copy_location(out, node)
    out.end_lineno, out.end_col_offset = node.end_lineno, node.end_col_offset
    return out


def refuse_value(lo, node: ast.AST):
    name = ast.unparse(node)
    raise lo.src.error(node, f"`{name}` is a functools.partial; s2s-ad calls it "
                       f"(`{name}(...)`), and does not pass it on, return or store it; "
                       "call the function with the arguments written out")
