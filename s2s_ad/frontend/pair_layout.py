"""The forward/backward pairs of a module s2s-ad wrote, and the layout of
the tape each passes: which values it is split into, and which of those are
lists.

Contract: a pair is ``H_fwd`` and ``H_bwd`` in one module s2s-ad wrote
(:func:`written_pair`), ``H_bwd(tape, ...)`` unpacking its tape first
(``a, b, c = tape``). :func:`pairs_of` maps each ``H_fwd`` of a module to
``H_bwd`` and the names of the tape's items once split
(:mod:`s2s_ad.frontend.pairs` rewrites the functions to pass them): an item
that is another pair's tape (a helper calling a helper) is that tape's
items, and a list of another pair's tapes (a helper calling a helper in a
loop) is one list per item of those tapes. :func:`listed_items` says which
items ``H_bwd`` reads as lists (or ``H_fwd`` makes as lists), for the
rewrites that keep lists of them (:mod:`s2s_ad.frontend.tape_flatten`).
Nothing here changes a tree; every answer is read from the functions'
source.

Before → layout::

    def h_bwd(tape, dy):                     pairs_of: h_fwd -> (h_bwd,
        m, g_tapes = tape                        ("m", "g_tapes_0", "g_tapes_1"))
        for j in reversed(range(m)):         (g_bwd's tape: two items)
            g_tape = g_tapes[j]
            dx, = g_bwd(g_tape, dy)
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import types

from s2s_ad.frontend import own_helpers
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk


@functools.lru_cache(maxsize=256)
def _bwd_tree(code) -> ast.FunctionDef | None:
    """:func:`own_helpers.function_tree` of ``code``, parsed once; shared by
    every caller here: read, never changed."""
    return own_helpers.function_tree(code)


@functools.lru_cache(maxsize=256)
def _bwd_items(code) -> tuple | None:
    """The names ``H_bwd`` unpacks its tape into, or None."""
    fn = _bwd_tree(code)
    if not isinstance(fn, ast.FunctionDef) or not fn.args.args or not fn.body:
        return None
    tape = fn.args.args[0].arg
    if not any(isinstance(n, ast.Name) and n.id == tape for n in walk(fn)):
        return ()  # an empty tape: H_fwd returns `value, ()`
    k = unpacking(fn)
    first = fn.body[k] if k is not None else None
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1
            and isinstance(first.targets[0], ast.Tuple)
            and all(isinstance(e, ast.Name) for e in first.targets[0].elts)
            and isinstance(first.value, ast.Name) and first.value.id == tape):
        return None
    uses = [n for n in walk(fn) if isinstance(n, ast.Name) and n.id == tape]
    if len(uses) != 1:
        return None
    return tuple(e.id for e in first.targets[0].elts)


@functools.lru_cache(maxsize=256)
def cotangent_items(code) -> tuple | None:
    """``(P, (d0, d1, ...))`` where ``H_bwd`` opens by unpacking its parameter
    ``P`` (``d0, d1 = cotangents``: the cotangents of a helper returning
    several values) and uses ``P`` nowhere else; None otherwise. The split
    takes ``d0, d1, ...`` as parameters in ``P``'s place (a cotangent may be a
    list of any length, which is passed as an argument of its own, not
    inside a tuple)."""
    fn = _bwd_tree(code)
    if not isinstance(fn, ast.FunctionDef) or len(fn.args.args) < 2 or not fn.body:
        return None
    first, params = fn.body[0], [a.arg for a in fn.args.args]
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1
            and isinstance(first.targets[0], ast.Tuple)
            and all(isinstance(e, ast.Name) for e in first.targets[0].elts)
            and isinstance(first.value, ast.Name) and first.value.id in params[1:]):
        return None
    p, names = first.value.id, tuple(e.id for e in first.targets[0].elts)
    tape = _bwd_items(code) or ()
    if sum(1 for n in walk(fn) if isinstance(n, ast.Name) and n.id == p) != 1 \
            or len(set(names)) != len(names) or set(names) & (set(params) | set(tape)):
        return None
    return p, names


def unpacking(fn: ast.FunctionDef) -> int | None:
    """The position in ``H_bwd``'s body of the statement unpacking its tape
    (its first parameter): the first statement, or the one after the
    unpacking of its cotangents (``dy0, dy1 = cotangents``, another
    parameter, for a helper returning several values); else None."""
    if not fn.args.args:
        return None
    params = {a.arg for a in fn.args.args[1:]}
    for k, stmt in enumerate(fn.body[:2]):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) \
                and stmt.value.id == fn.args.args[0].arg:
            return k
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Tuple)
                and all(isinstance(e, ast.Name) for e in stmt.targets[0].elts)
                and isinstance(stmt.value, ast.Name) and stmt.value.id in params):
            return None
    return None


_PAIR_NAME = re.compile(r"(.+)_(fwd|bwd)(_\d+)?")


def partner(name: str) -> tuple[str, str] | None:
    """``(H_fwd, H_bwd)`` for a name of either function of a pair s2s-ad
    writes (``h_fwd_1`` and ``h_bwd_1``: a helper's second specialisation),
    else None."""
    m = _PAIR_NAME.fullmatch(name)
    if m is None:
        return None
    base, _, k = m.groups()
    return f"{base}_fwd{k or ''}", f"{base}_bwd{k or ''}"


def written_pair(globals_: dict, name: str) -> tuple | None:
    """``(H_fwd, H_bwd)``, the functions, for the name of either function of
    a pair of a module s2s-ad wrote; else None."""
    names = partner(name)
    fns = tuple(globals_.get(n) for n in names) if names is not None else ()
    return fns if fns and all(_written_pair_function(f) for f in fns) else None


def _is_bwd(globals_: dict, name: str) -> bool:
    names = partner(name)
    return (names is not None and names[1] == name
            and _written_pair_function(globals_.get(name))
            and _written_pair_function(globals_.get(names[0])))


def _written_pair_function(fn) -> bool:
    """Is ``fn`` a function of a module s2s-ad wrote? Only there are
    ``H_fwd`` and ``H_bwd`` a pair whose tape s2s-ad made: functions of
    yours named so (``sq_fwd``, ``sq_bwd``) are helpers like any other; nor
    are the tangent functions of a forward-mode module (``jvp_h_fwd``,
    ``jvp_h_bwd``: the tangents of a pair's two functions)."""
    return isinstance(fn, types.FunctionType) and own_helpers.written_by_s2s_ad(
        fn.__globals__) and not own_helpers.forward_mode_module(fn.__globals__)


def nested_tapes(fn: ast.FunctionDef, names: tuple, globals_: dict,
                 seen: frozenset) -> tuple[dict, dict] | None:
    """Items of ``H_bwd``'s tape that are tapes of other pairs (a helper calling
    a helper): ``u -> (u_0, u_1, ...)``, one name per item of that tape; and
    of the names of a list of such tapes (a helper calling a helper in a
    loop), those that are lists of lists (that pair's tape holds a list
    there), each passed as three lists: ``u_1 -> (u_1, u_1_at, u_1_n)``, the
    lists' items one after another, where each list starts and its length
    (:mod:`s2s_ad.frontend.tape_offsets`). None when such an item is used
    otherwise, or its names are taken."""
    out, flat = {}, {}
    taken = {n.id for n in walk(fn) if isinstance(n, ast.Name)}
    firsts = {}
    for n in walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.args \
                and isinstance(n.args[0], ast.Name) and n.args[0].id in names \
                and _is_bwd(globals_, n.func.id):
            firsts.setdefault(n.args[0].id, set()).add(n.func.id)
    tapes_of_tapes = _tapes_of_tapes(fn, names, globals_)
    split = [(u, callees, _only_first_argument(fn, u)) for u, callees in firsts.items()]
    split += [(u, {g for t in read for g in backward_calls(fn, t, globals_)}, u not in firsts)
              for u, read in tapes_of_tapes.items()]
    for u, callees, alone in split:
        # one layout for every backward function the tape (or its tapes) go to
        sub = {_bwd_params(globals_[g].__code__, globals_, seen) for g in callees}
        if not alone or len(sub) != 1 or None in sub:
            return None
        items = sub.pop()
        parts = tuple(f"{u}_{k}" for k in range(len(items)))
        if taken & set(parts):
            return None
        out[u] = parts
        if u in tapes_of_tapes:
            lists = {frozenset(_listed_by(globals_, g, items)) for g in callees}
            if len(lists) != 1:
                return None  # one backward function reads as a list what another does not
            listed = lists.pop()
            for part, item in zip(parts, items):
                if item in listed:
                    flat[part] = (part, f"{part}_at", f"{part}_n")
            if taken & {m for p in flat.values() for m in p[1:]}:
                return None
    return out, flat


def _listed_by(globals_: dict, name: str, items: tuple) -> set:
    """The items of the tape of the backward function ``name`` (split:
    ``items``) that are lists: read as lists by it or made as lists by its
    forward function (in a NumPy module, where ``p[k]`` may read an array,
    only those used as lists alone)."""
    bwd, fwd = globals_[name], globals_.get(partner(name)[0])
    return listed_items(fwd, bwd, items, tape_layout(bwd),
                        own_helpers.numpy_alias(bwd.__globals__) is not None) or set()


def listed_items(fwd, bwd, items: tuple, layout: tuple, only: bool) -> set | None:
    """:func:`list_parameters` of ``bwd`` with :func:`made_lists` of ``fwd``;
    None where ``bwd``'s source cannot be read."""
    listed = list_parameters(bwd, items, layout, only=only)
    if listed is not None:
        listed |= made_lists(fwd, items, layout)
    return listed


def expanded(names: tuple, nested: dict, flat: dict) -> tuple:
    """``names`` (a tape's items as ``H_bwd`` unpacks them) as the
    parameters it takes once split: each nested tape as its items, each list
    of lists as its three lists."""
    return tuple(m for u in names for p in nested.get(u, (u,)) for m in flat.get(p, (p,)))


def _only_first_argument(fn: ast.FunctionDef, u: str) -> bool:
    """Is every read of ``u`` in ``fn`` the first argument of a call?"""
    uses = sum(1 for n in walk(fn) if isinstance(n, ast.Name) and n.id == u
               and isinstance(n.ctx, ast.Load))
    return uses == sum(1 for n in walk(fn) if isinstance(n, ast.Call) and n.args
                       and isinstance(n.args[0], ast.Name) and n.args[0].id == u)


def backward_calls(fn: ast.FunctionDef, t: str, globals_: dict) -> set:
    """The backward functions ``fn`` passes ``t`` to as their tape."""
    return {n.func.id for n in walk(fn) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name) and n.args and isinstance(n.args[0], ast.Name)
            and n.args[0].id == t and _is_bwd(globals_, n.func.id)}


def _tapes_of_tapes(fn: ast.FunctionDef, names: tuple, globals_: dict) -> dict:
    """Items of ``H_bwd``'s tape that are lists of other pairs' tapes (a
    helper calling a helper in a loop): ``Ts`` read only as ``T = Ts.pop()``
    (or ``T = Ts[i]``), each ``T`` assigned only there and read only as the
    tape a backward function takes. ``Ts`` -> the names ``T`` it is read into."""
    reads: dict[str, list] = {}
    for n in walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 \
                and isinstance(n.targets[0], ast.Name):
            src = read_of(n.value)
            if src in names:
                reads.setdefault(src, []).append(n.targets[0].id)
    out = {}
    for u, read in reads.items():
        loads = sum(1 for n in walk(fn) if isinstance(n, ast.Name) and n.id == u
                    and isinstance(n.ctx, ast.Load))
        stores = {t: sum(1 for n in walk(fn) if isinstance(n, ast.Name) and n.id == t
                         and isinstance(n.ctx, ast.Store)) for t in set(read)}
        if loads == len(read) and all(
                stores[t] == read.count(t) and backward_calls(fn, t, globals_)
                and _only_first_argument(fn, t) for t in stores):
            out[u] = read
    return out


def _bwd_params(code, globals_: dict, seen: frozenset = frozenset()) -> tuple | None:
    """The parameters ``H_bwd`` takes for its tape once split (:func:`expanded`);
    None if not a pair s2s-ad writes (or a pair calling itself)."""
    if code in seen:
        return None
    raw = _bwd_items(code)
    if raw is None or not raw:
        return raw
    found = nested_tapes(_bwd_tree(code), raw, globals_, seen | {code})
    return expanded(raw, *found) if found is not None else None


def tape_layout(bwd) -> tuple[tuple, dict]:
    """The names ``H_bwd`` unpacks its tape into, and for those that are
    split (another pair's tape, a list of them) the parameters they become:
    ``((a, Ts, b), {"Ts": ("Ts_0", "Ts_1", "Ts_1_at", "Ts_1_n")})``; ``((),
    {})`` for any other function."""
    raw, nested, flat = split_layout(bwd)
    return raw, {u: expanded(parts, {}, flat) for u, parts in nested.items()}


def split_layout(bwd) -> tuple[tuple, dict, dict]:
    """The names ``H_bwd`` unpacks its tape into, the names the nested tapes
    among them are split into and the lists of lists among those (see
    :func:`nested_tapes`): ``((), {}, {})`` for any other function."""
    if not isinstance(bwd, types.FunctionType):
        return (), {}, {}
    raw = _bwd_items(bwd.__code__)
    fn = own_helpers.function_tree(bwd) if raw else None
    found = nested_tapes(fn, raw, bwd.__globals__, frozenset({bwd.__code__})) if fn else None
    if found is None:
        return (raw or ()), {}, {}
    return raw, found[0], found[1]


def _pair_functions(globals_: dict) -> tuple:
    """The functions of ``globals_`` named as either function of a pair:
    all that :func:`pairs_of` reads of a module (its result is the same while
    these are)."""
    return tuple((name, fn) for name, fn in globals_.items()
                 if _PAIR_NAME.fullmatch(name) and _written_pair_function(fn))


@functools.lru_cache(maxsize=64)
def _pairs_among(functions: tuple) -> types.MappingProxyType:
    """:func:`pairs_of` of a module whose pair functions are ``functions``:
    computed once per module (a gradient module read back asks for each of
    its functions; each asking parsed every backward function again)."""
    globals_ = dict(functions)
    out = {}
    for name, fn in functions:
        names = partner(name)
        if names is None or names[0] != name:
            continue
        bwd = globals_.get(names[1])
        if isinstance(bwd, types.FunctionType):
            items = _bwd_params(bwd.__code__, globals_)
            if items is not None:
                out[name] = (names[1], items)
    return types.MappingProxyType(out)  # shared by every caller: read-only


def pairs_of(globals_: dict) -> types.MappingProxyType:
    """``H_fwd`` -> (``H_bwd``, the names of its tape's items once split),
    for the pairs of a module s2s-ad wrote among ``globals_``."""
    return _pairs_among(_pair_functions(globals_))


def signature(fn) -> inspect.Signature | None:
    """The parameters of ``H_bwd`` once its tape is split (see :func:`split`),
    for binding a call to it; None for any other function."""
    name = getattr(fn, "__name__", "")
    if not (isinstance(fn, types.FunctionType) and _is_bwd(fn.__globals__, name)):
        return None
    items = _bwd_params(fn.__code__, fn.__globals__)
    if items is None:
        return None
    sig = inspect.signature(fn)
    rest = list(sig.parameters.values())[1:]
    cotangents = cotangent_items(fn.__code__)
    if cotangents is not None:  # (split too: :func:`s2s_ad.frontend.pairs.split`)
        p, names = cotangents
        rest = [q for r in rest for q in (
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
            if r.name == p else [r])]
    return sig.replace(parameters=[inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                   for n in items] + rest)


def list_parameters(bwd, items: tuple, layout: tuple, only: bool = False,
                     seen: frozenset = frozenset()) -> set | None:
    """The parameters of ``bwd`` among ``items`` (its tape's items, split)
    that it reads as lists: ``p[k]``, ``p.pop()``, ``len(p)``, ``for v in p``
    (also in a comprehension); a list of
    another pair's tapes (``T = Ts.pop()``), which the split makes one list
    per item of those tapes (``layout``: :func:`tape_layout`),
    is those lists. ``only`` (a NumPy module, where ``p[k]`` may read an
    array): those it uses in no other way (``for v in p`` too), so that a
    list of the items reads the same."""
    fn = own_helpers.function_tree(bwd) if isinstance(bwd, types.FunctionType) else None
    if fn is None:
        return None
    out = set()
    parents = syntax_walk.parents(fn)
    other = set()
    for n in walk(fn):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) \
                and isinstance(n.ctx, ast.Load):
            out.add(n.value.id)
            if isinstance(n.slice, ast.Slice):
                other.add(n.value.id)
        elif isinstance(n, ast.Attribute) and n.attr == "pop" and isinstance(n.value, ast.Name):
            out.add(n.value.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" \
                and n.args and isinstance(n.args[0], ast.Name):
            out.add(n.args[0].id)
        elif isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.iter, ast.Name):
            out.add(n.iter.id)  # its items, one by one (`[np.zeros_like(v) for v in p]`)
        if only and isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            parent = parents.get(id(n))
            if not (isinstance(parent, ast.Subscript) and parent.value is n
                    or isinstance(parent, ast.Attribute) and parent.attr == "pop"
                    or isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                    and parent.func.id == "len" and parent.args == [n]
                    or isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is n):
                other.add(n.id)
    nested = layout[1]
    listed = {m for u in (out - other if only else out) for m in nested.get(u, (u,))}
    return (listed | _inner_lists(fn, bwd, layout, only, seen | {bwd})) & set(items)


