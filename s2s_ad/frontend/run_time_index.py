"""A tuple or list known while lowering, read at an index known only as the code runs.

Contract: :func:`item` lowers ``xs[i]`` where ``xs`` is a tuple or list whose
items are known while lowering (a module-level list of numbers through a
local name, ``C = COEFFS``, or a slice of one, ``sub = COEFFS[1:3]``; a tuple
built in the function or a helper; a module-level list of lists; a list of
dicts or tuples of arrays given as a parameter) and ``i`` is an integer known
only as the code runs (the index of a ``while`` loop, a helper's index
parameter):

* items that are numbers or arrays: a run-time list of them (a ``list.new``
  op made where the read is) read at ``i`` (a ``getitem`` op), as Python's
  list is, negative indices and ``IndexError`` included;
* items that are structures of one shape (dicts with the same keys, tuples
  or lists of one length, NamedTuples or dataclasses of one class): the
  structure of that shape whose every leaf is the item read at ``i`` from
  the run-time list of the leaves at that place, so that
  ``params[i]["W"]`` reads ``[params[0]["W"], params[1]["W"], ...][i]`` and
  ``MAT[i][1 - i]`` reads a row so made at ``1 - i`` (an unused leaf's read
  is dropped with the rest of the unused code).

The index is lowered once. A leaf that is a string, None or bool must be the
same in every item (it stays static); items of different shapes are refused,
located, naming the rewrite.

Before → after, for ``s = s + MAT[i][1 - i] * x`` in a ``while`` loop::

    t1 = [MAT_0_0, MAT_1_0]         # MAT[i] of a 2 x 2 module list: its rows'
    t2 = t1[i]                      # items read at i, one per column
    t3 = [MAT_0_1, MAT_1_1]
    t4 = t3[i]
    t5 = [t2, t4]                   # MAT[i] read at 1 - i
    t6 = t5[1 - i]
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.frontend import runtime_lists, structures


def item(lo, base, node: ast.Subscript, var: str | None):
    """``base[i]`` (see the module docstring); ``base`` a tuple or a
    :class:`~s2s_ad.frontend.structures.StaticList`."""
    items = list(base if isinstance(base, tuple) else base.items)
    if not items:
        raise lo.src.error(node, f"`{ast.unparse(node.value)}` is empty: reading it at any "
                           "index raises IndexError")
    index = _index(lo, node.slice)
    return _read(lo, items, index, node, var)


def _index(lo, node: ast.expr) -> ir.Operand:
    value = lo.expr(node)
    given = runtime_lists.helper_index(lo, node)
    kind = value.kind if isinstance(value, ir.Value) else type(getattr(value, "value", None))
    if not given and kind not in ("int", int):
        if lo.array_element(value):  # rows[0] * n + cols[0]: checked where the code runs
            return lo.list_index(value, node)
        raise lo.src.error(node, runtime_lists.NOT_AN_INDEX)
    if kind == "array":  # a parameter of NumPy code, or arithmetic on one: checked to be
        return lo.list_index(value, node)  # an int where the code runs, as Python does
    lo.mark_int(value, node, "a list index")
    return value


def _read(lo, items: list, index, node: ast.Subscript, var: str | None):
    first = items[0]
    if all(_leaf(x) for x in items):
        statics = [x for x in items if _static(x)]
        if statics:
            if len(statics) == len(items) and all(_same_static(x, first) for x in items):
                return first
            raise lo.src.error(node, f"`{ast.unparse(node.value)}` holds strings, None or "
                               "bools that differ from item to item, read here at an index "
                               "known only when the code runs; s2s-ad selects code by them "
                               "while lowering: read them at constant indices (a `for` loop "
                               "over `range(len(...))` of a constant length)")
        return lo.emit("getitem", [new_list(lo, items, node), index], node, var)
    shape = _shape(first)
    if shape is None or any(_shape(x) != shape for x in items):
        raise lo.src.error(node, f"`{ast.unparse(node.value)}` is read here at an index known "
                           "only when the code runs, and its items are not all numbers and "
                           "arrays, or structures of one shape (dicts with the same keys, "
                           "tuples or lists of one length): read it in a `for` loop over "
                           "`range(len(...))`, which s2s-ad unrolls")
    if isinstance(first, tuple):
        return tuple(_read(lo, [x[k] for x in items], index, node, None)
                     for k in range(len(first)))
    if isinstance(first, structures.StaticList):
        return structures.StaticList([_read(lo, [x.items[k] for x in items], index, node, None)
                                      for k in range(len(first.items))])
    made = {k: _read(lo, [x.items[k] for x in items], index, node, None) for k in first.items}
    if isinstance(first, structures.StaticDict):
        return structures.StaticDict(made)
    return structures.StaticObject(first.cls, made)


def new_list(lo, items: list, node: ast.AST) -> ir.Value:
    """A run-time list of ``items`` (numbers or arrays), made here (a ``list.new`` op)."""
    out = ir.Value(lo.namer.fresh("items"), "list", None)
    op = ir.Op("list.new", tuple(items), out, lo.loc(node),
               f"{out.name} = [{', '.join(repr(x) for x in items)}]")
    lo.ops.append(op)
    lo.defs[id(out)] = op
    runtime_lists.register(lo, out, out)
    return out


def zip_column(lo, node: ast.expr):
    """A column of ``zip`` in a loop run when the code runs (``zip(xs, [x, x * x])``,
    ``xs`` of any length): a list or tuple display, or a name bound to a tuple or
    list known while lowering, of numbers or arrays, as a run-time list of its
    items; None for anything else."""
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and not any(
            isinstance(e, ast.Starred) for e in node.elts):
        items = [lo.expr(e) for e in node.elts]
    elif isinstance(node, ast.Name) and isinstance(lo.env.get(node.id),
                                                   (tuple, structures.StaticList)):
        value = lo.env[node.id]
        items = list(value if isinstance(value, tuple) else value.items)
    else:
        return None
    if not items or not all(_leaf(x) and not _static(x) for x in items):
        raise lo.src.error(node, f"`{ast.unparse(node)}` is zipped with a list of any length; "
                           "its items must be numbers or arrays")
    return new_list(lo, items, node)


def _leaf(x) -> bool:
    return isinstance(x, ir.Const) or isinstance(x, ir.Value) and x.kind in (
        "float", "int", "array")


def _static(x) -> bool:
    return isinstance(x, ir.Const) and (x.value is None or isinstance(x.value, (bool, str)))


def _same_static(x, y) -> bool:
    return _static(y) and type(x.value) is type(y.value) and x.value == y.value


def _shape(x):
    """The shape of a structure known while lowering, or None."""
    if isinstance(x, tuple):
        return ("tuple", len(x))
    if isinstance(x, structures.StaticList):
        return ("list", len(x.items))
    if isinstance(x, structures.StaticDict):
        return ("dict", tuple(x.items))
    if isinstance(x, structures.StaticObject):
        return (x.cls, tuple(x.items))
    return None
