"""``sorted(xs, key=...)`` and ``min``/``max(xs, key=...)`` over a list known
while lowering: the permutation chosen by values when the code runs.

Contract: :func:`keyed_call` lowers ``sorted(xs)``, ``sorted(xs, key=f,
reverse=r)``, ``max(xs, key=f)`` and ``min(xs, key=f)`` where ``xs`` is a
tuple or list known while lowering (built in the function, passed to a helper
whole, a structure parameter) of numbers or arrays, ``f`` a ``lambda``, a
nested function or a function of yours returning a number, and ``r`` a
constant bool. Each item's key is computed once. ``max``/``min`` keep the
first item whose key is largest (smallest), as Python does: a running best,
replaced by item ``i`` when its key is strictly larger (smaller).
``sorted`` is a bubble-sort network of compare-exchanges of adjacent items
that exchange only when the later key is strictly smaller (larger, with
``reverse=True``), so it is stable, as Python's sort is; it returns a list
known while lowering whose items are the original items in the order the
keys put them in. Every choice is a conditional expression (an ``If`` op)
on a comparison of keys, so the adjoint of each result item flows to the
item it was chosen from, and nothing flows through the keys (they choose, a
piecewise-constant decision). A list of any length (grown at run time, a
list parameter read only by index, a list a helper returned) is sorted when
the code runs instead (:mod:`s2s_ad.frontend.runtime_sorting`).

Before → after, for ``max([a, b], key=lambda t: t * t)``::

    k0 = call key(a); k1 = call key(b)
    c = gt k1 k0
    best = if c: b else: a
"""

from __future__ import annotations

import ast
import builtins

from s2s_ad import ir
from s2s_ad.frontend import runtime_sorting, structures

MAX_SORTED = 64
"""Most items ``sorted`` takes (a network of n(n-1)/2 compare-exchanges)."""


def is_keyed(fn, node: ast.Call) -> bool:
    return fn is builtins.sorted or (fn in (builtins.max, builtins.min) and len(node.args) == 1
                                     and any(k.arg == "key" for k in node.keywords))