def _inner_lists(fn: ast.FunctionDef, bwd, layout: tuple, only: bool, seen: frozenset) -> set:
    """The names an item of ``bwd``'s tape that is another pair's tape (passed
    to ``G_bwd`` as its tape: a helper calling a helper) is split into, that
    are lists for ``G_bwd`` (read as lists there, or made as lists by
    ``G_fwd``), position by position."""
    out = set()
    for u, parts in layout[1].items():
        callees = backward_calls(fn, u, bwd.__globals__)
        callee = next(iter(callees)) if len(callees) == 1 else None
        inner = bwd.__globals__.get(callee) if callee is not None else None
        if inner is None or inner in seen:
            continue  # a list of such tapes (popped: read as a list above), or recursion
        inner_layout = tape_layout(inner)
        inner_items = tuple(m for v in inner_layout[0] for m in inner_layout[1].get(v, (v,)))
        if len(inner_items) != len(parts):
            continue
        listed = (list_parameters(inner, inner_items, inner_layout, only, seen) or set()) | \
            made_lists(bwd.__globals__.get(partner(callee)[0]), inner_items, inner_layout)
        out |= {p for p, item in zip(parts, inner_items) if item in listed}
    return out


def made_lists(fwd, items: tuple, layout: tuple) -> set:
    """The items of ``fwd``'s returned tape (``return value, (a, b, c)``, in
    the order of ``layout``'s names, each split as there into ``items``) that
    it makes as lists (``[0.0] * n``, ``[]``, ``[a, b]``, a comprehension)
    and binds to nothing else."""
    fn = own_helpers.function_tree(fwd) if isinstance(fwd, types.FunctionType) else None
    if fn is None:
        return set()
    returns = [n for n in walk(fn) if isinstance(n, ast.Return)]
    if len(returns) != 1 or not (isinstance(returns[0].value, ast.Tuple)
                                 and len(returns[0].value.elts) == 2
                                 and isinstance(returns[0].value.elts[1], ast.Tuple)):
        return set()
    names = returns[0].value.elts[1].elts
    raw, nested = layout
    if not raw:
        raw = items
    if len(names) != len(raw) or len(items) != sum(len(nested.get(u, (u,))) for u in raw):
        return set()
    out = set()
    for e, item in zip(names, raw):
        if isinstance(e, ast.Name) and bound_as_list(fn, e.id):
            out.update(nested.get(item, (item,)))
    return out


