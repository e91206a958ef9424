"""``sorted``, ``min`` and ``max`` over a list of any length: the
permutation found when the code runs.

Contract: :func:`keyed` lowers ``sorted(xs)``, ``sorted(xs, key=f,
reverse=r)``, ``max(xs, key=f)`` and ``min(xs, key=f)`` where ``xs`` is a
list of numbers whose length is known only when the code runs (grown at run
time, a list parameter of any length, a list a helper returned), in code of
numbers. Each item's key is computed once, into a list grown at run time
(``keys``; without ``key=`` the list itself is the keys). A primitive with
no derivative turns the keys into positions: ``list.argsort`` (and
``list.argsort_reverse``) is ``sorted(range(len(keys)),
key=keys.__getitem__)`` — Python's own stable sort, so ties keep their order
as ``sorted(xs, key=f)`` keeps them, ``reverse=True`` included — and
``list.argmax``/``list.argmin`` are ``max``/``min`` of the positions by key,
the first best as Python's ``max``/``min`` return it. ``sorted`` then builds
its result as a list grown at run time, ``ys.append(xs[perm[k]])`` for each
``k``; ``max``/``min`` read ``xs[best]``. Those are run-time reads of the
list, so the reverse sweep adds each result item's adjoint into the item it
was taken from (:mod:`s2s_ad.reverse.lists`), following the permutation of
that run; nothing flows through the keys (they only choose).

Inside a loop or branch the lists built here belong to one run of its
body (their adjoints are made where the reverse of that run starts). Refused,
located: in NumPy code (sort an array with ``np.sort``).

Before → after, for ``ys = sorted(xs, key=lambda t: t * t)``::

    keys = list.new                         (a list grown at run time)
    keys_1 = for v in xs: keys.append(key(v))
    perm = list.argsort keys_1
    ys = list.new
    ys_1 = for k in range(len(xs)): ys.append(xs[list.index perm k])
"""

from __future__ import annotations

import ast
import builtins

from s2s_ad import ir
from s2s_ad.frontend import checkpoint, closures
from s2s_ad.syntax_walk import walk

LIST_READS = frozenset({"getitem", "len", "list.sum", "list.index", "list.argsort",
                        "list.argsort_reverse", "list.argmax", "list.argmin",
                        "list.index_array"})
"""Primitives whose first operand is a whole list (the lowering lets it be)."""


def keyed(lo, fn, seq: ir.Value, key: ast.expr | None, reverse: bool, node: ast.Call,
          var: str | None, hint: str | None):
    """``sorted``/``max``/``min`` of the list of any length ``seq``."""
    what = fn.__name__
    if getattr(lo, "array_mode", False):
        raise lo.src.error(node, f"`{what}` of a list of any length is supported in code of "
                           "numbers; in NumPy code, sort an array (`np.sort`, `np.argsort`)")
    temps: list[str] = []
    # The lists built here (keys, result) may be made inside a loop or branch:
    # their adjoints are made where the reverse of that run of it starts
    # (reverse/lists.region_adjoints); nothing outside that run reads them.
    inner, lo.inner_lists = lo.__dict__.get("inner_lists"), True

    def name(base: str, value=None) -> str:
        n = lo.namer.fresh(base)
        temps.append(n)
        if value is not None:
            lo.env[n] = value
        return n

    def at(tree):
        for n in walk(tree):
            n.lineno, n.col_offset = node.lineno, node.col_offset
            n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
        return tree

    xs = name("items", seq)
    try:
        if key is None:
            keys = lo.env[xs]
        else:
            f = key_function(lo, key, node)
            k, v = name("keys"), name("v")
            append = ast.Expr(ast.Call(ast.Attribute(ast.Name(k, ast.Load()), "append",
                                                     ast.Load()),
                                       [ast.Call(f, [ast.Name(v, ast.Load())], [])], []))
            checkpoint.expression_block(lo, [
                at(ast.parse(f"{k} = []").body[0]),
                at(ast.For(ast.Name(v, ast.Store()), ast.Name(xs, ast.Load()), [append], [],
                           None))])
            keys = lo.env[k]
        text = ast.unparse(node)
        if fn is not builtins.sorted:
            best = lo.emit("list.argmax" if fn is builtins.max else "list.argmin", [keys], node,
                           hint="best", text=f"the position {what}({ast.unparse(node.args[0])}, "
                                             "...) chooses")
            return lo.emit("getitem", [seq, best], node, var, hint=hint, text=text)
        perm = lo.emit("list.argsort_reverse" if reverse else "list.argsort", [keys], node,
                       hint="perm", text=f"the order {text} puts the items in")
        lo.positions.add(id(perm))  # perm[k] is an int (control.dynamic_subscript)
        p, ys, i = name("perm", perm), name("ys"), name("k")
        checkpoint.expression_block(lo, [at(ast.parse(f"{ys} = []").body[0]),
                                         at(ast.parse(f"for {i} in range(len({xs})):\n"
                                                      f"    {ys}.append({xs}[{p}[{i}]])").body[0])])
        return lo.env[ys]
    finally:
        lo.inner_lists = inner
        for n in temps:
            lo.env.pop(n, None)


