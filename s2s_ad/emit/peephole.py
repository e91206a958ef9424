"""Copy elimination in generated statement lists.

Contract: :func:`run` rewrites a list of :class:`~s2s_ad.code.Stmt` /
:class:`~s2s_ad.code.Block` in place, block by block, removing copies the
reverse transform leaves behind — an adjoint copied into a fresh name and
copied back at the end of a loop iteration, or a temporary computed only to be
copied into another variable — without changing what any statement computes.
A rewrite is made only when the names involved occur nowhere else in the
function (``counts``), so no reader outside the block can see a difference.

Before → after::

    dt2 = ds                    dc[i] += ds
    dc[i] += dt2                dx += ds * s
    ds_1 = ds * x       ──▶     ds = ds * x
    dx += ds * s
    ds = ds_1

Cost. The rewrites are tried in a fixed order — the first copy ``y = x``
that can be read through, else the first copy that can be sunk, else the
first accumulator — one at a time until none applies. Done naively, every
rewrite starts the search again and every check counts names over the rest of
the block: cubic in the block's length (a program of 300 statements took
30 s). :class:`_Copies` keeps, per name, where it occurs, is read and is
written, so each check is a few binary searches; and it remembers what each
failed check looked at, so that a rewrite wakes only the checks whose answer
it can change. The rewrites made, and their order, are those of the naive
search.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right, insort
from collections import Counter, defaultdict
from heapq import heappop, heappush

from s2s_ad.emit.code import Block, Stmt, name_nodes
from s2s_ad.syntax_walk import walk


def names_in(s) -> Counter:
    """How often each name occurs in statement ``s`` (blocks included)."""
    return Counter([x.id for node in _nodes(s) for x in name_nodes(node)])


def _nodes(s):
    """The ``ast`` nodes of statement ``s``: a block's head, then those of the
    statements it holds, at every depth (without recursion: a sweep nested 50
    deep is as good as a flat one)."""
    stack = [s]
    while stack:
        s = stack.pop()
        if isinstance(s, Stmt):
            if s.node is not None:
                yield s.node
            continue
        yield s.head
        stack.extend(reversed(s.body + s.orelse))


def _rw(s) -> tuple[set[str], set[str]]:
    """(names read, names written) by ``s``."""
    if isinstance(s, Block):
        every = set(names_in(s))
        return every, every
    node = s.node
    if node is None:
        return set(), set()
    reads, writes = set(), set()
    for x in name_nodes(node):
        (writes if isinstance(x.ctx, ast.Store) else reads).add(x.id)
    # Writes into an array in place (``dy[i] += g``, ``dy[i] = 0.0``,
    # ``add_at(dy, i, g)``) change ``dy`` though its name is only loaded.
    targets: list = []
    if isinstance(node, ast.AugAssign):
        targets = [node.target]
    elif isinstance(node, ast.Assign):
        targets = [t for t in node.targets if isinstance(t, (ast.Subscript, ast.Attribute))]
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        targets = list(node.value.args)
    # ``dxs.pop()``, ``xs.append(v)`` change the list they are called on.
    targets += [n.func.value for n in walk(node) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr in ("pop", "append")]
    for target in targets:
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        if isinstance(target, ast.Name):
            reads.add(target.id)
            writes.add(target.id)
    return reads, writes


def _copy(s) -> tuple[str, str] | None:
    """``(target, source)`` for ``target = source`` between plain names."""
    if isinstance(s, Stmt) and isinstance(s.node, ast.Assign) and len(s.node.targets) == 1 \
            and isinstance(s.node.targets[0], ast.Name) and isinstance(s.node.value, ast.Name):
        return s.node.targets[0].id, s.node.value.id
    return None


def _assigned(s) -> str | None:
    """``y`` for ``y = e`` (one plain-name target)."""
    if isinstance(s, Stmt) and isinstance(s.node, ast.Assign) and len(s.node.targets) == 1 \
            and isinstance(s.node.targets[0], ast.Name):
        return s.node.targets[0].id
    return None


def run(stmts: list, counts: Counter) -> None:
    _run(stmts, counts, {})


def _run(stmts: list, counts: Counter, seen: dict) -> Counter:
    """:func:`run`, ``seen`` remembering the names in each statement
    (:func:`_names_of`); returns how often each name occurs in ``stmts``
    once rewritten, which is what the block holding them counts for its own
    (not counted again from its statements at every level around it)."""
    nested: dict[int, Counter] = {}
    for s in stmts:
        if isinstance(s, Block):
            nested[id(s)] = _run(s.body, counts, seen) + _run(s.orelse, counts, seen)
    stmts[:] = _split_tuples(stmts)
    copies = _Copies(stmts, counts, seen, nested)
    copies.run()
    stmts[:] = [s for s in stmts if s is not None]
    return copies.names_now()


def _names_of(node: ast.AST, seen: dict) -> list[ast.Name]:
    """:func:`name_nodes` of ``node``, remembered in ``seen`` (by ``id``, the
    node kept alive there). A block's statements are counted again for each
    block around it, and the rewrites only rename ``ast.Name`` nodes, never
    replace them: without this, a sweep nested 50 deep walked its innermost
    statements 50 times."""
    known = seen.get(id(node))
    if known is None:
        known = seen[id(node)] = (node, name_nodes(node))
    return known[1]


def _split_tuples(stmts: list) -> list:
    """``a, b = c, d`` → ``a = c; b = d`` when no target is a source."""
    out: list = []
    for s in stmts:
        if not (isinstance(s, Stmt) and isinstance(s.node, ast.Assign)
                and isinstance(s.node.targets[0], ast.Tuple) and isinstance(s.node.value, ast.Tuple)):
            out.append(s)
            continue
        targets, values = s.node.targets[0].elts, s.node.value.elts
        read = {x.id for v in values for x in walk(v) if isinstance(x, ast.Name)}
        if not all(isinstance(t, ast.Name) for t in targets) or read & {t.id for t in targets}:
            out.append(s)
            continue
        out += [Stmt(ast.Assign([ast.Name(t.id, ast.Store())], v), s.comment, role=s.role,
                     control=s.control) for t, v in zip(targets, values)]
    return out


class _Summary:
    """What the rewrites need to know of one statement, in the names it had
    when it was indexed (:meth:`_Copies.find` gives their names now)."""

    __slots__ = ("names", "reads", "writes", "copy", "assigned")

    def __init__(self, s, seen: dict, nested: Counter | None = None):
        """``nested``: for a block, the names of the statements it holds."""
        if isinstance(s, Block):
            self.names: Counter = Counter([x.id for x in _names_of(s.head, seen)]) + nested
            self.reads = set(self.names)
            self.writes = set(self.names)
        else:
            self.names = Counter([x.id for node in _nodes(s) for x in _names_of(node, seen)])
            self.reads, self.writes = _rw(s)
        self.copy = _copy(s)
        self.assigned = _assigned(s)


def _any_between(positions: list, low: int, high: int) -> bool:
    """Is any of the sorted ``positions`` strictly between ``low`` and ``high``?"""
    i = bisect_right(positions, low)
    return i < len(positions) and positions[i] < high


def _drop(positions: list, p: int, n: int = 1) -> None:
    i = bisect_left(positions, p)
    del positions[i:i + n]


FORWARD_COPY, SINK, ACCUMULATOR = range(3)


class _Copies:
    """The rewrites of :func:`run` over one block's statements, indexed.

    Statements keep their position (an index into ``stmts``, which holds
    None where one was deleted), so positions stay ordered as the block is
    rewritten. For each rule, a heap holds the positions whose check has not
    run since something it looked at changed; every other position is known
    not to match that rule. A check records what it looks at — names (any
    change to where they occur or to their count), names only where they are
    written, and other statements — and a rewrite puts back on the heaps the
    checks that looked at what it changed, and every statement it changed.

    A rewrite renames a name everywhere in the block (the counts guarantee it
    occurs nowhere else), so renaming is a union of two names' positions,
    the smaller merged into the larger; the ``ast.Name`` nodes get their new
    names once, at the end. (Renaming statement by statement costs, on a
    chain of 500 loops whose adjoint is renamed into the next one's, 125,000
    renames.)
    """

    def __init__(self, stmts: list, counts: Counter, seen: dict, nested: dict[int, Counter]):
        self.stmts = stmts
        self.counts = counts
        self.seen = seen
        n = len(stmts)
        self.renamed: dict[str, str] = {}
        """name -> the name it was renamed to (follow with :meth:`find`)."""
        self.summary: list[_Summary | None] = [None] * n
        self.at: dict[str, list[int]] = defaultdict(list)
        """name -> positions it occurs at, once per occurrence."""
        self.read_at: dict[str, list[int]] = defaultdict(list)
        self.written_at: dict[str, list[int]] = defaultdict(list)
        self.copies_of: dict[str, list[int]] = defaultdict(list)
        """name -> positions of ``t = name``."""
        self.assigned_at: dict[str, list[int]] = defaultdict(list)
        """name -> positions of ``name = e``."""
        for p, s in enumerate(stmts):
            self._index(p, _Summary(s, seen, nested.get(id(s))))
        self.heaps = [list(range(n)) for _ in range(3)]
        self.queued = [set(range(n)) for _ in range(3)]
        self.on_name: dict[str, set] = defaultdict(set)
        self.on_writes: dict[str, set] = defaultdict(set)
        self.on_position: dict[int, set] = defaultdict(set)
        self.checking: tuple[int, int] = (0, 0)
        self.names_changed: set[str] = set()
        self.writes_changed: set[str] = set()
        self.positions_changed: set[int] = set()

    # -- the index -------------------------------------------------------------

    def find(self, name: str) -> str:
        """The name ``name`` has now."""
        renamed = self.renamed
        if name not in renamed:
            return name
        root = name
        while root in renamed:
            root = renamed[root]
        while renamed[name] != root:
            renamed[name], name = root, renamed[name]
        return root

    def _copy(self, p: int) -> tuple[str, str] | None:
        c = self.summary[p].copy
        return None if c is None else (self.find(c[0]), self.find(c[1]))

    def _index(self, p: int, sm: _Summary) -> None:
        find = self.find
        self.summary[p] = sm
        for name, n in sm.names.items():
            at = self.at[find(name)]
            i = bisect_right(at, p)
            at[i:i] = [p] * n
        for name in sm.reads:
            insort(self.read_at[find(name)], p)
        for name in sm.writes:
            insort(self.written_at[find(name)], p)
        if sm.copy is not None:
            insort(self.copies_of[find(sm.copy[1])], p)
        if sm.assigned is not None:
            insort(self.assigned_at[find(sm.assigned)], p)

    def _unindex(self, p: int) -> _Summary:
        find = self.find
        sm = self.summary[p]
        self.summary[p] = None
        for name, n in sm.names.items():
            _drop(self.at[find(name)], p, n)
        for name in sm.reads:
            _drop(self.read_at[find(name)], p)
        for name in sm.writes:
            _drop(self.written_at[find(name)], p)
        if sm.copy is not None:
            _drop(self.copies_of[find(sm.copy[1])], p)
        if sm.assigned is not None:
            _drop(self.assigned_at[find(sm.assigned)], p)
        return sm

    def _now(self, sm: _Summary | None):
        """A summary in today's names: (occurrences, reads, writes, names
        whose copies or assignments it holds)."""
        if sm is None:
            return Counter(), set(), set(), set()
        find = self.find
        names: Counter = Counter()
        for name, n in sm.names.items():
            names[find(name)] += n
        forms = set()
        if sm.copy is not None:
            forms.add(find(sm.copy[1]))
        if sm.assigned is not None:
            forms.add(find(sm.assigned))
        return names, {find(n) for n in sm.reads}, {find(n) for n in sm.writes}, forms

    def _replace(self, p: int, s) -> None:
        """Put ``s`` (None: nothing) at position ``p``."""
        old = self._now(self._unindex(p))
        self.stmts[p] = s
        new_summary = None
        if s is not None:
            new_summary = _Summary(s, self.seen)
            self._index(p, new_summary)
        new = self._now(new_summary)
        changed = {m for m in old[0].keys() | new[0].keys() if old[0][m] != new[0][m]}
        writes = old[2] ^ new[2]
        changed |= writes | (old[1] ^ new[1]) | old[3] | new[3]
        self.names_changed |= changed
        self.writes_changed |= writes
        self.positions_changed.add(p)

    def _rename(self, old: str, new: str) -> None:
        """``old`` → ``new`` everywhere in the block."""
        for index in (self.at, self.read_at, self.written_at, self.copies_of, self.assigned_at):
            moved = index.pop(old, None)
            if not moved:
                continue
            into = index.get(new)
            if not into:
                index[new] = moved
                continue
            if len(moved) > len(into):
                moved, into = into, moved
                index[new] = into
            for p in moved:
                insort(into, p)
        self.renamed[old] = new
        self.names_changed |= {old, new}
        self.writes_changed |= {old, new}

    def names_now(self) -> Counter:
        """How often each name occurs in the block's statements now."""
        out: Counter = Counter()
        for sm in self.summary:
            if sm is not None:
                for name, n in sm.names.items():
                    out[self.find(name)] += n
        return out

    def finish(self) -> None:
        """Give the ``ast.Name`` nodes their new names."""
        if not self.renamed:
            return
        for s in self.stmts:
            if s is None:
                continue
            for node in _nodes(s):
                for x in _names_of(node, self.seen):
                    if x.id in self.renamed:
                        x.id = self.find(x.id)

    # -- what a check looked at ---------------------------------------------------

    def _looks_at(self, name: str) -> None:
        self.on_name[name].add(self.checking)

    def _looks_at_writes(self, name: str) -> None:
        self.on_writes[name].add(self.checking)

    def _looks_at_position(self, p: int) -> None:
        self.on_position[p].add(self.checking)

    def _wake(self) -> None:
        woken: set = set()
        for name in self.names_changed:
            woken |= self.on_name.pop(name, set())
        for name in self.writes_changed:
            woken |= self.on_writes.pop(name, set())
        for p in self.positions_changed:
            woken |= self.on_position.pop(p, set())
            woken.update((rule, p) for rule in range(3))
        for rule, p in woken:
            if p not in self.queued[rule] and self.stmts[p] is not None:
                self.queued[rule].add(p)
                heappush(self.heaps[rule], p)
        self.names_changed = set()
        self.writes_changed = set()
        self.positions_changed = set()

    # -- the search --------------------------------------------------------------

    def run(self) -> None:
        rules = (self._forward_copy, self._sink, self._accumulator)
        while any(self._first(rule, check) for rule, check in enumerate(rules)):
            pass
        self.finish()

    def _first(self, rule: int, check) -> bool:
        """Make the first rewrite of ``rule`` that applies, if any."""
        heap, queued = self.heaps[rule], self.queued[rule]
        while heap:
            k = heappop(heap)
            queued.discard(k)
            if self.stmts[k] is None:
                continue
            self.checking = (rule, k)
            if check(k):
                self._wake()
                return True
        return False

    # -- the rewrites --------------------------------------------------------------

    def _forward_copy(self, k: int) -> bool:
        """``y = x`` whose ``y`` is only read afterwards in this block, while
        ``x`` is unchanged: read ``x`` instead."""
        c = self._copy(k)
        if c is None:
            return False
        y, x = c
        if y == x:
            self._replace(k, None)
            return True
        self._looks_at(y)
        self._looks_at_writes(x)
        at = self.at[y]
        i = bisect_right(at, k)
        if len(at) - i != self.counts[y] - 1:
            return False
        if i < len(at):
            last = at[-1]
            # y is written nowhere up to its last use, x nowhere before it.
            if _any_between(self.written_at[y], k, last + 1) \
                    or _any_between(self.written_at[x], k, last):
                return False
        self._replace(k, None)
        self._rename(y, x)
        self.counts[x] += self.counts[y] - 1
        self.counts[y] = 0
        return True

    def _sink(self, k: int) -> bool:
        """``y = e; ...; x = y`` with ``y`` used nowhere else: ``x = e`` in place
        of the copy, if nothing in between writes what ``e`` reads."""
        c = self._copy(k)
        if c is None:
            return False
        x, y = c
        self._looks_at(y)
        if self.counts[y] != 2:
            return False
        defs = self.assigned_at[y]
        if not defs or defs[0] >= k:
            return False
        d = defs[0]
        self._looks_at_position(d)
        s = self.stmts[d]
        expr_reads = {self.find(n) for n in _rw(Stmt(ast.Expr(s.node.value)))[0]}
        for name in expr_reads:
            self._looks_at_writes(name)
        if any(_any_between(self.written_at[name], d, k) for name in expr_reads):
            return False
        node = s.node
        self._replace(d, None)
        node.targets[0].id = x
        self._replace(k, Stmt(node, s.comment, s.origin, s.operand, s.partial, x, role=s.role,
                              control=s.control))
        self.counts[y] = 0
        self.names_changed.add(y)
        return True

    def _accumulator(self, k: int) -> bool:
        """``y = e; ... y += ...; ...; x = y`` with ``y`` used only there and ``x``
        neither written in between nor read once ``y`` may differ from it (when
        ``e`` is ``x`` itself, ``x`` may be read until ``y`` first changes): use
        ``x`` throughout."""
        assigned = self.summary[k].assigned
        if assigned is None:
            return False
        y = self.find(assigned)
        self._looks_at(y)
        copies = self.copies_of[y]
        i = bisect_right(copies, k)
        if i == len(copies):
            return False
        end = copies[i]
        self._looks_at_position(end)
        x = self._copy(end)[0]
        self._looks_at(x)
        at = self.at[y]
        if bisect_left(at, end) - bisect_right(at, k) + 2 != self.counts[y]:
            return False
        if _any_between(self.written_at[x], k, end):
            return False
        if self._copy(k) != (y, x):
            if _any_between(self.read_at[x], k, end):
                return False
        else:
            # y starts as x: x may be read until y is first written.
            written = self.written_at[y]
            j = bisect_right(written, k)
            if j < len(written) and written[j] < end \
                    and _any_between(self.read_at[x], written[j], end):
                return False
        self._replace(end, None)
        self._rename(y, x)
        self.counts[x] += self.counts[y] - 2
        self.counts[y] = 0
        if self._copy(k) == (x, x):
            self._replace(k, None)
        return True
