"""Tangents of the NumPy primitives whose reverse rule is a whole adjoint.

Elementwise rules give a local partial per operand, and forward mode uses it
as it is (``dout = Σ dxᵢ · ∂out/∂xᵢ``, broadcasting does the rest). A rule
marked ``adjoint=True`` (reductions, matrix products, shape changes,
indexing) gives a vector-Jacobian product instead, which forward mode cannot
apply. For those the tangent comes from the *forward* template itself:

* ``LINEAR``: the primitive is linear in its differentiable operands, so the
  tangent is the primitive applied to their tangents (``np.sum(dx, axis=0)``,
  ``dx[i]``, ``np.concatenate((da, db))``), the other operands (indices,
  shapes, a condition) unchanged;
* ``BILINEAR``: a product, so the tangent is the sum over operands of the
  primitive with that operand replaced by its tangent (``dx @ y + x @ dy``).

* ``EXTREME`` (``np.max``, ``np.min``): the tangent at the extreme, ties
  averaged with the weights the reverse rule splits the adjoint by
  (the tangents where ``x`` equals its extreme, summed, over how many do), so
  forward and reverse mode are transposes of one linear map; written in the
  subset s2s-ad differentiates, so the JVP module can be differentiated again.

The other whole-adjoint rules (``np.prod``, ``np.var``,
``np.linalg.inv``, ...) get a tangent written out in a few lines by
:mod:`s2s_ad.forward.recipes` (:func:`kind` returns None for them); a
primitive with neither is refused where it is used.

>>> kind("np.sum"), kind("matmul"), kind("np.prod")
('linear', 'bilinear', None)
"""

from __future__ import annotations

import ast

from s2s_ad.rules.numpy_more import LINEAR_MORE

LINEAR = frozenset({
    "np.sum", "np.mean", "np.cumsum", "np.trace", "np.transpose", "np.reshape", "np.ravel",
    "np.squeeze", "np.expand_dims", "np.swapaxes", "np.moveaxis", "np.flip", "np.roll",
    "np.repeat", "np.tile", "np.diag", "np.tril", "np.triu", "np.copy", "np.concatenate",
    "np.stack", "np.hstack", "np.vstack", "np.where", "array.getitem", "array.setitem",
    "np.take", "np.take_along_axis", "np.diagonal", "np.pad", "axis.front", "axis.back",
    "own.unbroadcast", "own.spread", "own.extreme_adjoint", "own.astype_like",
    "own.total", "own.array_sum", "own.own", "own.rolled", "own.moved", "own.tile_adjoint",
    "own.repeat_adjoint", "own.trace_adjoint", "own.diag_adjoint", "own.stacked_part",
    "own.scatter", "own.take_along_axis_adjoint", "own.pad_adjoint", "own.seeded",
    "np.full", "np.full_like", "array.full_as", "array.astype", "array.item",
    "np.float64", "np.float32",
    "np.linspace", "own.running_extreme_adjoint", "own.running_extreme_tangent"}) | LINEAR_MORE
"""Linear in the operands a derivative flows to (``np.where``: in its two
branches, for a fixed condition; a subscript assignment: in the array and the
value assigned)."""

BILINEAR = frozenset({"matmul", "np.matmul", "np.dot", "np.outer", "np.inner", "np.cross",
                      "np.tensordot", "np.einsum", "np.kron", "own.matmul_adjoint.0",
                      "own.matmul_adjoint.1", "own.inner_adjoint.0", "own.inner_adjoint.1",
                      "own.dot_adjoint.0", "own.dot_adjoint.1", "own.tensordot_adjoint.0",
                      "own.tensordot_adjoint.1", "own.kron_adjoint.0", "own.kron_adjoint.1",
                      "np.convolve", "own.convolve_adjoint.0", "own.convolve_adjoint.1"})
"""Linear in each operand (``np.einsum`` of any number: multilinear), so the
tangent is the sum over operands of the primitive with that operand's tangent."""


EXTREME = frozenset({"np.max", "np.min"})
EXTREME_TANGENT = ast.parse(
    "np.sum(np.where(x == keep(out), g, 0.0), axis=axis, keepdims=keepdims)"
    " / np.sum(np.where(x == keep(out), 1.0, 0.0), axis=axis, keepdims=keepdims)",
    mode="eval").body
"""The tangent of ``np.max``/``np.min`` (``g``: the operand's tangent)."""


TANGENTS = {prim: tuple(None if c is None else ast.parse(c, mode="eval").body
                        for c in ((code,) if isinstance(code, str) else code))
            for prim, code in {
    "np.nansum": "np.nansum(np.where(x == x, g, 0.0), axis=axis, keepdims=keepdims)",
    "np.nanmean": "np.nansum(np.where(x == x, g, 0.0), axis=axis, keepdims=keepdims)"
                  " / np.sum(x == x, axis=axis, keepdims=keepdims)",
    "np.quantile": ("quantile_tangent(g, x, y, axis, keepdims, method)",
                    "quantile_q_tangent(g, x, y, axis, keepdims, method)"),
    "np.percentile": ("quantile_tangent(g, x, y / 100, axis, keepdims, method)",
                      "quantile_q_tangent(g / 100, x, y / 100, axis, keepdims, method)"),
    "np.median": 'quantile_tangent(g, x, 0.5, axis, keepdims, "linear")',
    "own.quantile_adjoint": ("quantile_adjoint(g, x1, x2, axis, keepdims, method)", None,
                             "quantile_mixed_x(g, x0, x1, x2, axis, keepdims, method)"),
    "own.quantile_tangent": ("quantile_tangent(g, x1, x2, axis, keepdims, method)", None,
                             "quantile_mixed_tangent(g, x0, x1, x2, axis, keepdims, method)"),
    "own.quantile_q_adjoint": ("quantile_q_adjoint(g, x1, x2, axis, keepdims, method)",
                               "quantile_mixed_q(x0, g, x1, x2, axis, keepdims, method)", None),
    "own.quantile_q_tangent": ("quantile_q_tangent(g, x1, x2, axis, keepdims, method)",
                               "quantile_mixed_tangent(x0, g, x1, x2, axis, keepdims, method)",
                               None),
    "np.maximum.accumulate": "running_extreme_tangent(g, x, out, axis)",
    "np.minimum.accumulate": "running_extreme_tangent(g, x, out, axis)"}.items()}
"""Tangents written out, per operand (one code: the first operand's; ``g``:
that operand's tangent), summed over the operands a tangent reaches:
``np.nansum`` and ``np.nanmean`` of the tangent where ``x`` is not NaN
(``x == x``); ``np.quantile``, ``np.percentile`` and ``np.median``: the
weights the reverse rule spreads the adjoint by, applied to the tangent
(``quantile_tangent``, a helper of the generated module), and ``q``'s tangent
times the derivative in ``q`` (``quantile_q_tangent``); ``np.maximum.accumulate``
and ``np.minimum.accumulate`` likewise (``running_extreme_tangent``)."""


def kind(prim: str) -> str | None:
    """"linear", "bilinear", "extreme", "template" (:data:`TANGENTS`), or None
    (no forward rule for this whole-adjoint primitive)."""
    if prim in EXTREME:
        return "extreme"
    if prim in TANGENTS:
        return "template"
    if prim in LINEAR:
        return "linear"
    if prim in BILINEAR:
        return "bilinear"
    return None
