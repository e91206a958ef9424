"""Calls to the helpers s2s-ad's own NumPy gradients define, as primitives.

Contract: ``primitive(fn)`` is the rule-table name (:mod:`s2s_ad.rules.own`)
of ``fn`` when ``fn`` is a module-level function whose source is exactly the
text s2s-ad writes for one of its helpers (``unbroadcast``,
``matmul_adjoint``, ``spread``, ``extreme_adjoint``, ``astype_like``; under
the module's name for NumPy), else None; ``call`` lowers a call to it as that
primitive's op. A function of the same name with any other body is the
user's own and is lowered (or refused) like any other. So a gradient module
read back from its file (``s2s-ad grad -o``) is differentiated without
reading the helpers' bodies, which test types and take fast paths outside
the subset.

Before → after::

    dH = matmul_adjoint(dt3, H, W2, 0)      dH = own.matmul_adjoint.0 dt3 H W2
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
import types

from s2s_ad import ir
from s2s_ad.rules.numpy_helpers import HELPERS
from s2s_ad.rules.own import OWN_PRIMS
from s2s_ad.syntax_walk import walk
from s2s_ad import source_text


def primitive(fn) -> str | None:
    """The primitive of s2s-ad's own helper ``fn``, or None."""
    if not isinstance(fn, types.FunctionType):
        return None
    return _known(fn.__code__, fn.__name__, _numpy_names(fn))


def _numpy_names(fn) -> tuple:
    import numpy
    return tuple(sorted(k for k, v in fn.__globals__.items() if v is numpy))


def is_helper(fn, base: str) -> bool:
    """``fn`` is s2s-ad's helper ``base`` (any of :data:`HELPERS`, under its
    name or a generated variant of it), by its exact text."""
    if not isinstance(fn, types.FunctionType) or re.sub(r"_\d+$", "", fn.__name__) != base:
        return False
    return _same_text(fn.__code__, fn.__name__, base, _numpy_names(fn))


def numpy_alias(globals_: dict) -> str | None:
    """The name a module binds NumPy to (``np``), or None."""
    return next((k for k, v in globals_.items()
                 if isinstance(v, types.ModuleType) and v.__name__ == "numpy"), None)


def function_tree(fn) -> ast.FunctionDef | None:
    """The ``def`` of ``fn`` (a function or its code) parsed from its source,
    or None where the source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(source_text.text(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    return tree if isinstance(tree, ast.FunctionDef) else None


def indexed_names(node: ast.AST) -> set[str]:
    """Names ``node`` writes into by index (``y[i] = v``, ``y[i] += v``)."""
    return {t.value.id for n in walk(node) if isinstance(n, (ast.Assign, ast.AugAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}


def generated_module(globals_: dict) -> bool:
    """Does a module define helpers of a NumPy gradient s2s-ad generated (by
    their exact text)?"""
    return any(is_helper(v, k) for k, v in globals_.items()
               if k in ("unbroadcast", "spread", "scatter", "astype_like", "own", "total"))


@functools.lru_cache(maxsize=256)
def _known(code, name: str, aliases: tuple) -> str | None:
    base = re.sub(r"_\d+$", "", name)
    if base not in OWN_PRIMS or not aliases:
        return None
    return OWN_PRIMS[base] if _same_text(code, name, base, aliases) else None


@functools.lru_cache(maxsize=256)
def _same_text(code, name: str, base: str, aliases: tuple) -> bool:
    if base not in HELPERS or not aliases:
        return False
    try:
        text = textwrap.dedent(source_text.text(code)).strip()
    except (OSError, TypeError):
        return False
    own = re.sub(rf"\b{base}\(", f"{name}(", HELPERS[base].strip(), count=1)
    for alias in aliases:
        mine = own.replace("np.", f"{alias}.")
        for other in HELPERS:  # a helper calling another under a generated name
            if other != base:
                mine = re.sub(rf"\b{other}(_\d+)?\(", f"{other}(", mine)
        if re.sub(r"\b(\w+)_\d+\(", r"\1(", text) == re.sub(r"\b(\w+)_\d+\(", r"\1(", mine):
            return True
    return False


def call(lo, prim: str, node: ast.Call, var: str | None, hint: str | None):
    """The op of a call to s2s-ad's own helper (``prim`` from :func:`primitive`)."""
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise lo.src.error(node, f"`{ast.unparse(node.func)}` is called with keywords or "
                           "`*args`; s2s-ad's generated code passes its arguments by position")
    attrs = {}
    given = list(node.args)
    if prim in _AS_OPERATIONS:
        return _as_operations(lo, prim, node, var)
    if prim == "array.setitem":  # assign(y, index, v): the write y[index] = v on a copy
        if len(given) != 3:
            raise lo.src.error(node, f"`{ast.unparse(node.func)}` takes 3 arguments")
        base = lo.expr(given[0])
        if not isinstance(base, ir.Value) or base.kind not in ir.DIFFERENTIABLE:
            raise lo.src.error(given[0], "the array `assign` writes into is not an array")
        target = ast.copy_location(ast.Subscript(given[0], _index(lo, given[1]), ast.Store()),
                                   node)
        return lo.emit_setitem(base, lo.expr(given[2]), target, None, None, var)
    if prim == "own.stacked_part":  # stacked_part(g, (x0, x1, ...), i, how), as s2s-ad writes it
        if len(given) != 4 or not isinstance(given[1], ast.Tuple):
            raise lo.src.error(node, "`stacked_part` takes the adjoint, a tuple of the stacked "
                               "operands, the position and how, as s2s-ad writes them")
        attrs = {"part": _constant(lo, given[2]), "how": _constant(lo, given[3])}
        given = [given[0]] + list(given[1].elts)
    if prim in _CONSTANTS:  # tile_adjoint(g, x, reps): reps a constant, as s2s-ad writes it
        taken, names = _CONSTANTS[prim]
        if len(given) != taken + len(names):
            raise lo.src.error(node, f"`{ast.unparse(node.func)}` takes {taken + len(names)} "
                               "arguments")
        attrs = {n: _constant(lo, a) for n, a in zip(names, given[taken:])}
        given = given[:taken]
        if prim == "own.rolled":  # rolled back by the opposite shift
            shift = attrs["shift"]
            attrs["unshift"] = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
        elif prim in ("own.matmul_adjoint", "own.inner_adjoint", "own.dot_adjoint",
                      "own.tensordot_adjoint", "own.kron_adjoint", "own.convolve_adjoint"):
            last = attrs.pop("last")
            if last not in (0, 1) or isinstance(last, bool):
                raise lo.src.error(node.args[3], f"the operand `{prim[4:]}` is the adjoint "
                                   "to: 0 or 1")
            prim = f"{prim}.{last}"
    args = [lo.expr(a) for a in given]
    return lo.emit(prim, args, node, var, hint=hint, attrs=attrs)