def positions(lo, fn, node: ast.Call, key: ast.expr | None, reverse: bool,
              var: str | None, hint: str | None) -> ir.Value | None:
    """``max(range(len(xs)), key=xs.__getitem__)`` (``min``, ``sorted``,
    ``sorted(..., reverse=True)``) of a list of any length ``xs``: the
    primitive :func:`keyed` emits, written as its rule writes it, so a module
    s2s-ad generated reads back (the JVP module a second derivative
    differentiates). None for anything else."""
    arg = node.args[0]
    if not (isinstance(key, ast.Attribute) and key.attr == "__getitem__"
            and isinstance(key.value, ast.Name)
            and isinstance(arg, ast.Call) and not arg.keywords and len(arg.args) == 1
            and isinstance(arg.func, ast.Name) and arg.func.id not in lo.env
            and lo.resolve(arg.func) is builtins.range):
        return None
    length = arg.args[0]
    if not (isinstance(length, ast.Call) and not length.keywords and len(length.args) == 1
            and isinstance(length.func, ast.Name) and length.func.id not in lo.env
            and lo.resolve(length.func) is builtins.len
            and isinstance(length.args[0], ast.Name) and length.args[0].id == key.value.id):
        return None
    seq = lo.env.get(key.value.id)
    if not (isinstance(seq, ir.Value) and seq.kind == "list"):
        return None
    prim = ("list.argsort_reverse" if reverse else "list.argsort") \
        if fn is builtins.sorted else "list.argmax" if fn is builtins.max else "list.argmin"
    out = lo.emit(prim, [seq], node, var, hint=hint)
    if fn is builtins.sorted:
        lo.positions.add(id(out))  # perm[k] is an int (control.dynamic_subscript)
    return out


def position(lo, node: ast.Subscript, var: str | None, hint: str | None) -> ir.Value:
    """``perm[k]`` of the positions :func:`keyed` found: an int."""
    index = lo.expr(node.slice)
    lo.mark_int(index, node.slice, "a list index")
    return lo.emit("list.index", [lo.env[node.value.id], index], node, var, hint=hint)


def key_function(lo, key: ast.expr, node: ast.Call) -> ast.expr:
    """The key as something to call: a ``lambda`` lifted to a helper, once
    per ``sorted``/``min``/``max`` call."""
    if isinstance(key, ast.Lambda):
        lifted = lo.__dict__.setdefault("sort_keys", {})  # this lowering's, per call
        if id(node) not in lifted:
            name = lo.namer.fresh("key")
            lo.local_fns[name] = closures.lift(lo.src, key, name, lo.locals_, lo.local_fns)
            lifted[id(node)] = name  # one helper for every item's key
        key = ast.copy_location(ast.Name(lifted[id(node)], ast.Load()), key)
    return key
