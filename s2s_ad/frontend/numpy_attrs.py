"""Frontend, NumPy part: attributes computed at transform time, and calls
lowered to several ops.

Contract: every function here takes the lowering (``lo``, a
``frontend._Lowering`` in array mode) and either returns constant
attributes or IR operands, or raises its located ``SourceError``.

* ``dtype=`` on a constructor becomes the dtype's name (``"float32"``); an
  integer or complex dtype is refused where the array could carry a gradient.
* ``np.roll``'s shift is negated for the reverse sweep (``unshift``).
* ``np.einsum``'s subscripts are parsed once: each operand's adjoint is an
  einsum of ``g`` with the other operands, its subscripts written here::

      np.einsum("ij,jk->ik", A, B)   ──▶   adjoints ("ik,jk->ij", "ij,ik->jk")

  (with ``...``, a repeated letter or a letter one operand sums alone, that
  operand's adjoint is worked out where the code runs: ``einsum_adjoint``)

* ``scipy.special.logsumexp(x, axis, keepdims)`` is lowered to the max-shifted
  ``m + log(sum(exp(x - m)))``, so the generated module needs no scipy.
"""

from __future__ import annotations

import ast
import builtins
import math
import sys

import numpy

from s2s_ad import ir
from s2s_ad.frontend import library_names, structures


def dtype_attr(lo, node: ast.expr, prim: str) -> str:
    """``dtype=`` as a dtype name. A float dtype anywhere; an integer or bool
    dtype only for ``np.arange`` (an index array) and an integer one for
    ``x.astype`` (a step function of ``x``, no derivative: an index), since
    an array of another constructor is one the function fills with values it
    differentiates."""
    def refuse():
        return lo.src.error(node, "`dtype` must name a NumPy dtype (`float`, `np.float32`, "
                            "\"float64\"), a constant s2s-ad reads when it builds the gradient")

    if not (isinstance(node, ast.Constant) or lo.is_global_path(node)):
        raise refuse()
    try:
        dtype = numpy.dtype(node.value if isinstance(node, ast.Constant) else lo.resolve(node))
    except (TypeError, ValueError):
        raise refuse() from None
    if dtype.kind == "f" or (dtype.kind in "iub" and prim == "np.arange") \
            or dtype.kind in "iu" and prim == "array.astype":  # (array.astype_int)
        return dtype.name
    raise lo.src.error(node, f"`dtype={ast.unparse(node)}` is not supported here: an array of "
                       f"{dtype.name} cannot carry a gradient (values written into it are "
                       "converted); use a float dtype (`float`, `np.float32`)")


def check_attrs(lo, prim: str, attrs: dict, node: ast.Call) -> None:
    """Refuse attribute values the rule cannot use; add the derived ones."""
    if prim == "np.roll":
        if "shift" not in attrs:
            raise lo.src.error(node, "`np.roll` needs a shift")
        shift = attrs["shift"]
        attrs["unshift"] = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    if prim == "np.repeat" and not isinstance(attrs.get("repeats"), int):
        raise lo.src.error(node, "`np.repeat` takes a constant number of repeats here (one int "
                           "for every element); repeats given by an array or a run-time int "
                           "are supported for an integer index array computed from ints "
                           "(`np.repeat(np.arange(d), counts)`), not for values with a "
                           "gradient")
    if prim == "np.tile" and "reps" not in attrs:
        raise lo.src.error(node, "`np.tile` needs reps")
    if prim in ("np.var", "np.std") and not isinstance(attrs.get("ddof", 0), int):
        raise lo.src.error(node, f"`{prim}`: `ddof` must be a constant int")
    if prim in ("np.sort", "np.argsort") and "axis" in attrs and attrs["axis"] is None:
        raise lo.src.error(node, f"`{prim}(..., axis=None)` is not supported; sort the "
                           "flattened array: `np.sort(np.ravel(x))`")
    if prim == "np.take_along_axis" and attrs.get("axis") is None:
        raise lo.src.error(node, "`np.take_along_axis` needs an int axis here; for the "
                           "flattened array write `np.take_along_axis(np.ravel(x), i, axis=0)`")
    if prim in ("np.maximum.accumulate", "np.minimum.accumulate") and (
            attrs.get("axis", 0) is None or isinstance(attrs.get("axis"), tuple)):
        raise lo.src.error(node, f"`{prim}` takes one int axis here (0 unless given); for the "
                           f"flattened array write `{prim}(np.ravel(x))`")
    if prim == "np.pad" and "pad_width" not in attrs:
        raise lo.src.error(node, "`np.pad` needs a pad_width")
    if prim == "np.moveaxis" and ("source" not in attrs or "destination" not in attrs):
        raise lo.src.error(node, "`np.moveaxis` needs a source and a destination")


