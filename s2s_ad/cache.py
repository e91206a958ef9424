"""The in-memory cache of generated functions, and the dispatch on the
kinds (numbers, arrays) and lengths of the arguments a call passes.

A key is :func:`fingerprint` of the function (its source, the constants and
user functions it reads) and the options; a value is the compiled function.
"""

from __future__ import annotations

import ast
import functools
import inspect
import numbers
import types
import weakref
from collections.abc import Hashable
from typing import Callable, NamedTuple

from s2s_ad.frontend import lowering as frontend, numpy as frontend_numpy, pytrees, source, structures
from s2s_ad.emit import module as emit, loader
from s2s_ad.pipeline import Wrt, jvp_program, program
from s2s_ad.rules import user as user_rules

_cache: dict = {}
_stats = {"hits": 0, "misses": 0}


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    """Each miss is one transform (lowering, reverse sweep, emit, compile)."""
    size: int


def cache_info() -> CacheInfo:
    """Statistics of the in-memory cache of generated functions.

    The cache is a dictionary in ``s2s_ad.cache``, private to the
    process and never written to disk. Its key is the source text of the
    function and of every user function it reads (transitively), the values of
    the module constants they read, their default values, any user rule they
    reach, and the options (``wrt``, the kind of function generated).

    Returns
    -------
    CacheInfo
        ``(hits, misses, size)``, like ``functools.lru_cache``'s.
    """
    return CacheInfo(_stats["hits"], _stats["misses"], len(_cache))


def clear_cache() -> None:
    """Forget every generated function and reset :func:`cache_info`."""
    _cache.clear()
    _stats["hits"] = _stats["misses"] = 0


def generated(fn: Callable, wrt: Wrt, kind: str, output: int | None = None,
              lengths: dict | None = None, arrays: frozenset = frozenset(),
              checkpoint=None) -> Callable:
    key = (fingerprint(fn), _wrt_key(wrt), kind, _wrt_key(output), _lengths_key(lengths),
           tuple(sorted(arrays)), _wrt_key(checkpoint))
    hit = _cache.get(key)
    if hit is not None:
        _stats["hits"] += 1
        return hit
    _stats["misses"] += 1
    with_value = kind == "value_and_grad"
    if kind == "jvp":
        functions, src, graph = jvp_program(fn, wrt, lengths=lengths, arrays=arrays)
    else:
        functions, src, graph = program(fn, wrt, with_value=with_value, pair=kind == "pair",
                                        output=output, lengths=lengths, arrays=arrays,
                                        checkpoint=checkpoint)
    text = emit.module(functions, src.file)
    if kind == "pair":
        module = loader.load(text, fn.__name__ + "_vjp")
        compiled = (getattr(module, fn.__name__ + "_fwd"), getattr(module, fn.__name__ + "_bwd"))
        compiled[0].__s2s_ad_source__ = compiled[1].__s2s_ad_source__ = text
    else:
        name = {"value_and_grad": "value_and_grad_", "jvp": "jvp_"}.get(kind, "grad_") \
            + fn.__name__
        module = loader.load(text, name)
        compiled = getattr(module, name)
        compiled.__s2s_ad_source__ = text
        taken = frozenset(p.value.var for p in graph.main.params if p.value.kind == "array")
        runtime = [p.value.var for p in graph.main.params
                   if p.value.kind in ("list", "tuple") and p.items is None]
        if runtime:
            compiled = _any_length(fn, wrt, kind, output, compiled, runtime, checkpoint)
        elif len(taken) < len(graph.main.params):
            compiled = _by_kind(fn, wrt, kind, output, lengths, compiled, taken, checkpoint)
    if kind != "pair":
        # where it came from, so that differentiating it again starts from fn
        origin = (kind, fn, wrt, output, lengths)
        compiled.__s2s_ad_origin__ = getattr(compiled, "__wrapped__", compiled).__s2s_ad_origin__ \
            = origin
    _cache[key] = compiled
    return compiled


def _by_kind(fn: Callable, wrt: Wrt, kind: str, output, lengths, compiled: Callable,
             taken: frozenset, checkpoint=None) -> Callable:
    """``compiled`` (generated for the parameters ``taken`` as arrays), run
    as it is while no other parameter receives an array; a call passing an
    array elsewhere gets (once per kind signature, cached) the code generated
    for its arrays. Whether a value is an array comes from the arguments,
    never from whether ``fn``'s source names NumPy."""
    names = positional_names(fn)
    specialised: dict = {}

    def call(*args, **kwargs):
        for a in args:
            if a.__class__ not in _NUMBERS:
                break
        else:
            # numbers only (the common case, kept fast): the code as generated
            for v in kwargs.values():
                if v.__class__ not in _NUMBERS:
                    break
            else:
                return compiled(*args, **kwargs)
        arrays = array_arguments(names, args, kwargs)
        if arrays <= taken:
            return compiled(*args, **kwargs)
        code = specialised.get(arrays)
        if code is None:
            code = generated(fn, wrt, kind, output, lengths, arrays | taken, checkpoint)
            # (its own dispatch would find these very arrays: skip it)
            code = specialised[arrays] = getattr(code, "__wrapped__", code)
        return code(*args, **kwargs)

    functools.update_wrapper(call, compiled)
    return call


