"""The reverse sweep explained, line by line.

Contract: :func:`explain_text` takes a lowered function and the
:class:`~s2s_ad.code.CodeFunction` made from it by
:func:`s2s_ad.reverse.transform` and returns plain text in three parts: the
forward pass
(nested as the loops and branches nest, with what each loop pushes onto the
tape), the reverse sweep (every generated statement, indented as the code
is, beside what it does: the forward op and local derivative it applies, the
value it pops, the recorded decision it branches on, the iterations a
reverse loop runs), and the adjoints, each with the uses it sums and, inside
a loop, whether it is kept across iterations or carried from one to the one
before. The same input always gives the same text.

Before → after, for ``for i in range(n): x = r * x * (1.0 - x)``::

    reverse sweep
      dx_1 = 1.0                seed: ∂x_1/∂x_1 = 1, x_1 is the result
      dr = 0.0                  starts at 0: the reverse of the loop at line 118 adds to it
      for _ in range(n):        reverse of `for i in range(n)` (line 118): ...
        x_1 = x_1_tape.pop()    x_1 as this iteration computed it: popped from x_1_tape
        dt1 = dx_1 * t2         ← x_2 = t1 * t2, ∂x_2/∂t1 = t2              line 119
"""

from __future__ import annotations

import ast
import os

from s2s_ad import ir, sweep
from s2s_ad.reverse import shifts
from s2s_ad.emit.code import CodeFunction
from s2s_ad.sweep import ControlSweep, Line, read, tape_of

STEP = "  "


def table(rows: list[tuple[str, ...]], indent: str = "  ") -> list[str]:
    """Rows of cells, each column padded to its widest cell that has another
    after it (a long last cell widens nothing)."""
    n = max(map(len, rows))
    widths = [max([len(r[i]) for r in rows if len(r) > i + 1] or [0]) for i in range(n)]
    out = []
    for r in rows:
        cells = [c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)]
        out.append((indent + "  ".join(cells)).rstrip())
    return out


def explain_text(func: ir.Function, code: CodeFunction) -> str:
    """The explanation (see the module docstring)."""
    sw = read(func, code)
    wrt = ", ".join(v.name for v in code.wrt)
    where = f"{os.path.basename(func.loc.file)}:{func.loc.line}"
    lines = [f"gradient of {func.name} ({where}) with respect to {wrt}", "", "forward pass"]
    pushed = {(line, text): names for line, text, names in code.loops}
    fwd: list[tuple[str, ...]] = []
    _forward(func.body, func, pushed, "", fwd)
    lines += table(fwd) if fwd else ["  (no operations)"]
    outputs = func.outputs if func.result is None and func.outputs is not None else None
    ret = f"({', '.join(map(repr, outputs))})" if outputs else repr(func.result)
    lines += [f"  return {ret}", "", "reverse sweep"]
    lines += ["  " + s.comment for s in shifts.note(func, func.scalars(code.wrt))]
    rows: list[tuple[str, ...]] = []
    _reverse(sw.lines, sw, "", rows)
    lines += table(rows) if rows else ["  (nothing: the result does not depend on " + wrt + ")"]
    lines += ["", "adjoints (each sums one contribution per use of its value)"]
    rows = _adjoints(sw)
    lines += table(rows) if rows else ["  (none)"]
    returns = code.returns.elts if isinstance(code.returns, ast.Tuple) else [code.returns]
    result = func.result.name if isinstance(func.result, ir.Value) else "out"
    grads = [f"∂{result}/∂{v.name} = {ast.unparse(g)}" for v, g in zip(code.wrt, returns)]
    lines += ["", "gradient: " + ", ".join(grads)]
    return "\n".join(lines) + "\n"


# -- the forward pass ------------------------------------------------------------

def _forward(region: ir.Region, func: ir.Function, pushed: dict, indent: str,
             rows: list) -> None:
    modules = func.modules
    for node in region.ops:
        if isinstance(node, ir.Op):
            rows.append((indent + sweep.forward_text(node, modules),
                         f"line {node.loc.line}: {node.text}"))
            continue
        line = f"line {node.loc.line}"
        if isinstance(node, ir.If):
            outs = ", ".join(o.name for o in node.outs)
            rows.append((f"{indent}if {node.cond!r}:", f"{line}: {node.text}"
                         + (f"; φ gives {outs}" if outs else "")))
            for side, r in (("", node.then), ("else:", node.orelse)):
                if side:
                    rows.append((indent + side,))
                _forward(r, func, pushed, indent + STEP, rows)
                for o, y in zip(node.outs, r.yields):
                    rows.append((f"{indent + STEP}→ {o.name} = {y!r}", "φ"))
            continue
        for c, i in zip(node.carried, node.inits):
            rows.append((f"{indent}{c.name} = {i!r}", "carried into the loop"))
        names = pushed.get((node.loc.line, node.text), [])
        tape = (f"; each iteration pushes {', '.join(names)} onto the tape" if names
                else "; pushes nothing")
        if isinstance(node, ir.For):
            what = (f"{node.seq!r}" if node.seq is not None else _range(node))
            rows.append((f"{indent}for {node.index.name} in {what}:",
                         f"{line}: {node.text}{tape}"))
        else:
            rows.append((f"{indent}while {node.cond.yields[0]!r}:", f"{line}: {node.text}{tape}"))
            _forward(node.cond, func, pushed, indent + STEP, rows)
        _forward(node.body, func, pushed, indent + STEP, rows)
        for c, y in zip(node.carried, node.body.yields):
            rows.append((f"{indent + STEP}{c.name} = {y!r}", "next iteration"))
        if node.exit:
            rows.append((f"{indent + STEP}stop if {node.body.yields[-1]!r}",
                         "a `break` or `return` ran"))
        if node.trips is not None:
            rows.append((f"{indent}{node.trips.name} = iterations run",
                         "kept for the reverse loop"))


