"""The in-memory cache of generated functions, and the dispatch on the
kinds (numbers, arrays) and lengths of the arguments a call passes.

A key is :func:`fingerprint` of the function (its source, the constants and
user functions it reads: :mod:`s2s_ad.fingerprint`) and the options; a value is
the compiled function.
"""

from __future__ import annotations

import ast
import functools
import inspect
import numbers
import weakref
from collections.abc import Hashable
from typing import Callable, NamedTuple, Sequence

from s2s_ad.frontend import (numpy as frontend_numpy, param_uses, pytrees,
                             statics as frontend_statics, targets)
from s2s_ad.emit import module as emit, loader
from s2s_ad import array_lists, shared_code, signatures, tangent_shapes
from s2s_ad.fingerprint import fingerprint  # noqa: F401  (part of this module's interface)
from s2s_ad.errors import SourceError
from s2s_ad.pipeline import Wrt, jvp_program, program
from s2s_ad.syntax_walk import walk

_cache: dict = {}
_stats = {"hits": 0, "misses": 0}
LIMIT = 1024
"""The most entries the cache keeps: past it, the entry asked for least
recently is dropped (a derivative returned before keeps its code). A module
constant given a new value on every step of a simulation makes one entry per
value: without a bound, the cache would grow with the simulation."""
_memos: list = []
"""Dictionaries remembering what earlier calls found in the cache (s2s_ad.callplan):
emptied with it."""


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
    for memo in _memos:
        memo.clear()
    _stats["hits"] = _stats["misses"] = 0


def generated(fn: Callable, wrt: Wrt, kind: str, output: int | None = None,
              lengths: dict | None = None, arrays: frozenset = frozenset(),
              statics: dict | None = None, checkpoint=None) -> Callable:
    key = (fingerprint(fn), _wrt_key(wrt), kind, _wrt_key(output), _lengths_key(lengths),
           tuple(sorted(arrays)), _statics_key(statics), _wrt_key(checkpoint))
    hit = _cache.pop(key, None)
    if hit is not None:
        _cache[key] = hit  # (the most recently asked for: the last to be dropped)
        _stats["hits"] += 1
        return with_captured(fn, hit, kind)
    _stats["misses"] += 1
    with_value = kind == "value_and_grad"
    if kind == "jvp":
        functions, src, graph = jvp_program(fn, wrt, lengths=lengths, arrays=arrays,
                                            statics=statics, output=output)
    else:
        functions, src, graph = program(fn, wrt, with_value=with_value, pair=kind == "pair",
                                        output=output, lengths=lengths, arrays=arrays,
                                        statics=statics, checkpoint=checkpoint)
    text = emit.module(functions, src.file)
    base = src.tree.name  # (fn's name, or the name s2s-ad gave a lambda)
    if kind == "pair":
        module = loader.load(text, base + "_vjp")
        compiled = (getattr(module, base + "_fwd"), getattr(module, base + "_bwd"))
        compiled[0].__s2s_ad_source__ = compiled[1].__s2s_ad_source__ = text
    else:
        name = {"value_and_grad": "value_and_grad_", "jvp": "jvp_"}.get(kind, "grad_") + base
        module = loader.load(text, name)
        compiled = getattr(module, name)
        compiled.__s2s_ad_source__ = text
        taken = frozenset(p.value.var for p in graph.main.params if p.value.kind == "array")
        runtime = [p.value.var for p in graph.main.params
                   if p.value.kind in ("list", "tuple") and p.items is None]
        if runtime:
            # (a JVP takes a tangent list, of the list's length, for each: d<name>)
            tangents = [functions[0].adjoints.get(p.value.name) for p in graph.main.params
                        if p.value.var in runtime] if kind == "jvp" else []
            compiled = _any_length(fn, wrt, kind, output, compiled, runtime, statics, checkpoint,
                                   [t for t in tangents if t is not None])
        elif len(taken) < len(graph.main.params):
            lists = [p.value for p in graph.main.params if p.value.kind in ("list", "tuple")]
            # (a JVP takes a tangent list for each list: d<name>)
            tangents = [functions[0].adjoints.get(v.name) for v in lists] if kind == "jvp" else []
            compiled = _by_kind(fn, wrt, kind, output, lengths, compiled, taken, statics,
                                checkpoint, frozenset([v.var for v in lists] + tangents) - {None})
        elif lengths is None and kind != "jvp":  # (a JVP module is read back from its text)
            compiled = array_lists.guard(compiled, lambda: _by_shape(
                fn, wrt, kind, output, TypeError(fn.__name__), statics, checkpoint))
        if kind == "jvp":  # (around the dispatch too: its fast path calls the code itself)
            compiled = _seeded(compiled, graph.main, functions[0].adjoints)
            compiled = tangent_shapes.jvp_checked(compiled, [p.value for p in graph.main.params],
                                                  functions[0].adjoints, compiled.__name__)
    if kind != "pair":
        # where it came from, so that differentiating it again starts from fn
        origin = (kind, fn, wrt, output, lengths)
        compiled.__s2s_ad_origin__ = getattr(compiled, "__wrapped__", compiled).__s2s_ad_origin__ \
            = origin
    _keep(key, compiled)
    return with_captured(fn, compiled, kind)


