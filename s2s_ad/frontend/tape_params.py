"""A forward function's own list parameter on its tape, read as the argument.

Contract: :func:`rewrite` rewrites, in place, a function of a module s2s-ad
generated (its helper pairs' tapes already split, :mod:`s2s_ad.frontend.pairs`)
where ``H_fwd`` keeps one of its list parameters, unchanged, on its tape
(``return s, xs, t3, t1_tape``: ``H_bwd`` reads ``xs`` again). That item
*is* the list the caller passed, the very object: the lowering, which
reads what a helper returns as a new list, refuses a helper returning the
caller's list (the caller could change the one and not see the other
change). So in ``H_fwd`` the item is returned as ``0.0``, and where a call
binds the items the caller binds that one to the argument itself, the same
object under one more name (the lowering follows a list changed in place
under each of its names):

    y, T_0, T_1 = h_fwd(xs)                 y, T_0_unused, T_1 = h_fwd(xs)
                                            T_0 = xs

An argument that is no name (``h_fwd(ys[:], x)``) is bound to a name first,
with every argument before it, in order (Python evaluates them in that
order). Where the items are bound otherwise (the tape of a nested pair split
into more items, a keyword or default argument), or a call of ``H_fwd`` is
in a loop (whose tape of those items would hold the argument under a
second name), nothing is rewritten, and the lowering reads the return as
before (refused, located, where it is the caller's list). In a NumPy module,
whose parameters are arrays read as values, nothing is rewritten.
"""

from __future__ import annotations

import ast
import types

from s2s_ad.frontend import own_helpers
from s2s_ad.frontend.pair_layout import pairs_of
from s2s_ad.names import Namer
from s2s_ad.syntax_walk import walk

__all__ = ["rewrite", "own_items"]


def own_items(fwd: ast.FunctionDef, n_items: int) -> dict[int, int]:
    """Tape item -> the position of the parameter of ``fwd`` it is at every
    ``return value, (a, b, ...)`` of ``fwd`` (a list parameter: read by
    index, ``len`` or a loop; never bound again in ``fwd``)."""
    returns = [r for r in walk(fwd) if isinstance(r, ast.Return)]
    if not returns or fwd.args.vararg or fwd.args.kwarg:
        return {}
    tapes = []
    for r in returns:
        v = r.value
        if not (isinstance(v, ast.Tuple) and len(v.elts) == 2 and isinstance(v.elts[1], ast.Tuple)
                and len(v.elts[1].elts) == n_items):
            return {}
        tapes.append(v.elts[1].elts)
    params = [a.arg for a in fwd.args.args]
    stored = {n.id for n in walk(fwd) if isinstance(n, ast.Name)
              and not isinstance(n.ctx, ast.Load)}
    listed = set()
    for n in walk(fwd):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            listed.add(n.value.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" \
                and len(n.args) == 1 and isinstance(n.args[0], ast.Name):
            listed.add(n.args[0].id)
        elif isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.iter, ast.Name):
            listed.add(n.iter.id)
    out = {}
    for k in range(n_items):
        names = {e.id if isinstance(e, ast.Name) else None for e in (t[k] for t in tapes)}
        if len(names) == 1:
            p = names.pop()
            if p in params and p in listed and p not in stored:
                out[k] = params.index(p)
    return out


def _own(globals_: dict) -> dict:
    """``H_fwd`` -> its own items (:func:`own_items`), for the pairs of a
    module s2s-ad wrote that is no NumPy module."""
    if own_helpers.numpy_alias(globals_) is not None:
        return {}
    out = {}
    for fwd, (_, items) in pairs_of(globals_).items():
        tree = own_helpers.function_tree(globals_.get(fwd))
        found = own_items(tree, len(items)) if tree is not None else {}
        if found:
            out[fwd] = found
    if out:
        for name in _called_in_loops(globals_, set(out)):
            del out[name]
    return out


def _called_in_loops(globals_: dict, names: set) -> set:
    """Those of ``names`` some function of the module calls inside a loop
    (where the caller keeps the item on a tape of its own, read as a list
    of lists, which the name bound to the argument would hold twice)."""
    found = set()
    for fn in list(globals_.values()):
        if not (isinstance(fn, types.FunctionType) and fn.__globals__ is globals_):
            continue
        tree = own_helpers.function_tree(fn)
        for loop in (n for n in walk(tree) if isinstance(n, (ast.For, ast.While))) if tree else ():
            found |= {c.func.id for c in walk(loop) if isinstance(c, ast.Call)
                      and isinstance(c.func, ast.Name) and c.func.id in names}
    return found


def rewrite(tree: ast.FunctionDef, globals_: dict, namer: Namer) -> None:
    """See the module: ``tree``'s own returns (if it is such an ``H_fwd``)
    and its calls of such functions."""
    own = _own(globals_)
    if not own:
        return
    if tree.name in own:
        for r in (n for n in walk(tree) if isinstance(n, ast.Return)):
            # (split: `return value, a, b, c`)
            for k in own[tree.name]:
                if isinstance(r.value, ast.Tuple) and len(r.value.elts) > 1 + k:
                    r.value.elts[1 + k] = ast.copy_location(ast.Constant(0.0),
                                                            r.value.elts[1 + k])
    n_items = {fwd: len(items) for fwd, (_, items) in pairs_of(globals_).items()}
    for node in list(walk(tree)):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and isinstance(node, (ast.stmt, ast.Module)):
                block[:] = [s for stmt in block
                            for s in _call_site(stmt, own, n_items, namer)]


def _call_site(stmt: ast.stmt, own: dict, n_items: dict, namer: Namer) -> list:
    """``y, T_0, T_1 = H_fwd(...)`` with the items ``H_fwd`` keeps of its own
    parameters bound to the arguments (see the module)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Tuple) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in own):
        return [stmt]
    call, targets = stmt.value, stmt.targets[0].elts
    items = own[call.func.id]
    if len(targets) != 1 + n_items[call.func.id] \
            or not all(isinstance(t, ast.Name) for t in targets[1:]) \
            or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(p >= len(call.args) for p in items.values()):
        return [stmt]
    out = []
    last = max(p for p in items.values() if not isinstance(call.args[p], ast.Name)) \
        if any(not isinstance(call.args[p], ast.Name) for p in items.values()) else -1
    for p in range(last + 1):
        # (every argument up to the last one named here, in order)
        name = namer.fresh(f"{call.func.id}_arg")
        out.append(_assign(name, call.args[p], stmt))
        call.args[p] = ast.copy_location(ast.Name(name, ast.Load()), call.args[p])
    out.append(stmt)
    for k, p in sorted(items.items()):
        kept = targets[1 + k].id
        targets[1 + k] = ast.copy_location(ast.Name(namer.fresh(f"{kept}_unused"), ast.Store()),
                                           targets[1 + k])
        out.append(_assign(kept, ast.Name(call.args[p].id, ast.Load()), stmt))
    return out


def _assign(name: str, value: ast.expr, at: ast.stmt) -> ast.Assign:
    return ast.fix_missing_locations(ast.copy_location(
        ast.Assign([ast.Name(name, ast.Store())], value), at))
