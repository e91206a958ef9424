"""Reverse mode: SSA IR → a gradient program.

Contract: :func:`transform` takes a lowered :class:`~s2s_ad.ir.Function` and
the parameters to differentiate with respect to, and returns a
:class:`~s2s_ad.code.CodeFunction` with the user's parameters plus a
keyword-only seed for the output adjoint. Its body is

1. the **forward pass**: only the ops whose values the reverse sweep reads
   (plus the result, for ``value_and_grad``);
2. the **reverse sweep**: the ops walked in reverse; for each active operand,
   the contribution ``out̄ · ∂out/∂operand`` from the rule table. The first
   contribution to an adjoint assigns it, later ones add (adjoints sum over
   consumers). Inactive values never get an adjoint.

For ``b = x * x; y = a * b`` with respect to ``a, x``::

    b = x * x
    da = dy * b
    db = dy * a
    dx = db * x
    dx += db * x
"""

from __future__ import annotations

import ast

from . import analysis, ir, reverse_control, shifts
from .arrays import SPECIAL, ArraySweep
from .call_sites import CallSites
from .code import CodeFunction, Stmt, reverse_comment, signature, unpack_params
from .names import Namer
from .optimize import simplify
from .rules import RULES
from .templates import instantiate, names_read, operand_expr


def transform(func: ir.Function, wrt: list[ir.Value], *, with_value: bool = False,
              tuple_result: bool = True, name: str | None = None, pairs: dict | None = None,
              reserved: frozenset[str] = frozenset()) -> CodeFunction:
    """The gradient function of ``func`` (see the module docstring).

    ``pairs`` maps each user function ``func`` calls to the names of its
    forward/backward pair (:func:`s2s_ad.calls.pairs`); ``reserved`` are the
    module-level names no local may shadow. A function with branches or loops
    goes to :mod:`s2s_ad.reverse_control`."""
    if True:  # EXPERIMENT
        return reverse_control.transform(func, wrt, with_value=with_value,
                                         tuple_result=tuple_result, name=name, pairs=pairs,
                                         reserved=reserved)
    namer = Namer(reserved=func.names | reserved)
    result = func.result
    seed_base = f"d{result.name}" if isinstance(result, ir.Value) else "dy"
    seed = namer.fresh(seed_base)
    act = analysis.active(func, func.scalars(wrt))
    sweep = _Sweep(func, act, namer, pairs or {})
    if isinstance(result, ir.Value) and id(result) in act:
        sweep.adj[id(result)] = seed
    reverse = sweep.run()
    adj = sweep.adj
    if sweep.arrays is not None and isinstance(result, ir.Value) and id(result) in act \
            and result.kind == "array":
        reverse.insert(0, sweep.arrays.seed(ast.Name(result.name, ast.Load()), seed))

    outputs = func.outputs if func.outputs is not None else (result,)
    extra = {o.name for o in outputs if isinstance(o, ir.Value)} if with_value else set()
    forward, tape = sweep.forward(reverse, extra)
    value = (ast.Tuple([operand_expr(o, func.modules) for o in outputs], ast.Load())
             if func.outputs is not None else operand_expr(result, func.modules))

    grads = [_gradient(func, v, adj, sweep.zero) for v in wrt]
    if sweep.arrays is not None:
        grads = [sweep.arrays.gradient(v, g) for v, g in zip(wrt, grads)]
    grad_expr = ast.Tuple(grads, ast.Load()) if tuple_result else grads[0]
    returns = sweep.rename(ast.Tuple([value, grad_expr], ast.Load()) if with_value else grad_expr)

    body: list[Stmt] = []
    forward = unpack_params(func) + forward
    if forward:
        body += [Stmt(None, "forward pass")] + forward
    if reverse:
        body += shifts.note(func, func.scalars(wrt)) + [Stmt(None, "reverse sweep")] + reverse
    prefix = "value_and_grad_" if with_value else "grad_"
    return CodeFunction(name or prefix + func.name, signature(func, seed), body, returns, func,
                        wrt, {v.name: adj[id(v)] for v in _values(func) if id(v) in adj},
                        tape, seed, imports=sweep.imports, helpers=sweep.helpers())


