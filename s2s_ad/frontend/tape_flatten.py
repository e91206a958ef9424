"""A loop's tape of the list tapes a helper's forward function returns, read
back as one flat tape of their items and a tape of their lengths.

Contract: ``rewrite(tree, globals_, namer)`` runs after
:func:`s2s_ad.frontend.pairs.split` on a function of a module s2s-ad
generated. A call ``y, T_0, T_1 = H_fwd(...)`` in a loop binds the items of
``H_fwd``'s tape; an item that ``H_bwd`` reads as a list (``T[k]``,
``T.pop()``: the tape of a loop of the helper, of any length; in a NumPy
module, where an item read by index may be an array, one it uses in no other
way, so that a list of its items reads the same), or that ``H_fwd`` makes as
one (``ys = [0.0] * n``, ``T = []``), and that the
caller's loop keeps on a tape of its own (``Ts[i] = T``, a
statement in the body of ``for i in range(n)`` with no ``continue``,
``break`` or ``return`` before it, or ``Ts.append(T)``; read back in the
reverse sweep by ``T = Ts[i]`` in ``for i in reversed(range(n))``, or by
``T = Ts.pop()``, and then only read: passed to ``H_bwd``, indexed, iterated
over, measured by ``len``) is a list of lists, which
the rest of the frontend does not lower (a list grown at run time holds
numbers). So is a tape of the lists a call returns as its value (``ys, T_0
= H_fwd(...)``, ``H_fwd`` returning a list it makes), and an item of
``H_bwd``'s tape that is another pair's tape holds lists where that pair's
backward function reads them as lists. The tape of lists becomes a flat tape of their items and a tape of
their lengths: each write appends ``len(T)`` to ``Ts_n`` and ``T``'s items to
``Ts``, in order; each read pops the length, then the items, last first, into
a list, and appends them from that list's end to a new list (no write by
index: the items may be arrays), passed to ``H_bwd`` as ``T`` was. The reverse
sweep reads the tapes in the reverse order of the writes, one read per write
(the loop runs backwards; a branch's reads are under its recorded decision),
so each read rebuilds the list its write took apart: the same values at the
same places. Anything of another shape is left alone (and refused, located,
as before).

Before → after::

    Ts = []                                   Ts = []
                                              Ts_n = []
    for r in range(2):                        for r in range(2):
        y, T_0, T_1 = H_fwd(x, n)                 y, T_0, T_1 = H_fwd(x, n)
        Ts.append(T_1)                            Ts_n.append(len(T_1))
                                                  for T_1_item in T_1:
                                                      Ts.append(T_1_item)
    for r in reversed(range(2)):              for r in reversed(range(2)):
        T_1 = Ts.pop()                            T_1_k = Ts_n.pop()
                                                  T_1_b = []
                                                  for T_1_i in range(T_1_k):
                                                      T_1_v = Ts.pop()
                                                      T_1_b.append(T_1_v)
                                                  T_1_r = []
                                                  for T_1_i in range(T_1_k):
                                                      T_1_r.append(T_1_b[T_1_k - 1 - T_1_i])
        dx, = H_bwd(T_0, T_1, dy)                 dx, = H_bwd(T_0, T_1_r, dy)
"""

from __future__ import annotations

import ast
import textwrap
import types

from s2s_ad.frontend import own_helpers
from s2s_ad.frontend.pair_layout import bound_as_list, listed_items, tape_layout
from s2s_ad.names import Namer
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["rewrite"]


def rewrite(tree: ast.FunctionDef, globals_: dict, namer: Namer, pairs: dict) -> None:
    """``pairs``: ``H_fwd`` -> (``H_bwd``, the names of its tape's items once split)."""
    if not pairs or any(isinstance(n, ast.Name) and n.id in ("len", "range", "reversed")
                        and not isinstance(n.ctx, ast.Load) for n in walk(tree)):
        return
    parents = syntax_walk.parents(tree)
    arrays = own_helpers.numpy_alias(globals_) is not None
    lists: dict[str, str] = {}  # a list item's name at a call site -> H_bwd
    for n in walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 \
                and isinstance(n.targets[0], ast.Tuple) and isinstance(n.value, ast.Call) \
                and isinstance(n.value.func, ast.Name) and n.value.func.id in pairs:
            bwd, items = pairs[n.value.func.id]
            layout = tape_layout(globals_.get(bwd))
            listed = listed_items(globals_.get(n.value.func.id), globals_.get(bwd), items,
                                  layout, arrays)
            names = n.targets[0].elts[1:]
            if listed is None or len(names) != len(items):
                continue
            for e, item in zip(names, items):
                if isinstance(e, ast.Name) and item in listed:
                    lists[e.id] = bwd
            value = n.targets[0].elts[0]
            if isinstance(value, ast.Name) and _value_made_list(globals_.get(n.value.func.id)):
                lists[value.id] = bwd  # the helper's result, a list it made
    if not lists:
        return
    for tape in sorted(_tapes_of(tree, lists)):
        plan = _plan(tree, tape, lists, parents)
        if plan is not None:
            _apply(tape, plan, namer)
    ast.fix_missing_locations(tree)


