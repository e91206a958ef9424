"""Hessian-vector products and Hessians: ``hvp(f)(x, v)`` is one pass of one
generated module, the gradient of ``f``'s forward-mode (JVP) module along
``v`` (:mod:`s2s_ad.higher` makes and caches the generated functions);
``hessian(f)`` runs one such product per element of the ``wrt`` parameters.

    hvp(f)(x, v)   = ∇_x [ jvp_f(x, dx=v).tangent ]   = H v
    hessian(f)(x)  = [H e_k for each k], blocks as jax.hessian returns them
"""

from __future__ import annotations

from typing import Callable

from s2s_ad import callplan, signatures, tree_values
from s2s_ad.higher import (SECOND, _captured, _chosen, _concrete, _kinds, _not_second,
                           _signature, _tangent_names, _zero_like)
from s2s_ad.pipeline import Wrt, several_values

__all__ = ["hvp", "hessian"]


def hvp(fn: Callable, wrt: Wrt = 0) -> Callable:
    """Return ``hvp_fn(*args, v)``: the Hessian of ``fn`` with respect to
    ``wrt`` times ``v``, in one pass of one generated module (the gradient of
    ``fn``'s forward-mode module along ``v``), never a full Hessian.

    ``v`` is the last positional argument, shaped like the gradient: one
    number or array for a single ``wrt`` parameter, a tuple for a sequence;
    for a structure parameter (dict, list, tuple, NamedTuple, dataclass) a
    value of its structure. The result has the same shape. ``fn`` may use loops, branches, helpers,
    lists and NumPy, as for :func:`s2s_ad.grad`; keyword arguments go to ``fn``.

    Examples
    --------
    >>> def f(x, y):
    ...     return x * x * y
    >>> hvp(f, wrt=("x", "y"))(1.0, 2.0, (1.0, 0.0))   # doctest: +SKIP
    (4.0, 2.0)
    """
    _not_second(fn)
    memo: dict = {}
    held = _captured(fn)

    def hessian_vector(*args, **kwargs):
        if held is not None:
            kwargs = {**held(), **kwargs}
        if not kwargs:
            # the kinds of the last call's arguments, tested in one generated function
            fast = memo.get("fast")
            if fast is not None and len(args) == fast[0]:
                out = fast[1](*args)
                if out is not _MISS:
                    return out
        if not args:
            raise TypeError("hvp_fn(*args, v): v, the direction, is the last positional argument")
        primals, v = args[:-1], args[-1]
        if not kwargs:
            # arguments of kinds seen before: the product found then, without
            # binding them (s2s_ad.callplan.kinds: classes, list lengths, ndim)
            quick = _quick_kinds(primals)
            known = memo.get(("quick", quick)) if quick is not None else None
            if known is not None:
                directions = [v] if not known[1] else list(v) \
                    if v.__class__ in (tuple, list) else None
                if directions is not None:
                    _check_shapes(fn, primals, kwargs, known[0], known[3], directions)
                    return known[2](primals, kwargs, directions)
        return _hvp_call(fn, wrt, primals, kwargs, v, memo)

    hessian_vector.__name__ = "hvp_" + getattr(fn, "__name__", "fn")
    hessian_vector.__s2s_ad_origin__ = SECOND
    return hessian_vector


def _hvp_call(fn, wrt, primals, kwargs, v, memo: dict):
    found = _hvp_function(fn, wrt, primals, kwargs, memo)
    directions = list(v) if found[1] else [v]
    _check_shapes(fn, primals, kwargs, found[0], found[3], directions)
    if found[3]:
        _check_directions(fn, primals, kwargs, found[0], found[3], directions)
    quick = _quick_kinds(primals) if not kwargs else None
    if quick is not None:
        # the next call with arguments of these kinds skips the lookups above
        memo["quick", quick] = found
        positions = [next((k for k, p in enumerate(primals)
                           if p is _argument(fn, primals, kwargs, n)), None) for n in found[0]]
        memo["fast"] = (len(primals) + 1, _fast_product(quick, found, positions))
    return found[2](primals, kwargs, directions)


_MISS = object()


def _quick_kinds(args: tuple):
    """:func:`s2s_ad.callplan.kinds` of ``args``, or None where one is a
    static value (a bool, a string, None): its code is chosen by the value
    (:func:`s2s_ad.higher._kinds`), which the quick test of classes does not see."""
    if any(a is None or a.__class__ is bool or a.__class__ is str for a in args):
        return None
    return callplan.kinds(args)


