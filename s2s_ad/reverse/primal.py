"""The forward pass of a gradient program, with its tape.

Contract: :func:`build` turns the lowered function into the statements the
gradient runs before its reverse sweep, given what the sweep decided
(:class:`~s2s_ad.reverse.transform._Sweep`: the values it reads, which of them it pops,
the forward names of values computed straight into a φ's variable):

* only the nodes the reverse sweep (or ``value_and_grad``) needs run;
* inside a loop, each value the reverse sweep pops is pushed onto its own
  list right after it is computed (a carried value at the start of the
  iteration, before the body overwrites its variable); nothing else is;
* a loop that may stop early, and every ``while``, counts its iterations;
* inside branches and loops, a temporary read once by the next statements is
  folded into its reader's expression, so the forward pass reads like the
  user's code (straight-line code keeps one statement per op).

Horner's rule ``s = s * x + c[i]`` becomes::

    s = 0.0
    for i in range(len(c)):
        s_tape.append(s)
        s = s * x + c[i]
"""

from __future__ import annotations

import ast

from s2s_ad.reverse import analysis, checkpoint, inplace
from s2s_ad import ir
from s2s_ad.emit.code import Block, LoopRecord, Stmt, effect_statement, while_block
from s2s_ad.rules import forward_template
from s2s_ad.rules.templates import (PLACEHOLDERS, attr_expr, const_expr, copy_expr, index_expr,
                                    names_read, substitute)

FAST_FORWARD = {"np.cross": ("cross_product", ()),
                "np.roll": ("rolled", (("shift", 0), ("axis", None))),
                "np.eye": ("eye_matrix", ()),
                "np.moveaxis": ("moved", (("source", 0), ("destination", 0))),
                "np.sum": ("array_sum", ())}
"""NumPy functions the gradient's forward pass computes with the module's own
helper (the same values, by the same float operations): ``np.cross`` of two
3-vectors by components, ``np.roll`` by two slice copies, ``np.moveaxis`` of a
vector as the vector and of a matrix as its transpose, ``np.eye(n)`` (one
operand, no ``k``, no ``dtype``) as a copy of a kept identity matrix, ``np.sum(x)`` (no
``axis``, no ``keepdims``) of an ndarray as the ``np.add.reduce`` that ``np.sum``
calls — each a microsecond or several less per
call on small arrays, where NumPy's general forms spend their time moving
axes. ``np.einsum`` goes through ``contract`` (optimize=True above 20,000
index combinations: BLAS, whose sums may round differently from np.einsum's
in the last bits). (Rule templates keep the NumPy call: the JVP module, which is
differentiated again, must stay in the supported subset.)"""


def build(sweep, extra: set[int]) -> list:
    """The forward statements; ``extra`` are ids of values needed besides
    those the reverse sweep reads (the result, for ``value_and_grad``)."""
    func = sweep.func
    # Every write into an array written in place runs: the reverse sweep undoes them.
    # A value the reverse sweep recomputes from its operands (which it reads) is
    # not needed from the forward pass, unless something the forward pass runs reads it.
    live = (set(sweep.reads) - sweep.recomputed) | extra | set(sweep.families)
    inside = set()
    for node in ir.walk(func.body):
        if not isinstance(node, ir.Op) and sweep.inside(node) & sweep.reads:
            inside.add(id(node))
    inside |= analysis.effects(func.body)  # checks run, and what holds them
    kept: set[int] = set()
    dead: set[int] = set()
    analysis.prune(func.body, live, inside, kept, dead)
    f = _Forward(sweep, kept, dead)
    body = f.region(func.body, top=True)
    inits = [Stmt(ast.Assign([ast.Name(name, ast.Store())], ast.List([], ast.Load())),
                  f"tape of {sweep.values[key].name}") for key, name in sweep.tapes.items()
             if name not in sweep.slots]  # those are made just before their loop
    stacks = {f.stack: f.name for f in sweep.families.values() if f.stack is not None}
    inits += [Stmt(ast.Assign([ast.Name(s, ast.Store())], ast.List([], ast.Load())),
                   f"elements of {n} overwritten, for the reverse sweep to put back")
              for s, n in sorted(stacks.items())]
    return inits + body


