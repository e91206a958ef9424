"""Writes into a dict (or a list inside a list or dict) built before a
branch or loop, made inside it.

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
the φ of their values (a key only one arm set is refused, unless that
arm ended in ``return``, ``break`` or ``continue``). A loop's body runs any number of times,
so a write there into a dict from before the loop is refused, located
(:func:`refuse_in_loop`).

Before → after::

    d = {"a": x, "b": y}              d["a"] after the branch: φ(y, x)
    if y > 0.0:                       (the then arm's y, the else arm's x)
        d["a"] = y
"""

from __future__ import annotations

from s2s_ad.frontend import structures, tuple_merges

_NONE = object()


def reachable(values) -> list:
    """The dicts and lists built in the function that ``values`` hold, nested
    ones too."""
    out, seen, todo = [], set(), list(values)
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, (structures.StaticDict, structures.StaticList)):
            out.append(v)
        if isinstance(v, tuple):
            todo.extend(v)
        elif isinstance(v, (structures.StaticDict, structures.StaticList,
                            structures.StaticObject)):
            todo.extend(v.items.values() if isinstance(v.items, dict) else v.items)
    return out


def _copy(items):
    return dict(items) if isinstance(items, dict) else list(items)


def _put(s, items) -> None:
    if isinstance(s.items, dict):
        s.items.clear()
        s.items.update(items)
    else:
        s.items[:] = items


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(a[k] is b[k] for k in a)
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def snapshot(env: dict) -> list:
    """(dict or list, its items) of each one the names in ``env`` reach."""
    return [(s, _copy(s.items)) for s in reachable(env.values())]


def arm_done(snap: list) -> list:
    """What an arm left in each dict or list of ``snap``; each is put back as
    it was."""
    after = []
    for s, items in snap:
        after.append(_copy(s.items))
        _put(s, items)
    return after


def merge(lo, node, snap: list, arms: list, jumped: list, phi, name) -> None:
    """Each dict or list of ``snap`` after the branch: a key (an index) both
    arms hold (``arms``: :func:`arm_done` of each) at the same value keeps
    it, at two values their φ (``phi(a, b, name, None)``). An arm that
    ended in ``return``/``break``/``continue`` (``jumped``) runs no code
    after the branch: the other arm's dict is taken as it is. Otherwise a
    key only one arm set, or a list whose length one arm changed, is
    refused (``len(d)``, ``"k" in d`` would depend on the branch)."""
    for (s, items), then, orelse in zip(snap, *arms):
        if _same(then, items) and _same(orelse, items):
            continue
        if jumped[0] != jumped[1]:
            # the code after the branch runs only where the other arm ran: its
            # values, through φs whose jumped side is a stand-in (a value of an
            # arm is read after the branch through a φ only)
            keep, gone = (orelse, then) if jumped[0] else (then, orelse)
            out = {} if isinstance(keep, dict) else [None] * len(keep)
            for key in (keep if isinstance(keep, dict) else range(len(keep))):
                v = keep[key]
                old = items.get(key, _NONE) if isinstance(items, dict) else \
                    (items[key] if key < len(items) else _NONE)
                if v is old:
                    out[key] = v
                    continue
                stand = tuple_merges.stand_in(v)
                if stand is None:
                    raise lo.src.error(node, "a dict or list built before this branch gets a "
                                       "value in the arm that does not return that s2s-ad "
                                       "cannot merge: assign it to a name first")
                out[key] = phi(stand, v, name, None) if jumped[0] else phi(v, stand, name, None)
            _put(s, out)
            continue
        if isinstance(items, list):
            if not len(then) == len(orelse) == len(items):
                raise lo.src.error(node, "a list inside a list or dict built before this "
                                   "branch changes its length in one arm: build a new list "
                                   "after the branch")
            _put(s, [a if a is b else phi(a, b, name, None) for a, b in zip(then, orelse)])
            continue
        if then.keys() != orelse.keys():
            key = next(iter((then.keys() ^ orelse.keys())))
            names = [n for n, v in lo.env.items() if v is s]
            what = f"`{names[0]}`" if names else "a dict built before this branch"
            raise lo.src.error(node, f"{what} gets the key {key!r} in one arm of this branch "
                               "only, so its keys (`len`, `in`, a loop over it) would depend on "
                               "the branch: set the key before the branch, or in every arm")
        _put(s, {key: then[key] if then[key] is orelse[key] else
                 phi(then[key], orelse[key], name, None) for key in then})


def refuse_in_loop(lo, snap: list, node) -> None:
    """Refuse a loop's body that wrote into a dict, or a list inside a list
    or dict, built before the loop (a list bound to a name is checked and
    grown at run time elsewhere)."""
    top = {id(v) for v in lo.env.values()}
    for s, items in snap:
        if isinstance(items, list) and id(s) in top:
            continue
        if not _same(_copy(s.items), items):
            names = [n for n, v in lo.env.items() if v is s]
            what = (f"the dict `{names[0]}`" if names else "a dict built before this loop"
                    ) if isinstance(items, dict) else "a list inside a list or dict built before this loop"
            raise lo.src.error(node, f"{what} is written into inside this loop; s2s-ad reads "
                               "its items while generating the code, and a loop's body "
                               "runs any number of times: carry the value under a name of "
                               "its own (`a = d[\"a\"]` before the loop, `a = ...` in it, "
                               "`d[\"a\"] = a` after it)")