def _range(node: ir.For) -> str:
    return f"range({', '.join(map(repr, ir.range_args(node)))})"


# -- the reverse sweep -------------------------------------------------------------

def _header(node) -> str:
    if isinstance(node, ir.While):
        return "while"
    return node.text or f"for {node.index.name}"


def _reverse(lines: list[Line], sw: ControlSweep, indent: str, rows: list) -> None:
    for line in lines:
        if line.kind == "loop":
            rows.append((indent + line.text, _loop_note(line, sw)))
            _reverse(line.body, sw, indent + STEP, rows)
        elif line.kind == "if":
            node = line.control
            test = line.block.head.test
            negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            side = "else side only: " if negated else ""
            rows.append((indent + line.text,
                         f"{side}the decision the forward pass took at line {node.loc.line} "
                         f"({node.text}), kept in {node.cond!r}"))
            _reverse(line.body, sw, indent + STEP, rows)
            if line.orelse:
                rows.append((indent + "else:",))
                _reverse(line.orelse, sw, indent + STEP, rows)
        else:
            rows.append((indent + _text(line, sw),) + _note(line, sw))


def _loop_note(line: Line, sw: ControlSweep) -> str:
    node = line.control
    head = line.block.head
    runs = ("the same iterations, last first" if "reversed" in ast.unparse(head.iter)
            else "as many iterations as the forward loop ran (its index is not read)")
    if isinstance(node, ir.While):
        runs = f"as many iterations as the forward loop ran, counted in {node.trips.name}"
    elif node.exit:
        runs += f" (up to where it stopped, counted in {node.trips.name})"
    pops = [b for b in line.body if b.kind == "pop"]
    slots = all(isinstance(b.expr, ast.Subscript) for b in pops)
    return (f"reverse of `{_header(node)}` (line {node.loc.line}): {runs}"
            + ("" if not pops else "; each reads the tape slots its forward iteration wrote" if slots
               else "; each pops what its forward iteration pushed"))


def _text(line: Line, sw: ControlSweep) -> str:
    if line.kind == "seed":
        return f"{sw.seed} = 1.0"
    if line.folded:  # (the statement above does it: `dx = added_into(c, x, i, g)`)
        return f"  and {line.text} (in added_into)"
    return line.text


def _note(line: Line, sw: ControlSweep) -> tuple[str, ...]:
    modules = sw.func.modules
    k = line.kind
    if k == "seed":
        v = sw.func.result.name
        return (f"seed: ∂{v}/∂{v} = 1, {v} is the result",)
    if k in ("derivative", "call", "add", "item"):
        op = line.op
        at = f"line {op.loc.line}"
        fwd = f"← {sweep.forward_text(op, modules)}"
        if k == "call":
            cot = ast.unparse(line.expr.args[1])
            return (f"{fwd}, {cot} · {sweep.derivative_text(op, None, modules)}, "
                    f"by {op.callee.name}'s backward pass", at)
        if k == "add":
            arg = line.stmt.comment.rsplit(", another use of ", 1)[-1]
            param = (f" (parameter {sweep.param_names(op)[line.operand]})"
                     if line.operand is not None else "")
            return (f"{fwd}, another use of {arg}{param}", at)
        if k == "item":
            return (f"{fwd}, item {op.args[1].value} read again", at)
        arg = op.args[line.operand]
        step = sweep.Step(op, line.operand, arg, line.stmt.partial, line.stmt)
        side = f" ({step.side})" if step.side else ""
        return (f"{fwd}, ∂{op.out.name}/∂{arg.name}{step.local}{side}", at)
    node = line.control
    where = f"line {node.loc.line}" if node is not None else ""
    what = "loop" if isinstance(node, (ir.For, ir.While)) else "branch"
    if k == "zero":
        if node is None and line.stmt.comment.startswith("the adjoint of "):
            return (f"one adjoint per item: {line.stmt.comment}",)
        if node is None:
            return (f"starts at 0: {line.stmt.comment}",)
        if isinstance(node, (ir.For, ir.While)) and line.writes and not _added_in(line, sw):
            return ("starts at 0: the value does not reach the result after the loop at "
                    f"{where}",)
        return (f"starts at 0: the reverse of the {what} at {where} adds to it",)
    if k == "phi":
        return (f"{line.stmt.comment}: on this side the adjoint passes to it",)
    if k == "carry":
        return (f"{line.stmt.comment} (the loop at {where})",)
    if k == "init":
        return (f"after the loop at {where}: {line.stmt.comment}",)
    if k == "pop":
        how = "read from" if isinstance(line.expr, ast.Subscript) else "popped from"
        return (f"{line.writes[0]} as this iteration computed it: {how} {tape_of(line)}",)
    if k == "recompute":
        return (f"{sweep.forward_text(line.op, modules)} recomputed (cheaper than taping it)",
                f"line {line.op.loc.line}")
    if k == "restore":
        stack = line.expr.func.value.id
        return (f"{line.writes[0]} as it was before the write (its old elements popped from "
                f"{stack})", f"line {line.op.loc.line}")
    if k == "inplace":
        return (f"{line.stmt.comment} (s2s_ad/reverse/inplace.py)",)
    if k == "shape":
        return (line.stmt.comment,)
    return (line.stmt.comment,)


