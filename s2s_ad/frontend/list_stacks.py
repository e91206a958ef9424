"""``np.stack``/``np.array`` of a list of any length: the rows written into
an array, as a loop.

Contract: :func:`stack` lowers ``np.stack(ys, axis=k)`` and ``np.array(ys)``
(``k = 0``), ``ys`` a list whose length is known only when the code runs (a
list grown with ``append``, a comprehension over an array's rows or over
such a list, a list a helper returned), as the statements it stands for,
lowered in place::

    rows = np.zeros((len(ys), *np.shape(ys[0])), dtype=ys[0].dtype)  # (its result_type)
    for k in range(len(ys)):
        rows[k] = ys[k]
    # k != 0: np.moveaxis(rows, 0, k)

so the reverse sweep is that of writes into a new array: item ``k``'s
adjoint is row ``k`` of the result's. The rows must have one shape, as
NumPy's ``stack`` requires: the loop checks each row's shape before it
writes it (a row of shape ``(1,)`` would otherwise be broadcast into its
slot) and raises NumPy's ``ValueError``. An empty list raises ``IndexError`` where
NumPy raises ``ValueError``. A list of numbers in a function of floats
(no array mode) is left to the caller's refusal; ``np.concatenate``,
``np.hstack`` and ``np.vstack`` of such a list are
:mod:`s2s_ad.frontend.list_joins`'s (with an axis known only when the code
runs, or ``axis=None``, refused, located).
"""

from __future__ import annotations

import ast
import builtins

import numpy

from s2s_ad import ir
from s2s_ad.frontend import checkpoint
from s2s_ad.syntax_walk import walk


def stack(lo, seq: ir.Value, axis, node: ast.Call, var: str | None) -> ir.Operand:
    """``np.stack(seq, axis)`` for ``seq`` a list of any length (an IR value
    of kind ``"list"``)."""
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise lo.src.error(node, "`np.stack` of a list of any length takes a constant int axis")
    np_name = _numpy_name(lo)
    # the list by its own name where it has one (the generated comments read so)
    named = seq.var is not None and lo.env.get(seq.var) is seq
    items = seq.var if named else _fresh(lo, "items")
    rows = _fresh(lo, var or "stacked")
    k = _fresh(lo, "k")
    lo.env[items] = seq

    def n(name):
        return ast.Name(name, ast.Load())

    def np_call(attr, *args, **kw):
        return ast.Call(ast.Attribute(n(np_name), attr, ast.Load()), list(args),
                        [ast.keyword(a, v) for a, v in kw.items()])

    first = ast.Subscript(n(items), ast.Constant(0), ast.Load())
    count = ast.Call(n("len"), [n(items)], [])
    shape = ast.Tuple([count, ast.Starred(np_call("shape", first), ast.Load())], ast.Load())
    make = ast.Assign([ast.Name(rows, ast.Store())],
                      np_call("zeros", shape, dtype=ast.Attribute(first, "dtype", ast.Load())))
    write = ast.Assign([ast.Subscript(n(rows), n(k), ast.Store())],
                       ast.Subscript(n(items), n(k), ast.Load()))
    # a row of another shape would be broadcast into its slot: NumPy's stack refuses it
    check = ast.parse(f"if {np_name}.shape({items}[{k}]) != {np_name}.shape({rows}[{k}]):\n"
                      "    raise ValueError('all input arrays must have the same shape')").body[0]
    loop = ast.For(ast.Name(k, ast.Store()), ast.Call(n("range"), [count], []), [check, write], [])
    # an empty list: NumPy's own error, not an IndexError from reading item 0
    empty = ast.parse(f"if len({items}) == 0:\n"
                      "    raise ValueError('need at least one array to stack')").body[0]
    stmts = [empty, make, loop]
    for s in stmts:
        for m in walk(s):
            m.lineno, m.col_offset = node.lineno, node.col_offset
            m.end_lineno, m.end_col_offset = node.end_lineno, node.end_col_offset
    # the statements' own array, made just before its rows are written: a
    # function with a loop from here on
    owned, flow = lo.__dict__.get("owned_arrays", frozenset()), lo.control_flow
    lo.owned_arrays, lo.control_flow = owned | {rows}, True
    said, lo.write_text = lo.__dict__.get("write_text"), ast.unparse(node)
    try:
        checkpoint.expression_block(lo, stmts)
        out = lo.env[rows]
        if axis != 0:
            moved = ast.copy_location(np_call("moveaxis", n(rows), ast.Constant(0),
                                              ast.Constant(axis)), node)
            for m in walk(moved):
                ast.copy_location(m, node)
            out = lo.expr(moved)
    finally:
        lo.owned_arrays, lo.control_flow, lo.write_text = owned, flow, said
        for name in (rows, k) if named else (items, rows, k):
            lo.env.pop(name, None)
    return out


def refuse_join(lo, what: str, node: ast.Call) -> None:
    raise lo.src.error(node, f"`{what}` of a list of any length is not supported (its items' "
                       "lengths along the axis are known only when the code runs); "
                       "`np.stack` of it is, or join a list written out (`[a, b]`)")


def _numpy_name(lo) -> str:
    """A global name bound to NumPy where the function is read."""
    for name, obj in lo.src.globals.items():
        if obj is numpy and name not in lo.env:
            return name
    name = _fresh(lo, "np")
    lo.src.globals = dict(lo.src.globals)
    lo.src.globals[name] = numpy
    return name


def _fresh(lo, base: str) -> str:
    name, k = f"_{base}", 0
    while name in lo.env or name in lo.namer.taken or name in lo.src.globals:
        k += 1
        name = f"_{base}_{k}"
    return name


def shapes_joined(lo, node: ast.BinOp, var, hint) -> ir.Operand | None:
    """``tuple(a) + tuple(b)``, shapes joined as s2s-ad's generated code
    writes ``(n, *x.shape)``: one ``tuple.concat`` op; None for other sums."""
    def unwrapped(e):
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and len(e.args) == 1 \
                and not e.keywords and e.func.id not in lo.env \
                and lo.resolve(e.func) is builtins.tuple:
            return e.args[0]
        return None

    left, right = unwrapped(node.left), unwrapped(node.right)
    if left is None or right is None:
        return None
    parts = []
    for e in (left, right):
        v = lo.expr(e)
        if isinstance(v, tuple):
            v = lo.emit("tuple", list(v), node)
        elif not (isinstance(v, ir.Value) and v.kind in ("tuple", "int")):
            raise lo.src.error(e, "`tuple(...) + tuple(...)` joins shapes here (tuples of ints)")
        parts.append(v)
    return lo.emit("tuple.concat", parts, node, var, hint=hint)
