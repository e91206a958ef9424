"""Jacobians: ``jacfwd`` (one JVP per input element), ``jacrev`` (one
backward pass per output element, from one forward pass) and ``jacobian``
(whichever needs fewer passes). All return ``shape(value) + shape(param)``."""

from __future__ import annotations

import copy
import inspect
from typing import Callable

from s2s_ad.cache import array_arguments, generated, positional_names, shapes
from s2s_ad.higher import _chosen, _zero_like, refuse_structures, transform
from s2s_ad.pipeline import Wrt

__all__ = ["jacfwd", "jacrev", "jacobian"]

def jacfwd(fn: Callable, wrt: Wrt = 0, *, lengths: dict | None = None) -> Callable:
    """Return a function computing ``fn``'s Jacobian in forward mode: one
    JVP pass per input direction (per element of each ``wrt`` parameter).

    ``wrt`` as for :func:`s2s_ad.grad` (default 0). The Jacobian with respect
    to a parameter has shape ``shape(value) + shape(parameter)`` (a number
    for a number-valued ``fn`` of a number); a sequence ``wrt`` gives a tuple.
    """
    import numpy as np

    sig = inspect.signature(fn)
    names = list(sig.parameters)
    one = wrt is not None and not isinstance(wrt, (list, tuple))
    chosen = names if wrt is None else [wrt] if one else list(wrt)
    chosen = [names[w] if isinstance(w, int) and not isinstance(w, bool) and -len(names) <= w
              < len(names) else w for w in chosen]
    forward = transform(fn, chosen, "jvp", None, lengths)

    def jacobian_fwd(*args, **kwargs):
        refuse_structures(fn, args, kwargs, "`jacfwd`")
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        points = [bound.arguments[n] for n in chosen]
        tangent_names = _forward_tangents(forward, fn, chosen)
        zeros = {t: _zero_like(p) for t, p in zip(tangent_names, points)}
        out = []
        for t, p in zip(tangent_names, points):
            if not isinstance(p, np.ndarray):
                out.append(forward(*args, **kwargs, **{**zeros, t: 1.0})[1])
                continue
            columns = []
            for k in range(p.size):
                basis = np.zeros(p.size)
                basis[k] = 1.0
                columns.append(np.asarray(forward(*args, **kwargs,
                                                  **{**zeros, t: basis.reshape(p.shape)})[1]))
            stacked = np.stack(columns, axis=-1)
            out.append(stacked.reshape(np.shape(columns[0]) + p.shape))
        return out[0] if one else tuple(out)

    return jacobian_fwd


def _forward_tangents(forward: Callable, fn: Callable, chosen: list[str]) -> list[str]:
    names = getattr(forward, "__s2s_ad_tangents__", None)
    if names is not None:
        return [names[c] for c in chosen]
    return list(inspect.signature(forward).parameters)[-len(chosen):]


def jacrev(fn: Callable, wrt: Wrt = 0) -> Callable:
    """Return a function computing ``fn``'s Jacobian in reverse mode: one
    backward pass of :func:`s2s_ad.vjp` per element of the output, from one
    forward pass. Shapes as for :func:`jacfwd`: ``shape(value) +
    shape(parameter)``; a sequence ``wrt`` gives a tuple. A number-valued
    ``fn`` needs one backward pass: its gradient."""
    import numpy as np

    sig = inspect.signature(fn)
    names = list(sig.parameters)
    one = wrt is not None and not isinstance(wrt, (list, tuple))
    memo: dict = {}

    def jacobian_rev(*args, **kwargs):
        chosen, many = _chosen(fn, wrt, args, kwargs, memo=memo)
        positions = [names.index(c) for c in chosen]
        value, backward = _vjp(fn, args, kwargs)
        if isinstance(value, (tuple, list)):
            rows = []
            for k in range(len(value)):
                e = [0.0] * len(value)
                e[k] = 1.0
                rows.append(backward(e))
            out = []
            for i in positions:
                parts = [r[i] for r in rows]
                out.append(tuple(parts) if np.ndim(parts[0]) == 0 and not isinstance(
                    parts[0], (list, tuple)) else np.stack([np.asarray(x) for x in parts]))
        elif np.ndim(value) == 0:
            ct = backward(1.0)
            out = [ct[i] for i in positions]
        else:
            shape = np.shape(value)
            rows = []
            for k in range(int(np.prod(shape))):
                e = np.zeros(int(np.prod(shape)))
                e[k] = 1.0
                rows.append(backward(e.reshape(shape)))
            out = [np.stack([np.asarray(r[i], dtype=float) for r in rows]).reshape(
                shape + np.shape(rows[0][i])) for i in positions]
        return out[0] if not many and one else tuple(out) if many else out[0]

    return jacobian_rev


def _vjp(fn: Callable, args: tuple, kwargs: dict):
    """``fn``'s value and a function from an output cotangent to the
    cotangents of every parameter (as :func:`s2s_ad.vjp`)."""
    fwd, bwd = generated(fn, None, "pair", None, shapes(fn, args, kwargs),
                         array_arguments(positional_names(fn), args, kwargs))
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    value, tape = fwd(*bound.arguments.values())
    return value, lambda cotangent: bwd(copy.deepcopy(tape), cotangent)


def jacobian(fn: Callable, wrt: Wrt = 0) -> Callable:
    """Return a function computing ``fn``'s Jacobian, in forward mode
    (:func:`jacfwd`) when the ``wrt`` parameters have no more elements than
    the output, in reverse mode (:func:`jacrev`) otherwise; the same shapes
    either way. The output's size comes from one call of ``fn``."""
    import numpy as np

    forward, reverse = jacfwd(fn, wrt), jacrev(fn, wrt)
    sig = inspect.signature(fn)
    memo: dict = {}

    def jacobian_auto(*args, **kwargs):
        chosen, _ = _chosen(fn, wrt, args, kwargs, memo=memo)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        inputs = sum(len(a) if isinstance(a, (list, tuple)) else int(np.size(a))
                     for a in (bound.arguments[c] for c in chosen))
        value = fn(*args, **kwargs)
        outputs = len(value) if isinstance(value, (list, tuple)) else int(np.size(value))
        return (forward if inputs <= outputs else reverse)(*args, **kwargs)

    jacobian_auto.__name__ = "jacobian_" + getattr(fn, "__name__", "fn")
    return jacobian_auto
