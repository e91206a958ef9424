"""Branches and loops in the reverse sweep, and the tape they keep.

Contract: :class:`StructuredSweep` is mixed into the one reverse sweep
(:class:`s2s_ad.reverse.transform._Sweep`) and gives it

* ``if_``: a branch reversed under the same condition, the condition kept
  when the sweep cannot recompute it;
* ``loop``: a ``for``/``while`` run backwards over the same iterations (its
  trip count recorded when it may stop early), popping what its body pushed
  and carrying the adjoints of its loop-carried values from one iteration
  to the one before; ``zero_outer`` starts at ``0.0`` the adjoints of values
  defined outside that get contributions inside;
* ``plan``: which value of a region the forward pass keeps on a tape (a list
  slot per iteration inside loops), and its name (``tape_ref``/``tape_name``);
* ``coalesce``: the forward names a loop's carried values share with their
  yields, so the forward pass needs no copies.

It reads the sweep's own state (``func``, ``namer``, ``adj``, ``loops``,
``fname`` and the methods of :mod:`s2s_ad.reverse.transform`).
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.emit.code import Block, Stmt, call as _call
from s2s_ad.reverse import analysis, arrays, checkpoint, inplace, untouched
from s2s_ad.rules import RULES, forward_template
from s2s_ad.rules.templates import PLACEHOLDERS, substitute, template_names

# Ops the reverse sweep recomputes from values it has instead of taping them.
CHEAP = {"getitem", "len", "add", "sub", "mul", "floordiv", "mod", "neg", "pos", "lt", "le",
         "gt", "ge", "eq", "ne", "not", "and", "or", "np.any", "np.all"}
SHAPE_KEEPING = frozenset({"add", "sub", "mul", "neg", "pos"})
"""The operators of :data:`CHEAP` whose result has the shape of their operands
broadcast together: an array operand's, where the others are numbers."""


