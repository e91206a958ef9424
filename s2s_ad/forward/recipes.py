"""Tangents of the whole-adjoint primitives that are neither linear nor
bilinear: a few lines of code each, written in the subset s2s-ad
differentiates, so the JVP module can be differentiated again (``hessian``,
``hvp``, ``jvp(grad(f))``) with the reverse rules of what they call.

Contract: :func:`recipe` returns, for a primitive, its attributes and which
operands carry a tangent, the text of the lines computing the tangent, or
None (no forward rule). The text reads ``x``/``y`` (the operands), ``out``
(the result), ``g`` (the first operand's tangent; ``g0``/``g1`` for a
primitive of two), and assigns the tangent to ``dout``; every other name it
assigns is a local (given a fresh name where it is emitted). Attributes are
written into the text as constants (``axis=1``), so the lines read as a
person would write them for that call:

* ``np.prod``: ``np.sum(g * others)``, ``others`` the product of the other
  elements from cumulative products from both sides — the numbers the
  reverse rule multiplies by (``others_product``), exact where elements are 0;
* ``np.cumprod``: ``out * np.cumsum(g / x)`` where no element is 0 (the
  reverse rule's division), else ``Σ_{i ≤ k} g_i · Π_{j < i} x_j ·
  Π_{i < j ≤ k} x_j`` (quadratic in the axis length, exact);
* ``np.var``/``np.std``: ``Σ (x − mean)·g · 2/(n − ddof)``, over ``2·out``
  for the standard deviation;
* ``np.linalg.inv``: ``−out @ g @ out``; ``det``: ``out · tr(solve(x, g))``;
  ``slogdet``'s logarithm ``tr(solve(x, g))`` (its sign has none);
  ``solve(a, b)``: ``solve(a, db − da @ out)`` (``b`` a vector when it has
  one axis, as NumPy reads it);
* ``np.linalg.cholesky``: ``L·Φ(L⁻¹·S·L⁻ᵀ)``, ``S`` the symmetric matrix the
  tangent's lower triangle gives (NumPy reads only that triangle) and ``Φ``
  the lower triangle with the diagonal halved; ``scipy.linalg.cho_factor``
  the same on the factor's triangle and ``g`` on the other;
* ``np.linalg.eigh``/``eigvalsh``: ``dw = diag(Vᵀ·S·V)``, ``dV = V·(F∘(Vᵀ·S·V))``,
  ``F[i, j] = 1/(w[j] − w[i])`` off the diagonal; eigenvalues equal to
  rounding raise ``ValueError`` (the eigenvectors are not a function of ``x``
  there; the reverse rule raises ``np.linalg.LinAlgError``, a ``ValueError``);
* ``np.linalg.pinv`` (full rank):
  ``−P·g·P + P·Pᵀ·gᵀ·(I − x·P) + (I − P·x)·gᵀ·Pᵀ·P``;
* ``np.sort``: the tangent taken in the order ``np.argsort`` gives (the
  reverse rule's order, so ties are told apart the same way);
* ``scipy.linalg.solve_triangular``/``cho_solve``: the solve of
  ``db − da @ out`` with the matrix the factor's triangle gives.
"""

from __future__ import annotations

_EPS = 2.220446049250313e-16
"""float64's machine epsilon, for the test of equal eigenvalues."""

_SYMMETRIC = "sym = np.tril(g) + np.swapaxes(np.tril(g, k=-1), -1, -2)"
"""The symmetric matrix of a tangent whose lower triangle is read."""


def _rows(*lines: str) -> str:
    return "\n".join(lines)


def _size(axis) -> str:
    """How many elements of ``x`` each result element of a reduction over
    ``axis`` combines."""
    if axis is None:
        return "np.size(x)"
    axes = axis if isinstance(axis, tuple) else (axis,)
    return " * ".join(f"np.shape(x)[{a}]" for a in axes) or "1"  # (axis=(): one each)


def _keywords(**given) -> str:
    return "".join(f", {k}={v!r}" for k, v in given.items() if v is not None)


def prod(attrs: dict) -> str:
    axis, keep = attrs.get("axis"), bool(attrs.get("keepdims"))
    if axis is None:
        return _rows(
            "flat = np.ravel(x)",
            "ones = np.ones_like(flat[:1])",
            "before = np.cumprod(np.concatenate((ones, flat[:-1])))",
            "after = np.flip(np.cumprod(np.flip(np.concatenate((flat[1:], ones)))))",
            "others = np.reshape(before * after, np.shape(x))",
            f"dout = np.sum(g * others{_keywords(keepdims=keep or None)})")
    last = axis == -1  # the axis the products run along already last
    moved = "x" if last else "moved"
    return _rows(
        *([] if last else [f"moved = np.moveaxis(x, {axis}, -1)"]),
        f"ones = np.ones_like({moved}[..., :1])",
        f"before = np.cumprod(np.concatenate((ones, {moved}[..., :-1]), axis=-1), axis=-1)",
        f"after = np.flip(np.cumprod(np.flip(np.concatenate(({moved}[..., 1:], ones), axis=-1), "
        "axis=-1), axis=-1), axis=-1)",
        "others = before * after" if last else
        f"others = np.moveaxis(before * after, -1, {axis})",
        f"dout = np.sum(g * others, axis={axis}{_keywords(keepdims=keep or None)})")


