"""Frontend: ``if``/``else`` in a body the batching rewrite computes over all
rows at once (:mod:`s2s_ad.frontend.jax_batching`).

Contract: :class:`BranchRules` is mixed into the rewrite (which gives it
``expr``, ``statement``, ``returned``, ``emit``, ``assign``, ``call``,
``count``, ``trailing``, ``env``, ``out``). :meth:`BranchRules.branch`
rewrites one ``if`` statement of the body, its arms assigning names (the
names then read after it) or both ending in ``return``; it raises
:class:`NoRule` for anything else (a ``return`` inside an arm that does not
end it, a test other than one comparison), and the loop stays; so does a
read after the ``if`` of a name one arm makes and the other does not.

A test the same for every row is a Python ``if`` over the rewritten arms. A
test of each row (``sqtheta != 0.0``) is a mask of the rows, and::

    if sqtheta != 0.0:                  taken = np.reshape(sqtheta != 0.0, (B,))
        r = f(x)                        taken_n = np.sum(taken)
    else:                       ──▶     if taken_n == B:          # every row takes the first arm
        r = g(x)                            r = f(x)
                                        elif taken_n == 0:        # none does
                                            r = g(x)
                                        else:                     # some do: both arms, each
                                            k = np.argmax(taken)  # on rows that take it
                                            x_t = np.where(taken, x, x[..., k:k + 1])
                                            k = np.argmin(taken)
                                            x_f = np.where(taken, x[..., k:k + 1], x)
                                            r = np.where(taken, f(x_t), g(x_f))

In the last case each arm is computed on every row (so an arm that writes
into an array made before the ``if``, ``p[0] = 1.0``, writes into a copy of
its own, joined after the ``if`` as any name the arms assign: ``sealed``),
but a row that does not
take it holds the values of one that does (``x[..., k:k + 1]``, the first
such row): an arm never sees the values that its test rules out (a division
by the ``theta`` that ``theta != 0`` guards, a ``sqrt`` of a negative
number), so it raises nothing and makes no NaN, and the rows it computes for
nothing get no adjoint (``np.where`` sends them 0, and 0 times a finite
number is 0). Where all rows take one arm, only that arm is computed.

A value the arms give different shapes (an arm returning ``0.0``, the other
a vector) cannot be one array of rows where the rows take both: there
:meth:`BranchRules.mismatched` decides (a loop computed at once runs the
loop as written instead; ``jax.vmap`` raises ValueError naming the line).
"""

from __future__ import annotations

import ast
import copy

from s2s_ad.frontend.jax_batch_rules import COMPARISONS, NoRule, is_items
from s2s_ad.syntax_walk import walk


