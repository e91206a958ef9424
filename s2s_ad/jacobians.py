"""Jacobians: ``jacfwd`` (one JVP per input element), ``jacrev`` (one
backward pass per output element, from one forward pass) and ``jacobian``
(whichever needs fewer passes). All return ``shape(value) + shape(param)``;
for a value that is a tuple holding arrays (a gradient with respect to
several arrays), a tuple of blocks, one per item, ``shape(item) +
shape(param)``."""

from __future__ import annotations

import copy
import inspect
from typing import Callable

from s2s_ad.cache import array_arguments, generated, positional_names, shapes
from s2s_ad import tree_values
from s2s_ad.frontend import targets
from s2s_ad.higher import (_call_statics, _chosen, _concrete, _static_origin, _zero_like,
                            origin, transform, vjp_of)
from s2s_ad.pipeline import Wrt

__all__ = ["jacfwd", "jacrev", "jacobian"]

def jacfwd(fn: Callable, wrt: Wrt = 0, *, lengths: dict | None = None) -> Callable:
    """Return a function computing ``fn``'s Jacobian in forward mode: one
    JVP pass per input direction (per element of each ``wrt`` parameter).

    ``wrt`` as for :func:`s2s_ad.grad` (default 0). The Jacobian with respect
    to a parameter has shape ``shape(value) + shape(parameter)`` (a number
    for a number-valued ``fn`` of a number); a sequence ``wrt`` gives a tuple.
    """
    sig = inspect.signature(fn)
    names = list(sig.parameters)
    one = wrt is not None and not isinstance(wrt, (list, tuple))
    chosen = names if wrt is None else [wrt] if one else list(wrt)
    chosen = [names[w] if isinstance(w, int) and not isinstance(w, bool) and -len(names) <= w
              < len(names) else w for w in chosen]
    forward = transform(fn, chosen, "jvp", None, lengths, jacobian=True)
    memo: dict = {}

    def jacobian_fwd(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        points = [bound.arguments[n] for n in chosen]
        tangent_names = _forward_tangents(forward, fn, chosen)
        if getattr(forward, "__s2s_ad_by_shape__", False) \
                or getattr(forward, "__s2s_ad_statics__", None) is not None:
            # generated per structure (or list length, or static value): the
            # tangents' names are those of the code for these arguments
            tangent_names = _forward_tangents(
                _concrete(fn, chosen, "jvp", None, args, kwargs, lengths, memo=memo), fn, chosen)
        zeros = {t: _zero_like(p) for t, p in zip(tangent_names, points)}
        out = []
        for t, p in zip(tangent_names, points):
            if tree_values.is_tree(p):
                # a structure: each leaf's Jacobian as for a parameter of its
                # own, in the structure (jax.jacfwd's layout)
                leaves, rebuild = tree_values.flatten(p)
                moved = [tree_values.zeros_like(leaf) for leaf in leaves]
                blocks = []
                for b, leaf in enumerate(leaves):
                    def along(direction, b=b):
                        return forward(*args, **kwargs, **{**zeros, t: rebuild(
                            moved[:b] + [direction] + moved[b + 1:])})[1]
                    blocks.append(_columns(along, leaf))
                out.append(rebuild(blocks))
                continue
            out.append(_columns(lambda direction: forward(*args, **kwargs,
                                                          **{**zeros, t: direction})[1], p))
        return out[0] if one else tuple(out)

    return jacobian_fwd


def _columns(along: Callable, p):
    """The Jacobian with respect to one number or array ``p`` from
    ``along(direction)``, the tangent along a direction of ``p``'s shape:
    shape ``shape(tangent) + shape(p)``."""
    import numpy as np

    if not isinstance(p, (np.ndarray, list, tuple)):
        return along(1.0)
    columns = [along(tree_values.unit_like(p, k)) for k in range(tree_values.count(p))]
    if holds_arrays(columns[0]):
        # a tuple of arrays (the gradient with respect to several arrays): one
        # block per item, shape(item) + shape(p)
        return tuple(np.stack([np.asarray(c[i]) for c in columns], axis=-1).reshape(
            np.shape(item) + np.shape(p)) for i, item in enumerate(columns[0]))
    columns = [np.asarray(c) for c in columns]
    stacked = np.stack(columns, axis=-1)
    return stacked.reshape(np.shape(columns[0]) + np.shape(p))


def holds_arrays(value) -> bool:
    """Is ``value`` a tuple or list with an array among its items? Its
    Jacobian is then a tuple of blocks, one per item, where a tuple of
    numbers is stacked as one array."""
    import numpy as np

    return isinstance(value, (tuple, list)) and any(np.ndim(v) for v in value)


def _forward_tangents(forward: Callable, fn: Callable, chosen: list[str]) -> list[str]:
    names = getattr(forward, "__s2s_ad_tangents__", None)
    if names is not None:
        return [names[c] for c in chosen]
    code = getattr(forward, "__s2s_ad_compiled__", forward)  # (a closure's: the code)
    return list(inspect.signature(code).parameters)[-len(chosen):]


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
        chosen, many = _wrt_names(fn, wrt, names, args, kwargs, memo)
        made = vjp_of(fn, args, kwargs)  # a function s2s-ad generated (its gradient, a JVP)
        if made is None:
            value, backward = _vjp(fn, args, kwargs)
        else:
            value, backward = made[1] if made[0] == "made" else _vjp(made[1], args, kwargs)
        positions = [names.index(c) for c in chosen]
        if holds_arrays(value):
            out = _item_blocks(value, backward, positions)
        elif np.ndim(value) == 0 and not isinstance(value, (tuple, list)):
            ct = backward(1.0)
            out = [ct[i] for i in positions]
        else:
            if isinstance(value, (tuple, list)):
                shape, seeds = None, [tree_values.unit_like(list(value), k)
                                      for k in range(len(value))]
            else:
                shape = np.shape(value)
                seeds = [tree_values.unit_like(np.zeros(shape), k)
                         for k in range(int(np.prod(shape)))]
            rows = [backward(e) for e in seeds]
            out = []
            for i in positions:
                leaves, rebuild = tree_values.flatten(rows[0][i])
                out.append(rebuild([_stack([tree_values.flatten(r[i])[0][a] for r in rows],
                                           shape) for a in range(len(leaves))]))
        return out[0] if not many and one else tuple(out) if many else out[0]

    return jacobian_rev


def _item_blocks(value, backward: Callable, positions: list) -> list:
    """For each parameter at ``positions``, the tuple of its Jacobian's blocks
    for each item of ``value`` (a tuple holding arrays), ``shape(item) +
    shape(parameter)``: one backward pass per number of each item, the other
    items' cotangents zeros."""
    import numpy as np

    per_item = []
    for j, item in enumerate(value):
        seeds = [type(value)(tree_values.unit_like(np.zeros(np.shape(item)), k) if q == j
                             else tree_values.zeros_like(other)
                             for q, other in enumerate(value))
                 for k in range(int(np.size(item)))]
        per_item.append([backward(e) for e in seeds])
    out = []
    for i in positions:
        blocks = []
        for item, rows in zip(value, per_item):
            leaves, rebuild = tree_values.flatten(rows[0][i])
            blocks.append(rebuild([_stack([tree_values.flatten(r[i])[0][a] for r in rows],
                                          np.shape(item)) for a in range(len(leaves))]))
        out.append(tuple(blocks))
    return out


def _wrt_names(fn: Callable, wrt: Wrt, names: list, args: tuple, kwargs: dict,
               memo: dict) -> tuple[list[str], bool]:
    """The parameter names ``wrt`` picks and whether a tuple is returned: read
    from ``fn``'s IR (``wrt=None`` leaving out integers), or, for a function
    s2s-ad generated (a gradient, a JVP), from its signature, whose code has no
    integers to leave out (``wrt=None``: its first parameter)."""
    if origin(fn) is None and _static_origin(fn) is None:
        return _chosen(fn, wrt, args, kwargs, memo=memo)
    one = wrt is not None and not isinstance(wrt, (list, tuple))
    picked = [wrt] if one else list(wrt) if wrt is not None else names[:1]
    return [names[w] if isinstance(w, int) else w for w in picked], wrt is not None and not one


def _stack(parts: list, shape):
    """One row per output number: a tuple of numbers for a tuple-valued
    ``fn`` and number parts, else an array of shape ``shape(value) +
    shape(part)``."""
    import numpy as np

    if shape is None:
        if np.ndim(parts[0]) == 0 and not isinstance(parts[0], (list, tuple)):
            return tuple(parts)
        return np.stack([np.asarray(x) for x in parts])
    return np.stack([np.asarray(x, dtype=float) for x in parts]).reshape(
        shape + np.shape(parts[0]))


def _vjp(fn: Callable, args: tuple, kwargs: dict):
    """``fn``'s value and a function from an output cotangent to the
    cotangents of every parameter (as :func:`s2s_ad.vjp`)."""
    fwd, bwd = generated(fn, None, "pair", None, shapes(fn, args, kwargs),
                         array_arguments(positional_names(fn), args, kwargs),
                         _call_statics(fn, args, kwargs))
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    # a closure's captured data follow its own parameters (api.vjp does the same)
    value, tape = fwd(*bound.arguments.values(), *targets.captured_values(fn).values())
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
        chosen, _ = _wrt_names(fn, wrt, list(sig.parameters), args, kwargs, memo)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        inputs = sum(tree_values.count(leaf) for c in chosen
                     for leaf in tree_values.flatten(bound.arguments[c])[0])
        value = fn(*args, **kwargs)
        outputs = sum(int(np.size(v)) for v in value) if isinstance(value, (list, tuple)) \
            else int(np.size(value))
        return (forward if inputs <= outputs else reverse)(*args, **kwargs)

    jacobian_auto.__name__ = "jacobian_" + getattr(fn, "__name__", "fn")
    return jacobian_auto
