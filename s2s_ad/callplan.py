"""What a call of ``s2s_ad.vjp`` finds again without redoing it: the
forward/backward pair generated for arguments like these.

``vjp(fn, *args)`` runs once per point, so the work of finding the pair
(binding the arguments with ``inspect``, the lengths of lists, which
arguments are arrays: about 90 µs) must not be paid on every call. A plain
function (not a closure, a bound method, a function with static parameters,
one reading module-level arrays, or one s2s-ad generated) gets a *plan*, made once per function object:

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

What a call costs over the forward pass is the binder, the kinds and the
check that the fingerprint still holds: not the walk that computes it, but
the identity of every object that walk read
(:func:`s2s_ad.fingerprint.watched`), about 0.2 µs; the walk runs again only
when one of them changed. Whether the backward pass consumes its tape (and
so needs a copy of it per call) is found on the first call of a pair: the
containers of a tape are fixed by the pair's code.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import types
import weakref

from s2s_ad import cache, fingerprint, signatures
from s2s_ad.frontend import module_data

_NUMBERS = frozenset((float, int, bool))

_plans: dict = {}
"""id of a function -> (a weak reference to it, its plan or False). Not a
WeakKeyDictionary: its lookup makes a weak reference per call."""
cache._memos.append(_plans)  # emptied by clear_cache, with the cache


def private(v):
    """``v`` as a ``vjp`` call keeps it: its arrays, lists and dicts copied
    (a list or tuple of numbers shallowly), so that changing an argument or
    the value in place after ``vjp`` returned (``pred -= y``, ``x[0] = 0.0``)
    cannot change what ``vjp_fn`` reads: the forward pass kept them on its
    tape (``np.exp(x)``'s backward reads the value it returned, ``sin(c[i] *
    x)``'s reads ``c``). Numbers, strings, None and functions are themselves."""
    cls = v.__class__
    if cls in _NUMBERS or cls is str or v is None:
        return v
    if cls is list or cls is tuple:
        if signatures.numbers_sequence(v):  # numbers only (as :func:`kinds` tells)
            return list(v) if cls is list else v
        items = [private(x) for x in v]
        return items if cls is list else tuple(items)
    if cls is dict:
        return {k: private(x) for k, x in v.items()}
    if isinstance(v, tuple) and hasattr(cls, "_fields"):  # a NamedTuple
        return cls(*(private(x) for x in v))
    if hasattr(v, "ndim") and hasattr(v, "shape") and hasattr(v, "copy"):
        return v.copy()  # an array (a Dask array's copy stays lazy)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return copy.deepcopy(v)
    return v


class Plan:
    __slots__ = ("bind", "pairs", "doc", "signature", "last", "quick", "numpy")

    def __init__(self, bind, doc: str, signature: inspect.Signature):
        self.bind = bind
        self.pairs: dict = {}
        self.doc = doc
        self.signature = signature
        self.last = None
        """The pair remembered last, found again by ``quick``."""
        self.numpy = False
        """Whether ``last`` was found for an argument that is a NumPy array or
        scalar (whose dtype ``vjp`` gives its cotangent)."""
        self.quick = None
        """A function with ``fn``'s signature that runs ``last``, returning
        ``(value, vjp_fn)``, when the arguments' kinds are those ``last`` was
        found for and the objects the fingerprint read are unchanged (tested
        term by term, in one generated function); None otherwise."""


def plan(fn) -> Plan | None:
    """The plan of ``fn``, made on its first call; None for a function that
    always goes the slow way."""
    entry = _plans.get(id(fn))
    if entry is not None and entry[0]() is fn:
        return entry[1] or None
    key = id(fn)
    try:
        # (the table bound as a default: the callback may run after this
        # module's globals are gone, at exit)
        ref = weakref.ref(fn, lambda _, key=key, plans=_plans: plans.pop(key, None))
    except TypeError:  # not weakly referable
        return None
    found = _make(fn)
    _plans[key] = (ref, found if found is not None else False)
    return found


def _make(fn) -> Plan | None:
    if type(fn) is not types.FunctionType or fn.__code__.co_freevars \
            or getattr(fn, "__s2s_ad_origin__", None) is not None \
            or cache.static_parameters(fn) or module_data.names(fn):
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    bind = signatures.binder(fn.__name__, sig)
    if bind is None:
        return None
    return Plan(bind, f"Cotangents of the parameters of {fn.__name__} for an output "
                "cotangent, from one saved forward pass.", sig)


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
            if not signatures.numbers_sequence(v):  # (arrays among the items, strings...)
                return None
            out.append((cls, len(v)))
        else:
            ndim = getattr(v, "ndim", None)
            if ndim is None or not hasattr(v, "shape"):
                return None
            out.append((cls, ndim))
    return tuple(out)


