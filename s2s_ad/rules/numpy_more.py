"""More NumPy and SciPy rules: what scientific code calls beyond the core
table of :mod:`s2s_ad.rules.numpy` (same table style, same conventions).

* ``np.broadcast_to(x, shape)``, ``np.atleast_1d/2d/3d(x)``: the adjoint is
  ``g`` summed over the broadcast axes, or reshaped back.
* ``np.kron(x, y)``: ``g`` read as the blocks of the product (its axes split
  in pairs), contracted with the other operand (``kron_adjoint``).
* ``np.sinc(x)``: ``(cos πx − sinc x)/x``, 0 at 0 (where sinc is flat).
* ``np.nansum``, ``np.nanmean``: as ``np.sum``/``np.mean`` over the elements
  that are not NaN; a NaN gets no adjoint (``x == x`` is False only there).
* ``np.linalg.eigh(x)``: two rules, the eigenvalues and the eigenvectors
  (``w, v = np.linalg.eigh(x)``), and ``np.linalg.eigvalsh``. With
  ``s = v·(diag(w̄) + F∘(vᵀ·v̄))·vᵀ``, ``F[i, j] = 1/(w[j] − w[i])`` off the
  diagonal, the adjoint is ``tril(s + sᵀ) − diag s``: NumPy reads only the
  lower triangle of ``x``. Where two eigenvalues coincide (to rounding) the
  eigenvectors are not a function of ``x`` and ``F`` is infinite: the
  eigenvector adjoint raises ``np.linalg.LinAlgError`` when the code runs
  instead of returning inf or nan (the eigenvalues' adjoint is defined).
* ``np.linalg.pinv(x)`` of a full-rank ``x``: with ``p = pinv(x)``,
  ``−pᵀḡpᵀ + (I − xp)ḡᵀpᵀ... `` (``pinv_adjoint``; the derivative of the
  pseudo-inverse where the rank does not change).
* ``scipy.linalg.solve_triangular(a, b, lower=...)``: ``b̄ = a⁻ᵀḡ`` (a
  triangular solve), ``ā = −b̄·outᵀ`` on the triangle ``a`` is read from.
* ``c, low = scipy.linalg.cho_factor(a, lower=...)`` and
  ``scipy.linalg.cho_solve((c, low), b)``: ``c`` holds the Cholesky factor in
  one triangle and ``a``'s own elements in the other (LAPACK leaves them),
  so ``cho_factor``'s adjoint is the Cholesky adjoint on the factor's
  triangle and ``c̄`` itself on the other; ``cho_solve`` reads the factor's
  triangle only: ``b̄ = cho_solve(ḡ)``, ``c̄ = tril((m + mᵀ)·L)`` with
  ``m = −b̄·outᵀ`` (``triu(U·(m + mᵀ))`` for an upper factor).

* ``np.convolve(a, v, mode)`` (1-D, modes ``"full"``, ``"same"``,
  ``"valid"``): the result is a slice of the full convolution, starting at 0,
  ``(min(n, m) − 1) // 2`` or ``min(n, m) − 1``; ``ā`` is ``g`` put back in
  that place among zeros (``np.pad``), correlated with ``v``:
  ``ā[j] = Σₖ ḡ[j + k]·v[k]`` (``np.correlate(..., mode="valid")``), and ``v̄``
  likewise with ``a`` (``convolve_adjoint``). Bilinear: forward mode adds
  ``np.convolve(da, v) + np.convolve(a, dv)``.

* ``np.quantile(x, q, axis, keepdims, method)``, ``np.percentile`` (``q``
  in percent) and ``np.median`` (``q`` = 1/2), ``method`` ``"linear"`` (the
  default), ``"lower"``, ``"higher"`` or ``"midpoint"``: the result is
  ``(1 − t)·lower + t·higher``, ``lower`` and ``higher`` the order statistics
  at ``floor((n − 1)·q)`` and ``ceil((n − 1)·q)`` and ``t`` the fraction of
  ``(n − 1)·q`` (0, 1 and 1/2 for the other methods); each one's weight goes to
  the elements of ``x`` equal to it, split evenly between ties (as for
  ``np.max``), found by comparing ``x`` with ``np.quantile(..., method="lower")``
  and ``"higher"`` — no sort, so the adjoint stays in Dask where the function
  does (``quantile_weights``). Forward mode applies the same weights to the
  tangent (``quantile_tangent``, the transpose of ``quantile_adjoint``).
  With respect to ``q`` the result moves as ``t`` does: ``(n − 1)·(higher −
  lower)`` per unit of ``q`` for ``"linear"`` (``quantile_slope``; 0 where
  ``(n − 1)·q`` is an integer, lower and higher being one element there), 0
  for the other methods (constant between order statistics); ``q̄`` is ``g``
  times that summed over the result's axes after ``q``'s
  (``quantile_q_adjoint``), the tangent ``dq`` times it
  (``quantile_q_tangent``); ``np.percentile`` divides both by 100.

* ``np.maximum.accumulate(x, axis=0)`` and ``np.minimum.accumulate`` (the
  running maximum and minimum): ``out[k]`` is an element ``x[j]``, ``j ≤ k``,
  of the run of equal values of ``out`` holding ``k`` (``out`` is monotonic),
  so ``ḡ[k]`` goes to it, split evenly between the elements of that run up to
  ``k`` equal to ``out[k]`` (ties, as for ``np.max``): ``x̄[j]`` is the sum of
  ``ḡ[k] / count[k]`` from ``j`` to the end of its run, a difference of
  ``np.cumsum``'s, the runs' ends found by ``np.maximum.accumulate`` of
  indices (``running_extreme_adjoint``). Forward mode applies the same
  weights to the tangent (``running_extreme_tangent``, its transpose). Dask
  has no ``accumulate`` of these ufuncs: the function itself does not run
  there.

* ``np.delete(x, obj, axis)`` (``obj`` an int, a list or array of ints, a
  mask, or a slice with constant bounds; ``axis`` None for the flattened
  array): the result is the elements ``np.delete`` keeps, so ``x̄`` is ``ḡ``
  put back at those positions, zeros at the deleted ones
  (``delete_adjoint``: the kept positions are ``np.delete`` of
  ``np.arange(n)``, read with ``np.take``; no writes). Linear: forward mode
  deletes from the tangent. A slice is written into the call as its
  constants (``delete_slice_adjoint``), since a slice is no value of the IR.

SciPy is optional: the generated module imports ``scipy.linalg as
scipy_linalg`` only when the function calls one of these.
"""