def _fast_product(key: tuple, found, positions: list) -> Callable:
    """``fast(*primals, v)``: the product of ``found`` (see _hvp_function)
    for primals of the kinds ``key`` (:func:`s2s_ad.callplan.kinds`) and a
    direction of the right parts, passed straight to the generated gradient
    of the JVP module, its tangents by keyword; ``_MISS`` for any other call
    (which goes the long way, where a wrong ``v`` is worded)."""
    _, many, product, _ = found
    second, tangents = product.gradient, product.tangents
    params = [f"_s2s_a{i}" for i in range(len(key))]
    space = {"_s2s_second": second, "_s2s_miss": _MISS}
    tests = signatures.kind_tests(params, key, space)
    unpack = ""
    if many:
        tests.append(f"(_s2s_v.__class__ is tuple or _s2s_v.__class__ is list) "
                     f"and len(_s2s_v) == {len(tangents)}")
        # the parts unpacked once (not a subscript per test and per keyword)
        parts = [f"_s2s_p{j}" for j in range(len(tangents))]
        unpack = f"        {''.join(p + ', ' for p in parts)}= _s2s_v\n"
    else:
        parts = ["_s2s_v"]
    passed = ", ".join(f"{t}={p}" for t, p in zip(tangents, parts))
    checked = []
    # each part shaped like its parameter (another goes the long way, which words it)
    for part, k in zip(parts, positions):
        kind = key[k] if k is not None else None
        if kind is None:
            continue
        if kind.__class__ is tuple and kind[0] in (list, tuple):  # a list of numbers
            checked.append(f"({part}.__class__ is list or {part}.__class__ is tuple) "
                           f"and len({part}) == {kind[1]}")
        elif kind.__class__ is not tuple:  # a number
            checked.append(signatures.number_test(part, space))
        else:  # an array: the same class and shape
            checked.append(f"{part}.__class__ is _s2s_a{k}.__class__ "
                           f"and {part}.shape == _s2s_a{k}.shape")
    text = (f"def fast({''.join(p + ', ' for p in params)}_s2s_v):\n"
            f"    if {' and '.join(f'({t})' for t in tests) or 'True'}:\n"
            + unpack +
            f"        if {' and '.join(f'({t})' for t in checked) or 'True'}:\n"
            f"            return _s2s_second({''.join(p + ', ' for p in params)}{passed})\n"
            f"    return _s2s_miss\n")
    exec(compile(text, "<s2s-ad: hvp of arguments of these kinds>", "exec"), space)
    return space["fast"]


def _check_shapes(fn, primals, kwargs, names, trees, directions) -> None:
    """A direction for a number or array parameter has its shape (the
    generated code would fail inside on a tuple, or broadcast another
    shape): refused here, in words. (``v`` split in parts for several
    parameters first; the product checks their count.)"""
    import numpy as np

    for name, d in zip(names, directions):
        point = _argument(fn, primals, kwargs, name)
        if name in trees:
            continue
        if isinstance(point, (list, tuple)):  # a list of numbers: a direction of its length
            if not hasattr(d, "__len__") or len(d) != len(point):
                raise ValueError(f"hvp_{getattr(fn, '__name__', 'fn')}: the direction for "
                                 f"{name!r} is {d!r:.40}, {name!r} a {type(point).__name__} "
                                 f"of {len(point)}: give a list of its length")
            continue
        if isinstance(d, (list, tuple)) or np.shape(d) != np.shape(point):
            what = f"a {type(d).__name__}" if isinstance(d, (list, tuple)) else \
                f"of shape {np.shape(d)}"
            raise ValueError(f"hvp_{getattr(fn, '__name__', 'fn')}: the direction for {name!r} "
                             f"is {what}, {name!r} of shape {np.shape(point)}: give v shaped "
                             "like the gradient (one value per wrt parameter, a tuple of them "
                             "for several)")


def _check_directions(fn, primals, kwargs, names, trees, directions) -> None:
    """A direction for a structure parameter has its structure (keys, fields,
    classes, lengths) and its leaves' shapes: the generated code reads it leaf
    by leaf, so another structure is refused here, in words. ``trees``: the
    structure parameters' :func:`~s2s_ad.tree_values.shapes_of` (decided by
    the arguments' kinds)."""
    for name, d in zip(names, directions):
        if name not in trees or tree_values.shapes_of(d) == trees[name]:
            continue
        why = tree_values.mismatch(_argument(fn, primals, kwargs, name), d)
        if why is not None:
            raise ValueError(f"hvp_{getattr(fn, '__name__', 'fn')}: the direction for "
                             f"{name!r} is {why}")


