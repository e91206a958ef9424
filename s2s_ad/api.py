"""The public functions: gradients, vector-Jacobian products, the source
of generated code, graphs and explanations.

They are built on :mod:`s2s_ad.pipeline` (function → generated module) and
:mod:`s2s_ad.cache` (compiled functions, dispatch on the kinds of the arguments).
"""

from __future__ import annotations

import copy
import inspect
from typing import Callable, Sequence

import numpy

from s2s_ad import callplan, graph, graph_backward, signatures, tangent_shapes
from s2s_ad.frontend.targets import captured_values
from s2s_ad.cache import (CacheInfo, array_arguments, call_statics, static_parameters, cache_info, clear_cache,
                          fingerprint, generated, positional_names, shapes)
from s2s_ad.explain import explain_text
from s2s_ad.frontend.checkpoint import checkpoint
from s2s_ad import hessians, jacobians
from s2s_ad.higher import transform, vjp_of
from s2s_ad.partials import accepting, is_partial, vjp_through
from s2s_ad.pipeline import (OutputError, Wrt, WrtError, choose_output, gradient_code,
                             gradient_module, gradient_source, jvp_module, jvp_program, jvp_source, lower, program,
                             resolve_wrt, vjp_source)

__all__ = ["checkpoint", "grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "jacobian", "jvp_source", "jvp_module", "jvp_program", "hvp", "hessian", "source_of", "graph_dot", "explain",
           "gradient_source", "gradient_module", "vjp_source", "lower", "program", "resolve_wrt",
           "choose_output", "gradient_code", "cache_info", "clear_cache", "CacheInfo",
           "fingerprint", "Wrt", "WrtError", "OutputError"]


@accepting
def grad(fn: Callable, wrt: Wrt = 0, *, output: int | None = None,
         lengths: dict | None = None, checkpoint=None) -> Callable:
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
        a sequence only by index, ``len``, ``sum`` and loops, one generated
        function serves lists of every length; otherwise the returned
        function generates code for the lengths of the lists it is called
        with (once per shape, cached). The gradient of such a parameter is a
        list (tuple) of the same length.
    checkpoint : bool, int or None, optional
        Trade recomputation for memory in loops (``docs/checkpointing.md``):
        ``True`` checkpoints every loop inside no other loop with 100
        snapshots, a number ``K`` with ``K`` snapshots (a ``for`` loop over
        ``range`` keeps at most ``K`` copies of its carried values and tapes one
        iteration at a time, binomial schedule; a ``while`` loop keeps about
        √n). ``None`` (default) checkpoints only the loops marked
        ``# s2s-ad: checkpoint``; ``False`` none, marks or not.

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
    The generated function is cached in memory, in
    ``s2s_ad.cache``, keyed on the source text of ``fn`` and of the functions
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
    return transform(fn, wrt, "grad", output, lengths, checkpoint)