from __future__ import annotations

from . import Rule

AXIS = (("axis", None), ("keepdims", False))
_LOWER = (("lower", False),)
_QUANTILE_ATTRS = AXIS + (("method", "linear"),)
_QUANTILE = "1 − t to the order statistic at floor((n − 1)·q), t to the next"
_TIES = ("ties split the adjoint evenly (as for np.max); ∂/∂q is 0 for the methods other "
         "than \"linear\" and where (n − 1)·q is an integer")


def _atleast(n: int) -> Rule:
    return Rule(f"np.atleast_{n}d", f"np.atleast_{n}d(x)", ("np.reshape(g, np.shape(x))",),
                "array", "reshape back", adjoint=True)


NUMPY_MORE_RULES = [
    Rule("np.broadcast_to", "np.broadcast_to(x, y)", ("unbroadcast(g, x)", None), "array",
         "g summed over the broadcast axes", adjoint=True),
    _atleast(1), _atleast(2), _atleast(3),
    Rule("np.kron", "np.kron(x, y)", ("kron_adjoint(g, x, y, 0)", "kron_adjoint(g, x, y, 1)"),
         "array", "∂/∂x: each block of g contracted with y (and ∂/∂y likewise)", adjoint=True),
    Rule("np.sinc", "np.sinc(x)",
         ("np.where(x == 0, 0.0, (np.cos(np.pi * x) - out) / np.where(x == 0, 1.0, x))",),
         "array", "(cos πx − sinc x)/x", "0 at 0"),
    Rule("np.nansum", "np.nansum(x, axis=axis, keepdims=keepdims)",
         ("np.where(x == x, spread(keep(g), x), 0.0)",), "array",
         "1 for each summed element, 0 at a NaN", adjoint=True, attrs=AXIS),
    Rule("np.nanmean", "np.nanmean(x, axis=axis, keepdims=keepdims)",
         ("np.where(x == x, spread(keep(g), x) / np.sum(x == x, axis=axis, keepdims=True), 0.0)",),
         "array", "1/n for each averaged element (n: those not NaN), 0 at a NaN",
         adjoint=True, attrs=AXIS),
    Rule("np.linalg.eigh_values", "np.linalg.eigh(x)[0]", ("eigh_adjoint(g, None, x)",),
         "array", "v·diag(w̄)·vᵀ on the lower triangle", "NumPy reads only the lower "
         "triangle of x", adjoint=True),
    Rule("np.linalg.eigh_vectors", "np.linalg.eigh(x)[1]", ("eigh_adjoint(None, g, x)",),
         "array", "v·(F∘(vᵀ·v̄))·vᵀ on the lower triangle, F[i, j] = 1/(w[j] − w[i])",
         "raises np.linalg.LinAlgError where two eigenvalues coincide (the eigenvectors "
         "are not a function of x there)", adjoint=True),
    Rule("np.linalg.eigvalsh", "np.linalg.eigvalsh(x)", ("eigh_adjoint(g, None, x)",),
         "array", "v·diag(w̄)·vᵀ on the lower triangle", "NumPy reads only the lower "
         "triangle of x", adjoint=True),
    Rule("np.linalg.pinv", "np.linalg.pinv(x)", ("pinv_adjoint(g, x, out)",), "array",
         "−pᵀḡpᵀ + (I − xp)ḡᵀppᵀ + pᵀpḡᵀ(I − px)", "x of full rank (where the rank "
         "does not change)", adjoint=True),
    Rule("np.convolve", "np.convolve(x, y, mode=mode)",
         ("convolve_adjoint(g, x, y, mode, 0)", "convolve_adjoint(g, x, y, mode, 1)"), "array",
         "∂/∂a: g (in its place in the full convolution) correlated with v; ∂/∂v likewise "
         "with a", "1-D operands (numbers count as length 1); mode \"full\", \"same\" or "
         "\"valid\"", adjoint=True, attrs=(("mode", "full"),)),
    Rule("np.quantile", "np.quantile(x, y, axis=axis, keepdims=keepdims, method=method)",
         ("quantile_adjoint(g, x, y, axis, keepdims, method)",
          "quantile_q_adjoint(g, x, y, axis, keepdims, method)"), "array",
         _QUANTILE + "; ∂/∂q = (n − 1)·(higher − lower)", _TIES, adjoint=True,
         attrs=_QUANTILE_ATTRS),
    Rule("np.percentile", "np.percentile(x, y, axis=axis, keepdims=keepdims, method=method)",
         ("quantile_adjoint(g, x, y / 100, axis, keepdims, method)",
          "quantile_q_adjoint(g, x, y / 100, axis, keepdims, method) / 100"), "array",
         _QUANTILE + " (q in percent); ∂/∂q = (n − 1)·(higher − lower)/100", _TIES,
         adjoint=True, attrs=_QUANTILE_ATTRS),
    Rule("np.median", "np.median(x, axis=axis, keepdims=keepdims)",
         ('quantile_adjoint(g, x, 0.5, axis, keepdims, "linear")',), "array",
         "1/2 to each of the two middle elements (1 to the middle one)",
         "ties split the adjoint evenly (as for np.max)", adjoint=True,
         attrs=AXIS),
    *[Rule(f"np.{u}.accumulate", f"np.{u}.accumulate(x, axis=axis)",
           ("running_extreme_adjoint(g, x, out, axis)",), "array",
           f"g[k] to the element that is the running {word} at k", "ties (equal elements up "
           "to k in the run of equal results) split the adjoint evenly, as for np.max; from a "
           "NaN on, nan", adjoint=True, attrs=(("axis", 0),))
      for u, word in (("maximum", "maximum"), ("minimum", "minimum"))],
    Rule("np.delete", "np.delete(x, y, axis=axis)", ("delete_adjoint(g, x, y, axis)", None),
         "array", "g put back where np.delete kept each element, 0 where it deleted",
         "obj an int, a list or array of ints, or a mask; axis None: the flattened x",
         adjoint=True, attrs=(("axis", None),)),
    Rule("np.delete.slice", "np.delete(x, slice(start, stop, step), axis=axis)",
         ("delete_slice_adjoint(g, x, start, stop, step, axis)",), "array",
         "g put back where np.delete kept each element, 0 where it deleted",
         "obj a slice with constant bounds (`slice(1, 3)`, `np.s_[::2]`)", adjoint=True,
         attrs=(("start", None), ("stop", None), ("step", None), ("axis", None))),
    Rule("scipy.linalg.solve_triangular", "scipy_linalg.solve_triangular(x, y, lower=lower)",
         ("triangular_adjoint(g, x, out, lower, 0, scipy_linalg.solve_triangular)",
          "triangular_adjoint(g, x, out, lower, 1, scipy_linalg.solve_triangular)"), "array",
         "∂/∂b = a⁻ᵀ·g, ∂/∂a = −(a⁻ᵀ·g)·outᵀ on a's triangle", adjoint=True, attrs=_LOWER),
    Rule("scipy.linalg.cho_factor", "scipy_linalg.cho_factor(x, lower=lower)[0]",
         ("cho_factor_adjoint(g, out, lower)",), "array",
         "the Cholesky adjoint on the factor's triangle, g on the other",
         "the other triangle of the result holds x's own elements", adjoint=True,
         attrs=_LOWER),
    Rule("scipy.linalg.cho_solve", "scipy_linalg.cho_solve((x, lower), y)",
         ("cho_solve_adjoint(g, x, out, lower, 0, scipy_linalg.cho_solve)",
          "cho_solve_adjoint(g, x, out, lower, 1, scipy_linalg.cho_solve)"), "array",
         "∂/∂b = cho_solve(g), ∂/∂c = tril((m + mᵀ)·L), m = −b̄·outᵀ",
         "reads only the factor's triangle of c", adjoint=True, attrs=_LOWER),
]

MORE_VIEWS = frozenset({"np.broadcast_to", "np.atleast_1d", "np.atleast_2d", "np.atleast_3d"})
"""Primitives whose result may share memory with their first operand."""

MORE_SAME_SHAPE = frozenset({"np.sinc"})
"""Primitives whose result has the shape of their first operand."""

LINEAR_MORE = frozenset({"np.broadcast_to", "np.atleast_1d", "np.atleast_2d",
                         "np.atleast_3d", "np.delete", "np.delete.slice",
                         "own.delete_adjoint", "own.delete_slice_adjoint"})
"""Linear in their array operand: forward mode applies them to the tangent."""
