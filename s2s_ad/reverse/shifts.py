"""Shifts that cancel: a value the result provably does not depend on.

Contract: :func:`cancelled` returns the ids of values whose every use cancels
by an algebraic identity, so the result's derivative with respect to them is
exactly zero and the reverse transform may treat them as constants. The one
family recognised is the shift of the numerically stable log-sum-exp, softmax
and log-softmax::

    m = np.max(Z, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(Z - m), axis=1, keepdims=True))

``m`` is constant along the summed axis, so ``Σ exp(Z - m) = e^(-m)·Σ exp(Z)``
and ``lse = log Σ exp(Z)`` whatever ``m`` is: ∂lse/∂m = 0. Followed through
the chain rule, ``m``'s adjoint would be ``dlse·(1 - Σ softmax)``, zero up to
rounding, and then spread over the maximum's elements (a comparison, a count
and a division per element). With ``m`` constant the sweep computes ``∂lse/∂Z``
at fixed ``m``, which is softmax: the gradient of ``log Σ exp(Z)`` itself.

Before → after (the reverse sweep of ``lse`` above, ``dZ`` already holding
the adjoint from ``Z``'s other uses)::

    dt3 = dlse / t3                              dt3 = dlse / t3
    dt1 = dt3 * t2                      ──▶      dt1 = dt3 * t2
    dZ = dZ + dt1                                dZ = dZ + dt1
    dm = dlse - unbroadcast(dt1, m)
    dZ = dZ + extreme_adjoint(dm, Z, m, 1)

How it is proved: every value computed from ``m`` gets a tag saying how it
depends on it — ``u + k·m`` (shifted) or ``u·e^(k·m)`` (scaled), with ``u`` free
of ``m`` — through ``+ - *  / -x``, ``np.exp`` (shifted → scaled), ``np.log``
(scaled → shifted) and ``np.sum`` over the axes along which ``m`` is constant
(scaled stays scaled). A value whose ``k`` comes out 0 (``m + log Σ exp(Z - m)``,
``(Z - m) - log Σ …``, ``e / Σ e``) no longer depends on ``m``. ``m`` cancels
when every value tagged with a non-zero ``k`` is used only by such operations
in the same straight-line region, never returned, yielded or passed on. The
operands combined with tagged values must be scalars or have ``Z``'s shape
(:func:`s2s_ad.reverse.analysis.shape_classes`), so ``m`` stays lined up with ``Z``'s
axes. Anything else leaves ``m`` an ordinary value with its adjoint.
"""

from __future__ import annotations

from s2s_ad.reverse import analysis
from s2s_ad import ir
from s2s_ad.emit.code import Stmt
from s2s_ad.rules import RULES

SHIFTS = frozenset({"np.max", "np.min"})
"""Reductions whose result is subtracted to keep ``np.exp`` from overflowing."""


def cancelled(func: ir.Function) -> set[int]:
    """ids of values the result of ``func`` provably does not depend on."""
    if "numpy" not in func.modules:
        return set()
    classes = analysis.shape_classes(func)
    counts = analysis.uses(func)
    out: set[int] = set()
    for region in _regions(func.body):
        ops = [n for n in region.ops if isinstance(n, ir.Op)]
        for k, op in enumerate(ops):
            if op.prim in SHIFTS and isinstance(op.args[0], ir.Value) \
                    and _cancels(op, ops[k + 1:], classes, counts):
                out.add(id(op.out))
    return out


def note(func: ir.Function, wrt: list[ir.Value]) -> list:
    """A comment for the generated code naming the shifts that would have had
    an adjoint (they depend on ``wrt`` and the result reads them) and get none."""
    gone = cancelled(func)
    if not gone:  # most functions: no shift, no need for the activity analyses
        return []
    gone &= analysis.varied(func, wrt) & analysis.useful(func)
    names = [op.out.name for op in ir.walk(func.body)
             if isinstance(op, ir.Op) and id(op.out) in gone]
    if not names:
        return []
    one = len(names) == 1
    return [Stmt(None, f"{', '.join(names)} {'gets' if one else 'get'} no adjoint: the result "
                       f"does not depend on {'it' if one else 'them'} (a shift that cancels, "
                       f"docs/numpy.md)")]


def _regions(region: ir.Region):
    yield region
    for node in region.ops:
        if not isinstance(node, ir.Op):
            for r in node.regions:
                yield from _regions(r)


def _attrs(op: ir.Op) -> dict:
    return {**dict(RULES[op.prim].attrs), **op.attrs}


def _cancels(shift: ir.Op, later: list[ir.Op], classes: dict, counts: dict) -> bool:
    """Does every use of ``shift.out`` cancel (see the module docstring)?"""
    z = shift.args[0]
    attrs = _attrs(shift)
    axis, keep = attrs.get("axis"), bool(attrs.get("keepdims"))
    if axis is not None and not keep:
        return False  # m has lost the summed axis: it no longer lines up with Z
    tags: dict[int, tuple[str, int]] = {id(shift.out): ("shift", 1)}
    seen: dict[int, int] = {}
    for op in later:
        tagged = [tags.get(id(a)) if isinstance(a, ir.Value) else None for a in op.args]
        if not any(tagged):
            continue
        for a, t in zip(op.args, tagged):
            if t is not None:
                seen[id(a)] = seen.get(id(a), 0) + 1
            elif not (isinstance(a, ir.Const) or a.kind in ("float", "int")
                      or (classes.get(id(a)) is not None
                          and classes.get(id(a)) is classes.get(id(z)))):
                return False  # another shape: m might not line up with it
        tag = _tag(op, tagged, axis)
        if tag is None:
            return False
        if tag[1] != 0:
            tags[id(op.out)] = tag
    # every use of a tagged value is one of the operations above
    return all(seen.get(v, 0) == counts.get(v, 0) for v in tags)


def _tag(op: ir.Op, tagged: list, axis) -> tuple[str, int] | None:
    """How ``op.out`` depends on the shift, from its operands' tags (None for
    an untagged operand: free of the shift); None when it is not tracked."""
    kinds = {t[0] for t in tagged if t is not None}
    ks = [t[1] if t is not None else 0 for t in tagged]
    if len(kinds) != 1:
        return None
    (kind,) = kinds
    prim = op.prim
    if kind == "shift":
        if prim == "add":
            return "shift", ks[0] + ks[1]
        if prim == "sub":
            return "shift", ks[0] - ks[1]
        if prim == "neg":
            return "shift", -ks[0]
        if prim == "np.exp":
            return "scale", ks[0]
        return None
    if prim == "mul":
        return "scale", ks[0] + ks[1]
    if prim == "div":
        return "scale", ks[0] - ks[1]
    if prim == "np.log":
        return "shift", ks[0]
    if prim == "np.sum":
        attrs = _attrs(op)
        # Σ u·e^(k·m) = e^(k·m)·Σ u only along axes where m is constant, and
        # the sum must keep them for m to stay lined up
        if axis is None or (attrs.get("axis") == axis and attrs.get("keepdims")):
            return "scale", ks[0]
    return None