def bound_as_list(fn: ast.FunctionDef, name: str) -> bool:
    """Is ``name`` bound in ``fn`` only to lists it makes (``[0.0] * n``,
    ``[]``, ``[a, b]``, a comprehension), never a loop's target or ``+=``'s?"""
    binds = [n for n in walk(fn) for t in getattr(n, "targets", [])
             if isinstance(n, ast.Assign) for m in walk(t)
             if isinstance(m, ast.Name) and m.id == name and isinstance(m.ctx, ast.Store)]
    return bool(binds) and all(len(b.targets) == 1 and isinstance(b.targets[0], ast.Name)
                               and _a_list(b.value) for b in binds) \
        and not any(isinstance(n, (ast.For, ast.AugAssign, ast.comprehension))
                    and any(isinstance(m, ast.Name) and m.id == name for m in walk(n.target))
                    for n in walk(fn))


def _a_list(v) -> bool:
    return isinstance(v, (ast.List, ast.ListComp)) or isinstance(v, ast.BinOp) \
        and isinstance(v.op, ast.Mult) and isinstance(v.left, ast.List)


def read_of(v) -> str | None:
    """``Ts`` for ``Ts[i]`` or ``Ts.pop()``, else None."""
    if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name):
        return v.value.id
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "pop" \
            and isinstance(v.func.value, ast.Name) and not v.args:
        return v.func.value.id
    return None
