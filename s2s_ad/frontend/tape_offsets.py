"""Lists of lists in a helper's tape, passed as one list of their items, where
each list starts, and its length.

Contract: ``rewrite(tree, globals_, namer)`` runs after
:func:`s2s_ad.frontend.pairs.split` on a function of a module s2s-ad wrote.
A helper calling a looping helper in its own loop keeps the inner helper's
tapes on a list (``Ts``), which the split makes one list per item of the
inner tape (``Ts_0``, ``Ts_1``, ...). Where the inner tape holds a list (the
tape of a loop of any length, or of one unrolled), that item's list is a list
of lists, which the rest of the frontend does not lower (a list grown at run
time holds numbers or arrays). :func:`s2s_ad.frontend.pair_layout.nested_tapes`
passes it as three lists, ``Ts_1`` (the items), ``Ts_1_at`` (where each list
starts among them) and ``Ts_1_n`` (its length), and here:

* in ``H_fwd``, the list ``L`` returned at that place, made once (``L =
  [None] * n`` or ``L = []``, maybe in one arm of a branch, starting before
  it at a placeholder, :func:`s2s_ad.frontend.pairs.placeholder`) and written only by ``L[i] = T`` or
  ``L.append(T)`` (``T`` a name read nowhere else), holds where ``T`` starts
  in a new list of items (``L[i] = len(L_items)``), a list made and written
  as ``L`` is holds its length (``L_n[i] = len(T)``), and ``T``'s items are
  appended to ``L_items``; ``return ..., L, ...`` returns ``L_items, L, L_n``;
* in ``H_bwd``, each read ``T = Ts_1[e]`` (or ``T = Ts_1.pop()``) reads the
  start and the length at the same place (``Ts_1_at[e]``, ``Ts_1_n[e]``, or
  their pops) and rebuilds the list from the items there, by appending (the
  items may be arrays, which are not written by index).

Each read rebuilds the list the write at its place took apart, in any order
of the reads (the items are read at their positions, not popped): the same
values at the same places. Depth is no limit: the three lists of an inner
helper's tape are lists, so a list of such tapes one level up is passed the
same way. A forward function whose list of lists is kept in another way is
refused, located, at that use.

Before → after::

    def h_fwd(x, m):                          def h_fwd(x, m):
        g_tapes_1 = [None] * m                    g_tapes_1 = [None] * m
                                                  g_tapes_1_n = [None] * m
                                                  g_tapes_1_items = []
        for j in range(m):                        for j in range(m):
            y, g_tape_0, g_tape_1 = g_fwd(x)          y, g_tape_0, g_tape_1 = g_fwd(x)
            g_tapes_1[j] = g_tape_1                   g_tapes_1[j] = len(g_tapes_1_items)
                                                      g_tapes_1_n[j] = len(g_tape_1)
                                                      for v in g_tape_1:
                                                          g_tapes_1_items.append(v)
        return y, m, g_tapes_1                    return y, m, g_tapes_1_items, g_tapes_1,
                                                      g_tapes_1_n

    def h_bwd(m, g_tapes_1, g_tapes_1_at,     (the same parameters)
              g_tapes_1_n, dy):
        for j in reversed(range(m)):              for j in reversed(range(m)):
            g_tape_1 = g_tapes_1[j]                   at = g_tapes_1_at[j]
                                                      k = g_tapes_1_n[j]
                                                      g_tape_1_r = []
                                                      for i in range(int(k)):
                                                          g_tape_1_r.append(
                                                              g_tapes_1[int(at) + i])
            dx, = g_bwd(g_tape_1, dy)                 dx, = g_bwd(g_tape_1_r, dy)
"""

from __future__ import annotations

import ast
import textwrap

from s2s_ad.frontend.int_names import new_list
from s2s_ad.frontend.pair_layout import expanded, pairs_of, read_of, split_layout
from s2s_ad.frontend.pairs import is_placeholder, placeholder
from s2s_ad.names import Namer
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["rewrite"]

_KEPT = ("a list of a helper's tapes holding lists (a helper calling a looping helper in "
         "its loop) is kept here in a way not followed: it is read back when made once as "
         "`[None] * n` or `[]`, written by `tapes[i] = tape` or `tapes.append(tape)` and "
         "returned; differentiate the original function, or its module generated again")
