"""Tuples that differ between the arms of a branch, merged item by item.

Contract: where a name (or the function's result) holds a tuple in each arm
of a branch, :func:`merge` gives the tuple of the items' φs (nested tuples
item by item too; a NamedTuple or dataclass instance of one class in each
arm, field by field), so ``if c: p = (a, b)`` / ``else: p = (b, a)`` then
``u, v = p``, and ``if c: return a, b`` before ``return b, a``, are read as
the items would be. The result of a ``return`` that has not run yet holds a
placeholder (``lowering.py``: ``self.ret_placeholder``), which takes the
shape of the tuple returned in the other arm. A list of one length, or a
dict of the same keys, built in the function and different in each arm, is
merged item by item the same way, where no other name holds either
(:func:`refuse_shared_lists`: a write through that name would not reach the
merged copy). Anything else that meets a tuple (a number, a tuple of
another length) is refused, located, as is a structure
a loop carries that :mod:`s2s_ad.frontend.loop_structures` did not make leaf
by leaf (:func:`refuse_carried`), where the values carried are single
values: before, such a φ was taken for a number, and ``grad`` of ``if y >
0: return x * y, x`` / ``return x, y`` returned ``(0.0, 0.0)``.

Before → after::

    if y > 0.0:                    p_0 = φ(x * y, y)     (one φ per item)
        p = (x * y, x)             p_1 = φ(x, x * x)
    else:                          p = (p_0, p_1)
        p = (y, x * x)
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.frontend import runtime_lists, structures


def _shaped(like, zero: ir.Const):
    """A placeholder with the shape of the tuple ``like``."""
    if isinstance(like, tuple):
        return tuple(_shaped(x, zero) for x in like)
    return ir.Const(zero.value)


def merge(lo, a, b, var: str | None, node, phi, name):
    """The merge of ``a`` and ``b`` (the values of ``var``, or of the result
    where ``var`` is None, after each arm), one of them a structure;
    ``phi(a, b, name, var)`` merges two single values, ``name()`` names one."""
    placeholder = getattr(lo, "ret_placeholder", None)
    if var is None and placeholder is not None:
        if a is placeholder and isinstance(b, tuple):
            a = _shaped(b, placeholder)
        elif b is placeholder and isinstance(a, tuple):
            b = _shaped(a, placeholder)
    def one(x, y):
        if x is y:
            return x
        if structures.is_structure(x) or structures.is_structure(y):
            return merge(lo, x, y, var, node, phi, name)
        return phi(x, y, name, None)

    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(one(x, y) for x, y in zip(a, b))
    if isinstance(a, structures.StaticList) and isinstance(b, structures.StaticList) \
            and len(a.items) == len(b.items):
        # a list of one length in each arm (in a tuple or dict too), no other
        # name holding either: a new list of the items' φs
        refuse_shared_lists(lo, node, var, a, b, getattr(lo, "merge_envs", None) or [lo.env])
        return structures.StaticList([one(x, y) for x, y in zip(a.items, b.items)])
    if isinstance(a, structures.StaticDict) and isinstance(b, structures.StaticDict) \
            and list(a.items) == list(b.items):
        # a dict of the same keys in each arm, the same way
        refuse_shared_lists(lo, node, var, a, b, getattr(lo, "merge_envs", None) or [lo.env])
        return structures.StaticDict({k: one(a.items[k], b.items[k]) for k in a.items})
    if isinstance(a, structures.StaticObject) and isinstance(b, structures.StaticObject) \
            and a.cls is b.cls and a.items.keys() == b.items.keys():
        # a NamedTuple or dataclass built in each arm (its fields are not
        # assigned to: the merged instance stands for either)
        return structures.StaticObject(a.cls, {k: one(a.items[k], b.items[k]) for k in a.items})
    for side in (a, b):  # a helper's result it could not lower: its own located refusal
        structures.failed_call(lo, side)
    what = f"`{var}`" if var is not None else "the result"
    if structures.is_structure(a) and structures.is_structure(b) \
            and not (isinstance(a, tuple) and isinstance(b, tuple)) \
            and structures.describe(a) == structures.describe(b):
        held = f"a different {structures.describe(a)[2:]} in each arm of this branch"
    else:
        held = f"{_describe(a)} after one arm of this branch and {_describe(b)} after the other"
    hint = ""
    if var is None and lo.loop_depth > 0:
        hint = ("; a tuple returned from inside a loop is carried item by item where the "
                "function has a `return a, b` written out: `a, b = h(x); return a, b`")
    raise lo.src.error(node, f"{what} is {held}; s2s-ad merges two tuples or lists of the "
                       "same length item by item (dicts of the same keys key by key, instances "
                       "of one NamedTuple or dataclass field by field), and nothing else: give "
                       "it the same kind "
                       "of value in both arms (assign the items to names in each arm, "
                       f"`a, b = ...`, and build it after the branch){hint}")


def refuse_shared_lists(lo, node, var: str, a, b, envs: list) -> None:
    """``var`` holds the list (or dict) ``a`` after one arm of a branch and ``b`` after
    the other: refused, located, where another name (before the branch, or
    after either arm) holds one of them too, since the merged list would
    not be that name's list (a write through one would not reach the
    other)."""
    for env in envs:
        for n, v in env.items():
            if n == var:
                continue  # the name merged, holding one of them itself
            if runtime_lists.holds(v, a) or runtime_lists.holds(v, b):
                what = "list" if isinstance(a, structures.StaticList) else "dict"
                copy = "[v for v in xs]" if what == "list" else '{"a": d["a"], ...}'
                held = f"`{var}`" if var is not None else "the result"
                raise lo.src.error(node, f"{held} holds a different {what} in each arm of this "
                                   f"branch, and `{n}` holds one of them too; s2s-ad merges "
                                   f"two of them item by item only where no other name holds "
                                   f"either: build a new one (`{copy}`) or use one name")


def _describe(value) -> str:
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    if structures.is_structure(value):
        return structures.describe(value)
    kind = value.kind if isinstance(value, ir.Value) else type(getattr(value, "value", value)).__name__
    return f"a {kind}" if kind != "array" else "an array"


def refuse_carried(lo, node, carried: list, before: dict) -> None:
    """Refuse a tuple, list or dict built in the function that a loop's
    iterations may change (a name given a new one; a tuple returned from
    inside the loop that :func:`loop_result` could not make one value per
    item): a loop carries single values."""
    for v in carried:
        init = before.get(v)
        if isinstance(v, str) and v.startswith("<"):  # the result, a flag
            if v == "<result>" and _returns_tuple(node.body):
                raise lo.src.error(node, "a tuple returned from inside this loop is carried "
                                   "item by item where its items are numbers and arrays, "
                                   "and this one's are not: assign its items to names, "
                                   "`break`, and return the tuple after the loop")
            continue
        if structures.is_structure(init):
            # (a list appended to or written by index was made a run-time list before)
            raise lo.src.error(node, f"`{v}` holds {_describe(init)} and is given a new value "
                               "in this loop; a loop carries single values: carry the items "
                               "under names of their own (`a, b = b * x, a + y`)")


def _returns_tuple(stmts: list) -> bool:
    """Does a ``return`` of ``stmts`` (not of a function defined in them)
    give a tuple display?"""
    return _returned_tuple(stmts) is not None


def _returned_tuple(stmts: list) -> ast.Tuple | None:
    """The first tuple display a ``return`` of ``stmts`` gives, or None."""
    todo = list(reversed(stmts))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple):
            return n.value
        todo.extend(reversed(list(ast.iter_child_nodes(n))))
    return None


def loop_result(lo, node, result):
    """The result before a loop whose body returns a tuple display
    (``return s, x`` inside a ``for``/``while``; or returns anything, a
    call's tuple too, in a function with a ``return a, b`` elsewhere): where
    no ``return`` has run yet (``result``, the placeholder), a tuple of that
    display's shape whose items
    are the placeholder's constant, so the loop carries the result item by
    item, as :mod:`s2s_ad.frontend.loop_structures` carries a tuple (the flag
    ``ret`` says which iteration's items are the result); ``result`` as it
    is otherwise."""
    display = _returned_tuple(node.body) or _returned_tuple(lo.tree.body)
    if display is None or result is not getattr(lo, "ret_placeholder", None):
        return result

    def shaped(e):
        if isinstance(e, ast.Tuple) and not any(isinstance(x, ast.Starred) for x in e.elts):
            return tuple(shaped(x) for x in e.elts)
        return ir.Const(result.value)

    return shaped(display)


def same_shape(a, b) -> bool:
    """Can :func:`merge` merge ``a`` and ``b`` item by item (tuples of one
    length, instances of one class, nested alike; single values anywhere)?"""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_shape(x, y) for x, y in zip(a, b))
    if isinstance(a, structures.StaticObject) and isinstance(b, structures.StaticObject):
        return a.cls is b.cls and a.items.keys() == b.items.keys() and all(
            same_shape(a.items[k], b.items[k]) for k in a.items)
    if a is b:
        return True
    return not (structures.is_structure(a) or structures.is_structure(b))


def stand_in(v):
    """A value of ``v``'s shape defined everywhere (constants), for the side
    of a φ whose arm ended in ``return``/``break``/``continue``: the code
    after the branch runs only where the other arm ran, so the φ is ``v``
    wherever it is read. None where no such value can be made."""
    if isinstance(v, ir.Const):
        return ir.Const(v.value)
    if isinstance(v, ir.Value):
        zero = {"float": 0.0, "array": 0.0, "int": 0, "bool": False}.get(v.kind, _MISSING)
        return None if zero is _MISSING else ir.Const(zero)
    if isinstance(v, tuple):
        items = [stand_in(x) for x in v]
        return None if any(x is None for x in items) else tuple(items)
    if isinstance(v, structures.StaticObject):
        items = {k: stand_in(x) for k, x in v.items.items()}
        return None if any(x is None for x in items.values()) \
            else structures.StaticObject(v.cls, items)
    return None


_MISSING = object()