class Found:
    """A pair in a plan's table: ``fwd``, ``bwd``, the fingerprint of the
    function then and what computing it read (``watch``, a
    :class:`s2s_ad.fingerprint.Reads`, or None), and ``pullback(tape)``, the
    ``vjp_fn`` of one forward pass."""

    __slots__ = ("fwd", "bwd", "fingerprint", "watch", "pullback")

    def __init__(self, fn, fwd, bwd, pullback):
        self.fwd, self.bwd, self.pullback = fwd, bwd, pullback
        self.fingerprint, self.watch = fingerprint.watched(fn)

    def holds(self, fn) -> bool:
        """Is the pair still the code of ``fn`` (its fingerprint unchanged)?"""
        if self.watch is not None and self.watch.unchanged():
            return True
        now, watch = fingerprint.watched(fn)
        if now != self.fingerprint:
            return False
        self.watch = watch  # the same code: watch the objects read now
        return True


def pair(fn, p: Plan, args: tuple, kwargs: dict):
    """``(values, found)`` for this call from the plan's table, or None."""
    try:
        values = p.bind(*args, **kwargs)
    except TypeError:
        return None  # the slow way words the error
    key = kinds(values)
    if key is None:
        return None
    hit = p.pairs.get(key)
    if hit is None:
        return None
    watch = hit.watch
    if not hit.holds(fn):
        return None
    if hit is p.last and hit.watch is not watch:  # what quick checks: the new reads
        p.quick = _quick(fn.__name__, p.signature, key, hit.watch)
    cache._stats["hits"] += 1
    return values, hit


_PLAIN = frozenset({float, int, bool, list, tuple})
"""Python's own classes among the kinds (:func:`kinds`): no NumPy dtype."""


def remember(fn, p: Plan, values: tuple, fwd, bwd, pullback) -> None:
    key = kinds(values)
    if key is not None and not module_data.names(fn):  # (module data: read on every call)
        p.last = p.pairs[key] = Found(fn, fwd, bwd, pullback)
        p.numpy = any(k not in _PLAIN and not (k.__class__ is tuple and k[0] in _PLAIN)
                      for k in key)
        p.quick = _quick(fn.__name__, p.signature, key, p.last)


pullback_sources: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""The code of a ``vjp_fn`` made by generated code -> the source of its pair
(:func:`s2s_ad.source_of` finds it there: no attribute set per closure)."""


def closure_text(doc: str, consumes: bool, indent: str) -> str:
    """The ``def vjp_fn(cotangent)`` of one forward pass, whose tape is the
    variable ``_s2s_tape``, at ``indent``: it runs the backward pass
    ``_s2s_bwd`` on the tape, or on a copy of it where the backward consumes
    its tape (``_s2s_copy``); its docstring is in its code."""
    tape = "_s2s_copy(_s2s_tape)" if consumes else "_s2s_tape"
    return (f"{indent}def vjp_fn(cotangent):\n"
            f"{indent}    {doc!r}\n"
            f"{indent}    return _s2s_bwd({tape}, cotangent)\n")


def shows(made, source: str) -> None:
    """The ``vjp_fn`` closures that the generated function ``made`` returns
    show ``source`` (each one's code is a constant of ``made``'s)."""
    for c in made.__code__.co_consts:
        if isinstance(c, types.CodeType) and c.co_name == "vjp_fn":
            pullback_sources[c] = source


def _quick(name: str, sig: inspect.Signature, key: tuple, found: Found):
    """``vjp`` for arguments of the kinds ``key`` while what ``fn``'s
    fingerprint read is unchanged (see :class:`Plan`); None when there is
    nothing to watch."""
    watch = found.watch
    if watch is None:
        return None
    space = dict(watch.space)
    space.update({"_s2s_fwd": found.fwd, "_s2s_pullback": found.pullback,
                  "_s2s_stats": cache._stats})
    tests = signatures.kind_tests(list(sig.parameters), key, space) + watch.terms
    # what the forward pass keeps is the call's own (:func:`private`): a list of
    # numbers copied, an array too; the value unless it is a float
    space.update(_s2s_private=private, _s2s_list=list)
    passed = ", ".join(p if kind.__class__ is not tuple or kind[0] is tuple
                       else f"_s2s_list({p})" if kind[0] is list else f"{p}.copy()"
                       for p, kind in zip(sig.parameters, key))
    inline = getattr(found.pullback, "__s2s_ad_closure__", None)
    if inline is None:
        made, pullback = "", "_s2s_pullback(_s2s_tape)"
    else:  # the closure made here, not by a call of the pullback
        bwd, consumes, doc, source = inline
        space.update(_s2s_bwd=bwd, _s2s_copy=copy.deepcopy)
        made, pullback = closure_text(doc, consumes, " " * 8), "vjp_fn"
    quick = signatures.binder(name, sig, tests, space,
                              then=f"_s2s_stats['hits'] += 1\n"
                                   f"        _s2s_value, _s2s_tape = _s2s_fwd({passed})\n"
                                   + made +
                                   f"        return (_s2s_value if _s2s_value.__class__ is float "
                                   f"else _s2s_private(_s2s_value)), {pullback}")
    if quick is not None and inline is not None:
        shows(quick, source)
    return quick
