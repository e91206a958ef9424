"""The pipeline in one place, and the public functions built on it.

    source.locate → frontend.lower → reverse.transform → emit.module → loader.load
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import inspect
import numbers
import types
import weakref
from collections.abc import Hashable
from typing import Callable, NamedTuple, Sequence, Union

from s2s_ad.frontend import (calls, inline, lowering as frontend, numpy as frontend_numpy,
                             source, structures)
from s2s_ad.emit import module as emit, loader, optimize
from s2s_ad import graph, graph_backward, ir
from s2s_ad.reverse import transform as reverse
from s2s_ad.emit.code import CodeFunction
from s2s_ad.errors import S2SError, SourceError
from s2s_ad.explain import explain_text
from s2s_ad.rules import user as user_rules

Wrt = Union[None, int, str, Sequence[Union[int, str]]]


class WrtError(S2SError, ValueError):
    """``wrt`` names no parameter of the function."""


class OutputError(S2SError, ValueError):
    """``output`` is missing for a function returning a tuple, or names no item of it."""


def choose_output(func: ir.Function, output: int | None) -> ir.Function:
    """``func`` with its objective set: the one number it returns, or item
    ``output`` of the tuple it returns (the other items stay as ``outputs``,
    returned as the value by ``value_and_grad``)."""
    if func.outputs is None:
        if output is not None:
            raise OutputError(f"{func.name} returns one number; output={output!r} applies to "
                              "functions that return a tuple or list")
        return func
    n = len(func.outputs)
    if output is None:
        raise OutputError(f"{func.name} returns {n} values; pass output=K (--output K) to choose "
                          "the one to differentiate")
    if isinstance(output, bool) or not isinstance(output, numbers.Integral) \
            or not -n <= output < n:
        raise OutputError(f"output={output!r}: {func.name} returns {n} values (0..{n - 1})")
    return dataclasses.replace(func, result=func.outputs[output])


def _refuse_integer_result(func: ir.Function, src: source.Source) -> None:
    """A function whose result is a bool or an int (a comparison, ``round(x)``,
    ``int(x)``, an integer constant) has no gradient: refuse, located at the
    op that makes it, rather than return 0.0 (as JAX refuses integer outputs)."""
    r = func.result
    kind = r.kind if isinstance(r, ir.Value) else (
        "bool" if isinstance(r.value, bool) else "int" if isinstance(r.value, int) else None)
    if kind not in ("int", "bool"):
        return
    loc = func.loc
    for op in ir.walk(func.body):
        if getattr(op, "out", None) is r and getattr(op, "loc", None) is not None:
            loc = op.loc
    what = "a bool" if kind == "bool" else "an int"
    raise SourceError(f"{func.name} returns {what}, which has no gradient; return a float "
                      "(e.g. wrap it in float(...) only if a zero gradient is really meant)",
                      loc.file, loc.line, loc.col, src.line(loc.line))


def lower(fn: Callable, lengths: dict | None = None, arrays: Sequence[str] = ()) -> ir.Function:
    """The SSA IR of ``fn`` (``arrays``: the parameters that receive NumPy arrays)."""
    return frontend.lower(source.locate(fn), lengths, arrays)


def resolve_wrt(func: ir.Function, wrt: Wrt) -> tuple[list[ir.Value], bool]:
    """The parameters ``wrt`` names, and whether the gradient is a tuple.

    ``None`` means every parameter (a tuple when there are several); an int or
    a name means one parameter (a plain gradient); a sequence means those
    parameters (always a tuple)."""
    params = {p.value.var: p.value for p in func.params}
    order = list(params.values())

    def one(w) -> ir.Value:
        if isinstance(w, bool) or not isinstance(w, (numbers.Integral, str)):
            raise WrtError(f"wrt entries are parameter indices or names, not {w!r}")
        if isinstance(w, str):
            if w not in params:
                raise WrtError(f"{func.name} has no parameter {w!r} "
                               f"(parameters: {', '.join(params)})")
            return params[w]
        if not -len(order) <= w < len(order):
            raise WrtError(f"{func.name} has {len(order)} parameter(s); wrt={w} is out of range")
        return order[w]

    if wrt is None:
        # Integer parameters (range bounds, indices) have no gradient.
        order = [v for v in order if v.var not in func.integers]
        if not order:
            raise WrtError(f"{func.name} has no parameters to differentiate with respect to")
        return order, len(order) > 1
    if isinstance(wrt, (str, numbers.Integral)) or not isinstance(wrt, (list, tuple)):
        return [one(wrt)], False
    values = [one(w) for w in wrt]
    if not values:
        raise WrtError("wrt is empty")
    if len({id(v) for v in values}) != len(values):
        raise WrtError(f"wrt names a parameter twice: {wrt!r}")
    return values, True


def program(fn: Callable, wrt: Wrt = None, *, with_value: bool = False,
            pair: bool = False, tuple_result: bool | None = None, output: int | None = None,
            lengths: dict | None = None, arrays: Sequence[str] = ()
            ) -> tuple[list[CodeFunction], source.Source, calls.CallGraph]:
    """The generated functions for ``fn``, before they become text: the
    gradient (or, with ``pair``, ``fn``'s own forward/backward pair) first,
    then the pair of every user function it calls (one per specialisation,
    :func:`s2s_ad.calls.collect`). ``arrays`` names the parameters of ``fn``
    that receive NumPy arrays."""
    src = source.locate(fn)
    func = frontend.lower(src, lengths, arrays)
    graph = calls.collect(func, src)
    inline.run(graph)
    if pair:
        main_names = [f"{func.name}_fwd", f"{func.name}_bwd"]
    else:
        main_names = [("value_and_grad_" if with_value else "grad_") + func.name]
    taken = calls.all_names(graph) | set(main_names)
    pairs = calls.pairs(graph, taken)
    reserved = frozenset(taken | {n for p in pairs.values() for n in (p.fwd, p.bwd)})
    if pair:
        functions = list(reverse.transform_pair(func, *main_names, pairs, reserved))
    else:
        func = choose_output(func, output)
        _refuse_integer_result(func, src)
        graph.main = func
        values, as_tuple = resolve_wrt(func, wrt)
        functions = [reverse.transform(func, values, with_value=with_value,
                                       tuple_result=as_tuple if tuple_result is None
                                       else tuple_result, pairs=pairs, reserved=reserved)]
    for callee in graph.callees:
        p = pairs[calls.specialisation(graph, callee)]
        functions += reverse.transform_pair(callee, p.fwd, p.bwd, pairs, reserved)
    return [optimize.drop_unused_items(f) for f in functions], src, graph


def gradient_source(fn: Callable, wrt: Wrt = None, *, with_value: bool = False,
                    output: int | None = None, lengths: dict | None = None,
                    arrays: Sequence[str] = ()) -> str:
    """The source text of the gradient module of ``fn``.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset (see ``docs/subset.md``).
    wrt : int, str, sequence of them, or None
        The parameters to differentiate with respect to; None means all.
    with_value : bool
        Generate ``value_and_grad_FN`` (returning ``(value, gradient)``)
        instead of ``grad_FN``.
    output : int, optional
        For a function returning a tuple or list: the index of the item to
        differentiate (required then; see :func:`grad`).
    lengths : dict, optional
        For parameters that receive a list or tuple of numbers: their
        lengths, ``{"xs": 3}`` (a list) or ``{"xs": ("tuple", 3)}``. The code
        is generated for those lengths; their gradients have the same shape.
    arrays : sequence of str, optional
        The parameters that receive NumPy arrays. A function whose source
        uses NumPy takes its parameters for arrays anyway (unless annotated
        ``float``/``int`` or given a numeric default); one that does not is
        generated for numbers unless its array parameters are named here.

    Returns
    -------
    str
        A Python module defining ``grad_FN`` (or ``value_and_grad_FN``)
        and, for every user function ``fn`` calls, its forward/backward pair.
        It imports ``math`` and the modules of user rules if needed, never
        s2s_ad.

    Examples
    --------
    >>> def f(x):
    ...     return x * x
    >>> print(gradient_source(f))     # doctest: +SKIP
    """
    return gradient_module(fn, wrt, with_value=with_value, output=output, lengths=lengths,
                           arrays=arrays)[0]


def gradient_module(fn: Callable, wrt: Wrt = None, *, with_value: bool = False,
                    output: int | None = None, lengths: dict | None = None,
                    arrays: Sequence[str] = ()) -> tuple[str, list[str]]:
    """:func:`gradient_source`'s text, and the source files it was generated
    from: ``fn``'s own and those of every function it calls (``grad -o``
    refuses to write over any of them)."""
    functions, src, graph = program(fn, wrt, with_value=with_value, output=output,
                                    lengths=lengths, arrays=arrays)
    # every function reached, the inlined ones too (graph.lowered, not graph.callees)
    files = list(dict.fromkeys([src.file, *(f.loc.file for f in graph.lowered.values())]))
    return emit.module(functions, src.file), files


def vjp_source(fn: Callable, lengths: dict | None = None, arrays: Sequence[str] = ()) -> str:
    """The source text of ``fn``'s forward/backward pair, as :func:`vjp` uses it.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset.
    lengths : dict, optional
        Lengths of list or tuple parameters, as for :func:`gradient_source`.
    arrays : sequence of str, optional
        The parameters that receive NumPy arrays, as for :func:`gradient_source`.

    Returns
    -------
    str
        A Python module defining ``FN_fwd(*params) -> (value, tape)`` and
        ``FN_bwd(tape, cotangent) -> (cotangent of each parameter, ...)``,
        plus the pairs of the user functions ``fn`` calls.
    """
    functions, src, _ = program(fn, pair=True, lengths=lengths, arrays=arrays)
    return emit.module(functions, src.file)


_cache: dict = {}
_stats = {"hits": 0, "misses": 0}


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    """Each miss is one transform (lowering, reverse sweep, emit, compile)."""
    size: int


def cache_info() -> CacheInfo:
    """Statistics of the in-memory cache of generated functions.

    The cache is a dictionary in this module (``s2s_ad.api``), private to the
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


