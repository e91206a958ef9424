"""Reading an adjoint buffer's elements without copying them.

Contract: :func:`run` rewrites, in place, a NumPy reverse sweep's reads
``own(dy[idx])`` of the adjoint of an array written in place (the reverse
of ``y[idx] = v``: ``v``'s adjoint is the assigned elements') into
``dy[idx]``, a view, where no statement of the sweep changes the elements of
``dy`` in place: then the view holds, for as long as anything reads it, the
values the copy would. ``own`` is there for sweeps that do change ``dy``
later (``dy[idx] = 0.0`` when an earlier write overwrote the same elements,
``dy[j] += g`` for a read of ``y``); where none does, each copy is an array
made and filled for nothing, a microsecond per read.

Before → after (``new_state[i] = hidden`` in a loop, ``new_state`` returned,
never read)::

    dcell = unbroadcast(own(dnew_state[i + 1]), cell)
    dx = dx + unbroadcast(own(dnew_state[i]), hidden)
      ──▶
    dcell = unbroadcast(dnew_state[i + 1], cell)
    dx = dx + unbroadcast(dnew_state[i], hidden)

What counts as changing ``dy`` in place, anywhere in the sweep (loops run
their bodies again, so position does not matter): ``dy[...] = e``,
``dy += e`` and ``dy[...] += e``, and ``dy`` passed to a call or bound to
another name, which could change it through that name. ``dy`` must also hold
an array the sweep made: each assignment to it is a call (``float_zeros``)
or an arithmetic expression, never another variable (a cotangent the caller
still holds). A view of ``dy`` bound to an adjoint is not written through
either: the sweep writes in place only into arrays it made (``scatter``'s
zeros, ``float_zeros``), never into one a helper such as ``unbroadcast``
returned.

In a helper's backward function (:func:`seeded`), such an adjoint buffer of
an array the helper returns starts as the caller's cotangent ``c`` itself,
``dy = seeded(y, c)``, instead of ``dy = float_zeros(y)`` and ``dy = dy +
c`` on every call: nothing writes into ``dy`` (above), the caller writes
into no cotangent it has passed, and ``seeded`` takes ``c`` only where the
sum would have ``c``'s shape and dtype and ``c`` owns its data (a view, of
an adjoint buffer of the caller's, is added to zeros as before)::

    dnew_state = float_zeros(new_state)
    dnew_state = dnew_state + dnew_state_1     ──▶   dnew_state = seeded(new_state, dnew_state_1)
"""

from __future__ import annotations

import ast

from s2s_ad.emit.code import Block, Stmt
from s2s_ad.syntax_walk import walk


def run(stmts: list, sweep) -> None:
    """Drop the ``own`` copies of reads of adjoint buffers that ``stmts``
    (a reverse sweep, with the blocks it holds) never change in place."""
    own = sweep.arrays._helper_names.get("own") if sweep.arrays is not None else None
    if own is None:
        return
    kept = _kept(stmts, sweep)
    if not kept:
        return
    for node in _nodes(stmts):
        _unwrap(node, own, kept)


def seeded(stmts: list, sweep, cotangents: set) -> None:
    """In a backward function, the adjoint buffer of a returned array that
    ``stmts`` never change in place, ``dy = float_zeros(y)`` then
    ``dy = dy + c`` (``c`` one of the function's ``cotangents``), as
    ``dy = seeded(y, c)``: the caller's cotangent itself where it is an
    array of that shape and dtype, instead of zeros and a sum per call."""
    zeros = sweep.arrays._helper_names.get("float_zeros") if sweep.arrays is not None else None
    if zeros is None:
        return
    kept = _kept(stmts, sweep)
    for k in range(len(stmts) - 2, -1, -1):
        first, then = stmts[k], stmts[k + 1]
        if not (isinstance(first, Stmt) and isinstance(then, Stmt)):
            continue
        made, added = first.node, then.node
        if not (isinstance(made, ast.Assign) and isinstance(added, ast.Assign)
                and _call_of(made.value, zeros) and _assigns(made) in kept
                and _assigns(added) == _assigns(made)
                and isinstance(added.value, ast.BinOp) and isinstance(added.value.op, ast.Add)
                and _name_of(added.value.left) == _assigns(made)
                and _name_of(added.value.right) in cotangents):
            continue
        made.value = ast.Call(ast.Name(sweep.arrays.helper("seeded"), ast.Load()),
                              [made.value.args[0], added.value.right], [])
        first.comment = f"the adjoint of {_name_of(made.value.args[0])}: the cotangent, " \
                        "only read"
        del stmts[k + 1]


def _kept(stmts: list, sweep) -> set:
    """The adjoint buffers ``stmts`` never change in place (:func:`_disturbed`)."""
    buffers = {fam.adj for fam in sweep.families.values() if fam.adj is not None}
    return buffers.difference(*(_disturbed(n) for n in _nodes(stmts))) if buffers else set()


def _assigns(node: ast.Assign) -> str | None:
    return _name_of(node.targets[0]) if len(node.targets) == 1 else None


def _name_of(e: ast.expr) -> str | None:
    return e.id if isinstance(e, ast.Name) else None


def _call_of(e: ast.expr, fn: str) -> bool:
    """``fn(name)``: a call of ``fn`` on one name."""
    return (isinstance(e, ast.Call) and _name_of(e.func) == fn and len(e.args) == 1
            and not e.keywords and isinstance(e.args[0], ast.Name))


def _nodes(stmts: list):
    for s in stmts:
        if isinstance(s, Block):
            yield s.head
            yield from _nodes(s.body)
            yield from _nodes(s.orelse)
        elif isinstance(s, Stmt) and s.node is not None:
            yield s.node


def _base(e: ast.expr) -> ast.expr:
    while isinstance(e, (ast.Subscript, ast.Attribute)):
        e = e.value
    return e


def _disturbed(node: ast.AST) -> set:
    """The names whose array statement ``node`` (a block's head alone) may
    change in place, or binds to anything but a fresh array, or reads other
    than as an array read by index or an operand of arithmetic (an argument,
    an alias: another way to change it)."""
    out = set()
    if isinstance(node, ast.AugAssign):
        out.add(_base(node.target))
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        # a name bound to a fresh array only: a call's result or arithmetic
        fresh = len(targets) == 1 and isinstance(node.value, (ast.Call, ast.BinOp, ast.UnaryOp))
        for t in targets:
            for part in walk(t):
                if isinstance(part, (ast.Subscript, ast.Attribute)):
                    out.add(_base(part))
                elif isinstance(part, ast.Name) and isinstance(part.ctx, ast.Store) \
                        and not (fresh and t is part):
                    out.add(part)
    if isinstance(node, ast.For):
        out.update(walk(node.target))
    for parent in walk(node):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and not (
                    isinstance(parent, ast.Subscript) and parent.value is child
                    or isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare))):
                out.add(child)
    return {n.id for n in out if isinstance(n, ast.Name)}


def _unwrap(node: ast.AST, own: str, kept: set) -> None:
    """Replace ``own(b[...])`` by ``b[...]`` in ``node``, ``b`` in ``kept``."""
    for parent in walk(node):
        for field, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if _is_copy(item, own, kept):
                        value[k] = item.args[0]
            elif _is_copy(value, own, kept):
                setattr(parent, field, value.args[0])


def _is_copy(e, own: str, kept: set) -> bool:
    return (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == own
            and len(e.args) == 1 and not e.keywords and isinstance(e.args[0], ast.Subscript)
            and isinstance(e.args[0].value, ast.Name) and e.args[0].value.id in kept)
