"""A list taped where it is made and filled after: taped once filled.

Contract: ``rewrite(tree)`` rewrites, in place, a function of s2s-ad's own
generated code (a forward pass recording a loop's tape) where a list is put
on a tape right after it is made, ``ys = []`` then ``ys_tape.append(ys)``,
and filled by the statements after it in the same block (``ys.append(v)``
in a loop). The tape holds the list object itself, so what the reverse sweep
reads is the filled list; the append is moved after the last statement of
the block that names ``ys``, so that the list is taped as it is read (the
lowering follows a list grown at run time under one name, not as an item of
another list while it grows). The same object goes on the same tape: the
move is made only where nothing between reads the tape, binds ``ys`` again
or leaves the block (``break``, ``continue``, ``return``, ``raise`` outside a
loop of its own).

Before → after::

    b = []                                 b = []
    b_tape.append(b)                       for i in range(k):
    for i in range(k):                         b.append(v[i])
        b.append(v[i])                     r.append(b[0])
    r.append(b[0])                         b_tape.append(b)
"""

from __future__ import annotations

import ast

from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["rewrite"]


def rewrite(tree: ast.FunctionDef) -> None:
    for node in list(syntax_walk.blocks(tree)):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                _moved(block)


def _moved(block: list) -> None:
    k = 0
    while k + 1 < len(block):
        made, taped = block[k], block[k + 1]
        name, tape = _new_list(made), _taped(taped)
        if name is None or tape is None or tape[1] != name:
            k += 1
            continue
        rest = block[k + 2:]
        last = max((j for j, s in enumerate(rest) if _names(s) & {name}), default=None)
        if last is None or not _movable(rest[:last + 1], name, tape[0]):
            k += 1
            continue
        block.remove(taped)
        block.insert(k + 1 + last + 1, taped)
        k += 1


def _new_list(stmt) -> str | None:
    """``ys`` for ``ys = []``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.List) \
            and not stmt.value.elts:
        return stmt.targets[0].id
    return None


def _taped(stmt) -> tuple[str, str] | None:
    """``(T, ys)`` for ``T.append(ys)``."""
    c = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) \
            and c.func.attr == "append" and isinstance(c.func.value, ast.Name) \
            and len(c.args) == 1 and isinstance(c.args[0], ast.Name) and not c.keywords:
        return c.func.value.id, c.args[0].id
    return None


def _names(stmt) -> set:
    return {n.id for n in walk(stmt) if isinstance(n, ast.Name)}


def _movable(stmts: list, name: str, tape: str) -> bool:
    """Do ``stmts`` leave the tape unread, ``name`` bound to its list and the
    block by its end only?"""
    for stmt in stmts:
        if tape in _names(stmt) or any(
                isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                for n in walk(stmt)):
            return False
        if _leaves(stmt, in_loop=False):
            return False
    return True


def _leaves(node, in_loop: bool) -> bool:
    """Does ``node`` jump out of the block holding it (a ``break`` or
    ``continue`` not inside a loop of its own, any ``return`` or ``raise``)?"""
    if isinstance(node, (ast.Return, ast.Raise)):
        return True
    if isinstance(node, (ast.Break, ast.Continue)):
        return not in_loop
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return False
    inner = in_loop or isinstance(node, (ast.For, ast.While))
    return any(_leaves(c, inner if c not in getattr(node, "orelse", ()) else in_loop)
               for c in syntax_walk.child_nodes(node))