def _seeded(compiled: Callable, main, tangents: dict) -> Callable:
    """The JVP ``compiled`` of one parameter lowered as an array (a
    function naming NumPy takes its parameters for arrays), whose tangent
    keyword has no default: called with a number there, and no tangent, its
    tangent is 1.0, as a JVP generated for a number's is (``dx=1.0``). An
    array there still needs its tangent."""
    if len(tangents) != 1:
        return compiled
    (name, tangent), = tangents.items()
    params = [p.value for p in main.params]
    at = next((k for k, v in enumerate(params) if v.name == name), None)
    if at is None or params[at].kind != "array":
        return compiled
    var = params[at].var

    def call(*args, **kwargs):
        if tangent not in kwargs:
            v = args[at] if at < len(args) else kwargs.get(var)
            if isinstance(v, numbers.Number):
                kwargs[tangent] = 1.0
        return compiled(*args, **kwargs)

    call.__name__, call.__qualname__ = compiled.__name__, compiled.__qualname__
    call.__doc__ = compiled.__doc__
    call.__s2s_ad_source__ = compiled.__s2s_ad_source__
    # the code, as generated (not a guard calling it: __call__ written around
    # that would skip the seed)
    call.__s2s_ad_compiled__ = call.__wrapped__ = getattr(compiled, "__wrapped__", compiled)
    return call


def _keep(key, value) -> None:
    """``_cache[key] = value``, the entry asked for least recently dropped
    past :data:`LIMIT`."""
    while len(_cache) >= LIMIT:
        del _cache[next(iter(_cache))]
    _cache[key] = value


def with_captured(fn: Callable, compiled: Callable, kind: str = "grad") -> Callable:
    """``compiled`` (whose keyword-only parameters after ``fn``'s own are the
    data the closure ``fn`` captures) called with those data read from this
    very closure on each call, as ``fn`` itself reads them: a value changed
    after the gradient was made is seen. (The cache is shared by closures
    from one factory, so ``compiled`` never reads the cells itself.) A
    captured value that changed between number and array needs other code:
    asking for the gradient again makes it. Keywords given already (by an
    outer call of this kind) are passed on as they are."""
    when_made = targets.captured_values(fn)
    if not when_made or kind == "pair":
        return compiled if kind == "pair" else shared_code.for_function(fn, compiled)
    # a captured structure: the code is for the structure it had (its keys,
    # fields and lengths), which a change in place can alter; a list of
    # numbers is read at any length, so only its kind is held to
    specs = {n: (("numbers", type(v)) if pytrees.number_list(v) else pytrees.captured_spec(v))
             for n, v in when_made.items()}
    arrays = {n: not isinstance(v, numbers.Number) for n, v in when_made.items()
              if specs[n] is None}
    specs = {n: s for n, s in specs.items() if s is not None}
    read = targets.reader(fn)
    held = targets.holds(fn)

    def call(*args, **kwargs):
        now = read()
        for n, was_array in arrays.items():
            v = now[n]
            if (v.__class__ not in _NUMBERS and not isinstance(v, numbers.Number)) != was_array:
                raise TypeError(f"{fn.__qualname__} {held(n)}, which was "
                                f"{'an array' if was_array else 'a number'} when its gradient "
                                "was generated and is not now; ask for the gradient again")
        for n, spec in specs.items():
            v = now[n]
            if (v.__class__ is spec[1] and pytrees.number_list(v)) if spec[0] == "numbers" \
                    else pytrees.spec_of(v) == spec:
                continue
            raise TypeError(f"{fn.__qualname__} {held(n)}, whose structure (its kind, "
                            "length, keys or fields) changed after its gradient was generated; "
                            "ask for the gradient again")
        return compiled(*args, **{**now, **kwargs})

    call.__name__ = getattr(compiled, "__name__", "grad")
    call.__s2s_ad_compiled__ = compiled  # the code, taking the captured data by keyword
    if getattr(compiled, "__s2s_ad_by_shape__", False):
        call.__s2s_ad_by_shape__ = True
    call.__doc__ = compiled.__doc__
    call.__s2s_ad_source__ = getattr(compiled, "__s2s_ad_source__", None)
    origin = getattr(compiled, "__s2s_ad_origin__", None)
    if origin is not None:
        # this closure, not the one the shared code was first made for
        call.__s2s_ad_origin__ = (origin[0], fn, *origin[2:])
    return call


