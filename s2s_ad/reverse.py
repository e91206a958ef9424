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

from . import analysis, ir
from .code import CodeFunction, Stmt
from .names import Namer
from .optimize import simplify
from .rules import RULES
from .templates import const_expr, instantiate, names_read, operand_expr


def transform(func: ir.Function, wrt: list[ir.Value], *, with_value: bool = False,
              tuple_result: bool = True, name: str | None = None) -> CodeFunction:
    namer = Namer(reserved=func.names)
    result = func.result
    seed_base = f"d{result.name}" if isinstance(result, ir.Value) else "dy"
    seed = namer.fresh(seed_base)
    act = analysis.active(func, wrt)
    adj: dict[int, str] = {}
    if isinstance(result, ir.Value) and id(result) in act:
        adj[id(result)] = seed

    reverse: list[Stmt] = []
    for op in reversed(func.body.ops):
        if id(op.out) not in adj:
            continue
        rule = RULES[op.prim]
        g = ast.Name(adj[id(op.out)], ast.Load())
        passed_on = False
        for i, (arg, partial) in enumerate(zip(op.args, rule.partial_asts)):
            if partial is None or not isinstance(arg, ir.Value) or id(arg) not in act:
                continue
            local = simplify(instantiate(partial, op.args, op.out, func.modules))
            contrib = simplify(ast.BinOp(g, ast.Mult(), local))
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
                adj[id(arg)] = namer.fresh(f"d{arg.name}")
            target = ast.Name(adj[id(arg)], ast.Store())
            node = (ast.Assign([target], contrib) if first
                    else ast.AugAssign(target, ast.Add(), contrib))
            partial_text = ast.unparse(local)
            reverse.append(Stmt(node, _comment(op, i, arg, partial_text), op, i, partial_text,
                                adj[id(arg)]))

    read: set[str] = set()
    for s in reverse:
        read |= names_read(s.node.value)
    tape_names = set(read)
    if with_value and isinstance(result, ir.Value):
        read.add(result.name)
    by_name = {op.out.name: op for op in func.body.ops}
    kept = analysis.needed_forward(func, {id(by_name[n].out) for n in read if n in by_name})
    forward = [Stmt(ast.Assign([ast.Name(op.out.name, ast.Store())],
                               instantiate(RULES[op.prim].forward_ast, op.args, None, func.modules)),
                    f"line {op.loc.line}: {op.text}", op) for op in kept]

    grads = [ast.Name(adj[id(v)], ast.Load()) if id(v) in adj else ast.Constant(0.0) for v in wrt]
    grad_expr = ast.Tuple(grads, ast.Load()) if tuple_result else grads[0]
    returns = (ast.Tuple([operand_expr(result, func.modules), grad_expr], ast.Load())
               if with_value else grad_expr)

    body: list[Stmt] = []
    if forward:
        body += [Stmt(None, "forward pass")] + forward
    if reverse:
        body += [Stmt(None, "reverse sweep")] + reverse
    tape = [op.out for op in kept if op.out.name in tape_names]
    prefix = "value_and_grad_" if with_value else "grad_"
    return CodeFunction(name or prefix + func.name, _arguments(func, seed), body, returns, func,
                        wrt, {v.name: adj[id(v)] for v in _values(func) if id(v) in adj},
                        tape, seed)


def _comment(op: ir.Op, i: int, arg: ir.Value, partial: str) -> str:
    side = ""
    if sum(1 for a in op.args if a is arg) > 1:
        side = " (left operand)" if i == 0 else " (right operand)"
    return f"line {op.loc.line}: {op.text}, ∂{op.out.name}/∂{arg.name} = {partial}{side}"


def _values(func: ir.Function):
    yield from func.param_values
    for op in func.body.ops:
        yield op.out


def _arguments(func: ir.Function, seed: str) -> ast.arguments:
    """The user's signature, defaults included, plus ``*, seed=1.0``."""
    positional = [p for p in func.params if not p.kwonly]
    kwonly = [p for p in func.params if p.kwonly]
    defaults = [const_expr(p.default, func.modules) for p in positional if p.has_default]
    kw_defaults = [const_expr(p.default, func.modules) if p.has_default else None for p in kwonly]
    return ast.arguments(
        posonlyargs=[], args=[ast.arg(p.value.name) for p in positional], vararg=None,
        kwonlyargs=[ast.arg(p.value.name) for p in kwonly] + [ast.arg(seed)],
        kw_defaults=kw_defaults + [ast.Constant(1.0)], kwarg=None, defaults=defaults)
