"""Helpers a generated NumPy gradient module defines for itself (as source
text, like :mod:`s2s_ad.rules.numpy_helpers`) for the rules of
:mod:`s2s_ad.rules.numpy_more`, and ``np.einsum``'s: ``contract`` (the
einsum itself, by BLAS when it is large) and ``einsum_adjoint``, the
adjoint of an ``np.einsum`` whose subscripts have ``...`` or a letter
repeated in one operand. Every one calls NumPy's dispatching functions
only (no writes into an array), so the same code runs on Dask arrays."""

MORE_HELPERS = {
    "contract": '''
def contract(subscripts, *operands, _terms={}):
    """np.einsum(subscripts, *operands); where the loops np.einsum would run
    visit more than 20,000 index combinations (the product of every
    subscript's length), optimize=True, which hands the contraction to BLAS
    where it can (several times faster: a batched matrix product), at the
    price of a path search of about ten microseconds, which smaller
    contractions are spared (below, np.einsum's loops take about as long)."""
    terms = _terms.get(subscripts)
    if terms is None:
        terms = _terms[subscripts] = subscripts.split("->")[0].split(",")
    lengths = {}
    for term, a in zip(terms, operands):
        shape = a.shape if type(a) is np.ndarray else np.shape(a)
        if "..." in term:  # the axes `...` stands for: their lengths' product
            before, _, after = term.partition("...")
            lead = shape[len(before):len(shape) - len(after)]
            product = 1
            for n in lead:
                product *= n
            lengths["..."] = max(lengths.get("...", 1), product)
            term = before + "." * len(lead) + after
        for letter, n in zip(term, shape):
            lengths[letter] = n
    lengths.pop(".", None)
    space = 1
    for n in lengths.values():
        space *= n
    return np.einsum(subscripts, *operands, optimize=space > 20000)
''',
    "einsum_adjoint": '''
def einsum_adjoint(g, subscripts, k, *operands):
    """The adjoint of np.einsum(subscripts, *operands) with respect to operand k,
    for any subscripts. `...` is spelled out in letters the subscripts do not use
    (right-aligned, as NumPy broadcasts it); an axis of length 1 that NumPy
    broadcast is squeezed out (a constant along it); g is contracted with the
    other operands over operand k's distinct letters, then put on the diagonals
    of the letters operand k repeats (einsum with identity matrices: x[i, i]
    gets h[i]) and spread along the letters operand k alone has (with ones).
    Large contractions go to BLAS (optimize=True), as in contract."""
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    shapes = [np.shape(a) for a in operands]
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
            if c not in subscripts]
    extra = [len(s) - len(t) + 3 for t, s in zip(terms, shapes) if "..." in t]
    dots = "".join(free[:max(extra, default=0)])
    free = free[len(dots):]
    if not arrow:
        every = inputs.replace("...", "").replace(",", "")
        output = ("..." if extra else "") + "".join(
            sorted(c for c in set(every) if every.count(c) == 1))
    output = output.replace("...", dots)
    terms = [t.replace("...", dots[len(dots) - len(s) + len(t) - 3:]) if "..." in t else t
             for t, s in zip(terms, shapes)]
    size = {}
    for t, s in zip(terms, shapes):
        for c, n in zip(t, s):
            size[c] = max(size.get(c, 1), n)
    ops = []
    for j, (t, s, a) in enumerate(zip(terms, shapes, operands)):
        flat = tuple(p for p, (c, n) in enumerate(zip(t, s)) if n == 1 and size[c] > 1)
        if flat:  # broadcast from length 1 by NumPy: squeezed, the letter dropped
            a = np.squeeze(a, axis=flat)
            t = "".join(c for p, c in enumerate(t) if p not in flat)
        terms[j] = t
        ops.append(a)
    term = terms[k]
    others = [t for j, t in enumerate(terms) if j != k]
    available = set(output).union(*others)
    distinct = "".join(dict.fromkeys(term))
    kept = "".join(c for c in distinct if c in available)
    space = 1
    for n in size.values():
        space *= n
    h = np.einsum(",".join([output] + others) + "->" + kept, g,
                  *[a for j, a in enumerate(ops) if j != k],
                  optimize=space > 20000 and len(others) > 0)
    dtype = np.result_type(h, operands[k])
    spec, parts, renamed, seen = [kept], [h], "", set()
    for c in term:
        if c in seen:  # a repeated letter: the diagonal, an identity matrix
            renamed += free[0]
            spec.append(c + free[0])
            parts.append(np.eye(size[c], dtype=dtype))
            free = free[1:]
        else:
            renamed += c
            seen.add(c)
    for c in distinct:
        if c not in available:  # summed in operand k alone: g spread along it
            spec.append(c)
            parts.append(np.ones(size[c], dtype=dtype))
    if len(parts) > 1 or kept != renamed:
        h = np.einsum(",".join(spec) + "->" + renamed, *parts)
    return np.reshape(h, shapes[k])
''',
    "kron_adjoint": '''
def kron_adjoint(g, x, y, i):
    """The adjoint of np.kron(x, y) with respect to x (i = 0) or y (i = 1):
    g's axes split in pairs (x's axis, then y's: the blocks), contracted with
    the other operand over its axes (the shorter shape padded with ones)."""
    nd = max(np.ndim(x), np.ndim(y))
    xs = (1,) * (nd - np.ndim(x)) + tuple(np.shape(x))
    ys = (1,) * (nd - np.ndim(y)) + tuple(np.shape(y))
    g = np.reshape(g, tuple(n for pair in zip(xs, ys) for n in pair))
    xl, yl = "abcdefghijklm"[:nd], "nopqrstuvwxyz"[:nd]
    gl = "".join(a + b for a, b in zip(xl, yl))
    if i == 0:
        return np.reshape(np.einsum(gl + "," + yl + "->" + xl, g, np.reshape(y, ys)), np.shape(x))
    return np.reshape(np.einsum(gl + "," + xl + "->" + yl, g, np.reshape(x, xs)), np.shape(y))
''',
    "convolve_adjoint": '''
def convolve_adjoint(g, a, v, mode, i):
    """The adjoint of np.convolve(a, v, mode) with respect to a (i = 0) or v
    (i = 1). The result is the slice of the full convolution (length n + m - 1)
    starting at 0 ("full"), (min(n, m) - 1) // 2 ("same") or min(n, m) - 1
    ("valid"): g is put back in that place among zeros, then correlated with
    the other operand, a's adjoint [j] = sum over k of g[j + k] * v[k]."""
    n, m = np.size(a), np.size(v)
    start = 0 if mode == "full" else (min(n, m) - 1) // 2 if mode == "same" else min(n, m) - 1
    length = n + m - 1 if mode == "full" else max(n, m) if mode == "same" else abs(n - m) + 1
    g = np.pad(np.broadcast_to(g, (length,)), (start, n + m - 1 - start - length))
    other = np.ravel(v if i == 0 else a)
    return np.reshape(np.correlate(g, other, mode="valid"), np.shape(a if i == 0 else v))
''',
    "quantile_weights": '''
def quantile_weights(x, q, axis, method):
    """The weights np.quantile(x, q, axis, method=method) gives the elements of
    x ("linear", "lower", "higher", "midpoint"), shaped like q's axes then x's,
    and the axes of x (there) it reduces. The result is (1 - t) * lower + t *
    higher, lower and higher the order statistics at floor((n - 1) * q) and
    ceil((n - 1) * q), t the fraction of (n - 1) * q ("lower": 0, "higher": 1,
    "midpoint": 1/2); each one's weight is split evenly between the elements
    of x equal to it (ties, as for np.max)."""
    lower = np.quantile(x, q, axis=axis, keepdims=True, method="lower")
    higher = np.quantile(x, q, axis=axis, keepdims=True, method="higher")
    lead, nd = np.ndim(q), np.ndim(x)
    axes = tuple(range(lead, lead + nd)) if axis is None else tuple(
        lead + a % nd for a in (axis if isinstance(axis, tuple) else (axis,)))
    if method == "linear":
        position = (np.size(x) * np.size(q) // np.size(lower) - 1) * np.asarray(q)
        t = position - np.floor(position)
    else:
        t = np.zeros(np.shape(q)) + {"lower": 0.0, "higher": 1.0, "midpoint": 0.5}[method]
    t = np.reshape(t.astype(np.result_type(x, 1.0)), np.shape(q) + (1,) * nd)
    at_lower, at_higher = x == lower, x == higher
    return ((1 - t) * at_lower / np.sum(at_lower, axis=axes, keepdims=True)
            + t * at_higher / np.sum(at_higher, axis=axes, keepdims=True)), axes
''',
    "quantile_adjoint": '''
def quantile_adjoint(g, x, q, axis, keepdims, method):
    """The adjoint of np.quantile(x, q, axis, keepdims=keepdims, method=method)
    with respect to x: g (q's axes first, the reduced axes of x as length 1)
    times the weights of quantile_weights, summed over q's axes."""
    w, axes = quantile_weights(x, q, axis, method)
    shape = tuple(1 if k in axes else n for k, n in enumerate(np.shape(w)))
    g = np.broadcast_to(g, shape) if np.ndim(g) == 0 else np.reshape(g, shape)
    lead = np.ndim(q)
    return np.sum(g * w, axis=tuple(range(lead))) if lead else g * w
''',
    "quantile_tangent": '''
def quantile_tangent(dx, x, q, axis, keepdims, method):
    """The tangent of np.quantile(x, q, axis, keepdims=keepdims, method=method)
    along dx: the weights of quantile_weights times dx, summed over the reduced
    axes (the transpose of quantile_adjoint)."""
    w, axes = quantile_weights(x, q, axis, method)
    return np.sum(w * dx, axis=axes, keepdims=keepdims)
''',
    "running_runs": '''
def running_runs(x, out, axis):
    """For out = np.maximum.accumulate(x, axis) (or np.minimum's), along that
    axis moved to the front: where x equals out (an element that is the
    running extreme where it stands), the first and the last position of the
    run of equal values of out each position is in, and how many elements of
    its run, up to it, equal out there (the ties np.max would split its
    adjoint between). An element equal to out[k] at or before k is in k's
    run, since out is monotonic."""
    x, out = np.moveaxis(x, axis, 0), np.moveaxis(out, axis, 0)
    shape = np.shape(out)
    n = shape[0]
    at = np.broadcast_to(np.reshape(np.arange(n), (n,) + (1,) * (len(shape) - 1)), shape)
    changes = out[1:] != out[:-1]
    edge = np.ones_like(out[:1], dtype=bool)
    start = np.maximum.accumulate(np.where(np.concatenate([edge, changes]), at, 0), axis=0)
    end = np.flip(np.minimum.accumulate(
        np.flip(np.where(np.concatenate([changes, edge]), at, n - 1), 0), axis=0), 0)
    hit = x == out
    h = np.cumsum(hit, axis=0)
    count = h - np.take_along_axis(h - hit, start, axis=0)
    return hit, start, end, count.astype(np.result_type(x, 1.0))
''',
    "running_extreme_adjoint": '''
def running_extreme_adjoint(g, x, out, axis):
    """The adjoint of out = np.maximum.accumulate(x, axis) (or np.minimum's)
    with respect to x: out[k] is an element x[j], j <= k, of k's run of equal
    values of out, so g[k] goes to it, split evenly between the elements of the
    run up to k equal to it (ties, as np.max splits them): x[j] gets the sum of
    g[k] / count[k] over k from j to the end of its run (a difference of
    np.cumsum's). A NaN element gets nan."""
    hit, start, end, count = running_runs(x, out, axis)
    w = np.moveaxis(np.broadcast_to(g, np.shape(out)), axis, 0) / count
    s = np.cumsum(w, axis=0)
    return np.moveaxis((np.take_along_axis(s, end, axis=0) - s + w) * hit, 0, axis)
''',
    "running_extreme_tangent": '''
def running_extreme_tangent(dx, x, out, axis):
    """The tangent of out = np.maximum.accumulate(x, axis) (or np.minimum's)
    along dx: at k, the mean of dx over the elements of k's run, up to k, equal
    to out[k] (the transpose of running_extreme_adjoint)."""
    hit, start, end, count = running_runs(x, out, axis)
    d = np.moveaxis(np.broadcast_to(dx, np.shape(out)), axis, 0) * hit
    s = np.cumsum(d, axis=0)
    return np.moveaxis((s - np.take_along_axis(s - d, start, axis=0)) / count, 0, axis)
''',
    "quantile_slope": '''
def quantile_slope(x, q, axis, keepdims, method):
    """The derivative of np.quantile(x, q, axis, keepdims=keepdims,
    method=method) with respect to q, shaped like the result: the result is
    (1 - t) * lower + t * higher, t the fraction of (n - 1) * q, so
    (n - 1) * (higher - lower) for "linear"; 0 for "lower", "higher" and
    "midpoint" (constant between order statistics). Where (n - 1) * q is an
    integer, lower and higher are one element: 0 there."""
    lower = np.quantile(x, q, axis=axis, keepdims=keepdims, method="lower")
    higher = np.quantile(x, q, axis=axis, keepdims=keepdims, method="higher")
    if method != "linear":
        return (higher - lower) * 0.0
    return (np.size(x) * np.size(q) // np.size(lower) - 1) * (higher - lower)
''',
    "quantile_q_adjoint": '''
def quantile_q_adjoint(g, x, q, axis, keepdims, method):
    """The adjoint of np.quantile(x, q, axis, keepdims=keepdims, method=method)
    with respect to q: g times quantile_slope, summed over the result's axes
    after q's (shaped like q)."""
    gs = g * quantile_slope(x, q, axis, keepdims, method)
    return np.sum(gs, axis=tuple(range(np.ndim(q), np.ndim(gs))))
''',
    "quantile_q_tangent": '''
def quantile_q_tangent(dq, x, q, axis, keepdims, method):
    """The tangent of np.quantile(x, q, axis, keepdims=keepdims, method=method)
    along a tangent dq of q: dq (on the result's first axes, q's) times
    quantile_slope (the transpose of quantile_q_adjoint)."""
    s = quantile_slope(x, q, axis, keepdims, method)
    return np.reshape(dq, np.shape(dq) + (1,) * (np.ndim(s) - np.ndim(dq))) * s
''',
    "quantile_slope_tangent": '''
def quantile_slope_tangent(dx, x, q, axis, keepdims, method):
    """The derivative of quantile_slope(x, q, ...) along a tangent dx of x:
    (n - 1) times the tangent of the higher order statistic minus that of the
    lower (each the weights of quantile_weights for "higher" and "lower"
    applied to dx); 0 for the methods other than "linear"."""
    higher = quantile_tangent(dx, x, q, axis, keepdims, "higher")
    if method != "linear":
        return higher * 0.0
    lower = quantile_tangent(dx, x, q, axis, keepdims, "lower")
    return (np.size(x) * np.size(q) // np.size(higher) - 1) * (higher - lower)
''',
    "quantile_slope_adjoint": '''
def quantile_slope_adjoint(g, x, q, axis, keepdims, method):
    """The transpose of quantile_slope_tangent: g (shaped like the quantile)
    spread on x's elements, (n - 1) times the higher order statistic's weights
    minus the lower's; zeros for the methods other than "linear"."""
    higher = quantile_adjoint(g, x, q, axis, keepdims, "higher")
    if method != "linear":
        return higher * 0.0
    n = np.size(x) * np.size(q) // np.size(
        np.quantile(x, q, axis=axis, keepdims=keepdims, method="lower"))
    return (n - 1) * (higher - quantile_adjoint(g, x, q, axis, keepdims, "lower"))
''',
    "quantile_mixed_q": '''
def quantile_mixed_q(a, b, x, q, axis, keepdims, method):
    """a (shaped like the quantile) times the derivative in q of
    quantile_tangent(b, x, q, ...), summed to q's shape: the adjoint to q of
    quantile_tangent(b, x, q) for a cotangent a, and of quantile_adjoint(a, x,
    q) for a cotangent b (the mixed second derivative of np.quantile)."""
    s = a * quantile_slope_tangent(b, x, q, axis, keepdims, method)
    return np.sum(s, axis=tuple(range(np.ndim(q), np.ndim(s))))
''',
    "quantile_mixed_x": '''
def quantile_mixed_x(a, b, x, q, axis, keepdims, method):
    """quantile_slope_adjoint of a (shaped like q, on the quantile's first
    axes) times b (shaped like the quantile): the adjoint to x of
    quantile_q_tangent(a, x, q) for a cotangent b, and of quantile_q_adjoint(b,
    x, q) for a cotangent a."""
    a = np.reshape(a, np.shape(a) + (1,) * max(0, np.ndim(b) - np.ndim(a)))
    return quantile_slope_adjoint(a * b, x, q, axis, keepdims, method)
''',
    "quantile_mixed_tangent": '''
def quantile_mixed_tangent(a, b, x, q, axis, keepdims, method):
    """a (a tangent of q, on the quantile's first axes) times the derivative
    of quantile_slope along b (a tangent of x): the tangent of
    quantile_tangent(b, x, q) along a, and of quantile_q_tangent(a, x, q)
    along b (the transpose of quantile_mixed_q in a)."""
    s = quantile_slope_tangent(b, x, q, axis, keepdims, method)
    return np.reshape(a, np.shape(a) + (1,) * max(0, np.ndim(s) - np.ndim(a))) * s
''',
    "eigh_adjoint": '''
def eigh_adjoint(gw, gv, x):
    """The adjoint of w, v = np.linalg.eigh(x) with respect to x, given the
    eigenvalues' adjoint gw and the eigenvectors' gv (either may be None):
    s = v·(diag(gw) + F∘(vᵀ·gv))·vᵀ, F[i, j] = 1/(w[j] − w[i]) off the
    diagonal; NumPy reads only the lower triangle of x, so tril(s + sᵀ) − diag s.
    Eigenvalues equal to rounding make F infinite: the eigenvectors are not a
    function of x there, and the eigenvector adjoint is refused."""
    w, v = np.linalg.eigh(x)
    n = np.shape(w)[-1]
    vt = np.swapaxes(v, -1, -2)
    eye = np.eye(n, dtype=w.dtype)
    inner = 0.0
    if gw is not None:
        inner = np.expand_dims(gw, -1) * eye
    if gv is not None:
        gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
        off = eye == 0
        scale = np.expand_dims(np.max(np.abs(w), axis=-1, keepdims=True), -1)
        if bool(np.any(off & (np.abs(gap) <= 8 * n * np.finfo(w.dtype).eps * scale))):
            raise np.linalg.LinAlgError(
                "the adjoint of np.linalg.eigh's eigenvectors is undefined where two "
                "eigenvalues are equal (to rounding): the eigenvectors are not a function "
                "of the matrix there")
        inner = inner + np.where(off, 1.0 / np.where(off, gap, 1.0), 0.0) * (vt @ gv)
    s = v @ inner @ vt
    return np.tril(s + np.swapaxes(s, -1, -2)) - s * eye
''',
    "pinv_adjoint": '''
def pinv_adjoint(g, x, p):
    """The adjoint of p = np.linalg.pinv(x) with respect to x, for x of full
    rank: −pᵀ·g·pᵀ + (gᵀ − x·p·gᵀ)·p·pᵀ + pᵀ·p·(gᵀ − gᵀ·p·x)."""
    pt, gt = np.swapaxes(p, -1, -2), np.swapaxes(g, -1, -2)
    return -(pt @ g @ pt) + (gt - x @ (p @ gt)) @ (p @ pt) + (pt @ p) @ (gt - (gt @ p) @ x)
''',
    "triangular_adjoint": '''
def triangular_adjoint(g, a, out, lower, i, solve):
    """The adjoint of out = scipy.linalg.solve_triangular(a, b, lower) with
    respect to a (i = 0) or b (i = 1): b's is the solve with aᵀ, a's minus that
    times outᵀ on the triangle a is read from."""
    gb = solve(a, g, trans=1, lower=lower)
    if i == 1:
        return gb
    ga = -(gb[:, None] * out[None, :]) if np.ndim(out) == 1 else -(gb @ np.swapaxes(out, -1, -2))
    return np.tril(ga) if lower else np.triu(ga)
''',
    "cho_factor_adjoint": '''
def cho_factor_adjoint(g, c, lower):
    """The adjoint of c = scipy.linalg.cho_factor(x, lower)[0] with respect to
    x: the Cholesky adjoint on the factor's triangle (an upper factor is the
    transpose of the lower factor of the matrix read from x's upper triangle),
    g itself on the other triangle, which holds x's own elements."""
    if lower:
        return cholesky_adjoint(np.tril(g), np.tril(c)) + np.triu(g, 1)
    t = cholesky_adjoint(np.swapaxes(np.triu(g), -1, -2), np.swapaxes(np.triu(c), -1, -2))
    return np.swapaxes(t, -1, -2) + np.tril(g, -1)
''',
    "cho_solve_adjoint": '''
def cho_solve_adjoint(g, c, out, lower, i, solve):
    """The adjoint of out = scipy.linalg.cho_solve((c, lower), b) with respect
    to c (i = 0) or b (i = 1). b's: cho_solve of g (the matrix is symmetric);
    with m = −b̄·outᵀ the adjoint of the matrix L·Lᵀ, c's is tril((m + mᵀ)·L)
    (triu(U·(m + mᵀ)) for an upper factor U), on the triangle read."""
    gb = solve((c, lower), g)
    if i == 1:
        return gb
    m = -(gb[:, None] * out[None, :]) if np.ndim(out) == 1 else -(gb @ np.swapaxes(out, -1, -2))
    m = m + np.swapaxes(m, -1, -2)
    return np.tril(m @ np.tril(c)) if lower else np.triu(np.triu(c) @ m)
''',
    "delete_adjoint": '''
def delete_adjoint(g, x, obj, axis):
    """The adjoint of np.delete(x, obj, axis) with respect to x: g put back
    where np.delete kept each element (over the flattened x when axis is
    None), zeros where it deleted. The kept positions are np.delete of the
    positions themselves; position j of the axis reads g at the number of
    positions kept before it (np.take), masked where j was deleted."""
    if axis is None:
        return np.reshape(delete_adjoint(g, np.ravel(x), obj, 0), np.shape(x))
    shape = np.shape(x)
    axis = axis % len(shape)
    n = shape[axis]
    if type(g) is np.ndarray and isinstance(obj, (int, np.integer)):
        # one position (a minor's row or column): g split there around a slice
        # of zeros, a few microseconds where the masks below take tens
        k = int(obj) % n
        moved = np.moveaxis(g, axis, 0)
        zero = np.zeros((1,) + moved.shape[1:], dtype=np.result_type(x, g))
        return np.moveaxis(np.concatenate((moved[:k], zero, moved[k:])), 0, axis)
    kept = np.isin(np.arange(n), np.delete(np.arange(n), obj))
    if not kept.any():
        return np.zeros_like(x, dtype=np.result_type(x, g))
    before = np.maximum(np.cumsum(kept) - 1, 0)
    mask = np.reshape(kept, (n,) + (1,) * (len(shape) - axis - 1))
    return np.where(mask, np.take(g, before, axis=axis), 0.0)
''',
    "delete_slice_adjoint": '''
def delete_slice_adjoint(g, x, start, stop, step, axis):
    """The adjoint of np.delete(x, slice(start, stop, step), axis) (the slice's
    bounds constants of the call)."""
    return delete_adjoint(g, x, slice(start, stop, step), axis)
''',
}
"""Functions a generated module defines for itself when its code calls them."""