def cumprod(attrs: dict) -> str:
    axis = attrs.get("axis")
    k = 0 if axis is None else axis
    flat, dflat = ("np.ravel(x)", "np.ravel(g)") if axis is None else ("x", "g")
    return _rows(
        "if np.sum(x == 0) > 0:",
        f"    moved = np.moveaxis({flat}, {k}, -1)",
        "    n = np.shape(moved)[-1]",
        "    before = np.cumprod(np.concatenate((np.ones_like(moved[..., :1]), moved[..., :-1]), "
        "axis=-1), axis=-1)",
        "    after = np.cumprod(np.where(np.arange(n)[:, None] < np.arange(n)[None, :], "
        "moved[..., None, :], 1.0), axis=-1)",
        f"    terms = (np.moveaxis({dflat}, {k}, -1) * before)[..., :, None] * after",
        "    dout = np.moveaxis(np.sum(np.where(np.arange(n)[:, None] <= np.arange(n)[None, :], "
        f"terms, 0.0), axis=-2), -1, {k})",
        "else:",
        f"    dout = out * np.cumsum(g / x{_keywords(axis=axis)})")


def _centred(attrs: dict) -> str:
    axis = attrs.get("axis")
    return (f"np.sum((x - np.mean(x{_keywords(axis=axis)}, keepdims=True)) * g"
            f"{_keywords(axis=axis, keepdims=bool(attrs.get('keepdims')) or None)})")


def _count(attrs: dict) -> str:
    """``n − ddof``, the divisor of the variance."""
    ddof = attrs.get("ddof") or 0
    return f"({_size(attrs.get('axis'))}{f' - {ddof}' if ddof else ''})"


def var(attrs: dict) -> str:
    return f"dout = {_centred(attrs)} * (2 / {_count(attrs)})"


def std(attrs: dict) -> str:
    return f"dout = {_centred(attrs)} / ({_count(attrs)} * out)"


_TRACE = "np.sum(np.diagonal(np.linalg.solve(x, g), axis1=-2, axis2=-1), axis=-1)"


def solve(active: tuple) -> str:
    da, db = active
    if not da:
        return "dout = np.linalg.solve(x, g1)"
    vector = ("g1[..., None] - " if db else "-") + "(g0 @ out[..., None])"
    matrix = ("g1 - " if db else "-") + "(g0 @ out)"
    return _rows("if np.ndim(y) == 1:",
                 f"    dout = np.linalg.solve(x, {vector})[..., 0]",
                 "else:",
                 f"    dout = np.linalg.solve(x, {matrix})")


def _cholesky(factor: str, sym: str) -> list[str]:
    """Lines setting ``step``: the tangent of the lower factor ``factor`` of
    the symmetric matrix whose tangent is ``sym``."""
    return [sym,
            f"inner = np.linalg.solve({factor}, "
            f"np.swapaxes(np.linalg.solve({factor}, sym), -1, -2))",
            f"step = {factor} @ (0.5 * (np.tril(inner) + np.tril(inner, k=-1)))"]


def cholesky() -> str:
    return _rows(*_cholesky("out", _SYMMETRIC), "dout = step")


def eigen_values() -> str:
    return _rows("vectors = np.linalg.eigh(x)[1]", _SYMMETRIC,
                 "dout = np.sum(vectors * (sym @ vectors), axis=-2)")


def eigen_vectors() -> str:
    return _rows(
        "values = np.linalg.eigvalsh(x)", _SYMMETRIC,
        "n = np.shape(values)[-1]",
        "off = np.arange(n)[:, None] != np.arange(n)[None, :]",
        "gap = values[..., None, :] - values[..., :, None]",
        f"near = {8 * _EPS!r} * n * np.max(np.abs(values), axis=-1, keepdims=True)[..., None]",
        "if np.sum(np.where(off, np.abs(gap), np.inf) <= near) > 0:",
        "    raise ValueError('the eigenvectors of np.linalg.eigh have no tangent where two "
        "eigenvalues are equal (to rounding)')",
        "inverse_gap = np.where(off, 1.0 / np.where(off, gap, 1.0), 0.0)",
        "dout = out @ (inverse_gap * (np.swapaxes(out, -1, -2) @ sym @ out))")