def _hvp_function(fn, wrt, primals, kwargs, memo: dict):
    """The ``wrt`` names, whether they make a tuple, and
    ``product(primals, kwargs, directions)``: H·v by the generated gradient
    of the JVP module (found once per kinds of the arguments)."""
    key = ("hvp", _kinds(primals, kwargs))
    known = memo.get(key)
    if known is not None:
        return known
    names, many = _chosen(fn, wrt, primals, kwargs, memo=memo)
    forward = _concrete(fn, names, "jvp", None, primals, kwargs, memo=memo)
    tangents = _tangent_names(forward, len(names))
    probe = {**kwargs, **{t: _zero_like(_argument(fn, primals, kwargs, n))
                          for t, n in zip(tangents, names)}}
    _one_number(fn, forward, primals, probe)
    second = _concrete(forward, tuple(names) if many else names[0], "grad", 1, primals, probe,
                       memo=memo)

    n = len(names)

    def product(args, keywords, directions):
        if len(directions) != n:
            raise ValueError(f"v has {len(directions)} part(s); the gradient has {n}")
        if keywords:
            return second(*args, **keywords, **dict(zip(tangents, directions)))
        return second(*args, **dict(zip(tangents, directions)))
    product.gradient, product.tangents = second, tangents  # what _fast_product passes on
    points = {n: _argument(fn, primals, kwargs, n) for n in names}
    trees = {n: tree_values.shapes_of(p) for n, p in points.items() if tree_values.is_tree(p)}
    known = memo[key] = (names, many, product, trees)
    return known


def _one_number(fn, forward, primals, probe) -> None:
    """Refuse, naming ``fn``, a function returning a tuple or list: its
    Hessian would be one per item (the gradient of the JVP module, whose value
    is the tuple, was refused inside that module's code)."""
    value = forward(*primals, **probe)[0]
    if isinstance(value, (tuple, list)):
        raise several_values(getattr(fn, "__name__", "fn"), len(value))


def _argument(fn, args, kwargs, name):
    return _arguments(fn, args, kwargs, [name])[0]