def _added_in(line: Line, sw: ControlSweep) -> bool:
    return any(x.adds and line.writes[0] in x.writes for x in sw.walk())


# -- the adjoints -------------------------------------------------------------------

def _adjoints(sw: ControlSweep) -> list[tuple[str, ...]]:
    """One row per adjoint variable: the uses whose contributions it sums."""
    modules = sw.func.modules
    names = sw.adjoint_names
    order: list[str] = []
    uses: dict[str, list[tuple[bool, str]]] = {}
    for line in sw.walk():
        if line.kind in ("pop", "recompute", "restore", "loop", "if"):
            continue
        for k, name in enumerate(line.writes):
            if name not in names:
                continue
            if name not in order:
                order.append(name)
            if line.kind == "item":
                # ``dt_0_1 = dt_0 + da``: every read of the item, summed at once
                for use in _item_reads(line.op, sw.func, modules):
                    uses.setdefault(name, []).append((True, use))
                continue
            use = _use(line, k, modules)
            if use:
                uses.setdefault(name, []).append((line.adds, use))
    rows = []
    for name in order:
        # a run of contributions summed: one set, then the adds that follow it
        groups: list[list[str]] = []
        for adds, use in uses.get(name, []):
            if not adds or not groups:
                groups.append([])
            if use not in groups[-1]:
                groups[-1].append(use)
        if not groups:
            what = "(nothing)"
        elif len(groups) == 1:
            (g,) = groups
            what = f"sums {len(g)} uses: " + "; ".join(g) if len(g) > 1 else g[0]
        else:
            what = "; ".join("from " + ", plus ".join(g) for g in groups)
        rows.append((name, what, _across(name, sw)) if _across(name, sw) else (name, what))
    return rows


def _item_reads(op: ir.Op, func: ir.Function, modules) -> list[str]:
    """The reads ``t[k]`` of the tuple item ``op`` reads, last first (the
    reverse sweep's order)."""
    tup, k = op.args[0], op.args[1].value
    reads = [n for n in ir.walk(func.body) if isinstance(n, ir.Op) and n.prim == "item"
             and n.args[0] is tup and n.args[1].value == k]
    return [f"{sweep.forward_text(n, modules)} (line {n.loc.line})" for n in reversed(reads)]


def _use(line: Line, k: int, modules) -> str:
    kind = line.kind
    if kind == "seed":
        return "seed"
    if kind in ("derivative", "call", "add", "item"):
        op = line.op
        side = ""
        if kind == "derivative":
            arg = op.args[line.operand]
            if sum(a is arg for a in op.args) > 1:
                side = ", " + ("left", "right")[line.operand] + " operand" \
                    if len(op.args) == 2 else f", operand {line.operand}"
        elif kind == "call":
            side = f", parameter {sweep.param_names(op)[k]}"
        elif kind == "add" and line.operand is not None:
            side = f", parameter {sweep.param_names(op)[line.operand]}"
        return f"{sweep.forward_text(op, modules)} (line {op.loc.line}{side})"
    if kind == "zero" or kind == "inplace" and not line.adds:
        return ""
    if kind == "carry":
        return "carried from " + ", ".join(line.reads)
    return line.stmt.comment


def _across(name: str, sw: ControlSweep) -> str:
    """For an adjoint written inside a reverse loop: how it lives across iterations."""
    notes = []
    for loop in sw.walk():
        if loop.kind != "loop":
            continue
        inside = list(sw.walk(loop.body))
        writes = [x for x in inside if name in x.writes and x.kind not in ("pop", "recompute", "restore")]
        if not writes:
            continue
        line = f"line {loop.control.loc.line}"
        if all(x.adds for x in writes):
            notes.append(f"kept across the iterations of {line}: each adds to it")
            continue
        first_read = next((i for i, x in enumerate(inside) if name in x.reads), None)
        first_write = next(i for i, x in enumerate(inside) if x in writes)
        if first_read is not None and first_read <= first_write:
            notes.append(f"carried through {line}: each reverse iteration reads it and "
                         "sets it for the iteration before")
        else:
            notes.append(f"set anew in each iteration of {line}")
    return "; ".join(notes)
