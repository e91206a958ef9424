"""A checkpointed loop of s2s-ad's own gradient modules, read as the taped
loop it stands for.

Contract: ``untape(tree)`` rewrites, in place, each checkpointed loop of a
function s2s-ad generated with ``checkpoint=`` (:mod:`s2s_ad.reverse.
checkpoint`) into the forward loop that tapes every iteration and the
reverse loop that pops the tape, as s2s-ad writes them without
``checkpoint=``. Both compute the same values: a checkpointed sweep runs the
same body on the same values, from snapshots, in another order (the
recomputation repeats operations exactly, so it repeats their results bit
for bit); the rewrite only puts the taped body where the untaped one ran and
the reverse body in one loop over every iteration. The second derivative
of a checkpointed module then keeps a tape of every iteration (the memory
the snapshots saved is not saved again).

A loop is rewritten only when every statement has the exact shape below, and
the untaped body (the forward pass's, and the recomputation's) is the taped
one without its tape appends; anything else is left as it is and refused,
located (:func:`leftover`).

Binomial schedule (a ``for`` that runs every iteration)::

    S = []                                   (removed)
    N = 0                                    (removed)
    for i in ITER:                           for i in ITER:
        if i == N:                               TAPED
            S.append((i, c))
            N = next_snapshot(...)
        BODY
    ...
    E = len(ITER)                            (removed)
    while E > 0:                             for _ in reversed(ITER):
        K, c = S[-1]                             REVERSE
        M = next_snapshot(K, E, ...)
        if M < E:
            for i in ITER[K:M]: BODY
            S.append((M, c))
        else:
            L = K + (E - K - 1) // U * U     (E - 1: blocks of one)
            for i in ITER[K:L]: BODY
            for i in ITER[L:E]: TAPED
            for _ in reversed(ITER[L:E]): REVERSE
            E = L
            if E == K: S.pop()

Segments of about √n iterations (a ``while``, or a ``for`` that may stop
early)::

    S = []                                   (removed)
    V = 1                                    (removed)
    LOOP:                                    LOOP:
        if C % V == 0: (snapshot, thinning)      C += 1
        C += 1                                   TAPED
        BODY
    E = C                                    (removed)
    while S:                                 for _ in range(C):  /  reversed(ITER[:C])
        c, = S.pop()                             REVERSE
        B = len(S) * V
        for _ in range(E - B): TAPED         (ITER[B:E] for a ``for``)
        for _ in range(E - B): REVERSE       (reversed(ITER[B:E]))
        E = B
"""

from __future__ import annotations

import ast
import copy
import re
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["untape", "leftover", "refuse_leftover", "is_checkpointed_module"]

SCHEDULE_DOC = "The iteration at which to take the next snapshot"
"""How the docstring of ``next_snapshot``, the schedule s2s-ad copies into a
checkpointed module, starts."""


def is_checkpointed_module(globals_: dict | None) -> bool:
    """Does the module define s2s-ad's ``next_snapshot`` (the binomial
    schedule), recognised by its docstring?"""
    fn = (globals_ or {}).get("next_snapshot")
    return (getattr(fn, "__doc__", None) or "").startswith(SCHEDULE_DOC)


def untape(tree: ast.FunctionDef, globals_: dict | None = None) -> None:
    """Rewrite each checkpointed loop of ``tree`` (see the module); the
    binomial ones only in a module defining s2s-ad's ``next_snapshot``,
    whose schedule reverses every iteration once."""
    binomial = is_checkpointed_module(globals_)
    changed = True
    while changed:
        changed = False
        for node in syntax_walk.blocks(tree):
            for field in ("body", "orelse"):
                block = getattr(node, field, None)
                if isinstance(block, list) and (binomial and _binomial(tree, block)
                                                or _segments(tree, block)):
                    changed = True
                    break
            if changed:
                break


def leftover(tree: ast.FunctionDef, globals_: dict | None) -> ast.AST | None:
    """A snapshot of a checkpointed loop left after :func:`untape` (a form it
    does not rewrite: a helper's checkpointed loop, whose snapshots go to its
    tape), or None. A snapshot is ``S.append((...))`` in a module that
    defines s2s-ad's ``next_snapshot``, or on a list thinned by
    ``del S[1::2]``."""
    thinned = {t.value.id for n in walk(tree) if isinstance(n, ast.Delete)
               for t in n.targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}
    schedule = is_checkpointed_module(globals_)
    if not thinned and not schedule:
        return None  # (no list is one: most functions)
    for n in walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr == "append" and isinstance(n.func.value, ast.Name) \
                and len(n.args) == 1 and isinstance(n.args[0], ast.Tuple) \
                and (n.func.value.id in thinned
                     or schedule and n.func.value.id.endswith("_snaps")):
            return n
    return None