STRING_ATTRS = {("np.convolve", "mode"): ("full", "same", "valid"),
                **{(p, "method"): ("linear", "lower", "higher", "midpoint")
                   for p in ("np.quantile", "np.percentile")}}
"""Attributes that are one of a few strings, per (primitive, name)."""


def string_attr(lo, node: ast.expr, prim: str, name: str) -> str:
    """A string attribute (``mode="valid"``): a string constant, or a module
    constant bound to one, among the choices the rule has; else refused."""
    choices = STRING_ATTRS[(prim, name)]
    value = node.value if isinstance(node, ast.Constant) else (
        lo.src.globals.get(node.id) if isinstance(node, ast.Name) and node.id not in lo.env
        else None)
    if value not in choices:
        raise lo.src.error(node, f"`{name}` of `{prim}` must be a constant string here, one of "
                           + ", ".join(repr(c) for c in choices))
    return value


KEEP_AXIS = frozenset({"np.cumsum", "np.cumprod", "np.flip", "np.roll", "np.sort", "np.repeat",
                       "np.concatenate", "np.maximum.accumulate", "np.minimum.accumulate"})
"""Functions whose result has the axis they work along where the operand had it."""


def along_axis(lo, prim: str, args: list, axis: ir.Value, node: ast.Call, var, hint,
               attrs: dict, text: str) -> ir.Operand:
    """``prim`` along an axis known only when the code runs (``axis``, an int
    value): the operands' axis moved to the front (``np.moveaxis(x, k, 0)``,
    a view), ``prim`` along axis 0 (``attrs["axis"]`` is 0), and the result's
    axis moved back to ``k`` where it keeps one (a reduction with
    ``keepdims``, ``np.cumsum``...; ``np.stack`` and ``np.expand_dims`` make
    it). Both moves are linear; their adjoints move back."""
    if prim in ("np.quantile", "np.percentile"):  # (q is not an array along the axis)
        args = [lo.emit("axis.front", [args[0], axis], node, text=text)] + args[1:]
    elif prim not in ("np.stack", "np.expand_dims"):
        args = [lo.emit("axis.front", [a, axis], node, text=text) for a in args]
    back = prim in KEEP_AXIS or prim in ("np.stack", "np.expand_dims") or (
        prim in ("np.sum", "np.mean", "np.prod", "np.max", "np.min", "np.var", "np.std",
                 "np.median", "np.all", "np.any")
        and attrs.get("keepdims"))
    out = lo.emit(prim, args, node, None if back else var, hint=None if back else hint,
                  attrs=attrs, text=text)
    return lo.emit("axis.back", [out, axis], node, var, hint=hint, text=text) if back else out


def moved_at_run_time(lo, attrs: dict, positional: list, node: ast.Call, var, hint,
                      text: str) -> ir.Operand:
    """``np.moveaxis(x, k, 0)`` and ``np.moveaxis(x, 0, k)``, ``k`` an int known
    only when the code runs: the primitives ``axis.front`` and ``axis.back``."""
    source, destination = attrs.get("source"), attrs.get("destination")
    if len(positional) != 1 or not (isinstance(source, ir.Value) and destination == 0
                                    or source == 0 and isinstance(destination, ir.Value)):
        raise lo.src.error(node, "`np.moveaxis` with an axis known only when the code runs "
                           "moves it to the front or back from there (`np.moveaxis(x, k, 0)`, "
                           "`np.moveaxis(x, 0, k)`); other moves take constants")
    front = isinstance(source, ir.Value)
    return lo.emit("axis.front" if front else "axis.back",
                   [lo.expr(positional[0]), source if front else destination], node, var,
                   hint=hint, text=text)


