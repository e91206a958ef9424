"""The reverse sweep at a call to a user function, and at a read of one of its results.

Contract: :class:`CallSites` is mixed into the reverse transform
(:mod:`s2s_ad.reverse`). It turns a call op into one call of the callee's
backward function and an ``item`` op (``a = t[k]`` on the tuple a call
returned) into the adjoint of that item. The class using it provides
``pairs``, ``imports``, ``namer``, ``adj``, ``act``, ``items``, ``arrays``,
``_discard`` and :meth:`CallSites.call_tape` (how the sweep reads the tape the
call's forward function returned).

:func:`pair_seeds`, :func:`seed_outputs` and :func:`pair_functions` build
the forward/backward pair of a called function around either sweep.

Before → after, for ``y = sq(x); z = sq(x)`` where ``x`` has an adjoint
already when the second call is reached::

    dx, = sq_bwd(y_tape, dy)
    dx_1, = sq_bwd(z_tape, dz)
    dx = dx + dx_1
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from s2s_ad import ir
from s2s_ad.emit.code import CodeFunction, Stmt, parameter
from s2s_ad.syntax_walk import walk


class CallSites:
    """Reverse statements for call ops and the items of their tuple results."""

    def call_tape(self, op: ir.Op) -> ast.expr:
        raise NotImplementedError

    def discard(self) -> str:
        """The name that receives contributions nobody needs (``_``)."""
        if self._discard is None:
            self._discard = self.namer.fresh("_")
        return self._discard

    def pair(self, op: ir.Op):
        """The callee's forward/backward pair; its imports join the module's."""
        pair = self.pairs[op.callee.key]
        for line in pair.imports:
            if line not in self.imports:
                self.imports.append(line)
        return pair

    def call_adjoint(self, op: ir.Op) -> list[Stmt]:
        """``da, _ = helper_bwd(t_tape, dt)``: the callee's backward pass gives
        every operand's contribution at once; an operand that already has an
        adjoint gets its contribution in a temporary, then added."""
        pair = self.pair(op)
        targets, adds = [], []
        for k, arg in enumerate(op.args):
            if not isinstance(arg, ir.Value) or id(arg) not in self.act:
                targets.append(ast.Name(self.discard(), ast.Store()))
                continue
            if id(arg) not in self.adj:
                self.adj[id(arg)] = self.namer.fresh(f"d{arg.name}")
                targets.append(ast.Name(self.adj[id(arg)], ast.Store()))
                continue
            tmp = self.namer.fresh(f"d{arg.name}")
            targets.append(ast.Name(tmp, ast.Store()))
            # Never ``+=``: a helper's backward pass may hand back the very
            # array it was given (``def ident(v): return v``), and the
            # caller need not be in array mode to pass arrays through.
            name = self.adj[id(arg)]
            if arg.kind in ("list", "tuple"):
                add = _add_items(name, tmp, self.namer)
            else:
                add = (self.arrays.accumulate(name, ast.Name(tmp, ast.Load()), False)
                       if self.arrays is not None else
                       ast.Assign([ast.Name(name, ast.Store())],
                                  ast.BinOp(ast.Name(name, ast.Load()), ast.Add(),
                                            ast.Name(tmp, ast.Load()))))
            adds.append(Stmt(add, f"line {op.loc.line}: {op.text}, another use of {arg.name}", op,
                             k, target=name))
        if op.out.kind == "tuple":
            items = self.items.get(id(op.out), {})
            cot = ast.Tuple([ast.Name(items[k], ast.Load()) if k in items
                             else self.zero_item(op, k) for k in range(pair.outputs or 0)],
                            ast.Load())
        else:
            cot = ast.Name(self.adj[id(op.out)], ast.Load())
        call = ast.Call(ast.Name(pair.bwd, ast.Load()), [self.call_tape(op), cot], [])
        node = ast.Assign([ast.Tuple(targets, ast.Store())], call)
        return [Stmt(node, f"line {op.loc.line}: {op.text}", op)] + adds

    def zero_item(self, op: ir.Op, k: int) -> ast.expr:
        """The zero cotangent of item ``k`` of what the call ``op`` returns:
        ``0.0``, or for a list of any length (a gradient module's list
        adjoint, returned beside a number) a list of zeros of its length."""
        lowered = op.callee.lowered
        outs = getattr(lowered, "outputs", None) or ()
        if k < len(outs) and isinstance(outs[k], ir.Value) and outs[k].kind == "list":
            item = ast.Subscript(self.ref(op.out), ast.Constant(k), ast.Load())
            return ast.BinOp(ast.List([ast.Constant(0.0)], ast.Load()), ast.Mult(),
                             ast.Call(ast.Name("len", ast.Load()), [item], []))
        return ast.Constant(0.0)

    def item_adjoint(self, op: ir.Op) -> list[Stmt]:
        """``a = t[k]`` passes ``a``'s adjoint on as the adjoint of item ``k``
        of ``t``; a second read of the same item adds."""
        tup, k = op.args[0], op.args[1].value
        items = self.items.setdefault(id(tup), {})
        self.adj.setdefault(id(tup), f"<items of {tup.name}>")
        g = self.adj[id(op.out)]
        if k not in items:
            items[k] = g
            return []
        name = self.namer.fresh(f"d{tup.name}_{k}")
        total = ast.BinOp(ast.Name(items[k], ast.Load()), ast.Add(), ast.Name(g, ast.Load()))
        if op.out.kind == "list":  # two reads of a list item: adjoints added item by item
            a, b = self.namer.fresh("a"), self.namer.fresh("b")
            total = ast.ListComp(
                ast.BinOp(ast.Name(a, ast.Load()), ast.Add(), ast.Name(b, ast.Load())),
                [ast.comprehension(ast.Tuple([ast.Name(a, ast.Store()), ast.Name(b, ast.Store())],
                                             ast.Store()),
                                   ast.Call(ast.Name("zip", ast.Load()),
                                            [ast.Name(items[k], ast.Load()),
                                             ast.Name(g, ast.Load())], []), [], 0)])
        node = ast.Assign([ast.Name(name, ast.Store())], total)
        items[k] = name
        return [Stmt(node, f"line {op.loc.line}: {op.text}, item {k} read again", op)]


def _add_items(name: str, tmp: str, namer) -> ast.stmt:
    """``dxs[:] = [a + b for a, b in zip(dxs, t)]``: a list passed whole to a
    helper gets the helper's adjoint list added item by item (the two have
    the length the list had at the call)."""
    target = ast.Subscript(ast.Name(name, ast.Load()), ast.Slice(None, None, None), ast.Store())
    return ast.Assign([target], _items_added(name, tmp, namer))


def _items_added(name: str, other: str, namer) -> ast.ListComp:
    """``[a + b for a, b in zip(name, other)]``: two lists added item by item."""
    a, b = namer.fresh("a"), namer.fresh("b")
    return ast.ListComp(
        ast.BinOp(ast.Name(a, ast.Load()), ast.Add(), ast.Name(b, ast.Load())),
        [ast.comprehension(ast.Tuple([ast.Name(a, ast.Store()), ast.Name(b, ast.Store())],
                                     ast.Store()),
                           ast.Call(ast.Name("zip", ast.Load()),
                                    [ast.Name(name, ast.Load()), ast.Name(other, ast.Load())], []),
                           [], 0)])


# -- the forward/backward pair of a called function ------------------------------


@dataclass
class PairSeeds:
    """The names a callee's pair starts from: the backward function's tape and
    seed parameters, and one seed per returned item."""
    tape: str
    seed: str
    seeds: list[str]
    outputs: tuple
    several: bool


def pair_seeds(func: ir.Function, namer) -> PairSeeds:
    """``bwd(tape, dy)``, or ``bwd(tape, cotangents)`` unpacked into one seed
    per item when the callee returns a tuple."""
    tape = namer.fresh("tape")
    several = func.outputs is not None
    outputs = func.outputs if several else (func.result,)
    seed = namer.fresh("cotangents" if several else
                       f"d{func.result.name}" if isinstance(func.result, ir.Value) else "dout")
    seeds = ([namer.fresh(f"d{o.name}" if isinstance(o, ir.Value) else "dout") for o in outputs]
             if several else [seed])
    return PairSeeds(tape, seed, seeds, tuple(outputs), several)


def seed_outputs(sweep, s: PairSeeds) -> list[Stmt]:
    """Each returned value's adjoint starts as its seed; a value returned
    twice sums both."""
    prelude: list[Stmt] = []
    for o, seed in zip(s.outputs, s.seeds):
        if not (isinstance(o, ir.Value) and id(o) in sweep.act):
            continue
        if id(o) not in sweep.adj:
            sweep.adj[id(o)] = seed
            continue
        name = sweep.adj[id(o)]
        total = ast.BinOp(ast.Name(name, ast.Load()), ast.Add(), ast.Name(seed, ast.Load()))
        if o.kind in ("list", "tuple"):  # item by item (`+` would join the lists)
            total = _items_added(name, seed, sweep.namer)
        add = (ast.Assign([ast.Name(name, ast.Store())], total)  # never in place on arrays
               if sweep.arrays is not None or o.kind in ("list", "tuple") else
               ast.AugAssign(ast.Name(name, ast.Store()), ast.Add(), ast.Name(seed, ast.Load())))
        prelude.append(Stmt(add, f"{o.name} is returned more than once"))
    return prelude


def pair_functions(func: ir.Function, fwd_name: str, bwd_name: str, s: PairSeeds, sweep,
                   fwd_body: list, value: ast.expr, tape: list[ir.Value], tape_names: list[str],
                   reverse: list, grads: list[ast.expr], adjoints: dict,
                   loops: list | None = None) -> tuple[CodeFunction, CodeFunction]:
    """``fwd_name(*params) -> (result, tape)`` and ``bwd_name(tape, seed) ->
    (dparam, ...)`` from the parts the reverse transform builds."""
    wrt = func.param_values
    # A parameter that gets no adjoint returns ``np.zeros_like(p)``, which
    # reads ``p``: the backward pass has it only if the tape carries it. So
    # does an item of a list parameter (``np.zeros_like(ws_0)``).
    read = {n.id for g in grads for n in walk(g) if isinstance(n, ast.Name)}
    items = [x for p in func.params if p.items for x in p.items if isinstance(x, ir.Value)]
    missing = list({v.name: v for v in [*wrt, *items]
                    if v.name in read and v.name not in tape_names}.values())
    tape, tape_names = list(tape) + missing, list(tape_names) + [v.name for v in missing]
    tape_tuple = ast.Tuple([ast.Name(n, ast.Load()) for n in tape_names], ast.Load())
    fwd_args = ast.arguments(posonlyargs=[], args=[parameter(v) for v in wrt], vararg=None,
                             kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    fwd = CodeFunction(fwd_name, fwd_args, fwd_body, ast.Tuple([value, tape_tuple], ast.Load()),
                       func, wrt, {}, tape, "", imports=sweep.imports, role="fwd",
                       helpers=sweep.helpers(),
                       header=f"{func.name} from {func.loc.file}:{func.loc.line}{_kinds(func)}, "
                              "forward pass: returns its result and the tape its backward pass "
                              "reads",
                       loops=loops or [])
    bwd_body: list = []
    if s.several:
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in s.seeds], ast.Store())
        bwd_body.append(Stmt(ast.Assign([target], ast.Name(s.seed, ast.Load())),
                             "one cotangent per returned item"))
    if tape:
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in tape_names], ast.Store())
        bwd_body.append(Stmt(ast.Assign([target], ast.Name(s.tape, ast.Load())),
                             "values saved by " + fwd_name))
    bwd_body += reverse
    bwd_args = ast.arguments(posonlyargs=[], args=[ast.arg(s.tape), ast.arg(s.seed)], vararg=None,
                             kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    bwd = CodeFunction(bwd_name, bwd_args, bwd_body, ast.Tuple(grads, ast.Load()), func, wrt,
                       adjoints, [], s.seed, imports=sweep.imports, role="bwd",
                       helpers=sweep.helpers(),
                       header=f"{func.name} from {func.loc.file}:{func.loc.line}{_kinds(func)}, "
                              "backward pass: "
                              f"adjoints of ({', '.join(v.name for v in wrt)}) from the tape "
                              f"of {fwd_name} and the result's adjoint")
    return fwd, bwd


def _kinds(func: ir.Function) -> str:
    """For a helper without NumPy lowered for arrays: which parameters are."""
    if not func.given_arrays:
        return ""
    names = ", ".join(func.given_arrays)
    return f" for array{'s' if len(func.given_arrays) > 1 else ''} {names}"
