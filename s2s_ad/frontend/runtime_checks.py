"""A check the generated code makes where it runs, placed by the frontend.

Contract: :func:`raise_unless` appends to ``lo.ops`` a ``check`` op that
raises ``exc(message)`` unless ``cond`` (a bool operand the caller lowered)
holds: the form of the checks around integer index arrays, dtypes of
written arrays, list indices and classes decided while lowering. The op has
no derivative; every forward pass keeps it (:mod:`s2s_ad.frontend.checks`
lowers the user's own ``assert`` and ``if ...: raise`` to the same op).
:func:`rank_check` writes such a check as source, ``if np.ndim(x) - 1 < k:
raise IndexError(...)``, for a rewrite made before lowering (a ``jax.vmap``
body's rows: :mod:`s2s_ad.frontend.jax_batching`); :func:`is_rank_check`
tells it from a branch of the user's (it lowers to the op, no branch).
"""

from __future__ import annotations

import ast

from s2s_ad import ir


def raise_unless(lo, cond: ir.Operand, at: ast.AST, text: str, exc: str, message: str,
                 **attrs) -> None:
    """``if not cond: raise exc(message)`` at ``at``'s location (``text`` its
    comment in the generated code); ``attrs`` go on the op too."""
    check = ir.Value(lo.namer.fresh("check"), "bool")
    op = ir.Op("check", (cond,), check, lo.loc(at), text,
               attrs={"exc": exc, "negate": True, "called": True, "message": (message,),
                      **attrs})
    lo.ops.append(op)
    lo.defs[id(check)] = op


def rank_check(ndim: ast.expr, k: int, exc: str, message: str) -> ast.If:
    """``if ndim - 1 < k: raise exc(message)``, ``ndim`` the call
    ``np.ndim(x)`` of a value whose last axis is not the row's."""
    test = ast.Compare(ast.BinOp(ndim, ast.Sub(), ast.Constant(1)), [ast.Lt()], [ast.Constant(k)])
    error = ast.Raise(ast.Call(ast.Name(exc, ast.Load()), [ast.Constant(message)], []), None)
    return ast.If(test, [error], [])


def bound_check(test: ast.expr, exc: str, message: str) -> ast.If:
    """``if test: raise exc(message)``, marked as a check a rewrite made (a
    read past the end of an array, for a loop computed at once:
    :mod:`s2s_ad.frontend.loop_batching`)."""
    error = ast.Raise(ast.Call(ast.Name(exc, ast.Load()), [ast.Constant(message)], []), None)
    made = ast.If(test, [error], [])
    made.s2s_check = True
    return made


def is_rank_check(node: ast.AST) -> bool:
    """``node`` is a statement :func:`rank_check` or :func:`bound_check` made:
    a check, not a branch (the function has no control flow for it)."""
    if not (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1
            and isinstance(node.body[0], ast.Raise)):
        return False
    if getattr(node, "s2s_check", False):
        return True
    test, error = node.test, node.body[0].exc
    return isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.Lt) \
        and len(test.ops) == 1 and isinstance(test.left, ast.BinOp) \
        and isinstance(test.left.op, ast.Sub) and isinstance(test.left.left, ast.Call) \
        and isinstance(test.left.left.func, ast.Attribute) and test.left.left.func.attr == "ndim" \
        and isinstance(error, ast.Call) and isinstance(error.func, ast.Name) \
        and error.func.id in ("IndexError", "TypeError")
