"""The adjoints of indexed reads in s2s-ad's own NumPy gradients, in the subset.

Contract: ``rewrite(tree, globals_, namer)`` rewrites, in place, the calls of
a function definition to the ``scatter`` and ``add_scattered`` helpers a
generated NumPy gradient defines (recognised by their exact text,
:func:`s2s_ad.frontend.own_helpers.is_helper`), into subscript assignments
the rest of the frontend lowers:

* ``scatter(g, x, index)`` is an array of zeros shaped like ``x`` with ``g``
  at ``x[index]``: ``s = np.zeros_like(x)`` then ``s[index] = g``, before
  the statement that calls it, which reads ``s``, where the index is a tuple,
  a ``slice(...)`` or a constant; with one other expression for the index
  (an integer array that may repeat an element, where ``scatter`` adds up)
  the call is left to the lowering, as the primitive ``own.scatter``;
* ``add_scattered(y, index, g)``, a statement, adds ``g`` into ``y[index]``
  in place: ``y[index] += g``, where the index is a tuple, a ``slice(...)``
  or a constant (with one other expression, the lowering decides:
  :func:`s2s_ad.frontend.own_helpers.add_into`);
* ``t = joined(x, (g1, ..., gk), (c1, ...))``, the adjoints of slices that
  tile ``x``'s first axis, is ``t = np.zeros_like(x)`` then ``t[:c1] = g1``,
  ``t[c1:c2] = g2``, ..., ``t[ck:] = gk``: the helper's concatenation is that
  array, which it makes that way where a part is not an array of its slice's
  shape.

The helpers add repeated elements of an integer-array index up (``np.add.at``)
where an assignment keeps the last write; the lowering refuses an assignment
whose index is not made of ints, slices and masks
(:meth:`ArrayIndexing.assignment_index`), located, so the rewrite never
changes a value. ``slice(a, b, c)`` in the index is written ``a:b:c``. A call
of another shape (keywords, a starred argument, a tuple nested in the index,
the call inside a lambda or a condition) is left alone, and refused as before.

``in_place_sums(tree, globals_)``: in a generated module (one defining
s2s-ad's own helpers), an adjoint array written by index (``dy[i] = 0.0``)
and summed into by rebinding (``dy = dy + c``, written out of place so that
another library's adjoint can be added to a NumPy one) is summed in place
(``dy += c``): the values are the same where nothing else refers to ``dy``'s
array, which the lowering then checks (an array written by index must be
bound once; ``+=`` on a name is checked for aliases), located where not. A
last alias at the top level (``da = dy``, nothing naming ``dy`` after it but
the ``return`` and reads whose arithmetic makes a new array, ``dm =
-unbroadcast(dy, m)``, and nothing writing into ``da`` in place after it) is
``da = np.copy(dy)``: the same values, as nothing writes into either array
any more.

``added_sums(tree, globals_)``: a call ``added_into(c, x, index, g)`` (a
read by index's adjoint added into an array the sweep made,
:mod:`s2s_ad.reverse.scatters`) is the sum ``c + scatter(g, x, index)``,
which the rewrite above then takes.

``plain_zeros(tree, globals_)``: a call ``float_zeros(x)`` to the helper a
generated NumPy gradient defines (by its exact text) is written
``np.zeros_like(x) + 0.0``, the same values and dtype (the helper is that sum
in one NumPy call), which the rest of the frontend knows as a new array it
may write into, of ``x``'s shape: a constant, no adjoint.

Before → after::

    dy = float_zeros(y)                             dy = np.zeros_like(y) + 0.0
    dends = scatter(dt4, ends, slice(None, -1))     dends = np.zeros_like(ends)
                                                    dends[:-1] = dt4
    add_scattered(dends, slice(1, None), dt3)       dends[1:] += dt3
    dg = joined(g, (dt4, dt6), (b,))                dg = np.zeros_like(g)
                                                    dg[:b] = dt4
                                                    dg[b:] = dt6
    dy = dy + dt7 * a       (dy[i] = 0.0 elsewhere) dy += dt7 * a
"""

from __future__ import annotations

import ast
import copy

from s2s_ad.frontend import own_helpers
from s2s_ad.names import Namer
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["added_sums", "in_place_sums", "plain_zeros", "rewrite"]


