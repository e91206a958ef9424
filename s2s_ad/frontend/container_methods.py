"""Methods of lists and dicts known while lowering, and ``dict(k=v)``.

Contract: each is Python's own method on the structure the lowering holds
(:class:`~s2s_ad.frontend.structures.StaticList`, ``StaticDict``), so the
values are the ones Python computes and each item's adjoint flows to the
value it holds:

* ``d.get(k)``, ``d.get(k, default)``: the item at the constant key ``k``, or
  ``default`` (``None`` without one) where the dict has no such key;
* ``dict(a=x, b=y)``, ``dict(d, c=z)``: a new dict of those items;
* ``d.update(other)``, ``d.update(k=v)``: items set in place;
* ``xs.insert(i, v)``, ``xs.reverse()``, ``xs.pop()``, ``xs.pop(i)`` (``i`` a constant),
  ``xs.sort(key=f, reverse=r)`` (as ``sorted`` orders them): items moved in
  place;
* ``del xs[i]`` (``i`` a constant), ``del xs[a:b]`` (constant bounds), ``del
  d[k]``: the items removed, as ``pop`` removes them (the adjoint of a removed
  item is what its other readers give it). Of a list whose length or index
  is known only when the code runs, refused, located, with the rewrite:
  ``ys = ys[1:]``, ``ys = [y for k, y in enumerate(ys) if k != i]``.

The lists and dicts are changed while lowering, so a change, inside a loop
the generated code keeps (its body lowered once, run any number of times) or
in an arm of a branch, of one made before that loop or branch would be made
once, on every path: those are refused, located, with the rewrite. One made
in the loop's body or the arm is that iteration's or arm's own: changed as
written. A list or dict the caller passed is not changed
(``structures.refuse_argument_change``)."""

from __future__ import annotations

import ast
import builtins

from s2s_ad import ir
from s2s_ad.frontend import dict_writes, structures
from s2s_ad.frontend.structures import StaticDict, StaticList

__all__ = ["call", "delete", "mutation"]

LIST_CHANGES = ("insert", "reverse", "pop", "sort")

_POP_REFUSED = (
    "`{call}` is supported on a list built in the function, and on a list grown at "
    "run time (`{name}.append(v)` in a loop) where, from the first statement that pops it "
    "on, `{name}` is only popped, read by index, measured (`len({name})`) or tested "
    "(`while {name}:`), and its pops take no index; here it is used otherwise (appended to "
    "again, passed on, read by another name or a nested function, popped at an index, or "
    "not a list built in the function): keep an "
    "index instead (`k = len({name})`, then `k -= 1; v = {name}[k]`)")


def call(lo, node: ast.Call, var: str | None):
    """``d.get(...)``, ``xs.pop(i)``, ``d.copy()`` and ``dict(...)`` lowered;
    None where ``node`` is none of them."""
    func = node.func
    if isinstance(func, ast.Name) and func.id not in lo.env \
            and lo.resolve(func) is builtins.dict:
        return _dict_call(lo, node)
    if not (isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "copy")):
        return None
    root = func.value
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not (isinstance(root, ast.Name) and root.id in lo.env):
        return None
    if func.attr == "copy" and not isinstance(func.value, ast.Name):
        return None  # (lowered once, by the caller: an array's copy)
    base = lo.expr(func.value)
    if func.attr == "copy":  # `d.copy()`: a new dict of the same items (an array's: NumPy's)
        if not isinstance(base, StaticDict):
            return None
        if node.args or node.keywords:
            raise lo.src.error(node, "`copy` of a dict takes no arguments")
        return StaticDict(dict(base.items))
    if func.attr == "get":
        if not isinstance(base, StaticDict):
            # a parameter lowered as a number before its dict was seen
            structures._param_used_as_sequence(lo, base, func.value, ("float", "array"))
            return None
        if node.keywords or not 1 <= len(node.args) <= 2:
            raise lo.src.error(node, "`get` takes a key and, optionally, a default")
        key = structures._key(lo, node.args[0])
        if key in base.items:
            return base.items[key]
        return lo.expr(node.args[1]) if len(node.args) == 2 else ir.Const(None)
    if isinstance(base, StaticDict):  # `d.pop(k)`, `d.pop(k, default)`: the item, removed
        _refuse_changing(lo, base, node)
        if node.keywords or not 1 <= len(node.args) <= 2:
            raise lo.src.error(node, "`pop` of a dict takes a key and, optionally, a default")
        key = structures._key(lo, node.args[0])
        if key in base.items:
            return base.items.pop(key)
        if len(node.args) == 2:
            return lo.expr(node.args[1])
        raise lo.src.error(node, f"`pop` of the key {key!r}, which the dict does not hold "
                           "here (a KeyError where it runs)")
    if not isinstance(base, StaticList):
        # `hs.pop()` of a list grown at run time is a stack read from its end
        # (frontend/generated.py), rewritten before lowering where it can be
        name = ast.unparse(func.value)
        if node.args and structures._static_int(lo, node.args[0]) is not None \
                and structures._static_int(lo, node.args[0]) >= 0:
            k = structures._static_int(lo, node.args[0])
            raise lo.src.error(node, f"`{ast.unparse(node)}` of a list whose length is known "
                               "only when the code runs is not supported; read the item and "
                               f"keep the others: `v = {name}[{k}]`, then {_without(name, k)}")
        raise lo.src.error(node, _POP_REFUSED.format(call=ast.unparse(node), name=name))
    _refuse_changing(lo, base, node)
    if node.keywords or len(node.args) > 1:
        raise lo.src.error(node, "`pop` takes one index")
    if not base.items:
        raise lo.src.error(node, "`pop` of an empty list")
    i = structures._index(lo, node.args[0], len(base.items)) if node.args \
        else len(base.items) - 1
    if not 0 <= i < len(base.items):
        raise lo.src.error(node, f"`pop` index {i} is out of range for a list of "
                           f"{len(base.items)}")
    return base.items.pop(i)