def _arguments(fn, args, kwargs, names) -> list:
    """The values ``fn``'s parameters ``names`` receive in a call (defaults
    applied), from one binding of the arguments."""
    sig = _signature(fn)
    bound = sig.bind(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
    bound.apply_defaults()
    return [bound.arguments[n] for n in names]


def hessian(fn: Callable, wrt: Wrt = 0) -> Callable:
    """Return a function computing ``fn``'s Hessian: one :func:`hvp` pass per
    element of the ``wrt`` parameters. For one parameter: a number for a
    number, an array of shape ``s + s`` for an array of shape ``s``. For a
    sequence ``wrt``: a tuple of tuples, block ``[i][j]`` the second
    derivatives with respect to parameters ``i`` and ``j`` (shape
    ``shape(i) + shape(j)``), as ``jax.hessian`` returns. A structure
    parameter (dict, list, tuple, NamedTuple, dataclass) gives its structure
    nested in itself, as ``jax.hessian``: ``H["W"]["b"]`` has shape
    ``shape(W) + shape(b)`` (:func:`s2s_ad.tree_values.nest`)."""
    _not_second(fn)
    memo: dict = {}
    held = _captured(fn)

    def full(*args, **kwargs):
        if held is None and not kwargs:
            # the kinds of the last call's arguments, tested in one generated function
            fast = memo.get("hessian fast")
            if fast is not None and len(args) == fast[0]:
                out = fast[1](*args)
                if out is not _MISS:
                    return out
        plain = held is None and not kwargs
        if held is not None:
            kwargs = {**held(), **kwargs}
        found = _hvp_function(fn, wrt, args, kwargs, memo)
        names, many, product, _ = found
        points = _arguments(fn, args, kwargs, names)
        if all(p.__class__ in (float, int) for p in points):
            # numbers: column j is H·e_j, a tuple of numbers
            n = len(names)
            columns = [product(args, kwargs, [float(i == j) for i in range(n)])
                       for j in range(n)]
            quick = _quick_kinds(args) if plain else None
            if quick is not None:
                # the next call with arguments of these kinds: the same products, unrolled
                memo["hessian fast"] = (len(args), _fast_hessian(quick, found))
            if not many:
                return float(columns[0])
            return tuple(tuple(float(columns[j][i]) for j in range(n)) for i in range(n))
        blocks = _blocks(points, lambda direction: product(args, kwargs, direction)
                         if many else (product(args, kwargs, direction),))
        if not many:
            return blocks[0][0]
        return tuple(tuple(row) for row in blocks)

    full.__name__ = "hessian_" + getattr(fn, "__name__", "fn")
    full.__s2s_ad_origin__ = SECOND
    return full


def _fast_hessian(key: tuple, found) -> Callable:
    """``fast(*args)``: the Hessian between number parameters as the slow
    path computes it (one product per parameter, its seed 1.0 and the others
    0.0), the generated gradient of the JVP module called once per column
    with no binding of the arguments, for arguments of the kinds ``key``
    (:func:`s2s_ad.callplan.kinds`); ``_MISS`` for any other call."""
    _, many, product, _ = found
    second, tangents = product.gradient, product.tangents
    params = [f"_s2s_a{i}" for i in range(len(key))]
    space = {"_s2s_second": second, "_s2s_miss": _MISS, "_s2s_float": float}
    tests = signatures.kind_tests(params, key, space)
    given = "".join(p + ", " for p in params)
    n = len(tangents)
    lines = [f"def fast({', '.join(params)}):",
             f"    if {' and '.join(f'({t})' for t in tests) or 'True'}:"]
    for j in range(n):
        seeds = ", ".join(f"{t}={1.0 if k == j else 0.0}" for k, t in enumerate(tangents))
        lines.append(f"        _s2s_c{j} = _s2s_second({given}{seeds})")
    if not many:
        lines.append("        return _s2s_float(_s2s_c0)")
    else:
        rows = ", ".join("(" + "".join(f"_s2s_float(_s2s_c{j}[{i}]), " for j in range(n)) + ")"
                         for i in range(n))
        lines.append(f"        return ({rows},)")
    lines.append("    return _s2s_miss")
    exec(compile("\n".join(lines) + "\n", "<s2s-ad: hessian of arguments of these kinds>",
                 "exec"), space)
    return space["fast"]


def _blocks(points: list, hvp_of) -> list[list]:
    """The Hessian's blocks between the ``points`` (the ``wrt`` arguments):
    one ``hvp_of(direction)`` per number of every leaf, the columns stacked
    per pair of leaves (shape ``shape(row leaf) + shape(column leaf)``; a
    number between two numbers), nested as the parameters' structures."""
    import numpy as np

    flat = [tree_values.flatten(p)[0] for p in points]
    zeros = [tree_values.zeros_like(p) for p in points]
    # parts[i][a][j][b]: the block between leaf a of point i and leaf b of point j
    parts = [[[[None] * len(fb) for fb in flat] for _ in fa] for fa in flat]
    for j, p in enumerate(points):
        leaves, rebuild = tree_values.flatten(p)
        for b, leaf in enumerate(leaves):
            columns = []
            for k in range(tree_values.count(leaf)):
                moved = [tree_values.zeros_like(item) for item in leaves]
                moved[b] = tree_values.unit_like(leaf, k)
                direction = list(zeros)
                direction[j] = rebuild(moved)
                columns.append([tree_values.flatten(c)[0] for c in hvp_of(direction)])
            for i, q in enumerate(flat):
                for a, row_leaf in enumerate(q):
                    cells = [np.asarray(c[i][a], dtype=float) for c in columns]
                    if _number(row_leaf) and _number(leaf):
                        block = float(cells[0])
                    elif _number(leaf):
                        block = cells[0]
                    else:
                        block = np.stack(cells, axis=-1).reshape(
                            np.shape(row_leaf) + np.shape(leaf))
                    parts[i][a][j][b] = block
    return [[tree_values.nest(points[i], points[j], lambda a, b, i=i, j=j: parts[i][a][j][b])
             for j in range(len(points))] for i in range(len(points))]


def _number(leaf) -> bool:
    """A number (not a 0-d array, not a list): its blocks are numbers."""
    return not hasattr(leaf, "shape") and not isinstance(leaf, (list, tuple))