def einsum_call(lo, node: ast.Call, var, hint, text) -> ir.Operand:
    """``np.einsum("ij,jk->ik", a, b)``: constant subscripts, then the operands."""
    what = ast.unparse(node.func)
    if node.keywords:
        raise lo.src.error(node, f"`{what}`: keyword arguments are not supported")
    if not node.args or not (isinstance(node.args[0], ast.Constant)
                             and isinstance(node.args[0].value, str)):
        raise lo.src.error(node, f"`{what}` takes its subscripts as a string literal first "
                           "(`np.einsum(\"ij,jk->ik\", a, b)`)")
    subscripts = node.args[0].value.replace(" ", "")
    args = []
    for a in node.args[1:]:
        if isinstance(a, ast.Starred):
            raise lo.src.error(a, "`*args` in calls is not supported")
        v = lo.expr(a)
        if isinstance(v, tuple) or structures.is_structure(v):
            raise lo.src.error(a, f"`{what}` takes arrays")
        args.append(v)
    try:
        adjoints = einsum_adjoints(subscripts, len(args))
    except ValueError as exc:
        raise lo.src.error(node.args[0], f"`{what}`: {exc}") from None
    return lo.emit("np.einsum", args, node, var, hint=hint, text=text,
                   attrs={"subscripts": subscripts, "adjoints": adjoints})


def einsum_adjoints(subscripts: str, n: int) -> tuple:
    """Per operand k: (the subscripts of its adjoint, an einsum of g with the
    other operands, and the axes of operand k that einsum leaves out — letters
    summed in operand k alone, along which g is broadcast back), or None where
    the adjoint is worked out when the code runs (``einsum_adjoint``,
    s2s_ad/rules/more_helpers.py): subscripts with ``...`` (the ranks are known
    only then), a letter repeated in operand k (a diagonal), a letter summed in
    operand k alone.

    >>> einsum_adjoints("ij,j->i", 2)
    (('i,j->ij', ()), ('ij,i->j', ()))
    >>> einsum_adjoints("ii,i->", 2)
    (None, ('ii,->i', ()))
    >>> einsum_adjoints("...i,...i->...", 2)
    (None, None)
    """
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != n:
        raise ValueError(f"the subscripts name {len(terms)} operand(s), the call passes {n}")

    def letters(t: str) -> bool:  # letters, and `...` at most once
        return t.replace("...", "", 1).isalpha() or t.replace("...", "", 1) == ""
    if not all(letters(t) for t in terms) or (output and not letters(output)) \
            or "->" in output:
        raise ValueError("subscripts must be letters and at most one `...` per operand, "
                         "operands separated by `,`")
    if "..." in output and "..." not in inputs:
        raise ValueError("the output has `...` but no operand has")
    if len(set(output.replace("...", ""))) != len(output.replace("...", "")):
        raise ValueError(f"the output repeats a subscript (`{output}`)")
    if any(c not in inputs for c in output.replace("...", "")):
        raise ValueError(f"the output (`{output}`) names a letter no operand has")
    dots = "..." in inputs
    every = inputs.replace("...", "").replace(",", "")
    if not arrow:  # implicit output: the letters that appear once, in order
        output = ("..." if dots else "") + "".join(sorted(c for c in set(every)
                                                          if every.count(c) == 1))
    out = []
    for k, term in enumerate(terms):
        others = [t for j, t in enumerate(terms) if j != k]
        available = set(output) | set("".join(others))
        missing = tuple(i for i, c in enumerate(term) if c not in available)
        if dots or len(set(term)) != len(term) or missing:
            out.append(None)
            continue
        out.append((",".join([output] + others) + "->" + term, ()))
    return tuple(out)


