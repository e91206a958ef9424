"""Adjoints ``np.where`` leaves zero at the elements it did not pick.

``np.where(c, v, y)`` passes its adjoint to ``v`` where ``c`` holds and
zero elsewhere. The elements of ``v`` it does not pick may be where ``v``'s
own producer has an infinite local derivative (its result there is nan or
inf, which ``np.where`` discards: the guard the code is written for), and
the zero adjoint times that derivative is nan:

    t1 = a > 0
    t2 = np.sqrt(a)               # nan where a < 0, discarded below
    t3 = np.where(t1, t2, 0.0)

    dt2 = np.where(t1, dt3, 0.0)
    da = dt2 / (2.0 * t2)          # nan where a < 0: should be 0

Central differences give 0 there (the function is 0 near such an ``a``),
and so does forward mode, whose ``np.where`` picks the tangent. The sweep
takes the producer's backward under the same condition, as the guard of a
branch (``s2s_ad.reverse.untouched``) does for numbers:

    da = np.where(t1, dt2 / (2.0 * t2), 0.0)

Only where that is exact. The condition is made elementwise from values
(comparisons with numbers or of two arrays, the tests ``np.isnan``,
``np.isfinite``, ``np.isinf``, and ``&``, ``|``, ``^``, ``~`` of those), each
of a shape that broadcasts into the discarded value's (the value is made
from it elementwise, or has its shape class), so the where's adjoint to the
value is zero by structure wherever the condition did not pick: the where
did not pick any element broadcast from it. :func:`plan` carries that zero back from the result: a value whose
every read, in the same region, gives such a zero (a where, or an
elementwise op whose own adjoint is zero there, the condition fitting the
operand's shape) has a zero adjoint wherever none of those conditions
picks (read by ``np.where(a > 0, r, 0.0)`` and ``np.where(a > 0.5, 2.0 * r,
0.0)``: where neither holds; read by a where whose result is masked in
turn: where either drops it), and its producer's backward is taken there
under the conditions (:func:`wrap`: ``np.logical_or`` of them), before it
is summed back to an operand's shape, wherever it reads a forward value
(``dt * t2`` reads the nan root; ``dt * 2.0`` is zero there anyway). The
value a masked element gets is the zero it would have with finite
derivatives. The safe mean, ``np.where(n > 0, s / n, 0.0)``, is the same
case:

    ds = unbroadcast(np.where(t1, dt2 / n, 0.0), s)

and so is the gradient of a JVP module, whose tangent ``da / (2.0 * t2)``
the tangent's own ``np.where(t1, dt2, 0.0)`` discards.
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.reverse import analysis
from s2s_ad.rules import RULES
from s2s_ad.rules.numpy import BROADCASTING, SAME_SHAPE

_COMPARISONS = frozenset(("gt", "ge", "lt", "le", "eq", "ne"))
_TESTS = frozenset(("np.isnan", "np.isfinite", "np.isinf"))
_LOGICAL = frozenset(("np.logical_and", "np.logical_or", "np.logical_xor", "np.logical_not"))
_NOT_ELEMENTWISE = frozenset(("array.setitem", "np.cross"))
"""Of the primitives that broadcast or keep their operand's shape, those
whose result's element reads other elements (``np.cross``: the other two
components), so that a mask of the result is none of an operand."""


def _elementwise(op: ir.Op) -> list[ir.Value] | None:
    """The array operands of an elementwise op (its other operands numbers
    written in the code), or None for any other op."""
    rule = RULES.get(op.prim)
    if op.callee is not None or rule is None or op.prim in _NOT_ELEMENTWISE \
            or op.prim not in SAME_SHAPE and op.prim not in BROADCASTING and not rule.broadcast:
        return None
    if any(not isinstance(a, (ir.Value, ir.Const)) for a in op.args):
        return None
    return [a for a in op.args if isinstance(a, ir.Value)] or None


def _compared(test: ir.Op | None, producers: dict, depth: int = 0) -> list[ir.Value] | None:
    """The values whose shapes make the condition's, or None where it is
    not made from them elementwise: what a comparison compares (with a
    number or another array, ``a > b``), the comparisons ``np.logical_and``,
    ``np.logical_or``, ``np.logical_xor`` and ``np.logical_not`` of them make
    (``(a > 0) & (a < 5.0)``, ``~(a <= 0)``), or what ``np.isnan``,
    ``np.isfinite`` and ``np.isinf`` test."""
    if test is None or depth > 8:
        return None
    if test.prim in _LOGICAL:
        if any(not isinstance(a, ir.Value) for a in test.args):
            return None
        parts = [_compared(producers.get(id(a)), producers, depth + 1) for a in test.args]
        return None if any(p is None for p in parts) else [v for p in parts for v in p]
    if test.prim not in _COMPARISONS and test.prim not in _TESTS:
        return None
    values = [a for a in test.args if isinstance(a, ir.Value)]
    if not values or any(not isinstance(a, (ir.Value, ir.Const)) for a in test.args):
        return None
    return values


def _within(c: ir.Value, x: ir.Value, producers: dict, shapes: dict, depth: int) -> bool:
    """Does ``c``'s shape broadcast into ``x``'s? Where ``c`` is ``x``, of its
    shape class, or so for an operand of the elementwise op making ``x``
    (whose result has the shape its operands broadcast to)."""
    if c is x or shapes.get(id(c)) is not None and shapes.get(id(c)) is shapes.get(id(x)):
        return True
    own = producers.get(id(x))
    operands = _elementwise(own) if own is not None and depth < 8 else None
    return operands is not None and any(_within(c, a, producers, shapes, depth + 1)
                                        for a in operands)


def plan(func: ir.Function, shapes: dict) -> dict:
    """id of each op whose backward is taken under a mask -> the picks of
    the wheres that give it: each a where's condition and whether it keeps
    the elements where the condition holds (elements no pick picks are
    masked).

    A value's adjoint is zero by structure where a mask does not pick when
    every contribution its reads make is: a ``np.where``'s (the condition
    fitting the value's shape), or one of a masked elementwise op's (the
    mask fitting the operand's shape), in the same region. The ops are read
    from the result back, so a value's reads are seen before its producer."""
    ops = [node for node in ir.walk(func.body) if isinstance(node, ir.Op)]
    if not any(op.prim == "np.where" for op in ops):
        return {}
    producers = {id(op.out): op for op in ops}
    scope = analysis.scopes(func)
    made: dict[int, list] = {}
    """id(value) -> the mask of each contribution to its adjoint (None: none)."""

    def add(v, mask) -> None:
        if isinstance(v, ir.Value):
            made.setdefault(id(v), []).append(mask)

    def fits(compared: list, x: ir.Value) -> bool:
        """Does a condition comparing ``compared`` broadcast into ``x``'s shape?"""
        return all(_within(c, x, producers, shapes, 0) for c in compared)

    for node in ir.walk(func.body):  # reads that are not ops', and results: no mask
        if not isinstance(node, ir.Op):
            for a in ir.operands(node):
                add(a, None)
            for r in node.regions:
                for y in r.yields:
                    add(y, None)
    for r in [*func.body.yields, *(func.outputs if func.result is None and func.outputs
                                   else [func.result])]:
        add(r, None)
    out: dict = {}
    for op in reversed(ops):
        mask = _joined(made.get(id(op.out)))
        if mask is not None and _elementwise(op) is not None:
            out[id(op)] = mask
        else:
            mask = None
        own = None
        if op.prim == "np.where" and isinstance(op.args[0], ir.Value):
            compared = _compared(producers.get(id(op.args[0])), producers)
            if compared is not None:
                own = {i: (((op.args[0], i == 1, tuple(compared)),),) for i in (1, 2)}
        for i, (a, flows) in enumerate(zip(op.args, analysis.differentiable(op))):
            if not isinstance(a, ir.Value) or not flows:
                continue
            m = mask if own is None else own[i] if mask is None else _narrowed(mask, own[i])
            if m is not None and scope[id(a)].region is scope[id(op.out)].region:
                add(a, _fitting(m, a, lambda c, x: fits(list(c), x)))
            else:
                add(a, None)
    return out


def _narrowed(mask: tuple, own: tuple) -> tuple:
    """The mask of an operand of a where whose result is masked: picked
    where the where picks it and one of the result's picks holds
    (``np.where(a <= 0, 0.0, np.where(a > 1, f, np.sqrt(a)))``: the root's
    adjoint is zero where ``a <= 0`` or ``a > 1``)."""
    (mine,) = own
    return tuple(conj + mine for conj in mask)


def _fitting(mask: tuple, x: ir.Value, fits) -> tuple | None:
    """``mask`` as a mask of ``x``: each conjunction keeps the conditions
    whose shape broadcasts into ``x``'s (one on an array of another shape,
    dropped, only makes fewer elements zero); None where a conjunction keeps
    none (it picks every element)."""
    out = tuple(tuple(lit for lit in conj if fits(lit[2], x)) for conj in mask)
    return None if any(not conj for conj in out) else out


def _joined(masks: list | None) -> tuple | None:
    """The mask of a value from those of the contributions to its adjoint:
    zero where no contribution's mask picks, so the picks of them all (each
    a conjunction of conditions, each held or not, with the values whose
    shapes make the condition's), or None where a contribution has no mask
    or some condition picks every element (kept by one contribution,
    dropped by another)."""
    if not masks or any(m is None for m in masks):
        return None
    picks: dict = {}
    for m in masks:
        for conj in m:
            picks.setdefault(tuple((id(test), keep) for test, keep, _ in conj), conj)
    if any(len(k) == 1 and ((k[0][0], not k[0][1]),) in picks for k in picks):
        return None
    return tuple(picks.values())


def _linear(contrib: ast.expr, sweep) -> bool:
    """Is ``contrib`` the adjoint times constants (``dt4 * 2.0``,
    ``unbroadcast(dt, x)``), zero where the adjoint is, whatever the forward
    values there? A backward reading forward values (``dt * t2``, ``dt / n``)
    may meet the nan or inf the where discarded."""
    adjoints = set(sweep.adj.values())
    unbroadcast = sweep.arrays.named("unbroadcast")
    parts = [contrib]
    while parts:
        e = parts.pop()
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == unbroadcast:
            parts.append(e.args[0])  # its second operand is read for its shape only
        elif isinstance(e, ast.IfExp):
            parts += [e.body, e.orelse]  # (its test is a flag of shapes)
        elif isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult)):
            parts += [e.left, e.right]
        elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            parts.append(e.operand)
        elif not (isinstance(e, ast.Constant) or isinstance(e, ast.Name) and e.id in adjoints):
            return False
    return True