class BranchRules:
    """``if`` statements of a body batched over its rows."""

    def branch(self, s: ast.If, returning: bool):
        """Rewrites ``s``; returns the joined returned value where both arms
        end in ``return`` (``returning``), else None (the names the arms
        assign are joined in ``self.env``)."""
        self.count()  # B, named at the top of the body, before any arm
        for arm in (s.body, s.orelse):
            if returning and not arm or _returns_inside(arm, returning):
                raise NoRule
        test, batched = self.expr(s.test)
        if not batched:
            arms = [self.arm(s.body, returning), self.arm(s.orelse, returning)]
            blocks, result = self.joined(arms, None, s)
            self.emit(ast.If(test, blocks[0], blocks[1]))
            return result
        if not (isinstance(s.test, ast.Compare) and len(s.test.ops) == 1
                and isinstance(s.test.ops[0], COMPARISONS)):
            raise NoRule  # a mask of the rows from a comparison only (a truth value of each)
        taken = self.assign("taken", self.call("reshape", test, ast.Tuple(
            [self.count()], ast.Load())))
        n = self.assign("taken_n", self.call("sum", copy.deepcopy(taken)))
        arms = [self.arm(s.body, returning), self.arm(s.orelse, returning),
                self.arm(s.body, returning, (taken, True)),
                self.arm(s.orelse, returning, (taken, False))]
        blocks, result = self.joined(arms, taken, s)

        def count_is(value):
            return ast.Compare(copy.deepcopy(n), [ast.Eq()], [value])
        self.emit(ast.If(count_is(self.count()), blocks[0], [
            ast.If(count_is(ast.Constant(0)), blocks[1], blocks[2] + blocks[3] + blocks[4])]))
        return result

    def arm(self, stmts: list, returning: bool, rows=None):
        """One arm rewritten into a block of its own: (statements, names
        after it, returned value). ``rows`` (mask, arm): the rows that do not
        take this arm hold the values of the first that does."""
        saved = self.out, self.env, set(self.checked), self.sealed
        self.out, self.env = [], dict(self.env)
        if rows is not None:  # both arms run: neither writes into an array made before
            self.sealed = self.sealed | set(self.made) | {n for n, _ in self.env.values()}
        try:
            if rows is not None:
                self.substituted(stmts, *rows)
            result = self.body_result(stmts) if returning else None
            if not returning:
                for st in stmts:
                    self.statement(st)
            return self.out, self.env, result
        finally:
            self.out, self.env, self.checked, self.sealed = saved

    def substituted(self, stmts: list, taken: ast.Name, first: bool) -> None:
        """The arm's batched inputs, each row that does not take it replaced
        by the first row that does."""
        read = {n.id for st in stmts for n in walk(st)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        names = [u for u in sorted(read) if u in self.env and self.env[u][1]
                 and self.env[u][0] is not None]
        if not names:
            return
        k = self.assign("first_row", self.call("argmax" if first else "argmin",
                                               copy.deepcopy(taken)))
        for u in names:
            fresh, _ = self.env[u]
            v = ast.Name(fresh, ast.Load())
            row = ast.Subscript(copy.deepcopy(v), ast.Tuple(
                [ast.Constant(Ellipsis), ast.Slice(copy.deepcopy(k), ast.BinOp(
                    copy.deepcopy(k), ast.Add(), ast.Constant(1)))], ast.Load()), ast.Load())
            pair = [v, row] if first else [row, v]
            made = self.assign(u, self.call("where", copy.deepcopy(taken), *pair)).id
            self.env[u] = (made, True)
            if fresh in self.made:  # a new array: the arm's writes into it are its own
                self.made.add(made)

    def joined(self, arms: list, taken, s: ast.If):
        """The blocks of ``arms``, each ending with the joined names (and the
        returned value) assigned; the last block (rows taking both arms)
        selects them by ``taken``. Returns the blocks and the returned value."""
        before = self.env
        changed = []
        for _, env, _ in ([] if arms[0][2] is not None else arms):  # names after a return: none
            for u, v in env.items():
                if before.get(u) != v and u not in changed:
                    changed.append(u)
        for u in [u for u in changed if any(u not in env for _, env, _ in arms)]:
            changed.remove(u)  # a name one arm makes and the other does not:
            self.env[u] = (None, True)  # undefined after the `if` (a read keeps the loop)
        pairs = [(u, [(ast.Name(env[u][0], ast.Load()), env[u][1]) for _, env, _ in arms])
                 for u in changed]  # (the value's expression, whether it is batched) per arm
        results = [r for _, _, r in arms]
        returned = None
        if results[0] is not None:
            shapes = {_structure(r) for r in results}
            if len(shapes) != 1:
                raise NoRule  # a tuple from one arm, something else from the other
            flat = [_flatten(r) for r in results]
            pairs += [(None, [f[i] for f in flat]) for i in range(len(flat[0]))]
        blocks = [list(out) for out, _, _ in arms]
        if taken is not None:
            blocks.append([])  # rows taking both arms: the two mixed blocks, then the join
        joined = []
        for u, values in pairs:
            batched = taken is not None or any(b for _, b in values)
            name = self.forms.fresh(u or "branch_value")
            for block, (value, b) in zip(blocks[:2], values):  # the arms each rows take alone
                if batched and not b:
                    value = ast.BinOp(self.trailing(value), ast.Add(), self.call(
                        "zeros", self.count()))
                block.append(ast.Assign([ast.Name(name, ast.Store())], copy.deepcopy(value)))
            if any(root(e) in self.views for e, _ in values):
                self.views.add(name)  # (part of) a mapped argument in some arm
            if taken is not None:
                self.select(blocks[4], name, taken, values[2:], s)
            joined.append((name, batched))
            if u is not None:
                self.env[u] = (name, batched)
        if results[0] is not None:
            items = [(ast.Name(n, ast.Load()), b) for n, b in joined[len(changed):]]
            returned = _unflatten(results[0], items)
        return [b or [ast.Pass()] for b in blocks], returned

    def select(self, block: list, name: str, taken, values: list, s) -> None:
        """``name = np.where(taken, a, b)`` after a check that the rows of
        ``a`` and ``b`` have one shape."""
        parts = []
        for value, b in values:
            if not isinstance(value, ast.Name):  # read twice: by the check and by np.where
                held = self.forms.fresh("arm_value")
                block.append(ast.Assign([ast.Name(held, ast.Store())], value))
                value = ast.Name(held, ast.Load())
            parts.append((value, b))
        shapes = [ast.Subscript(self.call("shape", copy.deepcopy(v)), ast.Slice(
            None, ast.UnaryOp(ast.USub(), ast.Constant(1))), ast.Load()) if b
            else self.call("shape", copy.deepcopy(v)) for v, b in parts]
        operands = [v if b else self.trailing(v) for v, b in parts]
        differ = ast.Compare(shapes[0], [ast.NotEq()], [shapes[1]])
        block.append(ast.If(differ, self.mismatched(s) + [ast.Assign(
            [ast.Name(name, ast.Store())], self.call("where", copy.deepcopy(taken), operands[0],
                                                      copy.deepcopy(operands[0])))],
            [ast.Assign([ast.Name(name, ast.Store())], self.call(
                "where", copy.deepcopy(taken), *map(copy.deepcopy, operands)))]))

    def mismatched(self, s: ast.If) -> list:
        """The statements run where the arms of ``s`` give values of two
        shapes to rows taking each, which one array of rows cannot hold
        (the value is then the first arm's on every row): a ValueError
        naming the line (``jax.vmap``: JAX refuses such a branch too)."""
        message = (f"the arms of the `if` at line {s.lineno} give a value of different shapes "
                   "to different rows, which one array of the rows cannot hold")
        return [ast.Raise(ast.Call(ast.Name("ValueError", ast.Load()), [ast.Constant(message)],
                                   []), None)]

    def body_result(self, stmts: list):
        """The statements of a body ending in ``return`` (or in an ``if``
        whose arms both do), rewritten; its returned value."""
        stmts = closed(stmts)
        if not stmts:
            raise NoRule
        for st in stmts[:-1]:
            self.statement(st)
        last = stmts[-1]
        here, self.here = self.here, last
        try:
            if isinstance(last, ast.Return) and last.value is not None:
                return self.returned(last.value)
            if isinstance(last, ast.If):
                return self.branch(last, returning=True)
            raise NoRule
        finally:
            self.here = here


def closed(stmts: list) -> list:
    """``if c: ... return a`` then more statements, as ``if c: ... return a
    else: <the rest>`` (the same function), at every depth."""
    out = []
    for i, st in enumerate(stmts):
        if isinstance(st, ast.If) and i + 1 < len(stmts) and not st.orelse \
                and st.body and isinstance(st.body[-1], ast.Return):
            made = ast.If(st.test, st.body, closed(stmts[i + 1:]))
            out.append(ast.copy_location(made, st))
            return out
        out.append(st)
    return out


def _returns_inside(arm: list, returning: bool) -> bool:
    """Whether ``arm`` has a ``return`` other than where it ends (or any
    ``return``, for an arm that must not return)."""
    arm = closed(arm)
    for i, st in enumerate(arm):
        last = i == len(arm) - 1
        if returning and last and isinstance(st, ast.Return):
            continue
        if returning and last and isinstance(st, ast.If):
            if not st.orelse or _returns_inside(st.body, True) \
                    or _returns_inside(st.orelse, True):
                return True
            continue
        if any(isinstance(n, ast.Return) for n in walk(st)):
            return True
    if returning and not (arm and isinstance(arm[-1], (ast.Return, ast.If))):
        return True
    return False


def root(e):
    """The name a chain of subscripts reads from (None for anything else)."""
    while isinstance(e, ast.Subscript):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def _structure(result):
    return tuple(_structure(r) for r in result) if is_items(result) else "value"


def _flatten(result) -> list:
    return [x for r in result for x in _flatten(r)] if is_items(result) else [result]


def _unflatten(template, items: list):
    items = list(items)

    def take(t):
        return tuple(take(r) for r in t) if is_items(t) else items.pop(0)
    return take(template)
