"""The functions a generated NumPy gradient module defines for itself (the
helpers rule templates call by name: ``unbroadcast``, ``matmul_adjoint``,
...), as source text; see :mod:`s2s_ad.rules.numpy` for the rules.

Each takes a fast path for plain ``np.ndarray`` operands where that saves
NumPy's per-call dispatch, and the dispatching forms for anything else."""

import re

from s2s_ad.rules.index_helpers import INDEX_HELPERS
from s2s_ad.rules.list_helpers import LIST_HELPERS
from s2s_ad.rules.more_helpers import MORE_HELPERS
from s2s_ad.rules.shape_helpers import SHAPE_HELPERS

HELPERS = {
    "unbroadcast": '''
def unbroadcast(g, x, _array=np.ndarray):
    """g summed over the axes along which x was broadcast, so it has x's shape."""
    if type(g) is _array and type(x) is _array and g.shape == x.shape:
        return g  # the common case first: two arrays of one shape (_array: no global lookup)
    scalar = (int, float, np.generic)  # shape (), as np.shape says, without asking it
    shape = x.shape if type(x) is np.ndarray else () if isinstance(x, scalar) else np.shape(x)
    g_shape = g.shape if type(g) is np.ndarray else () if isinstance(g, scalar) else np.shape(g)
    if g_shape == shape or len(g_shape) == len(shape) and all(
            a == b or a != a for a, b in zip(g_shape, shape)):  # nan: a length Dask knows later
        return g
    lead = len(g_shape) - len(shape)
    if lead < 0 or g_shape[lead:] != shape and any(
            a == 1 and n != n for a, n in zip(g_shape[lead:], shape)):
        # fewer axes than x (a 0.0 adjoint a branch or loop never added to, g * b
        # for np.sum(a * b)), or length 1 where x's length is known later (Dask)
        if any(n != n for n in shape):  # broadcast as the library computes
            g = g + np.zeros_like(x)
        else:
            g = np.array(np.broadcast_to(g, np.broadcast_shapes(g_shape, shape)))
        g_shape, lead = np.shape(g), len(np.shape(g)) - len(shape)
        if lead == 0 and all(a == b or a != a for a, b in zip(g_shape, shape)):
            return g
    axes = (0,) if lead == 1 else tuple(range(lead))
    if g_shape[lead:] == shape:
        return add_over(g, axes)
    axes += tuple(lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
    if any(g_shape[lead + i] == 1 and n != 1 and n == n for i, n in enumerate(shape)):
        # an einsum operand's letter the others had at length 1: spread back
        return np.array(np.broadcast_to(np.sum(g, axis=axes, keepdims=True)[(0,) * lead], shape))
    d = add_over(g, axes)
    return d.reshape(shape) if type(d) is np.ndarray else np.reshape(d, shape)
''',
    "add_over": '''
def add_over(g, axes, _ones={}):
    """np.add.reduce(g, axis=axes), axes a tuple. One axis of a float64 matrix, or
    the leading or the trailing axes (not all) of a C-contiguous float64 array
    seen as a matrix: a product with a vector of ones, which BLAS computes
    faster than NumPy sums short rows (over the first axis: 1.8 µs against
    3.7 µs for 100x10x5 elements, 0.27 ms against 0.31 ms for 1000x50x20; the
    vectors are kept in _ones by length, read-only)."""
    if type(g) is not np.ndarray:
        return np.sum(g, axis=axes)
    k = len(axes)
    if g.dtype.char != "d" or k >= g.ndim or not g.size or g.ndim > 2 and not g.flags.c_contiguous:
        return np.add.reduce(g, axis=axes)
    if axes == tuple(range(k)):  # leading axes: ones @ g as (rows, rest)
        rows = 1
        for n in g.shape[:k]:
            rows *= n
        ones = _ones.get(rows)
    elif axes == tuple(range(g.ndim - k, g.ndim)):  # trailing axes: g as (rest, cols) @ ones
        rows = 0
        cols = 1
        for n in g.shape[g.ndim - k:]:
            cols *= n
        ones = _ones.get(cols)
    else:
        return np.add.reduce(g, axis=axes)
    if ones is None:
        ones = np.ones(rows or cols)
        ones.flags.writeable = False
        if len(_ones) < 64:
            _ones[rows or cols] = ones
    if g.ndim == 2:
        return np.dot(ones, g) if rows else np.dot(g, ones)
    if rows:
        return np.dot(ones, g.reshape(rows, -1)).reshape(g.shape[k:])
    return np.dot(g.reshape(-1, cols), ones).reshape(g.shape[:g.ndim - k])
''',
    "spread": '''
def spread(g, x):
    """np.zeros_like(x) + g (g broadcast to x's shape, in the dtype of the sum)
    without adding the zeros."""
    if type(x) is not np.ndarray or x.ndim == 0:
        out = np.zeros_like(x) + g
        if np.ndim(out) != np.ndim(x):  # g keeps an axis a number has not: np.sum(s, axis=0)
            out = np.reshape(out, np.shape(x))[()]
        return out
    if type(g) is float and x.dtype.kind in "fc" or type(g) is np.float64 and x.dtype.char == "d":
        out = np.empty_like(x)  # the dtype of the sum is x's: no np.result_type to ask
    else:
        out = np.empty_like(x, dtype=np.result_type(x, g))
    out[...] = g
    return out
''',
    "extreme_adjoint": '''
def extreme_adjoint(g, x, m, axis):
    """The adjoint of m = np.max(x, axis, keepdims=True) (or np.min) with
    respect to x: g split evenly between the elements equal to m."""
    at = x == m
    arrays = type(at) is np.ndarray and type(m) is np.ndarray
    # Every slice has at least one element equal to its extreme unless that is nan,
    # so as many elements as slices, and no nan, means no ties: nothing to split.
    if arrays and np.count_nonzero(at) == m.size and not np.isnan(np.add.reduce(m, axis=None)):
        return np.multiply(g, at, dtype=np.result_type(g, x))
    add = np.add.reduce if type(at) is np.ndarray else np.sum  # np.sum without dispatch
    return g / add(at, axis=axis, keepdims=True, dtype=np.result_type(x)) * at
''',
    "matmul_adjoint": '''
def matmul_adjoint(g, x, y, i):
    """The adjoint of x @ y with respect to x (i = 0) or y (i = 1). Matrices:
    np.dot with the other operand transposed; vectors and stacks of matrices
    (whose leading axes broadcast): matmul."""
    arrays = type(x) is np.ndarray and type(y) is np.ndarray
    nx, ny = (x.ndim, y.ndim) if arrays else (np.ndim(x), np.ndim(y))
    if i == 0 and ny == 2 and 1 <= nx <= 2:
        return np.dot(g, y.T if arrays else np.transpose(y))
    if i == 1 and nx == 2 and 1 <= ny <= 2:
        return np.dot(x.T if arrays else np.transpose(x), g)
    if arrays and nx == ny == 1:  # vector·vector: g is a scalar
        return np.multiply(g, y if i == 0 else x)
    if arrays and nx + ny == 3 and (nx, ny)[i] == 2:  # the matrix of matrix·vector: an outer product
        return np.multiply.outer(g, y) if i == 0 else np.multiply.outer(x, g)
    x2 = np.expand_dims(x, -2) if nx == 1 else x
    y2 = np.expand_dims(y, -1) if ny == 1 else y
    g2 = np.expand_dims(g, -1) if ny == 1 else g
    g2 = np.expand_dims(g2, -2) if nx == 1 else g2
    if i == 0:
        d = np.matmul(g2, np.swapaxes(y2, -1, -2))
        return unbroadcast(d[..., 0, :] if nx == 1 else d, x)
    d = np.matmul(np.swapaxes(x2, -1, -2), g2)
    return unbroadcast(d[..., 0] if ny == 1 else d, y)
''',
    "dot_adjoint": '''
def dot_adjoint(g, x, y, i):
    """The adjoint of np.dot(x, y) with respect to x (i = 0) or y (i = 1): that
    of x @ y for vectors and matrices, a product's for a 0-d operand. For more
    dimensions np.dot contracts x's last axis with y's second-to-last (its only
    one for a vector), and g's axes are x's other axes, then y's other axes."""
    nx, ny = np.ndim(x), np.ndim(y)
    if 1 <= nx <= 2 and 1 <= ny <= 2:
        return matmul_adjoint(g, x, y, i)
    if nx == 0 or ny == 0:
        return unbroadcast(np.multiply(g, y if i == 0 else x), x if i == 0 else y)
    c = max(ny - 2, 0)  # the contracted axis of y
    if i == 0:  # g's last ny - 1 axes against y's other axes
        rest = [k for k in range(ny) if k != c]
        return np.tensordot(g, y, axes=(list(range(nx - 1, np.ndim(g))), rest))
    # x's other (leading) axes against g's first nx - 1 axes; the contracted axis comes first
    d = np.tensordot(x, g, axes=(list(range(nx - 1)), list(range(nx - 1))))
    return np.moveaxis(d, 0, c)
''',
    "cumsum_adjoint": '''
def cumsum_adjoint(g, x, axis):
    """The adjoint of np.cumsum(x, axis): x[i] feeds every partial sum from i
    on, so its adjoint is the sum of g from the end back to i (over the
    flattened array when axis is None)."""
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.ravel(g)))), np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)
''',
    "others_product": '''
def others_product(x, axis):
    """The product of the other elements along axis (all axes when None), for
    each element: exclusive products from both sides, so zeros are exact."""
    if axis is None:
        return np.reshape(others_product(np.ravel(x), 0), np.shape(x))
    x = np.moveaxis(x, axis, -1)
    ones = np.ones_like(x[..., :1])
    left = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    right = np.flip(np.cumprod(np.flip(np.concatenate([x[..., 1:], ones], axis=-1), -1),
                               axis=-1), -1)
    return np.moveaxis(left * right, -1, axis)
''',
    "cumprod_adjoint": '''
def cumprod_adjoint(g, x, out, axis):
    """The adjoint of out = np.cumprod(x, axis): x[k] feeds every partial
    product from k on, so its adjoint is (g * out) summed from the end back to
    k, divided by x[k]. Where a slice holds a zero that division is not
    defined: there the products of the other elements are taken instead
    (quadratic in the axis length, exact)."""
    if axis is None:
        return np.reshape(cumprod_adjoint(np.ravel(g), np.ravel(x), np.ravel(out), 0),
                          np.shape(x))
    zeros = x == 0
    if not np.any(zeros):
        return np.flip(np.cumsum(np.flip(g * out, axis), axis), axis) / x
    x, g = np.moveaxis(x, axis, -1), np.moveaxis(g, axis, -1)
    n = np.shape(x)[-1]
    ones = np.ones_like(x[..., :1])
    before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    # after[..., k, i]: the product of x[k + 1 .. i] (1 for i <= k)
    later = np.arange(n)[None, :] > np.arange(n)[:, None]
    after = np.cumprod(np.where(later, x[..., None, :], 1.0), axis=-1)
    d = before * np.sum(np.where(later | np.eye(n, dtype=bool), after * g[..., None, :], 0.0),
                        axis=-1)
    return np.moveaxis(d, -1, axis)
''',
    "repeat_adjoint": '''
def repeat_adjoint(g, x, repeats, axis):
    """The adjoint of np.repeat(x, repeats, axis): each element's copies sum."""
    shape = np.shape(x)
    if axis is None:
        return np.reshape(np.sum(np.reshape(g, (-1, repeats)), axis=1), shape)
    axis = axis % len(shape)
    g = np.reshape(g, shape[:axis] + (shape[axis], repeats) + shape[axis + 1:])
    return np.sum(g, axis=axis + 1)
''',
    "tile_adjoint": '''
def tile_adjoint(g, x, reps):
    """The adjoint of np.tile(x, reps): the tiles' adjoints summed. Axis k of
    the result is reps[k] blocks of x's axis k (both padded with leading 1s)."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    shape = tuple(np.shape(x))
    d = max(len(shape), len(reps))
    blocks = (1,) * (d - len(reps)) + reps
    lengths = (1,) * (d - len(shape)) + shape
    split = sum(((r, n) for r, n in zip(blocks, lengths)), ())
    return np.reshape(np.sum(np.reshape(g, split), axis=tuple(range(0, 2 * d, 2))), shape)
''',
    "diag_adjoint": '''
def diag_adjoint(g, x, k):
    """The adjoint of np.diag(x, k): of a vector x (the result a matrix with x
    on its k-th diagonal), that diagonal of g; of a matrix, g placed back on
    x's k-th diagonal (np.eye times the column of g's values, no writes)."""
    if np.ndim(x) == 1:
        return np.diag(g, k)
    n, m = np.shape(x)
    lead = max(-k, 0)
    column = np.concatenate([np.zeros(lead, dtype=np.result_type(g)), g,
                             np.zeros(n - lead - np.shape(g)[0], dtype=np.result_type(g))])
    return np.eye(n, m, k, dtype=np.result_type(x, g)) * column[:, None]
''',
    "trace_adjoint": '''
def trace_adjoint(g, x, offset):
    """The adjoint of np.trace(x, offset): g on the offset diagonal of the
    first two axes (g broadcast along the others)."""
    shape = np.shape(x)
    e = np.eye(shape[0], shape[1], offset, dtype=np.result_type(x, g))
    return np.reshape(e, e.shape + (1,) * (len(shape) - 2)) * g
''',
    "stacked_part": '''
def stacked_part(g, xs, i, how):
    """The slice of g that np.hstack(xs) (how "h") or np.vstack(xs) ("v") took
    from xs[i], in xs[i]'s shape. hstack joins 1-d arrays (numbers count as
    length 1) along axis 0, others along axis 1; vstack joins along axis 0,
    a vector or number counting as one row."""
    nds = [np.ndim(x) for x in xs]
    if how == "h":
        axis = 0 if max(nds[0], 1) == 1 else 1
    else:
        axis = 0
    def length(x, nd):
        if how == "v" and nd < 2 or how == "h" and nd == 0:
            return 1
        return np.shape(x)[axis]
    start = sum(length(x, nd) for x, nd in zip(xs[:i], nds[:i]))
    part = g[(slice(None),) * axis + (slice(start, start + length(xs[i], nds[i])),)]
    return np.reshape(part, np.shape(xs[i]))
''',
    "stacked_back": '''
def stacked_back(g, xs, i, how):
    """np.hstack (how "h") or np.vstack ("v") of xs with g in the place of
    xs[i] and zeros in the others': what stacked_part takes apart, put back
    (its transpose, for a gradient module read back from its file)."""
    parts = [g if k == i else np.zeros_like(x) for k, x in enumerate(xs)]
    return np.hstack(parts) if how == "h" else np.vstack(parts)
''',
    "inner_adjoint": '''
def inner_adjoint(g, x, y, i):
    """The adjoint of np.inner(x, y), which contracts the last axes: g's axes
    are x's other axes, then y's other axes."""
    nx, ny = np.ndim(x), np.ndim(y)
    if nx == 0 or ny == 0:
        return unbroadcast(np.multiply(g, y if i == 0 else x), x if i == 0 else y)
    if i == 0:
        return np.tensordot(g, y, axes=(list(range(nx - 1, nx + ny - 2)), list(range(ny - 1))))
    return np.tensordot(g, x, axes=(list(range(nx - 1)), list(range(nx - 1))))
''',
    "solve_adjoint": '''
def solve_adjoint(g, a, b, out, i):
    """The adjoint of out = np.linalg.solve(a, b): b's is solve(aᵀ, g), a's
    minus that times outᵀ. b is a vector (one column) only when it has one
    axis; a stack of matrices a then solves it for each."""
    vector = np.ndim(b) == 1
    at = np.swapaxes(a, -1, -2)
    gb = np.linalg.solve(at, g[..., None])[..., 0] if vector else np.linalg.solve(at, g)
    if i == 1:
        return unbroadcast(gb, b)
    if vector:
        return unbroadcast(-(gb[..., :, None] * out[..., None, :]), a)
    return unbroadcast(-(gb @ np.swapaxes(out, -1, -2)), a)
''',
    "tensordot_adjoint": '''
def tensordot_adjoint(g, x, y, axes, i):
    """The adjoint of np.tensordot(x, y, axes) with respect to x (i = 0) or y
    (i = 1): g's axes are x's free axes, then y's; contract g with the other
    operand over that operand's free axes and put the axes back in order."""
    nx, ny = np.ndim(x), np.ndim(y)
    if isinstance(axes, int):
        ax, ay = list(range(nx - axes, nx)), list(range(axes))
    else:
        ax, ay = axes
        ax = [ax] if isinstance(ax, int) else list(ax)
        ay = [ay] if isinstance(ay, int) else list(ay)
    ax, ay = [a % nx for a in ax], [a % ny for a in ay]
    free_x = [k for k in range(nx) if k not in ax]
    free_y = [k for k in range(ny) if k not in ay]
    if i == 0:
        t = np.tensordot(g, y, axes=(list(range(len(free_x), np.ndim(g))), free_y))
        order = free_x + [ax[ay.index(k)] for k in sorted(ay)]
    else:
        t = np.tensordot(x, g, axes=(free_x, list(range(len(free_x)))))
        order = [ay[ax.index(k)] for k in sorted(ax)] + free_y
    return np.transpose(t, tuple(int(k) for k in np.argsort(order)))
''',
    "cholesky_adjoint": '''
def cholesky_adjoint(g, L):
    """The adjoint of L = np.linalg.cholesky(x) with respect to x, of which
    NumPy reads only the lower triangle: with P = Φ(Lᵀ·g) (the lower
    triangle, diagonal halved) and S = L⁻ᵀ·P·L⁻¹, tril(S + Sᵀ) − diag S.
    Another array library's cholesky may return the upper factor (Dask's
    does): the function then differs from NumPy's, and this adjoint would be
    wrong for it, so such a factor is refused."""
    if type(L) is not np.ndarray and bool(np.any(np.triu(L, 1) != 0)):
        raise TypeError("np.linalg.cholesky returned an upper-triangular factor on "
                        + type(L).__name__ + " arrays; the adjoint is NumPy's (lower factor)")
    Lt = np.swapaxes(L, -1, -2)
    P = np.tril(Lt @ g)
    n = np.shape(L)[-1]
    P = P - 0.5 * P * np.eye(n)
    Linv = np.linalg.inv(L)
    S = np.swapaxes(Linv, -1, -2) @ P @ Linv
    return np.tril(S + np.swapaxes(S, -1, -2)) - S * np.eye(n)
''',
    "moved": '''
def moved(x, source, destination):
    """np.moveaxis(x, source, destination), one axis each. For an ndarray of one
    axis, x itself (its only axis stays where it is); of two axes moved apart,
    its transpose; anything else, np.moveaxis (several microseconds a call, which
    dominates a batched body over short vectors)."""
    if type(x) is np.ndarray and type(source) is int and type(destination) is int:
        if x.ndim == 1 and source in (0, -1) and destination in (0, -1):
            return x
        if x.ndim == 2 and source % 2 != destination % 2:
            return x.T
    return np.moveaxis(x, source, destination)
''',
    "rolled": '''
def rolled(g, shift, axis):
    """np.roll(g, shift, axis) (in the reverse sweep, a roll's adjoint: the
    roll by -shift). For an ndarray and one int shift, its two pieces joined
    by one np.concatenate (np.roll's general form costs several microseconds
    a call, which dominates on short vectors; 0.85 µs on a 10-vector, against
    1.7 µs for an empty array and two slice copies); anything else, np.roll
    itself."""
    if type(g) is not np.ndarray or type(shift) is not int or g.ndim == 0 or not (
            axis is None and g.ndim == 1 or type(axis) is int):
        return np.roll(g, shift, axis=axis)
    if axis is None or axis == 0:
        n = len(g)
        if n == 0 or shift % n == 0:
            return g.copy()
        s = n - shift % n
        return np.concatenate((g[s:], g[:s]))
    axis = axis % g.ndim
    n = g.shape[axis]
    if n == 0 or shift % n == 0:
        return g.copy()
    s = n - shift % n
    lead = (slice(None),) * axis
    return np.concatenate((g[lead + (slice(s, None),)], g[lead + (slice(None, s),)]), axis=axis)
''',
    "sort_adjoint": '''
def sort_adjoint(g, x, axis):
    """The adjoint of np.sort(x, axis): each element of g goes back to the
    position its element was sorted from (over the flattened array when
    axis is None)."""
    if axis is None:
        return np.reshape(sort_adjoint(g, np.ravel(x), 0), np.shape(x))
    order = np.argsort(x, axis=axis)
    return np.take_along_axis(g, np.argsort(order, axis=axis), axis=axis)
''',
    "take_adjoint": '''
def take_adjoint(g, x, index, axis):
    """The adjoint of np.take(x, index, axis): g added back at the indices
    (repeated indices add up; over the flattened array when axis is None).
    The zeros are made like x (a Dask x gives Dask zeros) and added into
    where they are returned from, never through a view."""
    dtype = np.result_type(x, g)
    if axis is None:
        if type(x) is not np.ndarray and np.ndim(g) != 0 and np.shape(g) != np.shape(index):
            # Dask's np.take(x, index) takes along axis 0 instead of flattening x: the
            # function then differs from NumPy's, and this adjoint would be wrong for it
            raise TypeError("np.take without an axis did not flatten " + type(x).__name__
                            + " arrays; the adjoint is NumPy's (over the flattened array)")
        flat = np.zeros_like(np.ravel(x), dtype=dtype)
        add_at(flat, np.ravel(index), np.ravel(g))
        return np.reshape(flat, np.shape(x))
    shape = np.shape(x)
    axis = axis % len(shape)
    moved = np.zeros_like(np.moveaxis(x, axis, 0), dtype=dtype)
    lead = tuple(range(axis, axis + np.ndim(index)))
    gm = np.moveaxis(np.reshape(g, shape[:axis] + np.shape(index) + shape[axis + 1:]),
                     lead, tuple(range(np.ndim(index))))
    add_at(moved, index, gm)
    return np.moveaxis(moved, 0, axis)
''',
    "take_along_axis_adjoint": '''
def take_along_axis_adjoint(g, x, index, axis):
    """The adjoint of np.take_along_axis(x, index, axis): g added back where
    each element was taken from (repeats add up)."""
    out = np.zeros_like(x, dtype=np.result_type(x, g))
    shape = np.shape(g)
    axis = axis % len(shape)
    grid = list(np.ix_(*[np.arange(n) if np.shape(x)[k] == n else np.zeros(n, dtype=int)
                         for k, n in enumerate(shape)]))
    grid[axis] = np.broadcast_to(index, shape)
    add_at(out, tuple(grid), g)
    return out
''',
    "diagonal_adjoint": '''
def diagonal_adjoint(g, x, offset, axis1, axis2):
    """The adjoint of np.diagonal(x, offset, axis1, axis2): g (whose last
    axis runs along the diagonal) placed back on that diagonal, as a product
    with a constant array of ones at (row, column, position along the
    diagonal): no writes, so any array type that has np.tensordot serves."""
    shape = np.shape(x)
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    length = np.shape(g)[-1]
    rows = np.arange(length) + max(-offset, 0)
    place = np.zeros((shape[a1], shape[a2], length), dtype=np.result_type(x, g))
    place[rows, rows + offset, np.arange(length)] = 1.0
    out = np.tensordot(g, place, axes=([np.ndim(g) - 1], [2]))  # (Dask: no negative axes)
    return np.moveaxis(out, (-2, -1), (a1, a2))
''',
    "pad_adjoint": '''
def pad_adjoint(g, x, pad_width):
    """The adjoint of np.pad(x, pad_width): g without the padding."""
    nd = np.ndim(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (nd, 2))
    return g[tuple(slice(int(b), int(b) + n) for (b, _), n in zip(widths, np.shape(x)))]
''',
    "eye_matrix": '''
def eye_matrix(*args, k=0, dtype=None, _kept={}):
    """np.eye(*args, k=k, dtype=dtype); np.eye(n) of a small int n as a copy
    of an identity matrix kept by size (read-only), a fraction of np.eye's
    cost."""
    if k != 0 or dtype is not None or len(args) != 1 or type(args[0]) is not int \
            or not 0 < args[0] <= 16:
        return np.eye(*args, k=k, dtype=dtype)
    kept = _kept.get(args[0])
    if kept is None:
        kept = np.eye(args[0])
        kept.flags.writeable = False
        _kept[args[0]] = kept
    return kept.copy()
''',
    "cross_product": '''
def cross_product(a, b):
    """np.cross(a, b); for two float64 3-vectors from their components, the
    same six products and three differences (np.cross spends tens of
    microseconds moving axes; other dtypes keep NumPy's arithmetic). With
    2-vectors, np.cross gives the z component alone, so the adjoint of one
    (a 2-vector and the z components, one axis fewer) is the cross product
    with (0, 0, z), its x and y components."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.shape == (3,) == b.shape \
            and a.dtype == b.dtype and a.dtype.char == "d":
        a0, a1, a2 = a.tolist()
        b0, b1, b2 = b.tolist()
        return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], a.dtype)
    if np.shape(a)[-1:] == (2,) and np.ndim(b) == np.ndim(a) - 1:
        return np.stack([a[..., 1] * b, -a[..., 0] * b], axis=-1)
    if np.shape(b)[-1:] == (2,) and np.ndim(a) == np.ndim(b) - 1:
        return np.stack([-a * b[..., 1], a * b[..., 0]], axis=-1)
    return np.cross(a, b)
''',
    "assign": '''
def assign(y, index, v):
    """A copy of y with y[index] = v: inside a loop the forward pass keeps each
    version of y, for the reverse sweep."""
    y = y.copy() if type(y) is np.ndarray else np.copy(y)
    y[index] = v
    return y
''',
    "scatter": '''
def scatter(g, x, index, _array=np.ndarray):
    """Zeros shaped like x with g added at x[index] (repeated indices add up).
    A basic index (ints, slices, None, ...) picks each element at most once,
    so assigning g there is the same sum without np.add.at's cost. The zeros
    are made like x, or like g where x is an ndarray and g another library's
    array (a Dask adjoint of an array the function made with np.zeros): the
    adjoint stays in g's library. An integer x gets float zeros: its adjoint
    is no integer."""
    if type(x) is not _array:
        out = np.zeros_like(x)
    elif type(g) is _array or isinstance(g, (int, float, complex, np.generic)):
        dtype = x.dtype
        out = np.zeros(x.shape, dtype if dtype.kind not in "biu" else float)
    else:
        out = np.zeros_like(g, shape=x.shape, dtype=x.dtype if x.dtype.kind not in "biu" else float)
    if type(index) is int or type(index) is slice:  # the common case, decided at once
        out[index] = g
        return out
    items = index if type(index) is tuple else (index,)
    if all(type(i) in (int, slice, type(None), type(Ellipsis)) or isinstance(i, np.integer)
           for i in items):
        if type(out) is not np.ndarray and any(i is None for i in items):
            # Dask cannot assign through a new axis: assign g, without those
            # length-1 axes, where the index less its Nones points
            kept = tuple(i for i in items if i is not None)
            out[kept] = np.reshape(np.broadcast_to(g, np.shape(out[index])),
                                   np.shape(out[kept]))
        else:
            out[index] = g
    else:
        add_at(out, index, g)
    return out
''',
    "add_scattered": '''
def add_scattered(y, index, g):
    """y + scatter(g, y, index), into y in place (an array the reverse sweep
    made and nobody else holds): an index of ints and slices (and, for an
    ndarray, masks) picks each element at most once, so y[index] = y[index]
    + g; any other, add_at."""
    items = index if type(index) is tuple else (index,)
    plain = (int, slice, type(None), type(Ellipsis)) if type(y) is np.ndarray else (int, slice)
    if all(type(i) in plain or isinstance(i, np.integer) or type(y) is np.ndarray
           and type(i) is np.ndarray and i.dtype == bool for i in items):
        y[index] = y[index] + g  # (not +=: NumPy cannot add a Dask g into an ndarray y in place)
    else:
        add_at(y, index, g)
''',
    "added_into": '''
def added_into(c, x, index, g, _array=np.ndarray):
    """c + scatter(g, x, index), c an array the reverse sweep has just made
    (nobody else holds it): g added into c[index] in place where c is an
    ndarray of x's shape and dtype, x an ndarray, the index an int or a slice
    (each element once) and g a real number or ndarray; otherwise the sum
    itself, whose library is the one scatter makes x's zeros in (the adjoint
    of a Dask x stays a Dask array where c is a NumPy one)."""
    if type(c) is _array and type(x) is _array and c.shape == x.shape and c.dtype == x.dtype \
            and (type(index) is int or type(index) is slice) and (
                type(g) is float or (type(g) is _array or isinstance(g, np.generic))
                and g.dtype.kind in "fiu"):
        c[index] += g
        return c
    return c + scatter(g, x, index)
''',
    "add_at": '''
def add_at(y, index, g):
    """y[index] += g in place, repeated indices adding up (np.add.at). An array
    type without np.add.at (a Dask array) takes y[index] += g where the index
    cannot repeat an element (integers and slices); any other index (integer
    arrays, masks) selects the flat positions of the elements it reads from an
    array of positions shaped like y, and np.bincount sums g by position: the
    same sum, through dispatching functions only."""
    if type(y) is np.ndarray:
        if type(g) is not np.ndarray and not isinstance(g, (int, float, complex, np.generic)):
            g = np.asarray(g)  # another library's adjoint (Dask's) added into a NumPy array
        np.add.at(y, index, g)
        return
    items = index if type(index) is tuple else (index,)
    if all(type(p) in (slice, type(None), type(Ellipsis)) or np.ndim(p) == 0
           and np.result_type(p).kind in "iu" for p in items):
        # a 0-d array of the same library (Dask's) as a plain index
        parts = tuple(p if type(p) in (slice, type(None), type(Ellipsis)) else int(p)
                      for p in items)
        kept = tuple(p for p in parts if p is not None)
        if len(kept) != len(parts):  # new axes (None): length 1 in g, absent from y
            g = np.reshape(np.broadcast_to(g, np.shape(y[parts])), np.shape(y[kept]))
        y[kept] += g
        return
    shape = tuple(np.shape(y))
    size = 1
    for n in shape:
        size *= n
    if len(items) == 1 and np.shape(index) == shape and np.result_type(index) == bool:
        where = np.flatnonzero(index)  # a mask: g's items at its true positions, in order
        w = np.ravel(g) if np.ndim(g) else np.zeros_like(where, dtype=np.result_type(g)) + g
    else:
        where = np.reshape(np.arange(size), shape)[tuple(
            p if type(p) in (slice, type(None), type(Ellipsis), int) or isinstance(p, np.ndarray)
            else np.asarray(p) for p in items)]
        w = np.ravel(np.broadcast_to(g, np.shape(where)))
    # the positions as an array of g's library, chunked like g (Dask's bincount needs that)
    at = np.zeros_like(np.real(w), dtype=np.intp) + np.ravel(where)
    if np.iscomplexobj(w):  # np.bincount sums real weights
        sums = (np.bincount(at, weights=np.real(w), minlength=size)
                + 1j * np.bincount(at, weights=np.imag(w), minlength=size))
    else:
        sums = np.bincount(at, weights=w, minlength=size)
    y[...] = y + np.reshape(sums, shape)
''',
    "float_zeros": '''
def float_zeros(x, _array=np.ndarray, _zeros=np.zeros):
    """np.zeros_like(x) + 0.0 in one step: zeros of x's shape in x's floating
    dtype (float64 for integers and bools), a fresh array to add into in place
    (_array, _zeros: no global lookups, 0.3 µs of a 0.6 µs call)."""
    if type(x) is _array and x.ndim:
        dtype = x.dtype
        return _zeros(x.shape, dtype if dtype.kind in "fc" else np.float64)
    return np.zeros_like(x) + 0.0
''',
    "seeded": '''
def seeded(x, g, _array=np.ndarray):
    """float_zeros(x) + g: the adjoint of an array x a function returns, which
    its backward pass only reads, starting as the caller's cotangent g. g
    itself where the sum has g's shape and dtype: an ndarray of x's shape and
    of float_zeros(x)'s dtype, owning its data (a caller writes into no
    cotangent it passes; a view, of an adjoint it may write into, is added
    to zeros as before). The same numbers; a -0.0 of g stays -0.0."""
    if type(g) is _array and type(x) is _array and g.base is None and g.shape == x.shape:
        dtype = x.dtype
        if g.dtype == (dtype if dtype.kind in "fc" else np.float64):
            return g
    return float_zeros(x) + g
''',
    "astype_like": '''
def astype_like(g, x):
    """g in x's floating dtype: a float32 argument gets a float32 gradient even
    where the function mixed in float64 values (np.zeros(n), float64 arguments)."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind not in "fc" or getattr(g, "dtype", None) == dtype:
        return g
    if isinstance(x, np.generic):  # a NumPy scalar: its gradient one too
        return dtype.type(g)
    return np.asarray(g, dtype=dtype)
''',
    "zeroed": '''
def zeroed(g, index, y):
    """A copy of g with g[index] = 0: those elements were overwritten. g may
    still be a number (an adjoint that started at 0.0, or the seed): then
    it stands for an array of y's shape."""
    if type(g) is np.ndarray and type(y) is np.ndarray and g.shape == y.shape:
        g = g.astype(np.result_type(y, g))  # a copy
    else:
        g = np.zeros_like(y, dtype=np.result_type(y, g)) + g
        if isinstance(g, np.generic):  # y 0-d: the sum is a NumPy scalar
            g = np.array(g)
    g[index] = 0.0
    return g
''',
    "total": '''
def total(g, _array=np.ndarray, _reduce=np.add.reduce):
    """np.sum(g) for an array; g itself for a number (np.sum of a NumPy scalar
    costs microseconds, as much as a short loop iteration)."""
    if type(g) is _array:
        # what np.sum calls for an ndarray, without its wrapper; a row by its one
        # axis, the same sum 0.3 µs sooner than by axis=None
        return _reduce(g) if g.ndim == 1 else _reduce(g, None)
    return g if isinstance(g, (int, float, complex, np.generic)) else np.sum(g)
''',
    "array_sum": '''
def array_sum(x, _array=np.ndarray, _reduce=np.add.reduce):
    """np.sum(x), the same value of the same type: for an ndarray the reduction
    np.sum calls, without the microsecond its wrapper costs on a short row (a
    row by its one axis, the same sum 0.3 µs sooner than by axis=None)."""
    if type(x) is _array:
        return _reduce(x) if x.ndim == 1 else _reduce(x, None)
    return np.sum(x)
''',
    "own": '''
def own(v):
    """v.copy(), which later writes into the array v was read from cannot
    change; a NumPy scalar cannot change anyway, and copying one costs more
    than the arithmetic around it."""
    return v if isinstance(v, np.generic) else v.copy()
''',
}
"""Functions a generated module defines for itself when its code calls them."""
HELPERS.update(INDEX_HELPERS)  # adjoints of writes by index (s2s_ad.rules.index_helpers)
HELPERS.update(LIST_HELPERS)  # a reverse loop's lists (s2s_ad.reverse.element_lists)
HELPERS.update(SHAPE_HELPERS)  # tiling slices, one shape for several arrays
HELPERS.update(MORE_HELPERS)  # the rules of s2s_ad.rules.numpy_more, any einsum's adjoint


def define(base: str, np: str, fresh, names: dict, texts: dict) -> str:
    """The module's name of helper ``base``, its text put in ``texts`` (name ->
    text) on first use: ``fresh(base)`` names it (``base`` itself unless the
    function has a value of that name), ``np`` the module's NumPy alias, and
    the helpers it calls are defined and renamed alike; ``names``: base ->
    name, what was defined so far."""
    if base not in names:
        generated = names[base] = fresh(base)
        text = HELPERS[base].replace("np.", f"{np}.")
        text = re.sub(rf"\b{base}\(", f"{generated}(", text)
        for other in HELPERS:  # a helper calling another (matmul_adjoint → unbroadcast)
            if other != base and re.search(rf"\b{other}\(", text):
                text = re.sub(rf"\b{other}\(", f"{define(other, np, fresh, names, texts)}(", text)
        texts[generated] = text.strip("\n")
    return names[base]