_READ = ("a list of a helper's tapes holding lists (a helper calling a looping helper in "
         "its loop) is read here in a way not followed: it is read back when each tape is "
         "read by `tape = tapes[i]` or `tape = tapes.pop()`; differentiate the original "
         "function, or its module generated again")


def rewrite(tree: ast.FunctionDef, globals_: dict, namer: Namer) -> tuple | None:
    """Rewrite ``tree`` if it is either function of a pair whose tape holds
    lists of lists (see the module); returns ``(node, reason)`` where such a
    list is used in a way not followed (refused, located), else None."""
    for fwd, (bwd, _) in pairs_of(globals_).items():
        if tree.name in (fwd, bwd):
            raw, nested, flat = split_layout(globals_.get(bwd))
            if not flat:
                return None
            if tree.name == fwd:
                return _forward(tree, expanded(raw, nested, {}), flat, namer)
            return _backward(tree, flat, namer)
    return None


# -- the forward function: the lists taken apart -----------------------------

def _forward(tree: ast.FunctionDef, split: tuple, flat: dict, namer: Namer) -> tuple | None:
    """``split``: the items ``H_fwd`` returns after its value, in order;
    ``flat``: those that are lists of lists, with their three names."""
    returns = [n for n in walk(tree) if isinstance(n, ast.Return)]
    places: dict[str, int] = {}  # the list returned at a list of lists' place -> the place
    for r in returns:
        if not (isinstance(r.value, ast.Tuple) and len(r.value.elts) == 1 + len(split)):
            return r, _KEPT
        for k, item in enumerate(split):
            e = r.value.elts[1 + k]
            if item in flat:
                if not isinstance(e, ast.Name) or places.setdefault(e.id, k) != k:
                    return e, _KEPT
    parents = syntax_walk.parents(tree)
    plans = {}
    for name in places:
        plan = _plan(tree, name, parents)
        if isinstance(plan, ast.AST):
            return plan, _KEPT
        plans[name] = plan
    for name, (makes, writes) in plans.items():
        items, lengths = namer.fresh(f"{name}_items"), namer.fresh(f"{name}_n")
        for make in makes:
            # (made in one arm of a branch: the three lists start as the
            # placeholder before it, and become the list the arm fills)
            made = [_copy(make.value), ast.List([], ast.Load())]
            if is_placeholder(make.value):
                made = [placeholder(ast.Constant(0.0)), placeholder(ast.Constant(0.0))]
            _replace(make, [make] + [ast.Assign([ast.Name(m, ast.Store())], v)
                                     for m, v in zip((lengths, items), made)], parents)
        for stmt, slot, tape in writes:
            item = namer.fresh(f"{tape}_item")
            kept = (f"{name}[{slot}] = len({items})\n{lengths}[{slot}] = len({tape})\n"
                    if slot is not None else
                    f"{name}.append(len({items}))\n{lengths}.append(len({tape}))\n")
            _replace(stmt, _parse(kept + f"for {item} in {tape}:\n    {items}.append({item})\n"),
                     parents)
        for r in returns:
            elts = []
            for e in r.value.elts:
                elts += [ast.Name(m, ast.Load()) for m in (items, name, lengths)] \
                    if isinstance(e, ast.Name) and e.id == name else [e]
            r.value.elts = elts
    ast.fix_missing_locations(tree)
    return None