def keyed_call(lo, fn, node: ast.Call, var: str | None, hint: str | None):
    what = fn.__name__
    if len(node.args) != 1:
        raise lo.src.error(node, f"`{what}` takes one list here (and `key=`"
                           + (", `reverse=`)" if fn is builtins.sorted else ")"))
    allowed = ("key", "reverse") if fn is builtins.sorted else ("key",)
    options = {}
    for k in node.keywords:
        if k.arg not in allowed:
            raise lo.src.error(k.value if k.arg is None else k, f"`{what}`: the keyword "
                               f"{k.arg!r} is not supported; s2s-ad takes "
                               + ", ".join(f"`{a}=`" for a in allowed))
        options[k.arg] = k.value
    reverse = False
    if "reverse" in options:
        r = options["reverse"]
        if not (isinstance(r, ast.Constant) and isinstance(r.value, bool)):
            raise lo.src.error(r, "`sorted(..., reverse=...)` takes a constant True or False")
        reverse = r.value
    made = runtime_sorting.positions(lo, fn, node, options.get("key"), reverse, var, hint)
    if made is not None:  # max(range(len(xs)), key=xs.__getitem__): generated code read back
        return made
    arg = node.args[0]
    value = lo.expr(arg) if not isinstance(arg, ast.GeneratorExp) else None
    if isinstance(value, ir.Value) and value.kind in ("list", "tuple"):
        return runtime_sorting.keyed(lo, fn, value, options.get("key"), reverse, node, var,
                                     hint)
    if isinstance(arg, ast.GeneratorExp):
        items = structures.comprehension(lo, arg)
    elif isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) \
            and arg.func.id not in lo.env \
            and lo.resolve(arg.func) in (builtins.range, builtins.zip, builtins.enumerate):
        items = structures.iteration(lo, arg)
    else:
        items = structures.items_of(lo, value, arg)  # (lowered once: `sorted(h(x))`)
    if any(structures.is_structure(x) for x in items):
        raise lo.src.error(arg, f"`{what}` of tuples or lists is not supported; sort numbers "
                           "or arrays")
    if not items and fn is not builtins.sorted:
        raise lo.src.error(node, f"`{what}` of an empty sequence")
    if len(items) > MAX_SORTED:
        raise lo.src.error(node, f"`{what}` of {len(items)} items: s2s-ad sorts up to "
                           f"{MAX_SORTED} items while lowering; use np.sort")
    keys = [_key(lo, options.get("key"), x, node, i) for i, x in enumerate(items)]
    if fn is not builtins.sorted:
        best, kbest = items[0], keys[0]
        for i in range(1, len(items)):
            beats = ast.Gt() if fn is builtins.max else ast.Lt()
            c = _compare(lo, keys[i], beats, kbest, node)
            last = i == len(items) - 1
            best = _select(lo, c, items[i], best, node, var if last else None, hint)
            if not last:
                kbest = _select(lo, c, keys[i], kbest, node, None, "key")
        return best
    items, keys = list(items), list(keys)
    n = len(items)
    for end in range(n - 1, 0, -1):
        for j in range(end):
            # exchange j and j+1 when the later key comes strictly first: stable
            c = _compare(lo, keys[j + 1], ast.Gt() if reverse else ast.Lt(), keys[j], node)
            a, b, ka, kb = items[j], items[j + 1], keys[j], keys[j + 1]
            items[j] = _select(lo, c, b, a, node, None, "sorted")
            items[j + 1] = _select(lo, c, a, b, node, None, "sorted")
            keys[j] = _select(lo, c, kb, ka, node, None, "key") if keys[j] is not a else items[j]
            keys[j + 1] = (_select(lo, c, ka, kb, node, None, "key") if keys[j + 1] is not b
                           else items[j + 1])
    return structures.StaticList(items)


def _key(lo, key: ast.expr | None, item, node: ast.Call, i: int):
    """``key(item)``, lowered as a call (or the item itself without a key)."""
    if key is None:
        return item
    key = runtime_sorting.key_function(lo, key, node)
    item_name = _bound(lo, f"{ast.unparse(node.args[0])}[{i}]", item, node)
    if isinstance(key, ast.Attribute) and key.attr == "__getitem__":
        # `max(range(len(xs)), key=xs.__getitem__)` of a list of known length:
        # each index's key is the item, `xs[k]`, as `key=lambda k: xs[k]` reads it
        call = ast.copy_location(ast.Subscript(key.value, item_name, ast.Load()), node)
    else:
        call = ast.copy_location(ast.Call(key, [item_name], []), node)
    call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset
    out = lo.expr(call)
    if structures.is_structure(out) or (isinstance(out, ir.Value)
                                        and out.kind not in ("float", "int")):
        raise lo.src.error(node, "a sort key must give a number")
    return out


def _bound(lo, text: str, value, at: ast.AST) -> ast.Name:
    lo.env[text] = value
    lo.spliced.append(text)
    return ast.copy_location(ast.Name(text, ast.Load()), at)


def _compare(lo, a, op: ast.cmpop, b, node: ast.Call):
    left = _bound(lo, f"<{len(lo.spliced)}>", a, node)
    right = _bound(lo, f"<{len(lo.spliced)}>", b, node)
    test = ast.copy_location(ast.Compare(left, [op], [right]), node)
    return lo.condition(test)


def _select(lo, cond, then, orelse, node: ast.Call, var: str | None, hint: str | None):
    if isinstance(cond, ir.Const):
        return then if cond.value else orelse
    name = (var, True) if var is not None else (hint or "sel", False)
    return lo.branches(cond, lambda: then, lambda: orelse, node, ast.unparse(node), value=name)