def add_into(lo, stmt: ast.Expr) -> bool:
    """Lower ``add_at(y, index, g)`` or ``add_scattered(y, index, g)`` (s2s-ad's
    own helpers, by their exact text), or ``np.add.at(y, index, g)`` in your
    code (one index expression): ``g`` added into ``y[index]`` in place,
    repeated indices adding up) where the index is one expression (a tuple or
    ``slice(...)`` index is the subscript :mod:`s2s_ad.frontend.scatter_calls`
    writes); False for any other statement. An index that is an int is the
    write ``y[index] += g``; any other (an integer array, which may repeat an
    element, or a number read from one) ``y += scatter(g, y, index)`` (the
    primitive ``own.scatter``): the same sum, on the whole array."""
    call = stmt.value
    user = numpy_add_at(call, lo.src.globals, lo.env)
    if not (isinstance(call, ast.Call) and len(call.args) == 3
            and not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args)
            and (user or isinstance(call.func, ast.Name)
                 and any(is_helper(lo.src.globals.get(call.func.id), base)
                         for base in ("add_at", "add_scattered")))):
        return False
    y, index, g = call.args
    if user and not isinstance(y, ast.Name):
        raise lo.src.error(y, "`np.add.at` adds into an array named here (`np.add.at(y, "
                           "index, v)`, `y` a name)")
    if user and isinstance(index, ast.Tuple):
        raise lo.src.error(index, "`np.add.at` with a tuple of indices is not supported; "
                           "index a flat view (`np.add.at(y.reshape(-1), rows * n + cols, "
                           "v)` is refused too: add into a 1-d array and reshape after)")
    if user and isinstance(index, ast.List):  # np.add.at(a, [0, 1, 2, 2], b), as NumPy's docs
        np_ = call.func.value.value  # the name np.add.at was called through
        index = ast.copy_location(ast.Call(ast.Attribute(ast.Name(np_.id, ast.Load()), "array",
                                                         ast.Load()), [index], []), index)
    if not user and written_index(index):
        new = ast.AugAssign(ast.Subscript(ast.Name(y.id, ast.Load()), _index(lo, index),
                                          ast.Store()), ast.Add(), g)
        lo.statement(ast.fix_missing_locations(_at(new, stmt)))
        return True
    names = ("_s2s_own_index", "_s2s_own_added")
    saved = {n: lo.env.get(n) for n in names}
    try:
        at = lo.expr(index)
        lo.env[names[0]] = at
        if isinstance(at, ir.Value) and at.kind in ("int", "bool") or isinstance(at, ir.Const) \
                and isinstance(at.value, int):
            new = ast.AugAssign(ast.Subscript(ast.Name(y.id, ast.Load()),
                                              ast.Name(names[0], ast.Load()), ast.Store()),
                                ast.Add(), g)
        else:
            lo.env[names[1]] = lo.emit("own.scatter", [lo.expr(g), lo.read(y.id, y), at], call,
                                       hint="scattered")
            new = ast.AugAssign(ast.Name(y.id, ast.Store()), ast.Add(),
                                ast.Name(names[1], ast.Load()))
        lo.statement(ast.fix_missing_locations(_at(new, stmt)))
    finally:
        _restore(lo, saved)
    return True