def int_literal(node: ast.expr) -> bool:
    """A list or tuple written out of constant ints (nested too): ``[0, 2]``."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and all(int_literal(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def is_slice(lo, node: ast.expr) -> bool:
    """``slice(a, b, c)`` (Python's) or ``np.s_[a:b:c]``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "slice" and node.func.id not in lo.env:
        return lo.src.globals.get("slice", builtins.slice) is builtins.slice
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) \
        and isinstance(node.value, ast.Attribute) and node.value.attr == "s_" \
        and isinstance(node.value.value, ast.Name) and node.value.value.id == lo.numpy_alias


def slice_attrs(lo, node: ast.expr, what: str) -> dict:
    """The bounds of a slice :func:`is_slice` recognised, as constant
    attributes ``start``, ``stop``, ``step``; others refused, located."""
    if isinstance(node, ast.Subscript):
        parts = [node.slice.lower, node.slice.upper, node.slice.step]
    else:
        if node.keywords or not 1 <= len(node.args) <= 3:
            raise lo.src.error(node, "`slice(...)` takes one to three bounds here")
        parts = list(node.args) if len(node.args) > 1 else [None, node.args[0]]
        parts += [None] * (3 - len(parts))
    bounds = {}
    for name, p in zip(("start", "stop", "step"), parts):
        value = None if p is None else lo.const_attr(p, name)
        if value is not None and type(value) is not int:
            raise lo.src.error(p, f"`{what}` takes a slice with constant int bounds (known "
                               "while the code is generated); for positions known only when "
                               "the code runs give a list of ints")
        bounds[name] = value
    return bounds


def arguments(lo, node: ast.Call, names: tuple) -> dict:
    """The call's arguments by parameter name (``names`` in NumPy's order, the
    first one an array that must be given); anything else is refused."""
    what = ast.unparse(node.func)
    given = dict(zip(names, node.args))
    for k in node.keywords:
        if k.arg not in names or k.arg in given:
            raise lo.src.error(k.value if k.arg else node,
                               f"`{what}`: the keyword argument {k.arg!r} is not supported")
        given[k.arg] = k.value
    if names[0] not in given or len(node.args) > len(names):
        raise lo.src.error(node, f"`{what}` takes an array (and axis, keepdims) here")
    return given


_ABSENT = object()
SCIPY_SPECIAL = ("gammaln", "multigammaln", "expit", "erf", "erfc", "digamma", "polygamma", "ndtr",
                 "log_ndtr", "logit", "log_expit", "xlogy")
"""The scipy.special functions with a rule (scipy.special.NAME)."""


def scipy_special_prim(fn) -> str | None:
    """The rule of a scipy.special function, if it has one; scipy is looked
    for only where the user's code has imported it."""
    special = sys.modules.get("scipy.special")
    if special is None:
        return None
    for name in SCIPY_SPECIAL:
        if fn is getattr(special, name, _ABSENT):
            return f"scipy.special.{name}"
    return None


def slogdet_call(lo, node: ast.Call, var, hint) -> tuple:
    """``sign, logdet = np.linalg.slogdet(x)``: two ops, the sign (no
    derivative) and log|det x| (derivative x⁻ᵀ), as a tuple to unpack."""
    what = ast.unparse(node.func)
    if len(node.args) != 1 or node.keywords:
        raise lo.src.error(node, f"`{what}` takes one argument, a matrix (or a stack)")
    x = lo.expr(node.args[0])
    if isinstance(x, tuple) or structures.is_structure(x):
        raise lo.src.error(node.args[0], f"`{what}` takes an array here")
    text = ast.unparse(node)
    return (lo.emit("np.linalg.slogdet_sign", [x], node, hint="sign", text=text),
            lo.emit("np.linalg.slogdet_log", [x], node, hint="logdet", text=text))


def is_logsumexp(fn) -> bool:
    """``scipy.special.logsumexp``, recognised without importing scipy (or
    the NumPy ``logsumexp`` a torch or TensorFlow function's rewrite calls)."""
    return fn is library_names.logsumexp or getattr(fn, "__name__", None) == "logsumexp" and \
        (getattr(fn, "__module__", None) or "").startswith("scipy.special")


