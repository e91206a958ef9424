"""Lowering control flow: ``if``/``for``/``while``, ``break``/``continue``/
``return`` anywhere, ternaries, ``and``/``or``/``not``.

List parameters read at run-time indices: :mod:`s2s_ad.frontend.list_params`.

Contract: mixed into the frontend's lowering, these methods turn structured
Python control flow into the IR's structured ops (:class:`~s2s_ad.ir.If`,
:class:`~s2s_ad.ir.For`, :class:`~s2s_ad.ir.While`) with φ-results and no
jumps:

* a variable assigned in a branch becomes a result of the ``If`` (the other
  branch yields its earlier value); one assigned in a loop and defined
  before it becomes a carried value;
* ``return`` inside a branch or loop sets the flags ``ret`` and ``result``;
  ``break``/``continue`` set ``brk``/``cont``; the statements after one that
  may set a flag run under ``if not flag``, and a loop whose body may set
  ``brk`` or ``ret`` stops after that iteration (its body yields the flag);
* ``a and b`` keeps Python's short-circuit (``b`` is evaluated in a branch).

Before → after::

    for i in range(n):            r = for i in range(0, n, 1) carry (s=0.0) until exit
        if x * i > 2.0:              do:
            break                      t1 = mul x i
        s = s + x                      t2 = gt t1 2.0
                                       s_2 = if t2  then: yield s   else: s_1 = add s x; yield s_1
                                       yield s_2, t2
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.frontend import (array_kinds, conditions, dict_writes, guards, index_checks,
                             index_exprs, list_slices, loop_structures, own_helpers,
                             real_parts, runtime_lists, slice_values, statics, structures,
                             tuple_merges, unroll, write_dtypes)
from s2s_ad.frontend.checkpoint import checkpoint_blocks, checkpoint_pragma
from s2s_ad.frontend.iteration import Iteration, assigned_names
from s2s_ad.frontend.list_params import kind_of
from s2s_ad.syntax_walk import child_nodes, walk

RET, RETVAL, BRK, CONT = "<ret>", "<result>", "<brk>", "<cont>"
FLAG_NAMES = {RET: "ret", RETVAL: "result", BRK: "brk", CONT: "cont"}
_UNDEF = object()


def _jumps(stmts: list[ast.stmt], kind) -> bool:
    """Whether ``stmts`` contain a ``kind`` node (Break/Continue) belonging to
    the loop that holds them (not to a loop nested inside)."""
    def visit(node) -> bool:
        if isinstance(node, kind):
            return True
        if isinstance(node, (ast.For, ast.While)):
            return any(visit(n) for n in node.orelse)
        return any(visit(c) for c in child_nodes(node))
    return any(visit(s) for s in stmts)


def returns_in(stmts: list[ast.stmt]) -> bool:
    """Whether ``stmts`` hold a ``return`` of their own function (not one of
    a nested ``def``)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            stack.extend(child_nodes(node))
    return False


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Whether every path through ``stmts`` ends in ``return``."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return any(isinstance(s, ast.Return) for s in stmts)


def _same(a, b) -> bool:
    if a is b:
        return True
    return (isinstance(a, ir.Const) and isinstance(b, ir.Const) and type(a.value) is type(b.value)
            and a.value == b.value)


def _placeholders(lo, a, b) -> tuple:
    """``a`` and ``b``, a side that is a tape item's start before the branch
    that assigns it (:func:`s2s_ad.frontend.pairs.placeholder`: read only
    under that branch's decision) replaced by a stand-in of the other side's
    shape where that is a tuple (``np.shape(x)`` on a helper's tape)."""
    marked = lo.__dict__.get("placeholders", ())
    for k, (mine, other) in enumerate(((a, b), (b, a))):
        if id(mine) in marked and (isinstance(other, tuple) or structures.is_structure(other)):
            stand = tuple_merges.stand_in(other)
            if stand is not None:
                return (stand, b) if k == 0 else (a, stand)
    return a, b


def _placeholder_list(lo, a, b) -> tuple | None:
    """``(side, list)`` where one side of a φ is a list of any length (a
    helper's tape list that a call in that arm returned) and the other a tape
    item's start before the branch that assigns it
    (:func:`s2s_ad.frontend.pairs.placeholder`) or ``()``, the value s2s-ad's
    own code gives such a list on the side that does not make it: the φ takes
    an empty tuple on that side, as a name guarded in one arm does
    (:mod:`s2s_ad.frontend.guards`; it reads as an empty list: no items, and
    no list method). Else None."""
    marked = lo.__dict__.get("placeholders", ())
    for side, (mine, other) in enumerate(((b, a), (a, b))):
        empty = id(mine) in marked or isinstance(mine, tuple) and not mine
        if empty and isinstance(other, ir.Value) and other.kind == "list" and (
                runtime_lists.is_grown(lo, other) or structures.is_runtime(lo, other)):
            return side, other
    return None


