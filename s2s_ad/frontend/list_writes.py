"""Lists of a run-time length made by ``[c] * n`` and written by index.

Contract: in code of numbers,

* ``ys = [c] * n`` (``c`` a number, ``n`` an int known when the code runs,
  a constant too) is a ``list.fill`` op (inside a loop or branch, one list
  per run of the body: the reverse sweep makes its adjoint where that run's
  reverse starts, :func:`s2s_ad.reverse.lists.region_adjoints`): a list
  grown at run time (:mod:`s2s_ad.frontend.runtime_lists`) whose root is
  the fill, read like any other (``ys[k]``, ``len``, ``sum``, loops, passed
  to helpers, returned by a helper);
* ``ys[k] = v`` on such a list (or on one grown by ``append``), ``k`` an int
  expression (a constant, negative too, a loop variable, ``i + 1``,
  ``len(ys) - 1``), is a ``list.set`` op: a new SSA version of the list,
  rebinding its name, anywhere (in loops and branches too, which then carry
  the list); ``ys[k] += v`` (any operator) reads the item, computes, writes;
* a list built in the function (``[0.0, 0.0]``, ``[0.0] * 3``) written by
  index inside a loop that is not unrolled, or a branch, becomes such a list
  just before it (as appending does).

All versions are one Python list in the generated code, written in place:
the reverse sweep (:mod:`s2s_ad.reverse.lists`) reverses ``ys[k] = v`` by
``dv = dys[k]; dys[k] = 0.0``, and a value read from the list that the
reverse sweep needs is taped at the read (never read again from the list,
which may hold a later value by then).

Before → after::

    ys = [0.0] * n                        ys = list.fill 0.0 n
    for i in range(n):                    ys_1 = for i in range(0, n, 1) carry (ys_2=ys)
        ys[i] = xs[i] * a                   t1 = getitem xs i
                                            t2 = mul t1 a
                                            ys_3 = list.set ys_2 i t2

In NumPy code the items may be arrays: ``ys[k] = v`` replaces the item
(the array it held is not written into), on a list grown by ``append`` or
made by ``[c] * n``; ``ys[k] += v`` is refused there, located, as NumPy's
``+=`` adds into the item's array in place.

Refused, located: ``[c] * n`` of a list, tuple or string; a name bound to
another list before a loop that gives it ``[c] * n`` (the loop would carry
two lists under it); a write to a list another name also holds (``zs = ys;
zs[0] = v``), to a list the caller passed (a parameter) or a helper
returned, and a slice write.
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.frontend import runtime_lists, structures
from s2s_ad.frontend.aliasing import SYMBOLS

__all__ = ["fill", "store", "augmented", "is_list_write", "refuse_in_arrays", "replaces_item"]


def fill(lo, node: ast.BinOp, var: str | None) -> ir.Value | None:
    """``[c] * n``: a ``list.fill`` op; None when ``node`` is not of that form."""
    parts = structures.repeated(node)
    if parts is None:
        return None
    item_node, count_node = parts
    item = lo.expr(item_node)
    if structures.is_structure(item) or not isinstance(item, (ir.Value, ir.Const)) \
            or (isinstance(item, ir.Value) and item.kind not in ("float", "int")) \
            or (isinstance(item, ir.Const) and (isinstance(item.value, bool)
                                               or not isinstance(item.value, (int, float)))):
        raise lo.src.error(item_node, "`[c] * n` repeats a number; "
                           f"`{ast.unparse(item_node)}` is not one")
    count = lo.expr(count_node)
    # (a parameter lowered as a number is an int here, as in `range(n)`)
    if not (isinstance(count, ir.Value) and count.kind in ("int", "float")
            or isinstance(count, ir.Const) and type(count.value) is int):
        hint = f"; `{count_node.id}` is a parameter, an array in NumPy code: annotate it " \
            f"(`{count_node.id}: int`)" if isinstance(count_node, ast.Name) \
            and isinstance(count, ir.Value) and count.kind == "array" else ""
        raise lo.src.error(count_node, "the length in `[c] * n` must be an integer (`len(xs)`, "
                           "an int parameter, integer arithmetic on them)" + hint)
    lo.mark_int(count, count_node, "a list's length")
    name = var or "ys"
    out = ir.Value(lo.namer.claim(var) if var else lo.namer.fresh(name), "list", var)
    op = ir.Op("list.fill", (item, count), out, lo.loc(node), ast.unparse(node)
               if var is None else f"{var} = {ast.unparse(node)}")
    lo.ops.append(op)
    lo.defs[id(out)] = op
    runtime_lists.carried(lo, out, out)
    return out


def is_list_write(lo, target: ast.expr) -> bool:
    """Is ``target`` (``ys[k]``) an item of a list of any length made in the function?"""
    return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
        and runtime_lists.is_grown(lo, lo.env.get(target.value.id))


def promote_written(lo, target: ast.expr) -> None:
    """In NumPy code, ``ys[k] = v`` at an index known only as the code runs
    into a list built in the function of numbers and arrays (``dys = [np.
    zeros_like(item) for item in ys]`` in s2s-ad's own reverse sweeps): the
    list becomes a list of any length (a ``list.new`` op), written by
    :func:`store`."""
    if not (getattr(lo, "array_mode", False) and isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name) and not isinstance(target.slice, ast.Slice)):
        return
    value = lo.env.get(target.value.id)
    if runtime_lists.promotable(lo, value) and structures._static_int(lo, target.slice) is None:
        runtime_lists.promote(lo, value, target, target.value.id,
                              "written into here at an index known only as the code runs")


def refuse_in_arrays(lo, stmt: ast.stmt) -> None:
    """In NumPy code, a write by index into a list of any length: refused."""
    if getattr(lo, "array_mode", False) and isinstance(stmt, (ast.Assign, ast.AugAssign)):
        for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
            if is_list_write(lo, t):
                _checked(lo, t, stmt)


def _checked(lo, target: ast.Subscript, node: ast.AST) -> tuple[str, ir.Value, ir.Operand]:
    """(name, list, index) of the write ``target``, or a located refusal."""
    name = target.value.id
    seq = lo.env[name]
    if isinstance(target.slice, ast.Slice):
        raise lo.src.error(target, f"writing a slice of `{name}`, a list of any length, is not "
                           "supported; write its items one by one in a loop")
    others = [n for n, v in lo.env.items() if n != name and runtime_lists.holds(v, seq)]
    if others:
        raise runtime_lists.aliased(lo, node, name, others[0], "this line writes into")
    index = lo.expr(target.slice)
    if not (isinstance(index, ir.Value) and index.kind == "int"
            or isinstance(index, ir.Const) and type(index.value) is int):
        if lo.array_element(index) or runtime_lists.helper_index(lo, target.slice):
            # r[c[k]] = v, r[n] = v (n a parameter): checked to be an int where the code
            # runs (a write the gradient needs nothing of still raises as Python's does)
            return name, seq, lo.list_index(index, target.slice)
        raise lo.src.error(target.slice, runtime_lists.NOT_AN_INDEX)
    lo.mark_int(index, target.slice, "a list index")
    return name, seq, index


def replaces_item(lo, stmt: ast.stmt) -> bool:
    """In NumPy code, ``ys[k] = v`` with ``ys`` a list made in the function
    and grown or written at run time: the item replaced (a ``list.set`` op),
    as in code of numbers; the array the item held is not written into.
    ``ys[k] += v`` is refused, located: NumPy adds into the item's array in
    place. False when ``stmt`` is not such a write."""
    for target in stmt.targets if isinstance(stmt, ast.Assign) else \
            [stmt.target] if isinstance(stmt, ast.AugAssign) else []:
        refuse_returned(lo, target)  # as in code of numbers, with its rewrite
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        promote_written(lo, stmt.targets[0])
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and is_list_write(lo, stmt.targets[0]):
        return store(lo, stmt.targets[0], lo.expr(stmt.value), stmt.targets[0], stmt.value)
    if isinstance(stmt, ast.AugAssign) and is_list_write(lo, stmt.target):
        op = SYMBOLS.get(type(stmt.op), "op=")
        item = ast.unparse(stmt.target)
        raise lo.src.error(stmt, f"`{item} {op} ...` on an array adds into the array the item "
                           "holds, in place (NumPy's `" + op + "`), which other names, the "
                           f"caller or a tape may hold too; write `{item} = {item} {op[:-1]} "
                           "...`, which replaces the item with a new array")
    return False


def _number(lo, value, node: ast.AST) -> None:
    kinds = ("float", "int", "array") if getattr(lo, "array_mode", False) else ("float", "int")
    if structures.is_structure(value) or not isinstance(value, (ir.Value, ir.Const)) \
            or (isinstance(value, ir.Value) and value.kind not in kinds) \
            or (isinstance(value, ir.Const) and (isinstance(value.value, bool)
                                                or not isinstance(value.value, (int, float)))):
        raise lo.src.error(node, "an item written into a list of any length is a number, not "
                           f"{structures.describe(value)}")


def store(lo, target: ast.Subscript, value, node: ast.AST,
          value_node: ast.expr | None = None) -> bool:
    """``ys[k] = v`` on a list of any length made in the function: a
    ``list.set`` op. False when ``target`` is not such a write."""
    refuse_returned(lo, target)
    if not is_list_write(lo, target):
        return False
    name, seq, index = _checked(lo, target, node)
    _number(lo, value, node)
    text = f"{ast.unparse(target)} = {ast.unparse(value_node) if value_node else '...'}"
    _set(lo, name, seq, index, value, node, text)
    return True


def augmented(lo, stmt: ast.AugAssign, binops: dict) -> bool:
    """``ys[k] += v`` (any operator): ``t = ys[k]``, ``t op v``, written back."""
    target = stmt.target
    refuse_returned(lo, target)
    if not is_list_write(lo, target):
        return False
    prim = binops.get(type(stmt.op))
    if prim is None:
        raise lo.src.error(stmt, f"the operator {type(stmt.op).__name__} is not supported")
    name, seq, index = _checked(lo, target, stmt)
    right = lo.expr(stmt.value)
    _number(lo, right, stmt.value)
    old = lo.emit("getitem", [seq, index], target, text=ast.unparse(target))
    new = lo.emit(prim, [old, right], stmt, text=ast.unparse(stmt))
    _set(lo, name, seq, index, new, stmt, ast.unparse(stmt))
    return True


def _set(lo, name: str, seq: ir.Value, index: ir.Operand, value: ir.Operand,
         node: ast.AST, text: str) -> None:
    runtime_lists._version(lo, name, "list.set", (seq, index, value), node, text, seq, seq)


def refuse_returned(lo, target: ast.expr) -> None:
    """A write into a list of any length a helper returned: refused."""
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
            and id(lo.env.get(target.value.id)) in lo.returned_lists:
        name = target.value.id
        raise lo.src.error(target, f"`{name}` is a list of any length a helper returned; s2s-ad "
                           "reads it as it is and does not change it: write into a list made "
                           f"in this function (`ys = [0.0] * len({name})`), or in the helper")