def logsumexp_call(lo, node: ast.Call, var, hint) -> ir.Operand:
    """``logsumexp(x, axis=a, keepdims=k)`` as ``m + log(sum(exp(x - m)))``
    with ``m = max(x, axis, keepdims=True)`` (squeezed when ``keepdims`` is
    False): the stable form scipy computes, in ops s2s-ad has rules for."""
    what = ast.unparse(node.func)
    given = arguments(lo, node, ("a", "axis", "b", "keepdims"))
    if "b" in given and not (isinstance(given["b"], ast.Constant) and given["b"].value is None):
        raise lo.src.error(given["b"], f"`{what}`: weights `b` are not supported; write "
                           "np.log(np.sum(b * np.exp(x - m))) + m")
    x = lo.expr(given["a"])
    if isinstance(x, tuple) or structures.is_structure(x):
        raise lo.src.error(given["a"], f"`{what}` takes an array here")
    axis = lo.const_attr(given["axis"], "axis", runtime=True) if "axis" in given else None
    keepdims = bool(lo.const_attr(given["keepdims"], "keepdims")) if "keepdims" in given \
        else False
    text = f"{var} = {ast.unparse(node)}" if var else ast.unparse(node)
    if isinstance(axis, ir.Value):  # known when the code runs: along axis 0 (along_axis)
        moved = lo.emit("axis.front", [x, axis], node, text=text)
        if not keepdims:
            return logsumexp_of(lo, moved, 0, False, node, var, hint, text)
        out = logsumexp_of(lo, moved, 0, True, node, None, None, text)
        return lo.emit("axis.back", [out, axis], node, var, hint=hint, text=text)
    return logsumexp_of(lo, x, axis, keepdims, node, var, hint, text)


def logsumexp_of(lo, x, axis, keepdims: bool, node, var, hint, text) -> ir.Operand:
    """The ops of ``logsumexp(x, axis, keepdims)`` (constant attributes)."""
    m = lo.emit("np.max", [x], node, text=text, attrs={"axis": axis, "keepdims": True})
    shifted = lo.emit("sub", [x, m], node, text=text)
    total = lo.emit("np.sum", [lo.emit("np.exp", [shifted], node, text=text)], node, text=text,
                    attrs={"axis": axis, "keepdims": keepdims})
    log = lo.emit("np.log", [total], node, text=text)
    if not keepdims:
        m = lo.emit("np.squeeze", [m], node, text=text, attrs={"axis": axis})
    return lo.emit("add", [log, m], node, var, hint=hint, text=text)


def norm_call(lo, node: ast.Call, var, hint) -> ir.Operand:
    """``np.linalg.norm(x, ord=o, axis=a, keepdims=k)`` lowered to the ops
    that compute it: the 2-norm (Frobenius for matrices, also
    ``ord="fro"``) as ``np.sqrt(np.sum(x * x, ...))``; for a vector norm
    along an int ``axis``, ``ord=1`` as ``np.sum(np.abs(x))``, ``np.inf``
    / ``-np.inf`` as ``np.max``/``np.min`` of ``np.abs(x)``, another
    number p as ``np.sum(np.abs(x) ** p) ** (1 / p)``. Derivatives are
    inf/nan where the norm is 0 (and ``abs`` takes 0 at 0)."""
    what = ast.unparse(node.func)
    given = arguments(lo, node, ("x", "ord", "axis", "keepdims"))
    order = given.get("ord")
    value = norm_order(lo, order)
    attrs = {k: lo.const_attr(given[k], k) for k in ("axis", "keepdims") if k in given}
    axis = attrs.get("axis")
    if value == "fro" and not (axis is None or isinstance(axis, tuple) and len(axis) == 2):
        raise lo.src.error(order, f"`{what}(..., 'fro')` takes two axes (or none)")
    if value == 2 and axis is None:
        raise lo.src.error(order, f"`{what}(x, 2)` without an axis is the spectral norm "
                             "for matrices, which is not supported; leave `ord` out for the "
                             "2-norm of a vector")
    if value not in (None, 2, "fro") and not isinstance(axis, int):
        raise lo.src.error(order, f"`{what}` with ord={ast.unparse(order)} is supported as "
                             "a vector norm along one axis: give `axis` (an int; "
                             "`axis=-1` for a vector), since without it a matrix gets a "
                             "matrix norm")
    x = lo.expr(given["x"])
    if isinstance(x, tuple) or structures.is_structure(x):
        raise lo.src.error(given["x"], f"`{what}` takes an array here")
    text = f"{var} = {ast.unparse(node)}" if var else ast.unparse(node)
    if value in (None, 2, "fro"):
        square = lo.emit("mul", [x, x], node, text=text)
        total = lo.emit("np.sum", [square], node, attrs=attrs, text=text)
        return lo.emit("np.sqrt", [total], node, var, hint=hint, text=text)
    size = lo.emit("np.abs", [x], node, text=text)
    if value in (1, 1.0):
        return lo.emit("np.sum", [size], node, var, hint=hint, attrs=attrs, text=text)
    if value in (float("inf"), float("-inf")):
        return lo.emit("np.max" if value > 0 else "np.min", [size], node, var, hint=hint,
                         attrs=attrs, text=text)
    powered = lo.emit("pow", [size, ir.Const(value)], node, text=text)
    total = lo.emit("np.sum", [powered], node, attrs=attrs, text=text)
    return lo.emit("pow", [total, ir.Const(1.0 / value)], node, var, hint=hint, text=text)


