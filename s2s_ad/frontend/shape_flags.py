"""The shape flags of s2s-ad's own NumPy gradients, read back from a file.

Contract: ``unflag(tree, globals_)`` rewrites, in place, a function
definition of a generated NumPy gradient module (one defining the
``same_shapes`` helper, recognised by its exact text,
:func:`s2s_ad.frontend.own_helpers.is_helper`): each statement
``flat = same_shapes(...)`` (or ``flat = flat_1 or same_shapes(...)``, or
``flat_1 = flat and same_shapes(...)``) is taken out, and each expression
``g if flat else unbroadcast(g, x)`` reading such a flag (the helper
``unbroadcast``, by its text, in the other arm) is written
``unbroadcast(g, x)``, its other arm: ``unbroadcast`` returns ``g`` itself
where the flag holds (:mod:`s2s_ad.reverse.flat_shapes`), so the values are
the same, and the rest of the frontend reads the call as it reads any other
(an own helper with its own rule). A flag assigned anywhere else, or read
other than as such a test, leaves the function as it is (refused as before).

Before → after::

    flat = same_shapes(cell, forget)
    dcell = dt12 * forget if flat else unbroadcast(dt12 * forget, cell)
                                    ──▶  dcell = unbroadcast(dt12 * forget, cell)
"""

from __future__ import annotations

import ast

from s2s_ad.frontend import own_helpers
from s2s_ad.syntax_walk import walk

__all__ = ["unflag"]


def unflag(tree: ast.FunctionDef, globals_: dict) -> None:
    """Take out ``tree``'s shape flags (see the module)."""
    helpers = {k for k, v in globals_.items() if own_helpers.is_helper(v, "same_shapes")}
    if not helpers:
        return
    flags: dict[str, int] = {}
    for node in walk(tree):
        if _flag_of(node, helpers) is not None:
            name = node.targets[0].id
            flags[name] = flags.get(name, 0) + 1
    stored = {}
    for node in walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stored[node.id] = stored.get(node.id, 0) + 1
    flags = {k for k, n in flags.items() if n == 1 and stored.get(k) == 1}
    summed = {k for k, v in globals_.items() if own_helpers.is_helper(v, "unbroadcast")}
    tests = {id(n.test) for n in walk(tree) if isinstance(n, ast.IfExp)
             and isinstance(n.test, ast.Name) and n.test.id in flags
             and isinstance(n.orelse, ast.Call) and isinstance(n.orelse.func, ast.Name)
             and n.orelse.func.id in summed}
    # a flag's own definition may read another (flat = flat_1 or same_shapes(...))
    bases = {}
    for node in walk(tree):
        if _flag_of(node, helpers) is not None and isinstance(node.value, ast.BoolOp):
            bases[id(node.value.values[0])] = node.targets[0].id
    discarded = True
    while discarded:  # read other than as a test: left alone
        discarded = False
        for node in walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                    and node.id in flags and id(node) not in tests \
                    and bases.get(id(node)) not in flags:
                flags.discard(node.id)
                discarded = True
    if not flags:
        return
    for node in walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept = [s for s in block if not (_flag_of(s, helpers) is not None
                                                 and s.targets[0].id in flags)]
                block[:] = kept or [ast.copy_location(ast.Pass(), block[0])]
    _Arms(flags).visit(tree)


def _flag_of(node, helpers: set):
    """``node``'s call when it is ``name = same_shapes(...)``, ``name = flag
    or same_shapes(...)`` or ``name = flag and same_shapes(...)``, else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return None
    value = node.value
    if isinstance(value, ast.BoolOp) and isinstance(value.op, (ast.And, ast.Or)) \
            and len(value.values) == 2 and isinstance(value.values[0], ast.Name):
        value = value.values[1]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and value.func.id in helpers:
        return value
    return None


class _Arms(ast.NodeTransformer):
    def __init__(self, flags: set):
        self.flags = flags

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        if isinstance(node.test, ast.Name) and node.test.id in self.flags:
            return node.orelse
        return node