def _any_length(fn: Callable, wrt: Wrt, kind: str, output, compiled: Callable,
                lists: list[str], checkpoint=None) -> Callable:
    """``compiled`` (generated for the parameters ``lists`` as lists of any
    length, the others as numbers), run as it is on a call passing numbers
    and lists of numbers; any other call (a tuple, an array, a keyword
    argument) goes to the code generated per length and kind of argument
    (:func:`_by_shape`), as a function taking fixed-length lists would.

    Whether a list holds only numbers is judged by the class of its sum
    (``sum`` runs in C, about 10 ns an item; an array anywhere in it makes the
    sum an array): a list holding an array goes to the per-length code (array
    items), anything else is refused there, located.

    The check is one pass over the arguments against what each position
    takes, precomputed (a list, or a number), so a call adds about a
    microsecond and the ``sum`` of each list."""
    names = positional_names(fn)[0]
    positions = frozenset(names.index(n) for n in lists if n in names)
    takes_list = tuple(i in positions for i in range(len(names)))
    error = TypeError(f"{fn.__name__}: parameter(s) {', '.join(map(repr, lists))} take a list")
    fallback = _by_shape(fn, wrt, kind, output, error, checkpoint)
    numbers = _NUMBERS

    def call(*args, **kwargs):
        plain = len(args) <= len(takes_list)
        try:
            for a, is_list in zip(args, takes_list):
                if is_list:
                    if a.__class__ is not list or sum(a).__class__ not in numbers:
                        plain = False
                        break
                elif a.__class__ not in numbers:
                    plain = False
                    break
        except TypeError:  # an item that does not add (a string, None)
            plain = False
        if kwargs:
            for v in kwargs.values():  # the seed, numbers by name
                if v.__class__ not in numbers:
                    plain = False
        if plain:
            return compiled(*args, **kwargs)
        return fallback(*args, **kwargs)

    functools.update_wrapper(call, compiled)
    return call


def _shape_of(a):
    """What decides the code generated for an argument, when it is cheap to
    know: a number's class; a list's or tuple's class and length when it holds
    numbers only; None (decide the slow way) for anything else."""
    cls = a.__class__
    if cls in _NUMBERS:
        return cls
    if (cls is list or cls is tuple) and _numbers_only(a):
        return cls, len(a)
    return None


def _numbers_only(xs: list) -> bool:
    try:
        return sum(xs).__class__ in _NUMBERS
    except TypeError:  # an item that does not add (a string, None)
        return False


def positional_names(fn: Callable) -> tuple[tuple[str, ...], frozenset]:
    """``fn``'s parameter names in signature order, and those annotated as
    numbers (``s: float``), for which a 0-d array is a number."""
    try:
        names = tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return (), frozenset()
    return names, frontend_numpy.annotated_numbers(fn)


_NUMBERS = frozenset((float, int, bool))


def array_arguments(names: tuple, args: tuple, kwargs: dict) -> frozenset:
    """The parameters (``names`` from :func:`positional_names`) a call gives
    an array: an ndarray, or any array-like that is not a number, list or
    tuple (a 0-d array given to a parameter annotated as a number is one)."""
    order, declared = names
    given = list(zip(order, args))
    if kwargs:
        given += [(n, a) for n, a in kwargs.items() if n in order]
    return frozenset(n for n, a in given if type(a) not in _NUMBERS and (
        _is_array(a) and not (n in declared and getattr(a, "ndim", None) == 0)
        or not _is_array(a) and _holds_array(a)))


def _holds_array(value) -> bool:
    """Does a structure argument hold an array? A list of numbers is
    answered by its sum (in C), not item by item."""
    if type(value) in (list, tuple):
        try:
            if sum(value).__class__ in _NUMBERS:
                return False
        except TypeError:  # items that do not add: tuples, dicts, objects
            pass
    return pytrees.holds_array(value)


def _is_array(value) -> bool:
    if isinstance(value, (numbers.Number, list, tuple, dict, str)):
        return False
    return hasattr(value, "__array__") or hasattr(value, "shape")


def _lengths_key(lengths: dict | None):
    if not lengths:
        return None
    return tuple(sorted((k, ("list", v) if isinstance(v, int) else tuple(v))
                        for k, v in lengths.items()))


