"""Module-level data a function reads: constants of its gradient, read late.

Contract: :func:`names` gives the module-level arrays and structures holding
them (``DATA = np.loadtxt(...)``, ``LAYERS = [(W1, b1), ...]``) that a
function reads, directly, in its nested functions and lambdas, or through
the functions of its own module it calls (and theirs), in order of first
read. :func:`is_module_data` says which values those are: numbers and
lists or tuples of numbers are not among them (they are constants read when
the gradient is made, as before), nor strings, functions, modules, classes.

Such a name becomes a keyword-only parameter of the function's tree, as a
closure's captured data do (:func:`s2s_ad.frontend.source.locate`): a
constant of the gradient (no adjoint), whose value ``grad``/``vjp``/``jvp``
read from the function's ``__globals__`` on every call, so that
``DATA = new`` or ``DATA *= 2`` after the gradient was made is seen, as
Python's late binding sees it. A helper of the same module is given it at
each call by the function calling it, which has it as a parameter too.

Before → after::

    DATA = np.ones((5, 3))              def loss(w, *, DATA):
    def loss(w):                            r = DATA @ w
        r = DATA @ w                        return np.sum(r * r)
        return np.sum(r * r)
"""

from __future__ import annotations

import dis
import inspect
import numbers
import types
import weakref

from s2s_ad.frontend.specs import captured_spec, number_list
from s2s_ad.rules import user as user_rules

_LOADS = frozenset(("LOAD_GLOBAL", "LOAD_NAME"))
_ATTRIBUTE_LOADS = frozenset(("LOAD_ATTR", "LOAD_METHOD"))

_read: dict = {}
"""id of a code object -> (the code object, the global names it and its
nested code load, in order). Code objects are immutable; each entry keeps
its code alive, so an id is not reused while the entry stands."""


def is_module_data(value) -> bool:
    """An array, or a structure (list, tuple, str-keyed dict, dataclass,
    NamedTuple) of numbers and arrays other than a plain list of numbers."""
    if value is None or callable(value) or isinstance(value, (
            bool, str, bytes, numbers.Number, types.ModuleType)):
        return False  # (functions, classes, ufuncs, modules: no data)
    cls = value.__class__
    if cls.__module__ == "numpy" and hasattr(value, "shape"):
        return True
    if number_list(value):
        return False  # a module constant, read when the gradient is made
    return captured_spec(value) is not None


def loads(code: types.CodeType) -> tuple[str, ...]:
    """The global names ``code`` and the code nested in it load, in order,
    and ``"NAME.attr"`` for an attribute read straight off one (``Model.part``)."""
    hit = _read.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1]
    out: dict[str, None] = {}
    stack = [code]
    while stack:
        c = stack.pop(0)
        before = None
        for ins in dis.get_instructions(c):
            if ins.opname in _LOADS:
                out[ins.argval] = None
            elif before is not None and ins.opname in _ATTRIBUTE_LOADS \
                    and isinstance(ins.argval, str):
                out[f"{before}.{ins.argval}"] = None  # `Model.part`: see _names
            before = ins.argval if ins.opname in _LOADS else None
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    if len(_read) >= 4096:
        _read.clear()
    _read[id(code)] = (code, tuple(out))
    return tuple(out)


_memo: dict = {}
"""id of a function -> (a weak reference to it, its code, what :func:`names`
read: each global name with the id and class of the object it held, the
result): found again while every one of those names holds an object of that
id and class. Bounded. Nothing here keeps the user's objects alive (a
function kept would keep its module's globals, and so itself); an id reused
by a new object of the same class is taken for the old one, which at worst
makes a name read as data or not as before: a located refusal where the
code is lowered, or a number read when the code runs, never other code for
an array."""


def names(fn) -> tuple[str, ...]:
    """The module data ``fn`` reads (see the module docstring), now."""
    code = getattr(fn, "__code__", None)
    g = getattr(fn, "__globals__", None)
    if code is None or g is None:
        return ()
    hit = _memo.get(id(fn))
    if hit is not None and hit[0]() is fn and hit[1] is code and all(
            id(v := g.get(n, _MISSING)) == i and v.__class__ is c for n, i, c in hit[2]):
        return hit[3]
    read: dict = {}
    found = _names(fn, g, read)
    if len(_memo) >= 1024:
        _memo.clear()
    try:
        ref = weakref.ref(fn)
    except TypeError:
        return found
    _memo[id(fn)] = (ref, code, tuple((n, id(v), v.__class__) for n, v in read.items()), found)
    return found


_MISSING = object()


def _names(fn, g: dict, read: dict) -> tuple[str, ...]:
    out: dict[str, None] = {}
    seen: set[int] = set()
    stack = [fn]
    while stack:
        f = stack.pop(0)
        if id(f) in seen:
            continue
        seen.add(id(f))
        for n in loads(f.__code__):
            if "." in n:
                # `Model.part(x)`: a static or class method of a class of the
                # module reads what it reads
                method = _class_method(g.get(n.split(".")[0]), n.split(".")[1])
                if method is not None and method.__globals__ is g:
                    stack.append(method)
                continue
            v = g.get(n, _MISSING)
            read.setdefault(n, v)
            if v is _MISSING:
                continue
            if isinstance(v, types.FunctionType):
                if v.__globals__ is g and user_rules.lookup(v) is None:
                    stack.append(v)  # a helper of the same module: what it reads too
            elif is_module_data(v):
                out[n] = None
    return tuple(out)


def _class_method(cls, attr: str):
    """The function of the staticmethod or classmethod ``cls.attr``, else None."""
    if not isinstance(cls, type):
        return None
    held = inspect.getattr_static(cls, attr, None)
    if isinstance(held, (staticmethod, classmethod)) \
            and isinstance(held.__func__, types.FunctionType):
        return held.__func__
    return None


def values(fn) -> dict:
    """The module data ``fn`` reads, name -> value now."""
    g = getattr(fn, "__globals__", {})
    return {n: g[n] for n in names(fn)}


def same_module(a: dict, b: dict) -> bool:
    """Are ``a`` and ``b`` the globals of one module (or a copy of them, as
    a nested function lifted by s2s-ad reads)?"""
    return a is b or (a.get("__name__") == b.get("__name__")
                      and a.get("__file__") == b.get("__file__"))
