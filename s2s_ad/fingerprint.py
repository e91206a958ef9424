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

import functools
import inspect
import numbers
import re
import types
import weakref
from typing import Callable

from s2s_ad.frontend.library_names import LIBRARY_MODULES
from s2s_ad.frontend import callsites, methods, module_data, source, specs, statics as frontend_statics
from s2s_ad.rules import user as user_rules
from s2s_ad import source_text


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
    ``unchanged()``, True while all of them are.

    Nothing here keeps the user's objects alive: numbers, strings, code
    objects and tuples or lists of those are held as they are; a function,
    module or other object is held by a weak reference, called once (its
    value bound to a name by ``:=``, ``None`` failing the check) before the
    terms that read it. (A plan that held a function's globals would keep
    the function, its module and itself alive.)"""

    def __init__(self):
        self.space: dict = {"_s2s_missing": _MISSING, "_s2s_getattr": getattr}
        self.terms: list[str] = []
        self.unchanged: Callable[[], bool] = lambda: False
        self._held: dict[int, str] = {}
        self._refs: dict[str, str] = {}  # alias -> the name of its weak reference

    def name(self, obj) -> str:
        n = f"_s2s_{len(self.space)}"
        self.space[n] = obj
        return n

    def held(self, obj) -> str:
        """An expression giving ``obj`` (see the class docstring)."""
        if _atomic(obj) or (obj.__class__ in (tuple, list) and all(_atomic(v) for v in obj)):
            return self.name(obj)
        hit = self._held.get(id(obj))
        if hit is not None:
            return hit
        try:
            ref = weakref.ref(obj)
        except TypeError:
            if _function_table(obj) or obj.__class__.__name__ == "ufunc":
                # a module's table of functions, or a NumPy ufunc (a singleton):
                # held as it is, as its module holds it
                return self.name(obj)
            raise _Unwatchable(obj) from None
        n = self.name(ref)
        alias = self._held[id(obj)] = n + "_v"  # a local of the generated check
        self._refs[alias] = n
        self.terms.append(f"({alias} := {n}()) is not None")
        return alias

    def held_strongly(self) -> tuple[list[str], dict] | None:
        """The terms and the names they read for a check that holds what it
        reads (for the owner of a derivative, which keeps the function alive
        anyway): the objects held by weak references bound as they are now,
        no reference called per check. None when one of them is gone."""
        space = dict(self.space)
        derefs = set()
        for alias, ref in self._refs.items():
            obj = space[ref]()
            if obj is None:
                return None
            space[alias] = obj
            derefs.add(f"({alias} := {ref}()) is not None")
        terms = [t for t in self.terms if t not in derefs]
        for alias in self._refs:
            # a function's globals held too (its __globals__ cannot be set)
            read = re.compile(rf"\b{alias}\.__globals__\b")
            if any(read.search(t) for t in terms):
                n = f"{alias}_globals"
                space[n] = space[alias].__globals__
                terms = [read.sub(n, t) for t in terms]
        return terms, space

    def same(self, expr: str, obj) -> None:
        """``expr`` (over names this made) still evaluates to ``obj`` itself
        (a list: also equal to its items now)."""
        self.terms.append(f"{expr} is {self.held(obj)}")
        if obj.__class__ is list:
            self.terms.append(f"{expr} == {self.name(list(obj))}")

    def global_(self, namespace: str, values: dict, key: str, obj) -> None:
        """``namespace`` (an expression giving the dict ``values``) still maps
        ``key`` to ``obj`` (or still lacks it)."""
        if key not in values:  # (the same truth as `.get(key, missing) is missing`, no call)
            self.terms.append(f"{key!r} not in {namespace}")
        else:
            self.same(f"{namespace}.get({key!r}, _s2s_missing)", obj)


def _atomic(obj) -> bool:
    return obj is None or obj is _MISSING or obj.__class__ in _ATOMS or (
        # a NumPy scalar (np.float64(2.0)): immutable, held as it is
        isinstance(obj, numbers.Number) and obj.__class__.__module__ == "numpy")


_ATOMS = frozenset((bool, int, float, complex, str, bytes, types.CodeType))


def _comparable(values) -> bool:
    """Are ``values`` (a function's defaults) atoms, or tuples or lists of
    atoms: what a check comparing them by ``==`` with copies taken now can
    watch?"""
    return all(_atomic(v) or v.__class__ in (tuple, list) and all(map(_atomic, v))
               for v in values)


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
    helper = bool(seen)  # (the first function walked is the one differentiated)
    seen.add(id(fn))
    if reads is not None:
        if type(fn) is not types.FunctionType:
            raise _Unwatchable(fn)
        f = reads.held(fn)
        # (not __module__ and __qualname__: the fingerprint holds them, but
        # the code generated for a function does not depend on them; a
        # derivative asked for again after they changed gets its own key)
        reads.same(f"{f}.__code__", fn.__code__)
        defaults = fn.__defaults__
        if defaults is not None and any(v.__class__ is list for v in defaults):
            # a list of numbers given as a default is the same list on every
            # call, changed in place or not: its items now, as the key holds them
            if not _comparable(defaults):
                raise _Unwatchable(fn)
            reads.terms.append(f"{f}.__defaults__ == {reads.name(_copies(defaults))}")
        else:
            reads.same(f"{f}.__defaults__", defaults)
        rule = getattr(fn, user_rules.ATTRIBUTE, None)
        if rule is None:
            # (for a function, getattr is a look into its own __dict__: the same
            # truth, without a call; a rule set to None later fails it, safely)
            reads.terms.append(f"{user_rules.ATTRIBUTE!r} not in {f}.__dict__")
        else:
            reads.same(f"_s2s_getattr({f}, {user_rules.ATTRIBUTE!r}, None)", rule)
        kw = fn.__kwdefaults__
        if not fn.__code__.co_kwonlyargcount:
            pass  # no keyword-only parameter for them to give (the code is checked above)
        elif kw is None:
            reads.terms.append(f"{f}.__kwdefaults__ is None")
        else:  # a dict, changed in place or not: its items now, compared as the key does
            items = dict(zip(kw, _copies(tuple(kw.values()))))
            if not _comparable(items.values()):
                raise _Unwatchable(fn)
            reads.terms.append(f"{f}.__kwdefaults__ == {reads.name(items)}")
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        # a bound method: the sources of the methods it reaches, the kinds of
        # the data it reads from its object, the constants' values
        parts, funcs = methods.fingerprint_parts(fn)
        out.append(("method", parts))
        for f in funcs:
            _fingerprint(f, out, seen)
        return
    rule = user_rules.lookup(fn) if isinstance(fn, types.FunctionType) else None
    if rule is not None or not isinstance(fn, types.FunctionType) or callsites._is_library(fn):
        # (a library's function, NumPy's or JAX's, is a primitive or refused:
        # its source is not read, nor the library's functions it calls)
        # A primitive: its identity, not its source, decides the code.
        # (Not the rule record's id: a rule given as a plain attribute tuple
        # gets a new record on every lookup.)
        fwd, bwd = getattr(rule, "fwd", None), getattr(rule, "bwd", None)
        out.append(("rule", id(fn), id(fwd), id(bwd), _dotted(fwd), _dotted(bwd)))
        return
    text = _source_text(fn.__code__)
    code = fn.__code__
    out.append(("fn", fn.__module__, fn.__qualname__, code.co_filename, code.co_firstlineno, text, _numbers(fn.__defaults__),
                tuple(zip(sorted(fn.__kwdefaults__ or {}),
                          _numbers(tuple(v for _, v in sorted((fn.__kwdefaults__ or {}).items())))))
                if code.co_kwonlyargcount else ()))
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
            i = code.co_freevars.index(name)
            reads.same(f"{reads.held(fn)}.__closure__[{i}].cell_contents", obj)
        if helper and source.number_constant(obj):
            # a helper's captured numbers are constants of its code
            # (source.locate_helper): their values, as a module constant's
            out.append((name, type(obj).__name__, tuple(obj) if isinstance(obj, (list, tuple))
                        else obj))
        elif source.is_data(obj):
            out.append(("captured", name, isinstance(obj, numbers.Number),
                        specs.spec_of(obj)))
        else:
            _global(name, obj, fn, out, seen, reads)
            if not isinstance(obj, (types.FunctionType, types.ModuleType)):
                out.append(("captured object", name, id(obj)))
    g = fn.__globals__
    for name in _names(fn.__code__):
        obj = g.get(name, _ABSENT)
        if obj is _ABSENT:
            # a builtin (len, range) or an attribute's name (np.sum's `sum`): no
            # global of the module, so no constant of the code (a global by that
            # name defined later changes the key)
            if reads is not None:
                reads.global_(f"{reads.held(fn)}.__globals__", g, name, None)
            out.append((name, "absent"))
            continue
        if reads is not None:
            reads.global_(f"{reads.held(fn)}.__globals__", g, name, obj)
        _global(name, obj, fn, out, seen, reads)


_ABSENT = object()


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
        text = source_text.text(code)
    except (OSError, TypeError):
        text = None  # source.locate will refuse it with a clear message
    if text is not None and code.co_name == "<lambda>":
        # lambdas on one line share it: where this one's code sits tells them apart
        text = (text, tuple(p for p in code.co_positions() if None not in p))
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
    elif _function_table(obj):
        # ACTIVATIONS[name](x): the table's keys and each function's identity
        # (a user function's source too) decide the code; watched item by item
        keys = list(obj) if isinstance(obj, dict) else list(range(len(obj)))
        # (three items: the code inlines it, so a derivative watches it, as a
        # constant's value: late_constants._inlines)
        out.append(("function table", name, (type(obj).__name__, tuple(keys))))
        if reads is not None:
            # the table held as it is (a module's object, as the module holds it),
            # its keys and each item the same object (a function weakly)
            table = reads.name(obj)
            reads.terms.append(f"list({table}) == {reads.name(list(obj))}")
            for k in keys:
                item = obj[k]
                reads.terms.append(f"{table}[{k!r}] is {reads.held(item)}")
        for k in keys:
            item = obj[k]
            if isinstance(item, types.FunctionType):
                out.append(("table item", k, "calls"))
                _fingerprint(source.made_code(item) or item, out, seen)
            else:
                out.append(("table item", k, getattr(item, "__module__", None),
                            getattr(item, "__qualname__", getattr(item, "__name__", None)),
                            id(item)))
    elif isinstance(obj, types.BuiltinFunctionType) or obj.__class__.__name__ == "ufunc":
        # `g = math.sin` at module level, then `g(x)`: the code calls what `g`
        # names now (three items: watched as a constant is)
        out.append((name, "builtin", f"{getattr(obj, '__module__', None)}."
                                     f"{getattr(obj, '__qualname__', getattr(obj, '__name__', ''))}"))
    elif isinstance(obj, functools.partial):
        # `cube = functools.partial(power, p=3)` at module level, then `cube(x)`:
        # the code calls its function with its bound values written in (three
        # items: watched as a constant is; the partial itself by identity, its
        # bound values by equality, its keywords being a dict)
        args, keywords = _frozen(obj.args), _frozen(obj.keywords)
        out.append((name, "partial", (_numbers(args), _numbers(keywords))))
        if reads is not None:
            bound = reads.held(obj)
            reads.space["_s2s_frozen"] = _frozen
            # (by value: a bound list changed in place changes the code too)
            reads.terms.append(f"_s2s_frozen({bound}.args) == {reads.name(args)}")
            reads.terms.append(f"_s2s_frozen({bound}.keywords) == {reads.name(keywords)}")
        _global(f"{name}.func", obj.func, fn, out, seen, reads)
    elif module_data.is_module_data(obj):
        # module-level data: a parameter of the gradient, read on every call;
        # its kind (array, or a structure's keys and lengths) decides the code
        out.append(("module data", name, specs.spec_of(obj)))
    elif source.rechecked(obj):
        # a derivative that re-reads module constants (late_constants.Seeing),
        # called by your code: lowered as its code is now (source.current),
        # which the function it differentiates and that one's reads decide
        out.append(("calls derivative", name))
        made = source.current(obj)
        _fingerprint(source.made_code(made) or made, out, seen, reads)
        _fingerprint(source.derivative_base(obj), out, seen, reads)
    elif isinstance(obj, types.FunctionType):
        out.append(("calls", name))
        # a derivative s2s-ad made: what is read is its generated code
        # (source.generated_code), whose text tells one from another
        _fingerprint(source.made_code(obj) or obj, out, seen, reads)
    elif isinstance(obj, type) and (obj.__module__ or "").split(".")[0] not in LIBRARY_MODULES:
        _class_reads(name, obj, fn, out, seen, reads)
    elif isinstance(obj, types.ModuleType) and not callsites._is_library_module(obj):
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
                reads.global_(f"{reads.held(obj)}.__dict__", vars(obj), attr, member)
            if isinstance(member, (numbers.Number, types.FunctionType, types.ModuleType)) \
                    or type(member) in (list, tuple) and all(
                        isinstance(v, numbers.Number) for v in member):
                # (a list of numbers: `consts.COEFFS`, read when the code is made)
                _global(f"{name}.{attr}", member, fn, out, seen, reads)


def _class_reads(name: str, cls: type, fn, out: list, seen: set, reads) -> None:
    """What ``fn`` reads through the class ``cls`` (``Class.CONSTANT``, a number, a
    static value or a list of numbers, read while lowering: its value is part of
    the key, and a change is seen; ``Class.static_fn(x)``, ``Class.cm(x)``: the
    function, and what a classmethod reads through its ``cls``)."""
    if ("class", id(cls), id(fn)) in seen:
        return
    seen.add(("class", id(cls), id(fn)))
    for attr in _names(fn.__code__):
        member = inspect.getattr_static(cls, attr, _ABSENT)
        if isinstance(member, (staticmethod, classmethod)) \
                and isinstance(member.__func__, types.FunctionType):
            if reads is not None:
                _same_static(reads, cls, attr, member)
            _global(f"{name}.{attr}", member.__func__, fn, out, seen, reads)
            if isinstance(member, classmethod):
                _class_reads(name, cls, member.__func__, out, seen, reads)
        elif isinstance(member, (numbers.Number, str, bool, list, tuple)) or member is None:
            if reads is not None:
                reads.same(f"_s2s_getattr({reads.held(cls)}, {attr!r}, None)", member)
            _global(f"{name}.{attr}", member, fn, out, seen, reads)


def _same_static(reads: Reads, cls: type, attr: str, member) -> None:
    """The check that ``cls.attr`` is still the static or class method
    ``member`` (rebinding it on the class, ``Ops.act = staticmethod(other)``,
    changes what the code calls): no class before the one defining it in the
    method resolution order defines the name, and that class's own entry is
    a method of the same kind wrapping the same function."""
    mro = cls.__mro__
    owner = next(c for c in mro if attr in vars(c))
    for c in mro[:mro.index(owner)]:
        reads.terms.append(f"{attr!r} not in {reads.held(c)}.__dict__")
    entry = f"{reads.held(owner)}.__dict__.get({attr!r})"
    reads.terms.append(f"{entry}.__class__ is {reads.name(member.__class__)}")
    reads.terms.append(f"{entry}.__func__ is {reads.held(member.__func__)}")


def _function_table(obj) -> bool:
    """A dict, list or tuple of functions (builtins and NumPy ufuncs too)."""
    if obj.__class__ not in (dict, list, tuple) or not obj:
        return False
    values = obj.values() if isinstance(obj, dict) else obj
    return all(isinstance(v, (types.FunctionType, types.BuiltinFunctionType))
               or v.__class__.__name__ == "ufunc" for v in values)


def _dotted(f) -> str | None:
    return None if f is None else f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', '')}"


def _names(code: types.CodeType) -> list[str]:
    """The global names ``code`` and its nested code read."""
    return _info(code)[2]


def _frozen(value):
    """``value`` with its lists, tuples and dicts made tuples, recursively (the
    bound values of a partial, compared by value)."""
    if value.__class__ in (list, tuple):
        return tuple(_frozen(v) for v in value)
    if value.__class__ is dict:
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value


def _numbers(values):
    """Default values as part of a cache key. A list of numbers (the
    generated signature repeats it) stands for its items now: the function
    reads the very list, changed in place or not. Another mutable default
    (``opts={}``, the ``_ones={}`` of a generated module) cannot be hashed: it
    stands for itself by identity; the frontend refuses it (located) or never
    reads it."""
    if values is None:
        return None
    return tuple(v if _hashable(v) else ("list", tuple(v)) if _number_list(v)
                 else ("object", type(v).__name__, id(v)) for v in values)


def _number_list(v) -> bool:
    return v.__class__ is list and all(isinstance(x, numbers.Number) for x in v)


def _copies(values: tuple) -> tuple:
    """``values`` with each list copied: what they hold now."""
    return tuple(list(v) if v.__class__ is list else v for v in values)


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
