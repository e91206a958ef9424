"""Tangents and cotangents of the wrong shape, refused by name.

Contract: :func:`jvp_checked` wraps a generated JVP so that each tangent
keyword (``dW=``) given for a parameter of NumPy code (lowered as an array:
it may receive an array or a number) must have that argument's shape, and
:func:`cotangent_checked` wraps a ``vjp_fn`` whose value is not a Python
number (an array, a NumPy scalar; each item of a tuple or list) so that its
cotangent must have the value's shape (a number given for a NumPy array
value is that number at each element); anything else raises ``ValueError``
naming the tangent, its shape and the shape expected, as JAX does.
Broadcasting them is not a JVP or VJP along any direction: NumPy code reads
a tangent as it is given (``np.sum(dW)`` of a ``(3,)`` tangent for a ``(2,
3)`` parameter counts three elements, not the six the broadcast direction
has), and a backward pass seeded with a cotangent of another shape gives
cotangents of other shapes (its ``unbroadcast`` sums them to the
parameter's). Code of Python numbers computes element by element, so there
an array of directions (``dx=np.array([1.0, 0.0])``, a cotangent array for
a float value) gives one JVP or VJP per direction, as it always has. Lists,
dicts and other structures are not checked here (a tangent list's length is
checked where its list is read).
"""

from __future__ import annotations

from typing import Callable

import numpy

_NUMBERS = (float, int, bool, complex)


def shape_of(x) -> tuple | None:
    """``x``'s shape: ``()`` for a number, ``x.shape`` for an array (NumPy,
    torch, Dask); None for anything else (a list, a structure, None)."""
    if x.__class__ in _NUMBERS:
        return ()
    shape = getattr(x, "shape", None)
    if shape is None or isinstance(x, (list, tuple, dict)):
        return None
    try:
        return tuple(shape)
    except TypeError:
        return None


def _differ(got: tuple | None, want: tuple | None) -> bool:
    """Do two shapes known here differ? A length not known yet (Dask's nan)
    matches any."""
    if got is None or want is None or got == want:
        return False
    return len(got) != len(want) or any(a != b and a == a and b == b
                                        for a, b in zip(got, want))


def jvp_checked(compiled: Callable, params: list, tangents: dict, name: str) -> Callable:
    """``compiled`` (the JVP of ``name``), each tangent keyword of a number or
    array parameter checked to have its argument's shape; ``params`` the
    parameters' values (``ir.Value``, in order), ``tangents`` their names ->
    their tangent keywords."""
    checks = [(k, p.var, tangents[p.name]) for k, p in enumerate(params)
              if p.kind == "array" and p.name in tangents]
    if not checks:
        return compiled

    def call(*args, **kwargs):
        if kwargs:
            for at, var, t in checks:
                d = kwargs.get(t)
                if d is None:
                    continue
                v = args[at] if at < len(args) else kwargs.get(var)
                got, want = shape_of(d), shape_of(v)
                if _differ(got, want):
                    raise ValueError(f"{name}: the tangent {t}= has shape {got} where the "
                                     f"argument {var} has shape {want}: give a tangent of "
                                     "its argument's shape (a tangent is not broadcast)")
        return compiled(*args, **kwargs)

    return _like(call, compiled)


def cotangent_checked(name: str, value, pull: Callable) -> Callable:
    """``pull`` (the ``vjp_fn`` of ``name`` at a call whose value is
    ``value``), its cotangent checked to have the value's shape; a number
    given for a NumPy array value (or for an array item of a returned tuple)
    is that number at each of its elements, as ``grad``'s seed ``dout`` is
    (the backward pass reads the cotangent as having the value's shape:
    given a number, it summed it once where the value had broadcast a
    number, ``a * 2.0 + x``)."""
    if isinstance(value, (tuple, list)):
        if all(v.__class__ in _NUMBERS for v in value):
            return pull
        want: object = [shape_of(v) for v in value]
        fill = [_filling(v) for v in value] if value.__class__ is tuple else None
    elif value.__class__ in _NUMBERS:
        return pull
    else:
        want = shape_of(value)
        fill = _filling(value)
    if want is None:
        return pull

    def vjp_fn(cotangent):
        if isinstance(fill, list):
            if isinstance(cotangent, (list, tuple)) and len(cotangent) == len(fill):
                cotangent = tuple(_filled(c, f) for c, f in zip(cotangent, fill))
        elif fill is not None:
            cotangent = _filled(cotangent, fill)
        _check_cotangent(name, cotangent, want)
        return pull(cotangent)

    vjp_fn.__doc__ = pull.__doc__
    vjp_fn.__wrapped__ = pull  # (source_of reads the source of the vjp_fn it checks)
    return vjp_fn


def _filling(value) -> tuple | None:
    """(shape, dtype) of a NumPy array value of at least one axis, which a
    number cotangent fills; None for anything else."""
    if value.__class__ is numpy.ndarray and value.ndim:
        return value.shape, value.dtype
    return None


def _filled(cotangent, fill: tuple | None):
    """``cotangent``, a number spread over ``fill``'s shape (in the dtype
    NumPy gives the number and the value's dtype)."""
    if fill is None or numpy.ndim(cotangent) != 0:
        return cotangent
    shape, dtype = fill
    return numpy.full(shape, cotangent, dtype=numpy.result_type(cotangent, dtype))


def _check_cotangent(name: str, cotangent, want) -> None:
    if isinstance(want, list):
        if isinstance(cotangent, (tuple, list)) and len(cotangent) == len(want):
            for k, (c, w) in enumerate(zip(cotangent, want)):
                if _differ(shape_of(c), w):
                    raise ValueError(f"vjp_fn of {name}: the cotangent of item {k} of the "
                                     f"value has shape {shape_of(c)} where that item has "
                                     f"shape {w}: give a cotangent of its shape (a cotangent "
                                     "is not broadcast)")
        return
    got = shape_of(cotangent)
    if _differ(got, want):
        raise ValueError(f"vjp_fn of {name}: the cotangent has shape {got} where the value "
                         f"has shape {want}: give a cotangent of the value's shape (a "
                         "cotangent is not broadcast)")


def _like(call: Callable, compiled: Callable) -> Callable:
    """``call`` dressed as ``compiled``: its name, docstring, the attributes
    s2s-ad reads from a generated function, and the code itself as
    ``__wrapped__``."""
    call.__name__, call.__qualname__ = compiled.__name__, compiled.__qualname__
    call.__doc__ = compiled.__doc__
    call.__dict__.update(compiled.__dict__)
    raw = getattr(compiled, "__wrapped__", compiled)
    call.__wrapped__ = raw
    call.__s2s_ad_compiled__ = getattr(compiled, "__s2s_ad_compiled__", raw)
    return call