class StructuredSweep:
    """Mixin of the reverse sweep: structured ops and the tape."""

    # -- structured ops --------------------------------------------------------

    def zero_outer(self, node) -> list:
        """``v̄ = 0.0`` for each value defined outside ``node`` that may first
        receive a contribution inside it: a branch may not run, and a loop
        adds into it on every iteration."""
        inside = self.inside(node)
        targets: dict[int, ir.Value] = {}

        def may_receive(a) -> None:
            if isinstance(a, ir.Value) and id(a) in self.act and id(a) not in inside \
                    and a.kind != "list" and id(a) not in self.adj:
                targets.setdefault(id(a), a)

        for a in self.receivers(node):
            may_receive(a)
        if isinstance(node, ir.If):
            for y in node.then.yields + node.orelse.yields:
                may_receive(y)
        else:
            for y in node.body.yields:
                may_receive(y)
        out = []
        params = {id(p) for p in self.func.param_values}
        items = None
        for v in targets.values():
            self.adj[id(v)] = self.namer.fresh(f"d{v.name}")
            zero = ast.Constant(0.0)
            if self.arrays is not None and id(v) in params and v.kind == "array":
                zero = self.arrays.zero(v)  # the gradient keeps x's shape if the loop never runs
                self.ref(v)  # read: a pair's backward pass has it only from its tape
            elif self.arrays is not None and v.kind == "array":
                if items is None:
                    items = _call_items(self.func)
                if id(v) in items:
                    # an array a helper returned in a tuple: its adjoint is that helper's
                    # cotangent, which must have its shape (np.moveaxis, np.reshape of the
                    # number 0.0 fail there) where the branch adds nothing to it
                    zero = ast.Call(ast.Name(self.arrays.helper("float_zeros"), ast.Load()),
                                    [ast.Name(v.name, ast.Load())], [])
                    self.ref(v)
            out.append(Stmt(ast.Assign([ast.Name(self.adj[id(v)], ast.Store())], zero),
                            f"{v.name} gets adjoint contributions inside line {node.loc.line}",
                            target=self.adj[id(v)], role="zero", control=node))
        return out

    def receivers(self, node) -> list[ir.Value]:
        """The values defined outside ``node`` through which the ops inside
        its regions may pass on an adjoint, in program order, repeats kept:
        the operands a derivative may flow to, the yields of the branches
        and loops inside, the initial values of those loops. Made from
        those of the nodes it holds."""
        known = self._receivers.get(id(node))
        if known is not None:
            return known
        inside = self.inside(node)
        out: list[ir.Value] = []
        for r in node.regions:
            for n in r.ops:
                if isinstance(n, ir.Op):
                    sent = [a for a, d in zip(n.args, analysis.differentiable(n)) if d]
                elif isinstance(n, ir.If):
                    sent = n.then.yields + n.orelse.yields
                else:
                    sent = list(n.inits) + list(n.body.yields)
                if not isinstance(n, ir.Op):
                    sent += self.receivers(n)
                out += [a for a in sent if isinstance(a, ir.Value) and id(a) not in inside]
        self._receivers[id(node)] = out
        return out

    def if_(self, node: ir.If) -> list:
        # Adjoints leave a region only through its yields: a branch whose
        # results have no adjoint sends none anywhere.
        if not any(id(o) in self.adj for o in node.outs) \
                and not inplace.contains_saved(node, self.families):
            return []
        pre = self.zero_outer(node)
        branches = []
        # (an arm yields a value it defines or one defined before the branch)
        inside = self.inside(node)
        for r in (node.then, node.orelse):
            prefix = []
            for o, y in zip(node.outs, r.yields):
                if id(o) in self.adj and isinstance(y, ir.Value) and id(y) in self.act:
                    prefix += self.accumulate(y, ast.Name(self.adj[id(o)], ast.Load()),
                                              id(y) in inside, f"φ: {o.name} came from {y.name}",
                                              role="phi", control=node)
            branches.append(self.region(r, prefix))
        then, orelse = branches
        if not then and not orelse:
            if pre:
                untouched.mark(self, pre[-1], pre, [], [], ast.Constant(True))
            return pre
        cond = self.ref(node.cond)
        comment = f"line {node.loc.line}: {node.text}" if node.text else ""
        if not then:
            block = Block(ast.If(_negate(cond), [], []), orelse, [], comment, node)
        else:
            block = Block(ast.If(cond, [], []), then, orelse, comment, node)
        untouched.mark(self, block, pre, then, orelse, cond)
        return pre + [block]

    def loop(self, node) -> list:
        slots = [i for i, c in enumerate(node.carried) if id(c) in self.act]
        if not slots and not inplace.contains_saved(node, self.families):
            return []
        pre = self.zero_outer(node)
        carry = {}
        for i in slots:
            o, c = node.outs[i], node.carried[i]
            if id(c) in self.families:
                carry[i] = self.families[id(c)].adj  # one buffer for every version
            elif id(o) in self.adj:
                carry[i] = self.adj[id(o)]
            else:
                carry[i] = self.namer.fresh(f"d{c.name}")
                pre.append(Stmt(ast.Assign([ast.Name(carry[i], ast.Store())], ast.Constant(0.0)),
                                f"{o.name} does not reach the result after the loop",
                                target=carry[i], role="zero", control=node))
        inside = self.inside(node)
        prefix = []
        for i in slots:
            y = node.body.yields[i]
            if isinstance(y, ir.Value) and id(y) in self.act:
                prefix += self.accumulate(y, ast.Name(carry[i], ast.Load()), id(y) in inside,
                                          f"{node.carried[i].name} carried to the next iteration",
                                          role="carry", control=node)
        self.carried_adjoints[id(node.body)] = [(node.body.yields[i], carry[i]) for i in slots]
        body = self.region(node.body, prefix)
        targets, values = [], []
        shaped = set()
        for i in slots:
            new = self.adj.get(id(node.carried[i]))
            if new == carry[i]:
                continue
            targets.append(ast.Name(carry[i], ast.Store()))
            zero = ast.Constant(0.0)
            y = node.body.yields[i]
            if not new and self.arrays is not None and isinstance(y, ir.Value) \
                    and y.kind == "array":
                # The value is not read in the loop: an earlier iteration's array gets
                # a zero of its own shape, which every rule takes (np.reshape of the
                # number 0.0 cannot give it the shape); see `post` for the value
                # before the loop.
                zero = ast.Call(ast.Name(f"{self.arrays.np}.zeros_like", ast.Load()),
                                [ast.Name(carry[i], ast.Load())], [])
                shaped.add(i)
            values.append(ast.Name(new, ast.Load()) if new else zero)
        if targets:
            lhs = targets[0] if len(targets) == 1 else ast.Tuple(targets, ast.Store())
            rhs = values[0] if len(values) == 1 else ast.Tuple(values, ast.Load())
            body.append(Stmt(ast.Assign([lhs], rhs), "adjoints carried to the previous iteration",
                             role="carry", control=node))
        post = []
        for i in slots:
            init = node.inits[i]
            if isinstance(init, ir.Value) and id(init) in self.act:
                adjoint = ast.Name(carry[i], ast.Load())
                if i in shaped:
                    # zeros of the loop's shape when the loop ran, the result's adjoint
                    # when it did not: all zeros are zeros of the value before the loop's
                    # shape (a number 0.0 there reached rules that read its shape:
                    # matmul_adjoint(0.0, a, y, 1) has a's transposed shape)
                    zeros = ast.Call(ast.Name(self.arrays.helper("float_zeros"), ast.Load()),
                                     [self.ref(init)], [])
                    adjoint = ast.IfExp(ast.Call(ast.Name(f"{self.arrays.np}.any", ast.Load()),
                                                 [adjoint], []), adjoint, zeros)
                post += self.accumulate(init, adjoint, init.var is None,
                                        f"{node.carried[i].name} started as {init.name}",
                                        role="init", control=node)
        if node.checkpoint and checkpoint.has_tape(self, node):
            return pre + checkpoint.reverse(self, node, body) + post
        comment = f"line {node.loc.line}: {node.text}, backwards"
        return pre + [Block(self.reverse_head(node), body, [], comment, node)] + post

    def reverse_head(self, node) -> ast.For:
        if isinstance(node, ir.While):
            rng = _call("range", [self.ref(node.trips)])
            return ast.For(ast.Name(self.discard(), ast.Store()), rng, [], [], None)
        rng = _call("range", [self.ref(a) for a in ir.range_args(node)])
        if node.exit:
            rng = ast.Subscript(rng, ast.Slice(None, self.ref(node.trips), None), ast.Load())
        if id(node.index) in self.reads:
            return ast.For(ast.Name(node.index.name, ast.Store()), _call("reversed", [rng]),
                           [], [], None)
        return ast.For(ast.Name(self.discard(), ast.Store()), rng, [], [], None)

    # -- the tape ---------------------------------------------------------------

    def plan(self, r: ir.Region) -> list:
        """Pops and recomputations at the start of ``r``'s reverse code, for
        the values ``r`` defines that the reverse sweep reads (``r`` inside a
        loop; outside loops, values stay alive)."""
        loop = self.region_loop.get(id(r))
        if loop is None:
            return []
        defined = []
        if isinstance(loop, (ir.For, ir.While)) and r is loop.body:
            defined += list(loop.carried)
        defs: dict[int, object] = {}
        for node in r.ops:
            for v in ir.defined(node):
                defined.append(v)
                defs[id(v)] = node
        popped, recompute = [], []
        done: set[int] = set()
        while True:
            # Versions of an array written in place are read from its buffer.
            todo = [v for v in defined if id(v) in self.reads and id(v) not in done
                    and id(v) not in self.families]
            if not todo:
                break
            for v in todo:
                done.add(id(v))
                node = defs.get(id(v))
                if isinstance(node, ir.Op) and self._cheap(node):
                    recompute.append(node)
                    self.recomputed.add(id(v))
                    for a in node.args:
                        self.ref(a)
                elif isinstance(node, ir.Op) and self._param_element(node):
                    # x[i] of an array parameter: never written (arguments are not
                    # changed), so the element is read again
                    recompute.append(node)
                    self.recomputed.add(id(v))
                    for a in node.args:
                        self.ref(a)
                elif isinstance(node, ir.Op) and self._settled(node) is not None:
                    # y[i - c] read again: no later write changes that element
                    recompute.append(node)
                    self.recomputed.add(id(v))
                    for a in node.args[1:]:
                        self.ref(a)
                    self.reads.add(id(self._settled(node).root))
                else:
                    popped.append(v)
        order = {id(v): k for k, v in enumerate(defined)}
        popped.sort(key=lambda v: order[id(v)])
        recompute.sort(key=lambda n: order[id(n.out)])
        self.popped[id(r)] = popped
        out = []
        for v in popped:
            tape = self.tape_name(v)
            if r is getattr(loop, "body", None) and self.indexed(loop):
                # Pushed on every iteration (not inside a branch): slot i
                # holds iteration i's value.
                self.slots[tape] = loop
                read = ast.Subscript(ast.Name(tape, ast.Load()), self.ref(loop.index), ast.Load())
            else:
                read = _call(f"{tape}.pop", [])
            out.append(Stmt(ast.Assign([ast.Name(v.name, ast.Store())], read),
                            f"{v.name} from the tape", target=v.name, role="pop", control=loop))
        for node in recompute:
            fam = self._settled(node)
            if fam is not None:
                expr = ast.Subscript(ast.Name(fam.name, ast.Load()), inplace._index(self, node),
                                     ast.Load())
                what = f"read again from {fam.name} (no later write changes it), not taped"
            elif self._param_element(node):
                expr = ast.Subscript(self.ref(node.args[0]), inplace._index(self, node),
                                     ast.Load())
                what = f"read again from {node.args[0].name}, not taped"
            elif RULES[node.prim].attrs and self.arrays is not None:
                # np.all(m, axis=1): its keywords written out
                expr = arrays.forward_expr(node, [self.ref(a) for a in node.args],
                                           self.func.modules, self.arrays.helper)
                what = "recomputed, not taped"
            else:
                expr = self.instantiate(forward_template(node), node)
                what = "recomputed, not taped"
            out.append(Stmt(ast.Assign([ast.Name(node.out.name, ast.Store())], expr),
                            f"line {node.loc.line}: {what}", node,
                            target=node.out.name, role="recompute", control=loop))
        return out

    def _cheap(self, node: ir.Op) -> bool:
        """Does the reverse sweep recompute ``node``'s result from its
        operands rather than tape it (an arithmetic operator)?"""
        return node.prim in CHEAP and (node.out.kind != "float" or node.prim == "getitem") \
            and not any(id(a) in self.families or id(a) in self.lists for a in node.args)

    def shape_source(self, v: ir.Operand) -> ir.Operand:
        """The value to read for ``v``'s shape where no shape flag is there
        (``unbroadcast(g, v)``): where the reverse loop would recompute ``v``
        (:meth:`_cheap`) by an elementwise operator whose other operands are
        numbers (``ynorm = ypred - t7``, ``t7`` 0-d), the operand of ``v``'s
        shape, which that recomputation reads anyway; and so on down. ``v``
        itself is then neither recomputed nor taped for its shape."""
        while isinstance(v, ir.Value) and self.in_loop(v):
            node = self.arrays._made_by.get(id(v))
            if node is None or node.prim not in SHAPE_KEEPING or not self._cheap(node) \
                    or id(v) in self.families or id(v) in self.lists:
                break
            shaped = [a for a in node.args if not self.arrays.number(a)]
            if len(shaped) != 1 or not isinstance(shaped[0], ir.Value):
                break
            v = shaped[0]
        return v

    def shape_read(self, v: ir.Operand, budget: list | None = None) -> ast.expr:
        """``v`` read only for its shape, in the arm of a shape flag that sums
        an adjoint back (s2s_ad.reverse.flat_shapes): a value the reverse
        loop would recompute is recomputed there, in the expression, so that
        an iteration where the flag holds does not compute it (``unbroadcast(g,
        t9 * (t13 + k4))``, not ``t15`` recomputed on every iteration); any
        other value is read as :meth:`ref` reads it. At most 64 operations
        in one expression (``budget``): a value read twice is written twice,
        which could double the text at each level."""
        budget = [64] if budget is None else budget
        node = self.arrays._made_by.get(id(v)) if isinstance(v, ir.Value) else None
        if node is None or budget[0] <= 0 or not self.in_loop(v) or not self._cheap(node) \
                or RULES[node.prim].attrs or id(v) in self.families or id(v) in self.lists:
            return self.ref(v)
        budget[0] -= 1
        used = template_names(forward_template(node))
        env = {name: self.shape_read(a, budget)
               for name, a in zip(PLACEHOLDERS, node.args) if name in used}
        return substitute(forward_template(node), env, self.modules)

    def _param_element(self, node: ir.Op) -> bool:
        """``x[i]``, ``x[i, j]``: elements of an array parameter at int indices."""
        if node.prim != "array.getitem" or not any(node.args[0] is p
                                                   for p in self.func.param_values):
            return False
        return all(not isinstance(a, ir.Value) or a.kind == "int" for a in node.args[1:])

    def _settled(self, node: ir.Op):
        """The family of the buffer ``node`` reads an element of that no
        later write changes (s2s_ad.reverse.fresh_writes), else None."""
        if node.prim != "array.getitem" or not isinstance(node.args[0], ir.Value):
            return None
        fam = self.families.get(id(node.args[0]))
        return fam if fam is not None and id(node) in fam.settled else None

    def tape_ref(self, v: ir.Value) -> str:
        """The name a tape entry has in the generated code."""
        return v.name if v.kind in ("tape", "looptape") else self.fwd(v)

    def tape_name(self, v: ir.Value) -> str:
        if id(v) not in self.tapes:
            # A callee's tape taped in a loop: a list of tapes.
            base = f"{v.name}s" if v.kind == "tape" else f"{v.name}_tape"
            self.tapes[id(v)] = self.namer.fresh(base)
        return self.tapes[id(v)]

    # -- forward names ------------------------------------------------------------

    def coalesce(self, r: ir.Region) -> None:
        """Let a value be computed straight into the variable of the φ it
        feeds (``s = s * x + c[i]`` rather than ``s_1 = ...; s = s_1``) when no
        later read in its region still needs the variable's old value."""
        for k, node in enumerate(r.ops):
            if isinstance(node, ir.If):
                for j, o in enumerate(node.outs):
                    for br in (node.then, node.orelse):
                        self._rename_yield(br, j, self.fwd(o))
            elif isinstance(node, (ir.For, ir.While)):
                for i, c in enumerate(node.carried):
                    self._rename_yield(node.body, i, self.fwd(c))
            if not isinstance(node, ir.Op):
                for r2 in node.regions:
                    self.coalesce(r2)

    def _rename_yield(self, r: ir.Region, pos: int, name: str) -> None:
        y = r.yields[pos]
        if not isinstance(y, ir.Value) or id(y) in self.fname:
            return
        if sum(1 for z in r.yields if z is y) > 1:
            return
        idx = next((k for k, n in enumerate(r.ops) if any(v is y for v in ir.defined(n))), None)
        if idx is None or not isinstance(r.ops[idx], (ir.Op, ir.If)):
            return
        later = [a for n in r.ops[idx + 1:] for a in _reads(n)]
        later += [z for k, z in enumerate(r.yields) if k != pos]
        if any(isinstance(a, ir.Value) and self.fwd(a) == name for a in later):
            return
        self.fname[id(y)] = name


def _reads(node) -> list:
    """What ``node`` reads, nested regions included."""
    out = list(ir.operands(node))
    if not isinstance(node, ir.Op):
        out += _reads_inside(node)
    return out


def _reads_inside(node) -> list:
    out = []
    for r in node.regions:
        for n in r.ops:
            out += _reads(n)
        out += r.yields
    return out


def _negate(cond: ast.expr) -> ast.expr:
    return ast.UnaryOp(ast.Not(), cond)


def _call_items(func) -> set:
    """ids of the values that are items of a tuple a call returned
    (``a, b = h(x)``)."""
    calls = {id(n.out) for n in ir.walk(func.body) if isinstance(n, ir.Op) and n.prim == "call"}
    return {id(n.out) for n in ir.walk(func.body) if isinstance(n, ir.Op) and n.prim == "item"
            and n.args and isinstance(n.args[0], ir.Value) and id(n.args[0]) in calls}
