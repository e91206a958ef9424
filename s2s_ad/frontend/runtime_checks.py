"""A check the generated code makes where it runs, placed by the frontend.

Contract: :func:`raise_unless` appends to ``lo.ops`` a ``check`` op that
raises ``exc(message)`` unless ``cond`` (a bool operand the caller lowered)
holds: the form of the checks around integer index arrays, dtypes of
written arrays, list indices and classes decided while lowering. The op has
no derivative; every forward pass keeps it (:mod:`s2s_ad.frontend.checks`
lowers the user's own ``assert`` and ``if ...: raise`` to the same op).
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