def _merge_kind(kinds: list[str]) -> str:
    kinds = set(kinds)
    if len(kinds) == 1:
        return kinds.pop()
    if "array" in kinds:  # NumPy code: a float may become an array (s = 0.0; s = s + x)
        return "array"
    if "float" in kinds:
        return "float"
    if kinds <= {"int", "bool"}:
        return "int"
    return "float"


class ControlFlow(Iteration):
    """Mixin for the frontend's ``_Lowering`` (which provides ``env``,
    ``ops``, ``namer``, ``src``, ``expr``, ``emit``, ``statement``)."""

    # -- statement lists with flags ---------------------------------------

    def block(self, stmts: list[ast.stmt]) -> None:
        """Lower ``stmts``; after one that may set a flag, the rest run
        under ``if not flag``."""
        stmts = checkpoint_blocks(self, stmts)
        for k, stmt in enumerate(stmts):
            rest = stmts[k + 1:]
            if isinstance(stmt, (ast.Return, ast.Break, ast.Continue)):
                if rest:
                    raise self.src.error(rest[0], "code after `return`/`break`/`continue` is "
                                         "never run; remove it")
                self.jump(stmt)
                return
            self.statement(stmt)
            if rest and self.may_jump(stmt):
                flag = self.flags_set(stmt)
                if isinstance(flag, ir.Const):
                    if flag.value:
                        return
                    continue
                self.branches(flag, lambda: None, lambda: self.block(rest), stmt, "", guard=True)
                return

    def jump(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Return):
            if self.loop_depth == 0 and not self.ret_mode:
                self.env[RETVAL] = self.return_value(stmt)
                return
            self.env[RETVAL] = self.return_value(stmt)
            self.env[RET] = ir.Const(True)
            return
        if self.loop_depth == 0:
            word = "break" if isinstance(stmt, ast.Break) else "continue"
            raise self.src.error(stmt, f"`{word}` outside a loop")
        self.env[BRK if isinstance(stmt, ast.Break) else CONT] = ir.Const(True)

    def may_jump(self, stmt: ast.stmt) -> bool:
        if self.ret_mode and returns_in([stmt]):
            return True
        return self.loop_depth > 0 and (_jumps([stmt], ast.Break) or _jumps([stmt], ast.Continue))

    def flags_set(self, node: ast.AST) -> ir.Operand:
        """``ret or brk or cont`` (those that exist), folded over constants."""
        flags = [self.env[f] for f in (RET, BRK, CONT) if f in self.env]
        return self.any_of(flags, node)

    def any_of(self, flags: list[ir.Operand], node: ast.AST) -> ir.Operand:
        live = [f for f in flags if not isinstance(f, ir.Const)]
        if any(isinstance(f, ir.Const) and f.value for f in flags):
            return ir.Const(True)
        if not live:
            return ir.Const(False)
        acc = live[0]
        for f in live[1:]:
            acc = self.emit("or", [acc, f], node, text="stop when a flag is set", hint="stop")
        return acc

    # -- if / ternary / and-or --------------------------------------------

    def if_stmt(self, node: ast.If) -> None:
        cond = self.condition(node.test, truthy=True)
        if isinstance(cond, ir.Const):
            self.block(node.body if cond.value else node.orelse)
            return
        runtime_lists.promote_for(self, node.body + node.orelse, node)
        text = f"if {ast.unparse(node.test)}"
        self.branches(cond, lambda: self.block(node.body), lambda: self.block(node.orelse), node, text)

    def condition(self, test: ast.expr, truthy: bool = False) -> ir.Operand:
        """The bool ``test`` stands for. With ``truthy`` (a test whose value
        is only ever tested: ``if``, ``while``, a conditional expression's
        test, ``not``, ``assert``) a number tests as Python tests it,
        ``x != 0``; ``and``/``or`` operands stay bools, since ``x and y``
        is one of its operands, not their truth."""
        cond = conditions.truth(self, test)  # `if xs:` on a list: not empty
        kind = kind_of(cond)
        if truthy and isinstance(cond, ir.Const) and not isinstance(cond.value, bool):
            return ir.Const(bool(cond.value))
        if truthy and kind in ("float", "int"):
            zero = ir.Const(0.0 if kind == "float" else 0)
            return self.emit("ne", [cond, zero], test, hint="cond")
        if truthy and kind == "array" and own_helpers.generated_module(self.src.globals):
            # s2s-ad's own module read back: a test it keeps on a tape (`cond =
            # cond_tape[i]`, a bool, read as a value of unknown kind), tested as
            # Python tests a bool
            return self.emit("np.all", [cond], test, hint="cond")
        if kind != "bool":
            raise self.src.error(test, "a condition must be a comparison (`x > 0`), `and`/`or`/"
                                 f"`not` of comparisons, or a bool; this one is {kind}")
        return cond

    def branches(self, cond: ir.Operand, then_fn, else_fn, node: ast.AST, text: str,
                 guard: bool = False, value: tuple | None = None):
        """Lower two branches and merge what they assign (φ).

        With ``value`` = ``(name, claim)`` the branches are the two arms of
        an expression: each of ``then_fn``/``else_fn`` returns the operand
        its arm computes, and the merged operand is returned (a result of
        the ``If`` named ``name``, claimed as the user's variable if
        ``claim``). The arm's operand is taken only once the arm is fully
        lowered, so arms may nest further conditional expressions and
        short-circuit operators, each with its own ``If``. Without
        ``value`` the ``If`` op is returned."""
        before = self.env
        before_guarded = self.guarded
        regions, envs, arms, guarded, regained = [], [], [], [], []
        shapes = _shapes(before)
        dicts, written = dict_writes.snapshot(before), []
        self.region_depth += 1
        self.region_starts.append(before)
        for k, fn in enumerate((then_fn, else_fn)):
            self.env = dict(before)
            self.guarded = dict(before_guarded)
            regained.append(guards.enter_arm(self, cond, k == 0))
            outer_ops, self.ops = self.ops, []
            arms.append(fn())
            self.unchanged(shapes, node, items=False)  # items replaced: dict_writes.merge
            written.append(dict_writes.arm_done(dicts))
            regions.append(ir.Region(self.ops))
            envs.append(self.env)
            guarded.append(self.guarded)
            self.ops = outer_ops
        self.region_depth -= 1
        self.region_starts.pop()
        self.env = dict(before)
        self.guarded = dict(before_guarded)
        outs = []

        def phi(a, b, name, var):
            if _same(a, b):
                return a
            a, b = _placeholders(self, a, b)
            if isinstance(a, slice_values.SliceObject) or isinstance(b, slice_values.SliceObject):
                raise self.src.error(node, f"`{var or name()}` is a slice object made in a "
                                     "branch; s2s-ad reads one made where it is read: write "
                                     "the slice in each arm (`x[0:n]`, `x[n:]`)")
            if structures.is_structure(a) or structures.is_structure(b):
                return tuple_merges.merge(self, a, b, var, node, phi, name)
            if _same(a, ir.Const(True)) and _same(b, ir.Const(False)):
                return cond  # true exactly when the first branch is taken
            if statics.static(a) or statics.static(b):
                # `is None` and `== "l2"` are decided while lowering: a value
                # that is None (a string) on one path only cannot be
                raise self.src.error(node, f"`{var or name()}` is "
                                     f"{(a if statics.static(a) else b).value!r} on one side "
                                     "of this branch and another value on the other; strings "
                                     "and None select code while it is generated, so they "
                                     "must not depend on the data: use a number or a bool "
                                     "flag instead")
            kind, mask = array_kinds.merged(self, _merge_kind([kind_of(a), kind_of(b)]), [a, b])
            out = ir.Value(name(), kind, var)
            if mask:
                self.masks.add(id(out))
            if kind == "list":
                if not runtime_lists.same_list(self, a, b):
                    raise self.src.error(node, f"`{var or name()}` is one of two lists, depending "
                                         "on the branch; s2s-ad follows one list grown at run "
                                         "time under a name: use one name for each list")
                runtime_lists.carried(self, out, a)
            if index_exprs.integers(self, a) and index_exprs.integers(self, b):
                self.int_arrays.add(id(out))
            write_dtypes.carried(self, out, a, b)
            outs.append(out)
            regions[0].yields.append(a)
            regions[1].yields.append(b)
            return out

        pending: list = []
        # where a list or dict differs between the arms, which names hold it
        # (tuple_merges.merge refuses to merge one another name holds)
        self.merge_envs = [before, *envs]
        # an arm ending in return/break/continue runs no code after the branch
        jumped = [any(_same(e.get(f), ir.Const(True)) for f in (RET, BRK, CONT)) for e in envs]
        for var in dict.fromkeys(list(envs[0]) + list(envs[1])):
            a, b = envs[0].get(var, _UNDEF), envs[1].get(var, _UNDEF)
            if (a is _UNDEF or b is _UNDEF) and not _same(a, b):
                self.env.pop(var, None)
                side = 0 if b is _UNDEF else 1
                if guards.regained(regained[side], var, (a, b)[side]):
                    continue  # read again, not assigned: guarded as before the `if`
                self.undefined[var] = (node, "it is assigned in only one branch of the `if`")
                if var not in FLAG_NAMES:
                    guards.keep(self, pending, var, cond, side, (a, b)[side], ())
                continue
            made = [structures.made_items(self, v) if isinstance(v, ir.Value) else None
                    for v in (a, b)]
            if made != [None, None] and var not in FLAG_NAMES and not _same(a, b) and all(
                    m is not None or isinstance(v, tuple) for m, v in zip(made, (a, b))):
                # `r = h(x)` in one arm (or before), a tuple written out in the other
                # (`r = (r[1], r[0])`, a loop's tuple carried item by item): the items
                a, b = (v if m is None else m for m, v in zip(made, (a, b)))
            if isinstance(a, ir.Value) and isinstance(b, ir.Value) and not _same(a, b) \
                    and "tuple" in (a.kind, b.kind) and var not in FLAG_NAMES:
                made = structures.made_items(self, a), structures.made_items(self, b)
                if None not in made and len(made[0]) == len(made[1]):
                    # `r = h(x)` before or in each arm, its items read where each call
                    # is: the tuple of the items' φs, as `a, b = h(x)` in each arm gives
                    self.env[var] = phi(made[0], made[1], lambda: self.namer.claim(var), var)
                    continue
                # the tuple a call returned, another in each arm: no φ carries it
                # (its reverse dropped the first call's backward), so it is not
                # read after the branch; its items are
                self.env.pop(var, None)
                self.undefined[var] = (node, "it holds the tuple a call returned, another "
                                       "one in each arm of the `if`; unpack it in each arm "
                                       "(`a, b = h(x)`) and read the items")
                continue
            made = _placeholder_list(self, a, b)
            if made is not None and var not in FLAG_NAMES:
                # a helper's tape list made in one arm only (a placeholder or `()` the other)
                side, inner = made
                out = ir.Value(self.namer.claim(var), "list", var)
                regions[side].yields.append(inner)
                regions[1 - side].yields.append(ir.Const(guards.PLACEHOLDERS["list"]))
                outs.append(out)
                runtime_lists.register(self, out, inner)
                self.env[var] = out
                continue
            if "list" in (kind_of(a), kind_of(b)) and not _same(a, b) and not (
                    runtime_lists.is_grown(self, a) and runtime_lists.is_grown(self, b)):
                raise self.src.error(node, f"`{var}` is " + ("a different list in each branch"
                                     if kind_of(a) == kind_of(b) else "a list in one branch only"))
            if var in FLAG_NAMES:
                self.env[var] = phi(a, b, lambda: self.namer.fresh(FLAG_NAMES[var]), None)
            elif jumped[0] != jumped[1] and (structures.is_structure(a)
                                             or structures.is_structure(b)) \
                    and not tuple_merges.same_shape(a, b) \
                    and tuple_merges.stand_in(b if jumped[0] else a) is not None:
                # read only where the other arm ran: the jumped arm's side stands in
                # (where the two sides can be merged they are: a loop's `break` or
                # `continue` arm keeps its value for the loop's next iteration or end)
                stand = tuple_merges.stand_in(b if jumped[0] else a)
                self.env[var] = phi(stand, b, lambda: self.namer.claim(var), var) \
                    if jumped[0] else phi(a, stand, lambda: self.namer.claim(var), var)
            else:
                self.env[var] = phi(a, b, lambda: self.namer.claim(var), var)
        dict_writes.merge(self, node, dicts, written, jumped, phi,
                          lambda: self.namer.fresh("item"))
        guards.nested(self, pending, cond, guarded, before_guarded, envs)
        merged = None
        if value is not None:
            name, claim = value
            if all(isinstance(arm, tuple) for arm in arms) and len(arms[0]) == len(arms[1]):
                # `lo, hi = (a, b) if a < b else (b, a)`: item by item
                merged = tuple_merges.merge(self, arms[0], arms[1], name, node, phi,
                                            lambda: self.namer.fresh(name))
            else:
                if any(isinstance(arm, tuple) or structures.is_structure(arm) for arm in arms):
                    raise self.src.error(node, "a conditional expression must give a number, "
                                         "an array or a bool in both arms, or tuples of one "
                                         "length, not a list, a dict or tuples of two lengths")
                merged = phi(arms[0], arms[1],
                             lambda: self.namer.claim(name) if claim else self.namer.fresh(name),
                             name if claim else None)
        if guard:
            text = text or "the rest runs unless `return`/`break`/`continue` ran"
        op = ir.If(cond, regions[0], regions[1], outs, self.loc(node), text)
        if outs or regions[0].ops or regions[1].ops:
            self.ops.append(op)  # a branch that only set a flag now folded away needs no op
            guards.commit(self, pending, op)
        return op if value is None else merged

    def if_expr(self, node: ast.IfExp, var: str | None, hint: str | None) -> ir.Operand:
        cond = self.condition(node.test, truthy=True)
        if isinstance(cond, ir.Const):
            return self.expr(node.body if cond.value else node.orelse)
        name = (var, True) if var is not None else (hint or "sel", False)
        result = self.branches(cond, lambda: self.expr(node.body), lambda: self.expr(node.orelse),
                               node, ast.unparse(node), value=name)
        if isinstance(result, ir.Value) and var is not None:
            self.env[var] = result
        return result

    def bool_op(self, node: ast.BoolOp, var: str | None) -> ir.Operand:
        """``a and b`` → ``b if a else False``; ``a or b`` → ``True if a else b``;
        ``a and b and c`` → ``(a and b) and c``: each operand after the first
        is lowered inside the branch that evaluates it, so it may hold its own
        conditional expressions and short-circuits."""
        own = index_checks.is_int(self, node, var) or real_parts.read_back(self, node, var)
        if own is not None:  # s2s-ad's own check, read back
            return own
        is_or = isinstance(node.op, ast.Or)
        acc = self.condition(node.values[0])
        for k, e in enumerate(node.values[1:], 1):
            if isinstance(acc, ir.Const):
                if bool(acc.value) == is_or:
                    return acc
                acc = self.condition(e)
                continue
            last = k == len(node.values) - 1
            name = (var, True) if var is not None and last else ("cond", False)

            def rhs(e=e):
                return self.condition(e)

            def short():
                return ir.Const(is_or)
            acc = self.branches(acc, short if is_or else rhs, rhs if is_or else short, node,
                                ast.unparse(node), value=name)
        return acc

    def not_op(self, node: ast.UnaryOp, var, hint) -> ir.Operand:
        cond = self.condition(node.operand, truthy=True)
        if isinstance(cond, ir.Const):
            return ir.Const(not cond.value)
        out = self.emit("not", [cond], node, var, hint=hint)
        if isinstance(out, ir.Value) and isinstance(cond, ir.Value):
            self.negations[id(out)] = cond
        return out

    # -- loops --------------------------------------------------------------

    def for_stmt(self, node: ast.For) -> None:
        if node.orelse:
            raise self.src.error(node.orelse[0], "`for ... else` is not supported")
        iterated = {n.id for n in walk(node.iter) if isinstance(n, ast.Name)}
        for name in runtime_lists.appended_names(node.body):
            if name in iterated and (runtime_lists.is_grown(self, self.env.get(name)) or
                                     isinstance(self.env.get(name), structures.StaticList)):
                raise self.src.error(node, f"the loop iterates over `{name}` and appends "
                                     "to it; loop over `range(n)` with `n = len(...)` "
                                     "taken before the loop")
        node, temps = list_slices.iterated(self, node)
        try:
            self._for_loop(node)
        finally:
            for name in temps:
                self.env.pop(name, None)

    def _for_loop(self, node: ast.For) -> None:
        if unroll.unroll_items(self, node):
            return
        if isinstance(node.target, ast.Tuple):
            n, binds = self.tuple_iteration(node.iter, node.target, node)
            self.loop(node, None, None, [ir.Const(0), n, ir.Const(1)], binds)
            return
        if not isinstance(node.target, ast.Name):
            raise self.src.error(node.target, "only a single name or a tuple of names can be "
                                 "the loop variable (`for x in xs`, `for i, x in enumerate(xs)`)")
        if unroll.unroll_for(self, node):
            if checkpoint_pragma(self.src.line(self.loc(node).line)) \
                    or id(node) in self.checkpoint_marks:
                raise self.src.error(node, f"this loop {unroll.why_unrolled(self, node.body)}, "
                                     "so s2s-ad unrolls it: there is "
                                     "no loop left to checkpoint; remove the "
                                     "`# s2s-ad: checkpoint` comment")
            return
        backwards = self.reversed_list(node.iter, node.target)
        if backwards is not None:
            n, bind = backwards
            self.loop(node, None, None, [ir.Const(0), n, ir.Const(1)], [bind])
            return
        rows = self.array_rows(node.iter, node.target, node)
        if rows is not None:
            n, bind = rows
            self.loop(node, None, None, [ir.Const(0), n, ir.Const(1)], [bind])
            return
        seq, bounds = self.iteration(node)
        target = node.target.id
        self.loop(node, target, seq, bounds)

    def while_stmt(self, node: ast.While) -> None:
        if node.orelse:
            raise self.src.error(node.orelse[0], "`while ... else` is not supported")
        self.loop(node, None, None, None)

    def loop(self, node, target: str | None, seq, bounds, binds: list | None = None) -> None:
        is_for = isinstance(node, ast.For)
        has_break = _jumps(node.body, ast.Break)
        has_cont = _jumps(node.body, ast.Continue)
        has_ret = self.ret_mode and returns_in(node.body)
        assigned = assigned_names(node.body, subscripts=getattr(self, "array_mode", False))
        if isinstance(node, ast.While) and any(isinstance(n, ast.NamedExpr) for n in walk(node.test)):
            raise self.src.error(node.test, "assignment expressions (`:=`) are not supported")
        runtime_lists.promote_read(self, node)
        only_targets = _inner_loop_targets(node.body)  # not kept after their loops
        for v in only_targets - {target}:
            if v in self.env:  # bound before (by an earlier loop): not read in this one
                del self.env[v]
                self.undefined[v] = (node, "it is the variable of a loop inside this loop; "
                                     "s2s-ad does not keep a loop variable after its loop")
        carried = [v for v in assigned if v in self.env and v != target]
        grown = runtime_lists.promote_for(self, node.body, node)
        carried += [v for v in grown if v not in carried and v != target]
        if has_ret:  # `return s, x` in the body: the result carried item by item
            self.env[RETVAL] = tuple_merges.loop_result(self, node, self.env[RETVAL])
            if isinstance(self.env[RETVAL], tuple):
                carried.append(RETVAL)
        # a tuple, NamedTuple, dataclass or dict rebound in the loop: carried leaf by leaf
        carried, plan = loop_structures.expand(self, carried, node)
        runtime_lists.check_aliases(self, carried, node)
        if has_ret:
            carried += [RET] + ([] if RETVAL in plan or RETVAL in carried else [RETVAL])
        tuple_merges.refuse_carried(self, node, carried, self.env)
        kinds = {v: kind_of(self.env[v]) for v in carried}
        for v in carried:
            if isinstance(self.env[v], slice_values.SliceObject):
                raise self.src.error(node, f"`{v}` is a slice object made before this loop and "
                                     "again in it; s2s-ad reads one made in the same iteration "
                                     "(or before the loop, not changed in it): make it where it "
                                     "is read, or write the slice there (`x[i:i + 2]`)")
            if statics.static(self.env[v]):
                raise self.src.error(node, f"`{v}` is {self.env[v].value!r} before this loop and "
                                     "assigned in it; strings and None select code while it is "
                                     "generated, so they must not change across iterations: "
                                     "use a number or a bool flag instead")
            if kinds[v] == "list" and not runtime_lists.is_grown(self, self.env[v]):
                raise self.src.error(node, f"the list `{v}` is reassigned in the loop; only "
                                     "floats, ints and bools can change across iterations")
        saved = (self.namer.mark(), self.temps, write_dtypes.mark(self))
        masked = {v for v in carried if id(self.env[v]) in self.masks}
        for attempt in range(3):
            self.loop_masks = masked  # carried values that are masks (array_kinds)
            self.loop_plan = plan  # the structures carried leaf by leaf (loop_structures)
            built = self._loop_once(node, target, seq, bounds, carried, kinds, has_break,
                                    has_cont, has_ret, is_for, binds)
            widened = False
            for v, y in zip(carried, built[0].yields):
                if isinstance(y, ir.Value) and id(y) in self.masks and v not in masked:
                    masked.add(v)
                    widened = True
                if statics.static(y):
                    raise self.src.error(node, f"`{v}` becomes {y.value!r} in this loop; strings "
                                         "and None select code while it is generated, so they "
                                         "must not change across iterations: use a number or "
                                         "a bool flag instead")
                k = _merge_kind([kinds[v], kind_of(y)])
                if k != kinds[v]:
                    kinds[v] = k
                    widened = True
            if not widened:
                break
            self.namer.undo(saved[0])
            self.temps = saved[1]
            write_dtypes.undo(self, saved[2])  # checks the attempt hoisted out of the loop
        body, params, index, cond, exit_ = built
        for v, y in zip(carried, body.yields):
            if isinstance(y, (structures.StaticList, structures.StaticDict)):
                # (a structure carried leaf by leaf yields its leaves)
                raise self.src.error(node, f"`{v}` is bound to {structures.describe(y)} made "
                                     "inside this loop; s2s-ad follows a list grown at "
                                     "run time under one name made before the loop: make "
                                     "it once before the loop and append to it, or use a "
                                     "new name inside the loop")
        outs = [ir.Value(p.name, p.kind, p.var) for p in params]
        for v, p, o, y in zip(carried, params, outs, body.yields):
            if o.kind == "list":
                if not runtime_lists.same_list(self, p, y):
                    raise self.src.error(node, f"`{v}` is given another list inside the loop; "
                                         "s2s-ad follows a list grown at run time under one "
                                         "name: append to it, or use a new name")
                runtime_lists.carried(self, o, p)
            if index_exprs.integers(self, p):
                self.int_arrays.add(id(o))
            if id(p) in self.masks:
                self.masks.add(id(o))
            write_dtypes.settled(self, p, y, v, node)
            write_dtypes.carried(self, o, self.env[v], y)
        inits = [self.env[v] for v in carried]
        loc = self.loc(node)
        if is_for:
            names = (node.target.elts if isinstance(node.target, ast.Tuple) else [node.target])
            text = f"for {', '.join(ast.unparse(n) for n in names)} in {ast.unparse(node.iter)}"
            trips = ir.Value(self.namer.fresh(f"n_{target}"), "int") if exit_ else None
            if seq is not None:
                bounds = [ir.Const(0), self.seq_len(seq, node.iter), ir.Const(1)]
            op = ir.For(index, *bounds, params, inits, body, outs, loc, text, seq=seq,
                        exit=exit_, trips=trips)
        else:
            text = f"while {ast.unparse(node.test)}"
            trips = ir.Value(self.namer.fresh("n_iter"), "int")
            op = ir.While(params, inits, cond, body, outs, trips, loc, text, exit=exit_)
        op.source_line = self.src.line(loc.line)
        op.checkpoint = self.checkpoint_marks.get(id(node)) or checkpoint_pragma(op.source_line)
        self.ops.append(op)
        for v, o in zip(carried, outs):
            self.env[v] = o
        loop_structures.settle(self, plan)
        for v in assigned:
            if v not in carried and v not in (RET, RETVAL) and v not in plan:
                self.env.pop(v, None)
                what = "the loop variable" if v == target else "assigned inside the loop"
                self.undefined[v] = (node, f"it is {what} and not defined before it; "
                                     "assign it before the loop to use it after")
        for t in [target] + [name.id for name, _ in binds or []]:
            if t is not None and t not in carried:
                self.env.pop(t, None)
                self.undefined[t] = (node, "it is the loop variable; s2s-ad does not keep it "
                                     "after the loop")

    iterated_now: dict = {}
    """id of a run-time list -> its version carried by the loop whose
    iteration is being bound (:meth:`iterated`)."""

    def iterated(self, seq):
        """The list a loop's iteration reads its item from: ``seq``'s version
        the loop carries (one its body writes into: ``for v in xs: xs[2] =
        ...`` reads the new ``xs[2]`` at the third iteration), else ``seq``."""
        return self.iterated_now.get(id(seq), seq)

    def _loop_once(self, node, target, seq, bounds, carried, kinds, has_break, has_cont,
                   has_ret, is_for, binds):
        before = self.env
        before_guarded = self.guarded
        self.guarded = dict(before_guarded)  # names guarded in the body stay in it
        outer_ops, self.ops = self.ops, []
        self.env = dict(before)
        self.region_depth += 1
        self.region_starts.append(before)
        params = []
        plan = self.loop_plan
        leaves = {k for _, keys in plan.values() for k in keys}
        for v in carried:
            name = self.namer.fresh(FLAG_NAMES[v]) if v in FLAG_NAMES else \
                self.namer.fresh(loop_structures.leaf_name(v)) if v in leaves else \
                self.namer.claim(v)
            masked = v in self.loop_masks  # a mask on some iteration (array_kinds)
            kind = "array" if masked and kinds[v] == "float" else kinds[v]
            p = ir.Value(name, kind, None if v in FLAG_NAMES or v in leaves else v)
            if masked and kind in ("bool", "int"):
                self.masks.add(id(p))
            if kinds[v] == "list":
                runtime_lists.carried(self, p, before[v])
            if index_exprs.integers(self, before[v]):  # an array of integers stays one
                self.int_arrays.add(id(p))
            write_dtypes.carried(self, p, before[v])
            params.append(p)
            self.env[v] = p
        loop_structures.enter(self, plan)
        index = None
        cond_region = None
        if is_for:
            if seq is None and binds is None:
                index = ir.Value(self.namer.claim(target), "int", target)
                self.env[target] = index
            else:
                index = ir.Value(self.namer.fresh("k"), "int")
        else:
            cond = self.condition(node.test, truthy=True)
            cond_region = ir.Region(self.ops, [cond])
            self.ops = []
        self.loop_depth += 1
        saved_flags = {f: self.env.pop(f) for f in (BRK, CONT) if f in self.env}
        if has_break:
            self.env[BRK] = ir.Const(False)
        if has_cont:
            self.env[CONT] = ir.Const(False)
        if RET in self.env:
            # A loop iteration only starts while nothing has returned.
            self.env[RET] = ir.Const(False)
        # a run-time list the body writes into is carried: Python's iterator
        # reads each item from the list as it is when the iteration starts
        saved_now, self.iterated_now = self.iterated_now, {
            id(before[v]): self.env[v] for v in carried if kinds[v] == "list"}
        if seq is not None:
            now = self.iterated(seq)
            self.env[target] = self.emit("getitem", [now, index], node.target, target,
                                         text=f"{target} = {now.name}[{index.name}]")
        for name, bind in binds or []:
            self.env[name.id] = bind(index)
        self.iterated_now = saved_now
        # (a list the loop carries item by item is a new list each iteration)
        shapes = {v: s for v, s in _shapes(before).items() if v not in plan}
        dicts = dict_writes.snapshot(before)
        self.block(node.body)
        self.unchanged(shapes, node)
        dict_writes.refuse_in_loop(self, dicts, node)
        self.loop_depth -= 1
        loop_structures.leave(self, plan, node)
        yields = [self.env[v] for v in carried]
        exit_flags = ([self.env[BRK]] if has_break else []) + ([self.env[RET]] if has_ret else [])
        exit_ = None
        if exit_flags:
            exit_ = self.any_of(exit_flags, node)
            if isinstance(exit_, ir.Const) and not exit_.value:
                exit_ = None
        if exit_ is not None:
            yields.append(exit_)
        body = ir.Region(self.ops, yields)
        self.region_depth -= 1
        self.region_starts.pop()
        self.ops = outer_ops
        self.env = before
        self.guarded = before_guarded
        self.env.update(saved_flags)
        return body, params, index, cond_region, exit_ is not None

    def unchanged(self, shapes: dict, node, items: bool = True) -> None:
        """Refuse a list bound to a name before ``node`` that its body gave
        another length (with ``items``, a loop's body: also one whose items
        it replaced, or a name bound to another list; an arm's are merged
        item by item after the branch)."""
        for var, (value, before) in shapes.items():
            now = self.env.get(var)
            if len(value.items) != len(before) \
                    or items and (now is not value or list(value.items) != before):
                raise self.src.error(node, f"the list `{var}` is changed inside a branch or "
                                     "loop other than by `append`: s2s-ad grows lists at run "
                                     "time by `append` only; build the list with `append`, "
                                     "or fill a NumPy array")


def _inner_loop_targets(body: list) -> set[str]:
    """Names ``body`` binds only as the variable of a ``for`` loop in it, which
    s2s-ad does not keep after that loop: a loop around it does not carry them
    (``j`` of ``for j in ...`` nested in ``for i in ...``, with a ``j`` bound
    before, by an earlier loop)."""
    targets, others = set(), set()
    for stmt in body:
        for n in walk(stmt):
            if isinstance(n, ast.For):
                targets |= {t.id for t in walk(n.target) if isinstance(t, ast.Name)}
            elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                bound = n.targets if isinstance(n, ast.Assign) else [n.target]
                others |= {t.id for b in bound for t in walk(b) if isinstance(t, ast.Name)}
            elif isinstance(n, ast.withitem) and n.optional_vars is not None:
                others |= {t.id for t in walk(n.optional_vars) if isinstance(t, ast.Name)}
    return targets - others


def _shapes(env: dict) -> dict:
    return {var: (v, list(v.items)) for var, v in env.items()
            if isinstance(v, structures.StaticList)}
