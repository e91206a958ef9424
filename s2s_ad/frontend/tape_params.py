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
where ``p[k]`` may read an array, only a parameter used as a list and in no
other way (``p[k]``, ``len(p)``, ``p.pop()``, ``for v in p``: a tape of the
forward pass passed to a helper's backward function) is such an item.
"""

from __future__ import annotations

import ast
import functools
import types

from s2s_ad.frontend import own_helpers
from s2s_ad.frontend.pair_layout import pairs_of, tape_layout
from s2s_ad.names import Namer
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["rewrite", "own_items"]


def own_items(fwd: ast.FunctionDef, n_items: int, only: bool = False,
              globals_: dict | None = None) -> dict[int, int]:
    """Tape item -> the position of the parameter of ``fwd`` it is at every
    ``return value, (a, b, ...)`` of ``fwd`` (a list parameter: read by
    index, ``len`` or a loop, or passed on to a function of the module,
    ``globals_``, that reads it so; never bound again in ``fwd``). ``only`` (a
    NumPy module): a parameter read in no other way (besides the tapes
    returned)."""
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
    listed = list_parameters(fwd, globals_ or {}, only, frozenset({fwd.name}))
    out = {}
    for k in range(n_items):
        names = {e.id if isinstance(e, ast.Name) else None for e in (t[k] for t in tapes)}
        if len(names) == 1:
            p = names.pop()
            if p in params and p in listed and p not in stored:
                out[k] = params.index(p)
    return out


def list_parameters(fn: ast.FunctionDef, globals_: dict, only: bool, seen: frozenset) -> set:
    """The names ``fn`` reads as lists (``p[k]``, ``len(p)``, ``for v in p``;
    ``p`` passed to a function of the module whose parameter there is read
    so); ``only``: read in no other way, but in the tapes ``fn`` returns."""
    listed, other = set(), set()
    parents = syntax_walk.parents(fn)
    kept = {id(e) for r in walk(fn) if isinstance(r, ast.Return)
            and isinstance(r.value, ast.Tuple) and len(r.value.elts) == 2
            and isinstance(r.value.elts[1], ast.Tuple) for e in r.value.elts[1].elts}
    for n in walk(fn):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            listed.add(n.value.id)
            if isinstance(n.slice, ast.Slice) or not isinstance(n.ctx, ast.Load):
                other.add(n.value.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" \
                and len(n.args) == 1 and isinstance(n.args[0], ast.Name):
            listed.add(n.args[0].id)
        elif isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.iter, ast.Name):
            listed.add(n.iter.id)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in kept \
                and not _read_as_list(n, parents.get(id(n))):
            if _passed_as_list(n, parents.get(id(n)), globals_, only, seen):
                listed.add(n.id)
            elif only:
                other.add(n.id)
    return listed - other if only else listed


def _passed_as_list(n: ast.Name, call, globals_: dict, only: bool, seen: frozenset) -> bool:
    """Is ``n`` a positional argument of a call of a function of the module
    (``globals_``) whose parameter there it reads as a list?"""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id not in seen and any(a is n for a in call.args)
            and not any(isinstance(a, ast.Starred) for a in call.args)):
        return False
    callee = globals_.get(call.func.id)
    if not (isinstance(callee, types.FunctionType) and callee.__globals__ is globals_):
        return False
    params, listed = _callee_lists(callee, only, seen)
    k = next(k for k, a in enumerate(call.args) if a is n)
    return k < len(params) and params[k] in listed


def _read_as_list(n: ast.Name, parent) -> bool:
    """Is this read of a name ``p`` one that reads a list: ``p[k]``, ``len(p)``,
    ``p.pop()``, ``for v in p``?"""
    return (isinstance(parent, ast.Subscript) and parent.value is n
            or isinstance(parent, ast.Attribute) and parent.attr == "pop"
            or isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
            and parent.func.id == "len" and parent.args == [n]
            or isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is n)


@functools.lru_cache(maxsize=256)
def _callee_lists(callee, only: bool, seen: frozenset) -> tuple[tuple, frozenset]:
    """A function's positional parameters and those it reads as lists
    (:func:`list_parameters`), parsed once per function (each call site of a
    module asks)."""
    tree = own_helpers.function_tree(callee)
    if tree is None or tree.args.vararg:
        return (), frozenset()
    return (tuple(a.arg for a in tree.args.args),
            frozenset(list_parameters(tree, callee.__globals__, only,
                                      seen | {callee.__name__})))


def _own(globals_: dict) -> dict:
    """``H_fwd`` -> its own items (:func:`own_items`), for the pairs of a
    module s2s-ad wrote."""
    only = own_helpers.numpy_alias(globals_) is not None
    pairs = pairs_of(globals_)
    memo: dict = {}

    def own_of(fwd: str) -> dict:
        if fwd not in memo:
            memo[fwd] = {}  # (a pair calling itself: none)
            memo[fwd] = _own_of(globals_, pairs, fwd, only, own_of)
        return memo[fwd]

    out = {fwd: found for fwd in pairs for found in [own_of(fwd)] if found}
    if out:
        for name in _called_in_loops(globals_, set(out)):
            del out[name]
    return out


def _own_of(globals_: dict, pairs, fwd: str, only: bool, own_of) -> dict:
    """The own items of ``fwd``, at the positions of its tape once split; an
    item of another pair's tape (``y, T = G_fwd(xs)`` in ``fwd``, ``T``
    returned: a helper calling a helper) that is ``G_fwd``'s own item at a
    parameter given a parameter of ``fwd`` is ``fwd``'s own item too."""
    bwd, items = pairs[fwd]
    tree = own_helpers.function_tree(globals_.get(fwd))
    if tree is None:
        return {}
    raw, nested = tape_layout(globals_.get(bwd))
    found = own_items(tree, len(raw or items), only, globals_)
    if not raw:
        return found
    # an item before which another pair's tape is split into its items
    at = [sum(len(nested.get(u, (u,))) for u in raw[:k]) for k in range(len(raw))]
    out = {at[k]: p for k, p in found.items() if raw[k] not in nested}
    returns = [r for r in walk(tree) if isinstance(r, ast.Return)]
    if len(returns) != 1 or not (isinstance(returns[0].value, ast.Tuple)
                                 and len(returns[0].value.elts) == 2
                                 and isinstance(returns[0].value.elts[1], ast.Tuple)
                                 and len(returns[0].value.elts[1].elts) == len(raw)):
        return out
    params = [a.arg for a in tree.args.args]
    stored = [n.id for n in walk(tree) if isinstance(n, ast.Name)
              and not isinstance(n.ctx, ast.Load)]
    for k, e in enumerate(returns[0].value.elts[1].elts):
        call = _bound_by_call(tree, e, pairs) if raw[k] in nested else None
        if call is None or len(pairs[call.func.id][1]) != len(nested[raw[k]]):
            continue
        for j, p in own_of(call.func.id).items():
            arg = call.args[p] if p < len(call.args) else None
            if isinstance(arg, ast.Name) and arg.id in params and arg.id not in stored:
                out[at[k] + j] = params.index(arg.id)
    return out


def _bound_by_call(tree: ast.FunctionDef, e, pairs) -> ast.Call | None:
    """The call of a pair's forward function, ``y, T = G_fwd(...)``, that is
    the one binding of the name ``e`` in ``tree``; else None."""
    if not isinstance(e, ast.Name):
        return None
    binds = [n for n in walk(tree) if isinstance(n, ast.Name) and n.id == e.id
             and not isinstance(n.ctx, ast.Load)]
    found = [n for n in walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Tuple) and len(n.targets[0].elts) == 2
             and n.targets[0].elts[1] in binds and isinstance(n.value, ast.Call)
             and isinstance(n.value.func, ast.Name) and n.value.func.id in pairs
             and not any(isinstance(a, ast.Starred) for a in n.value.args)]
    return found[0].value if len(binds) == 1 and len(found) == 1 else None


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