def rewrite(tree: ast.FunctionDef, globals_: dict, namer: Namer) -> None:
    """Rewrite ``tree``'s calls to ``scatter`` and ``add_scattered`` (see the module)."""
    alias = own_helpers.numpy_alias(globals_)
    if alias is None:
        return
    helpers = {"scatter": set(), "add_scattered": set(), "joined": set()}
    for node in walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            for base, names in helpers.items():
                if node.func.id.startswith(base) and node.func.id not in names \
                        and own_helpers.is_helper(globals_.get(node.func.id), base):
                    names.add(node.func.id)
    if not any(helpers.values()):
        return
    slice_shadowed = "slice" in globals_ or "slice" in _assigned(tree)
    _Rewrite(alias, helpers, namer, slice_shadowed).block(tree.body)


def plain_zeros(tree: ast.FunctionDef, globals_: dict) -> None:
    """Rewrite ``tree``'s calls to ``float_zeros(x)`` (see the module)."""
    alias = own_helpers.numpy_alias(globals_)
    if alias is None:
        return

    def zeros(item: ast.Call) -> ast.expr:
        made = ast.Call(ast.Attribute(ast.Name(alias, ast.Load()), "zeros_like", ast.Load()),
                        item.args, [])
        return ast.BinOp(ast.copy_location(made, item), ast.Add(),
                         ast.copy_location(ast.Constant(0.0), item))

    _calls_as(tree, globals_, "float_zeros", 1, zeros)


def added_sums(tree: ast.FunctionDef, globals_: dict) -> None:
    """Rewrite ``tree``'s calls to ``added_into(c, x, index, g)`` as the sum
    they compute, ``c + scatter(g, x, index)`` (see the module)."""
    scatter = next((k for k, v in globals_.items() if own_helpers.is_helper(v, "scatter")), None)
    if scatter is None:
        return

    def summed(item: ast.Call) -> ast.expr:
        c, x, index, g = item.args
        call = ast.Call(ast.Name(scatter, ast.Load()), [g, x, index], [])
        return ast.BinOp(c, ast.Add(), ast.copy_location(call, item))

    _calls_as(tree, globals_, "added_into", 4, summed)


def _calls_as(tree: ast.FunctionDef, globals_: dict, base: str, n: int, make) -> None:
    """Each call in ``tree`` to the generated module's helper ``base`` (known
    by its exact text) with ``n`` positional arguments replaced by
    ``make(call)``."""
    for node in walk(tree):
        for field, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for k, item in enumerate(items):
                if not (isinstance(item, ast.Call) and isinstance(item.func, ast.Name)
                        and item.func.id.startswith(base) and len(item.args) == n
                        and not item.keywords
                        and not any(isinstance(a, ast.Starred) for a in item.args)
                        and own_helpers.is_helper(globals_.get(item.func.id), base)):
                    continue
                new = ast.copy_location(make(item), item)
                ast.fix_missing_locations(new)
                if isinstance(value, list):
                    value[k] = new
                else:
                    setattr(node, field, new)


def in_place_sums(tree: ast.FunctionDef, globals_: dict) -> None:
    """``dy = dy + c`` as ``dy += c`` for adjoint arrays written by index (see the module)."""
    if not own_helpers.generated_module(globals_):
        return
    indexed = own_helpers.indexed_names(tree)
    first = {}
    summed: set[str] = set()
    for stmt in tree.body:  # each name's first binding stays a binding
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            first.setdefault(stmt.targets[0].id, stmt)
    for n in walk(tree):
        for field in ("body", "orelse"):
            block = getattr(n, field, None)
            if not isinstance(block, list):
                continue
            for k, stmt in enumerate(block):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], ast.Name) \
                        and stmt.targets[0].id in indexed and first.get(stmt.targets[0].id) \
                        is not stmt and isinstance(stmt.value, ast.BinOp) \
                        and isinstance(stmt.value.op, (ast.Add, ast.Sub)) \
                        and isinstance(stmt.value.left, ast.Name) \
                        and stmt.value.left.id == stmt.targets[0].id:
                    name = stmt.targets[0].id
                    block[k] = _at(ast.AugAssign(ast.Name(name, ast.Store()), stmt.value.op,
                                                 stmt.value.right), stmt)
                    summed.add(name)
    _copied_aliases(tree, globals_, summed)