def _compiled(fn: Callable, wrt: Wrt, kind: str, output: int | None = None,
              lengths: dict | None = None, arrays: frozenset = frozenset()) -> Callable:
    key = (fingerprint(fn), _wrt_key(wrt), kind, _wrt_key(output), _lengths_key(lengths),
           tuple(sorted(arrays)))
    hit = _cache.get(key)
    if hit is not None:
        _stats["hits"] += 1
        return hit
    _stats["misses"] += 1
    with_value = kind == "value_and_grad"
    functions, src, graph = program(fn, wrt, with_value=with_value, pair=kind == "pair",
                                    output=output, lengths=lengths, arrays=arrays)
    text = emit.module(functions, src.file)
    if kind == "pair":
        module = loader.load(text, fn.__name__ + "_vjp")
        compiled = (getattr(module, fn.__name__ + "_fwd"), getattr(module, fn.__name__ + "_bwd"))
        compiled[0].__s2s_ad_source__ = compiled[1].__s2s_ad_source__ = text
    else:
        name = ("value_and_grad_" if with_value else "grad_") + fn.__name__
        module = loader.load(text, name)
        compiled = getattr(module, name)
        compiled.__s2s_ad_source__ = text
        taken = frozenset(p.value.var for p in graph.main.params if p.value.kind == "array")
        if len(taken) < len(graph.main.params):
            compiled = _by_kind(fn, wrt, kind, output, lengths, compiled, taken)
    _cache[key] = compiled
    return compiled


