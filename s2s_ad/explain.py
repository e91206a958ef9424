"""The reverse sweep explained: each line beside the forward op and local derivative it applies.

Contract: :func:`explain_text` takes the forward :class:`~s2s_ad.ir.Function`
and the :class:`~s2s_ad.code.CodeFunction` made from it by
:func:`s2s_ad.reverse.transform` and returns plain text in three parts: the
forward pass, the reverse sweep (one line per local derivative, in the order
the generated code runs them, beside ``← forward op, ∂out/∂operand = partial``),
and the adjoints, each with the consumers whose contributions it sums. The
same input always gives the same text. A function with loops or branches
is explained by :mod:`s2s_ad.explain_control`, in the same three parts.

Before → after, for ``b = x * x; y = a * b`` with respect to ``a, x``::

    reverse sweep
      dy = 1.0            seed: y is the result
      da = dy * b         ← y = a * b, ∂y/∂a = b                  line 10
      ...
      dx += db * x        ← b = x * x, ∂b/∂x = x (right operand)  line 9
    adjoints
      dx = db * x + db * x    sums 2 uses of x: b = x * x (left operand), ...
"""

from __future__ import annotations

import ast
import os

from . import explain_control, ir, shifts, sweep
from .code import CodeFunction
from .sweep_control import statement_text

GAP = 2


def _table(rows: list[tuple[str, ...]], indent: str = "  ") -> list[str]:
    """Rows of cells, each column padded to its widest cell."""
    widths = [max(len(r[i]) for r in rows if len(r) > i) for i in range(max(map(len, rows)))]
    out = []
    for r in rows:
        cells = [c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)]
        out.append((indent + (" " * GAP).join(cells)).rstrip())
    return out


def explain_text(func: ir.Function, code: CodeFunction) -> str:
    """The explanation of ``code``'s reverse sweep (see the module docstring)."""
    if True:  # EXPERIMENT
        return explain_control.explain_text(func, code)
    sw = sweep.read(func, code)
    modules = func.modules
    wrt = ", ".join(v.name for v in code.wrt)
    where = f"{os.path.basename(func.loc.file)}:{func.loc.line}"
    lines = [f"gradient of {func.name} ({where}) with respect to {wrt}", "", "forward pass"]
    fwd = [(sweep.forward_text(op, modules), f"line {op.loc.line}: {op.text}")
           for op in func.body.ops]
    lines += _table(fwd) if fwd else ["  (no operations)"]
    lines += [f"  return {func.result!r}", "", "reverse sweep"]
    lines += ["  " + s.comment for s in shifts.note(func, func.scalars(code.wrt))]

    rows: list[tuple[str, ...]] = []
    for adj in sw.adjoints:
        if adj.seeded:
            rows.append((f"{adj.name} = 1.0", f"seed: ∂{adj.value.name}/∂{adj.value.name} = 1, "
                         f"{adj.value.name} is the result"))
    rows += [(statement_text(s.node), s.comment) for s in sw.seed_steps]
    calls: set[int] = set()
    for step in sw.steps:
        out, arg = step.op.out.name, step.value.name
        line = f"line {step.op.loc.line}"
        if step.is_call:
            call = step.stmt.node.value
            if id(step.stmt) not in calls:
                calls.add(id(step.stmt))
                rows.append((statement_text(step.stmt.node),
                             f"← {sweep.forward_text(step.op, modules)}, {ast.unparse(call.args[1])} · "
                             f"{sweep.derivative_text(step.op, None, modules)}, "
                             f"by {step.op.callee.name}'s backward pass", line))
            if step.add is not None:
                rows.append((statement_text(step.add.node), f"← {sweep.forward_text(step.op, modules)}"
                             f", another use of {arg} ({step.side})", line))
            continue
        side = f" ({step.side})" if step.side else ""
        why = (f"← {sweep.forward_text(step.op, modules)}, ∂{out}/∂{step.target}"
               f"{step.local}{side}")
        if step.add is not None:
            # a tuple item read twice: its adjoint sums both reads
            text = statement_text(step.add.node)
            why += f", item {step.item} read again"
        elif step.stmt is None:
            text = f"(no code: {step.target}'s adjoint is {sw.adjoint(step.op.out).name})"
        else:
            text = statement_text(step.stmt.node)
        rows.append((text, why, line))
    lines += _table(rows) if rows else ["  (nothing: the result does not depend on " + wrt + ")"]

    lines += ["", "adjoints (each sums one contribution per use of its value)"]
    rows = [_adjoint_row(adj, sw) for adj in sw.adjoints]
    lines += _table(rows) if rows else ["  (none)"]
    grads = []
    items = {id(p.value): p.items for p in func.params if p.items is not None}
    for v in code.wrt:
        names = [a.name if a else "0.0" for a in (sw.adjoint(x) for x in items.get(id(v), [v]))]
        total = names[0] if id(v) not in items else f"[{', '.join(names)}]"
        grads.append(f"∂{_result_name(func)}/∂{v.name} = {total}")
    lines += ["", "gradient: " + ", ".join(grads)]
    return "\n".join(lines) + "\n"


def _adjoint_row(adj: sweep.Adjoint, sw: sweep.Sweep) -> tuple[str, ...]:
    v = adj.target
    if adj.seeded and not adj.steps:
        return (v, f"{adj.name} = 1.0", f"seed: {v} is the result")
    if len(adj.steps) == 1 and adj.steps[0].stmt is None:
        total = f"{adj.name} (shared, no code)"
    else:
        terms = (["seed"] if adj.seeded else []) + [_term(s, sw) for s in adj.steps]
        if len(terms) == 1 and adj.steps[0].stmt is not None and not adj.steps[0].is_call:
            terms = [adj.steps[0].expr]
        total = f"{adj.name} = " + " + ".join(terms)
    uses = [f"{sweep.forward_text(s.op, sw.func.modules)}"
            f" (line {s.op.loc.line}{', ' + s.side if s.side else ''})" for s in adj.steps]
    n = len(adj.steps)
    what = f"sums {n} uses: " if n > 1 else "from its one use: "
    return (v, total, what + "; ".join(uses))


def _term(step: sweep.Step, sw: sweep.Sweep) -> str:
    """One contribution inside a sum, parenthesised where ``+`` would bind tighter."""
    if step.is_call:
        return f"{step.stmt.node.value.func.id}(…)[{step.operand}]"
    if step.stmt is None:
        return sw.adjoint(step.op.out).name
    if isinstance(ast.parse(step.expr, mode="eval").body,
                  (ast.IfExp, ast.Compare, ast.BoolOp, ast.Lambda)):
        return f"({step.expr})"
    return step.expr


def _result_name(func: ir.Function) -> str:
    return func.result.name if isinstance(func.result, ir.Value) else "out"