def _structure(value) -> bool:
    """A list, tuple, dict, NamedTuple or dataclass (of numbers and arrays)."""
    return isinstance(value, (list, tuple, dict)) or pytrees.spec_of(value) not in (None, "leaf")


def _not_taken(value, as_array: bool) -> bool:
    """Does the code generated for a parameter, lowered as an array
    (``as_array``) or as a number, not take ``value``: a list or tuple where
    it took an array, a structure where it took a number?"""
    return array_lists.a_list_or_tuple(value) if as_array else _structure(value)


def _tangent_list(fn: Callable, name: str, value) -> None:
    """Refuse, by name, a JVP's tangent ``name=`` of a list parameter that is
    no sequence (a number, None): the generated code would fail on ``len()``
    of it, saying less."""
    if not hasattr(value, "__len__"):
        raise TypeError(f"{fn.__name__}: the tangent {name}= of a list parameter takes a "
                        f"list of its length (of numbers, or arrays), not {type(value).__name__}")


def _by_kind(fn: Callable, wrt: Wrt, kind: str, output, lengths, compiled: Callable,
             taken: frozenset, statics: dict | None = None, checkpoint=None,
             sequences: frozenset = frozenset()) -> Callable:
    """``compiled`` (generated for the parameters ``taken`` as arrays), run
    as it is while no other parameter receives an array; a call passing an
    array elsewhere gets (once per kind signature, cached) the code generated
    for its arrays. Whether a value is an array comes from the arguments,
    never from whether ``fn``'s source names NumPy."""
    names = positional_names(fn)
    specialised: dict = {}
    by_shape: list = []
    own = frozenset(names[0])
    tangent_lists = sequences - own

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
        for k in tangent_lists.intersection(kwargs):
            _tangent_list(fn, k, kwargs[k])
        if lengths is None and (any(_not_taken(v, n in taken) for n, v in zip(names[0], args))
                                or any(_not_taken(v, k in taken)
                                       for k, v in kwargs.items() if k in own)
                                or any(map(array_lists.holds_arrays, args[len(names[0]):]))):
            # a structure where the code took a number (the function only
            # passes it on, to a helper that tests `isinstance` or recurses
            # over it), or a list or tuple where it took an array (`xs + ys`
            # joins lists, `xs * 2` repeats one): the code generated for its
            # structure
            if not by_shape:
                by_shape.append(_by_shape(fn, wrt, kind, output, TypeError(fn.__name__),
                                          statics, checkpoint))
            return by_shape[0](*args, **kwargs)
        arrays = array_arguments(names, args, kwargs)
        if arrays <= taken:
            return compiled(*args, **kwargs)
        code = specialised.get(arrays)
        if code is None:
            code = generated(fn, wrt, kind, output, lengths, arrays | taken, statics,
                             checkpoint)
            # (its own dispatch would find these very arrays: skip it; and the
            # reader of a closure's or the module's data around it: this call
            # was given them already)
            code = getattr(code, "__s2s_ad_compiled__", code)
            code = specialised[arrays] = getattr(code, "__wrapped__", code)
        return code(*args, **kwargs)

    functools.update_wrapper(call, compiled)
    # the check above written out for compiled's own parameters (about 0.3 µs
    # of a call with ten arguments less: no tuple and dict of them are made);
    # a list or tuple of numbers passes where the code takes one (``sequences``);
    # where every parameter takes a number, call runs compiled whatever the
    # other keywords (a JVP's tangents, the seed) are: only the parameters
    # are tested (a JVP of ten numbers: ten tests a call instead of twenty)
    # (a tangent list, no parameter of fn, is tested as a list only: call runs
    # compiled whatever its items, as array_arguments reads fn's parameters only)
    fast = signatures.guarded(compiled, call, sequences,
                              checked=None if sequences & own else own, loose=sequences - own)
    return call if fast is None else functools.update_wrapper(fast, compiled)


