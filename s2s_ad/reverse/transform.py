"""Reverse mode: SSA IR → a gradient program, one transform for every function.

Contract: :func:`transform` takes a lowered :class:`~s2s_ad.ir.Function`
(straight-line code is a region without ``If``/``For``/``While``, nothing
special) and the parameters to differentiate with respect to, and returns a
:class:`~s2s_ad.code.CodeFunction` with the user's parameters plus a
keyword-only seed for the output adjoint. Its body is

1. the **forward pass** (:mod:`s2s_ad.reverse.primal`): the ops whose values the
   reverse sweep reads (plus the result, for ``value_and_grad``); inside loops
   it pushes each value the reverse sweep reads onto that value's tape;
2. the **reverse sweep**: the ops walked in reverse; for each active operand,
   the contribution ``out̄ · ∂out/∂operand`` from the rule table. The first
   contribution to an adjoint assigns it, later ones add (adjoints sum over
   consumers). Inactive values never get an adjoint. A branch is reversed
   under the same condition; a loop runs backwards over the same iterations
   (its trip count is recorded when it may stop early), pops what its body
   pushed, and carries the adjoints of its carried values from one iteration
   to the one before. An adjoint first reached inside a branch or loop but
   belonging to a value defined outside it starts at ``0.0`` before it.
   An array filled by subscript assignment is written in place; its writes
   are undone by the reverse sweep where a read before them needs it
   (:mod:`s2s_ad.reverse.inplace`).

For ``b = x * x; y = a * b`` with respect to ``a, x``::

    b = x * x
    da = dy * b
    db = dy * a
    dx = db * x
    dx += db * x
"""

from __future__ import annotations

import ast

from s2s_ad.reverse import (analysis, checkpoint, element_lists, element_writes, inplace, masked,
                            out_of_place, scatters, shifts, untouched, views)
from s2s_ad.reverse import lists as runtime_lists
from s2s_ad import ir
from s2s_ad.emit import peephole, signs
from s2s_ad.reverse.arrays import ArraySweep
from s2s_ad.reverse.call_sites import CallSites, pair_functions, pair_seeds, seed_outputs
from s2s_ad.reverse.structured import StructuredSweep, _call
from s2s_ad.emit.peephole import names_in
from s2s_ad.emit.code import (Block, CodeFunction, Stmt, reverse_comment, signature, tree_value,
                              unpack_params)
from s2s_ad.errors import SourceError
from s2s_ad.names import Namer
from s2s_ad.emit.optimize import float_factors, simplify
from s2s_ad.rules import RULES, SCALAR_PRIMS
from s2s_ad.rules.templates import (PLACEHOLDERS, const_expr, names_read, substitute,
                                    template_names)



def transform(func: ir.Function, wrt: list[ir.Value], *, with_value: bool = False,
              tuple_result: bool = True, name: str | None = None, pairs: dict | None = None,
              reserved: frozenset[str] = frozenset()) -> CodeFunction:
    """The gradient function of ``func`` (see the module docstring).

    ``pairs`` maps each user function ``func`` calls to the names of its
    forward/backward pair (:func:`s2s_ad.calls.pairs`); ``reserved`` are the
    module-level names no local may shadow."""
    for v in wrt:
        err = func.integers.get(v.var)
        if err is not None:
            raise SourceError(err.message, err.file, err.line, err.col, err.source_line)
    try:
        return _Sweep(func, wrt, pairs or {}, reserved).run(with_value, tuple_result, name)
    except inplace.Unsupported:
        # A read the in-place analysis did not foresee: keep every version instead.
        return _Sweep(func, wrt, pairs or {}, reserved, in_place=False).run(
            with_value, tuple_result, name)