def refuse_leftover(src) -> None:
    """Refuse, located, a snapshot :func:`untape` left in ``src``'s function."""
    snapshot = leftover(src.tree, src.globals)
    if snapshot is not None:
        raise src.error(snapshot, "this snapshot of a checkpointed loop is not read back: "
                        "s2s-ad reads a checkpointed loop whose forward pass and reverse "
                        "sweep are in one function, as it writes them there (a helper's "
                        "checkpointed loop keeps its snapshots in its tape); differentiate "
                        "the module generated without checkpoint, or the function itself")


# --- shapes ------------------------------------------------------------------

def _same(a, b) -> bool:
    """The same text (a name stored or loaded alike)."""
    return ast.unparse(a) == ast.unparse(b)


def _name(e, name: str | None = None) -> str | None:
    if isinstance(e, ast.Name) and (name is None or e.id == name):
        return e.id
    return None


def _assign(stmt, value=None) -> str | None:
    """``X`` of ``X = value`` (any value when ``value`` is None)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name) \
            and (value is None or _same(stmt.value, value)):
        return stmt.targets[0].id
    return None


def _is_const(e, value) -> bool:
    return isinstance(e, ast.Constant) and type(e.value) is type(value) and e.value == value


def _append_to(stmt, lst: str | None = None) -> ast.expr | None:
    """The item of ``lst.append(item)`` (``lst`` any name when None)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append" \
            and _name(stmt.value.func.value, lst) and len(stmt.value.args) == 1:
        return stmt.value.args[0]
    return None


def _call(e, fn: str) -> list | None:
    if isinstance(e, ast.Call) and _name(e.func, fn) and not e.keywords:
        return e.args
    return None


def _slice(e, it, lo: str | None, hi: str | None) -> bool:
    """Is ``e`` ``it[lo:hi]`` (``None``: that bound absent)?"""
    if not (isinstance(e, ast.Subscript) and _same(e.value, it)
            and isinstance(e.slice, ast.Slice) and e.slice.step is None):
        return False
    ends = (e.slice.lower, e.slice.upper)
    return all((b is None) if n is None else bool(_name(b, n)) for b, n in zip(ends, (lo, hi)))


def _untaped(stmts: list, snaps: str) -> list:
    """``stmts`` without the tape appends (at every depth), as text."""
    out = []
    for s in stmts:
        item = _append_to(s)
        if item is not None and s.value.func.value.id != snaps:
            continue
        s = copy.copy(s)
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, _untaped(getattr(s, field), snaps))
        out.append(s)
    return out


def _bodies_match(body: list, taped: list, snaps: str) -> bool:
    return [ast.dump(s) for s in _untaped(body, snaps)] == \
           [ast.dump(s) for s in _untaped(taped, snaps)] and len(taped) >= len(body)


def _used_only_in(tree, names: set, allowed: list) -> bool:
    """Are ``names`` read or written only inside the statements ``allowed``?"""
    inside = {id(n) for s in allowed for n in walk(s)}
    return not any(isinstance(n, ast.Name) and n.id in names and id(n) not in inside
                   for n in walk(tree))


def _replace(block: list, old, new: list) -> None:
    k = next(i for i, s in enumerate(block) if s is old)
    block[k:k + 1] = [ast.fix_missing_locations(ast.copy_location(s, old)) for s in new]


def _splice(block: list, k: int, loop, j: int, driver, forward, backward) -> None:
    """The checkpointed loop at ``block[k]`` (with its two set-up statements
    before it), ``block[j]`` and the reverse ``driver`` replaced by the taped
    ``forward`` loop and the ``backward`` loop they stand for."""
    setup, other = block[k - 2:k], block[j]
    _replace(block, driver, [backward])
    _replace(block, other, [])
    _replace(block, loop, [forward])
    for stmt in reversed(setup):
        _replace(block, stmt, [])


# --- the binomial schedule ---------------------------------------------------

def _counted(loop: ast.For):
    """``(counter, target, ITER)`` of ``for i in ITER`` (the counter ``i``) or
    ``for k, i in enumerate(ITER)`` (the counter ``k``), or None."""
    if _name(loop.target):
        return loop.target.id, loop.target, loop.iter
    args = _call(loop.iter, "enumerate")
    if isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2 \
            and _name(loop.target.elts[0]) and args is not None and len(args) == 1:
        return loop.target.elts[0].id, loop.target.elts[1], args[0]
    return None