class _Forward:
    def __init__(self, sweep, kept: set[int], dead: frozenset | set = frozenset()):
        self.sw = sweep
        self.kept = kept
        self.dead = dead
        """ids of the carried values of kept loops nothing reads (not carried)."""
        self._held: set[int] | None = None
        self._unlooped: set[int] | None = None
        self.inline: dict[int, ast.expr] = {}
        self.use_at: dict[int, list] = {}
        self._uses(sweep.func.body)
        # A loop's exit flag is read after the copies into the carried
        # variables: an expression folded into it would read their new values.
        self.exit_flags = {id(n.body.yields[-1]) for n in ir.walk(sweep.func.body)
                           if isinstance(n, (ir.For, ir.While)) and n.exit}
        self.taping = True
        """False while writing a checkpointed loop's untaped runs: no pushes."""
        self.recorded: set[int] = set()
        self.replay = False
        """True while writing a checkpointed loop's runs for the reverse sweep."""
        self._slot_tapes: dict[int, list[tuple[int, str]]] | None = None

    def _uses(self, r: ir.Region) -> None:
        for k, node in enumerate(r.ops):
            for a in ir.operands(node):
                if isinstance(a, ir.Value):
                    self.use_at.setdefault(id(a), []).append((id(r), k))
            if not isinstance(node, ir.Op):
                for r2 in node.regions:
                    self._uses(r2)
        for y in r.yields:
            if isinstance(y, ir.Value):
                self.use_at.setdefault(id(y), []).append((id(r), len(r.ops)))

    # -- expressions ----------------------------------------------------------

    def expr(self, a: ir.Operand) -> ast.expr:
        if isinstance(a, ir.Value):
            if id(a) in self.inline:
                return copy_expr(self.inline[id(a)])
            return ast.Name(self.sw.fwd(a), ast.Load())
        return const_expr(a.value, self.sw.modules)

    def op_expr(self, op: ir.Op) -> ast.expr:
        if op.callee is not None:
            pair = self.sw.pair(op)
            args = [self.expr(a) for a in op.args]
            for k, a in enumerate(op.args):
                if isinstance(a, ir.Value) and id(a) in self.sw.lists:
                    # a list grown at run time, passed whole: the callee's tape keeps
                    # the list as it is now, not as later appends make it
                    args[k] = ast.Subscript(args[k], ast.Slice(None, None, None), ast.Load())
            return ast.Call(ast.Name(pair.fwd, ast.Load()), args, [])
        if op.prim == "item":
            return ast.Subscript(self.expr(op.args[0]), ast.Constant(op.args[1].value), ast.Load())
        if op.prim == "list.new":
            return ast.List([self.expr(a) for a in op.args], ast.Load())
        arrays = getattr(self.sw, "arrays", None)
        if arrays is not None and op.prim == "np.einsum":
            # contract: optimize=True (BLAS) for large operands, as the adjoints' einsums
            return ast.Call(ast.Name(arrays.helper("contract"), ast.Load()),
                            [ast.Constant(op.attrs["subscripts"])]
                            + [self.expr(a) for a in op.args], [])
        if arrays is not None and op.prim in FAST_FORWARD and (
                op.prim != "np.eye" or (len(op.args) == 1 and not op.attrs.get("k")
                                        and op.attrs.get("dtype") is None)) and (
                op.prim != "np.sum" or (len(op.args) == 1 and op.attrs.get("axis") is None
                                        and not op.attrs.get("keepdims"))):
            # by position, as a generated module read back from its file calls them
            base, attrs = FAST_FORWARD[op.prim]
            return ast.Call(ast.Name(arrays.helper(base), ast.Load()),
                            [self.expr(a) for a in op.args]
                            + [attr_expr(op.attrs.get(k, d)) for k, d in attrs], [])
        if arrays is not None and op.prim != "getitem":
            e = arrays.forward_expr(op, self.expr)  # NumPy: attributes, indexing
            if op.prim == "array.getitem" and id(op.args[0]) in self.sw.families \
                    and (id(op.out) in self.sw.reads or id(op.out) in self.held_pieces()):
                if id(op.out) not in arrays.zero_d:
                    # kept for the reverse sweep: not a view of the buffer
                    e = inplace.copy_of(arrays, e)
                elif id(op.out) in self.unlooped():
                    # one element read by its name after later writes (inside a
                    # loop the reverse sweep reads it from the tape instead)
                    e = inplace.element_copy(e)
            return e
        env = {name: self.expr(a) for name, a in zip(PLACEHOLDERS, op.args)}
        return substitute(forward_template(op), env, self.sw.modules)

    def unlooped(self) -> set[int]:
        """ids of the values defined outside every loop (read by name in the
        reverse sweep, not from a tape)."""
        if self._unlooped is None:
            self._unlooped = {id(v) for v in self.sw.outside_loops()}
        return self._unlooped

    def held_pieces(self) -> set[int]:
        if self._held is None:
            self._held = inplace.held_pieces(self.sw.func, self.sw.families, self.sw.reads)
        return self._held

    def can_inline(self, op: ir.Op, r: ir.Region, k: int, e: ast.expr) -> bool:
        v = op.out
        if op.callee is not None or op.prim in ("list.new", "list.append", "list.fill",
                                                "list.set"):
            return False
        if v.var is not None or id(v) in self.sw.reads or id(v) in self.sw.tapes \
                or id(v) in self.exit_flags:
            return False
        at = self.use_at.get(id(v), [])
        if len(at) != 1 or at[0][0] != id(r):
            return False
        j = at[0][1]
        read = names_read(e)
        for node in r.ops[k + 1:j]:
            if id(node) in self.kept and self.written(node) & read:
                return False
        return True

    def written(self, node) -> set[str]:
        """Names the forward code of ``node`` assigns."""
        vals = list(ir.defined(node))
        if not isinstance(node, ir.Op):
            for r in node.regions:
                for n in ir.walk(r):
                    vals += ir.defined(n)
                    if isinstance(n, (ir.For, ir.While)):
                        vals += n.carried
            if isinstance(node, (ir.For, ir.While)):
                vals += node.carried
        return {self.sw.fwd(v) for v in vals}

    def slot_tapes(self, loop: ir.For) -> list[tuple[int, str]]:
        """The tapes (key, name) keeping a slot per iteration of ``loop``, in
        the sweep's order. (The sweep has made every tape by now: they are
        grouped by loop once, not looked for among all of them at each loop.)"""
        if self._slot_tapes is None:
            self._slot_tapes = {}
            for key, name in self.sw.tapes.items():
                owner = self.sw.slots.get(name)
                if owner is not None:
                    self._slot_tapes.setdefault(id(owner), []).append((key, name))
        return self._slot_tapes.get(id(loop), [])

    # -- statements -----------------------------------------------------------

    def push(self, v: ir.Value) -> list:
        tape = self.sw.tapes.get(id(v))
        if tape is None or not self.taping:
            return []
        loop = self.sw.slots.get(tape)
        if loop is not None:  # this iteration's slot
            slot = ast.Subscript(ast.Name(tape, ast.Load()), ast.Name(loop.index.name, ast.Load()),
                                 ast.Store())
            return [Stmt(ast.Assign([slot], ast.Name(self.sw.fwd(v), ast.Load())),
                         f"the reverse sweep reads {v.name}")]
        call = ast.Call(ast.Attribute(ast.Name(tape, ast.Load()), "append", ast.Load()),
                        [ast.Name(self.sw.fwd(v), ast.Load())], [])
        return [Stmt(ast.Expr(call), f"the reverse sweep reads {v.name}")]

    def copies(self, targets: list[ir.Value], values: list[ir.Operand], comment: str) -> list:
        lhs, rhs = [], []
        for t, v in zip(targets, values):
            e = self.expr(v)
            name = self.sw.fwd(t)
            if isinstance(e, ast.Name) and e.id == name:
                continue
            lhs.append(ast.Name(name, ast.Store()))
            rhs.append(e)
        if not lhs:
            return []
        # One tuple assignment: a value may read a variable another one writes.
        if len(lhs) == 1:
            return [Stmt(ast.Assign(lhs, rhs[0]), comment)]
        return [Stmt(ast.Assign([ast.Tuple(lhs, ast.Store())], ast.Tuple(rhs, ast.Load())), comment)]

    def region(self, r: ir.Region, top: bool = False, skip: object = None) -> list:
        out = []
        for k, node in enumerate(r.ops):
            if id(node) not in self.kept or node is skip:
                continue
            if isinstance(node, ir.Op) and node.prim == "array.setitem" \
                    and id(node.out) in self.sw.families:
                out += self.write(node)
                continue
            if isinstance(node, ir.Op) and node.prim == "list.set":
                seq, index, v = node.args
                target = ast.Subscript(self.expr(seq), self.expr(index), ast.Store())
                out.append(Stmt(ast.Assign([target], self.expr(v)),
                                f"line {node.loc.line}: {node.text}", node))
                continue
            if isinstance(node, ir.Op) and node.prim == "list.append":
                call = ast.Call(ast.Attribute(self.expr(node.args[0]), "append", ast.Load()),
                                [self.expr(node.args[1])], [])
                out.append(Stmt(ast.Expr(call), f"line {node.loc.line}: {node.text}", node))
                continue
            if isinstance(node, ir.Op) and node.prim in ir.EFFECTS:
                if not (node.prim == "print" and self.replay):  # once per call
                    out.append(effect_statement(node, [self.expr(a) for a in node.args],
                                                self.sw.modules))
                continue
            if isinstance(node, ir.Op):
                e = self.op_expr(node)
                if not top and self.can_inline(node, r, k, e):
                    self.inline[id(node.out)] = e
                    continue
                target: ast.expr = ast.Name(self.sw.fwd(node.out), ast.Store())
                if node.callee is not None:
                    target = ast.Tuple([target, ast.Name(self.sw.tape_of_call(node), ast.Store())],
                                       ast.Store())
                out.append(Stmt(ast.Assign([target], e), f"line {node.loc.line}: {node.text}", node))
                out += self.push(node.out)
                if node.callee is not None:
                    out += self.push(node.callee.tape)
            elif isinstance(node, ir.If):
                out += self.if_(node)
            elif isinstance(node, ir.For):
                out += self.for_(node)
            else:
                out += self.while_(node)
        return out

    def write(self, op: ir.Op) -> list:
        """``y[idx] = v`` in place, after pushing the overwritten elements
        when the reverse sweep puts them back (s2s_ad.reverse.inplace)."""
        fam = self.sw.families[id(op.out)]
        exprs = [self.expr(a) for a in op.args]
        out = []
        if id(op) in fam.saved:
            element = ast.Subscript(ast.Name(fam.name, ast.Load()),
                                    index_expr(op.attrs["index"], exprs), ast.Load())
            old = element if id(op) in self.sw.arrays.elements else \
                inplace.copy_of(self.sw.arrays, element)  # one element: a NumPy scalar
            push = ast.Call(ast.Attribute(ast.Name(fam.stack, ast.Load()), "append", ast.Load()),
                            [old], [])
            out.append(Stmt(ast.Expr(push), f"the reverse sweep puts back what line "
                                            f"{op.loc.line} overwrites"))
        target = ast.Subscript(ast.Name(fam.name, ast.Load()),
                               index_expr(op.attrs["index"], exprs), ast.Store())
        out.append(Stmt(ast.Assign([target], exprs[1]), f"line {op.loc.line}: {op.text}", op))
        return out

    def if_(self, node: ir.If) -> list:
        then = self.region(node.then) + self.copies(node.outs, node.then.yields, "φ")
        orelse = self.region(node.orelse) + self.copies(node.outs, node.orelse.yields, "φ")
        out = []
        if then or orelse:
            cond = self.expr(node.cond)
            comment = f"line {node.loc.line}: {node.text}" if node.text else ""
            if not then:
                out.append(Block(ast.If(ast.UnaryOp(ast.Not(), cond), [], []), orelse, [], comment))
            else:
                out.append(Block(ast.If(cond, [], []), then, orelse, comment))
        for o in node.outs:
            out += self.push(o)
        return out

    def carried(self, node, values: list) -> tuple[list, list]:
        """The loop's carried values the forward pass computes, and the items
        of ``values`` (their inits or next values) that go with them."""
        pairs = [(c, v) for c, v in zip(node.carried, values) if id(c) not in self.dead]
        return [c for c, _ in pairs], [v for _, v in pairs]

    def loop_start(self, node) -> list:
        out = self.copies(*self.carried(node, node.inits), "carried into the loop")
        return out + [Stmt(ast.Assign([ast.Name(node.trips.name, ast.Store())], ast.Constant(0)),
                           "iterations run")] if node.trips is not None else out

    def loop_body(self, node, skip=None) -> list:
        body = []
        if node.trips is not None:
            body.append(Stmt(ast.AugAssign(ast.Name(node.trips.name, ast.Store()), ast.Add(),
                                           ast.Constant(1)), ""))
        for c in node.carried:
            body += self.push(c)
        body += self.region(node.body, skip=skip)
        n = len(node.carried)
        body += self.copies(*self.carried(node, node.body.yields[:n]), "next iteration")
        if node.exit:
            body.append(Block(ast.If(self.expr(node.body.yields[n]), [], []), [Stmt(ast.Break())],
                              [], "stop: a `break` or `return` ran"))
        self.record(node)
        return body

    def record(self, node) -> None:
        if id(node) in self.recorded:  # a checkpointed loop's body is written several times
            return
        self.recorded.add(id(node))
        pushed = list(self.sw.popped.get(id(node.body), []))

        def branches(r):
            for n in r.ops:
                if isinstance(n, ir.If):
                    for b in (n.then, n.orelse):
                        pushed.extend(self.sw.popped.get(id(b), []))
                        branches(b)
                elif isinstance(n, ir.Op) and id(n.out) in self.sw.families \
                        and id(n) in self.sw.families[id(n.out)].saved:
                    pushed.append(ir.Value(self.sw.families[id(n.out)].stack))
        branches(node.body)
        kinds = {v.name: v.kind for v in pushed}
        names = list(kinds)
        self.sw.loops.append(LoopRecord(node.loc.line, node.text, names,
                                        {"kinds": [kinds[n] for n in names],
                                         "plan": self.sw.ckpts.get(id(node))}))

    def for_(self, node: ir.For) -> list:
        if id(node) in self.sw.ckpts:
            return self.checkpointed(node)
        out = self.loop_start(node)
        skip = None
        if node.seq is not None:
            elem = node.body.ops[0]
            skip = elem
            seq = ast.Name(self.sw.fwd(node.seq), ast.Load())
            v = ast.Name(self.sw.fwd(elem.out), ast.Store())
            if len(self.use_at.get(id(node.index), [])) > 1:
                target = ast.Tuple([ast.Name(node.index.name, ast.Store()), v], ast.Store())
                it = ast.Call(ast.Name("enumerate", ast.Load()), [seq], [])
            else:
                target, it = v, seq
            head = ast.For(target, it, [], [], None)
        else:
            args = [self.expr(a) for a in ir.range_args(node)]
            head = ast.For(ast.Name(node.index.name, ast.Store()),
                           ast.Call(ast.Name("range", ast.Load()), args, []), [], None)
        body = self.loop_body(node, skip)
        if skip is not None:
            body = self.push(skip.out) + body
        for key, name in self.slot_tapes(node):
            slots = ast.BinOp(ast.List([ast.Constant(None)], ast.Load()), ast.Mult(),
                              self.expr(node.stop))
            out.append(Stmt(ast.Assign([ast.Name(name, ast.Store())], slots),
                            f"tape of {self.sw.values[key].name}, a slot per iteration"))
        out.append(Block(head, body, [], f"line {node.loc.line}: {node.text}"))
        for o in node.outs:
            out += self.push(o)
        if node.trips is not None:
            out += self.push(node.trips)
        return out

    def while_(self, node: ir.While) -> list:
        if id(node) in self.sw.ckpts:
            return self.checkpointed(node)
        out = self.loop_start(node)
        cond = self.region(node.cond)
        test = self.expr(node.cond.yields[0])
        body = self.loop_body(node)
        out.append(while_block(cond, test, body, f"line {node.loc.line}: {node.text}"))
        for o in node.outs:
            out += self.push(o)
        out += self.push(node.trips)
        return out


    # -- checkpointed loops (s2s_ad.reverse.checkpoint) ---------------------------

    def segment_body(self, node, taping: bool, count: bool) -> list:
        """One iteration of ``node`` (a list's element read by index), taped
        or not; ``count`` counts it in the loop's trip count."""
        saved, self.taping = self.taping, taping
        self.replay = not count  # the loop run again in the reverse sweep: no prints
        try:
            body = []
            if count and node.trips is not None:
                body.append(Stmt(ast.AugAssign(ast.Name(node.trips.name, ast.Store()), ast.Add(),
                                               ast.Constant(1)), ""))
            for c in node.carried:
                body += self.push(c)
            body += self.region(node.body)
            n = len(node.carried)
            body += self.copies(node.carried, node.body.yields[:n], "next iteration")
            if node.exit:
                body.append(Block(ast.If(self.expr(node.body.yields[n]), [], []),
                                  [Stmt(ast.Break())], [], "stop: a `break` or `return` ran"))
        finally:
            self.taping, self.replay = saved, False
        self.record(node)
        return body

    def checkpointed(self, node) -> list:
        """The forward loop without tape, keeping snapshots; fills the
        driver's loops in the reverse sweep."""
        plan = self.sw.ckpts[id(node)]
        out = self.loop_start(node) + checkpoint.forward_start(plan)
        comment = f"line {node.loc.line}: {node.text} (checkpointed: no tape)"
        if isinstance(node, ir.For):
            rng = ir_range(self, node)
            target: ast.expr = ast.Name(node.index.name, ast.Store())
            counter = node.index.name
            if not plan.binomial:
                counter = node.trips.name
            elif not (ir.is_int(node.start, 0) and ir.is_int(node.step, 1)):
                counter = self.sw.namer.fresh("k")
                target = ast.Tuple([ast.Name(counter, ast.Store()), target], ast.Store())
                rng = ast.Call(ast.Name("enumerate", ast.Load()), [rng], [])
            total = f"len({ast.unparse(ir_range(self, node))})"
            body = checkpoint.forward_snapshot(plan, counter, total)
            body += self.segment_body(node, False, True)
            out.append(Block(ast.For(target, rng, [], [], None), body, [], comment))
        else:
            cond = self.region(node.cond)
            test = self.expr(node.cond.yields[0])
            body = checkpoint.forward_snapshot(plan, node.trips.name, "")
            body += self.segment_body(node, False, True)
            out.append(while_block(cond, test, body, comment))
        for part in plan.advance:
            part.extend(self.segment_body(node, False, False))
        plan.taped.extend(self.segment_body(node, True, False))
        for o in node.outs:
            out += self.push(o)
        if node.trips is not None:
            out += self.push(node.trips)
        return out


def ir_range(f: _Forward, node: ir.For) -> ast.expr:
    return ast.Call(ast.Name("range", ast.Load()), [f.expr(a) for a in ir.range_args(node)], [])