def _value_made_list(fwd) -> bool:
    """Does ``fwd`` return, as its value (``return ys, (tape...)``, one
    ``return``), a list it makes and binds to nothing else?"""
    fn = own_helpers.function_tree(fwd) if isinstance(fwd, types.FunctionType) else None
    returns = [n for n in walk(fn) if isinstance(n, ast.Return)] if fn is not None else []
    return len(returns) == 1 and isinstance(returns[0].value, ast.Tuple) \
        and len(returns[0].value.elts) == 2 and isinstance(returns[0].value.elts[0], ast.Name) \
        and bound_as_list(fn, returns[0].value.elts[0].id)


def _tapes_of(tree, lists: dict) -> set:
    """Names written a list item: ``Ts[i] = T``, ``Ts.append(T)``."""
    out = set()
    for n in walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 \
                and isinstance(n.targets[0], ast.Subscript) \
                and isinstance(n.targets[0].value, ast.Name) \
                and isinstance(n.value, ast.Name) and n.value.id in lists:
            out.add(n.targets[0].value.id)
        appended = _append_of(n)
        if appended is not None and isinstance(appended[1], ast.Name) \
                and appended[1].id in lists:
            out.add(appended[0])
    return out


def _append_of(n):
    if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) \
            and isinstance(n.value.func, ast.Attribute) and n.value.func.attr == "append" \
            and isinstance(n.value.func.value, ast.Name) and len(n.value.args) == 1 \
            and not n.value.keywords:
        return n.value.func.value.id, n.value.args[0]
    return None


