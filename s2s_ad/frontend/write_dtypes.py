"""Writes into arrays whose dtype is known only where the code runs.

NumPy converts a float written into an array of integers (``z[0] = x[0]``
with ``z = np.copy(idx)``, ``idx`` an integer array the caller passes) to an
integer: the value written has no derivative there, and an adjoint read back
from ``dz[0]`` would be the derivative of a different function. Where the
function itself makes the array from ints, the write is refused while
lowering (:func:`s2s_ad.frontend.index_exprs.refuse_write`). Where the
array's dtype follows a value whose dtype the code does not fix (a
parameter, a helper's result, a copy or ``*_like`` of one) and a value
that carries a derivative is written into it, the generated code checks the
dtype right after making the array (once, outside the loops that write into
it; before the write where the op making it is not found)::

    z = np.copy(idx)
    if z.dtype.kind not in 'fc':  # what np.issubdtype(z.dtype, np.inexact) tests
        raise TypeError("`z[0] = x[0]` (line 4) writes ... into an array of integers ...")

An array is *known inexact* (:func:`inexact`) when the code fixes its dtype
to a float one: ``np.zeros(n)``, ``np.full(n, 0.5)``, ``dtype=float``,
arithmetic with a float, a true division, ``np.exp`` and the other functions
whose result is always floating, and copies, views and writes of such an
array. Those writes need no check. The condition is the rule ``np.issubdtype``
(no derivative), which a function may also spell itself:
``np.issubdtype(x.dtype, np.inexact)`` and ``np.floating``, or
``x.dtype.kind in 'fc'`` and ``x.dtype.kind == 'f'`` (:func:`kind_test`).

Before → after::

    z = np.copy(idx)              z = np.copy idx
    z[0] = x[0]                   t1 = np.issubdtype z
                                  check_1 = check t1 exc='TypeError' negate=True
                                  t2 = array.getitem x index=((0,),)
                                  z_1 = array.setitem z t2 index=((0,),)
"""

from __future__ import annotations

import ast

import numpy

from s2s_ad import ir
from s2s_ad.frontend.runtime_checks import raise_unless

FLOAT_MAKERS = frozenset({"np.zeros", "np.ones", "np.eye", "np.identity", "np.linspace",
                          "own.float_zeros", "own.eye_matrix", "div", "np.mean", "np.var",
                          "np.std", "np.exp", "np.exp2", "np.expm1", "np.log", "np.log10",
                          "np.log2", "np.log1p", "np.sqrt", "np.cbrt", "np.sin", "np.cos",
                          "np.tan", "np.sinh", "np.cosh", "np.tanh", "np.arcsin", "np.arccos",
                          "np.arctan", "np.arcsinh", "np.arctanh", "np.arctan2", "np.hypot",
                          "np.logaddexp", "np.float_power"})
"""Primitives whose result is floating whatever their operands hold."""
FLOAT_PREFIXES = ("math.", "scipy.special.", "np.linalg.")

FOLLOW_FIRST = frozenset({"np.copy", "np.zeros_like", "np.ones_like", "np.full_like",
                          "array.setitem", "array.getitem", "getitem", "np.reshape",
                          "np.transpose", "np.ravel", "np.squeeze", "np.expand_dims",
                          "np.swapaxes", "np.moveaxis", "np.flip", "np.roll", "np.tile",
                          "np.repeat", "np.diag", "np.diagonal", "np.tril", "np.triu",
                          "np.take", "np.take_along_axis", "np.sort", "np.cumsum",
                          "np.cumprod", "np.sum", "np.prod", "np.max", "np.min", "np.trace",
                          "np.pad", "abs", "np.abs", "neg", "pos", "np.negative",
                          "np.square", "own.moved", "own.rolled"})
"""Primitives whose result has their first operand's dtype (or a wider one
only through it)."""

ANY_OPERAND = frozenset({"add", "sub", "mul", "pow", "mod", "floordiv", "np.power",
                         "array.pow", "matmul", "np.dot", "np.matmul", "np.outer", "np.inner",
                         "np.tensordot", "np.einsum", "np.maximum", "np.minimum", "np.clip",
                         "np.cross", "np.concatenate", "np.stack", "np.hstack", "np.vstack",
                         "max", "min"})
"""Primitives whose result is floating when one of their operands is."""

RULES = {"np.inexact": "np.issubdtype", "np.floating": "dtype.floating"}
"""The dtype classes a function may test, ``np.issubdtype(x.dtype, np.C)``,
and their rules."""


def inexact(lo, v) -> bool:
    """Does the code fix ``v``'s dtype to a floating one?"""
    try:
        return _inexact(lo, v)
    except RecursionError:  # a very long chain: not known
        return False


