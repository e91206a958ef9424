"""Slices of a list of any length: ``xs[1:]``, ``xs[:-1]``, ``xs[a:b]``, ``xs[::-1]``.

Contract: :func:`subscript` lowers ``xs[a:b:c]`` where ``xs`` is a list whose
length is known only when the code runs (a list parameter of any length, a
list grown at run time or made by ``[c] * n``, a list a helper returned) as
the loop the slice stands for: the items at the positions Python's slice picks,
appended to a new list grown at run time. The positions are a ``range`` whose
bounds are integer arithmetic on ``len(xs)`` computed when the code runs, the
same clamping Python's slices make (a bound past either end, a negative bound
counted from the end); the step must be a constant int, not 0. The result is
read like any list grown at run time (by index, ``len``, ``sum``, loops,
``zip``, stacked, passed to helpers); its adjoint scatters back into ``xs``'s
adjoint item by item (``dxs[k] += ...``: each item read is an ``xs[k]``).
Inside a loop or branch the slice is a list of that run of the body. Any
other slice (of a tuple or list known while lowering) is
:func:`s2s_ad.frontend.structures.slice_of`'s.

Before → after, for ``ys = xs[1:]``::

    n = len(xs)
    start = min(1, n)
    ys = []
    for k in range(start, n):
        ys.append(xs[k])
"""

from __future__ import annotations

import ast
import builtins
import copy
import types

from s2s_ad import ir
from s2s_ad.frontend import checkpoint, structures
from s2s_ad.syntax_walk import walk


def subscript(lo, node: ast.Subscript, var: str | None, params: bool = False):
    """``base[a:b:c]``: a list grown at run time when ``base`` is a list of any
    length (with ``params``, a list parameter of a known length too)."""
    base = lo.expr(node.value)
    param = lo.sequence_param(base) if params and isinstance(base, structures.StaticList) \
        else None
    if param is not None:
        base = param.value
    part = node.slice
    known = param is None and _run_time_bounds(lo, base, part)
    if param is None and not known and not (isinstance(base, ir.Value) and base.kind == "list"
            and (structures.is_runtime(lo, base) or id(base) in lo.grown)):
        return structures.slice_of(lo, base, node)
    step = 1 if part.step is None else structures._static_int(lo, part.step)
    if step is None or step == 0:
        raise lo.src.error(part.step or node, "the step of a slice of a list of any length "
                           "must be a constant int other than 0 (`xs[::2]`, `xs[::-1]`)")
    bound: dict[str, ir.Operand] = {}
    names: list[str] = []

    def name_for(value, base_name: str) -> str:
        n = _unused(lo, base_name, names)
        names.append(n)
        lo.env[n] = value
        bound[n] = value
        return n

    seq = node.value.id if isinstance(node.value, ast.Name) else name_for(base, "seq")
    n = str(len(base.items)) if known else \
        name_for(lo.emit("len", [base], node, text=f"len({ast.unparse(node.value)})"), "n")
    start = _bound(lo, part.lower, step, n, True, name_for)
    stop = _bound(lo, part.upper, step, n, False, name_for)
    items = _unused(lo, var or (f"{seq}_slice" if seq != "seq" else "items"), names)
    k = _unused(lo, "k", names + [items])
    text = f"{items} = []\nfor {k} in range({start}, {stop}, {step}):\n" \
           f"    {items}.append({seq}[{k}])\n"
    stmts = ast.parse(text).body
    for stmt in stmts:
        for sub in walk(stmt):
            sub.lineno, sub.col_offset = node.lineno, node.col_offset
            sub.end_lineno, sub.end_col_offset = node.end_lineno, node.end_col_offset
    try:
        checkpoint.expression_block(lo, stmts)
        out = lo.env[items]
    finally:
        for name in names + [items, k]:
            lo.env.pop(name, None)
    return out


def _run_time_bounds(lo, base, part: ast.Slice) -> bool:
    """Is ``base`` a list built in the function (its items known while
    lowering) sliced at bounds known only as the code runs (``xs[:n]``,
    ``xs[i:len(xs) - 1]``)? The slice is then the same loop, over the list's
    known length, each item read at a run-time index
    (:mod:`s2s_ad.frontend.run_time_index`)."""
    return isinstance(base, structures.StaticList) and not all(
        b is None or structures._static_int(lo, b) is not None
        for b in (part.lower, part.upper))


def is_runtime_slice(lo, node: ast.expr, params: bool = False) -> bool:
    """Is ``node`` a slice of a list of any length bound to a name (``xs[1:]``;
    with ``params``, of a list parameter of a known length too), or of a list
    built in the function at bounds known only as the code runs?"""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)
            and isinstance(node.value, ast.Name)):
        return False
    value = lo.env.get(node.value.id)
    if _run_time_bounds(lo, value, node.slice):
        return True
    if params and isinstance(value, structures.StaticList) and lo.sequence_param(value) \
            is not None:
        return True
    return isinstance(value, ir.Value) and value.kind == "list" \
        and (structures.is_runtime(lo, value) or id(value) in lo.grown)