def delete(lo, stmt: ast.Delete) -> None:
    """``del xs[i]``, ``del xs[a:b]``, ``del d[k]`` on a list or dict known
    while lowering: the items removed (``xs.pop(i)``, ``d.pop(k)``, their
    values unused); anything else refused, located, with what to write."""
    for target in stmt.targets:
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                and target.value.id in lo.env):
            raise lo.src.error(target, "`del` is supported on an item or a slice of a list or "
                               "dict the function builds (`del ys[0]`, `del d[\"k\"]`); a name "
                               "needs no `del` (it is dropped when the function returns)")
        base = lo.env[target.value.id]
        name = target.value.id
        part = target.slice
        if isinstance(base, StaticList) and isinstance(part, ast.Slice):
            bounds = [None if b is None else structures._static_int(lo, b)
                      for b in (part.lower, part.upper, part.step)]
            if any(b is None and n is not None for b, n in
                   zip(bounds, (part.lower, part.upper, part.step))):
                raise lo.src.error(target, f"`del {ast.unparse(target)}` takes constant bounds; "
                                   f"keep the others: `{name} = {name}[:a] + ...`, or "
                                   f"`{name} = [y for k, y in enumerate({name}) if not a <= k "
                                   "< b]`")
            _refuse_changing(lo, base, _located_call(target, "pop", []))
            del base.items[slice(*bounds)]
            continue
        if isinstance(base, (StaticList, StaticDict)) and (
                isinstance(base, StaticDict) or structures._static_int(lo, part) is not None):
            call(lo, _located_call(target, "pop", [part]), None)
            continue
        text = ast.unparse(part)
        if isinstance(base, StaticList) or isinstance(base, ir.Value) and base.kind == "list":
            known = structures._static_int(lo, part)
            rewrite = _without(name, known) if known is not None and known >= 0 else \
                f"`{name} = [y for k, y in enumerate({name}) if k != {text}]`"
            raise lo.src.error(target, f"`del {ast.unparse(target)}` of a list whose length "
                               f"or index is known only when the code runs is not supported; "
                               f"keep the other items: {rewrite}")
        raise lo.src.error(target, "`del` is supported on an item or a slice of a list or "
                           "dict the function builds")


def _without(name: str, k: int) -> str:
    """The rewrite keeping the items of list ``name`` but the one at ``k``."""
    if k == 0:
        return f"`{name} = {name}[1:]`"
    return f"`{name} = [y for k, y in enumerate({name}) if k != {k}]`"