def norm_order(lo, node):
    """The ``ord`` of np.linalg.norm: None, "fro", or a non-zero number
    (``np.inf`` included)."""
    if node is None or isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Constant) and node.value == "fro":
        return "fro"
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    inner = node.operand if negative else node
    value = None
    if isinstance(inner, ast.Constant) and type(inner.value) in (int, float):
        value = inner.value
    elif isinstance(inner, ast.Attribute) and lo.is_global_path(inner) \
            and lo.resolve(inner) == float("inf"):
        value = float("inf")
    if value is None or value == 0:
        raise lo.src.error(node, "`ord` must be None, 'fro', np.inf, -np.inf or a non-zero "
                           "number written in the call")
    return -value if negative else value


_FOLDED = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "floordiv": lambda a, b: a // b if b else None,
           "mod": lambda a, b: a % b if b else None, "neg": lambda a: -a, "pos": lambda a: a}


def fold(value, defs: dict, depth: int = 0):
    """The int a value is when the code is generated (a constant, or integer
    arithmetic on constants), else None."""
    if isinstance(value, ir.Const):
        return value.value if type(value.value) in (int, bool) else None
    op = defs.get(id(value)) if isinstance(value, ir.Value) and depth < 50 else None
    if op is None or op.prim not in _FOLDED or op.callee is not None:
        return None
    args = [fold(a, defs, depth + 1) for a in op.args]
    if any(type(a) is not int for a in args):
        return None
    return _FOLDED[op.prim](*args)


def ix_index(lo, call: ast.Call, operands: list) -> tuple:
    """``x[np.ix_(a, b, ...)]``: the open mesh of integer index arrays, as
    the index ``x[a.reshape(-1, 1), b.reshape(1, -1)]`` (each array along
    its own axis), its operands appended to ``operands``."""
    if call.keywords or not call.args:
        raise lo.src.error(call, "`np.ix_` takes one integer array (or list) per axis")
    n = len(call.args)
    out = []
    for k, a in enumerate(call.args):
        value = lo.expr(a) if not isinstance(a, ast.List) else lo.emit(
            "index_array", [lo.expr(e) for e in a.elts], a)
        if isinstance(value, tuple) or structures.is_structure(value):
            raise lo.src.error(a, "`np.ix_` takes integer arrays")
        shape = lo.emit("tuple", [ir.Const(-1 if j == k else 1) for j in range(n)], a)
        operands.append(lo.emit("np.reshape", [value, shape], a))
        out.append(("op", len(operands) - 1))
    return tuple(out)