def pinv() -> str:
    return _rows("gt = np.swapaxes(g, -1, -2)",
                 "pt = np.swapaxes(out, -1, -2)",
                 "dout = -(out @ g @ out) + out @ pt @ (gt - gt @ x @ out) "
                 "+ (gt - out @ x @ gt) @ pt @ out")


def sort(attrs: dict) -> str:
    axis = attrs.get("axis", -1)  # an int: the frontend refuses axis=None
    return f"dout = np.take_along_axis(g, np.argsort(x, axis={axis}), axis={axis})"


def _triangle(lower: bool, name: str) -> str:
    return f"np.{'tril' if lower else 'triu'}({name})"


def solve_triangular(attrs: dict, active: tuple) -> str:
    lower = bool(attrs.get("lower"))
    da, db = active
    rhs = "g1" if not da else (("g1 - " if db else "-") + f"({_triangle(lower, 'g0')} @ out)")
    return f"dout = scipy_linalg.solve_triangular(x, {rhs}, lower={lower})"


def cho_factor(attrs: dict) -> str:
    if attrs.get("lower"):
        return _rows(*_cholesky("np.tril(out)", _SYMMETRIC), "dout = step + np.triu(g, k=1)")
    sym = "sym = np.triu(g) + np.swapaxes(np.triu(g, k=1), -1, -2)"
    return _rows(*_cholesky("np.swapaxes(np.triu(out), -1, -2)", sym),
                 "dout = np.swapaxes(step, -1, -2) + np.tril(g, k=-1)")


def cho_solve(attrs: dict, active: tuple) -> str:
    lower = bool(attrs.get("lower"))
    dc, db = active
    if not dc:
        return f"dout = scipy_linalg.cho_solve((x, {lower}), g1)"
    # the matrix is L·Lᵀ (lower) or Uᵀ·U (upper): its tangent from the factor's
    if lower:
        lines = ["factor = np.tril(x)", "dfactor = np.tril(g0)",
                 "dmatrix = dfactor @ np.swapaxes(factor, -1, -2) "
                 "+ factor @ np.swapaxes(dfactor, -1, -2)"]
    else:
        lines = ["factor = np.triu(x)", "dfactor = np.triu(g0)",
                 "dmatrix = np.swapaxes(dfactor, -1, -2) @ factor "
                 "+ np.swapaxes(factor, -1, -2) @ dfactor"]
    rhs = ("g1 - " if db else "-") + "(dmatrix @ out)"
    return _rows(*lines, f"dout = scipy_linalg.cho_solve((x, {lower}), {rhs})")


def recipe(prim: str, attrs: dict, active: tuple) -> str | None:
    """The lines of ``prim``'s tangent (see the module docstring), or None."""
    if prim == "np.prod":
        return prod(attrs)
    if prim == "np.cumprod":
        return cumprod(attrs)
    if prim == "np.var":
        return var(attrs)
    if prim == "np.std":
        return std(attrs)
    if prim == "np.linalg.inv":
        return "dout = -(out @ g @ out)"
    if prim == "np.linalg.det":
        return f"dout = out * {_TRACE}"
    if prim == "np.linalg.slogdet_log":
        return f"dout = {_TRACE}"
    if prim == "np.linalg.solve":
        return solve(active)
    if prim == "np.linalg.cholesky":
        return cholesky()
    if prim in ("np.linalg.eigh_values", "np.linalg.eigvalsh"):
        return eigen_values()
    if prim == "np.linalg.eigh_vectors":
        return eigen_vectors()
    if prim == "np.linalg.pinv":
        return pinv()
    if prim == "np.sort":
        return sort(attrs)
    if prim == "scipy.linalg.solve_triangular":
        return solve_triangular(attrs, active)
    if prim == "scipy.linalg.cho_factor":
        return cho_factor(attrs)
    if prim == "scipy.linalg.cho_solve":
        return cho_solve(attrs, active)
    if prim == "np.arange":
        return arange(len(active))
    return None


def arange(count: int) -> str:
    """``np.arange``'s tangent: the start's at every element, plus k times
    the step's (``np.arange(stop)``: none; the stop sets the length only)."""
    if count == 1:
        return "dout = np.zeros(np.shape(out))"
    return "dout = np.zeros(np.shape(out)) + g0" + (" + np.arange(np.size(out)) * g2"
                                                     if count == 3 else "")


PRIMS = frozenset({"np.prod", "np.cumprod", "np.var", "np.std", "np.linalg.inv",
                   "np.linalg.det", "np.linalg.slogdet_log", "np.linalg.solve",
                   "np.linalg.cholesky", "np.linalg.eigh_values", "np.linalg.eigvalsh",
                   "np.linalg.eigh_vectors", "np.linalg.pinv", "np.sort",
                   "scipy.linalg.solve_triangular", "scipy.linalg.cho_factor",
                   "scipy.linalg.cho_solve", "np.arange"})
"""The primitives :func:`recipe` gives a tangent for."""