def _any_length(fn: Callable, wrt: Wrt, kind: str, output, compiled: Callable,
                lists: list[str], statics: dict | None = None, checkpoint=None,
                tangents: Sequence[str] = ()) -> Callable:
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
    microsecond and the ``sum`` of each list. ``tangents``: the keywords
    (a JVP's tangents of the lists) that take lists of numbers too."""
    names = positional_names(fn)[0]
    positions = frozenset(names.index(n) for n in lists if n in names)
    takes_list = tuple(i in positions for i in range(len(names)))
    error = TypeError(f"{fn.__name__}: parameter(s) {', '.join(map(repr, lists))} take a list")
    fallback = _by_shape(fn, wrt, kind, output, error, statics, checkpoint)
    numbers = _NUMBERS
    tangent_lists = frozenset(tangents)

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
        except (TypeError, ValueError):  # an item that does not add (a string, None, arrays)
            plain = False
        if kwargs:
            for k, v in kwargs.items():  # the seed, numbers by name
                if k in tangent_lists:
                    _tangent_list(fn, k, v)
                if not (v.__class__ in numbers and k not in tangent_lists
                        or k in tangent_lists and signatures.numbers_list(v)):
                    plain = False
        if plain:
            return compiled(*args, **kwargs)
        return fallback(*args, **kwargs)

    functools.update_wrapper(call, compiled)
    # the same check written out for compiled's own parameters (lists, not tuples);
    # a tangent list tested as a list only: the code fallback runs for another
    # one is chosen by fn's own arguments (_by_shape), the same arithmetic for
    # any items (arrays there give array tangents either way)
    fast = signatures.guarded(compiled, call, frozenset(lists) | tangent_lists, tuples=False,
                              loose=tangent_lists - frozenset(names))
    return call if fast is None else functools.update_wrapper(fast, compiled)


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
    except (TypeError, ValueError):  # an item that does not add (a string, None, arrays
        return False                 # of shapes that do not broadcast)


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
    tuple (a 0-d array given to a parameter annotated as a number is one);
    for a structure holding arrays, its name and the paths of its array
    leaves (``tree[1]``, ``p['W']``: :func:`s2s_ad.frontend.specs.array_paths`)."""
    order, declared = names
    given = list(zip(order, args))
    if kwargs:
        given += [(n, a) for n, a in kwargs.items() if n in order]
    out = {n for n, a in given if type(a) not in _NUMBERS and _is_array(a)
           and not (n in declared and getattr(a, "ndim", None) == 0)}
    for n, a in given:  # a structure: and its array leaves (the others are numbers)
        if type(a) not in _NUMBERS and not _is_array(a) and _holds_array(a):
            out.update((n, *pytrees.array_paths(a, n)))
    return frozenset(out)


def _holds_array(value) -> bool:
    """Does a structure argument hold an array? A list of numbers is
    answered by its sum (in C), not item by item."""
    return array_lists.holds_array(value)


def _is_array(value) -> bool:
    if isinstance(value, (numbers.Number, list, tuple, dict, str)):
        return False
    return hasattr(value, "__array__") or hasattr(value, "shape")


def _lengths_key(lengths: dict | None):
    if not lengths:
        return None
    return tuple(sorted((k, ("list", v) if isinstance(v, int) else tuple(v))
                        for k, v in lengths.items()))


def shapes(fn: Callable, args: tuple, kwargs: dict, held: dict | None = None) -> dict:
    """The lengths of the list and tuple arguments of a call. ``held``: the
    captured data this call is given (a closure's, read where it is called:
    the code may be shared with another closure of the same factory, whose
    own cells ``fn`` holds)."""
    captured = targets.captured_values(fn)
    if held:
        captured = {n: held.get(n, v) for n, v in captured.items()}
    try:
        bound = inspect.signature(fn).bind(
            *args, **{k: v for k, v in kwargs.items() if k not in captured})
    except TypeError as exc:
        raise TypeError(f"{fn.__name__}: {exc}") from None
    bound.apply_defaults()  # a tuple or list default (`coeffs=(1.0, 2.0)`) is a list too
    out = {}
    arguments = dict(bound.arguments)
    # a closure's captured structures: the code is generated for their
    # structure (and lengths) as for arguments
    arguments.update((n, v) for n, v in captured.items() if pytrees.captured_spec(v) is not None)
    for name, v in arguments.items():
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
    src = targets.locate(fn)
    node = next((a for a in walk(src.tree.args) if isinstance(a, ast.arg) and a.arg == name),
                src.tree)
    items = value.values() if isinstance(value, dict) else value
    what = next((type(item).__name__ for item in items if pytrees.spec_of(item) is None),
                "str" if isinstance(value, dict) else type(value).__name__)
    raise src.error(node, f"parameter {name!r} is given a {type(value).__name__} holding "
                    f"an item of type {what}; a structure parameter (list, tuple, dict with "
                    "str keys, dataclass, NamedTuple) holds numbers, arrays and such "
                    "structures only")


def _seed_named(compiled: Callable, kwargs: dict, own: frozenset, known: dict,
                tangents: bool = False) -> dict:
    """``kwargs`` with the output seed under the name ``compiled`` gives it.
    The seed is named after the function's result, which the code generated
    for other arguments may compute under another name (a list of any length
    summed, ``dt3``; the same sum over an array's rows, ``dacc``): a caller
    that bound the arguments for one passes the seed by that name.
    ``known`` keeps each compiled function's parameter names and its
    keyword-only ones, read from its signature once."""
    if not kwargs:
        return kwargs
    names = known.get(id(compiled))
    if names is None:
        try:
            params = inspect.signature(compiled).parameters
        except (TypeError, ValueError):
            params = {}
        names = known[id(compiled)] = (frozenset(params), tuple(
            n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY))
    stray = [k for k in kwargs if k not in names[0] and k not in own]
    if len(stray) != 1:
        return kwargs
    seeds = [n for n in names[1] if n not in kwargs and n not in own]
    if len(seeds) != 1 or tangents and stray[0][1:] in own:
        # a JVP's tangents are named after the parameters: `dx` given where
        # the code takes `dA` (wrt=0 of f(A, x)) is x's tangent, not A's
        return kwargs
    renamed = dict(kwargs)
    renamed[seeds[0]] = renamed.pop(stray[0])
    return renamed


def _by_shape_signature(fn: Callable, kind: str) -> inspect.Signature | None:
    """The signature the code generated for any shape has, for a gradient:
    ``fn``'s parameters, then its seed ``dout``. What a derivative of the
    derivative binds its arguments with (``jacfwd(grad(f))``), as it does for
    code generated once. None for a JVP, whose tangents are named by the code
    of each shape (a keyword the call gives that is no parameter of ``fn``
    is taken for the tangent: :func:`_seed_named`)."""
    if kind not in ("grad", "value_and_grad"):
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if "dout" not in sig.parameters and all(p.kind != p.VAR_KEYWORD for p in params):
        params.append(inspect.Parameter("dout", inspect.Parameter.KEYWORD_ONLY, default=1.0))
    return sig.replace(parameters=params)


def _by_shape(fn: Callable, wrt: Wrt, kind: str, output, error,
              statics: dict | None = None, checkpoint=None) -> Callable:
    """A function that generates (once per shape and kind signature, cached)
    the code for the lengths of the lists and the arrays it is called with,
    then runs it."""
    names = positional_names(fn)
    seen: dict = {}
    tested: dict = {}
    param_names: dict = {}  # id(compiled) -> its parameter names (_seed_named)
    own = frozenset(inspect.signature(fn).parameters)

    last = [None]
    """The code of the shapes used last, behind a generated test of them
    (:func:`_shape_test`): a call like the last one binds its arguments once."""

    def call(*args, **kwargs):
        fast = last[0]
        if fast is not None:
            try:
                out = fast(*args, **kwargs)
            except TypeError:
                out = None  # arguments that do not fit: the long way words the error
            if out is not None:
                return out
        # A call like an earlier one (classes, list lengths, lists of numbers
        # only) runs the code found then, without binding the arguments.
        quick = (tuple(_shape_of(a) for a in args),
                 tuple((k, _shape_of(v)) for k, v in kwargs.items()))
        compiled = seen.get(quick)
        if compiled is not None:
            call.__s2s_ad_source__ = compiled.__s2s_ad_source__
            last[0] = tested.get(quick)
            return compiled(*args, **_seed_named(compiled, kwargs, own, param_names,
                                                 kind == "jvp"))
        # fn's own arguments decide the shapes (not the seed or the tangents)
        given = {k: v for k, v in kwargs.items() if k in own}
        lengths = shapes(fn, args, given, {k: v for k, v in kwargs.items() if k not in own})
        arrays = array_arguments(names, args, given)
        if not lengths and not arrays:
            raise error
        key = (_lengths_key(lengths), arrays)
        compiled = seen.get(key)
        if compiled is None:
            compiled = seen[key] = generated(fn, wrt, kind, output, lengths or None, arrays,
                                             statics, checkpoint)
        if None not in quick[0] and all(k[1] is not None for k in quick[1]):
            # numbers and lists of numbers only (what the quick key proves): the
            # code itself, without its own check of the same
            seen[quick] = getattr(compiled, "__wrapped__", compiled)
            last[0] = tested[quick] = _shape_test(seen[quick], quick)
        # source_of(call) shows the code of the shape used last.
        call.__s2s_ad_source__ = compiled.__s2s_ad_source__
        return compiled(*args, **_seed_named(compiled, kwargs, own, param_names,
                                             kind == "jvp"))

    call.__name__ = {"value_and_grad": "value_and_grad_", "jvp": "jvp_"}.get(kind, "grad_") \
        + fn.__name__
    call.__s2s_ad_by_shape__ = True
    call.__s2s_ad_origin__ = (kind, fn, wrt, output, None)
    signature = _by_shape_signature(fn, kind)
    if signature is not None:
        call.__signature__ = signature
    call.__doc__ = (f"{'Value and gradient' if kind == 'value_and_grad' else 'Gradient'} of "
                    f"{fn.__name__}, generated for the lengths of the lists and the arrays it "
                    "is called with (see s2s_ad.gradient_source(..., lengths=..., arrays=...) "
                    "for the code).")
    return call


def _shape_test(code: Callable, quick: tuple) -> Callable | None:
    """``code`` (generated for the shapes ``quick``: :func:`_shape_of` of the
    positional and the keyword arguments of a call) behind a function with
    its signature that runs it when every argument has those shapes (a
    parameter left to its default, when it is a number) and returns None
    otherwise, its tests written out per parameter
    (:func:`s2s_ad.signatures.kind_tests`); None where that cannot be said."""
    try:
        sig = inspect.signature(code)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    args, keywords = quick
    if len(args) > len(params) or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                                      for p in params[:len(args)]):
        return None
    kinds = dict(zip((p.name for p in params), args))
    kinds.update(keywords)
    for p in params:
        if p.name not in kinds:
            if p.default.__class__ not in _NUMBERS:
                return None
            kinds[p.name] = p.default.__class__
    if None in kinds.values() or len(kinds) != len(params):
        return None
    space = {"_s2s_code": code}
    names = [p.name for p in params]
    tests = signatures.kind_tests(names, tuple(kinds[n] for n in names), space)
    passed = ", ".join(n if p.kind is not p.KEYWORD_ONLY else f"{n}={n}"
                       for n, p in zip(names, params))
    return signatures.binder(getattr(code, "__name__", "code"), sig, tests, space,
                             then=f"return _s2s_code({passed})")


def entry(fn, wrt, kind, output, lengths, checkpoint=None, statics: dict | None = None):
    if statics is None and static_parameters(fn):
        return _by_static(fn, wrt, kind, output, lengths, checkpoint)
    if lengths is not None:
        return generated(fn, wrt, kind, output, lengths, statics=statics, checkpoint=checkpoint)
    # A function found to take lists gets its dispatcher cached, so asking
    # for its gradient again does not lower it again.
    key = ("by shape", fingerprint(fn), _wrt_key(wrt), kind, _wrt_key(output),
           _statics_key(statics), _wrt_key(checkpoint))
    hit = _cache.pop(key, None)
    if hit is not None:
        _cache[key] = hit
        _stats["hits"] += 1
        return with_captured(fn, hit, kind)
    try:
        return generated(fn, wrt, kind, output, statics=statics, checkpoint=checkpoint)
    except param_uses.SequenceParameter as exc:
        made = _by_shape(fn, wrt, kind, output, exc, statics, checkpoint)
        _keep(key, made)
        return with_captured(fn, made, kind)


def static_parameters(fn) -> frozenset:
    """The parameters of ``fn`` that may be static (:func:`s2s_ad.frontend.statics.candidates`),
    computed once per code object."""
    try:
        hit = _candidates.get(fn)
    except TypeError:  # not weakly referable: not a Python function
        return frozenset()
    if hit is None:
        hit = _candidates[fn] = frontend_statics.candidates(fn)
    return hit


_candidates: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def call_statics(fn: Callable, args: tuple, kwargs: dict) -> dict:
    """The arguments of a call of ``fn`` (defaults applied) that are strings,
    None or bools, or tuples of ints given a parameter that may be static
    (a NumPy axis: :func:`static_parameters`), as ``grad`` chooses its code."""
    candidates = static_parameters(fn)
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return {n: v for n, v in bound.arguments.items()
            if frontend_statics.is_static_value(v)
            or n in candidates and frontend_statics.static_at_candidate(v)}


def _by_static(fn: Callable, wrt: Wrt, kind: str, output, lengths, checkpoint=None) -> Callable:
    """A function that generates (once per combination, cached) the code for
    the static values (strings, None, bools) of the call, then runs it."""
    sig = inspect.signature(fn)
    seen: dict = {}
    # Only the candidates can be static (statics.candidates); read them
    # without inspect's bind (tens of microseconds a call).
    candidates = [n for n in sig.parameters if n in static_parameters(fn)]
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    position = {n: i for i, (n, p) in enumerate(sig.parameters.items()) if p.kind in kinds}
    given_defaults = {n: p.default for n, p in sig.parameters.items() if p.default is not p.empty}
    # The code for the defaults, made now: a function s2s-ad refuses is
    # refused when its gradient is asked for, not at its first call.
    defaults = {n: p.default for n, p in sig.parameters.items()
                if p.default is not p.empty and frontend_statics.is_static_value(p.default)}
    try:
        first = seen[_statics_key(defaults)] = entry(fn, wrt, kind, output, lengths, checkpoint,
                                                     defaults)
    except frontend_statics.StaticUse:
        first = None  # a parameter without a default used as a static value: per call
    except SourceError:
        # `def f(x, y=None): return x * y`, always called with a number for
        # y: the code for the None default is refused, the code for a
        # number is not. Refuse now only if that one is refused too.
        given = {n: v for n, v in defaults.items() if v is not None}
        if given == defaults:
            raise
        try:
            first = seen[_statics_key(given)] = entry(fn, wrt, kind, output, lengths, checkpoint,
                                                      given)
        except frontend_statics.StaticUse:
            first = None

    def call(*args, **kwargs):
        statics = {}
        for n in candidates:
            i = position.get(n)
            if i is not None and i < len(args):
                v = args[i]
            elif n in kwargs:
                v = kwargs[n]
            elif n in given_defaults:
                v = given_defaults[n]
            else:  # a missing argument: the generated function says which
                continue
            if frontend_statics.static_at_candidate(v):
                statics[n] = v
        key = _statics_key(statics)
        compiled = seen.get(key)
        if compiled is None:
            compiled = seen[key] = entry(fn, wrt, kind, output, lengths, checkpoint, statics)
        call.__s2s_ad_source__ = getattr(compiled, "__s2s_ad_source__", None)
        return compiled(*args, **kwargs)

    call.__s2s_ad_source__ = getattr(first, "__s2s_ad_source__", None)
    call.__s2s_ad_statics__ = fn  # (s2s_ad.higher: the code is chosen per call)
    call.__s2s_ad_static_origin__ = (kind, fn, wrt, output, lengths)
    call.__name__ = {"value_and_grad": "value_and_grad_", "jvp": "jvp_"}.get(kind, "grad_") \
        + fn.__name__
    call.__doc__ = (f"Gradient of {fn.__name__}, generated for the static arguments (strings, "
                    "None, bools) it is called with (see s2s_ad.gradient_source(..., "
                    "statics=...) for the code).")
    return call


def _statics_key(statics: dict | None):
    if statics is None:
        return None
    return tuple(sorted((n, type(v).__name__, v) for n, v in statics.items()))


def _wrt_key(wrt: Wrt):
    # Typed, so that wrt=True (refused) never finds the entry of wrt=1.
    if isinstance(wrt, (list, tuple)):
        return tuple((type(w).__name__, w) for w in wrt)
    return (type(wrt).__name__, wrt) if isinstance(wrt, Hashable) else (type(wrt).__name__, id(wrt))
