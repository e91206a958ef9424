"""What the generated code of a function depends on, as a hashable value
(:func:`fingerprint`): the key of the cache of generated functions
(:mod:`s2s_ad.cache`), computed again when a gradient is asked for, so that
an edited function, helper or module constant gets new code.

:func:`watched` gives the fingerprint with a check that costs a few
attribute reads instead of the walk: ``unchanged()`` is True while every
object the walk read (each function's code, defaults and rule attribute,
each global name read, a module's members, a closure's cells) is the same
object as then (a list of numbers also equal to its copy), so that the
fingerprint is then the same. False says nothing: compute it again."""

from __future__ import annotations

import inspect
import numbers
import types
from typing import Callable

from s2s_ad.frontend import lowering as frontend, methods, source, statics as frontend_statics
from s2s_ad.rules import user as user_rules


def fingerprint(fn: Callable) -> tuple:
    """What the generated code of ``fn`` depends on, as a hashable value: the
    source text of ``fn`` and of the user functions it reads, the numbers
    they inline (module constants, defaults), and the user rules reached.
    Two functions with equal fingerprints get the same generated code."""
    out: list = []
    _fingerprint(fn, out, set())
    return tuple(out)


class _Unwatchable(Exception):
    """A read :func:`watched` cannot check by identity (a bound method's
    object, a mutable list that is not of numbers)."""


class Reads:
    """The reads of one walk: ``terms``, Python expressions over the names
    bound in ``space``, each True while one read gives the same object, and
    ``unchanged()``, True while all of them are."""

    def __init__(self):
        self.space: dict = {"_s2s_missing": _MISSING, "_s2s_getattr": getattr, "_s2s_len": len}
        self.terms: list[str] = []
        self.unchanged: Callable[[], bool] = lambda: False

    def name(self, obj) -> str:
        n = f"_s2s_{len(self.space)}"
        self.space[n] = obj
        return n

    def same(self, expr: str, obj) -> None:
        """``expr`` (over names this made) still evaluates to ``obj`` itself."""
        self.terms.append(f"{expr} is {self.name(obj)}")

    def global_(self, namespace: dict, key: str, obj) -> None:
        self.same(f"{self.name(namespace)}.get({key!r}, _s2s_missing)",
                  _MISSING if key not in namespace else obj)
        if obj.__class__ is list:
            if not all(isinstance(v, numbers.Number) for v in obj):
                raise _Unwatchable(key)
            self.terms.append(f"{self.name(obj)} == {self.name(list(obj))}")


_MISSING = object()


def watched(fn: Callable) -> tuple[tuple, Reads | None]:
    """``fingerprint(fn)`` and what computing it read (see the module
    docstring), None where a read cannot be checked by identity."""
    out: list = []
    reads = Reads()
    try:
        _fingerprint(fn, out, set(), reads)
    except _Unwatchable:
        return fingerprint(fn), None
    text = "def unchanged():\n    return (" + ("\n            and ".join(reads.terms) or "True") \
        + ")\n"
    exec(compile(text, f"<s2s-ad: what {getattr(fn, '__name__', 'fn')} reads>", "exec"),
         reads.space)
    reads.unchanged = reads.space.pop("unchanged")
    return tuple(out), reads


