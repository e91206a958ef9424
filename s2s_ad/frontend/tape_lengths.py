"""A loop's tape of the lists made in its body, read back as a tape of their lengths.

Contract: ``rewrite(tree, namer)`` rewrites, in place, a tape ``T`` of s2s-ad's
own generated code whose items are lists (``ys_tape[k] = ys`` or
``ys_tape.append(ys)``, ``ys`` a list the loop's body makes each iteration,
``[0.0] * n`` or a list a helper returns) where every read of an item,
``ys = T[e]`` or ``ys = T.pop()``, is followed in its block only by ``len(ys)``
(the reverse sweep makes the item's adjoint list, ``dys = [0.0] * len(ys)``,
and reads nothing else of it: the values the rules need are taped on their
own, :mod:`s2s_ad.reverse.lists`). The tape then holds each list's length
instead, ``T[k] = len(ys)``, and the read is ``ys_n = T[e]`` with
``len(ys)`` written ``ys_n``: the same values (a list made in a loop's body
keeps its length once grown: where it is appended to after it is taped, later
in the same block, the length is taped after the last statement growing it;
grown elsewhere, or past a ``break``/``continue``, the tape is left alone),
and a tape of ints, which
the rest of the frontend reads (a list grown at run time holds numbers, not
lists). A tape used in any other way is left alone, and refused as before.

Before → after::

    ys_tape = [None] * 3                     ys_tape = [None] * 3
    for k in range(3):                       for k in range(3):
        ys = [0.0] * n                           ys = [0.0] * n
        ys_tape[k] = ys                          ys_tape[k] = len(ys)
        ...                                      ...
    for k in reversed(range(3)):             for k in reversed(range(3)):
        ys = ys_tape[k]                          ys_n = ys_tape[k]
        dys = [0.0] * len(ys)                    dys = [0.0] * ys_n
"""

from __future__ import annotations

import ast

from s2s_ad.frontend.pair_layout import partner, written_pair
from s2s_ad.names import Namer
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk
from s2s_ad import source_text

__all__ = ["rewrite"]


def rewrite(tree: ast.FunctionDef, namer: Namer, globals_: dict | None = None) -> None:
    """``globals_``: the module's names, where the pair ``H_fwd``/``H_bwd``
    of a helper is found (a tape ``H_fwd`` returns and ``H_bwd`` reads)."""
    if _len_shadowed(tree):
        return
    parents = _parents(tree)
    reads, spoiled = _tape_reads(tree, parents)
    shared = _shared(tree, globals_ or {})
    for tape in set(reads) | set(shared):
        if tape in spoiled:
            continue
        found = reads.get(tape, [])
        writes = _writes(tree, tape, {id(s) for s, _, _ in found}, parents,
                         returned=tape in shared)
        if writes is None:
            continue
        if tape not in shared and not (found and writes) \
                or shared.get(tape) is True and not (writes and not found) \
                or shared.get(tape) is False and not (found and not writes):
            continue  # (True: the side writing a helper's tape; False: the side reading it)
        moves = [_grown_after(tree, holder, field, parents) for holder, field in writes]
        if any(m is False for m in moves):
            continue  # the list grows after it is taped, where its length cannot follow
        for (holder, field), move in zip(writes, moves):
            item = holder.args[0] if field == "args" else holder.value
            length = ast.copy_location(ast.Call(ast.Name("len", ast.Load()), [item], []), item)
            if field == "args":
                holder.args[0] = length
            else:
                holder.value = length
            if move is not None:  # the length once the list is grown: taped after that
                block, stmt, last = move
                block.remove(stmt)
                block.insert(block.index(last) + 1, stmt)
        for stmt, name, calls in found:
            length = namer.fresh(f"{name}_n")
            stmt.targets[0] = ast.copy_location(ast.Name(length, ast.Store()), stmt.targets[0])
            for call in calls:
                holder = parents[id(call)]
                for f, v in ast.iter_fields(holder):
                    if v is call:
                        setattr(holder, f, ast.copy_location(ast.Name(length, ast.Load()), call))
                    elif isinstance(v, list):
                        for j, x in enumerate(v):
                            if x is call:
                                v[j] = ast.copy_location(ast.Name(length, ast.Load()), call)
        ast.fix_missing_locations(tree)


def _len_shadowed(tree) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "len" and isinstance(n.ctx, ast.Store)
               for n in walk(tree))


def _parents(tree) -> dict:
    return syntax_walk.parents(tree)


