"""Functions made from a signature, for calls that must cost little:
:func:`binder` (a call's arguments in order, defaults applied, as Python binds
them) and :func:`guarded` (a generated function behind a check of its
arguments' classes, with the generated function's own signature, so that a
call passes its arguments once, as written, instead of through ``*args,
**kwargs``)."""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
import types

from s2s_ad import source_text
from s2s_ad.emit import loader

_NUMBERS = frozenset((float, int, bool))


def number_test(name: str, space: dict) -> str:
    """A Python expression true when the value of ``name`` is a float, int or
    bool (not a subclass), over names it binds in ``space``: a float is tested
    by identity first (8 ns a parameter less than the set's lookup alone, the
    common case of a guard over many parameters)."""
    space.update(_s2s_float=float, _s2s_numbers=_NUMBERS)
    return f"({name}.__class__ is _s2s_float or {name}.__class__ in _s2s_numbers)"


def _parameter_list(sig: inspect.Signature, space: dict):
    """``sig``'s parameters as the text of a ``def`` (defaults as names bound
    in ``space``), and the call that passes them on; None for ``*args`` or
    ``**kwargs``."""
    P = inspect.Parameter
    parts, passed = [], []
    star = False
    params = list(sig.parameters.values())
    for i, p in enumerate(params):
        if p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD) or not p.name.isidentifier() \
                or p.name.startswith("_s2s_"):
            return None
        if p.kind is P.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        text = p.name
        if p.default is not P.empty:
            space[f"_s2s_default_{i}"] = p.default
            text += f"=_s2s_default_{i}"
        parts.append(text)
        passed.append(p.name if p.kind is not P.KEYWORD_ONLY else f"{p.name}={p.name}")
        if p.kind is P.POSITIONAL_ONLY and (i + 1 == len(params)
                                            or params[i + 1].kind is not P.POSITIONAL_ONLY):
            parts.append("/")
    return ", ".join(parts), ", ".join(passed)


def _define(name: str, text: str, space: dict, *, shown: bool = False):
    """The function ``name`` that ``text`` defines, run in ``space``; None
    where the text does not compile. ``shown``: its lines are given to
    :mod:`linecache` under a name of their own, so that a traceback through
    it shows them (for text holding generated code the user may debug)."""
    filename = loader.shown(text, f"call of {name}") if shown else f"<s2s-ad call of {name}>"
    try:
        exec(compile(text, filename, "exec"), space)
    except SyntaxError:
        return None
    return space[name]


def binder(name: str, sig: inspect.Signature, tests: list[str] | None = None,
           space: dict | None = None, then: str | None = None):
    """A function with ``sig``'s parameters (defaults included) returning
    their values in order, as a tuple; None for ``*args``/``**kwargs``.
    With ``tests`` (Python expressions over the parameters and the names
    bound in ``space``), it returns None unless all of them hold; ``then``,
    statements run instead of returning the values when they do."""
    space = dict(space or {})
    made = _parameter_list(sig, space)
    if made is None:
        return None
    name = name if name.isidentifier() else "function"  # (a lambda's is <lambda>)
    names = "".join(n + ", " for n in sig.parameters)
    if tests is None:
        return _define(name, f"def {name}({made[0]}):\n    return ({names})\n", space)
    test = " and ".join(f"({t})" for t in tests) or "True"
    return _define(name, f"def {name}({made[0]}):\n"
                         f"    if {test}:\n"
                         f"        {then or f'return ({names})'}\n"
                         f"    return None\n", space)


def guarded(compiled, slow, sequences=frozenset(), tuples: bool = True, plain: bool = False,
            checked=None, loose=frozenset()):
    """``compiled`` behind a function with its signature that calls it when
    every argument (defaults included) is a float, int or bool (with ``plain``:
    anything but a list or tuple; or, for the
    parameters named in ``sequences``, a list or, with ``tuples``, a tuple of
    such numbers), and
    ``slow`` (taking the same arguments) otherwise; None where the signature
    has ``*args`` or ``**kwargs``. The check is the one ``slow`` starts with,
    written out per parameter: no tuple and dict of the arguments are made.
    ``checked``: the parameters whose arguments are tested, where ``slow``
    calls ``compiled`` whatever the others are (a JVP's tangents, a seed);
    ``loose``: those of ``sequences`` tested as a list (or tuple) only, where
    ``slow`` runs the same arithmetic whatever their items are (a JVP's
    tangent lists: the code is chosen by the parameters' arguments alone),
    so that a call does not add up their items to tell numbers from arrays."""
    try:
        sig = inspect.signature(compiled)
    except (TypeError, ValueError):
        return None
    space = {"_s2s_numbers": _NUMBERS, "_s2s_compiled": compiled, "_s2s_slow": slow,
             "_s2s_sequence": numbers_sequence if tuples else numbers_list}
    made = _parameter_list(sig, space)
    if made is None or not sig.parameters:
        return None
    params, passed = made
    space.update(_s2s_list=list, _s2s_tuple=tuple)
    a_list = ("({0}.__class__ is _s2s_list or {0}.__class__ is _s2s_tuple)" if tuples
              else "{0}.__class__ is _s2s_list")
    test = " and ".join(f"{n}.__class__ is not _s2s_list and {n}.__class__ is not _s2s_tuple"
                        if plain else a_list.format(n) if n in loose and n in sequences else
                        f"_s2s_sequence({n})" if n in sequences else
                        number_test(n, space) for n in sig.parameters
                        if checked is None or n in checked) or "True"
    name = compiled.__name__
    made = with_body(compiled, name, params, test, f"_s2s_slow({passed})", space) \
        or _define(name, f"def {name}({params}):\n"
                         f"    if {test}:\n"
                         f"        return _s2s_compiled({passed})\n"
                         f"    return _s2s_slow({passed})\n", space)
    if made is not None:
        made.__s2s_guard__ = Guard(params, passed, test, space)
    return made


