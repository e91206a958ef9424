"""The copy elimination of s2s_ad.emit.peephole as it was first written: the
search starts again after every rewrite and every check counts names over the
rest of the block. Cubic in a block's length, but plain to read; the indexed
version must make the same rewrites in the same order
(tests/test_transform_time.py compares the two)."""

from __future__ import annotations

import ast
from collections import Counter

from s2s_ad.emit.code import Block, Stmt
from s2s_ad.emit.peephole import _copy, _rw, names_in


def _rename(s, old: str, new: str) -> None:
    nodes = [s.node] if isinstance(s, Stmt) else [s.head]
    for n in nodes:
        if n is None:
            continue
        for x in ast.walk(n):
            if isinstance(x, ast.Name) and x.id == old:
                x.id = new
    if isinstance(s, Block):
        for c in s.body + s.orelse:
            _rename(c, old, new)


def run(stmts: list, counts: Counter) -> None:
    for s in stmts:
        if isinstance(s, Block):
            run(s.body, counts)
            run(s.orelse, counts)
    _split_tuples(stmts)
    changed = True
    while changed:
        changed = _forward_copy(stmts, counts) or _sink(stmts, counts) or _accumulator(stmts, counts)


def _split_tuples(stmts: list) -> None:
    """``a, b = c, d`` → ``a = c; b = d`` when no target is a source."""
    for k in range(len(stmts) - 1, -1, -1):
        s = stmts[k]
        if not (isinstance(s, Stmt) and isinstance(s.node, ast.Assign)
                and isinstance(s.node.targets[0], ast.Tuple) and isinstance(s.node.value, ast.Tuple)):
            continue
        targets, values = s.node.targets[0].elts, s.node.value.elts
        if not all(isinstance(t, ast.Name) for t in targets):
            continue
        read = {x.id for v in values for x in ast.walk(v) if isinstance(x, ast.Name)}
        if read & {t.id for t in targets}:
            continue
        stmts[k:k + 1] = [Stmt(ast.Assign([ast.Name(t.id, ast.Store())], v), s.comment,
                               role=s.role, control=s.control)
                          for t, v in zip(targets, values)]


def _forward_copy(stmts: list, counts: Counter) -> bool:
    """``y = x`` whose ``y`` is only read afterwards in this block, while ``x``
    is unchanged: read ``x`` instead."""
    for k, s in enumerate(stmts):
        c = _copy(s)
        if c is None:
            continue
        y, x = c
        if y == x:
            del stmts[k]
            return True
        later = stmts[k + 1:]
        if sum(names_in(t)[y] for t in later) != counts[y] - 1:
            continue
        ok = True
        seen = 0
        for t in later:
            reads, writes = _rw(t)
            if y in writes or (x in writes and names_in(t)[y] + seen < counts[y] - 1):
                ok = False
                break
            seen += names_in(t)[y]
            if seen == counts[y] - 1:
                break
        if not ok:
            continue
        for t in later:
            _rename(t, y, x)
        counts[x] += counts[y] - 1
        counts[y] = 0
        del stmts[k]
        return True
    return False


def _sink(stmts: list, counts: Counter) -> bool:
    """``y = e; ...; x = y`` with ``y`` used nowhere else: ``x = e`` in place
    of the copy, if nothing in between writes what ``e`` reads."""
    for k, s in enumerate(stmts):
        c = _copy(s)
        if c is None or counts[c[1]] != 2:
            continue
        x, y = c
        d = next((j for j in range(k) if isinstance(stmts[j], Stmt)
                  and isinstance(stmts[j].node, ast.Assign) and len(stmts[j].node.targets) == 1
                  and isinstance(stmts[j].node.targets[0], ast.Name)
                  and stmts[j].node.targets[0].id == y), None)
        if d is None:
            continue
        expr_reads, _ = _rw(Stmt(ast.Expr(stmts[d].node.value)))
        if any(_rw(t)[1] & expr_reads for t in stmts[d + 1:k]):
            continue
        node = stmts[d].node
        node.targets[0].id = x
        stmts[k] = Stmt(node, stmts[d].comment, stmts[d].origin, stmts[d].operand,
                        stmts[d].partial, x, role=stmts[d].role, control=stmts[d].control)
        del stmts[d]
        counts[y] = 0
        return True
    return False


def _accumulator(stmts: list, counts: Counter) -> bool:
    """``y = e; ... y += ...; ...; x = y`` with ``y`` used only there and ``x``
    neither written in between nor read once ``y`` may differ from it (when
    ``e`` is ``x`` itself, ``x`` may be read until ``y`` first changes): use
    ``x`` throughout."""
    for k, s in enumerate(stmts):
        if not (isinstance(s, Stmt) and isinstance(s.node, ast.Assign)
                and len(s.node.targets) == 1 and isinstance(s.node.targets[0], ast.Name)):
            continue
        y = s.node.targets[0].id
        end = next((j for j in range(k + 1, len(stmts)) if _copy(stmts[j]) is not None
                    and _copy(stmts[j])[1] == y), None)
        if end is None:
            continue
        x = _copy(stmts[end])[0]
        between = stmts[k + 1:end]
        if sum(names_in(t)[y] for t in between) + 2 != counts[y]:
            continue
        changed = _copy(s) != (y, x)
        ok = True
        for t in between:
            reads, writes = _rw(t)
            if x in writes or (changed and x in reads):
                ok = False
                break
            if y in writes:
                changed = True
        if not ok:
            continue
        for t in [s] + between:
            _rename(t, y, x)
        counts[x] += counts[y] - 2
        counts[y] = 0
        del stmts[end]
        if _copy(stmts[k]) == (x, x):
            del stmts[k]
        return True
    return False