def _binomial(tree, block: list) -> bool:
    for k, loop in enumerate(block):
        if not (isinstance(loop, ast.For) and not loop.orelse and loop.body
                and isinstance(loop.body[0], ast.If) and k >= 2 and _counted(loop)):
            continue
        target, user_target, iterable = _counted(loop)
        snap_if = loop.body[0]
        t = snap_if.test
        if not (target and isinstance(t, ast.Compare) and _name(t.left, target)
                and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)
                and _name(t.comparators[0]) and not snap_if.orelse and len(snap_if.body) == 2):
            continue
        nxt = t.comparators[0].id
        item = _append_to(snap_if.body[0])
        snaps = snap_if.body[0].value.func.value.id if item is not None else None
        if not (snaps and isinstance(item, ast.Tuple) and item.elts
                and _name(item.elts[0], target) and _assign(snap_if.body[1]) == nxt
                and _call(snap_if.body[1].value, "next_snapshot") is not None
                and _assign(block[k - 2], ast.List([], ast.Load())) == snaps
                and _assign(block[k - 1], ast.Constant(0)) == nxt):
            continue
        carried = item.elts[1:]
        for j in range(k + 1, len(block) - 1):
            end = _assign(block[j])
            driver = block[j + 1]
            args = _call(block[j].value, "len") if end else None
            if not (args and len(args) == 1 and _same(args[0], iterable)
                    and isinstance(driver, ast.While) and not driver.orelse):
                continue
            found = _binomial_reverse(driver, end, snaps, carried, loop, user_target, iterable)
            if found is None:
                continue
            taped, reverse_loop, names = found
            if not _used_only_in(tree, names | {snaps, nxt, end},
                                 [block[k - 2], block[k - 1], loop, block[j], driver]):
                continue
            forward = ast.For(copy.deepcopy(user_target), copy.deepcopy(iterable),
                              copy.deepcopy(taped), [], None)
            backward = ast.For(reverse_loop.target, ast.Call(ast.Name("reversed", ast.Load()),
                                                             [copy.deepcopy(iterable)], []),
                               copy.deepcopy(reverse_loop.body), [], None)
            _splice(block, k, loop, j, driver, forward, backward)
            return True
    return False


def _binomial_reverse(driver: ast.While, end: str, snaps: str, carried: list, loop: ast.For,
                      user_target, it):
    """(the taped body, the reverse loop, the driver's own names) of the
    binomial driver ``while E > 0: ...``, or None."""
    t, body = driver.test, driver.body
    if not (isinstance(t, ast.Compare) and _name(t.left, end) and isinstance(t.ops[0], ast.Gt)
            and _is_const(t.comparators[0], 0) and len(body) == 3):
        return None
    back, mid, choice = body
    if not (isinstance(back, ast.Assign) and isinstance(back.targets[0], ast.Tuple)
            and len(back.targets[0].elts) == 1 + len(carried)
            and all(_same(a, b) for a, b in zip(back.targets[0].elts[1:], carried))
            and _name(back.targets[0].elts[0])
            and isinstance(back.value, ast.Subscript) and _name(back.value.value, snaps)):
        return None
    k = back.targets[0].elts[0].id
    m = _assign(mid)
    if not (m and _call(mid.value, "next_snapshot") is not None
            and isinstance(choice, ast.If) and len(choice.body) == 2 and len(choice.orelse) == 6):
        return None
    ahead, snap = choice.body
    last, recompute, taped, reverse_loop, shrink, drop = choice.orelse
    lst = _assign(last)
    if not (lst and isinstance(ahead, ast.For) and _slice(ahead.iter, it, k, m)
            and _append_to(snap, snaps) is not None
            and isinstance(recompute, ast.For) and _slice(recompute.iter, it, k, lst)
            and isinstance(taped, ast.For) and _slice(taped.iter, it, lst, end)
            and isinstance(reverse_loop, ast.For) and not reverse_loop.orelse
            and _call(reverse_loop.iter, "reversed") is not None
            and _slice(reverse_loop.iter.args[0], it, lst, end)
            and _assign(shrink, ast.Name(lst, ast.Load())) == end
            and ast.unparse(choice.test) == f"{m} < {end}"
            and (re.fullmatch(rf"{k} \+ \({end} - {k} - 1\) // (\d+) \* \1",
                              ast.unparse(last.value))
                 or ast.unparse(last.value) == f"{end} - 1")  # blocks of one iteration
            and ast.unparse(drop) == f"if {end} == {k}:\n    {snaps}.pop()"):
        return None
    body = loop.body[1:]
    if not all(_same(f.target, user_target) and not f.orelse
               and [ast.dump(s) for s in f.body] == [ast.dump(s) for s in body]
               for f in (ahead, recompute)) or not _same(taped.target, user_target) \
            or not _bodies_match(body, taped.body, snaps):
        return None
    return taped.body, reverse_loop, {k, m, lst}