def _block_of(stmt, parents) -> tuple[ast.AST, list] | None:
    p = parents.get(id(stmt))
    for field in ("body", "orelse"):
        block = getattr(p, field, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return p, block
    return None


def _range_args(it) -> str | None:
    """The text of ``range(...)``'s arguments, counting up from 0 by 1."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
            and not it.keywords and 1 <= len(it.args) <= 3:
        if len(it.args) > 1 and not (isinstance(it.args[0], ast.Constant)
                                     and it.args[0].value == 0):
            return None
        if len(it.args) == 3 and not (isinstance(it.args[2], ast.Constant)
                                      and it.args[2].value == 1):
            return None
        return ast.unparse(it.args[1] if len(it.args) > 1 else it.args[0])
    return None


def _plan(tree, tape: str, lists: dict, parents: dict) -> dict | None:
    """Every use of ``tape``, classified, or None where one is of another shape."""
    makes, writes, reads = [], [], []
    for n in walk(tree):
        if not (isinstance(n, ast.Name) and n.id == tape):
            continue
        p = parents.get(id(n))
        stmt = parents.get(id(p)) if isinstance(p, (ast.Subscript, ast.Attribute)) else p
        if isinstance(p, ast.Assign) and p.targets == [n] and _made_empty(p.value):
            makes.append(p)
        elif isinstance(p, ast.Subscript) and isinstance(p.ctx, ast.Store) \
                and isinstance(stmt, ast.Assign) and stmt.targets == [p] \
                and isinstance(stmt.value, ast.Name) and stmt.value.id in lists:
            loop = parents.get(id(stmt))
            if not (isinstance(loop, ast.For) and any(s is stmt for s in loop.body)
                    and not _jumps_before(loop.body, stmt)
                    and isinstance(loop.target, ast.Name) and isinstance(p.slice, ast.Name)
                    and p.slice.id == loop.target.id and _range_args(loop.iter) is not None):
                return None
            writes.append((stmt, stmt.value.id, _range_args(loop.iter)))
        elif isinstance(p, ast.Attribute) and p.attr == "append" \
                and _append_of(parents.get(id(parents.get(id(p))))) is not None:
            call = parents.get(id(p))
            arg = call.args[0]
            if not (isinstance(arg, ast.Name) and arg.id in lists):
                return None
            writes.append((parents.get(id(call)), arg.id, None))
        elif isinstance(p, ast.Subscript) and isinstance(p.ctx, ast.Load) \
                and isinstance(stmt, ast.Assign) and stmt.value is p \
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            loop = _block_of(stmt, parents)
            loop = loop[0] if loop else None
            it = loop.iter if isinstance(loop, ast.For) else None
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                    and it.func.id == "reversed" and len(it.args) == 1
                    and isinstance(loop.target, ast.Name) and isinstance(p.slice, ast.Name)
                    and p.slice.id == loop.target.id and _range_args(it.args[0]) is not None):
                return None
            reads.append((stmt, _range_args(it.args[0])))
        elif isinstance(p, ast.Attribute) and p.attr == "pop":
            call = parents.get(id(p))
            stmt = parents.get(id(call))
            if not (isinstance(call, ast.Call) and not call.args and isinstance(stmt, ast.Assign)
                    and stmt.value is call and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)):
                return None
            reads.append((stmt, None))
        else:
            return None
    if len(makes) != 1 or not writes or not reads:
        return None
    # slots (written by index) are read by index over the same range, backwards
    if len({w[2] for w in writes} | {r[1] for r in reads}) != 1:
        return None
    for stmt, _ in reads:
        # the list read is only read in its block: passed to H_bwd, its items
        # read (`T[k]`, a loop or comprehension over it, `len(T)`), as the
        # list rebuilt from the same items in the same order reads the same
        name = stmt.targets[0].id
        where = _block_of(stmt, parents)
        if where is None:
            return None
        rest = where[1][where[1].index(stmt) + 1:]
        for s in rest:
            for n in walk(s):
                if isinstance(n, ast.Name) and n.id == name \
                        and not (isinstance(n.ctx, ast.Load)
                                 and _read_only(n, parents.get(id(n)), lists.get(name))):
                    return None
    return {"make": makes[0], "writes": writes, "reads": reads, "parents": parents}


def _read_only(n: ast.Name, parent, bwd: str | None) -> bool:
    """Is ``n`` (a list) passed to ``bwd``, indexed, iterated over or measured?"""
    if isinstance(parent, ast.Call):
        return isinstance(parent.func, ast.Name) and (
            parent.func.id == bwd and n in parent.args
            or parent.func.id == "len" and parent.args == [n] and not parent.keywords)
    if isinstance(parent, ast.Subscript):
        return parent.value is n and isinstance(parent.ctx, ast.Load)
    return isinstance(parent, (ast.comprehension, ast.For)) and parent.iter is n


def _jumps_before(body: list, stmt) -> bool:
    """A ``continue``, ``break`` or ``return`` before ``stmt`` in ``body``
    (the write would not happen on every iteration)."""
    k = next(j for j, s in enumerate(body) if s is stmt)
    return any(isinstance(n, (ast.Continue, ast.Break, ast.Return))
               for s in body[:k] for n in walk(s))


def _made_empty(value) -> bool:
    if isinstance(value, ast.List) and not value.elts:
        return True
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) \
        and isinstance(value.left, ast.List) and len(value.left.elts) == 1 \
        and isinstance(value.left.elts[0], ast.Constant) and value.left.elts[0].value is None


def _parse(text: str) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(text)).body


def _apply(tape: str, plan: dict, namer: Namer) -> None:
    parents = plan["parents"]
    lengths = namer.fresh(f"{tape}_n")
    make = plan["make"]
    make.value = ast.copy_location(ast.List([], ast.Load()), make.value)
    _replace(make, [make] + _located(_parse(f"{lengths} = []"), make), parents)
    for stmt, name, _ in plan["writes"]:
        item = namer.fresh(f"{name}_item")
        new = _parse(f"{lengths}.append(len({name}))\n"
                     f"for {item} in {name}:\n    {tape}.append({item})\n")
        _replace(stmt, _located(new, stmt), parents)
    for stmt, _ in plan["reads"]:
        name = stmt.targets[0].id
        k, i, item, backwards, rebuilt = (
            namer.fresh(f"{name}_k"), namer.fresh(f"{name}_i"), namer.fresh(f"{name}_v"),
            namer.fresh(f"{name}_b"), namer.fresh(f"{name}_r"))
        # Popped last first into one list, then read back from its end into
        # another: lists grown by appending, which code of numbers and NumPy
        # code both lower (a list of arrays is not written by index).
        new = _parse(f"{k} = {lengths}.pop()\n{backwards} = []\n"
                     f"for {i} in range({k}):\n    {item} = {tape}.pop()\n"
                     f"    {backwards}.append({item})\n"
                     f"{rebuilt} = []\n"
                     f"for {i} in range({k}):\n    {rebuilt}.append({backwards}[{k} - 1 - {i}])\n")
        where = _block_of(stmt, parents)
        for s in where[1][where[1].index(stmt) + 1:]:
            for n in walk(s):
                if isinstance(n, ast.Name) and n.id == name:
                    n.id = rebuilt
        _replace(stmt, _located(new, stmt), parents)


def _located(stmts: list, at: ast.AST) -> list:
    for s in stmts:
        for n in walk(s):
            ast.copy_location(n, at)
    return stmts


def _replace(stmt, new: list, parents: dict) -> None:
    where = _block_of(stmt, parents)
    block = where[1]
    k = next(j for j, s in enumerate(block) if s is stmt)
    block[k:k + 1] = new
    for s in new:
        parents[id(s)] = where[0]