def _inexact(lo, v) -> bool:
    if isinstance(v, ir.Const):
        return isinstance(v.value, float)
    if not isinstance(v, ir.Value):
        return False
    known = lo.dtype_known
    if id(v) in known:
        return known[id(v)]
    known[id(v)] = False  # (a cycle is not a proof)
    op = lo.defs.get(id(v))
    known[id(v)] = _by_op(lo, op) if op is not None else False
    return known[id(v)]


def _by_op(lo, op: ir.Op) -> bool:
    dtype = op.attrs.get("dtype")
    if isinstance(dtype, str):
        return numpy.dtype(dtype).kind in "fc"
    p, args = op.prim, op.args
    if p in FLOAT_MAKERS or p.startswith(FLOAT_PREFIXES):
        return True
    if p == "np.full":
        return len(args) > 1 and _inexact(lo, args[1])
    if p == "np.arange":
        return any(_inexact(lo, a) for a in args)
    if p in ("array.zeros_as", "array.ones_as", "array.full_as"):
        return _inexact(lo, args[-1])
    if p in FOLLOW_FIRST:
        return bool(args) and _inexact(lo, args[0])
    if p == "np.where":
        return any(_inexact(lo, a) for a in args[1:])
    if p in ANY_OPERAND:
        return any(_inexact(lo, a) for a in args)
    return False


def carried(lo, out: ir.Value, *values) -> None:
    """``out`` stands for one of ``values`` (a branch's merge, a loop's
    value before its first iteration): known inexact when each of them is;
    a loop's value has the dtype of the array it starts as."""
    if all(inexact(lo, v) for v in values):
        lo.dtype_known[id(out)] = True
    if len(values) == 1 and isinstance(values[0], ir.Value):
        lo.dtype_origin[id(out)] = values[0]


def settled(lo, param: ir.Value, last, name: str, node: ast.AST) -> None:
    """After a loop's body: ``param`` (known inexact from its value before
    the loop) must still be after an iteration (``last``), since the body's
    writes were lowered without a check on that knowledge."""
    if lo.dtype_known.get(id(param)) and not inexact(lo, last) \
            and id(param) in lo.dtype_relied:
        raise lo.src.error(node, f"`{name}` is written into in this loop as an array of floats, "
                           "but an iteration gives it an array whose dtype the code does not "
                           "fix (it could hold integers, which NumPy would write floats into "
                           "as integers); make it a float array (`.astype(float)`, "
                           "`np.zeros(n)`)")


def check_write(lo, base: ir.Value, value, target: ast.AST) -> None:
    """``base[...] = value``: where ``value`` may carry a derivative and the
    code does not fix ``base``'s dtype to a floating one, a check that it is
    one where the code runs: right after the op that makes the array (once,
    outside the loops that write into it), or before the write where that op
    is not found."""
    if isinstance(value, ir.Const) or not isinstance(value, ir.Value) \
            or value.kind not in ir.DIFFERENTIABLE:
        return
    if inexact(lo, base):
        _relied_through(lo, base)
        return
    made = _origin(lo, base)
    if id(made) in lo.dtype_checked:
        return
    site = lo.op_site.get(id(made))
    op = lo.defs.get(id(made))
    at = next((k for k, o in enumerate(site) if o is op), None) if site is not None else None
    text = lo.__dict__.get("write_text") or ast.unparse(target)  # (np.stack of a list)
    message = (f"`{text}` (line {target.lineno}) writes a value with a derivative into an "
               "array of integers, which NumPy stores as an integer, with no derivative: "
               "make the array a float one (`.astype(float)`, `dtype=float`)")
    if at is None:
        _emit_check(lo, base, target, text, message)
        return
    lo.dtype_checked.add(id(made))
    ops, lo.ops = lo.ops, []
    try:
        _emit_check(lo, made, target, text, message)
        checks = lo.ops
    finally:
        lo.ops = ops
    site[at + 1:at + 1] = checks
    lo.dtype_hoisted.append((site, checks, id(made)))


def mark(lo) -> int:
    """Where the list of hoisted checks stands (before a loop's body is
    lowered, maybe again: :func:`undo`)."""
    return len(lo.dtype_hoisted)


def undo(lo, at: int) -> None:
    """Take back the checks hoisted since :func:`mark` gave ``at``: a loop's
    body lowered again gives its names again, and its writes ask again."""
    while len(lo.dtype_hoisted) > at:
        site, checks, made = lo.dtype_hoisted.pop()
        for op in checks:
            k = next(k for k, o in enumerate(site) if o is op)
            del site[k]
        lo.dtype_checked.discard(made)


def check_fill(lo, like: ir.Value, fill, node: ast.Call) -> None:
    """``np.full_like(a, v)``, ``np.full(n, v, dtype=a.dtype)``: the array
    has ``a``'s dtype; where ``v`` may carry a derivative and the code does
    not fix that dtype to a floating one, a check before the call."""
    if isinstance(fill, ir.Const) or not isinstance(fill, ir.Value) \
            or fill.kind not in ir.DIFFERENTIABLE or inexact(lo, like):
        return
    text = ast.unparse(node)
    message = (f"`{text}` (line {node.lineno}) fills an array of integers with a value that has "
               "a derivative, which NumPy stores as an integer, with no derivative: give the "
               "array a float dtype (`dtype=float`)")
    _emit_check(lo, like, node, text, message)