@accepting
def value_and_grad(fn: Callable, wrt: Wrt = 0, *, output: int | None = None,
                   lengths: dict | None = None, checkpoint=None) -> Callable:
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
    checkpoint : bool, int or None, optional
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
    return transform(fn, wrt, "value_and_grad", output, lengths, checkpoint)


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

    A float32 (or float16, complex64) array or NumPy scalar argument gets
    its cotangent in its own dtype, as ``grad`` gives its gradient, whatever
    the dtype of the output cotangent. A number given as the cotangent of an
    array value is that number at each element (as ``grad``'s ``dout``); an
    array of another shape than the value's (each item's, for a tuple)
    raises ``ValueError``: it is not broadcast.
    """
    planned = _plans_get(id(fn))
    if planned is not None and planned[1] and planned[0]() is fn:
        quick = planned[1].quick
        try:  # arguments like the last call's: its pair, run (callplan.Plan)
            # (no keywords: no dict of them made for the call)
            done = None if quick is None else quick(*args, **kwargs) if kwargs else quick(*args)
        except TypeError:
            done = None  # the slow way words the error
        if done is not None:  # (arguments of the last call's kinds: NumPy's or not)
            if planned[1].numpy:
                return _checked(fn, _narrowed(fn, args, kwargs, done))
            # a float value takes a number cotangent as it is (cotangent_checked)
            return done if done[0].__class__ is float else _checked(fn, done)
    return _checked(fn, _narrowed(fn, args, kwargs, _vjp(fn, args, kwargs)))


def _checked(fn, done: tuple) -> tuple:
    """``(value, vjp_fn)`` with ``vjp_fn``'s cotangent checked to have the
    value's shape, a number spread over an array value
    (:func:`s2s_ad.tangent_shapes.cotangent_checked`)."""
    value, pull = done
    return value, tangent_shapes.cotangent_checked(getattr(fn, "__name__", "fn"), value, pull)


_NARROW = frozenset(numpy.dtype(t) for t in (numpy.float32, numpy.float16, numpy.complex64))
"""Floating dtypes narrower than Python's numbers: a cotangent computed with
a float64 output cotangent is cast back to them."""
_NUMPY_CLASSES = frozenset({numpy.ndarray} | {d.type for d in _NARROW})
_NUMPY_SCALARS = frozenset(numpy.dtype(t).type for t in (
    numpy.float64, numpy.float32, numpy.float16, numpy.complex128, numpy.complex64))
"""NumPy's inexact scalars: a value of one takes a number cotangent in its dtype."""
_NUMPY_ANY = _NUMPY_SCALARS | {numpy.ndarray}


def _narrowed(fn, args: tuple, kwargs: dict, done: tuple) -> tuple:
    """``(value, vjp_fn)`` with ``vjp_fn``'s cotangent of each argument of a
    narrow floating dtype (:data:`_NARROW`) in that dtype: an array of it, or
    a NumPy scalar of it for a NumPy scalar."""
    if not any(a.__class__ in _NUMPY_CLASSES and a.dtype in _NARROW
               for a in (*args, *kwargs.values())):
        return done
    value, pull = done
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return done
    bound.apply_defaults()
    given = list(bound.arguments.values())
    # a number as the cotangent of a NumPy value is taken in the value's
    # dtype, as grad's seed is: `dout * b` of a Python float and a float32
    # array would be float32, and so the cotangent of a float64 argument
    seed = getattr(value, "dtype", None)
    seed = seed.type if value.__class__ in _NUMPY_SCALARS else None

    def vjp_fn(cotangent):
        if seed is not None and cotangent.__class__ in (float, int):
            cotangent = seed(cotangent)
        out = pull(cotangent)
        if not isinstance(out, tuple) or len(out) != len(given):
            return out
        return tuple(_in_dtype(g, a) for g, a in zip(out, given))

    return value, _shown_as(vjp_fn, pull)


def _shown_as(vjp_fn: Callable, pull: Callable) -> Callable:
    """``vjp_fn``, wrapping ``pull``, with its docstring and source."""
    vjp_fn.__doc__ = pull.__doc__
    try:
        vjp_fn.__s2s_ad_source__ = source_of(pull)
    except TypeError:
        pass  # (a partial's vjp_fn: its function's pair has the source)
    return vjp_fn


def _in_dtype(g, like):
    """The cotangent ``g`` in the dtype of the argument ``like`` where that is
    a floating (or complex) dtype, ``like`` a NumPy array or scalar, and
    ``g``'s differs."""
    dtype = getattr(like, "dtype", None) if like.__class__ in _NUMPY_ANY else None
    if dtype is None or dtype.kind not in "fc" or g is None \
            or getattr(g, "dtype", None) == dtype:
        return g
    return dtype.type(g) if isinstance(like, numpy.generic) else numpy.asarray(g, dtype=dtype)


