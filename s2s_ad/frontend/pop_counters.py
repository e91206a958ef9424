"""Stack tapes read at a counter: ``v = T.pop()`` as ``T_top -= 1; v = T[T_top]``.

Contract: :func:`rewrite` rewrites, in place, the pops of every list a
function pops (``v = T.pop()``, ``v += T.pop()``, ``y[i] = T.pop()``,
``T.pop()`` alone) where, from the first statement that pops it, the list is
used by those pops, its items at indices of names and int constants
(``T[-1]``, ``T[k]``), its length ``len(T)`` and its truth (``while T:``)
only: ``T_top = len(T)`` goes before that statement, each pop becomes
``T_top -= 1`` then a read of ``T[T_top]`` (``int(...)`` of it for a stack of
ints), ``T[-1]`` is ``T[T_top - 1]``, ``T[k]`` is ``T[k % T_top]`` (the item
the index names while the list has that length), ``len(T)`` is ``T_top`` and
the truth of ``T`` is ``T_top > 0``. Pops return the items last to first, so
the values are the same; the list is never shortened, and nothing reads its
length again. The statements counted are those of the block of the one
statement that makes the list when every use is in it (an adjoint list
made in an arm), else the function's body. In a function of yours, a list
another name, scope or call could read, or a parameter, is left as it is.

Before → after::

    for _ in range(n_iter):                 x_tape_top = len(x_tape)
        x = x_tape.pop()                    for _ in range(n_iter):
                                                x_tape_top -= 1
                                                x = x_tape[x_tape_top]

The uses of every name are indexed in one walk of the function, and the new
statements are put into their blocks once at the end: the time is linear in
the function's size, however many tapes it pops (a gradient file of helpers
nested six deep pops hundreds).
"""

from __future__ import annotations

import ast

from s2s_ad.frontend import own_helpers
from s2s_ad.frontend.jax_batch_rules import int_value
from s2s_ad.frontend.int_names import int_tapes
from s2s_ad.names import Namer
from s2s_ad.syntax_walk import child_fields, walk

__all__ = ["int_const", "pop_of", "rewrite"]

int_const = int_value
"""The value of an int literal (``-1`` too), else None."""

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def pop_of(stmt) -> str | None:
    """``T`` for ``v = T.pop()`` (or ``y[i] = T.pop()``: an overwritten
    element put back; or ``v += T.pop()``: an adjoint list's item added; or
    ``T.pop()`` alone: the adjoint of an item nothing needs, dropped)."""
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
        else stmt.target if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) \
        else ast.Name("_") if isinstance(stmt, ast.Expr) else None
    if isinstance(target, (ast.Name, ast.Subscript)) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "pop" \
                and isinstance(call.func.value, ast.Name) and not call.args and not call.keywords:
            return call.func.value.id
    return None