def _emit_check(lo, array: ir.Value, target: ast.AST, text: str, message: str) -> None:
    is_float = lo.emit("np.issubdtype", [array], target, hint="floats")
    raise_unless(lo, is_float, target, f"{text}: an array of floats", "TypeError", message)


def _origin(lo, v: ir.Value) -> ir.Value:
    """The array ``v`` is a version of: through writes into it and the
    values a loop carries it as."""
    for _ in range(10_000):
        op = lo.defs.get(id(v))
        if op is not None and op.prim == "array.setitem":
            v = op.args[0]
        elif op is None and id(v) in lo.dtype_origin:
            v = lo.dtype_origin[id(v)]
        else:
            return v
    return v


def _relied_through(lo, v) -> None:
    """Mark the loop values ``v``'s dtype was taken from (through the ops
    that keep their first operand's dtype) as relied on."""
    seen = 0
    while isinstance(v, ir.Value) and seen < 10_000:
        seen += 1
        lo.dtype_relied.add(id(v))
        op = lo.defs.get(id(v))
        if op is None or op.prim not in FOLLOW_FIRST or not op.args:
            return
        v = op.args[0]


KINDS = {"fc": "np.issubdtype", "cf": "np.issubdtype", "f": "dtype.floating"}
"""The dtype kinds a function may test, ``x.dtype.kind in 'fc'`` (``== 'f'``),
and the rules: the same bools as ``np.issubdtype(x.dtype, np.inexact)``
(``np.floating``), which the generated code spells this way (a string test
where ``np.issubdtype`` makes several calls)."""


def kind_test(lo, node: ast.Compare, var, hint) -> ir.Value | None:
    """``x.dtype.kind in 'fc'``, ``not in``, ``== 'f'``, ``!= 'f'``: a bool
    where the code runs, with no derivative; None for any other comparison."""
    op = type(node.ops[0])
    left, right = node.left, node.comparators[0]
    if not (len(node.ops) == 1 and op in (ast.In, ast.NotIn, ast.Eq, ast.NotEq)
            and isinstance(left, ast.Attribute) and left.attr == "kind"
            and isinstance(left.value, ast.Attribute) and left.value.attr == "dtype"
            and not lo.is_global_path(left.value.value)):
        return None
    kinds = right.value if isinstance(right, ast.Constant) and isinstance(right.value, str) \
        else None
    if op in (ast.Eq, ast.NotEq) and kinds is not None and len(kinds) != 1:
        kinds = None
    rule = KINDS.get(kinds) if kinds is not None else None
    if rule is None:
        raise lo.src.error(node, f"`{ast.unparse(node)}`: the dtype kinds a function may test "
                           "are `x.dtype.kind in 'fc'` (floating or complex) and "
                           "`x.dtype.kind == 'f'` (floating), with `not in` and `!=`")
    x = lo.expr(left.value.value)
    if not isinstance(x, ir.Value) or x.kind != "array":
        raise lo.src.error(left, f"`{ast.unparse(left)}`: the dtype kind of an array")
    text = ast.unparse(node)
    if op in (ast.In, ast.Eq):
        return lo.emit(rule, [x], node, var, hint=hint, text=text)
    is_kind = lo.emit(rule, [x], node, None, hint=hint, text=text)
    return lo.emit("not", [is_kind], node, var, hint=hint, text=text)


def issubdtype(lo, node: ast.Call, var, hint, text) -> ir.Value:
    """``np.issubdtype(x.dtype, np.inexact)`` (or ``np.floating``): a bool
    where the code runs, with no derivative."""
    args = node.args
    if len(args) != 2 or node.keywords or not isinstance(args[0], ast.Attribute) \
            or args[0].attr != "dtype" or lo.is_global_path(args[0].value) \
            or not lo.is_global_path(args[1]):
        raise lo.src.error(node, "`np.issubdtype` is supported as `np.issubdtype(x.dtype, "
                           "np.inexact)` or `np.issubdtype(x.dtype, np.floating)`, `x` an array")
    cls = lo.resolve(args[1])
    rule = next((r for name, r in RULES.items() if getattr(numpy, name[3:]) is cls), None)
    if rule is None:
        raise lo.src.error(args[1], f"`{ast.unparse(args[1])}`: the dtype classes "
                           "`np.issubdtype` is supported with are np.inexact and np.floating")
    x = lo.expr(args[0].value)
    if not isinstance(x, ir.Value) or x.kind != "array":
        raise lo.src.error(args[0], f"`{ast.unparse(args[0])}`: the dtype of an array")
    return lo.emit(rule, [x], node, var, hint=hint, text=text)