def _vjp(fn: Callable, args: tuple, kwargs: dict) -> tuple[object, Callable]:
    """:func:`vjp`'s value and ``vjp_fn`` but by the last call's pair, its
    cotangents as the backward pass computes them (before :func:`_narrowed`)."""
    if is_partial(fn):
        return vjp_through(vjp, fn, args, kwargs)
    known = callplan.plan(fn)
    if known is not None:
        quick = known.quick
        if quick is not None:
            try:  # arguments like the last call's: its pair, run (callplan.Plan)
                done = quick(*args, **kwargs)
            except TypeError:
                done = None  # the slow way words the error
            if done is not None:
                return done
        found = callplan.pair(fn, known, args, kwargs)
        if found is not None:  # arguments like an earlier call's: the pair found then
            values, hit = found
            value, tape = hit.fwd(*(private(v) for v in values))
            return private(value), hit.pullback(tape)
    made = vjp_of(fn, args, kwargs)  # a function s2s-ad generated (docs/forward.md)
    if made is not None and made[0] == "made":
        return made[1]
    fn = made[1] if made is not None else fn
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"vjp({fn.__name__}, ...): {exc}") from None
    fwd, bwd = generated(fn, None, "pair", None, shapes(fn, args, kwargs),
                         array_arguments(positional_names(fn), args, kwargs),
                         call_statics(fn, args, kwargs)
                         if static_parameters(fn) else None)
    bound.apply_defaults()
    # A closure's captured data follow its own parameters (docs/calls.md);
    # they are constants: their cotangents are not returned.
    captured = tuple(captured_values(fn).values())
    # The tape keeps arguments and the value: the call gets its own copies of
    # their arrays and lists (callplan.private), which the caller cannot change
    value, tape = fwd(*(private(v) for v in bound.arguments.values()), *captured)
    doc = (f"Cotangents of the parameters of {fn.__name__} for an output "
           "cotangent, from one saved forward pass.")
    listed = type(value) is list  # a list grown at run time: its cotangent too
    if known is not None:
        # the containers of a tape are fixed by the pair's code: whether its
        # backward consumes it is known for every later call
        make = _pullback(bwd, _consumed(tape), doc, fwd.__s2s_ad_source__)
        kept_fwd, kept_make = _list_result(fwd, make) if listed else (fwd, make)
        callplan.remember(fn, known, tuple(bound.arguments.values()), kept_fwd, bwd, kept_make)
    back = _vjp_fn(tape, bwd, len(captured), doc, fwd.__s2s_ad_source__)
    return private(value), _list_cotangent(back, len(value)) if listed else back


_plans_get = callplan._plans.get
private = callplan.private
"""(The plans' table looked up at once by ``vjp``: a call like the last one
runs its pair without the checks on the way.)"""


def _list_result(fwd: Callable, make: Callable) -> tuple[Callable, Callable]:
    """A pair whose value is a list, as :func:`callplan.remember` keeps it:
    the forward pass also gives the list's length, which the ``vjp_fn``
    checks the cotangent against."""
    def fwd_list(*args):
        value, tape = fwd(*args)
        return value, (tape, len(value))

    def make_list(tape_and_length):
        tape, n = tape_and_length
        return _list_cotangent(make(tape), n)
    return fwd_list, make_list


def _list_cotangent(vjp_fn: Callable, n: int) -> Callable:
    """``vjp_fn`` of a function whose value is a list of ``n`` items: the
    cotangent is a list of ``n`` items, copied (the backward pass pops the
    list adjoint it is given, item by item)."""
    def list_vjp_fn(cotangent):
        if not isinstance(cotangent, (list, tuple)) or len(cotangent) != n:
            got = (f"a list of {len(cotangent)}" if isinstance(cotangent, (list, tuple))
                   else f"a {type(cotangent).__name__}")
            raise ValueError(f"the value is a list of {n} items: its cotangent is a list of "
                             f"{n} items, not {got}")
        return vjp_fn(list(cotangent))
    list_vjp_fn.__doc__ = vjp_fn.__doc__
    list_vjp_fn.__s2s_ad_source__ = source_of(vjp_fn)
    return list_vjp_fn