def iterated(lo, loop: ast.For) -> tuple[ast.For, list[str]]:
    """``for a, b in zip(xs[:-1], xs[1:])``: each slice of a list of any length
    the loop iterates over (directly, or inside ``zip``/``enumerate``/
    ``reversed``) lowered before the loop, as a list of its own bound to a new
    name, so the loop iterates over lists. ``zip(*parts)``, ``parts`` a tuple
    or list known while lowering (``zip(*unpack(params))``, a helper returning
    a tuple), is lowered once, before the loop, and each of its items bound to
    a new name, as ``zip(parts[0], parts[1], ...)``. Returns the loop (a copy,
    when an argument was replaced) and the names to forget after it."""
    temps: list[str] = []

    def spread(node: ast.Starred) -> list[ast.expr]:
        items = structures.items_of(lo, lo.expr(node.value), node.value)
        names = []
        for k, item in enumerate(items):
            name = f"{ast.unparse(node.value)}[{k}]"  # (a text no variable can have)
            lo.env[name] = item
            temps.append(name)
            names.append(ast.copy_location(ast.Name(name, ast.Load()), node))
        return names

    def replace(node: ast.expr) -> ast.expr:
        if _made_here(node) or _joined(lo, node) or _slice_of_a_call(lo, node):
            # `for i in list(range(n))[1:]`, `for v in [f(t) for t in xs]`: Python
            # makes the list once, before the loop; the loop iterates over it by name
            name = ast.unparse(node)
            lo.env[name] = lo.expr(node)
            temps.append(name)
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        if is_runtime_slice(lo, node, params=True):
            # (a list parameter of a known length too: a loop reads it by position)
            value = subscript(lo, node, None, params=True)
            # bound under the slice's own text, which no variable can have: the
            # loop's comments then read as the source does (`zip(xs[:-1], xs[1:])`)
            name = ast.unparse(node)
            lo.env[name] = value
            temps.append(name)
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id not in lo.env \
                and lo.resolve(node.func) in (builtins.zip, builtins.enumerate, builtins.reversed):
            args = [b for a in node.args for b in (
                spread(a) if isinstance(a, ast.Starred) and lo.resolve(node.func) is builtins.zip
                else [replace(a)])]
            if len(args) != len(node.args) or any(a is not b for a, b in zip(args, node.args)):
                node = copy.copy(node)
                node.args = args
        return node

    it = replace(loop.iter)
    if it is loop.iter:
        return loop, temps
    loop = copy.copy(loop)
    loop.iter = it
    return loop, temps


def _made_here(node: ast.expr) -> bool:
    """A list the loop's header makes (``list(...)`` is a comprehension by
    now, :mod:`s2s_ad.frontend.list_forms`): a comprehension or ``[c] * n``,
    or a slice or an index of one or of a list display (``for v in [a,
    b][::-1]``; a display itself is iterated as it is)."""
    sliced = False
    while isinstance(node, ast.Subscript):
        node, sliced = node.value, True
    return isinstance(node, ast.ListComp) or sliced and isinstance(node, ast.List) \
        or isinstance(node, ast.BinOp) and structures.repeated(node) is not None  # `[c] * n`


def _joined(lo, node: ast.expr) -> bool:
    """``xs + ys`` (``[a] + xs + ys``...) of lists: a display, a comprehension,
    a name holding a list (known while lowering, grown at run time, or a
    list parameter) or a join of those. A loop's header making it (``for z
    in xs + ys``) makes the joined list once, before the loop, as Python
    does."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False
    return all(_a_list(lo, side) for side in (node.left, node.right))


def _a_list(lo, node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.ListComp)) or _joined(lo, node):
        return True
    value = lo.env.get(node.id) if isinstance(node, ast.Name) else None
    if isinstance(value, ir.Value) and value.kind == "float" and id(value) in lo.param_ids:
        # a parameter lowered as a number, joined and iterated: a list (lowered again)
        structures._param_used_as_sequence(lo, value, node)
    return isinstance(value, structures.StaticList) or id(value) in lo.seq_params \
        or isinstance(value, ir.Value) and value.kind == "list"


def _slice_of_a_call(lo, node: ast.expr) -> bool:
    """``h(x)[1:]``, ``h(x)[::-1]``: a slice of what a function of the user's
    returns (a tuple or list, or an array in NumPy code), made once before
    the loop as Python makes it."""
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) \
        and isinstance(node.value, ast.Call) \
        and isinstance(lo.resolve(node.value.func), types.FunctionType)


def _bound(lo, node: ast.expr | None, step: int, n: str, lower: bool, name_for) -> str:
    """The text of the range bound Python's slice takes for ``node``
    (the slice's lower or upper bound) on a list of length ``n``."""
    if node is None:
        if step > 0:
            return "0" if lower else n
        return f"{n} - 1" if lower else "-1"
    # the clamp of a bound at or past either end: [0, n] going up, [-1, n - 1] down
    low, high = ("0", n) if step > 0 else ("-1", f"{n} - 1")
    fixed = structures._static_int(lo, node)
    if fixed is not None:
        return f"min({fixed}, {high})" if fixed >= 0 else f"max({n} - {-fixed}, {low})"
    value = lo.expr(node)
    # (a parameter lowered as a number, or in NumPy code as an array, is an
    # int here, as in `range(n)`; a float bound raises in `range`, as
    # Python's slice raises)
    if not (isinstance(value, ir.Value) and value.kind in ("int", "float", "array")
            or isinstance(value, ir.Const) and type(value.value) is int):
        raise lo.src.error(node, "a slice bound must be an integer (a loop variable, "
                           "`len(xs)`, integer arithmetic on them)")
    lo.mark_int(value, node, "a slice bound")
    a = name_for(value, "a" if lower else "b")
    return f"(max(min({a}, {high}), {low}) if {a} >= 0 else max({a} + {n}, {low}))"


def _unused(lo, base: str, also: list[str]) -> str:
    """A name neither the environment, the generated code nor ``also`` uses yet."""
    name, k = base, 0
    while name in lo.env or name in lo.namer.taken or name in lo.local_fns or name in also:
        k += 1
        name = f"{base}_{k}"
    return name