class _Index:
    """One walk of a function: each node's parent, each statement's block,
    and per name its nodes, pop statements, indexed reads, ``len`` calls and
    truth tests."""

    def __init__(self, tree: ast.FunctionDef, builtin_len: bool):
        self.tree = tree
        self.parent: dict[int, ast.AST] = {}
        self.home: dict[int, tuple] = {}  # id(stmt) -> (its block, the field, its position)
        self.names: dict[str, list] = {}  # every Name node, any context
        self.pops: dict[str, list] = {}
        self.items: dict[str, list] = {}  # T[...]
        self.sizes: dict[str, dict] = {}  # id -> "len" / "truth"
        self.len_stores: list = []  # `len` bound (not the builtin there)
        self.nested: set = set()  # names read in a nested function, lambda or class
        self.allowed: set = set()  # ids of names used as a stack only may be (_stack_alone)
        todo = [tree]
        while todo:
            node = todo.pop()
            self._see(node, builtin_len)
            for field in child_fields(node):
                value = getattr(node, field, None)
                if isinstance(value, list):
                    for k, child in enumerate(value):
                        if isinstance(child, ast.AST):
                            self.parent[id(child)] = node
                            if isinstance(child, ast.stmt):
                                self.home[id(child)] = (value, field, k)
                            todo.append(child)
                elif isinstance(value, ast.AST):
                    self.parent[id(value)] = node
                    todo.append(value)

    def _see(self, n: ast.AST, builtin_len: bool) -> None:
        if isinstance(n, ast.Name):
            self.names.setdefault(n.id, []).append(n)
            if n.id == "len" and not isinstance(n.ctx, ast.Load):
                self.len_stores.append(n)
        elif isinstance(n, ast.stmt):
            tape = pop_of(n)
            if tape is not None:
                self.pops.setdefault(tape, []).append(n)
        if isinstance(n, _SCOPES) and n is not self.tree:
            self.nested |= {m.id for m in walk(n) if isinstance(m, ast.Name)}
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            self.items.setdefault(n.value.id, []).append(n)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" \
                and builtin_len and len(n.args) == 1 and not n.keywords \
                and isinstance(n.args[0], ast.Name):
            self.sizes.setdefault(n.args[0].id, {})[id(n)] = (n, "len")
        for t in _tested(n):
            if isinstance(t, ast.Name):
                self.sizes.setdefault(t.id, {})[id(t)] = (t, "truth")
        # (the uses of a list by which a counter may stand for its pops)
        if isinstance(n, ast.Attribute) and n.attr in ("pop", "append", "extend") \
                or isinstance(n, ast.Subscript):
            self.allowed.add(id(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len":
            self.allowed.update(id(a) for a in n.args)
        elif isinstance(n, (ast.For, ast.comprehension)):
            self.allowed.add(id(n.iter))
        else:
            self.allowed.update(id(t) for t in _tested(n))

    def statement_in(self, node: ast.AST, block: list):
        """The statement of ``block`` that holds ``node`` (or is it), else None."""
        while node is not None:
            home = self.home.get(id(node))
            if home is not None and home[0] is block:
                return node
            node = self.parent.get(id(node))
        return None

    def position_in(self, node: ast.AST, block: list) -> int | None:
        stmt = self.statement_in(node, block)
        return None if stmt is None else self.home[id(stmt)][2]

    def made_in(self, tape: str) -> list:
        """The statements ``tape``'s pops are counted in: the block (an arm,
        a loop's body) of the one statement that makes it (``dxs = [0.0] *
        len(xs)`` inside ``if t3:``, as a backward function writes a list's
        adjoint where the list was made) when every use of ``tape`` is in
        that block, else the function's body."""
        body = self.tree.body
        made = [n for n in self.names.get(tape, ()) if not isinstance(n.ctx, ast.Load)]
        if len(made) != 1:
            return body
        owner = self.parent.get(id(made[0]))
        if not (isinstance(owner, ast.Assign) and owner.targets == made) \
                or id(owner) not in self.home:
            return body
        block, field, _ = self.home[id(owner)]
        holder = self.parent.get(id(owner))
        if field not in ("body", "orelse", "finalbody") or not isinstance(holder, ast.stmt):
            return body
        if any(self.statement_in(n, block) is None for n in self.names[tape]):
            return body
        return block


def rewrite(tree: ast.FunctionDef, namer: Namer, globals_: dict | None = None,
            given=()) -> None:
    """Read every stack tape of ``tree`` at a counter (see the module);
    ``given``: the parameters that are stacks of ints (from a forward
    function's tape), whose items are read as ``int(...)`` as those of the
    stacks of ints ``tree`` fills itself."""
    popped = []
    for n in walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr == "pop" and isinstance(n.func.value, ast.Name):
            popped.append(n.func.value.id)
    if not popped:
        return
    # stacks of ints (a while loop's index): read as int(...)
    ints = int_tapes(tree, globals_, given)
    if (globals_ or {}).get("int", int) is not int or any(
            isinstance(n, ast.Name) and n.id == "int" and not isinstance(n.ctx, ast.Load)
            or isinstance(n, ast.arg) and n.arg == "int" for n in walk(tree)):
        ints = set()  # `int` is not the builtin here
    globals_ = globals_ or {}
    index = _Index(tree, globals_.get("len", len) is len)
    before: dict[int, list] = {}  # id(stmt) -> the statements put before it
    dropped: set = set()
    blocks: dict[int, list] = {}
    for tape in dict.fromkeys(popped):
        body = index.made_in(tape)
        pops = index.pops.get(tape, [])
        starts = [p for p in (index.position_in(s, body) for s in pops) if p is not None]
        if not starts:
            continue
        first = min(starts)

        def after(nodes):
            return [n for n in nodes if _at_or_after(index.position_in(n, body), first)]
        # From the first statement that pops, the tape is used by pops only,
        # each the whole right side of an assignment (or an item, ``dxs[-1] +=
        # g`` between the pops of an adjoint list, ``dxs[i] += g``, ``dxs[0]``
        # after them; or its length, ``len(T)``, or its truth, ``while T:``).
        counted = after(pops)
        uses = after(index.names.get(tape, ()))
        items = [n for n in after(index.items.get(tape, ())) if _plain_index(n.slice, tape)]
        sizes = {k: v for k, v in index.sizes.get(tape, {}).items() if after([v[0]])}
        if any(after([n]) for n in index.len_stores):
            sizes = {k: v for k, v in sizes.items() if v[1] != "len"}  # `len` rebound here
        if len(uses) != len(counted) + len(items) + len(sizes) \
                or not _stack_alone(tree, tape, globals_, index):
            continue
        top = namer.fresh(f"{tape}_top")
        at = body[first]
        init = ast.Assign([ast.Name(top, ast.Store())],
                          ast.Call(ast.Name("len", ast.Load()), [ast.Name(tape, ast.Load())], []))
        before.setdefault(id(at), []).append(ast.fix_missing_locations(ast.copy_location(init, at)))
        blocks[id(body)] = body
        for s in counted:
            block, field, _ = index.home[id(s)]
            if field not in ("body", "orelse") and index.statement_in(s, body) is not s:
                continue  # (a `finally:` block: left as it is)
            _counted_pop(s, tape, top, tape in ints, before, dropped)
            blocks[id(block)] = block
        for n in items:
            k = int_const(n.slice)
            if k is None:
                n.slice = ast.BinOp(n.slice, ast.Mod(), ast.Name(top, ast.Load()))
            elif k < 0:
                n.slice = ast.BinOp(ast.Name(top, ast.Load()), ast.Sub(), ast.Constant(-k))
            else:
                continue
            ast.fix_missing_locations(ast.copy_location(n.slice, n))
        for node, kind in sizes.values():
            made = ast.Name(top, ast.Load())
            if kind == "truth":
                made = ast.Compare(made, [ast.Gt()], [ast.Constant(0)])
            _replace(index.parent[id(node)], node,
                     ast.fix_missing_locations(ast.copy_location(made, node)))
    for block in blocks.values():
        block[:] = [s for stmt in block for s in before.get(id(stmt), []) + (
            [] if id(stmt) in dropped else [stmt])]


def _at_or_after(position: int | None, first: int) -> bool:
    return position is not None and position >= first


def _counted_pop(s: ast.stmt, tape: str, top: str, ints: bool, before: dict,
                 dropped: set) -> None:
    """``T_top -= 1`` before the pop ``s``, which reads ``T[T_top]`` (or goes)."""
    down = ast.AugAssign(ast.Name(top, ast.Store()), ast.Sub(), ast.Constant(1))
    before.setdefault(id(s), []).append(ast.fix_missing_locations(ast.copy_location(down, s)))
    if isinstance(s, ast.Expr):  # the item dropped: the counter alone
        dropped.add(id(s))
        return
    read = ast.Subscript(ast.Name(tape, ast.Load()), ast.Name(top, ast.Load()), ast.Load())
    if ints:
        read = ast.Call(ast.Name("int", ast.Load()), [read], [])
    s.value = ast.copy_location(read, s.value)
    ast.fix_missing_locations(s)


def _replace(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for field in child_fields(parent):
        value = getattr(parent, field, None)
        if value is old:
            setattr(parent, field, new)
        elif isinstance(value, list):
            value[:] = [new if v is old else v for v in value]


def _stack_alone(tree: ast.FunctionDef, tape: str, globals_: dict, index: _Index) -> bool:
    """Is the list ``tape`` read by this function alone, and by its own name
    only, so that a counter of the items left stands for its pops? Not where
    another name, a nested function or lambda, or a call could read it (``ys =
    xs``, ``lambda: xs[-1]``, ``h(xs)``, ``return xs``: they would see the list
    unshortened), nor a parameter of a function of yours (the caller's list,
    which its pops shorten). Elsewhere the pops are lowered on the list
    itself, or refused, located. (A module s2s-ad generated pops the tapes
    and list adjoints it made, which nothing reads after: always a counter.)"""
    if own_helpers.written_by_s2s_ad(globals_):
        return True  # (its tapes and list adjoints: made and popped there, read nowhere else)
    params = {a.arg for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs}
    if tape in params or tape in index.nested:
        return False  # (the caller's list; read in another scope)
    return all(id(n) in index.allowed for n in index.names.get(tape, ())
               if isinstance(n.ctx, ast.Load))


def _tested(n: ast.AST) -> list:
    """The expressions ``n`` takes the truth of: the test of a
    ``while``/``if``/``a if c else b``, the operand of ``not``, the operands
    of ``and``/``or``."""
    if isinstance(n, (ast.While, ast.If, ast.IfExp)):
        return [n.test]
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
        return [n.operand]
    return n.values if isinstance(n, ast.BoolOp) else []


def _plain_index(e, tape: str) -> bool:
    """An index of names and int constants under ``+ - * //`` (no call, no read
    of ``tape``): the same int whichever length the list has."""
    if int_const(e) is not None or isinstance(e, ast.Name) and e.id != tape:
        return True
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult,
                                                      ast.FloorDiv)):
        return _plain_index(e.left, tape) and _plain_index(e.right, tape)
    return isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) \
        and _plain_index(e.operand, tape)