def transform_pair(func: ir.Function, fwd_name: str, bwd_name: str, pairs: dict,
                   reserved: frozenset[str] = frozenset()) -> tuple[CodeFunction, CodeFunction]:
    """The forward/backward pair of a called function.

    ``fwd_name(*params) -> (result, tape)`` computes the result and keeps, as
    a tuple, exactly the values the backward pass reads;
    ``bwd_name(tape, dresult) -> (dparam, ...)`` returns one adjoint per
    parameter, in parameter order (``0.0`` for those the result does not
    depend on). Every call site of the function uses this one pair."""
    return reverse_control.transform_pair(func, fwd_name, bwd_name, pairs, reserved)


class _Sweep(CallSites):
    """The reverse sweep over one function's ops, and the forward pass that
    feeds it."""

    def __init__(self, func: ir.Function, act: set[int], namer: Namer, pairs: dict):
        self.func = func
        self.act = act
        self.namer = namer
        self.pairs = pairs
        self.adj: dict[int, str] = {}
        self.tapes: dict[int, str] = {}
        """id(call op) -> the name of its callee's tape."""
        self.imports: list[str] = []
        self._discard: str | None = None
        self.items: dict[int, dict[int, str]] = {}
        """id(tuple value a call returned) -> index -> the adjoint of that item."""
        # Functions that use NumPy: broadcasting, no in-place accumulation, indexing.
        self.arrays = ArraySweep(func, namer) if "numpy" in func.modules else None

    def helpers(self) -> dict[str, str]:
        return dict(self.arrays.helpers) if self.arrays is not None else {}

    def zero(self, v: ir.Value) -> ast.expr:
        return self.arrays.zero(v) if self.arrays is not None else ast.Constant(0.0)

    def rename(self, node):
        return self.arrays.rename(node) if self.arrays is not None else node

    def tape_of(self, op: ir.Op) -> str:
        if id(op) not in self.tapes:
            tape = op.callee.tape
            self.tapes[id(op)] = (tape.name if tape is not None
                                  else self.namer.fresh(f"{op.out.name}_tape"))
        return self.tapes[id(op)]

    def run(self) -> list[Stmt]:
        func, adj, act = self.func, self.adj, self.act
        reverse: list[Stmt] = []
        for op in reversed(func.body.ops):
            if id(op.out) not in adj:
                continue
            if op.callee is not None:
                reverse += self.call_adjoint(op)
                continue
            if op.prim == "item":
                reverse += self.item_adjoint(op)
                continue
            rule = RULES[op.prim]
            g = ast.Name(adj[id(op.out)], ast.Load())
            arrays = self.arrays
            if arrays is not None and op.prim in SPECIAL:
                reverse += arrays.special(op, g, adj, act, reverse_comment)
                continue
            passed_on = False
            for i, arg in enumerate(op.args):
                if not rule.flows(i) or not isinstance(arg, ir.Value) or id(arg) not in act:
                    continue
                if rule.adjoint:
                    contrib = simplify(arrays.vjp(op, i, g))
                    local = None
                else:
                    local = simplify(instantiate(rule.partial_asts[i], op.args, op.out,
                                                 func.modules))
                    contrib = simplify(ast.BinOp(g, ast.Mult(), local))
                if arrays is not None:
                    contrib = arrays.unbroadcast(op, i, contrib)
                first = id(arg) not in adj
                if (first and arg.var is None and not passed_on and isinstance(contrib, ast.Name)
                        and sum(a is arg for a in op.args) == 1):
                    # A temporary whose only contribution so far is the output's
                    # adjoint itself (``t = a + b``) shares that variable instead
                    # of copying it: its consumer is done with it.
                    adj[id(arg)] = contrib.id
                    passed_on = True
                    continue
                if first:
                    adj[id(arg)] = self.namer.fresh(f"d{arg.name}")
                target = ast.Name(adj[id(arg)], ast.Store())
                if arrays is not None:
                    node = arrays.accumulate(adj[id(arg)], contrib, first)
                else:
                    node = (ast.Assign([target], contrib) if first
                            else ast.AugAssign(target, ast.Add(), contrib))
                partial_text = ast.unparse(local) if local is not None else rule.math
                reverse.append(Stmt(node, reverse_comment(op, i, arg, partial_text), op, i, partial_text,
                                    adj[id(arg)]))
        return reverse

    def call_tape(self, op: ir.Op) -> ast.expr:
        return ast.Name(self.tape_of(op), ast.Load())

    def forward(self, reverse: list[Stmt], extra: set[str]):
        """The forward statements the reverse sweep (and ``extra`` names)
        need, and the tape: the forward values the sweep reads."""
        func = self.func
        read: set[str] = set()
        for s in reverse:
            read |= names_read(s.node)
        by_name = {op.out.name: op for op in func.body.ops}
        by_name.update({self.tapes[id(op)]: op for op in func.body.ops if id(op) in self.tapes})
        kept = analysis.needed_forward(func, {id(by_name[n].out) for n in read | extra
                                              if n in by_name})
        if self.arrays is None:
            forward = [self.forward_stmt(op) for op in kept]
        else:
            values_read = self.arrays.values_read([s.node for s in reverse])
            forward = []
            for k, op in enumerate(kept):
                nodes = self.arrays.forward(op, values_read, kept[k + 1:])
                if nodes is None:
                    forward.append(self.forward_stmt(op))
                    continue
                forward += [Stmt(n, f"line {op.loc.line}: {op.text}" if j == len(nodes) - 1
                                 else "", op) for j, n in enumerate(nodes)]
            for s in forward + reverse:
                self.rename(s.node)
        tape: list[ir.Value] = []
        for op in kept:
            if op.out.name in read:
                tape.append(op.out)
            if op.callee is not None and self.tape_of(op) in read:
                tape.append(ir.Value(self.tape_of(op), "tape"))
        return forward, tape

    def forward_stmt(self, op: ir.Op) -> Stmt:
        comment = f"line {op.loc.line}: {op.text}"
        if op.callee is not None:
            pair = self.pair(op)
            targets = ast.Tuple([ast.Name(op.out.name, ast.Store()),
                                 ast.Name(self.tape_of(op), ast.Store())], ast.Store())
            call = ast.Call(ast.Name(pair.fwd, ast.Load()),
                            [operand_expr(a, self.func.modules) for a in op.args], [])
            return Stmt(ast.Assign([targets], call), comment, op)
        if op.prim == "item":
            value = ast.Subscript(operand_expr(op.args[0], self.func.modules),
                                  ast.Constant(op.args[1].value), ast.Load())
            return Stmt(ast.Assign([ast.Name(op.out.name, ast.Store())], value), comment, op)
        rule = RULES[op.prim]
        value = instantiate(rule.forward_ast, op.args, None, self.func.modules,
                            attrs={**dict(rule.attrs), **op.attrs}, given=op.attrs)
        return Stmt(ast.Assign([ast.Name(op.out.name, ast.Store())], value), comment, op)


def _gradient(func: ir.Function, v: ir.Value, adj: dict, zero) -> ast.expr:
    """The adjoint of parameter ``v``: a list or tuple of the items'
    adjoints for a sequence parameter, so the gradient has its shape;
    ``zero(x)`` where the result does not depend on ``x``."""
    def one(x):
        return ast.Name(adj[id(x)], ast.Load()) if id(x) in adj else zero(x)

    for p in func.params:
        if p.value is v and p.items is not None:
            items = [one(x) for x in p.items]
            return ast.List(items, ast.Load()) if v.kind == "list" else ast.Tuple(items, ast.Load())
    return one(v)


def _values(func: ir.Function):
    yield from func.scalars(func.param_values)
    for op in func.body.ops:
        yield op.out