def _copied_aliases(tree: ast.FunctionDef, globals_: dict, summed: set) -> None:
    """``da = dy`` at the top level, ``dy`` summed in place and, after the
    statement, named only by a ``return`` or read into a new value by
    arithmetic (``-unbroadcast(dy, m)``: ``unbroadcast`` may return ``dy``
    itself, which the negation copies), and ``da`` not written in place after
    it: ``da = np.copy(dy)``, the same values (nothing writes into either
    array any more), so ``dy`` owns its array, as its in-place sums need."""
    alias = own_helpers.numpy_alias(globals_)
    if alias is None or not summed:
        return
    body = tree.body
    parents = syntax_walk.parents(tree)
    for k, stmt in enumerate(body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Name)
                and stmt.value.id in summed):
            continue
        name = stmt.value.id
        if any(_aliasing_use(n, parents, globals_, name)
               for later in body[k + 1:] if not isinstance(later, ast.Return)
               for n in walk(later)) \
                or _written_in_place(body[k + 1:], stmt.targets[0].id):
            continue
        call = ast.Call(ast.Attribute(ast.Name(alias, ast.Load()), "copy", ast.Load()),
                        [stmt.value], [])
        stmt.value = ast.copy_location(call, stmt.value)
        ast.fix_missing_locations(stmt)


def _aliasing_use(n: ast.AST, parents: dict, globals_: dict, name: str) -> bool:
    """Is ``n`` a use of ``name`` that may keep its array (anything but a
    read whose value arithmetic makes new, through s2s-ad's ``unbroadcast``
    or ``astype_like``, which may return it)?"""
    if not (isinstance(n, ast.Name) and n.id == name):
        return False
    node, parent = n, parents.get(id(n))
    while isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
            and parent.args and parent.args[0] is node \
            and own_helpers.returns_argument(globals_.get(parent.func.id)):
        node, parent = parent, parents.get(id(parent))
    return not (isinstance(n.ctx, ast.Load) and isinstance(parent, (ast.BinOp, ast.UnaryOp)))


def _written_in_place(stmts: list, name: str) -> bool:
    """Do ``stmts`` write into ``name``'s array (``name += v``, ``name[i] = v``)?"""
    return any(isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
               and n.target.id == name or isinstance(n, ast.Subscript)
               and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
               and n.value.id == name for s in stmts for n in walk(s))