def _fingerprint(fn, out: list, seen: set, reads: Reads | None = None) -> None:
    if id(fn) in seen:
        return
    seen.add(id(fn))
    if reads is not None:
        if type(fn) is not types.FunctionType:
            raise _Unwatchable(fn)
        f = reads.name(fn)
        for attr in ("__code__", "__defaults__", "__kwdefaults__", "__module__", "__qualname__"):
            reads.same(f"{f}.{attr}", getattr(fn, attr))
        reads.same(f"_s2s_getattr({f}, {user_rules.ATTRIBUTE!r}, None)",
                   getattr(fn, user_rules.ATTRIBUTE, None))
        kw = fn.__kwdefaults__
        if kw:  # a dict: its items, read now
            for k, v in kw.items():
                reads.same(f"{reads.name(kw)}.get({k!r}, _s2s_missing)", v)
            reads.terms.append(f"_s2s_len({reads.name(kw)}) == {len(kw)}")
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        # a bound method: the sources of the methods it reaches, the kinds of
        # the data it reads from its object, the constants' values
        parts, funcs = methods.fingerprint_parts(fn)
        out.append(("method", parts))
        for f in funcs:
            _fingerprint(f, out, seen)
        return
    rule = user_rules.lookup(fn) if isinstance(fn, types.FunctionType) else None
    if rule is not None or not isinstance(fn, types.FunctionType):
        # A primitive: its identity, not its source, decides the code.
        # (Not the rule record's id: a rule given as a plain attribute tuple
        # gets a new record on every lookup.)
        fwd, bwd = getattr(rule, "fwd", None), getattr(rule, "bwd", None)
        out.append(("rule", id(fn), id(fwd), id(bwd), _dotted(fwd), _dotted(bwd)))
        return
    text = _source_text(fn.__code__)
    code = fn.__code__
    out.append(("fn", fn.__module__, fn.__qualname__, code.co_filename, code.co_firstlineno, text, _numbers(fn.__defaults__),
                _numbers(tuple(sorted((fn.__kwdefaults__ or {}).items())))))
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        # A closure's captured data are parameters of its gradient: their
        # kinds decide the code; captured functions are read like globals.
        try:
            obj = cell.cell_contents
        except ValueError:
            if reads is not None:
                raise _Unwatchable(name) from None
            out.append(("empty cell", name))
            continue
        if reads is not None:
            reads.same(f"{reads.name(cell)}.cell_contents", obj)
        if source.is_data(obj):
            out.append(("captured", name, isinstance(obj, numbers.Number)))
        else:
            _global(name, obj, fn, out, seen, reads)
            if not isinstance(obj, (types.FunctionType, types.ModuleType)):
                out.append(("captured object", name, id(obj)))
    g = fn.__globals__
    for name in _names(fn.__code__):
        obj = g.get(name, None)
        if reads is not None:
            reads.global_(g, name, obj)
        _global(name, obj, fn, out, seen, reads)


_code_info: dict = {}
"""id of a code object -> (the code object, its source text, the global names it reads):
code objects are immutable, and a function defined anew (an edit, a re-import) gets a
new one. A plain dictionary by identity (a weak one costs a weak reference per lookup,
and a code object's hash walks its fields), bounded; each entry keeps its code alive, so
an id is never reused while its entry stands."""


def _source_text(code: types.CodeType) -> str | None:
    """The source text of ``code``, read once per code object. Reading it is
    most of the cost of a cache lookup."""
    return _info(code)[1]


def _info(code: types.CodeType) -> tuple:
    hit = _code_info.get(id(code))
    if hit is not None and hit[0] is code:
        return hit
    try:
        text = "".join(inspect.getsourcelines(code)[0])
    except (OSError, TypeError):
        text = None  # source.locate will refuse it with a clear message
    if len(_code_info) >= 4096:
        _code_info.clear()
    hit = _code_info[id(code)] = (code, text, sorted(set(_read(code))))
    return hit


def _read(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _read(const)
    return names


def _global(name: str, obj, fn, out: list, seen: set, reads: Reads | None = None) -> None:
    if isinstance(obj, numbers.Number) or frontend_statics.is_static_value(obj):
        out.append((name, type(obj).__name__, obj))
    elif isinstance(obj, (list, tuple)) and all(isinstance(v, numbers.Number) for v in obj):
        out.append((name, type(obj).__name__, tuple(obj)))  # a constant list, read as numbers
    elif isinstance(obj, types.FunctionType):
        out.append(("calls", name))
        _fingerprint(obj, out, seen, reads)
    elif isinstance(obj, types.ModuleType) and not frontend._is_library_module(obj):
        # ``helpers.sq(x)``, ``pkg.helpers.sq(x)``: co_names holds every
        # part of the chain, so each module is searched for the others.
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if reads is not None and "__getattr__" in vars(obj):
            raise _Unwatchable(name)
        for attr in _names(fn.__code__):
            member = getattr(obj, attr, None)
            if reads is not None:
                reads.global_(vars(obj), attr, member)
            if isinstance(member, (numbers.Number, types.FunctionType, types.ModuleType)):
                _global(f"{name}.{attr}", member, fn, out, seen, reads)


def _dotted(f) -> str | None:
    return None if f is None else f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', '')}"


def _names(code: types.CodeType) -> list[str]:
    """The global names ``code`` and its nested code read."""
    return _info(code)[2]


def _numbers(values):
    """Default values as part of a cache key. A mutable default (``opts={}``,
    the ``_ones={}`` of a generated module) cannot be hashed: it stands for
    itself by identity; the frontend refuses it (located) or never reads it."""
    if values is None:
        return None
    return tuple(v if _hashable(v) else ("object", type(v).__name__, id(v)) for v in values)


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