def _tape_reads(tree, parents) -> tuple[dict, set]:
    """tape -> [(read statement, name, its len calls)], and the tapes read otherwise."""
    reads: dict[str, list] = {}
    spoiled: set[str] = set()
    for node in syntax_walk.blocks(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                read = _read(stmt)
                if read is None:
                    continue
                name, tape = read
                calls = _lengths_after(block[i + 1:], name, parents)
                if calls is None or not _unread_after(node, name, parents, tree):
                    spoiled.add(tape)
                else:
                    reads.setdefault(tape, []).append((stmt, name, calls))
    return reads, spoiled


# -- a helper's tape: written by H_fwd, read by H_bwd --------------------------

def _shared(tree, globals_: dict) -> dict[str, bool]:
    """The tapes of ``tree`` that are an item of a helper's tape whose pair
    agrees (``H_fwd`` only writes it, ``H_bwd`` only reads lengths of its
    items): name -> whether ``tree`` is the side that writes."""
    import textwrap

    found = written_pair(globals_, tree.name)
    if found is None:
        return {}
    fwd, bwd = found
    try:
        f_tree, b_tree = (ast.parse(textwrap.dedent(source_text.text(g))).body[0]
                          for g in (fwd, bwd))
    except (OSError, TypeError, SyntaxError):
        return {}
    f_items, b_items = _returned_items(f_tree), _unpacked_items(b_tree)
    if f_items is None or b_items is None or len(f_items) != len(b_items) \
            or _len_shadowed(f_tree) or _len_shadowed(b_tree):
        return {}
    f_parents, b_parents = _parents(f_tree), _parents(b_tree)
    b_reads, b_spoiled = _tape_reads(b_tree, b_parents)
    out = {}
    for f_name, b_name in zip(f_items, b_items):
        if f_name is None or b_name is None or b_name in b_spoiled or b_name not in b_reads:
            continue
        ids = {id(s) for s, _, _ in b_reads[b_name]}
        if _writes(b_tree, b_name, ids, b_parents, unpacked=True) != []:
            continue  # H_bwd writes it, or uses it otherwise
        if not _writes(f_tree, f_name, set(), f_parents, returned=True):
            continue  # H_fwd reads it, or uses it otherwise
        writes = partner(tree.name)[0] == tree.name
        out[f_name if writes else b_name] = writes
    return out


def _returned_items(fn) -> list | None:
    """The names in ``return value, (a, b, c)`` (every return alike), else None."""
    found = None
    for r in (n for n in walk(fn) if isinstance(n, ast.Return)):
        v = r.value
        if not (isinstance(v, ast.Tuple) and len(v.elts) == 2 and isinstance(v.elts[1], ast.Tuple)):
            return None
        names = [e.id if isinstance(e, ast.Name) else None for e in v.elts[1].elts]
        if found is not None and names != found:
            return None
        found = names
    return found


def _unpacked_items(fn) -> list | None:
    """The names of ``a, b, c = tape``, ``H_bwd``'s first statement."""
    if not fn.body or not fn.args.args:
        return None
    first = fn.body[0]
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1
            and isinstance(first.targets[0], ast.Tuple) and isinstance(first.value, ast.Name)
            and first.value.id == fn.args.args[0].arg):
        return None
    return [e.id if isinstance(e, ast.Name) else None for e in first.targets[0].elts]


