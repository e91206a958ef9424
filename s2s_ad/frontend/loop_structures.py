"""Tuples, NamedTuples, dataclasses and dicts carried across a loop's iterations.

Contract: ``expand(lo, carried, node)`` takes the names a loop assigns and
had before it (``carried``) and returns them with each name holding a
structure built while lowering (a tuple, a NamedTuple or dataclass
instance, a dict of constant keys; nested, of numbers and arrays) replaced by
one name per leaf, ``"p.a"``, ``"p.b"`` (keys no Python variable can have;
the tuple a call returned, ``r = h(x)``, by its items),
bound in ``lo.env`` to the leaves; the loop carries those single values as
it carries any. ``enter(lo, plan)`` rebinds each structure, at the top of the
body, to the same structure of the body's parameters; ``leave(lo, plan,
node)``, once the body is lowered, binds the leaf names to the leaves of the
structure the name holds then, which must have the same shape (the same
classes, keys and lengths; a leaf may change between a number and an array
as any carried value may), refused, located, otherwise; ``settle(lo, plan)``,
after the loop, rebinds each name to the structure of the loop's results and
drops the leaf names. Leaves that are strings or None (static: they select
code) must stay what they were.

    p = State(x, 0.0)                 p.a, p.b carried: φ(p.a) = x, ...
    for i in range(n):           →    body: p = State(φ(p.a), φ(p.b))
        p = step(p, x)                      p = step(p, x); yields p.a, p.b
    return p.a + p.b                  after: p = State(out(p.a), out(p.b))
"""

from __future__ import annotations

import re

from s2s_ad import ir
from s2s_ad.frontend import dict_writes, runtime_lists, statics
from s2s_ad.frontend.structures import (StaticDict, StaticList, StaticObject, describe,
                                        is_structure, made_items)

__all__ = ["expand", "enter", "leave", "settle", "leaf_name"]


def _shape(value):
    """``(spec, leaves)`` of ``value``, or None where it is not a structure
    this module carries (a list: grown at run time or refused elsewhere)."""
    leaves: list = []

    def walk(v):
        if isinstance(v, (tuple, StaticList)):
            kind = "tuple" if isinstance(v, tuple) else "list"
            items = [walk(x) for x in (v if kind == "tuple" else v.items)]
            return None if None in items else (kind, tuple(items))
        if isinstance(v, StaticObject):
            items = [(k, walk(x)) for k, x in v.items.items()]
            return None if any(s is None for _, s in items) else ("object", v.cls, tuple(items))
        if isinstance(v, StaticDict):
            if not all(isinstance(k, str) for k in v.items):
                return None
            items = [(k, walk(x)) for k, x in v.items.items()]
            return None if any(s is None for _, s in items) else ("dict", tuple(items))
        if statics.static(v):
            return ("static", v.value)
        if isinstance(v, (ir.Value, ir.Const)) and not (isinstance(v, ir.Value)
                                                        and v.kind in ("tuple", "list", "tape")):
            leaves.append(v)
            return ("leaf",)
        return None

    spec = walk(value)
    return None if spec is None else (spec, leaves)


def _rebuild(spec, leaves: list):
    it = iter(leaves)

    def build(s):
        if s[0] == "leaf":
            return next(it)
        if s[0] == "static":
            return ir.Const(s[1])
        if s[0] == "tuple":
            return tuple(build(x) for x in s[1])
        if s[0] == "list":
            return StaticList([build(x) for x in s[1]])
        if s[0] == "object":
            return StaticObject(s[1], {k: build(x) for k, x in s[2]})
        return StaticDict({k: build(x) for k, x in s[1]})

    return build(spec)


def _paths(spec, base: str) -> list[str]:
    """The leaf names of ``spec`` under ``base``: ``p.a``, ``p.0``, ``p.w.b``."""
    out: list[str] = []

    def walk(s, at):
        if s[0] == "leaf":
            out.append(at)
        elif s[0] in ("tuple", "list"):
            for k, x in enumerate(s[1]):
                walk(x, f"{at}.{k}")
        elif s[0] in ("object", "dict"):
            for k, x in (s[2] if s[0] == "object" else s[1]):
                walk(x, f"{at}.{k}")

    walk(spec, base)
    return out


def leaf_name(key: str) -> str:
    """A variable name for the leaf ``key`` (``p.a`` → ``p_a``)."""
    return re.sub(r"\W", "_", key)


def expand(lo, carried: list, node) -> tuple[list, dict]:
    """``carried`` with each structure's name replaced by its leaves' names,
    and the plan: name → (spec, leaf names)."""
    plan: dict = {}
    out: list = []
    for v in carried:
        value = lo.env.get(v)
        value = made_items(lo, value) or value  # `r = h(x)` before the loop: its items
        shaped = _shape(value) if is_structure(value) and not _shared(lo, v, value) else None
        if shaped is None:
            out.append(v)
            continue
        spec, leaves = shaped
        keys = _paths(spec, v)
        plan[v] = (spec, keys)
        for k, leaf in zip(keys, leaves):
            lo.env[k] = leaf
        out += keys
    return out, plan


def _shared(lo, name: str, value) -> bool:
    """Does another name (or a structure another name holds) hold a list
    inside ``value``? The loop gives ``name`` a new list each iteration, so
    a write into it would not reach the other name, as it does in Python
    on the first iteration."""
    lists = [s for s in dict_writes.reachable([value]) if isinstance(s, StaticList)]
    return any(n != name and runtime_lists.holds(other, x)
               for n, other in lo.env.items() for x in lists)


def enter(lo, plan: dict) -> None:
    for v, (spec, keys) in plan.items():
        lo.env[v] = _rebuild(spec, [lo.env[k] for k in keys])


def leave(lo, plan: dict, node) -> None:
    for v, (spec, keys) in plan.items():
        now = lo.env.get(v)
        made = made_items(lo, now)  # `r = h(x)` in the body: its items
        if made is not None:  # (a list the helper returned, `return [a, b]`, as a list)
            now = StaticList(list(made)) if spec[0] == "list" else made
        shaped = _shape(now) if is_structure(now) else None
        if shaped is None or shaped[0] != spec:
            before = _what(_rebuild(spec, [ir.Const(0.0)] * len(keys)))
            what = _what(now) if is_structure(now) else "another value"
            raise lo.src.error(node, f"`{v}` holds {before} before this loop and {what} after "
                               "an iteration; a structure carried across a loop's iterations "
                               "keeps its shape (the same class, keys and length, its strings "
                               "and None unchanged)")
        for k, leaf in zip(keys, shaped[1]):
            lo.env[k] = leaf


def settle(lo, plan: dict) -> None:
    for v, (spec, keys) in plan.items():
        lo.env[v] = _rebuild(spec, [lo.env.pop(k) for k in keys])


def _what(value) -> str:
    if isinstance(value, StaticList):
        return f"a list of {len(value.items)}"
    return f"a tuple of {len(value)}" if isinstance(value, tuple) else describe(value)
