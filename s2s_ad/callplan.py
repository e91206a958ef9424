"""What a call of ``s2s_ad.vjp`` finds again without redoing it: the
forward/backward pair generated for arguments like these.

``vjp(fn, *args)`` runs once per point, so the work of finding the pair
(binding the arguments with ``inspect``, the lengths of lists, which
arguments are arrays: about 90 µs) must not be paid on every call. A plain
function (not a closure, a bound method, a function with static parameters or
one s2s-ad generated) gets a *plan*, made once per function object:

* a binder with ``fn``'s own signature that returns its arguments in order,
  defaults applied (a call that does not fit goes the slow way, which words
  the error);
* a table from the *kinds* of the bound arguments (each one's class; a list's
  or tuple's length when it holds numbers only; an array's number of
  dimensions) to the pair found for them, with the fingerprint of ``fn``
  (:func:`s2s_ad.cache.fingerprint`) at that time.

A call whose kinds are in the table, and whose function's fingerprint is
unchanged (an edited helper or module constant changes it), runs that pair;
any other call goes the slow way and fills the table. The kinds decide
everything the slow way reads: the lengths of lists of numbers, and which
arguments are arrays (a class with ``ndim``, and its ``ndim`` for a 0-d array
given to a parameter annotated as a number).
"""

from __future__ import annotations

import inspect
import types
import weakref

from s2s_ad import cache, signatures

_NUMBERS = frozenset((float, int, bool))

_plans: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
cache._memos.append(_plans)  # emptied by clear_cache, with the cache


class Plan:
    __slots__ = ("bind", "pairs", "doc")

    def __init__(self, bind, doc: str):
        self.bind = bind
        self.pairs: dict = {}
        self.doc = doc


def plan(fn) -> Plan | None:
    """The plan of ``fn``, made on its first call; None for a function that
    always goes the slow way."""
    try:
        found = _plans.get(fn)
    except TypeError:  # not weakly referable
        return None
    if found is not None:
        return found or None
    found = _make(fn)
    _plans[fn] = found if found is not None else False
    return found


def _make(fn) -> Plan | None:
    if type(fn) is not types.FunctionType or fn.__code__.co_freevars \
            or getattr(fn, "__s2s_ad_origin__", None) is not None \
            or cache.static_parameters(fn):
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    bind = signatures.binder(fn.__name__, sig)
    if bind is None:
        return None
    return Plan(bind, f"Cotangents of the parameters of {fn.__name__} for an output "
                "cotangent, from one saved forward pass.")


def kinds(values: tuple):
    """What decides the pair generated for these arguments (see the module
    docstring), or None when it is not cheap to know (a dict, a dataclass,
    a list holding arrays, a string)."""
    out = []
    for v in values:
        cls = v.__class__
        if cls in _NUMBERS:
            out.append(cls)
        elif cls is list or cls is tuple:
            try:
                if sum(v).__class__ not in _NUMBERS:
                    return None
            except TypeError:  # items that do not add
                return None
            out.append((cls, len(v)))
        else:
            ndim = getattr(v, "ndim", None)
            if ndim is None or not hasattr(v, "shape"):
                return None
            out.append((cls, ndim))
    return tuple(out)


def pair(fn, p: Plan, args: tuple, kwargs: dict):
    """``(values, fwd, bwd)`` for this call from the plan's table, or None."""
    try:
        values = p.bind(*args, **kwargs)
    except TypeError:
        return None  # the slow way words the error
    key = kinds(values)
    if key is None:
        return None
    hit = p.pairs.get(key)
    if hit is None or hit[0] != cache.fingerprint(fn):
        return None
    cache._stats["hits"] += 1
    return values, hit[1], hit[2]


def remember(fn, p: Plan, values: tuple, fwd, bwd) -> None:
    key = kinds(values)
    if key is not None:
        p.pairs[key] = (cache.fingerprint(fn), fwd, bwd)