class _Sweep(StructuredSweep, CallSites):
    def __init__(self, func: ir.Function, wrt: list[ir.Value], pairs: dict | None = None,
                 reserved: frozenset[str] = frozenset(), in_place: bool = True):
        self.func = func
        self.wrt = wrt
        self.pairs = pairs or {}
        self.modules = func.modules
        self.namer = Namer(reserved=func.names | reserved)
        containers = [v for v in wrt if v.kind in ("list", "tuple")]
        self.act = analysis.active(func, func.scalars(wrt) + containers) - shifts.cancelled(func)
        self.imports: list[str] = []
        self.keep: set[int] = set()
        """ids of values the forward pass must compute though the sweep does not read them."""
        self._discard: str | None = None
        self.items: dict[int, dict[int, str]] = {}
        """id(tuple value a call returned) -> index -> the adjoint of that item."""
        self.scope = analysis.scopes(func)
        # NumPy code: contributions as expressions that never write into an
        # array in place (s2s_ad.reverse.arrays), except the adjoints of arrays filled
        # by subscript assignment and of parameters read by index in a loop,
        # which only this sweep holds (s2s_ad.reverse.inplace).
        self.arrays = ArraySweep(func, self.namer) if "numpy" in func.modules else None
        if self.arrays is not None:
            self.arrays.shape_read = self.shape_read
            self.arrays.shape_source = self.shape_source
        self.masks = masked.plan(func, self.arrays.shapes) if self.arrays is not None else {}
        """id of an op whose backward is taken where an np.where picked its
        result -> (the condition, whether it picks where it holds)."""
        self.region_loop: dict[int, object] = {}
        self.loop_parent: dict[int, object] = {}
        self._map_regions(func.body, None)
        self.slots: dict[str, ir.For] = {}
        """Tape name -> the loop whose index it is written and read at (one
        slot per iteration, made before the loop) instead of pushed and popped."""
        self.adj: dict[int, str] = {}
        self.fname: dict[int, str] = {}
        """Forward names that differ from the SSA name (a value written
        straight into the variable of the φ it feeds)."""
        self.reads: set[int] = set()
        self.popped: dict[int, list[ir.Value]] = {}
        """Region id -> the values its forward code pushes (its reverse pops)."""
        self.recomputed: set[int] = set()
        self.tapes: dict[int, str] = {}
        self.loops: list = []
        self.values: dict[int, ir.Value] = {}
        for v in self._all_values():
            self.values[id(v)] = v
        self.in_place = in_place and self.arrays is not None
        self.families: dict[int, inplace.Family] = (
            inplace.families(func, self.namer) if self.in_place else {})
        """id(version) -> the array it is a version of, written in place (s2s_ad.reverse.inplace)."""
        for v in self.values.values():
            if id(v) in self.families:
                self.fname[id(v)] = self.families[id(v)].name
        self.aliases = inplace.aliases(func, self.families) if self.families else set()
        self.lists = runtime_lists.families(func)
        """id(version of a list grown at run time) -> its family (s2s_ad.reverse.lists)."""
        for key, fam in self.lists.items():
            self.fname[key] = fam.name  # one Python list: every version under one name
        runtime_lists.spread(self)
        if self.arrays is not None:
            self.arrays.buffers = set(self.families)
        self._reversing: ir.Op | None = None
        self.carried_adjoints: dict[int, list] = {}
        """id(loop body) -> (next value, name of its adjoint as a reverse
        iteration starts) per carried value with an adjoint (the loop's shape
        flags compare them: s2s_ad.reverse.flat_shapes)."""
        self.untouched_after: dict[int, dict] = {}
        """id(reversed branch) -> adjoint name -> the test true when the branch
        left it at its zero (s2s_ad.reverse.untouched)."""
        self.stored_names: dict = {}
        """The names each reverse statement or block stores, kept for the
        sweep's branches (s2s_ad.reverse.untouched.mark)."""
        self.ckpts: dict[int, checkpoint.Plan] = {}
        """id(loop) -> its checkpointing plan (s2s_ad.reverse.checkpoint)."""
        self._ckpt_helper: str | None = None
        self.accumulators: dict[int, str] = {}
        """id(array parameter read by index in a loop) -> its adjoint, created
        once and only added to in place (nothing reads it before it is returned)."""
        self.read_once: set[int] = set()
        """ids of the reads of such a parameter that are the only read of
        their elements (s2s_ad.reverse.fresh_writes.read_once): assigned, not added."""
        self._inside: dict[int, frozenset[int]] = {}
        """id(branch or loop) -> :meth:`inside` of it (the IR is not changed
        while it is swept: asked once per enclosing node, a branch nested 50
        deep would otherwise be walked 50 times)."""
        self._receivers: dict[int, list] = {}
        """id(branch or loop) -> its ``receivers`` (s2s_ad.reverse.structured),
        kept for the same reason."""

    # -- bookkeeping ----------------------------------------------------------

    def _map_regions(self, r: ir.Region, loop) -> None:
        self.region_loop[id(r)] = loop
        for node in r.ops:
            if isinstance(node, ir.If):
                self._map_regions(node.then, loop)
                self._map_regions(node.orelse, loop)
            elif not isinstance(node, ir.Op):
                self.loop_parent[id(node)] = loop
                for r2 in node.regions:
                    self._map_regions(r2, node)

    def indexed(self, loop) -> bool:
        """Does ``loop`` keep its tapes in slots, one per iteration, at its
        index? A ``for i in range(n)`` inside no other loop and never stopping
        early: its iterations are i = 0 … n-1, each once, and ``n`` is known
        before it starts (a loop inside a loop, a ``while`` or a loop that may
        stop early pushes and pops)."""
        return (isinstance(loop, ir.For) and loop.seq is None and not loop.exit
                and not loop.checkpoint and self.loop_parent.get(id(loop)) is None
                and ir.is_int(loop.start, 0) and ir.is_int(loop.step, 1))

    def _all_values(self):
        yield from self.func.scalars(self.func.param_values)
        yield from (v for v in self.func.param_values if v.kind in ("list", "tuple"))
        for node in ir.walk(self.func.body):
            yield from ir.defined(node)
            if isinstance(node, ir.For):
                yield node.index
            if isinstance(node, (ir.For, ir.While)):
                yield from node.carried

    def in_loop(self, v: ir.Value) -> bool:
        s = self.scope.get(id(v))
        return s is not None and s.loop is not None

    def is_index(self, v: ir.Value) -> bool:
        s = self.scope.get(id(v))
        return s is not None and isinstance(s.loop, ir.For) and s.loop.index is v

    def fwd(self, v: ir.Value) -> str:
        """The forward pass's name of ``v``."""
        return self.fname.get(id(v), v.name)

    def ref(self, a: ir.Operand) -> ast.expr:
        """``a`` as the reverse sweep reads it: a value defined inside a loop
        under its own name (popped or recomputed), else its forward name."""
        if not isinstance(a, ir.Value):
            return const_expr(a.value, self.modules)
        self.reads.add(id(a))
        fam = self.families.get(id(a))
        if fam is not None:
            # The buffer holds this version here only if the op reading it is
            # one whose reads the saved writes were chosen for.
            if self._reversing is None or id(self._reversing) not in fam.readers:
                raise inplace.Unsupported(f"{a.name} read outside the ops that read {fam.name}")
            self.reads.add(id(fam.root))
            return ast.Name(fam.name, ast.Load())
        return ast.Name(a.name if self.in_loop(a) else self.fwd(a), ast.Load())

    def inside(self, node) -> frozenset[int]:
        """ids of the values defined inside ``node``'s regions (its loop index
        and carried values too), from those of the nodes it holds."""
        known = self._inside.get(id(node))
        if known is not None:
            return known
        out: set[int] = set()
        for r in node.regions:
            for n in r.ops:
                out.update(id(v) for v in ir.defined(n))
                if not isinstance(n, ir.Op):
                    out |= self.inside(n)
        if isinstance(node, ir.For):
            out.add(id(node.index))
        if isinstance(node, (ir.For, ir.While)):
            out.update(id(c) for c in node.carried)
        known = self._inside[id(node)] = frozenset(out)
        return known

    # -- the sweep --------------------------------------------------------------

    def run(self, with_value: bool, tuple_result: bool, name: str | None) -> CodeFunction:
        func = self.func
        result = func.result
        self.coalesce(func.body)
        seed_base = f"d{self.fwd(result)}" if isinstance(result, ir.Value) else "dy"
        seed = self.namer.fresh(seed_base)
        if isinstance(result, ir.Value) and id(result) in self.act:
            self.adj[id(result)] = seed
        inplace.assign_adjoints(self)
        reverse = self.sweep()
        if reverse and self.arrays is not None and isinstance(result, ir.Value) \
                and id(result) in self.act and result.kind == "array" \
                and id(result) not in self.arrays.zero_d:  # a 0-d result: the seed as given
            fam = self.families.get(id(result))
            if fam is not None:  # the buffer: its shape is the result's
                self.reads.add(id(fam.root))
                shape_of = ast.Name(fam.name, ast.Load())
            else:
                shape_of = self.ref(result)
            reverse.insert(0, self.arrays.seed(shape_of, seed))
        outputs = func.outputs if func.outputs is not None else (result,)
        live = {id(o) for o in outputs if isinstance(o, ir.Value)} if with_value else set()
        fwd, tape = self.forward(live)
        if with_value:
            value = (ast.Tuple([self.value_expr(o) for o in outputs], ast.Load())
                     if func.outputs is not None else self.value_expr(result))
            popped = {v.name for vs in self.popped.values() for v in vs}
            for plan in self.ckpts.values():  # the reverse sweep runs these loops again
                popped |= set(plan.state)
            if names_read(value) & popped or any(id(o) in self.aliases for o in outputs):
                # The reverse sweep pops into a loop's carried variable, which
                # after the loop holds the result: keep the result aside.
                keep = self.namer.fresh("value")
                fwd.append(Stmt(ast.Assign([ast.Name(keep, ast.Store())], value),
                                "the reverse sweep reuses the loop's variables"))
                value = ast.Name(keep, ast.Load())
        grads = [self.gradient(v) for v in self.wrt]
        if self.arrays is not None:
            grads = [self.arrays.gradient(v, g) for v, g in zip(self.wrt, grads)]
        grad_expr = ast.Tuple(grads, ast.Load()) if tuple_result else grads[0]
        returns = ast.Tuple([value, grad_expr], ast.Load()) if with_value else grad_expr

        counts = names_in(Block(ast.If(returns, [], []), fwd + reverse))
        signs.run(reverse, counts)  # before the copies it leaves are removed
        peephole.run(reverse, counts)
        runtime_lists.fuse_sum(self, reverse)
        if self.arrays is not None:
            scatters.run(reverse, self.arrays)
            out_of_place.run(reverse)
            views.run(reverse, self)
        lists = element_lists.for_sweep(self, reverse, element_lists.bound_by(
            fwd, signature(func, seed)), tape)
        if self.arrays is None:
            element_writes.run(reverse, {self.adj[id(v)] for v in func.param_values
                                         if v.kind in ("list", "tuple") and id(v) in self.adj})
        body: list = []
        if fwd:
            body += [Stmt(None, "forward pass")] + fwd
        if reverse:
            body += shifts.note(func, func.scalars(self.wrt)) + [Stmt(None, "reverse sweep")] + reverse
        prefix = "value_and_grad_" if with_value else "grad_"
        code = CodeFunction(name or prefix + func.name, signature(func, seed), body, returns,
                            func, self.wrt, self.adjoint_names(), tape, seed, imports=self.imports,
                            loops=self.loops, helpers=self.helpers(), lists=lists)
        code.temps = self.temp_names() - {seed}
        return code

    def helpers(self) -> dict[str, str]:
        out = dict(self.arrays.helpers) if self.arrays is not None else {}
        if self._ckpt_helper is not None:
            out[self._ckpt_helper] = checkpoint.HELPER.replace(
                "def next_snapshot(", f"def {self._ckpt_helper}(")
        return out

    def checkpoint_helper(self) -> str:
        """The generated name of the binomial schedule's helper."""
        if self._ckpt_helper is None:
            self._ckpt_helper = self.namer.fresh("next_snapshot")
        return self._ckpt_helper

    def temp_names(self) -> set[str]:
        """The names of values the user did not name and of their adjoints
        (none that is also a user variable's, a parameter's or a seed)."""
        temp: set[str] = set()
        user: set[str] = set()
        for v in self._all_values():
            names = {v.name, self.fwd(v)}
            if id(v) in self.adj:
                names.add(self.adj[id(v)])
            (temp if v.var is None else user).update(names)
        return temp - user - {p.value.name for p in self.func.params}

    def adjoint_names(self) -> dict:
        return {v.name: self.adj[id(v)] for v in self._all_values()
                if id(v) in self.adj and not self.adj[id(v)].startswith("<")}

    def value_expr(self, a: ir.Operand) -> ast.expr:
        if isinstance(a, ir.Value) and id(a) in self.aliases:
            # The reverse sweep restores the buffer: return what it holds now
            # (``own``: ``v.copy()``, which a Dask array keeps in Dask, where
            # ``np.copy`` would compute a NumPy array).
            return ast.Call(ast.Name(self.arrays.helper("own"), ast.Load()),
                            [ast.Name(self.fwd(a), ast.Load())], [])
        if isinstance(a, ir.Value):
            return ast.Name(self.fwd(a), ast.Load())
        return const_expr(a.value, self.modules)

    def sweep(self) -> list:
        """The reverse sweep; a list parameter read at run-time indices gets
        a list adjoint first."""
        lists = []
        items = {id(p.value): p.items for p in self.func.params}
        for v in self.func.param_values:
            if v.kind in ("list", "tuple") and id(v) in self.act:
                seed = self.adj.get(id(v))
                self.adj[id(v)] = self.namer.fresh(f"d{v.name}")
                if seed is not None:
                    # the parameter is returned (a pair's forward function
                    # returning it read back): its adjoint starts as the
                    # caller's cotangent, a copy, as a returned list's does
                    lists.append(runtime_lists.seeded(self.adj[id(v)], seed, v.name))
                    continue
                # A list of a length given when lowering: that length (a pair's
                # backward pass has no list to ask; its tape holds none).
                known = items.get(id(v))
                length = ast.Constant(len(known)) if known is not None else \
                    _call("len", [self.ref(v)])
                lists.append(Stmt(ast.Assign(
                    [ast.Name(self.adj[id(v)], ast.Store())],
                    ast.BinOp(ast.List([ast.Constant(0.0)], ast.Load()), ast.Mult(), length)),
                    f"the adjoint of {v.name}, read at run-time indices", role="zero"))
        lists += runtime_lists.adjoints(self)
        for p in self.func.params:
            if p.tree is not None and p.value in self.wrt:
                self.reads.add(id(p.value))  # type(p)(...) rebuilds its class: a pair keeps it
            if _unread_list(p, self.adj) and p.value in self.wrt:
                self.reads.add(id(p.value))  # its adjoint is zeros as long as it
        out = self.region(self.func.body)
        inits = inplace.adjoint_inits(self)
        flags = (self.arrays.flat.statements(self.ref, self.func.body)
                 if self.arrays is not None and out else [])
        return flags + lists + inits + out if out else []

    def forward(self, live: set[int], keep_params: bool = False):
        """The forward statements and the tape: the top-level forward values
        the reverse sweep reads (with ``keep_params``, parameters too), the
        tape lists of values read inside loops, and callees' tapes."""
        from s2s_ad.reverse import primal as forward  # the forward pass builds on what the sweep decided

        fwd = unpack_params(self.func) + forward.build(self, live | self.keep)
        tape = []
        if keep_params:
            tape += [v for v in self.func.scalars(self.func.param_values) if id(v) in self.reads]
            # a structure or list parameter read whole (len(xs), xs[k], type(p))
            tape += [p.value for p in self.func.params
                     if p.items is not None and id(p.value) in self.reads]
        for v in self.outside_loops():
            fam = self.families.get(id(v))
            if fam is not None and v is not fam.root:
                continue  # one buffer: kept once, under its first version
            if id(v) in self.reads:
                tape.append(v)
        if keep_params:
            # A value a branch defines exists only if the branch ran; the
            # backward pass reads it only under the same condition, but the
            # tape tuple names it either way.
            top = {id(v) for node in self.func.body.ops for v in ir.defined(node)}
            params = {id(v) for v in self.func.param_values + self.func.scalars(
                self.func.param_values)}  # leaves of a structure parameter too
            maybe = [self.tape_ref(v) for v in tape if id(v) not in top and id(v) not in params]
            tapes = set(self.tapes.values())
            top_loops = {id(node) for node in self.func.body.ops}
            maybe += [name for name in self.slots if name in tapes
                      and id(self.slots[name]) not in top_loops]
            fwd = [Stmt(ast.Assign([ast.Name(n, ast.Store())], ast.Constant(None)),
                        "defined only if its branch runs") for n in dict.fromkeys(maybe)] + fwd
        tape += [ir.Value(name, "looptape") for name in self.tapes.values()]
        for plan in self.ckpts.values():
            extra = [plan.snaps] + ([] if plan.binomial else [plan.names["every"]])
            if keep_params and plan.node not in self.func.body.ops:  # inside a branch
                fwd = [Stmt(ast.Assign([ast.Name(n, ast.Store())], ast.Constant(None)),
                            "defined only if its branch runs") for n in extra] + fwd
            tape += [ir.Value(name, "looptape") for name in extra]
        stacks = {f.stack for f in self.families.values() if f.stack is not None}
        tape += [ir.Value(name, "looptape") for name in sorted(stacks)]
        # a value computed straight into its φ's variable (coalesce) shares
        # the φ's name: the tape names it once (a tuple naming a variable
        # twice cannot be the backward pass's parameters once split)
        named: dict = {}
        for v in tape:
            named.setdefault(self.tape_ref(v), v)
        return fwd, list(named.values())

    def outside_loops(self):
        """The values defined outside every loop: by the function's top-level
        nodes and inside its branches (not inside loops, whose values the
        reverse sweep pops from tapes)."""
        def region(r: ir.Region):
            for node in r.ops:
                yield from ir.defined(node)
                if isinstance(node, ir.If):
                    yield from region(node.then)
                    yield from region(node.orelse)
        yield from region(self.func.body)

    def gradient(self, v: ir.Value) -> ast.expr:
        """The adjoint of parameter ``v``; for a list or tuple parameter, a
        list or tuple of its items' adjoints."""
        def one(x):
            if id(x) in self.adj:
                return ast.Name(self.adj[id(x)], ast.Load())
            return self.arrays.zero(x) if self.arrays is not None else ast.Constant(0.0)

        def item(x, at: ast.expr):
            """An array leaf's or item's adjoint in its dtype (``at`` reads it
            from the parameter), as an array parameter's."""
            g = one(x)
            if self.arrays is None or x.kind != "array" or not isinstance(g, ast.Name):
                return g
            return _call(self.arrays.helper("astype_like"), [g, at])

        param = next(p for p in self.func.params if p.value is v)
        if param.tree is not None:  # the same structure, an adjoint per leaf
            def leaf(x, at):  # a leaf without adjoint: zeros shaped like it, read through v
                if id(x) in self.adj or self.arrays is None:
                    return item(x, at)
                return _call(f"{self.arrays.np}.zeros_like", [at])
            return tree_value(param.tree, ast.Name(v.name, ast.Load()), leaf)
        if _unread_list(param, self.adj):  # a list of any length: a zero per item
            zeros = runtime_lists.zeros_of(self, ast.Name(v.name, ast.Load()))
            return zeros if v.kind == "list" else _call("tuple", [zeros])
        if param.items is None:
            return one(v)
        if id(v) in self.adj:
            whole = ast.Name(self.adj[id(v)], ast.Load())
            items = [ast.BinOp(ast.Subscript(whole, ast.Constant(k), ast.Load()), ast.Add(),
                               one(x)) if id(x) in self.adj
                     else ast.Subscript(whole, ast.Constant(k), ast.Load())
                     for k, x in enumerate(param.items)]
            if not any(id(x) in self.adj for x in param.items):
                return whole if v.kind == "list" else _call("tuple", [whole])
        else:
            items = [item(x, ast.Subscript(ast.Name(v.name, ast.Load()), ast.Constant(k),
                                           ast.Load())) for k, x in enumerate(param.items)]
        return ast.List(items, ast.Load()) if v.kind == "list" else ast.Tuple(items, ast.Load())

    def region(self, r: ir.Region, prefix: list | None = None) -> list:
        out = list(prefix or [])
        for node in reversed(r.ops):
            if isinstance(node, ir.Op):
                out += self.op(node)
            elif isinstance(node, ir.If):
                out += self.if_(node)
            else:
                out += self.loop(node)
        inits = runtime_lists.region_adjoints(self, r) if r is not self.func.body else []
        flags = []
        if self.arrays is not None and out and id(r) in self.carried_adjoints:
            # a loop's shape flags, tested once per reverse iteration on its popped values
            flags = self.arrays.flat.statements(self.ref, r, self.carried_adjoints[id(r)])
        return self.plan(r) + flags + inits + untouched.guard_region(self, out)

    # -- simple ops -------------------------------------------------------------

    def op(self, op: ir.Op) -> list:
        self._reversing = op
        try:
            return self._op(op)
        finally:
            self._reversing = None

    def _op(self, op: ir.Op) -> list:
        if op.prim == "array.setitem" and id(op.out) in self.families:
            return inplace.reverse_write(self, op)
        if op.prim in ("list.new", "list.append", "list.fill", "list.set"):
            return runtime_lists.reverse(self, op)
        if id(op.out) not in self.adj:
            return []
        if op.callee is not None:
            return self.call_adjoint(op)
        if op.prim == "item":
            return self.item_adjoint(op)
        rule = RULES[op.prim]
        analysis.refuse_reached(op, lambda a: isinstance(a, ir.Value) and id(a) in self.act)
        g = ast.Name(self.adj[id(op.out)], ast.Load())
        out = []
        passed_on = False
        if self.arrays is not None and op.prim != "getitem":
            for i, arg in enumerate(op.args):
                if not rule.flows(i) or not isinstance(arg, ir.Value) or id(arg) not in self.act:
                    continue
                if i == 0 and op.prim == "array.getitem" and (
                        id(arg) in self.families or id(arg) in self.accumulators):
                    out.append(inplace.reverse_read(self, op, g))
                    continue
                contrib, text = self.arrays.expression(op, i, g, self.ref)
                contrib = masked.wrap(self, op, i, contrib)
                alias = (arg.var is None and not passed_on and sum(a is arg for a in op.args) == 1)
                stmts = self.accumulate(arg, contrib, alias, reverse_comment(op, i, arg, text), op, i,
                                        text)
                if not stmts:
                    passed_on = True
                out += stmts
            return out
        for i, (arg, partial) in enumerate(zip(op.args, rule.partial_asts)):
            if partial is None or not isinstance(arg, ir.Value) or id(arg) not in self.act:
                continue
            if op.prim == "list.sum":
                out += runtime_lists.reverse_sum(self, op, g)
                continue
            if op.prim == "getitem":
                target = ast.Subscript(ast.Name(self.adj[id(arg)], ast.Load()),
                                       self.ref(op.args[1]), ast.Store())
                out.append(Stmt(ast.AugAssign(target, ast.Add(), g),
                                reverse_comment(op, i, arg, "1"), op, i, "1", self.adj[id(arg)]))
                continue
            local = simplify(self.instantiate(partial, op))
            contrib = simplify(ast.BinOp(g, ast.Mult(), local))
            if op.prim in SCALAR_PRIMS:
                contrib = float_factors(contrib)
            alias = (arg.var is None and not passed_on and sum(a is arg for a in op.args) == 1)
            partial_text = ast.unparse(local)
            stmts = self.accumulate(arg, contrib, alias, reverse_comment(op, i, arg, partial_text),
                                    op, i, partial_text)
            if not stmts:
                passed_on = True
            out += stmts
        return out

    # -- calls to user functions (top level only) ---------------------------------

    def tape_of_call(self, op: ir.Op) -> str:
        """The name of the tape a call's forward function returns (its own
        SSA value: inside a loop it is pushed and popped like any other)."""
        return op.callee.tape.name

    def call_tape(self, op: ir.Op) -> ast.expr:
        self.keep.add(id(op.out))  # the forward call that fills the tape must run
        return self.ref(op.callee.tape)

    def instantiate(self, template: ast.expr, op: ir.Op) -> ast.expr:
        used = template_names(template)
        env = {}
        for name, a in zip(PLACEHOLDERS, op.args):
            if name in used:
                env[name] = self.ref(a)
        if "out" in used:
            env["out"] = self.ref(op.out)
        return substitute(template, env, self.modules)

    def accumulate(self, v: ir.Value, contrib: ast.expr, alias: bool, comment: str,
                   op=None, i=None, partial: str = "", role: str = "", control=None) -> list:
        """``v̄ = contrib`` on the first contribution, ``v̄ += contrib`` after.
        With ``alias``, a first contribution that is another adjoint itself
        (``t = a + b``) shares that variable: its owner is done with it."""
        grown = self.lists.get(id(v))
        if grown is not None:
            # Versions of a run-time list share one adjoint list, changed only
            # by the reverse of its ops (s2s_ad.reverse.lists).
            if isinstance(contrib, ast.Name) and contrib.id == grown.adj:
                return []
            raise AssertionError(f"a contribution to the list {v.name}: {ast.unparse(contrib)}")
        fam = self.families.get(id(v))
        if fam is not None:
            if isinstance(contrib, ast.Name) and contrib.id == fam.adj:
                return []  # a φ between versions: the same adjoint buffer
            node = ast.AugAssign(ast.Name(fam.adj, ast.Store()), ast.Add(), contrib)
            return [Stmt(node, comment, op, i, partial, fam.adj, role=role, control=control)]
        if id(v) in self.accumulators:
            node = ast.AugAssign(ast.Name(self.adj[id(v)], ast.Store()), ast.Add(), contrib)
            return [Stmt(node, comment, op, i, partial, self.adj[id(v)], role=role,
                         control=control)]
        if id(v) in self.adj:
            target = ast.Name(self.adj[id(v)], ast.Store())
            if self.arrays is not None:  # never in place: the array may be shared
                node = ast.Assign([target], ast.BinOp(ast.Name(self.adj[id(v)], ast.Load()),
                                                      ast.Add(), contrib))
                return [Stmt(node, comment, op, i, partial, self.adj[id(v)], role=role,
                             control=control)]
            return [Stmt(ast.AugAssign(target, ast.Add(), contrib), comment, op, i, partial,
                         self.adj[id(v)], role=role, control=control)]
        if alias and isinstance(contrib, ast.Name):
            self.adj[id(v)] = contrib.id
            return []
        self.adj[id(v)] = self.namer.fresh(f"d{v.name}")
        target = ast.Name(self.adj[id(v)], ast.Store())
        return [Stmt(ast.Assign([target], contrib), comment, op, i, partial, self.adj[id(v)],
                     role=role, control=control)]