def _pullback(bwd: Callable, consumes: bool, doc: str, source: str) -> Callable:
    """``make(tape)``: the ``vjp_fn`` of one forward pass of a pair whose
    backward pass ``bwd`` consumes its tape or not (the containers of a tape
    are fixed by the pair's code), with nothing decided or set per call: its
    docstring is in its code, its source (:func:`source_of`) found by its
    code (about 0.1 µs a call less than a closure given both as attributes)."""
    made = signatures._define("make", "def make(_s2s_tape):\n"
                                      + callplan.closure_text(doc, consumes, "    ")
                                      + "    return vjp_fn\n",
                              {"_s2s_bwd": bwd, "_s2s_copy": copy.deepcopy})
    callplan.shows(made, source)
    # (what callplan's quick call writes in its own body, one call less)
    made.__s2s_ad_closure__ = (bwd, consumes, doc, source)
    return made


_pullback_sources = callplan.pullback_sources


def _vjp_fn(tape, bwd: Callable, captured: int, doc: str, source: str) -> Callable:
    """The cotangents from one saved forward pass (its ``tape``), the last
    ``captured`` ones (a closure's data) left out."""
    # The backward pass pops loop tapes and restores arrays written in
    # place: each call gets its own copy of what it consumes.
    if _consumed(tape):
        def vjp_fn(cotangent):
            out = bwd(copy.deepcopy(tape), cotangent)
            return out[:len(out) - captured] if captured else out
    elif captured:
        def vjp_fn(cotangent):
            out = bwd(tape, cotangent)
            return out[:len(out) - captured]
    else:
        def vjp_fn(cotangent):
            return bwd(tape, cotangent)

    vjp_fn.__doc__ = doc
    vjp_fn.__s2s_ad_source__ = source
    return vjp_fn


def _consumed(tape) -> bool:
    """Does a backward pass change ``tape``: lists it pops, arrays it restores?"""
    cls = tape.__class__
    if cls is tuple:
        for t in tape:
            c = t.__class__
            if c is not float and c is not int and c is not bool and _consumed(t):
                return True
        return False
    if cls is float or cls is int or cls is bool:
        return False
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
        made = _pullback_sources.get(getattr(compiled, "__code__", None))
        if made is not None:
            return made
        inner = getattr(compiled, "__wrapped__", None)
        if inner is not None:  # (a vjp_fn checking its cotangent's shape)
            return source_of(inner)
        if getattr(compiled, "__s2s_ad_by_shape__", False):
            raise TypeError(f"{compiled.__name__} is generated per list length: call it first "
                            "(source_of then shows the code of the last shape used), or use "
                            "gradient_source(fn, lengths=...)") from None
        raise TypeError(f"{compiled!r} was not generated by s2s-ad") from None


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
    func, code = gradient_code(fn, wrt, output, lengths, arrays)
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
    func, code = gradient_code(fn, wrt, output, lengths, arrays)
    return explain_text(func, code)


@accepting
def jvp(fn: Callable, wrt: Wrt = None, *, lengths: dict | None = None) -> Callable:
    """Return ``fn``'s Jacobian-vector product, generated in forward mode.

    Parameters
    ----------
    fn : function
        A Python function in the supported subset (numbers or NumPy arrays).
    wrt : int, str, sequence of them, or None
        The parameters that get a tangent; None (the default) means every
        parameter not used as an integer.
    lengths : dict, optional
        As for :func:`grad`.

    Returns
    -------
    function
        ``jvp_fn(*args, d<param>=...)`` takes ``fn``'s arguments and, as
        keyword-only arguments, the tangent of each ``wrt`` parameter (named
        ``d`` + its name: ``dx`` for ``x``; 1.0 by default for a number,
        required for an array). It returns ``(value, tangent)``: ``fn``'s
        value and its directional derivative along the tangents (for ``fn``
        returning a tuple, a tuple of each). One pass, no tape.

    Examples
    --------
    >>> import math
    >>> def f(x, y):
    ...     return x * math.sin(y)
    >>> jvp(f)(2.0, 0.0, dx=1.0, dy=0.5)     # doctest: +SKIP
    (0.0, 1.0)
    """
    return transform(fn, wrt, "jvp", None, lengths)


# the derivatives built on these, taking functools.partial targets too
hvp = accepting(hessians.hvp)
hessian = accepting(hessians.hessian)
jacfwd = accepting(jacobians.jacfwd)
jacrev = accepting(jacobians.jacrev)
jacobian = accepting(jacobians.jacobian)
