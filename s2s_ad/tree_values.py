"""Structures (dicts, lists, tuples, NamedTuples, dataclasses of numbers and
arrays: pytrees) as the values the API's second derivatives and Jacobians
pass around: their leaves in order, zeros of their structure, a structure
rebuilt from new leaves, and blocks nested structure in structure.

The generated code reads and builds these structures itself
(:mod:`s2s_ad.frontend.pytrees`); this module serves the code around it,
which makes tangents and assembles Hessians and Jacobians from many passes:

    >>> leaves, rebuild = flatten({"w": 1.0, "b": [2.0, 3.0]})
    >>> leaves
    [1.0, 2.0, 3.0]
    >>> rebuild([10.0, 20.0, 30.0])
    {'w': 10.0, 'b': [20.0, 30.0]}
    >>> flatten([2.0, 3.0])[0]           # a list parameter of numbers: one leaf
    [[2.0, 3.0]]

A number or an array is a leaf, and so is a list or tuple of numbers given
as a parameter itself (a list parameter: its Hessian block is an array, as
before structures); inside a structure, lists and tuples are taken apart as
JAX takes them (``{"b": [2.0, 3.0]}`` has two leaves). The leaves come
in the order of :func:`s2s_ad.frontend.pytrees.spec_of`: a dict's keys in
its order, a dataclass's or NamedTuple's fields in theirs.
"""

from __future__ import annotations

import dataclasses
import numbers

from s2s_ad.frontend import pytrees

__all__ = ["is_tree", "flatten", "zeros_like", "kind", "mismatch", "shapes_of", "count",
           "unit_like", "nest"]


def _numbers(value) -> bool:
    return all(isinstance(item, numbers.Number) and not isinstance(item, bool)
               for item in value)


def is_tree(value) -> bool:
    """A structure of numbers and arrays other than a list or tuple of numbers."""
    if type(value) in (list, tuple) and _numbers(value):
        return False
    spec = pytrees.spec_of(value)
    return spec is not None and spec != "leaf"


def flatten(value):
    """``(leaves, rebuild)``: ``value``'s leaves in order, and the function
    making a value of the same structure (same keys, fields, classes) from
    as many new leaves. A list or tuple of numbers given whole is one leaf;
    inside a structure every list and tuple is taken apart, as JAX does."""
    if not is_tree(value):
        return [value], _first
    return _node(value)


def _first(leaves):
    return leaves[0]


def _node(value):
    # value is part of a structure spec_of accepted: a leaf is a number or an
    # array; a string, None or bool is static, no leaf, kept as it is
    if value is None or isinstance(value, (str, bool)):
        return [], lambda items: value
    if isinstance(value, numbers.Number) or pytrees._is_array(value):
        return [value], _first
    names = pytrees._fields(value)
    if names is not None:
        parts = [_node(getattr(value, n)) for n in names]
        cls = type(value)
        if isinstance(value, tuple):
            return _join(parts, lambda items: cls(*items))
        return _join(parts, lambda items: cls(**dict(zip(names, items))))
    if isinstance(value, dict):
        keys = list(value)
        return _join([_node(value[k]) for k in keys], lambda items: dict(zip(keys, items)))
    cls = type(value)
    return _join([_node(v) for v in value], lambda items: cls(items))


def _join(parts, make):
    leaves = [leaf for part, _ in parts for leaf in part]
    sizes = [len(part) for part, _ in parts]

    def rebuild(new):
        out, k = [], 0
        for (_, sub), n in zip(parts, sizes):
            out.append(sub(new[k:k + n]))
            k += n
        return make(out)
    return leaves, rebuild


def _leaf_zeros(leaf):
    import numpy as np

    if isinstance(leaf, list):
        return [0.0] * len(leaf)
    if isinstance(leaf, tuple):
        return (0.0,) * len(leaf)
    return np.zeros(np.shape(leaf)) if hasattr(leaf, "shape") else 0.0