def _by_kind(fn: Callable, wrt: Wrt, kind: str, output, lengths, compiled: Callable,
             taken: frozenset) -> Callable:
    """``compiled`` (generated for the parameters ``taken`` as arrays), run
    as it is while no other parameter receives an array; a call passing an
    array elsewhere gets (once per kind signature, cached) the code generated
    for its arrays. Whether a value is an array comes from the arguments,
    never from whether ``fn``'s source names NumPy."""
    names = _positional_names(fn)
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
        arrays = _array_arguments(names, args, kwargs)
        if arrays <= taken:
            return compiled(*args, **kwargs)
        code = specialised.get(arrays)
        if code is None:
            code = _compiled(fn, wrt, kind, output, lengths, arrays | taken)
            # (its own dispatch would find these very arrays: skip it)
            code = specialised[arrays] = getattr(code, "__wrapped__", code)
        return code(*args, **kwargs)

    functools.update_wrapper(call, compiled)
    return call


def _positional_names(fn: Callable) -> tuple[tuple[str, ...], frozenset]:
    """``fn``'s parameter names in signature order, and those annotated as
    numbers (``s: float``), for which a 0-d array is a number."""
    try:
        names = tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return (), frozenset()
    return names, frontend_numpy.annotated_numbers(fn)


_NUMBERS = frozenset((float, int, bool))