def transform_pair(func: ir.Function, fwd_name: str, bwd_name: str, pairs: dict,
                   reserved: frozenset[str] = frozenset(), needed=None, called: bool = False
                   ) -> tuple[CodeFunction, CodeFunction]:
    """The forward/backward pair of a called function.

    ``fwd_name(*params) -> (result, tape)`` computes the result and keeps, as
    a tuple, exactly the values the backward pass reads (inside loops, their
    tape lists); ``bwd_name(tape, dresult) -> (dparam, ...)`` returns one
    adjoint per parameter, in parameter order (``0.0`` for those the result
    does not depend on). Every call site of the function uses this one pair.
    ``needed``: the positions of the parameters whose adjoints the call sites
    read (:mod:`s2s_ad.reverse.needed`; None: all); the others are ``None``,
    neither computed nor taped for. ``called``: the pair of a helper, which
    only generated code calls (not the pair :func:`s2s_ad.vjp` hands to the
    user): its result and its cotangent are that code's."""
    try:
        return _pair(func, fwd_name, bwd_name, pairs, reserved, True, needed, called)
    except inplace.Unsupported:
        return _pair(func, fwd_name, bwd_name, pairs, reserved, False, needed, called)


def _pair(func: ir.Function, fwd_name: str, bwd_name: str, pairs: dict,
          reserved: frozenset[str], in_place: bool, needed=None, called: bool = False
          ) -> tuple[CodeFunction, CodeFunction]:
    params = func.param_values
    # a parameter used as an integer (a range bound, an index; its own or a
    # helper's: frontend/integer_args.py) has no derivative: None, as a static's
    wrt = ([v for v in params if v.var not in func.integers] if needed is None
           else [v for k, v in enumerate(params) if k in needed])
    sweep = _Sweep(func, wrt, pairs, reserved, in_place)
    if called:
        sweep.aliases = inplace.restored(func, sweep.families) if sweep.families else set()
    seeds = pair_seeds(func, sweep.namer)
    sweep.coalesce(func.body)
    prelude = seed_outputs(sweep, seeds)
    inplace.assign_adjoints(sweep)
    reverse = prelude + sweep.sweep()
    if sweep.arrays is not None:
        scatters.run(reverse, sweep.arrays)
    live = {id(o) for o in seeds.outputs if isinstance(o, ir.Value)}
    forward, tape = sweep.forward(live, keep_params=True)
    value = (ast.Tuple([sweep.value_expr(o) for o in seeds.outputs], ast.Load())
             if seeds.several else sweep.value_expr(func.result))
    tape_refs = [sweep.tape_ref(v) for v in tape]
    grads = [sweep.gradient(v) if any(v is w for w in wrt) else ast.Constant(None)
             for v in params]
    ends = ast.Tuple([value, *grads, *(ast.Name(n, ast.Load()) for n in tape_refs)], ast.Load())
    signs.run(reverse, names_in(Block(ast.If(ends, [], []), forward + reverse)))
    if sweep.arrays is not None:
        out_of_place.run(reverse)
        views.run(reverse, sweep)
        if called:  # (a cotangent the user gives vjp_fn is the user's: not kept)
            views.seeded(reverse, sweep, set(seeds.seeds))
    # bound on entry to the backward function: its seeds and the tape it unpacks
    lists = element_lists.for_sweep(sweep, reverse, {seeds.tape, seeds.seed, *seeds.seeds,
                                                     *tape_refs}, tape)
    fwd, bwd = pair_functions(func, fwd_name, bwd_name, seeds, sweep, forward, value, tape,
                              tape_refs, reverse, grads, sweep.adjoint_names(), sweep.loops)
    bwd.lists = lists
    fwd.temps = bwd.temps = sweep.temp_names() - {seeds.tape, seeds.seed, *seeds.seeds}
    return fwd, bwd


def _unread_list(param, adj: dict) -> bool:
    """A list parameter of any length that gets no adjoint: its gradient is
    still a list of its length (a caller adds it item by item)."""
    v = param.value
    return param.tree is None and param.items is None and v.kind in ("list", "tuple") \
        and id(v) not in adj
