"""The pipeline in one place, and the public functions built on it.

    source.locate → frontend.lower → reverse.transform → emit.module → loader.load
"""

from __future__ import annotations

import numbers
from typing import Callable, Sequence, Union

from . import emit, frontend, graph, ir, loader, reverse, source
from .code import CodeFunction
from .errors import S2SError
from .explain import explain_text

Wrt = Union[None, int, str, Sequence[Union[int, str]]]


class WrtError(S2SError, ValueError):
    """``wrt`` names no parameter of the function."""


def lower(fn: Callable) -> ir.Function:
    """The SSA IR of ``fn``."""
    return frontend.lower(source.locate(fn))


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
        if not order:
            raise WrtError(f"{func.name} has no parameters to differentiate with respect to")
        return order, len(order) > 1
    if isinstance(wrt, (str, numbers.Integral)):
        return [one(wrt)], False
    values = [one(w) for w in wrt]
    if not values:
        raise WrtError("wrt is empty")
    if len({id(v) for v in values}) != len(values):
        raise WrtError(f"wrt names a parameter twice: {wrt!r}")
    return values, True


def gradient_source(fn: Callable, wrt: Wrt = None, *, with_value: bool = False) -> str:
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

    Returns
    -------
    str
        A self-contained Python module; it imports ``math`` if needed, never s2s_ad.
    """
    src = source.locate(fn)
    func = frontend.lower(src)
    values, as_tuple = resolve_wrt(func, wrt)
    code = reverse.transform(func, values, with_value=with_value, tuple_result=as_tuple)
    return emit.module([code], src.file)


_cache: dict = {}


def _compiled(fn: Callable, wrt: Wrt, with_value: bool) -> Callable:
    key = (getattr(fn, "__code__", fn), _wrt_key(wrt), with_value, _constants(fn))
    hit = _cache.get(key)
    if hit is not None:
        return hit
    text = gradient_source(fn, wrt, with_value=with_value)
    name = ("value_and_grad_" if with_value else "grad_") + fn.__name__
    module = loader.load(text, name)
    compiled = getattr(module, name)
    compiled.__s2s_ad_source__ = text
    _cache[key] = compiled
    return compiled


def _wrt_key(wrt: Wrt):
    if wrt is None or isinstance(wrt, (str, int)):
        return wrt
    return tuple(wrt)


def _constants(fn) -> tuple:
    """Module-level numbers ``fn`` reads: they are inlined into the gradient,
    so a change to one must produce a new gradient."""
    code = getattr(fn, "__code__", None)
    g = getattr(fn, "__globals__", {})
    if code is None:
        return ()
    return tuple((n, g[n]) for n in sorted(code.co_names)
                 if n in g and isinstance(g[n], numbers.Number))


def grad(fn: Callable, wrt: Wrt = 0) -> Callable:
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

    Examples
    --------
    >>> import math
    >>> def f(x, y):
    ...     return x * math.sin(y)
    >>> df = grad(f, wrt=("x", "y"))   # doctest: +SKIP
    >>> df(2.0, 0.0)                   # doctest: +SKIP
    (0.0, 2.0)
    """
    return _compiled(fn, wrt, False)


def value_and_grad(fn: Callable, wrt: Wrt = 0) -> Callable:
    """Like :func:`grad`, but the returned function gives ``(value, gradient)``.

    The value comes from the same forward pass the gradient uses.
    """
    return _compiled(fn, wrt, True)


def source_of(compiled: Callable) -> str:
    """The generated source of a function returned by :func:`grad` or
    :func:`value_and_grad`."""
    try:
        return compiled.__s2s_ad_source__
    except AttributeError:
        raise TypeError(f"{compiled!r} was not generated by s2s-ad") from None


def _reverse(fn: Callable, wrt: Wrt) -> tuple[ir.Function, CodeFunction]:
    func = lower(fn)
    values, as_tuple = resolve_wrt(func, wrt)
    return func, reverse.transform(func, values, tuple_result=as_tuple)


def graph_dot(fn: Callable, wrt: Wrt = None, backward: bool = False) -> str:
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
        return graph.to_dot(graph.forward(lower(fn)))
    func, code = _reverse(fn, wrt)
    return graph.to_dot(graph.combined(func, code))


def explain(fn: Callable, wrt: Wrt = None) -> str:
    """The reverse sweep of ``fn``'s gradient, line by line, with what each line means.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset (see ``docs/subset.md``).
    wrt : int, str, sequence of them, or None
        The parameters to differentiate with respect to; None means all.

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
    func, code = _reverse(fn, wrt)
    return explain_text(func, code)