def numpy_add_at(call, globals_: dict, local=()) -> bool:
    """Is ``call`` NumPy's ``np.add.at(...)`` (``np`` a global name of the numpy
    module, not one of ``local``)?"""
    import numpy
    func = getattr(call, "func", None)
    return isinstance(func, ast.Attribute) and func.attr == "at" \
        and isinstance(func.value, ast.Attribute) and func.value.attr == "add" \
        and isinstance(func.value.value, ast.Name) \
        and func.value.value.id not in local \
        and globals_.get(func.value.value.id) is numpy


def written_index(index: ast.expr) -> bool:
    """Is ``index``, in a call to ``scatter``/``add_at``/``add_scattered``, a
    tuple, a ``slice(...)`` or a constant (written as a subscript)? One other
    expression (``idx``, ``i``) may be an integer array that repeats an
    element, where an assignment keeps the last write and the helpers add."""
    return isinstance(index, (ast.Tuple, ast.Constant)) or (
        isinstance(index, ast.Call) and isinstance(index.func, ast.Name)
        and index.func.id == "slice")


RETURNS_ARGUMENT = {"own.unbroadcast": (0,), "own.astype_like": (0,)}
"""s2s-ad's own helpers that may return (a view of) an argument, at these
positions (keeping nothing else); the others return new values."""


def returns_argument(fn) -> bool:
    """Is ``fn`` one of :data:`RETURNS_ARGUMENT`?"""
    return primitive(fn) in RETURNS_ARGUMENT


def _restore(lo, saved: dict) -> None:
    """The names bound for a helper's operations given back their values (or unbound)."""
    for n, v in saved.items():
        if v is None:
            lo.env.pop(n, None)
        else:
            lo.env[n] = v


