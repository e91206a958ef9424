"""Negations folded into the statement that made the negated value.

Contract: :func:`run` rewrites a list of :class:`~s2s_ad.code.Stmt` /
:class:`~s2s_ad.code.Block` in place, block by block. A statement ``v = -w``,
where ``w`` is assigned once (``w = e``) earlier in the same block and read
nowhere else in the function (``counts``), becomes the copy ``v = w``, and
``w``'s definition computes ``-e`` without a negation of its own: a minus
sign inside ``e`` (``a * (-b / c)`` → ``a * (b / c)``), or, through a factor
that is itself such a name, inside that name's definition. When ``e`` has no
minus sign to drop, nothing changes. Every rewrite is exact: IEEE negation
only flips the sign bit, so ``-(a * b)``, ``a * -b`` and ``(-a) * b`` are the
same number, and so for ``/``. Each folded ``-`` is one NumPy call fewer on
arrays.

Before → after (the reverse sweep of ``1.0 / (1.0 + np.exp(-x))``)::

    dt3 = ds * (-s / t3)        dt3 = ds * (s / t3)
    dt1 = dt3 * t2       ──▶    dt1 = dt3 * t2
    dx = -dt1                   dx = dt1

    dt8 = -ddists               dt8 = ddists
    dcross = dt8 * 2     ──▶    dcross = dt8 * -2
"""

from __future__ import annotations

import ast
from collections import Counter

from s2s_ad.emit.code import Block, Stmt

NOTE = "the sign folded in where it was made"
NEGATED = "negated: a later ∂ = -1 takes the sign"
SCALED = "negated: a later number takes the sign"


def run(stmts: list, counts: Counter) -> None:
    for s in stmts:
        if isinstance(s, Block):
            run(s.body, counts)
            run(s.orelse, counts)
    defined: dict[str, int] = {}
    for i, s in enumerate(stmts):
        target = _target(s)
        if target is None:
            continue
        value = s.node.value
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) \
                and isinstance(value.operand, ast.Name):
            w = value.operand.id
            if w != target and _fold(w, stmts, defined, counts, i):
                s.node.value = ast.Name(w, ast.Load())
                s.comment = f"{s.comment} ({NOTE})" if s.comment else NOTE
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
            # v = w * 2 with w = -e: the sign onto the number (v = w * -2, w = e)
            for side, other in (("left", "right"), ("right", "left")):
                w, c = getattr(value, side), _number(getattr(value, other))
                if isinstance(w, ast.Name) and c and w.id != target \
                        and _fold(w.id, stmts, defined, counts, i, SCALED):
                    setattr(value, other, ast.Constant(-c) if c < 0
                            else ast.UnaryOp(ast.USub(), ast.Constant(c)))
                    s.comment = f"{s.comment} ({NOTE})" if s.comment else NOTE
                    break
        defined[target] = i


def _number(e: ast.expr):
    """The value of a numeric literal (``2``, ``-0.5``), else None."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        v = _number(e.operand)
        return None if v is None else -v
    if isinstance(e, ast.Constant) and type(e.value) in (int, float):
        return e.value
    return None


def _target(s) -> str | None:
    """``y`` for ``y = e`` (one plain-name target)."""
    if isinstance(s, Stmt) and isinstance(s.node, ast.Assign) and len(s.node.targets) == 1 \
            and isinstance(s.node.targets[0], ast.Name):
        return s.node.targets[0].id
    return None


def _fold(name: str, stmts: list, defined: dict, counts: Counter, before: int,
          note: str = NEGATED) -> bool:
    """Make ``name``'s definition compute the negation of what it does, when
    ``name`` is assigned once, there, before position ``before`` (its
    reader's), and read once (by that reader), and the definition has a
    minus sign to drop."""
    if counts[name] != 2 or defined.get(name, before) >= before:
        return False
    s = stmts[defined[name]]
    new = _negated(s.node.value, stmts, defined, counts, defined[name])
    if new is None:
        return False
    s.node.value = new
    s.comment = f"{s.comment} ({note})" if s.comment else note
    if s.partial:
        s.partial = f"{s.partial} ({note})"
    return True


def _negated(e: ast.expr, stmts: list, defined: dict, counts: Counter,
             at: int) -> ast.expr | None:
    """``-e`` with one minus sign of ``e`` dropped (None when there is none):
    ``-x`` → ``x``; a product or quotient: its left factor negated, else its
    right one; a name: its definition negated (see :func:`_fold`)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return e.operand
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mult, ast.Div)):
        left = _negated(e.left, stmts, defined, counts, at)
        if left is not None:
            return ast.BinOp(left, e.op, e.right)
        right = _negated(e.right, stmts, defined, counts, at)
        if right is not None:
            return ast.BinOp(e.left, e.op, right)
        return None
    if isinstance(e, ast.Name) and _fold(e.id, stmts, defined, counts, at):
        return e
    return None