def _array_arguments(names: tuple, args: tuple, kwargs: dict) -> frozenset:
    """The parameters (``names`` from :func:`_positional_names`) a call gives
    an array: an ndarray, or any array-like that is not a number, list or
    tuple (a 0-d array given to a parameter annotated as a number is one)."""
    order, declared = names
    given = list(zip(order, args))
    if kwargs:
        given += [(n, a) for n, a in kwargs.items() if n in order]
    return frozenset(n for n, a in given if type(a) not in _NUMBERS and _is_array(a)
                     and not (n in declared and getattr(a, "ndim", None) == 0))


def _is_array(value) -> bool:
    if isinstance(value, (numbers.Number, list, tuple, dict, str)):
        return False
    return hasattr(value, "__array__") or hasattr(value, "shape")


def _lengths_key(lengths: dict | None):
    if not lengths:
        return None
    return tuple(sorted((k, ("list", v) if isinstance(v, int) else tuple(v))
                        for k, v in lengths.items()))


def _shapes(fn: Callable, args: tuple, kwargs: dict) -> dict:
    """The lengths of the list and tuple arguments of a call."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{fn.__name__}: {exc}") from None
    out = {}
    for name, v in bound.arguments.items():
        if isinstance(v, (list, tuple)):
            if any(not isinstance(item, numbers.Number) for item in v):
                _refuse_items(fn, name, v)
            out[name] = ("list" if isinstance(v, list) else "tuple", len(v))
    return out


def _refuse_items(fn: Callable, name: str, value) -> None:
    """A list or tuple argument holding arrays (or lists): its items would be
    taken for numbers, so refuse it, located at the parameter."""
    src = source.locate(fn)
    node = next((a for a in ast.walk(src.tree.args) if isinstance(a, ast.arg) and a.arg == name),
                src.tree)
    what = next(type(item).__name__ for item in value if not isinstance(item, numbers.Number))
    raise src.error(node, f"parameter {name!r} is given a {type(value).__name__} holding "
                    f"an item of type {what}; a list or tuple parameter holds numbers: pass "
                    "arrays as parameters of their own, or as one array (np.stack)")


def _by_shape(fn: Callable, wrt: Wrt, kind: str, output, error) -> Callable:
    """A function that generates (once per shape and kind signature, cached)
    the code for the lengths of the lists and the arrays it is called with,
    then runs it."""
    names = _positional_names(fn)
    seen: dict = {}

    def call(*args, **kwargs):
        lengths = _shapes(fn, args, kwargs)
        arrays = _array_arguments(names, args, kwargs)
        if not lengths and not arrays:
            raise error
        key = (_lengths_key(lengths), arrays)
        compiled = seen.get(key)
        if compiled is None:
            compiled = seen[key] = _compiled(fn, wrt, kind, output, lengths or None, arrays)
        # source_of(call) shows the code of the shape used last.
        call.__s2s_ad_source__ = compiled.__s2s_ad_source__
        return compiled(*args, **kwargs)

    call.__name__ = ("value_and_grad_" if kind == "value_and_grad" else "grad_") + fn.__name__
    call.__s2s_ad_by_shape__ = True
    call.__doc__ = (f"{'Value and gradient' if kind == 'value_and_grad' else 'Gradient'} of "
                    f"{fn.__name__}, generated for the lengths of the lists and the arrays it "
                    "is called with (see s2s_ad.gradient_source(..., lengths=..., arrays=...) "
                    "for the code).")
    return call


def _entry(fn, wrt, kind, output, lengths):
    if lengths is not None:
        return _compiled(fn, wrt, kind, output, lengths)
    # A function found to take lists gets its dispatcher cached, so asking
    # for its gradient again does not lower it again.
    key = ("by shape", fingerprint(fn), _wrt_key(wrt), kind, _wrt_key(output))
    if key in _cache:
        _stats["hits"] += 1
        return _cache[key]
    try:
        return _compiled(fn, wrt, kind, output)
    except structures.SequenceParameter as exc:
        _cache[key] = _by_shape(fn, wrt, kind, output, exc)
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


def grad(fn: Callable, wrt: Wrt = 0, *, output: int | None = None,
         lengths: dict | None = None) -> Callable:
    """Return a function that computes the gradient of ``fn``.

    The gradient is generated as Python source (see :func:`source_of`),
    compiled once and cached; calling it runs plain arithmetic, no tracing.

    Parameters
    ----------
    fn : function
        A Python function of floats returning one float, written in the
        supported subset (``docs/subset.md``).
    wrt : int, str, or sequence of int/str, optional
        Which parameters to differentiate with respect to, by position or
        name. An int or str gives one gradient; a sequence gives a tuple.
        Default 0, the first parameter. ``None`` means every parameter.
    output : int, optional
        For ``fn`` returning a tuple or list of numbers: the index of the
        item to differentiate. Required for such functions, refused for
        others.
    lengths : dict, optional
        For parameters that receive a list or tuple of numbers, their
        lengths (``{"xs": 3}``). When omitted and ``fn`` uses a parameter as
        a sequence, the returned function generates code for the lengths of
        the lists it is called with (once per shape, cached). The gradient
        of such a parameter is a list (tuple) of the same length.

    Returns
    -------
    function
        Takes the same arguments as ``fn`` plus a keyword-only seed for the
        output adjoint (named ``d<result>``, default 1.0) and returns the
        gradient(s).

    Raises
    ------
    SourceError
        ``fn`` uses Python that s2s-ad does not support; the message names
        the file, line and column.

    See Also
    --------
    value_and_grad, vjp, source_of, cache_info

    Notes
    -----
    The generated function is cached in memory, in this module
    (``s2s_ad.api``), keyed on the source text of ``fn`` and of the functions
    it calls, the constants they read, and the options: calling ``grad(fn)``
    again returns the same function without transforming ``fn`` again
    (see :func:`cache_info`). Functions ``fn`` calls get their own
    forward/backward pair in the generated module (``docs/calls.md``).

    Examples
    --------
    >>> import math
    >>> def f(x, y):
    ...     return x * math.sin(y)
    >>> df = grad(f, wrt=("x", "y"))   # doctest: +SKIP
    >>> df(2.0, 0.0)                   # doctest: +SKIP
    (0.0, 2.0)
    """
    return _entry(fn, wrt, "grad", output, lengths)


def value_and_grad(fn: Callable, wrt: Wrt = 0, *, output: int | None = None,
                   lengths: dict | None = None) -> Callable:
    """Return a function that computes both ``fn``'s value and its gradient.

    Like :func:`grad`; the value comes from the same forward pass the
    gradient uses, so it costs nothing extra.

    Parameters
    ----------
    fn : function
        A Python function of floats returning one float, in the supported
        subset (``docs/subset.md``).
    wrt : int, str, or sequence of int/str, optional
        As for :func:`grad`. Default 0, the first parameter.
    output : int, optional
        As for :func:`grad`; the value returned is then the whole tuple
        ``fn`` returns.
    lengths : dict, optional
        As for :func:`grad`.

    Returns
    -------
    function
        Takes the same arguments as ``fn`` (plus the keyword-only output
        seed) and returns ``(value, gradient)``.

    Examples
    --------
    >>> def f(x):
    ...     return x * x
    >>> value_and_grad(f)(3.0)     # doctest: +SKIP
    (9.0, 6.0)
    """
    return _entry(fn, wrt, "value_and_grad", output, lengths)


def vjp(fn: Callable, *args, **kwargs) -> tuple[object, Callable]:
    """Evaluate ``fn`` and return its value and a vector-Jacobian product.

    Runs the generated forward pass of ``fn`` once, at the given arguments,
    keeping its tape; the returned ``vjp_fn`` runs the backward pass for any
    output cotangent, as often as needed, without recomputing the forward.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset.
    *args, **kwargs
        The arguments to call ``fn`` with (defaults apply as in a call). A
        list or tuple argument is taken as a sequence of numbers; the code
        is generated for its length and its cotangent has its shape.

    Returns
    -------
    value : float
        ``fn(*args, **kwargs)``.
    vjp_fn : function
        ``vjp_fn(cotangent)`` returns a tuple with one cotangent per
        parameter of ``fn``, in signature order (keyword-only parameters
        included): ``cotangent * ∂value/∂parameter``. When ``fn`` returns a
        tuple or list of numbers, ``value`` is a tuple and ``cotangent`` is a
        sequence with one number per item: the result is
        ``Σ_k cotangent[k] * ∂value[k]/∂parameter``.

    See Also
    --------
    grad : the gradient alone, with the seed fixed to 1.
    vjp_source : the source of the forward/backward pair ``vjp`` runs.

    Examples
    --------
    >>> def f(x, y):
    ...     return x * y + y
    >>> value, vjp_fn = vjp(f, 2.0, 3.0)     # doctest: +SKIP
    >>> value, vjp_fn(1.0), vjp_fn(10.0)     # doctest: +SKIP
    (9.0, (3.0, 3.0), (30.0, 30.0))
    """
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"vjp({fn.__name__}, ...): {exc}") from None
    fwd, bwd = _compiled(fn, None, "pair", None, _shapes(fn, args, kwargs),
                         _array_arguments(_positional_names(fn), args, kwargs))
    bound.apply_defaults()
    value, tape = fwd(*bound.arguments.values())
    spent = _consumed(tape)

    def vjp_fn(cotangent):
        # The backward pass pops loop tapes and restores arrays written in
        # place: each call gets its own copy of what it consumes.
        return bwd(copy.deepcopy(tape) if spent else tape, cotangent)

    vjp_fn.__doc__ = (f"Cotangents of the parameters of {fn.__name__} for an output "
                      "cotangent, from one saved forward pass.")
    vjp_fn.__s2s_ad_source__ = fwd.__s2s_ad_source__
    return value, vjp_fn


def _consumed(tape) -> bool:
    """Does a backward pass change ``tape``: lists it pops, arrays it restores?"""
    if isinstance(tape, (list, dict)) or hasattr(tape, "__array_interface__"):
        return True
    return isinstance(tape, tuple) and any(_consumed(t) for t in tape)


def source_of(compiled: Callable) -> str:
    """The generated source of a function made by s2s-ad.

    Parameters
    ----------
    compiled : function
        A function returned by :func:`grad` or :func:`value_and_grad`, or the
        ``vjp_fn`` returned by :func:`vjp`.

    Returns
    -------
    str
        The text of the module it was compiled from.

    Raises
    ------
    TypeError
        ``compiled`` was not generated by s2s-ad.
    """
    try:
        return compiled.__s2s_ad_source__
    except AttributeError:
        if getattr(compiled, "__s2s_ad_by_shape__", False):
            raise TypeError(f"{compiled.__name__} is generated per list length: call it first "
                            "(source_of then shows the code of the last shape used), or use "
                            "gradient_source(fn, lengths=...)") from None
        raise TypeError(f"{compiled!r} was not generated by s2s-ad") from None


def _reverse(fn: Callable, wrt: Wrt, output: int | None, lengths: dict | None,
             arrays: Sequence[str] = ()) -> tuple[ir.Function, CodeFunction]:
    """``fn``'s IR and its gradient function (calls to helpers included)."""
    code = program(fn, wrt, output=output, lengths=lengths, arrays=arrays)[0][0]
    return code.source, code