def split_call(lo, node: ast.Call) -> tuple:
    """``np.split(x, sections_or_indices, axis)`` as a tuple of slices of x
    along ``axis`` (to unpack or index with a constant): a constant number
    of equal parts (``x[k * n // N:(k + 1) * n // N]``, n read when the code
    runs; NumPy's check that N divides n is not repeated), or a list of
    constant split points."""
    what = ast.unparse(node.func)
    given = arguments(lo, node, ("x", "indices_or_sections", "axis"))
    if "indices_or_sections" not in given:
        raise lo.src.error(node, f"`{what}` needs the number of parts or the split points")
    axis = lo.const_attr(given["axis"], "axis") if "axis" in given else 0
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise lo.src.error(node, f"`{what}`: `axis` must be an int")
    parts = lo.const_attr(given["indices_or_sections"], "indices_or_sections")
    if isinstance(parts, bool) or not (isinstance(parts, int) and parts > 0
                                       or isinstance(parts, tuple) and parts
                                       and all(type(p) is int for p in parts)):
        raise lo.src.error(given["indices_or_sections"], f"`{what}` takes a constant number of "
                           "parts or a list of constant split points")
    x = lo.expr(given["x"])
    if isinstance(x, tuple) or structures.is_structure(x):
        raise lo.src.error(given["x"], f"`{what}` takes an array here")
    text = ast.unparse(node)
    if isinstance(parts, int):
        size = lo.emit("shape", [x], node, text=text)
        n = lo.emit("array.getitem", [size, ir.Const(axis)], node, text=text,
                    attrs={"index": (("op", 1),)})
        bounds = [ir.Const(0)] + [lo.emit("floordiv", [lo.emit("mul", [ir.Const(k), n], node,
                                                                text=text), ir.Const(parts)],
                                          node, text=text) for k in range(1, parts)] + [None]
    else:
        bounds = [ir.Const(0)] + [ir.Const(p) for p in parts] + [None]
    lead = [("slice", None, None, None)] * axis if axis >= 0 else [("ellipsis",)]
    tail = [] if axis >= 0 else [("slice", None, None, None)] * (-axis - 1)
    out = []
    for lo_b, hi_b in zip(bounds[:-1], bounds[1:]):
        args = [x]
        item = ["slice", None, None, None]
        for k, b in ((1, lo_b), (2, hi_b)):
            if b is not None:
                args.append(b)
                item[k] = ("op", len(args) - 1)
        index = tuple(lead) + (tuple(item),) + tuple(tail)
        out.append(lo.emit("array.getitem", args, node, text=text, attrs={"index": index}))
    return tuple(out)


def shape_like(items: tuple) -> bool:
    """Can ``items`` be a shape: ints, or numbers lowered as numbers (a float
    constant or an array among them is a tuple of values, reduced as NumPy
    reduces the array it makes of them)?"""
    return not items or not all(isinstance(v, ir.Operand) for v in items) or not any(
        isinstance(v, ir.Const) and type(v.value) is not int
        or isinstance(v, ir.Value) and v.kind not in ("int", "float") for v in items)


def shape_product(lo, prim: str, items: tuple, node: ast.Call) -> ir.Operand:
    """``np.prod(shape)`` / ``np.sum(shape)`` of a tuple of ints (a shape,
    ``W.shape``, ``(3, 4)``): the number, folded where the ints are constants,
    else the products (sums) of the ints when the code runs; no derivative."""
    if any(isinstance(v, tuple) or not isinstance(v, ir.Operand) for v in items):
        raise lo.src.error(node, f"`{ast.unparse(node.func)}` of a tuple holds numbers here")
    if all(isinstance(v, ir.Const) and type(v.value) is int for v in items):
        values = [v.value for v in items]
        return ir.Const(math.prod(values) if prim == "np.prod" else sum(values)) if values \
            else ir.Const(1.0 if prim == "np.prod" else 0.0)
    if any(getattr(v, "kind", None) not in ("int", "float") for v in items
           if not isinstance(v, ir.Const)) or any(
            isinstance(v, ir.Const) and type(v.value) is not int for v in items):
        raise lo.src.error(node, f"`{ast.unparse(node)}` of a tuple is read for a tuple of ints "
                           "(a shape, `W.shape`, or ints written in the function) here, and "
                           "this tuple holds numbers or arrays (module data is read as "
                           "arrays): write the ints in the function, or `np.prod(np.array(...))` "
                           "for numbers")
    out = items[0]
    for v in items[1:]:
        out = lo.emit("mul" if prim == "np.prod" else "add", [out, v], node)
    return out