def shapes(fn: Callable, args: tuple, kwargs: dict) -> dict:
    """The lengths of the list and tuple arguments of a call."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{fn.__name__}: {exc}") from None
    out = {}
    for name, v in bound.arguments.items():
        if type(v) in (list, tuple) and all(isinstance(item, numbers.Number) for item in v):
            out[name] = ("list" if isinstance(v, list) else "tuple", len(v))
        elif isinstance(v, (list, tuple, dict)) or pytrees.spec_of(v) not in (None, "leaf"):
            spec = pytrees.spec_of(v)
            if spec is None:
                _refuse_items(fn, name, v)
            out[name] = ("tree", spec)  # a structure of numbers and arrays (frontend/pytrees.py)
    return out


def _refuse_items(fn: Callable, name: str, value) -> None:
    """A list or tuple argument holding arrays (or lists): its items would be
    taken for numbers, so refuse it, located at the parameter."""
    src = source.locate(fn)
    node = next((a for a in ast.walk(src.tree.args) if isinstance(a, ast.arg) and a.arg == name),
                src.tree)
    items = value.values() if isinstance(value, dict) else value
    what = next((type(item).__name__ for item in items if pytrees.spec_of(item) is None),
                "str" if isinstance(value, dict) else type(value).__name__)
    raise src.error(node, f"parameter {name!r} is given a {type(value).__name__} holding "
                    f"an item of type {what}; a structure parameter (list, tuple, dict with "
                    "str keys, dataclass, NamedTuple) holds numbers, arrays and such "
                    "structures only")


def _by_shape(fn: Callable, wrt: Wrt, kind: str, output, error, checkpoint=None) -> Callable:
    """A function that generates (once per shape and kind signature, cached)
    the code for the lengths of the lists and the arrays it is called with,
    then runs it."""
    names = positional_names(fn)
    seen: dict = {}
    own = frozenset(inspect.signature(fn).parameters)

    def call(*args, **kwargs):
        # A call like an earlier one (classes, list lengths, lists of numbers
        # only) runs the code found then, without binding the arguments.
        quick = (tuple(_shape_of(a) for a in args),
                 tuple((k, _shape_of(v)) for k, v in kwargs.items()))
        compiled = seen.get(quick)
        if compiled is not None:
            call.__s2s_ad_source__ = compiled.__s2s_ad_source__
            return compiled(*args, **kwargs)
        # fn's own arguments decide the shapes (not the seed or the tangents)
        given = {k: v for k, v in kwargs.items() if k in own}
        lengths = shapes(fn, args, given)
        arrays = array_arguments(names, args, given)
        if not lengths and not arrays:
            raise error
        key = (_lengths_key(lengths), arrays)
        compiled = seen.get(key)
        if compiled is None:
            compiled = seen[key] = generated(fn, wrt, kind, output, lengths or None, arrays,
                                             checkpoint)
        if None not in quick[0] and all(k[1] is not None for k in quick[1]):
            seen[quick] = compiled
        # source_of(call) shows the code of the shape used last.
        call.__s2s_ad_source__ = compiled.__s2s_ad_source__
        return compiled(*args, **kwargs)

    call.__name__ = {"value_and_grad": "value_and_grad_", "jvp": "jvp_"}.get(kind, "grad_") \
        + fn.__name__
    call.__s2s_ad_by_shape__ = True
    call.__s2s_ad_origin__ = (kind, fn, wrt, output, None)
    call.__doc__ = (f"{'Value and gradient' if kind == 'value_and_grad' else 'Gradient'} of "
                    f"{fn.__name__}, generated for the lengths of the lists and the arrays it "
                    "is called with (see s2s_ad.gradient_source(..., lengths=..., arrays=...) "
                    "for the code).")
    return call


def entry(fn, wrt, kind, output, lengths, checkpoint=None):
    if lengths is not None:
        return generated(fn, wrt, kind, output, lengths, checkpoint=checkpoint)
    # A function found to take lists gets its dispatcher cached, so asking
    # for its gradient again does not lower it again.
    key = ("by shape", fingerprint(fn), _wrt_key(wrt), kind, _wrt_key(output),
           _wrt_key(checkpoint))
    if key in _cache:
        _stats["hits"] += 1
        return _cache[key]
    try:
        return generated(fn, wrt, kind, output, checkpoint=checkpoint)
    except structures.SequenceParameter as exc:
        _cache[key] = _by_shape(fn, wrt, kind, output, exc, checkpoint)
        return _cache[key]


def _wrt_key(wrt: Wrt):
    # Typed, so that wrt=True (refused) never finds the entry of wrt=1.
    if isinstance(wrt, (list, tuple)):
        return tuple((type(w).__name__, w) for w in wrt)
    return (type(wrt).__name__, wrt) if isinstance(wrt, Hashable) else (type(wrt).__name__, id(wrt))


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
    g = fn.__globals__
    for name in _names(fn.__code__):
        obj = g.get(name, None)
        _global(name, obj, fn, out, seen)


_texts: "weakref.WeakKeyDictionary[types.CodeType, str | None]" = weakref.WeakKeyDictionary()


def _source_text(code: types.CodeType) -> str | None:
    """The source text of ``code``, read once per code object: code objects
    are immutable, and a function defined anew (an edit, a re-import) gets a
    new one. Reading it is most of the cost of a cache lookup."""
    try:
        return _texts[code]
    except KeyError:
        pass
    try:
        text = "".join(inspect.getsourcelines(code)[0])
    except (OSError, TypeError):
        text = None  # source.locate will refuse it with a clear message
    _texts[code] = text
    return text


def _global(name: str, obj, fn, out: list, seen: set) -> None:
    if isinstance(obj, numbers.Number):
        out.append((name, obj))
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
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _names(const)
    return sorted(set(names))


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