def wrap(sweep, op: ir.Op, i: int, contrib: ast.expr) -> ast.expr:
    """``op``'s backward ``contrib`` to operand ``i`` under its mask, where it
    has one and the backward may be infinite; else ``contrib``. The mask
    applies to the backward before it is summed to the operand's shape
    (``unbroadcast(np.where(c, g / n, 0.0), s)`` for ``s / n``), or to all of
    it where the operand has the result's shape."""
    picks = sweep.masks.get(id(op))
    if picks is None or _linear(contrib, sweep):
        return contrib
    np_name = sweep.modules["numpy"]

    def call(fn: str, args: list) -> ast.expr:
        return ast.Call(ast.Attribute(ast.Name(np_name, ast.Load()), fn, ast.Load()), args, [])

    single = len(picks) == 1 and len(picks[0]) == 1
    keep = not single or picks[0][0][1]

    def joined(fn: str, parts: list) -> ast.expr:
        made = parts[0]
        for part in parts[1:]:
            made = call(fn, [made, part])
        return made

    def condition() -> ast.expr:
        if single:
            return sweep.ref(picks[0][0][0])
        # picked by any of the wheres reading the value (through all the
        # wheres nested on the way: each of a conjunction's)
        return joined("logical_or", [
            joined("logical_and", [sweep.ref(t) if k else call("logical_not", [sweep.ref(t)])
                                   for t, k, _ in conj]) for conj in picks])

    def masked(e: ast.expr) -> ast.expr:
        picked = [e, ast.Constant(0.0)] if keep else [ast.Constant(0.0), e]
        return call("where", [condition()] + picked)

    unbroadcast = sweep.arrays.named("unbroadcast")

    def under(e: ast.expr, same_shape: bool) -> ast.expr | None:
        if isinstance(e, ast.IfExp):  # `g if flat else unbroadcast(g, x)` (flat_shapes)
            body, orelse = under(e.body, True), under(e.orelse, same_shape)
            return None if body is None or orelse is None else ast.IfExp(e.test, body, orelse)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) \
                and e.func.id == unbroadcast and len(e.args) == 2:
            return ast.Call(e.func, [masked(e.args[0]), e.args[1]], e.keywords)
        return masked(e) if same_shape else None

    shapes = sweep.arrays.shapes
    same = len(_elementwise(op)) == 1 or shapes.get(id(op.args[i])) is not None \
        and shapes.get(id(op.args[i])) is shapes.get(id(op.out))  # the operand has the result's shape
    made = under(contrib, same)
    return contrib if made is None else made
