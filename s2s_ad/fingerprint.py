"""What the generated code of a function depends on, as a hashable value
(:func:`fingerprint`): the key of the cache of generated functions
(:mod:`s2s_ad.cache`), computed again when a gradient is asked for, so that
an edited function, helper or module constant gets new code."""

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


def _fingerprint(fn, out: list, seen: set) -> None:
    if id(fn) in seen:
        return
    seen.add(id(fn))
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
            out.append(("empty cell", name))
            continue
        if source.is_data(obj):
            out.append(("captured", name, isinstance(obj, numbers.Number)))
        else:
            _global(name, obj, fn, out, seen)
            if not isinstance(obj, (types.FunctionType, types.ModuleType)):
                out.append(("captured object", name, id(obj)))
    g = fn.__globals__
    for name in _names(fn.__code__):
        obj = g.get(name, None)
        _global(name, obj, fn, out, seen)


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


def _global(name: str, obj, fn, out: list, seen: set) -> None:
    if isinstance(obj, numbers.Number) or frontend_statics.is_static_value(obj):
        out.append((name, type(obj).__name__, obj))
    elif isinstance(obj, (list, tuple)) and all(isinstance(v, numbers.Number) for v in obj):
        out.append((name, type(obj).__name__, tuple(obj)))  # a constant list, read as numbers
    elif isinstance(obj, types.FunctionType):
        out.append(("calls", name))
        _fingerprint(obj, out, seen)
    elif isinstance(obj, types.ModuleType) and not frontend._is_library_module(obj):
        # ``helpers.sq(x)``, ``pkg.helpers.sq(x)``: co_names holds every
        # part of the chain, so each module is searched for the others.
        if id(obj) in seen:
            return
        seen.add(id(obj))
        for attr in _names(fn.__code__):
            member = getattr(obj, attr, None)
            if isinstance(member, (numbers.Number, types.FunctionType, types.ModuleType)):
                _global(f"{name}.{attr}", member, fn, out, seen)


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