def graph_dot(fn: Callable, wrt: Wrt = None, backward: bool = False, *,
              output: int | None = None, lengths: dict | None = None,
              arrays: Sequence[str] = ()) -> str:
    """The computation graph of ``fn`` as Graphviz DOT text.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset (see ``docs/subset.md``).
    wrt : int, str, sequence of them, or None
        With ``backward``, the parameters to differentiate with respect to;
        None means all. Ignored without ``backward``.
    backward : bool
        Draw the reverse sweep too: one node per local derivative, labelled
        with the forward op and operand it differentiates, and a ``Σ`` node
        where two or more contributions to an adjoint meet.
    output : int, optional
        With ``backward``, for a function returning a tuple or list: the
        item to differentiate.
    lengths : dict, optional
        The length of each list or tuple parameter (``{"xs": 3}``); each of
        its items is drawn as a leaf.
    arrays : sequence of str, optional
        The parameters that receive NumPy arrays (see :func:`gradient_source`).

    Returns
    -------
    str
        DOT text: leaves ``leaf_N`` (parameters, constants, the seed), nodes
        ``node_N`` (ops), edges labelled with SSA names. Render it with
        ``dot -Tsvg`` or ``s2s-ad graph TARGET -o out.svg``; ``docs/graphs.md``
        walks through an example.

    Examples
    --------
    >>> def f(a, x):
    ...     b = x * x
    ...     return a * b
    >>> print(graph_dot(f, backward=True))   # doctest: +SKIP
    """
    if not backward:
        return graph.to_dot(graph.forward(lower(fn, lengths, arrays)))
    func, code = _reverse(fn, wrt, output, lengths, arrays)
    return graph.to_dot(graph_backward.combined(func, code))


def explain(fn: Callable, wrt: Wrt = None, *, output: int | None = None,
            lengths: dict | None = None, arrays: Sequence[str] = ()) -> str:
    """The reverse sweep of ``fn``'s gradient, line by line, with what each line means.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset (see ``docs/subset.md``).
    wrt : int, str, sequence of them, or None
        The parameters to differentiate with respect to; None means all.
    output : int, optional
        For a function returning a tuple or list: the item to differentiate.
    lengths : dict, optional
        The length of each list or tuple parameter (``{"xs": 3}``).
    arrays : sequence of str, optional
        The parameters that receive NumPy arrays (see :func:`gradient_source`).

    Returns
    -------
    str
        The forward pass; each reverse-sweep statement beside the forward op
        it comes from and the local derivative it applies
        (``dx += db * x  ← b = x * x, ∂b/∂x = x (right operand)``); and each
        adjoint with the uses of its value whose contributions it sums.

    Examples
    --------
    >>> def f(a, x):
    ...     b = x * x
    ...     return a * b
    >>> print(explain(f, wrt="x"))   # doctest: +SKIP
    """
    func, code = _reverse(fn, wrt, output, lengths, arrays)
    return explain_text(func, code)