def _assigned(tree: ast.AST) -> set[str]:
    return {n.id for n in walk(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} \
        | {a.arg for n in walk(tree) if isinstance(n, ast.arguments)
           for a in n.posonlyargs + n.args + n.kwonlyargs}


class _Rewrite:
    def __init__(self, alias: str, helpers: dict, namer: Namer, slice_shadowed: bool):
        self.alias = alias
        self.scatter = helpers["scatter"]
        self.add_scattered = helpers["add_scattered"]
        self.joined = helpers["joined"]
        self.namer = namer
        self.slice_shadowed = slice_shadowed

    def block(self, body: list) -> None:
        out = []
        for stmt in body:
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and not isinstance(stmt, ast.FunctionDef):
                    self.block(inner)
            out.extend(self.statement(stmt))
        body[:] = out

    def statement(self, stmt: ast.stmt) -> list:
        if isinstance(stmt, ast.Expr) and self._call_of(stmt.value, self.add_scattered):
            y, index, g = stmt.value.args
            sub = self._subscript(y, index) if own_helpers.written_index(index) else None
            if sub is not None:
                return [_at(ast.AugAssign(sub, ast.Add(), g), stmt)]
            return [stmt]
        if not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)) \
                or stmt.value is None:
            return [stmt]
        before: list = []
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            else None
        if isinstance(target, ast.Name) and self._call_of(stmt.value, self.scatter):
            # ``t = scatter(g, x, i)``: t itself is the array of zeros, unless
            # the call reads t (then a fresh name, below)
            made = self._made(stmt.value, target.id, stmt)
            if made is not None:
                return made
        if isinstance(target, ast.Name) and self._call_of(stmt.value, self.joined):
            made = self._joined(stmt.value, target.id, stmt)
            if made is not None:
                return made
        stmt.value = self._hoist(stmt.value, before, stmt)
        return before + [stmt]

    def _hoist(self, e: ast.expr, before: list, stmt: ast.stmt) -> ast.expr:
        if isinstance(e, ast.Lambda):
            return e  # evaluated later, maybe never: left alone
        if isinstance(e, (ast.IfExp, ast.BoolOp)):
            return e  # evaluated in part: left alone
        for field, value in ast.iter_fields(e):
            if isinstance(value, ast.expr):
                setattr(e, field, self._hoist(value, before, stmt))
            elif isinstance(value, list):
                setattr(e, field, [self._hoist(v, before, stmt) if isinstance(v, ast.expr) else v
                                   for v in value])
        if self._call_of(e, self.scatter):
            name = self.namer.fresh("scattered")
            made = self._made(e, name, stmt)
            if made is not None:
                before.extend(made)
                return ast.copy_location(ast.Name(name, ast.Load()), e)
        return e

    def _made(self, call: ast.Call, name: str, stmt: ast.stmt) -> list | None:
        g, x, index = call.args
        if any(isinstance(n, ast.Name) and n.id == name for n in walk(call)) \
                or not own_helpers.written_index(index):
            return None
        sub = self._subscript(ast.Name(name, ast.Load()), index)
        if sub is None:
            return None
        zeros = ast.Call(ast.Attribute(ast.Name(self.alias, ast.Load()), "zeros_like", ast.Load()),
                         [x], [])
        return [_at(ast.Assign([ast.Name(name, ast.Store())], zeros), stmt),
                _at(ast.Assign([sub], g), stmt)]

    def _joined(self, call: ast.Call, name: str, stmt: ast.stmt) -> list | None:
        """``name = joined(x, parts, cuts)`` as zeros and an assignment per
        slice, where ``parts`` and ``cuts`` are tuples written out (one cut
        fewer than parts) and the call does not read ``name``."""
        x, parts, cuts = call.args
        if not (isinstance(parts, ast.Tuple) and isinstance(cuts, ast.Tuple)
                and len(parts.elts) == len(cuts.elts) + 1
                and not any(isinstance(e, ast.Starred) for e in parts.elts + cuts.elts)) \
                or any(isinstance(n, ast.Name) and n.id == name for n in walk(call)):
            return None
        zeros = ast.Call(ast.Attribute(ast.Name(self.alias, ast.Load()), "zeros_like", ast.Load()),
                         [x], [])
        out = [_at(ast.Assign([ast.Name(name, ast.Store())], zeros), stmt)]
        bounds = [None] + list(cuts.elts) + [None]
        for k, part in enumerate(parts.elts):
            sub = ast.Subscript(ast.Name(name, ast.Load()),
                                ast.Slice(copy.deepcopy(bounds[k]), copy.deepcopy(bounds[k + 1])),
                                ast.Store())
            out.append(_at(ast.Assign([sub], part), stmt))
        return out

    def _call_of(self, e, names: set) -> bool:
        return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in names \
            and len(e.args) == 3 and not e.keywords \
            and not any(isinstance(a, ast.Starred) for a in e.args)

    def _subscript(self, base: ast.expr, index: ast.expr) -> ast.Subscript | None:
        """``base[index]`` as a store target, ``slice(...)`` written ``a:b:c``;
        None where the index is not of a shape s2s-ad writes."""
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        out = []
        for item in items:
            if isinstance(item, (ast.Tuple, ast.Starred)):
                return None
            if isinstance(item, ast.Call) and isinstance(item.func, ast.Name) \
                    and item.func.id == "slice":
                if self.slice_shadowed or item.keywords or not 1 <= len(item.args) <= 3 \
                        or any(isinstance(a, ast.Starred) for a in item.args):
                    return None
                parts = [None if isinstance(a, ast.Constant) and a.value is None else a
                         for a in item.args]
                if len(parts) == 1:
                    parts = [None, parts[0]]
                parts += [None] * (3 - len(parts))
                out.append(ast.Slice(*parts))
            else:
                out.append(item)
        slice_ = out[0] if not isinstance(index, ast.Tuple) else ast.Tuple(out, ast.Load())
        return ast.Subscript(base, slice_, ast.Store())


def _at(new: ast.stmt, old: ast.stmt) -> ast.stmt:
    return ast.fix_missing_locations(ast.copy_location(new, old))