def with_body(compiled, name: str, params: str, test: str, otherwise: str, space: dict):
    """A function ``name(params)`` that returns ``otherwise`` unless ``test``
    holds and else runs the body of the generated function ``compiled``, as
    written (its comments kept), in its module's globals and the names of
    ``space`` the test and ``otherwise`` read (``_s2s_`` names): one Python
    call fewer per call than calling ``compiled`` (about 0.05–0.1 µs). Its
    lines are shown in tracebacks. None where the body cannot be moved: not
    a plain function whose source is known, a closure, or one of those names
    taken by the module or read by the body."""
    if compiled.__class__ is not types.FunctionType or compiled.__closure__:
        return None
    body = _movable_body(compiled.__code__)
    if body is None or body[0] != compiled.__name__:
        return None
    _, lines, read, own_params = body
    own = {k: v for k, v in space.items() if k.startswith("_s2s_") and k != "_s2s_compiled"}
    try:
        extra = {a.arg for a in ast.walk(ast.parse(f"def f({params}): pass"))
                 if isinstance(a, ast.arg)} - own_params
    except SyntaxError:
        return None
    if read & (set(own) | extra) or set(own) & set(compiled.__globals__):
        return None
    return _define(name, f"def {name}({params}):\n"
                         f"    if not ({test}):\n"
                         f"        return {otherwise}\n" + lines,
                   {**compiled.__globals__, **own}, shown=True)


@functools.lru_cache(maxsize=256)
def _movable_body(code: types.CodeType) -> tuple | None:
    """(its name, its body's lines as written, the names the function reads
    or binds, its parameters) of the function ``code`` is the code of, parsed
    once (a derivative's guard and its late-binding call both move it), or
    None where its source is not one plain ``def``."""
    try:
        text = textwrap.dedent(source_text.text(code))
        tree = ast.parse(text)
    except (OSError, TypeError, SyntaxError):
        return None
    fn = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return None
    read = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} \
        | {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
    lines = text.splitlines(True)
    k = fn.body[0].lineno - 1
    while k > 0 and (not lines[k - 1].strip() or lines[k - 1].lstrip().startswith("#")):
        k -= 1  # the comments above the first statement are the body's
    return (fn.name, "".join(lines[k:]), frozenset(read),
            frozenset(a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)))


class Guard:
    """What :func:`guarded` wrote, for a caller that writes the same check
    into its own function (``s2s_ad.late_constants``): the parameter list,
    the arguments passed on, the test, and the names they read."""

    __slots__ = ("params", "passed", "test", "space")

    def __init__(self, params: str, passed: str, test: str, space: dict):
        self.params, self.passed, self.test, self.space = params, passed, test, space


def numbers_sequence(value) -> bool:
    """Is ``value`` a list or tuple of floats, ints and bools? Judged by the
    class of its sum (in C): an array among the items makes the sum an array."""
    if value.__class__ is not list and value.__class__ is not tuple:
        return False
    try:
        return sum(value).__class__ in _NUMBERS
    except (TypeError, ValueError):  # an item that does not add (a string, None, arrays
        return False                 # of shapes that do not broadcast)


def numbers_list(value) -> bool:
    """Is ``value`` a list (not a tuple) of floats, ints and bools?"""
    return value.__class__ is list and numbers_sequence(value)


def kind_tests(params: list[str], key: tuple, space: dict) -> list[str]:
    """One Python expression per parameter, True when its argument has the
    kind ``key`` gives it (:func:`s2s_ad.callplan.kinds`: a number's class,
    a list's or tuple's class and length, an array's class and ``ndim``),
    over names it binds in ``space``."""
    # builtins by names no parameter can have (the parameters are the test's variables)
    space.update({"_s2s_sum_class": _sum_class, "_s2s_numbers": _NUMBERS, "_s2s_len": len,
                  "_s2s_hasattr": hasattr})
    tests = []
    for i, (param, kind) in enumerate(zip(params, key)):
        if kind.__class__ is not tuple:  # a number's class
            space[f"_s2s_kind_{i}"] = kind
            tests.append(f"{param}.__class__ is _s2s_kind_{i}")
        elif kind[0] is list or kind[0] is tuple:
            space[f"_s2s_kind_{i}"] = kind[0]
            tests.append(f"{param}.__class__ is _s2s_kind_{i} and _s2s_len({param}) == {kind[1]}"
                         f" and _s2s_sum_class({param}) in _s2s_numbers")
        else:  # an array class and its number of dimensions
            space[f"_s2s_kind_{i}"] = kind[0]
            # (every NumPy array has a shape: asked of other array classes only)
            shaped = "" if _is_ndarray_class(kind[0]) else f" and _s2s_hasattr({param}, 'shape')"
            tests.append(f"{param}.__class__ is _s2s_kind_{i} and {param}.ndim == {kind[1]}"
                         + shaped)
    return tests


def _is_ndarray_class(cls) -> bool:
    """Is ``cls`` NumPy's ``ndarray`` itself (not a subclass)? Asked without
    importing NumPy: an ndarray exists only where NumPy is imported."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and cls is numpy.ndarray


def _sum_class(xs):
    """The class of ``sum(xs)`` (None when its items do not add): a number's
    class for numbers only (see :func:`kind_tests`)."""
    try:
        return sum(xs).__class__
    except (TypeError, ValueError):  # (arrays of shapes that do not broadcast)
        return None