def _read(stmt: ast.stmt) -> tuple[str, str] | None:
    """``(name, tape)`` for ``name = tape[e]`` or ``name = tape.pop()``."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    v = stmt.value
    if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name) \
            and not isinstance(v.slice, ast.Slice):
        return stmt.targets[0].id, v.value.id
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "pop" \
            and not v.args and not v.keywords and isinstance(v.func.value, ast.Name):
        return stmt.targets[0].id, v.func.value.id
    return None


def _lengths_after(stmts: list, name: str, parents: dict) -> list | None:
    """The calls ``len(name)`` in ``stmts``, if every other use of ``name``
    there is none (and nothing binds it again); else None."""
    calls = []
    for s in stmts:
        for n in walk(s):
            if not (isinstance(n, ast.Name) and n.id == name):
                continue
            if not isinstance(n.ctx, ast.Load):
                return None
            call = parents.get(id(n))
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and call.func.id == "len" and call.args == [n] and not call.keywords):
                return None
            calls.append(call)
    return calls if calls else None


def _unread_after(owner: ast.AST, name: str, parents: dict, tree: ast.FunctionDef) -> bool:
    """Nothing after ``owner`` (the loop or branch whose block holds the
    read), in the blocks enclosing it, reads ``name``: there it would still
    name the item read, which no longer is the list."""
    node = owner
    while node is not tree:
        parent = parents.get(id(node))
        if parent is None:
            return False
        for field in ("body", "orelse"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is node for s in block):
                k = next(k for k, s in enumerate(block) if s is node)
                if any(isinstance(n, ast.Name) and n.id == name
                       for s in block[k + 1:] for n in walk(s)):
                    return False
        node = parent
    return True


def _writes(tree: ast.FunctionDef, tape: str, read_ids: set, parents: dict,
            returned: bool = False, unpacked: bool = False) -> list | None:
    """Where each item of ``tape`` is written (``(statement, "value")`` for
    ``tape[k] = v``, ``(call, "args")`` for ``tape.append(v)``), if every use of the
    tape is one of those, its making (``tape = [None] * m``, ``tape = []``)
    or a read of ``read_ids`` (``returned``: also in a returned tuple;
    ``unpacked``: also bound by unpacking a tuple); else None."""
    out = []
    for n in walk(tree):
        if not (isinstance(n, ast.Name) and n.id == tape):
            continue
        p = parents.get(id(n))
        if isinstance(n.ctx, ast.Store):
            if isinstance(p, ast.Assign) and p.targets == [n] and _made_empty(p.value):
                continue
            if unpacked and isinstance(p, ast.Tuple) and isinstance(parents.get(id(p)), ast.Assign):
                continue
            return None
        if returned and isinstance(p, ast.Tuple) and _in_return(p, parents):
            continue
        if isinstance(p, ast.Subscript) and isinstance(p.ctx, ast.Store):
            stmt = parents.get(id(p))
            if isinstance(stmt, ast.Assign) and stmt.targets == [p] \
                    and isinstance(stmt.value, ast.Name):
                out.append((stmt, "value"))
                continue
            return None
        if isinstance(p, ast.Subscript) and id(parents.get(id(p))) in read_ids:
            continue
        if isinstance(p, ast.Attribute) and p.attr in ("append", "pop"):
            call = parents.get(id(p))
            if p.attr == "pop" and id(parents.get(id(call))) in read_ids:
                continue
            if p.attr == "append" and isinstance(call, ast.Call) and len(call.args) == 1 \
                    and isinstance(call.args[0], ast.Name) \
                    and isinstance(parents.get(id(call)), ast.Expr):
                out.append((call, "args"))
                continue
        return None
    return out


_GROW = ("append", "extend", "insert")


def _grown_after(tree, holder, field: str, parents: dict):
    """Where the write of a list's length into its tape must go: None where
    the list (``ys`` of ``T[k] = ys``) is not grown after it; ``(block, the
    write's statement, the last statement of its block that grows it)``
    where it is, later in the same block (``xs = []``, ``xs_tape[j] = xs``,
    then the loop appending to ``xs``: the tape keeps the list, whose length
    the reverse sweep reads once it is grown), with no ``break``,
    ``continue`` or ``return`` of that block between; False where it is
    grown elsewhere too, or past such a jump."""
    item = holder.args[0] if field == "args" else holder.value
    stmt = parents.get(id(holder)) if field == "args" else holder
    growing = [n for n in walk(tree) if _grows(n, item.id)]
    if not growing:
        return None
    block = next((getattr(p, f) for p in walk(tree) for f in ("body", "orelse", "finalbody")
                  if isinstance(getattr(p, f, None), list)
                  and any(s is stmt for s in getattr(p, f))), None)
    if block is None:
        return False
    k = next(j for j, s in enumerate(block) if s is stmt)
    after = {id(n) for s in block[k + 1:] for n in walk(s)}
    if any(id(n) not in after for n in growing):
        return False
    last = max(j for j, s in enumerate(block) if j > k and any(_grows(n, item.id)
                                                                for n in walk(s)))
    if any(_jumps(s) for s in block[k + 1:last + 1]):
        return False
    return block, stmt, block[last]


def _grows(node, name: str) -> bool:
    """``name.append(v)`` (``extend``, ``insert``) or ``name += ...``."""
    if isinstance(node, ast.AugAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in _GROW and isinstance(node.func.value, ast.Name) \
        and node.func.value.id == name


def _jumps(stmt) -> bool:
    """Does ``stmt`` hold a ``return``, or a ``break``/``continue`` of the
    loop around it (not of a loop inside it)?"""
    def visit(n, in_loop: bool) -> bool:
        if isinstance(n, ast.Return):
            return True
        if isinstance(n, (ast.Break, ast.Continue)) and not in_loop:
            return True
        if isinstance(n, (ast.FunctionDef, ast.Lambda)):
            return False
        inner = in_loop or isinstance(n, (ast.For, ast.While))
        return any(visit(c, inner) for c in ast.iter_child_nodes(n))
    return visit(stmt, False)


def _in_return(node, parents) -> bool:
    while node is not None and not isinstance(node, ast.stmt):
        node = parents.get(id(node))
    return isinstance(node, ast.Return)


def _made_empty(value: ast.expr) -> bool:
    """``[]`` or ``[None] * m``."""
    if isinstance(value, ast.List) and not value.elts:
        return True
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) \
        and isinstance(value.left, ast.List) and len(value.left.elts) == 1 \
        and isinstance(value.left.elts[0], ast.Constant) and value.left.elts[0].value is None