# --- segments of about √n iterations ------------------------------------------

def _segments(tree, block: list) -> bool:
    for k, loop in enumerate(block):
        if not (isinstance(loop, (ast.For, ast.While)) and not loop.orelse and len(loop.body) >= 2
                and isinstance(loop.body[0], ast.If) and k >= 2):
            continue
        snap_if, count = loop.body[0], loop.body[1]
        t = snap_if.test
        if not (isinstance(t, ast.Compare) and isinstance(t.left, ast.BinOp)
                and isinstance(t.left.op, ast.Mod) and _name(t.left.left)
                and _name(t.left.right) and isinstance(t.ops[0], ast.Eq)
                and _is_const(t.comparators[0], 0) and not snap_if.orelse
                and len(snap_if.body) == 2 and isinstance(count, ast.AugAssign)
                and isinstance(count.op, ast.Add) and _name(count.target, t.left.left.id)
                and _is_const(count.value, 1)):
            continue
        counter, every = t.left.left.id, t.left.right.id
        item = _append_to(snap_if.body[0])
        if item is None or not isinstance(item, ast.Tuple):
            continue
        snaps = snap_if.body[0].value.func.value.id
        thin = snap_if.body[1]
        if not (ast.unparse(thin) == f"if len({snaps}) > {every}:\n    del {snaps}[1::2]\n"
                                     f"    {every} *= 2"
                and _assign(block[k - 2], ast.List([], ast.Load())) == snaps
                and _assign(block[k - 1], ast.Constant(1)) == every):
            continue
        for j in range(k + 1, len(block) - 1):
            end = _assign(block[j], ast.Name(counter, ast.Load()))
            driver = block[j + 1]
            if not (end and isinstance(driver, ast.While) and not driver.orelse
                    and _name(driver.test, snaps)):
                continue
            found = _segments_reverse(driver, end, snaps, every, item, loop)
            if found is None:
                continue
            taped, reverse_loop, names = found
            if not _used_only_in(tree, names | {snaps, every, end},
                                 [block[k - 2], block[k - 1], loop, block[j], driver]):
                continue
            forward = copy.copy(loop)
            forward.body = [count] + copy.deepcopy(taped)
            if isinstance(loop, ast.For):
                iters = ast.Call(ast.Name("reversed", ast.Load()), [ast.Subscript(
                    copy.deepcopy(loop.iter), ast.Slice(None, ast.Name(counter, ast.Load()), None),
                    ast.Load())], [])
            else:
                iters = ast.Call(ast.Name("range", ast.Load()),
                                 [ast.Name(counter, ast.Load())], [])
            backward = ast.For(reverse_loop.target, iters, copy.deepcopy(reverse_loop.body),
                               [], None)
            _splice(block, k, loop, j, driver, forward, backward)
            return True
    return False


def _segments_reverse(driver: ast.While, end: str, snaps: str, every: str, item: ast.Tuple,
                      loop):
    body = driver.body
    if len(body) != 5:
        return None
    back, start_stmt, taped, reverse_loop, shrink = body
    start = _assign(start_stmt)
    if not (isinstance(back, ast.Assign) and isinstance(back.targets[0], ast.Tuple)
            and len(back.targets[0].elts) == len(item.elts)
            and all(_same(a, b) for a, b in zip(back.targets[0].elts, item.elts))
            and isinstance(back.value, ast.Call)
            and isinstance(back.value.func, ast.Attribute) and back.value.func.attr == "pop"
            and _name(back.value.func.value, snaps) and not back.value.args
            and start and ast.unparse(start_stmt.value) == f"len({snaps}) * {every}"
            and _assign(shrink, ast.Name(start, ast.Load())) == end
            and isinstance(taped, ast.For) and not taped.orelse
            and isinstance(reverse_loop, ast.For) and not reverse_loop.orelse):
        return None
    span = ast.Call(ast.Name("range", ast.Load()),
                    [ast.BinOp(ast.Name(end, ast.Load()), ast.Sub(), ast.Name(start, ast.Load()))],
                    [])
    if isinstance(loop, ast.While):
        if not (_same(taped.iter, span) and _same(reverse_loop.iter, span)):
            return None
    elif not (_same(taped.target, loop.target) and _slice(taped.iter, loop.iter, start, end)
              and _call(reverse_loop.iter, "reversed") is not None
              and _slice(reverse_loop.iter.args[0], loop.iter, start, end)):
        return None
    if not _bodies_match(loop.body[2:], taped.body, snaps):
        return None
    return taped.body, reverse_loop, {start}