def _plan(tree: ast.FunctionDef, name: str, parents: dict):
    """``(makes, writes)`` of the list ``name`` (``makes``: the statement
    making it, and the placeholder it starts as before the branch that makes
    it, if any; ``writes``: ``(statement, slot text or None, tape)``), or the
    node of a use of another shape."""
    makes, writes = [], []
    for n in walk(tree):
        if not (isinstance(n, ast.Name) and n.id == name):
            continue
        p = parents.get(id(n))
        stmt = parents.get(id(p))
        if isinstance(p, ast.Assign) and p.targets == [n]:
            if not (new_list(p.value) or is_placeholder(p.value) and p in tree.body):
                return p
            makes.append(p)
        elif isinstance(p, ast.Subscript) and isinstance(p.ctx, ast.Store) \
                and isinstance(stmt, ast.Assign) and stmt.targets == [p] \
                and isinstance(stmt.value, ast.Name):
            writes.append((stmt, ast.unparse(p.slice), stmt.value.id))
        elif isinstance(p, ast.Attribute) and p.attr == "append" \
                and isinstance(stmt, ast.Call) and len(stmt.args) == 1 and not stmt.keywords \
                and isinstance(stmt.args[0], ast.Name) \
                and isinstance(parents.get(id(stmt)), ast.Expr):
            writes.append((parents.get(id(stmt)), None, stmt.args[0].id))
        elif not (isinstance(p, ast.Tuple) and isinstance(parents.get(id(p)), ast.Return)):
            return p if isinstance(p, ast.stmt) else _statement(n, parents)
    if sum(1 for m in makes if not is_placeholder(m.value)) != 1:
        return makes[-1] if makes else tree
    tapes = [t for _, _, t in writes]
    for tape in set(tapes):
        # each tape's list is taken apart where it is written: read nowhere else
        loads = [n for n in walk(tree) if isinstance(n, ast.Name) and n.id == tape
                 and isinstance(n.ctx, ast.Load)]
        if len(loads) != tapes.count(tape):
            return _statement(next(n for n in loads if not _in_write(n, writes, parents)),
                              parents)
    return makes, writes


def _in_write(n: ast.Name, writes: list, parents: dict) -> bool:
    return any(_statement(n, parents) is stmt for stmt, _, _ in writes)


def _statement(n: ast.AST, parents: dict) -> ast.AST:
    while n is not None and not isinstance(n, ast.stmt):
        n = parents.get(id(n))
    return n


# -- the backward function: the lists rebuilt --------------------------------

def _backward(tree: ast.FunctionDef, flat: dict, namer: Namer) -> tuple | None:
    parents = syntax_walk.parents(tree)
    for items, at, lengths in flat.values():
        reads = []
        for n in walk(tree):
            if isinstance(n, ast.Name) and n.id in (at, lengths):
                return _statement(n, parents), _READ  # (the parameters the split added)
            if not (isinstance(n, ast.Name) and n.id == items):
                continue
            stmt = _statement(n, parents)
            if not _read(stmt, n):
                return stmt, _READ
            reads.append(stmt)
        rebuilt = {}
        for stmt in reads:
            tape = stmt.targets[0].id
            if tape not in rebuilt:
                rebuilt[tape] = namer.fresh(f"{tape}_r")
            start, k, i = (namer.fresh(f"{tape}_at"), namer.fresh(f"{tape}_k"),
                           namer.fresh(f"{tape}_i"))
            if isinstance(stmt.value, ast.Subscript):
                place = ast.unparse(stmt.value.slice)
                starts, sizes = f"{at}[{place}]", f"{lengths}[{place}]"
            else:
                starts, sizes = f"{at}.pop()", f"{lengths}.pop()"
            _replace(stmt, _parse(f"{start} = {starts}\n{k} = {sizes}\n{rebuilt[tape]} = []\n"
                                  f"for {i} in range(int({k})):\n"
                                  f"    {rebuilt[tape]}.append({items}[int({start}) + {i}])\n"),
                     parents)
        for n in walk(tree):
            if isinstance(n, ast.Name) and n.id in rebuilt and isinstance(n.ctx, ast.Load):
                n.id = rebuilt[n.id]
    ast.fix_missing_locations(tree)
    return None


def _read(stmt: ast.stmt, n: ast.Name) -> bool:
    """Is ``stmt`` ``T = n[e]`` or ``T = n.pop()``, with ``n`` the list read
    (not in ``e``)?"""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and read_of(stmt.value) == n.id):
        return False
    v = stmt.value
    return (v.value if isinstance(v, ast.Subscript) else v.func.value) is n


# -- statements --------------------------------------------------------------

def _parse(text: str) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(text)).body


def _copy(e: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(e), mode="eval").body


def _replace(stmt: ast.stmt, new: list, parents: dict) -> None:
    """``stmt`` replaced by ``new`` in its block, each new statement at its place."""
    owner = parents.get(id(stmt))
    for field in ("body", "orelse"):
        block = getattr(owner, field, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            k = next(j for j, s in enumerate(block) if s is stmt)
            for s in new:
                for m in walk(s):
                    ast.copy_location(m, stmt)
                parents[id(s)] = owner
            block[k:k + 1] = new
            return
