"""Generators, ``map``, ``zip`` and ``filter`` bound to a name.

Contract: Python computes the items of ``g = (t * 2.0 for t in xs)`` (and of
``map(f, xs)``, ``zip(xs, ys)``, ``filter(f, xs)``) lazily: where ``g`` is
consumed, from what ``xs`` (and every name the expression reads) holds then,
and once (a second ``sum(g)`` is 0). The lowering makes the items where ``g``
is bound. :func:`refuse_stale` refuses, located, a name bound to one where the
two differ: the name read more than once, read outside the block of its
binding (a loop's later iteration, another arm), or read after a statement
between the binding and the read rebinds or changes a name the iterator reads
(an assignment, an augmented assignment, a write into an item or attribute,
``del``, a list or dict method that changes it). Where none of that happens the
items made at the binding are the ones Python makes.

Refused::

    g = (t * 2.0 for t in xs)
    xs[0] = y                 <- changes `xs`, which `g` reads when consumed
    return sum(g)
"""

from __future__ import annotations

import ast
import builtins

from s2s_ad.syntax_walk import blocks, walk

__all__ = ["refuse_stale"]

LAZY_BUILTINS = {builtins.map: "`map` object", builtins.zip: "`zip` object",
                 builtins.filter: "`filter` object"}

CHANGES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                     "update", "setdefault", "popitem"})
"""Methods of a list or dict that change it."""


def refuse_stale(lo, body: list) -> None:
    """Refuse, located, a lazy iterator bound to a name in ``body`` (the
    function's statements, ``lo`` its lowering) whose items made at the
    binding would differ from Python's (see the module)."""
    lists = [body] + [getattr(n, f) for s in body for n in blocks(s)
                      for f in ("body", "orelse", "finalbody")
                      if isinstance(n, ast.stmt) and isinstance(getattr(n, f, None), list)]
    for block in lists:
        for k, stmt in enumerate(block):
            found = _binding(lo, stmt)
            if found is None:
                continue
            name, value, what = found
            reads = _reads(value)
            everywhere = [n for s in body for n in walk(s) if _read_of(n, name)]
            later = [j for j, s in enumerate(block[k + 1:], k + 1)
                     if any(_read_of(n, name) for n in walk(s))]
            if len(everywhere) != 1 or len(later) != 1:
                raise lo.src.error(stmt, f"`{name}` is a {what}, which Python computes "
                                   "lazily, once, where it is read; s2s-ad reads it once, in "
                                   "the block where it is bound, after it: consume it there "
                                   f"(`sum({name})`, `for ... in {name}:`), or make a list "
                                   f"(`{name} = list(...)`)")
            for s in block[k + 1:later[0]]:
                changed = _changes(s, reads)
                if changed is not None:
                    raise lo.src.error(s, f"this changes `{changed}`, which the {what} "
                                       f"`{name}` (line {stmt.lineno}) reads when it is "
                                       "consumed, as Python computes it lazily; s2s-ad makes "
                                       "its items where it is bound: consume it before the "
                                       f"change, or make a list there (`{name} = list(...)`)")


def _binding(lo, stmt: ast.stmt):
    """``(name, value, what)`` for ``name = <generator | map(...) | zip(...) |
    filter(...)>``, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    value = stmt.value
    if isinstance(value, ast.GeneratorExp):
        return stmt.targets[0].id, value, "generator"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and value.func.id not in lo.env and value.func.id not in lo.local_fns:
        try:
            fn = lo.resolve(value.func)
        except Exception:  # not a name of the module or a builtin: not one of these
            return None
        for lazy, what in LAZY_BUILTINS.items():
            if fn is lazy:
                return stmt.targets[0].id, value, what
    return None


def _reads(value: ast.expr) -> set:
    """The names ``value`` reads that it does not bind itself (a
    comprehension's targets, a lambda's parameters)."""
    bound = {n.id for n in walk(value) if isinstance(n, ast.Name)
             and not isinstance(n.ctx, ast.Load)}
    bound |= {a.arg for n in walk(value) if isinstance(n, ast.Lambda) for a in walk(n.args)
              if isinstance(a, ast.arg)}
    return {n.id for n in walk(value) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)} - bound


def _read_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _changes(stmt: ast.stmt, names: set) -> str | None:
    """A name of ``names`` that ``stmt`` rebinds or changes, or None."""
    for n in walk(stmt):
        if isinstance(n, ast.Name) and n.id in names and not isinstance(n.ctx, ast.Load):
            return n.id
        if isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load) \
                and _root(n) in names:
            return _root(n)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr in CHANGES and _root(n.func.value) in names:
            return _root(n.func.value)
    return None
