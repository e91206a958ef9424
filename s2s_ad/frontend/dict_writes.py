"""Writes into a dict built before a branch or loop, made inside it.

Contract: a dict built in the function is read while lowering
(:class:`~s2s_ad.frontend.structures.StaticDict`: each key's value), so
``d["a"] = y`` inside one arm of a branch changed the one dict both arms
and the code after the branch read: ``d = {"a": x}; if y > 0: d["a"] = y``
then ``d["a"] * 3`` differentiated ``3 * y`` even where the arm did not run
(``grad`` gave ``(0, 3)`` where ``(3, 0)`` is right), or held a value of the
arm that ran only there (an internal ``IRError``). Now each arm writes its
own: :func:`snapshot` takes each dict reachable from the names before the
branch, :func:`arm_done` keeps what an arm wrote and puts the dict back as
it was for the next arm, and :func:`merge` sets each key both arms have to
the φ of their values (a key only one arm set is dropped: read after the
branch, it is refused as absent). A loop's body runs any number of times,
so a write there into a dict from before the loop is refused, located
(:func:`refuse_in_loop`).

Before → after::

    d = {"a": x, "b": y}              d["a"] after the branch: φ(y, x)
    if y > 0.0:                       (the then arm's y, the else arm's x)
        d["a"] = y
"""

from __future__ import annotations

from s2s_ad.frontend import structures


def _reachable(values) -> list:
    """The dicts built in the function that ``values`` hold, nested ones too."""
    out, seen, todo = [], set(), list(values)
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, structures.StaticDict):
            out.append(v)
            todo.extend(v.items.values())
        elif isinstance(v, tuple):
            todo.extend(v)
        elif isinstance(v, (structures.StaticList, structures.StaticObject)):
            todo.extend(v.items.values() if isinstance(v.items, dict) else v.items)
    return out


def snapshot(env: dict) -> list:
    """(dict, its items) of each dict the names in ``env`` reach."""
    return [(d, dict(d.items)) for d in _reachable(env.values())]


def arm_done(snap: list) -> list:
    """What an arm left in each dict of ``snap``; each is put back as it was."""
    after = []
    for d, items in snap:
        after.append(dict(d.items))
        d.items.clear()
        d.items.update(items)
    return after


def merge(snap: list, arms: list, phi, name) -> None:
    """Each dict of ``snap`` after the branch: a key both arms hold (``arms``:
    :func:`arm_done` of each) at the same value keeps it, at two values their
    φ (``phi(a, b, name, None)``); a key only one arm set is dropped."""
    for (d, items), then, orelse in zip(snap, *arms):
        if all(then.get(k) is v and orelse.get(k) is v for k, v in items.items()) \
                and then.keys() == orelse.keys() == items.keys():
            continue
        merged = {}
        for key in then:
            if key in orelse:
                a, b = then[key], orelse[key]
                merged[key] = a if a is b else phi(a, b, name, None)
        d.items.clear()
        d.items.update(merged)


def refuse_in_loop(lo, snap: list, node) -> None:
    """Refuse a loop's body that wrote into a dict built before the loop."""
    for d, items in snap:
        if d.items.keys() != items.keys() or any(d.items[k] is not v for k, v in items.items()):
            names = [n for n, v in lo.env.items() if v is d]
            what = f"the dict `{names[0]}`" if names else "a dict built before this loop"
            raise lo.src.error(node, f"{what} is written into inside this loop; s2s-ad reads "
                               "a dict's items while generating the code, and a loop's body "
                               "runs any number of times: carry the value under a name of "
                               "its own (`a = d[\"a\"]` before the loop, `a = ...` in it, "
                               "`d[\"a\"] = a` after it)")