def _index(lo, node: ast.expr) -> ast.expr:
    """The index expression s2s-ad wrote (``(slice(1, None), 0)``) as the
    subscript it stands for (``1:, 0``)."""
    if isinstance(node, ast.Tuple):
        return ast.copy_location(ast.Tuple([_index(lo, e) for e in node.elts], ast.Load()), node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "slice" \
            and not node.keywords and 1 <= len(node.args) <= 3:
        parts = [None if isinstance(a, ast.Constant) and a.value is None else a
                 for a in node.args]
        lower, upper, step = ([None] + parts + [None])[:3] if len(parts) == 1 else \
            (parts + [None])[:3]
        return ast.copy_location(ast.Slice(lower, upper, step), node)
    return node


_CONSTANTS = {"own.tile_adjoint": (2, ("reps",)), "own.repeat_adjoint": (2, ("repeats", "axis")),
              "own.trace_adjoint": (2, ("offset",)), "own.diag_adjoint": (2, ("k",)),
              "own.rolled": (1, ("shift", "axis")), "own.moved": (1, ("source", "destination")),
              "own.matmul_adjoint": (3, ("last",)), "own.inner_adjoint": (3, ("last",)),
              "own.dot_adjoint": (3, ("last",)),
              "own.extreme_adjoint": (3, ("axis",)), "own.take_along_axis_adjoint": (3, ("axis",)),
              "own.pad_adjoint": (2, ("pad_width",)),
              "own.tensordot_adjoint": (3, ("axes", "last")), "own.kron_adjoint": (3, ("last",)),
              "own.convolve_adjoint": (3, ("mode", "last")),
              "own.quantile_adjoint": (3, ("axis", "keepdims", "method")),
              "own.quantile_tangent": (3, ("axis", "keepdims", "method")),
              "own.running_extreme_adjoint": (3, ("axis",)),
              "own.running_extreme_tangent": (3, ("axis",)),
              "own.quantile_q_adjoint": (3, ("axis", "keepdims", "method")),
              "own.quantile_q_tangent": (3, ("axis", "keepdims", "method"))}
"""Helpers ``h(*operands, *constants)``: how many operands, then the
constants' attribute names (``last``: which operand's adjoint, a suffix of
the primitive: ``own.matmul_adjoint.0``)."""

_AS_OPERATIONS = {"own.gather": 3, "own.zeroed": 3, "own.cumsum_adjoint": 3, "own.contract": None,
                  "own.cross_product": 2, "own.others_product": 2, "own.cumprod_adjoint": 4,
                  "own.sort_adjoint": 3}
"""Helpers lowered as the operations they compute (arguments taken; None: any
number, ``contract(subscripts, *operands)``)."""


def _as_operations(lo, prim: str, node: ast.Call, var: str | None):
    """``contract(subscripts, *operands)`` as ``np.einsum(subscripts,
    *operands)``, ``cross_product(a, b)`` as ``np.cross(a, b)``, ``others_product(x,
    axis)`` and ``cumprod_adjoint(g, x, out, axis)`` as their cumulative products,
    ``gather(g, index, y)`` as ``spread(g, y)[index]``, ``zeroed(g, index,
    y)`` as the write ``spread(g, y)[index] = 0.0``, ``sort_adjoint(g, x, axis)``
    as ``np.take_along_axis`` of ``g`` at the inverse of ``x``'s order, ``cumsum_adjoint(g, x,
    axis)`` as ``np.flip(np.cumsum(np.flip(g, axis), axis), axis)`` (over
    ``np.ravel(g)``, reshaped to ``x``'s shape, for ``axis=None``)."""
    given = list(node.args)
    if _AS_OPERATIONS[prim] is not None and len(given) != _AS_OPERATIONS[prim]:
        raise lo.src.error(node, f"`{ast.unparse(node.func)}` takes {_AS_OPERATIONS[prim]} "
                           "arguments")
    names = [f"_s2s_own_{k}" for k in range(len(given))]
    saved = {n: lo.env.get(n) for n in names}
    try:
        if prim in ("own.contract", "own.cross_product"):
            # np.einsum(subscripts, *operands), np.cross(a, b), as s2s-ad writes them
            first = 1 if prim == "own.contract" else 0
            if first and (len(given) < 2 or not (isinstance(given[0], ast.Constant)
                                                 and isinstance(given[0].value, str))):
                raise lo.src.error(node, "`contract` takes the subscripts, a constant string, "
                                   "and the operands")
            np_ = _numpy(lo, node)
            for n, a in zip(names[first:], given[first:]):
                lo.env[n] = lo.expr(a)
            text = (f"{np_}.einsum({given[0].value!r}, {', '.join(names[1:])})" if first
                    else f"{np_}.cross({names[0]}, {names[1]})")
            return lo.expr(_parsed(text, node))
        if prim == "own.cumsum_adjoint":
            axis, np_ = _constant(lo, given[2]), _numpy(lo, node)
            lo.env[names[0]], lo.env[names[1]] = lo.expr(given[0]), lo.expr(given[1])
            g, x = names[0], names[1]
            text = (f"{np_}.reshape({np_}.flip({np_}.cumsum({np_}.flip({np_}.ravel({g})))), "
                    f"{np_}.shape({x}))" if axis is None else
                    f"{np_}.flip({np_}.cumsum({np_}.flip({g}, {axis!r}), {axis!r}), {axis!r})")
            return lo.expr(_parsed(text, node))
        if prim == "own.sort_adjoint":
            axis, np_ = _constant(lo, given[2]), _numpy(lo, node)
            lo.env[names[0]], lo.env[names[1]] = lo.expr(given[0]), lo.expr(given[1])
            g, x = names[0], names[1]
            flat = f"{np_}.ravel({x})" if axis is None else x
            a = 0 if axis is None else axis
            text = (f"{np_}.take_along_axis({g}, {np_}.argsort({np_}.argsort({flat}, axis={a!r}), "
                    f"axis={a!r}), axis={a!r})")
            if axis is None:
                text = f"{np_}.reshape({text}, {np_}.shape({x}))"
            return lo.expr(_parsed(text, node))
        if prim == "own.others_product":
            return lo.expr(_others_product(lo, node, given, names[0]))
        if prim == "own.cumprod_adjoint":
            return lo.expr(_cumprod_adjoint(lo, node, given, names[:2]))
        g, y = lo.expr(given[0]), lo.expr(given[2])
        base = lo.emit("own.spread", [g, y], node, hint="spread")
        if prim == "own.gather":
            lo.env[names[0]] = base
            read = ast.Subscript(ast.Name(names[0], ast.Load()), _index(lo, given[1]),
                                 ast.Load())
            return lo.expr(ast.fix_missing_locations(_at(read, node)))
        target = _at(ast.Subscript(ast.Name(names[0], ast.Store()), _index(lo, given[1]),
                                   ast.Store()), node)
        return lo.emit_setitem(base, ir.Const(0.0), ast.fix_missing_locations(target), None,
                               None, var)
    finally:
        _restore(lo, saved)


def _others_product(lo, node: ast.Call, given: list, name: str) -> ast.expr:
    """``others_product(x, axis)`` as the operations it computes, ``x`` bound
    to ``name``: the exclusive cumulative products from the left and from
    the right along ``axis`` (moved last), multiplied (over ``np.ravel(x)``,
    reshaped to ``x``'s shape, for ``axis=None``)."""
    axis, np_ = _constant(lo, given[1]), _numpy(lo, node)
    lo.env[name] = lo.expr(given[0])
    x, a = (f"{np_}.ravel({name})", 0) if axis is None else (name, axis)
    m = f"{np_}.moveaxis({x}, {a!r}, -1)"
    ones = f"{np_}.ones_like({m}[..., :1])"
    left = f"{np_}.cumprod({np_}.concatenate([{ones}, {m}[..., :-1]], axis=-1), axis=-1)"
    right = (f"{np_}.flip({np_}.cumprod({np_}.flip({np_}.concatenate([{m}[..., 1:], {ones}], "
             f"axis=-1), -1), axis=-1), -1)")
    text = f"{np_}.moveaxis({left} * {right}, -1, {a!r})"
    if axis is None:
        text = f"{np_}.reshape({text}, {np_}.shape({name}))"
    return _parsed(text, node)


def _cumprod_adjoint(lo, node: ast.Call, given: list, names: list) -> ast.expr:
    """``cumprod_adjoint(g, x, out, axis)`` as the operations of its exact
    form, for every slice (its text takes it where a slice holds a zero; the
    values are the same elsewhere, the cost quadratic in the axis length):
    ``x[k]``'s adjoint is the product of the elements before it times the
    sum over ``i >= k`` of ``g[i]`` times the product of ``x[k + 1 .. i]``.
    ``g`` and ``x`` bound to ``names``."""
    axis, np_ = _constant(lo, given[3]), _numpy(lo, node)
    lo.env[names[0]], lo.env[names[1]] = lo.expr(given[0]), lo.expr(given[1])
    g, x = names
    if axis is None:
        g, x, axis = f"{np_}.ravel({g})", f"{np_}.ravel({x})", 0
    xm, gm = f"{np_}.moveaxis({x}, {axis!r}, -1)", f"{np_}.moveaxis({g}, {axis!r}, -1)"
    k = f"{np_}.arange({np_}.shape({xm})[-1])"
    before = (f"{np_}.cumprod({np_}.concatenate([{np_}.ones_like({xm}[..., :1]), "
              f"{xm}[..., :-1]], axis=-1), axis=-1)")
    after = (f"{np_}.cumprod({np_}.where({k}[None, :] > {k}[:, None], {xm}[..., None, :], 1.0), "
             "axis=-1)")
    summed = (f"{np_}.sum({np_}.where({k}[None, :] >= {k}[:, None], {after} * {gm}[..., None, :], "
              "0.0), axis=-1)")
    text = f"{np_}.moveaxis({before} * {summed}, -1, {axis!r})"
    if names[1] != x:  # axis None: back to x's shape
        text = f"{np_}.reshape({text}, {np_}.shape({names[1]}))"
    return _parsed(text, node)


def _constant(lo, arg: ast.expr):
    """An axis (or other constant) as s2s-ad writes it, else refused, located."""
    try:
        return ast.literal_eval(arg)
    except ValueError:
        raise lo.src.error(arg, "this argument must be a constant, as s2s-ad writes it") from None


def _numpy(lo, node: ast.Call) -> str:
    """The module's name for NumPy, which the operations written for a helper use."""
    np_ = getattr(lo, "numpy_alias", None)
    if np_ is None:
        raise lo.src.error(node, f"`{ast.unparse(node.func)}` is read in a module without NumPy")
    return np_


def _parsed(text: str, node: ast.Call) -> ast.expr:
    """``text``, an expression, parsed and placed at ``node``."""
    return ast.fix_missing_locations(_at(ast.parse(text, mode="eval").body, node))


def _at(tree: ast.AST, node: ast.AST) -> ast.AST:
    """``tree`` with every node given ``node``'s position."""
    for n in walk(tree):
        if "lineno" in n._attributes:
            ast.copy_location(n, node)
    return tree