def _located_call(target: ast.Subscript, method: str, args: list) -> ast.Call:
    """``base.method(*args)`` located at ``target`` (``base[...]``)."""
    func = ast.copy_location(ast.Attribute(target.value, method, ast.Load()), target)
    return ast.copy_location(ast.Call(func, args, []), target)


def mutation(lo, stmt: ast.Expr) -> bool:
    """``xs.insert(i, v)``, ``xs.reverse()``, ``xs.pop(i)``, ``d.update(...)``
    as statements: lower them and return True; False for anything else."""
    found = structures.method_statement(lo, stmt)
    if found is None:
        return False
    c, target, method = found
    if isinstance(target, StaticList) and method in LIST_CHANGES:
        if method == "pop":
            if call(lo, c, None) is None:
                return False
            return True
        _refuse_changing(lo, target, c)
        if method == "sort":  # `xs.sort(key=f, reverse=True)`: as `sorted` orders them
            if c.args:
                raise lo.src.error(c, "`sort` takes only the keywords `key` and `reverse`")
            made = lo.expr(ast.copy_location(ast.Call(
                ast.copy_location(ast.Name("sorted", ast.Load()), c.func), [c.func.value],
                c.keywords), c))
            if not isinstance(made, (StaticList, tuple)):
                raise lo.src.error(c, "`sort` is supported on a list of numbers known while "
                                   "lowering; use `ys = sorted(xs)`")
            target.items[:] = made.items if isinstance(made, StaticList) else list(made)
            return True
        if c.keywords:
            raise lo.src.error(c, f"`{method}` takes no keyword arguments")
        if method == "reverse":
            if c.args:
                raise lo.src.error(c, "`reverse` takes no arguments")
            target.items.reverse()
            return True
        if len(c.args) != 2:
            raise lo.src.error(c, "`insert` takes an index and a value")
        i = structures._static_int(lo, c.args[0])
        if i is None:
            raise lo.src.error(c.args[0], "the index of `insert` must be an integer constant")
        target.items.insert(i, lo.expr(c.args[1]))
        return True
    if isinstance(target, StaticDict) and method == "pop":  # `d.pop(k)`, its value unused
        return call(lo, c, None) is not None
    if isinstance(target, StaticDict) and method == "update":
        _refuse_changing(lo, target, c)
        items = _dict_items(lo, c, "update")
        target.items.update(items)
        return True
    return False


def _dict_call(lo, node: ast.Call) -> StaticDict:
    return StaticDict(_dict_items(lo, node, "dict"))


def _dict_items(lo, node: ast.Call, what: str) -> dict:
    """The items ``dict(...)``/``d.update(...)`` set: of a dict known while
    lowering given first, then the keywords."""
    if len(node.args) > 1 or any(isinstance(a, ast.Starred) for a in node.args):
        raise lo.src.error(node, f"`{what}` takes one dict and keywords")
    items: dict = {}
    if node.args:
        other = lo.expr(node.args[0])
        if not isinstance(other, StaticDict):
            # a parameter lowered as a number receives a dict: say so, to be
            # lowered again for the dict each call passes (cache.entry)
            structures._param_used_as_sequence(lo, other, node.args[0], ("float", "array"))
            raise lo.src.error(node.args[0], f"`{what}` is supported of a dict built in the "
                               "function or a dict parameter (constant string keys), "
                               "and keywords")
        items.update(other.items)
    for k in node.keywords:
        if k.arg is None:
            other = lo.expr(k.value)
            if not isinstance(other, StaticDict):
                structures._param_used_as_sequence(lo, other, k.value, ("float", "array"))
                raise lo.src.error(k.value, "`**` is supported on a dict built in the "
                                   "function or a dict parameter")
            items.update(other.items)
        else:
            items[k.arg] = lo.expr(k.value)
    return items


def _refuse_changing(lo, obj, node: ast.Call) -> None:
    structures.refuse_argument_change(lo, obj, node)
    starts = lo.region_starts
    if starts and any(v is obj for v in dict_writes.reachable(starts[-1].values())):
        # made before the loop body or arm it is changed in (one made there is
        # that iteration's or that arm's own, and followed as it changes)
        raise lo.src.error(node, f"`{ast.unparse(node.func)}` changes a list or dict known "
                           "while lowering inside a loop or a branch, which s2s-ad does not "
                           "follow there; change it before the loop or branch, or build a "
                           "new one (`ys = [...]`, `{**d, \"k\": v}`)")
