"""``np.concatenate``/``np.hstack``/``np.vstack`` of a list of any length: the
pieces written into an array at running offsets, as loops.

Contract: :func:`join` lowers ``np.concatenate(ys, axis=a)`` (``a`` a constant
int, negative too), ``ys`` a list of arrays whose length is known only when
the code runs (a list grown with ``append``, a comprehension, a slice, a list
a helper returned; ``torch.cat`` is read as ``np.concatenate``), as the
statements it stands for, lowered in place::

    total = 0
    for k in range(len(ys)):
        total = total + np.shape(ys[k])[a]
    joined = np.zeros((*np.shape(ys[0])[:a], total, *np.shape(ys[0])[a + 1:]),
                      dtype=ys[0].dtype)
    off = 0
    for k in range(len(ys)):
        m = np.shape(ys[k])[a]
        if np.shape(ys[k]) != np.shape(joined[:, ..., off:off + m]):
            raise ValueError(...)
        joined[:, ..., off:off + m] = ys[k]
        off = off + m

The pieces may have different lengths along the axis (known only when the
code runs). The reverse sweep is that of writes into a new array by slices:
piece ``k``'s adjoint is the slice of the result's adjoint at its running
offset (plain subscripts, so an adjoint of another array library dispatches
as it does). The check keeps NumPy's rule that the pieces agree off the axis
and in rank (a piece that would broadcast into its slot raises, as
``np.concatenate`` does). ``np.hstack`` is the join along axis 0 for pieces of
one axis and axis 1 otherwise, ``np.vstack`` ``np.stack`` of pieces of one
axis and the join along axis 0 otherwise (decided by the first piece's rank
where the code runs). An empty list raises ``IndexError`` where NumPy raises
``ValueError``; the result has the first piece's dtype.
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.frontend import checkpoint, list_stacks
from s2s_ad.syntax_walk import walk


def join(lo, seq: ir.Value, what: str, axis, node: ast.Call, var: str | None) -> ir.Operand:
    """``what`` (``np.concatenate``, ``np.hstack``, ``np.vstack``) of ``seq``,
    a list of any length."""
    if what.endswith("concatenate") and (not isinstance(axis, int) or isinstance(axis, bool)):
        raise lo.src.error(node, f"`{what}` of a list of any length takes a constant int axis "
                           "(not None: flatten the pieces first)")
    np_name = list_stacks._numpy_name(lo)
    named = seq.var is not None and lo.env.get(seq.var) is seq
    items = seq.var if named else list_stacks._fresh(lo, "items")
    lo.env[items] = seq
    chosen = []
    for base in (var or "joined", "total", "off", "m", "k"):
        name = list_stacks._fresh(lo, base)
        lo.env[name] = None  # (taken: the next name is another)
        chosen.append(name)
    out, names = chosen[0], chosen[1:]
    for name in chosen:
        del lo.env[name]
    if what.endswith("concatenate"):
        stmts = _joined(np_name, items, out, names, axis)
    else:
        one_axis = _parse(f"{np_name}.ndim({items}[0]) == 1")
        if what.endswith("hstack"):
            first = _joined(np_name, items, out, names, 0)
        else:
            first = [ast.parse(f"{out} = {np_name}.stack({items})").body[0]]
        stmts = [ast.If(one_axis, first, _joined(np_name, items, out, names,
                                                  1 if what.endswith("hstack") else 0))]
    # an empty list: NumPy's own error, not an IndexError from reading item 0
    stmts = [ast.parse(f"if len({items}) == 0:\n"
                       "    raise ValueError('need at least one array to concatenate')"
                       ).body[0]] + stmts
    for s in stmts:
        for m in walk(s):
            m.lineno, m.col_offset = node.lineno, node.col_offset
            m.end_lineno, m.end_col_offset = node.end_lineno, node.end_col_offset
    owned, flow = lo.__dict__.get("owned_arrays", frozenset()), lo.control_flow
    lo.owned_arrays, lo.control_flow = owned | {out}, True
    said, lo.write_text = lo.__dict__.get("write_text"), ast.unparse(node)
    try:
        checkpoint.expression_block(lo, stmts)
        result = lo.env[out]
    finally:
        lo.owned_arrays, lo.control_flow, lo.write_text = owned, flow, said
        for name in [out, *names] + ([] if named else [items]):
            lo.env.pop(name, None)
    return result


def _joined(np_name: str, items: str, out: str, names: list[str], axis: int) -> list[ast.stmt]:
    """The statements joining ``items`` along ``axis`` into ``out``."""
    total, off, m, k = names
    first = f"{np_name}.shape({items}[0])"
    if axis == 0:
        shape = f"({total}, *{first}[1:])"
    elif axis == -1:
        shape = f"(*{first}[:-1], {total})"
    else:
        shape = f"(*{first}[:{axis}], {total}, *{first}[{axis + 1}:])"
    piece = f"{off}:{off} + {m}"
    index = (", ".join([":"] * axis + [piece]) if axis >= 0
             else ", ".join(["...", piece] + [":"] * (-axis - 1)))
    why = "the arrays joined must agree in rank and off the joined axis"
    text = (f"{total} = 0\n"
            f"for {k} in range(len({items})):\n"
            f"    {total} = {total} + {np_name}.shape({items}[{k}])[{axis}]\n"
            f"{out} = {np_name}.zeros({shape}, dtype={items}[0].dtype)\n"
            f"{off} = 0\n"
            f"for {k} in range(len({items})):\n"
            f"    {m} = {np_name}.shape({items}[{k}])[{axis}]\n"
            f"    if {np_name}.shape({items}[{k}]) != {np_name}.shape({out}[{index}]):\n"
            f"        raise ValueError({why!r})\n"
            f"    {out}[{index}] = {items}[{k}]\n"
            f"    {off} = {off} + {m}\n")
    return ast.parse(text).body


def _parse(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body
