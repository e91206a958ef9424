"""Frontend: ``jax.vmap(f)(a, b)`` as one body over arrays with a batch axis
(a batching transform, as JAX's batching rules); part of
:mod:`s2s_ad.frontend.jax_loops`.

Contract: :func:`vectorise` appends to ``pre`` the statements of ``f``'s body
rewritten to compute every row at once, and returns the expression of the
stacked result (a tuple of them where ``f`` returns a tuple written out); it
returns None, appending nothing, where some operation of the body has no
batching rule here, and the caller keeps the loop over rows
(:meth:`LoopForms.vmap`). The rewrite is done on the AST, before lowering:
the frontend lowers the result as any NumPy code, so the gradient, forward
mode and every position (helpers, loops, ``vjp``, ``grad -o``) come with it.

**The batch axis is the last one.** A value that depends on a mapped
argument ("batched") is kept with shape ``row shape + (B,)``. Ranks are not
known when the code is read (the generated code serves arrays of any rank),
and NumPy's broadcasting aligns trailing axes: with the batch axis last, two
batched values of different row ranks broadcast row against row and batch
against batch, and an unbatched operand needs exactly one trailing axis
(``np.expand_dims(u, -1)``) whatever its rank. With the batch axis in front
each combination would need ``(1,) * k`` axes, ``k`` from ranks nobody knows
here. Indexing keeps its meaning (``x[i]`` selects along the row's first
axis), as does ``len``. A mapped argument is moved in once,
``np.moveaxis(a, 0, -1)``; each result moved back, ``np.moveaxis(r, -1, 0)``.

The rules (anything that reads no batched value is left as written and
computed once; anything else not listed keeps the loop; those of functions
taking an axis or building arrays are in :mod:`s2s_ad.frontend.jax_batch_rules`):

* arithmetic ``+ - * / ** % //``, unary ``-``/``+``, one comparison, ``abs``,
  every NumPy ufunc (``exp``, ``sign``, ``maximum``, ``logaddexp``, SciPy's
  ``gammaln``/``expit``/``erf``, ...), ``where``, ``clip``: the same
  operation, unbatched operands other than number literals given a trailing
  axis;
* ``sum``, ``mean``, ``prod``, ``max``, ``min``, ``amax``, ``amin``,
  ``var``, ``std``, ``logsumexp`` (functions or methods): ``axis=k`` stays
  ``k`` for ``k >= 0`` and becomes ``k - 1`` for ``k < 0``; ``axis=None``
  reduces ``np.reshape(x, (-1, B))`` over axis 0 (``keepdims=True`` with it
  keeps the loop);
* ``cumsum``, ``cumprod``: the same axes; ``axis=None`` (NumPy flattens the
  row) on ``np.reshape(x, (-1, B))`` along axis 0;
* ``roll(x, shift, axis)``: the same axes; without an axis, the roll of
  ``np.reshape(x, (-1, B))`` along axis 0, reshaped back;
* ``full(shape, v)``, ``v`` batched: ``np.expand_dims(np.zeros(shape), -1) +
  v``; ``zeros_like``, ``ones_like``, ``copy`` of a batched array: the same;
* ``einsum`` with written-out output subscripts (no ``...``): a letter the
  subscripts do not use added to each batched operand's and to the output;
* ``x[idx]`` of a batched ``x`` (an index that reads no batched value and has
  no ``...``): unchanged, after a check where the code runs that the row has
  the axes the index reads (``x[0]`` of a 0-d row would pick a row; JAX
  raises ``IndexError``: so does the check, naming the line; ``len(x)``:
  ``TypeError``); ``x.shape``: ``np.shape(x)[:-1]``; ``x.ndim``:
  ``np.ndim(x) - 1``;
* ``t[idx] = v`` and ``t[idx] op= v`` (what ``.at[idx].set(v)`` becomes):
  ``v`` given a trailing axis when unbatched; an unbatched ``t`` written
  with a batched ``v`` is made batched first (``np.expand_dims(t, -1) +
  np.zeros(B)``);
* ``x[k]`` (``x[k, 0]``, ``x[k, 1:3]``), ``x`` unbatched and ``k`` an
  integer of each row: ``np.moveaxis(x[np.moveaxis(k, -1, 0)], 0, -1)``;
* ``cross``, ``dot``, ``@``/``matmul`` (:meth:`OperationRules.crossed`,
  ``dotted``, ``matmul``);
* a call of a function of yours (a nested ``def``, a lambda, a function of
  the same module and file) with a batched argument: its body batched where
  it is called (assignments, ``a, b = h(x)`` of a function returning a
  tuple written out, subscript writes, ``if`` statements
  (:mod:`s2s_ad.frontend.jax_batch_branches`), ``return`` at the end), to a
  depth of 8.

Kept as a loop: ``in_axes`` other than 0/None per argument (refused already
by the caller), a slice bound that reads a batched value,
``...`` in an index, loops, nested functions and comprehensions in the
body, tuples other than the returned one, any other function or method.

Before → after (``B`` the number of rows)::

    def f(i):                           f_i = np.moveaxis(i_vals, 0, -1)
        t = -1.0 + 2.0 * i / (n - 1.0)  t = -1.0 + 2.0 * f_i / np.expand_dims(n - 1.0, -1)
        p = jnp.full(m, t)        ──▶   p = np.expand_dims(np.zeros(m), -1) + t
        p[0] = 1.0                      p[0] = 1.0
        return jnp.sum(x * p)           rows = np.moveaxis(np.sum(np.reshape(
    r = jax.vmap(f)(i_vals)                 np.expand_dims(x, -1) * p, (-1, B)), axis=0), -1, 0)
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import types

import numpy

from s2s_ad.errors import SourceError
from s2s_ad.frontend.jax_batch_rules import (ARITHMETIC, COMPARISONS, CUMULATIVE,
                                             ELEMENTWISE_FNS, REDUCE_FNS, REDUCTIONS,
                                             SAME_SHAPE, NoRule as _NoRule, OperationRules,
                                             described, int_value, is_items, logsumexp)
from s2s_ad.frontend import runtime_checks
from s2s_ad.frontend.jax_batch_branches import BranchRules, root
from s2s_ad.frontend.source import locate
from s2s_ad.syntax_walk import walk

CREATES = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "eye",
           "identity", "array", "copy", "empty", "empty_like"}
"""NumPy functions whose result is a new array (``.at[...]`` writes into it)."""
DEPTH = 8
"""How deep calls of your functions are batched inside a mapped body."""


def vectorise(forms, fn, args: list, axes: list, node, pre: list):
    """The stacked result of ``jax.vmap(fn)(*args)`` computed by one body over
    all rows (statements appended to ``pre``), or None (nothing appended)
    where the body has an operation without a batching rule. ``args`` are
    names (or constants), ``axes`` 0 or None per argument."""
    batch = _Batch(forms, node, args, axes)
    try:
        result = batch.top(fn)
    except (_NoRule, SourceError, OSError, TypeError):
        return None
    pre += batch.out
    return result


class _Batch(OperationRules, BranchRules):
    ROW = "row of the vmap's mapped array"
    """What a row is, in the message of a failed rank check."""
    RAISES = "JAX raises"
    def __init__(self, forms, node, args, axes):
        self.forms, self.node, self.args, self.axes = forms, node, args, axes
        self.out: list = []
        self.env: dict = {}
        self.size = None
        self.here = node
        self.views: set = set()
        """Names of the mapped arguments (moved views of the caller's arrays) and of parts of them."""
        self.made: set = set()
        """Names of arrays the body made (``np.copy``, ``np.zeros``, ...): writable."""
        """The user's statement being rewritten (the position of what it becomes)."""
        self.depth = 0
        self.lse = logsumexp()
        self.sealed: set = set()
        """Names of arrays no write may change here (made before an ``if``
        whose arms both run: :mod:`s2s_ad.frontend.jax_batch_branches`)."""
        self.checked: set = set()
        """(name, count) of the rows checked to have that many axes."""

    # -- helpers ------------------------------------------------------------------

    def np(self, attr: str) -> ast.expr:
        return ast.Attribute(ast.Name(self.forms.numpy_name(), ast.Load()), attr, ast.Load())

    def call(self, attr: str, *args, **kw) -> ast.Call:
        return ast.Call(self.np(attr), list(args), [ast.keyword(k, v) for k, v in kw.items()])

    def assign(self, base: str, value) -> ast.Name:
        name = self.forms.fresh(base)
        self.emit(ast.Assign([ast.Name(name, ast.Store())], value))
        return ast.Name(name, ast.Load())

    def emit(self, stmt) -> None:
        """``stmt``, at the position of the user's statement it computes."""
        self.out.append(ast.fix_missing_locations(located(stmt, self.here)))

    def named(self, e, base: str):
        """``e`` as a name (computed once), to be read more than once."""
        return e if isinstance(e, ast.Name) else self.assign(base, e)

    def count(self) -> ast.expr:
        """``B``, the number of rows, named once."""
        if self.size is None:
            mapped = self.args[self.axes.index(0)]
            name = self.forms.fresh("rows_n")
            self.out.insert(0, ast.fix_missing_locations(located(ast.Assign(
                [ast.Name(name, ast.Store())], ast.Subscript(self.call(
                    "shape", copy.deepcopy(mapped)), ast.Constant(0), ast.Load())), self.node)))
            self.size = name
        return ast.Name(self.size, ast.Load())

    def flat(self, x) -> ast.Call:
        """``np.reshape(x, (-1, np.shape(x)[-1]))``: the row's axes as one."""
        last = ast.Subscript(self.call("shape", copy.deepcopy(x)),
                             ast.UnaryOp(ast.USub(), ast.Constant(1)), ast.Load())
        return self.call("reshape", x, ast.Tuple([ast.UnaryOp(ast.USub(), ast.Constant(1)),
                                                  last], ast.Load()))

    def trailing(self, e) -> ast.expr:
        """An unbatched operand given a trailing axis of length 1 (none for a
        number literal, which broadcasts as it is)."""
        if _literal(e):
            return e
        return self.call("expand_dims", e, ast.UnaryOp(ast.USub(), ast.Constant(1)))

    def reads_batched(self, node) -> bool:
        return any(isinstance(n, ast.Name) and n.id in self.env and self.env[n.id][1]
                   for n in walk(node))

    def verbatim(self, node):
        """``node`` as written, the mapped function's names renamed."""
        for n in walk(node):
            if isinstance(n, (ast.Lambda, ast.comprehension, ast.NamedExpr)):
                raise _NoRule
        node = copy.deepcopy(node)
        for n in walk(node):
            if isinstance(n, ast.Name) and n.id in self.env:
                n.id = self.env[n.id][0]
                if n.id is None:  # made by one arm of an `if` only
                    raise _NoRule
        return node

    # -- the mapped function ------------------------------------------------------------

    def top(self, fn):
        params = []
        for a, ax in zip(self.args, self.axes):
            if ax is None:
                params.append((a, False))
                continue
            if not isinstance(a, ast.Name):
                raise _NoRule
            moved = self.assign(f"{a.id}_b", self.rows_last(copy.deepcopy(a)))
            self.views.add(moved.id)
            params.append((moved, True))
        result = self.apply(fn, params)
        return self.back(result)

    def back(self, result):
        """The stacked rows of ``result`` (a tuple's items one by one)."""
        if is_items(result):
            return ast.Tuple([self.back(r) for r in result], ast.Load())
        e, batched = result
        if not batched:  # every row the same value
            e = ast.BinOp(self.trailing(e), ast.Add(), self.call("zeros", self.count()))
        elif root(e) in self.views:  # rows of an argument: a new array, as the loop's
            e = self.call("copy", e)
        return self.assign("rows", self.rows_first(e))

    def apply(self, fn, params: list):
        """``fn`` called with ``params`` (pairs of an expression and whether
        it is batched): its body batched here; a pair, or a tuple of them."""
        if isinstance(fn, ast.Lambda):
            names = self.signature(fn.args, len(params))
            return self.inlined(names, params, [ast.copy_location(ast.Return(fn.body), fn.body)])
        if isinstance(fn, ast.Name):
            definition = self.definition(fn)
            if definition is not None:
                names = self.signature(definition.args, len(params))
                return self.inlined(names, params, definition.body)
        saved, self.env = self.env, {}
        try:
            names = []
            for e, batched in params:
                held = e if isinstance(e, ast.Name) else self.assign("arg", e)
                names.append(ast.Name(held.id, ast.Load()))
                self.env[held.id] = (held.id, batched)
            return self.expr(ast.Call(fn, names, []))
        finally:
            self.env = saved

    def definition(self, fn: ast.Name):
        """The ``def`` a name calls: a nested function of the function being
        rewritten (in its own scope), or a function of the same module and
        file; None for anything else."""
        forms = self.forms
        defs = [d for d in walk(forms.src.tree)
                if isinstance(d, ast.FunctionDef) and d.name == fn.id]
        scope = getattr(forms, "current", None)
        if defs or fn.id in forms.locals:
            if scope is None or len(defs) != 1 or not _in_scope(scope, defs[0]) \
                    or defs[0].decorator_list or defs[0] is forms.src.tree:
                raise _NoRule
            return defs[0]
        obj = forms.src.globals.get(fn.id)
        home = getattr(forms.src.fn, "__globals__", None)
        if not isinstance(obj, types.FunctionType) or obj.__globals__ is not home \
                or obj.__code__.co_freevars:
            return None
        if inspect.getsourcefile(obj) != inspect.getsourcefile(forms.src.fn):
            raise _NoRule
        tree = locate(obj).tree
        if tree.decorator_list or any(_jax_form(n) for n in walk(tree)):
            raise _NoRule  # JAX forms of another function are not rewritten here
        bound = {a.arg for a in walk(tree.args) if isinstance(a, ast.arg)} | {
            n.id for n in walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        free = {n.id for n in walk(tree) if isinstance(n, ast.Name)} - bound
        if free & forms.locals:
            raise _NoRule  # a global it reads is a local name here
        return tree

    def creates(self, value) -> bool:
        """Whether ``value`` calls a NumPy function that makes a new array."""
        if not isinstance(value, ast.Call) or self.reads_batched(value.func):
            return False
        obj = self.forms.resolve(value.func)
        name = getattr(obj, "__name__", None)
        return name in CREATES and getattr(numpy, name, None) is obj

    def signature(self, args: ast.arguments, count: int) -> list:
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg \
                or args.defaults or len(args.args) != count:
            raise _NoRule
        return [a.arg for a in args.args]

    def inlined(self, names: list, params: list, body: list):
        self.depth += 1
        if self.depth > DEPTH:
            raise _NoRule
        saved, self.env = self.env, {}
        try:
            for name, (e, batched) in zip(names, params):
                if isinstance(e, ast.Name):
                    self.env[name] = (e.id, batched)
                else:
                    self.env[name] = (self.assign(name, e).id, batched)
            stmts = [s for i, s in enumerate(body) if not (
                i == 0 and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            return self.body_result(stmts)
        finally:
            self.env = saved
            self.depth -= 1

    def returned(self, value):
        if isinstance(value, ast.Tuple):
            return tuple(self.returned(v) for v in value.elts)
        return self.expr(value)

    # -- statements -------------------------------------------------------------------

    def statement(self, s) -> None:
        here, self.here = self.here, s
        try:
            self.rewrite(s)
        finally:
            self.here = here

    def users_call(self, node: ast.Call, obj):
        """A call of a function of yours (``obj`` what its name resolves to),
        its body batched here: a pair, or a tuple of them; None for any other
        call."""
        func = node.func
        home = getattr(self.forms.src.fn, "__globals__", None)
        if not (isinstance(func, ast.Name) and (obj is None or isinstance(
                obj, types.FunctionType) and obj.__globals__ is home)):
            return None
        definition = self.definition(func)
        if definition is None or node.keywords:
            raise _NoRule
        params = [self.expr(a) for a in node.args]
        return self.apply(func, params)

    def unpacked(self, targets: list, value) -> None:
        """``a, b = h(x)`` (a function of yours returning a tuple written
        out) or ``a, b = e1, e2``: each name bound to its item."""
        if isinstance(value, ast.Tuple):
            result = self.returned(value)
        elif isinstance(value, ast.Call) and not self.reads_batched(value.func) \
                and not any(isinstance(a, ast.Starred) for a in value.args) \
                and not (isinstance(value.func, ast.Name) and value.func.id in self.env):
            result = self.users_call(value, self.callee(value.func))
        else:
            result = None
        if not (is_items(result) and len(result) == len(targets)) \
                or any(is_items(r) for r in result):
            raise _NoRule  # not a tuple of values, one per name
        for t, (e, batched) in zip(targets, result):
            name = self.assign(t.id, e).id
            self.env[t.id] = (name, batched)
            if root(e) in self.views:
                self.views.add(name)

    def rewrite(self, s) -> None:
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts):
                return self.unpacked(target.elts, s.value)
            if isinstance(target, ast.Name):
                e, batched = self.expr(s.value)
                name = self.assign(target.id, e).id
                self.env[target.id] = (name, batched)
                if root(e) in self.views:
                    self.views.add(name)  # another name for (part of) a mapped argument
                if self.creates(s.value):
                    self.made.add(name)
                return
            if isinstance(target, ast.Subscript):
                return self.write(target, None, s.value)
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Subscript):
            return self.write(s.target, s.op, s.value)
        if isinstance(s, ast.If):
            self.branch(s, returning=False)
            return
        raise _NoRule

    def write(self, target: ast.Subscript, op, value) -> None:
        """``t[idx] = v`` (``op=``), ``t`` one of the body's names."""
        t = target.value
        if not isinstance(t, ast.Name) or t.id not in self.env or self.reads_batched(target.slice) \
                or _ellipsis(target.slice):
            raise _NoRule
        v, v_batched = self.expr(value)
        name, t_batched = self.env[t.id]
        if name not in self.made:
            raise _NoRule  # a write into an array the body did not make (a row of an argument)
        if v_batched and not t_batched or name in self.sealed:
            # a row each (or, where both arms of an `if` run, a copy the other
            # arm does not see, its rows joined after the `if`)
            made = self.call("copy", ast.Name(name, ast.Load())) if t_batched else ast.BinOp(
                self.call("zeros", self.count()), ast.Add(),  # (zeros first: a new array, as
                self.trailing(ast.Name(name, ast.Load())))  # the frontend reads a write's array)
            name = self.assign(t.id, made).id
            self.env[t.id] = (name, True)
            self.made.add(name)
            t_batched = True
        if t_batched and not v_batched:
            v = self.trailing(v)
        if t_batched:
            self.enough_axes(ast.Name(name, ast.Load()), target, target.slice)
        index = self.verbatim(target.slice)
        place = ast.Subscript(ast.Name(name, ast.Load()), index, ast.Store())
        self.emit(ast.Assign([place], v) if op is None else ast.AugAssign(place, op, v))

    # -- expressions ------------------------------------------------------------------

    def expr(self, node):
        """``node`` over all rows: (expression, whether it is batched)."""
        if not self.reads_batched(node):
            return self.verbatim(node), False
        if isinstance(node, ast.Name):
            name, batched = self.env[node.id]
            if name is None:  # made by one arm of an `if` only
                raise _NoRule
            return ast.Name(name, ast.Load()), batched
        if isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC):
            (a, b), batched = self.elementwise([node.left, node.right])
            return ast.BinOp(a, node.op, b), batched
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return self.matmul(None, [node.left, node.right], node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            e, batched = self.expr(node.operand)
            return ast.UnaryOp(node.op, e), batched
        if isinstance(node, ast.Compare) and len(node.ops) == 1 \
                and isinstance(node.ops[0], COMPARISONS):
            (a, b), batched = self.elementwise([node.left, node.comparators[0]])
            return ast.Compare(a, node.ops, [b]), batched
        if isinstance(node, ast.Call):
            return self.called(node)
        if isinstance(node, ast.Subscript):
            if self.reads_batched(node.slice) and not self.reads_batched(node.value):
                return self.picked(node)
            if self.reads_batched(node.slice) or _ellipsis(node.slice):
                raise _NoRule
            e, batched = self.expr(node.value)
            if batched:
                e = self.enough_axes(e, node, node.slice)
            return ast.Subscript(e, self.verbatim(node.slice), ast.Load()), batched
        if isinstance(node, ast.Attribute):
            e, _ = self.expr(node.value)
            if node.attr == "shape":
                return ast.Subscript(self.call("shape", e), ast.Slice(
                    None, ast.UnaryOp(ast.USub(), ast.Constant(1))), ast.Load()), False
            if node.attr == "ndim":
                return ast.BinOp(self.call("ndim", e), ast.Sub(), ast.Constant(1)), False
        raise _NoRule

    def picked(self, node: ast.Subscript):
        """``x[k]`` (``x[k, 0]``, ``x[k, 1:3]``), ``x`` the same in every row
        and ``k`` an integer of each (``cams[obs[i, 0]]``): the rows ``x[k]``
        of all of them at once,
        ``np.moveaxis(x[np.moveaxis(k, -1, 0)], 0, -1)`` (the index's rows
        moved in front, where indexing puts them, and the result's back)."""
        first, *rest = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if isinstance(first, ast.Slice) or _ellipsis(node.slice) or any(
                self.reads_batched(r) or not (isinstance(r, ast.Slice) or int_value(r) is not None)
                for r in rest):
            raise _NoRule  # after the rows' index: int literals and slices (kept in place)
        k, _ = self.expr(first)
        self.index_rows(k)
        front = self.rows_first(k)
        if rest:
            front = ast.Tuple([front] + [self.verbatim(r) for r in rest], ast.Load())
        return self.rows_last(ast.Subscript(self.verbatim(node.value), front, ast.Load())), True

    def index_rows(self, k) -> None:
        """Raises :class:`NoRule` where ``k`` cannot index as each row's
        index would (here: never)."""

    def enough_axes(self, e, node, index=None):
        """``e`` (a batched value, named) after a check, where the code runs,
        that its row has the axes ``node`` reads: as many as ``index`` has
        items other than ``None`` (``node`` a subscript, read or written), or
        one (``node`` a call of ``len``). The batch axis is the last, so
        ``x[0]`` of a scalar row would pick a row, where JAX raises
        ``IndexError`` (``len``: ``TypeError``) for a 0-dimensional array."""
        if index is None:
            k, exc, jax_says = 1, "TypeError", "len() of unsized object"
        else:
            items = index.elts if isinstance(index, ast.Tuple) else [index]
            k = sum(not (isinstance(i, ast.Constant) and i.value is None
                         or isinstance(i, ast.Attribute) and i.attr == "newaxis") for i in items)
            exc, jax_says = "IndexError", "too many indices"
        if k == 0:
            return e
        e = self.named(e, "row")
        if (e.id, k) in self.checked:
            return e
        self.checked.add((e.id, k))
        what = f"with {k} ind{'ices' if k > 1 else 'ex'}" if index is not None else "by `len`"
        message = (f"{described(node)} reads a "
                   f"{self.ROW} {what}, but the row has fewer axes; {self.RAISES} {exc} here "
                   f"({jax_says})")
        self.emit(runtime_checks.rank_check(self.call("ndim", copy.deepcopy(e)), k, exc, message))
        return e

    def elementwise(self, operands: list):
        """Operands of one broadcasting operation: the unbatched ones given a
        trailing axis."""
        parts = [self.expr(o) for o in operands]
        if not any(batched for _, batched in parts):  # x.shape[0] > 2: the same in every row
            return [e for e, _ in parts], False
        return [e if batched else self.trailing(e) for e, batched in parts], True

    def callee(self, func):
        """The object a call's function names: a global, a module's
        attribute, or a builtin not shadowed by a local or a global (None
        for anything else)."""
        obj = self.forms.resolve(func)
        if obj is None and isinstance(func, ast.Name) and func.id not in self.forms.locals \
                and func.id not in self.forms.src.globals:
            obj = getattr(builtins, func.id, None)
        return obj

    def called(self, node: ast.Call):
        func = node.func
        if any(isinstance(a, ast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords):
            raise _NoRule
        if isinstance(func, ast.Attribute) and self.reads_batched(func.value):
            if func.attr in REDUCTIONS | CUMULATIVE:
                x, _ = self.expr(func.value)
                return self.reduced(func.attr, lambda x2: ast.Attribute(
                    x2, func.attr, ast.Load()), x, node.args, node.keywords, method=True)
            raise _NoRule
        if self.reads_batched(func):
            raise _NoRule
        if isinstance(func, ast.Lambda) or isinstance(func, ast.Name) and func.id in self.env:
            raise _NoRule
        obj = self.callee(func)
        result = self.users_call(node, obj)
        if result is not None:
            if is_items(result):
                raise _NoRule  # a tuple inside an expression
            return result
        if obj is None:
            raise _NoRule
        fn = self.verbatim(func)
        if isinstance(obj, numpy.ufunc) and obj.signature is None or obj is builtins.abs \
                or id(obj) in ELEMENTWISE_FNS:  # not np.matmul, a ufunc over core axes
            arity = obj.nin if isinstance(obj, numpy.ufunc) else (1 if obj is builtins.abs else 3)
            if node.keywords or len(node.args) != arity:
                raise _NoRule
            args, batched = self.elementwise(node.args)
            return ast.Call(fn, args, []), batched
        name = getattr(obj, "__name__", "")
        if id(obj) in REDUCE_FNS or obj is self.lse and self.lse is not None \
                or name in CUMULATIVE and obj is getattr(numpy, name):
            if not node.args:
                raise _NoRule
            x, batched = self.expr(node.args[0])
            if not batched:
                raise _NoRule
            return self.reduced(name, lambda x2: fn, x, node.args[1:], node.keywords,
                                method=False)
        if obj is numpy.roll:
            return self.rolled(fn, node)
        if obj is numpy.full:
            return self.full(node)
        if id(obj) in SAME_SHAPE:
            if len(node.args) != 1 or self.reads_batched(ast.Tuple(
                    [k.value for k in node.keywords], ast.Load())):
                raise _NoRule
            x, _ = self.expr(node.args[0])
            return ast.Call(fn, [x], [self.verbatim(k) for k in node.keywords]), True
        if obj is numpy.einsum:
            return self.einsum(fn, node)
        if obj is numpy.cross:
            return self.crossed(fn, node)
        if obj is numpy.dot:
            return self.dotted(fn, node)
        if obj is numpy.matmul and len(node.args) == 2 and not node.keywords:
            return self.matmul(fn, node.args, node)
        if obj is builtins.len and len(node.args) == 1 and not node.keywords:
            x, batched = self.expr(node.args[0])
            if batched:
                x = self.enough_axes(x, node)
            return ast.Call(fn, [x], []), False
        raise _NoRule


def _literal(e) -> bool:
    """A number written in the code (it broadcasts against any shape)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    return isinstance(e, ast.Constant) and (e.value is None or type(e.value) in (int, float, bool))


def _ellipsis(node) -> bool:
    return any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in walk(node))


def _jax_form(n) -> bool:
    """``.at[...]`` or a call of a call (``jax.vmap(f)(x)``): forms this
    module does not rewrite in another function's body."""
    return isinstance(n, ast.Attribute) and n.attr in ("at", "vmap", "scan", "fori_loop") \
        or isinstance(n, ast.Call) and isinstance(n.func, ast.Call)


def _in_scope(scope: ast.FunctionDef, definition: ast.FunctionDef) -> bool:
    """Whether ``definition`` is a statement of ``scope``'s own body (in its
    branches and loops, not inside a function nested in it)."""
    todo = list(scope.body)
    while todo:
        s = todo.pop()
        if s is definition:
            return True
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo += [c for c in ast.iter_child_nodes(s) if isinstance(c, ast.stmt)]
    return False


def located(stmt, node):
    """``stmt`` with every node that has no position yet at ``node``'s (the
    user's own expressions inside keep theirs)."""
    for n in walk(stmt):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            n.lineno, n.col_offset = node.lineno, node.col_offset
            n.end_lineno = getattr(node, "end_lineno", node.lineno)
            n.end_col_offset = getattr(node, "end_col_offset", node.col_offset)
    return stmt