def zeros_like(value):
    """Zeros of ``value``'s structure: an array of zeros for an array leaf,
    ``0.0`` for a number, a list of ``0.0`` for a list of numbers."""
    leaves, rebuild = flatten(value)
    return rebuild([_leaf_zeros(leaf) for leaf in leaves])


def count(leaf) -> int:
    """The numbers a leaf holds."""
    import numpy as np

    return len(leaf) if isinstance(leaf, (list, tuple)) else int(np.size(leaf))


def unit_like(leaf, k: int):
    """The ``k``-th unit direction of ``leaf``'s shape: 1.0 for a number, an
    array (list) of zeros but a one at flat position ``k`` otherwise."""
    import numpy as np

    if isinstance(leaf, (list, tuple)):
        e = [0.0] * len(leaf)
        e[k] = 1.0
        return type(leaf)(e)
    if not hasattr(leaf, "shape"):
        return 1.0
    e = np.zeros(int(np.size(leaf)))
    e[k] = 1.0
    return e.reshape(np.shape(leaf))


_LEAF_CLASSES: set = set()  # classes seen to be neither dataclasses nor NamedTuples


def _walk(value, leaf):
    """One walk over ``value``: its classes, keys and fields, with ``leaf(v)``
    at each leaf (hashable when ``leaf`` gives hashable values)."""
    c = value.__class__
    if c is float or c is int or c in _LEAF_CLASSES:
        return leaf(value)
    if c is str or c is bool or value is None:
        return (c, value)  # static: its value decides the code
    if c is dict:
        return (dict, tuple((k, _walk(v, leaf)) for k, v in value.items()))
    if c is list or c is tuple:
        return (c, tuple(_walk(v, leaf) for v in value))
    names = pytrees._fields(value)
    if names is not None:
        return (c, tuple((n, _walk(getattr(value, n), leaf)) for n in names))
    if not dataclasses.is_dataclass(c) and not issubclass(c, tuple):
        _LEAF_CLASSES.add(c)  # (whether a class is a structure is the class's own)
    return leaf(value)


def shapes_of(value):
    """``value``'s structure with each leaf's shape (hashable): two values
    with the same are a value and a direction that fit each other."""
    return _walk(value, _shape)


def _class_and_shape(v):
    return (v.__class__, getattr(v, "shape", None))


def _shape(v):
    import numpy as np

    return np.shape(v)


def kind(value):
    """What decides the code generated for an argument (hashable): its
    class, and for a list, a tuple, a dict or an object its items' and
    fields' classes and shapes, recursively."""
    c = value.__class__
    if c is float or c is int or c is bool:
        return c
    return _walk(value, _class_and_shape)


def mismatch(like, given) -> str | None:
    """Why ``given`` cannot be a direction (a tangent) for ``like``: another
    structure (keys, fields, class, length) or a leaf of another shape; None
    when it can."""
    import numpy as np

    if _walk(like, _shape) == _walk(given, _shape):
        return None  # the same structure and shapes (one walk each)
    if is_tree(like) or is_tree(given):
        if pytrees.spec_of(like) != pytrees.spec_of(given):
            return (f"a {type(given).__name__} of another structure than the "
                    f"{type(like).__name__} it goes with (keys, fields, classes and lengths "
                    "must be the same)")
    a, _ = flatten(like)
    b, _ = flatten(given)
    for k, (x, y) in enumerate(zip(a, b)):
        if np.shape(x) != np.shape(y):
            where = f"leaf {k}" if len(a) > 1 else "it"
            return f"{where} has shape {np.shape(y)}, not {np.shape(x)}"
    return None


def nest(outer, inner, block):
    """``outer``'s structure whose leaf ``i`` is ``inner``'s structure whose
    leaf ``j`` is ``block(i, j)``: a Hessian or Jacobian block between two
    structures, shaped as ``jax.hessian`` returns it (``{k1: {k2: ...}}``)."""
    outer_leaves, outer_rebuild = flatten(outer)
    inner_leaves, inner_rebuild = flatten(inner)
    return outer_rebuild([inner_rebuild([block(i, j) for j in range(len(inner_leaves))])
                          for i in range(len(outer_leaves))])
