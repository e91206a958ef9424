"""Integer index arrays computed from ints, in NumPy code: ``np.arange``,
``np.repeat`` with an array of repeats, ``np.concatenate`` of a comprehension
over ``range``, ``np.tril_indices``, and writes by them into a fresh array
(``z[:, rows, cols] = v``). tests/test_index_arrays.py differentiates these
with s2s-ad and compares with central differences of the functions
themselves."""

import numpy as np
from scipy.special import logsumexp


def packed_rows_cols(d):
    """Row and column of each entry of a strictly lower triangle, packed
    column by column: column c holds the rows c+1 .. d-1."""
    cols = np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))
    rows = np.concatenate([np.arange(c + 1, d) for c in range(d - 1)])
    return rows, cols


def unpack(lower, d: int):
    """The packed lower triangles of ``lower`` (one row per matrix) as a
    stack of d × d matrices with a zero diagonal."""
    rows, cols = packed_rows_cols(d)
    tri = np.zeros((lower.shape[0], d, d))
    tri[:, rows, cols] = lower
    return tri


def mixture(alphas, means, logdiag, lower, x, d: int):
    """Negative log-likelihood of a Gaussian mixture whose precision factors
    are exp(logdiag) on the diagonal and ``lower`` packed below it."""
    n = x.shape[0]
    factors = unpack(lower, d)
    centred = x[:, None, :] - means[None, :, :]
    z = np.exp(logdiag) * centred + np.einsum("kij,nkj->nki", factors, centred)
    inner = alphas + np.sum(logdiag, axis=1) - 0.5 * np.sum(z ** 2, axis=2)
    return n * logsumexp(alphas) - np.sum(logsumexp(inner, axis=1)) + 0.5 * np.sum(lower ** 2)


def inline_triangle(lower, w, d: int):
    """Everything in one function: the index arrays, the write, a weighting."""
    cols = np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))
    rows = np.concatenate([np.arange(c + 1, d) for c in range(d - 1)])
    tri = np.zeros((lower.shape[0], d, d), dtype=lower.dtype)
    tri[:, rows, cols] = lower
    return np.sum(np.tanh(tri @ w) ** 2)


def tril_write(v, d: int):
    """``np.tril_indices`` with an offset, and the diagonal by ``np.arange``."""
    rows, cols = np.tril_indices(d, -1)
    m = np.zeros((d, d))
    m[rows, cols] = v[: d * (d - 1) // 2]
    diag = np.arange(d)
    m[diag, diag] = np.exp(v[-d:])
    return np.sum(np.sin(m @ m.T))


def shifted_read(x, d: int):
    """Index arrays read elements too (their adjoint scatters back), here
    with repeated indices."""
    idx = np.repeat(np.arange(d), np.arange(d) + 1) % x.shape[0]
    return np.sum(x[idx] ** 3)


def helper_of_helper(alphas, means, logdiag, lower, x, d: int):
    return 2.0 * mixture(alphas, means, logdiag, lower, x, d)


def in_a_loop(lower, w, reps: int):
    total = 0.0
    for r in range(reps):
        total = total + inline_triangle(lower * (r + 1.0), w, 3) + np.sum(unpack(lower, 3)) * r
    return total


def in_a_branch(lower, w, d: int):
    if d > 2:
        out = inline_triangle(lower, w, d)
    else:
        out = np.sum(lower ** 2)
    return out


def written_in_a_loop(lower, d: int):
    """The write inside a loop, into an array made before it, one matrix a turn."""
    rows, cols = packed_rows_cols(d)
    tri = np.zeros((lower.shape[0], d, d))
    total = 0.0
    for i in range(lower.shape[0]):
        tri[i, rows, cols] = lower[i] * (i + 1.0)
        total = total + np.sum(np.cos(tri[i]))
    return total + np.sum(tri ** 2)


# -- refused, or checked where the code runs -----------------------------------

def repeats_of_values(x, d: int):
    """A repeat of a value that carries a gradient by a run-time count."""
    return np.sum(np.repeat(x, np.arange(d) + 1))


def float_in_comprehension(x, d: int):
    idx = np.concatenate([np.arange(c, d) * 0.5 for c in range(d)])
    return np.sum(x * idx)


def comprehension_over_values(x, d: int):
    idx = np.concatenate([np.arange(c) for c in x])
    return np.sum(idx)


def write_by_data(x, idx):
    z = np.zeros(5)
    z[idx] = x
    return np.sum(z ** 2)


def repeated_write(x, d: int):
    """rows repeats a position when d > 1: checked, where the code runs."""
    rows = np.repeat(np.arange(d), 2)
    z = np.zeros((d, 2 * d))
    z[rows, np.arange(2 * d)] = x
    z[rows, rows] = x
    return np.sum(z ** 2)


def dtype_constructors(x):
    """``dtype=x.dtype`` on the constructors that take it."""
    ones = np.ones((x.shape[0], 2), dtype=x.dtype)
    half = np.full(x.shape, 0.5 * x[0], dtype=x.dtype)  # the fill value has a gradient
    z = np.zeros(3, dtype=x.dtype)
    return np.sum((x[:, None] * ones) ** 2) + np.sum(half * x) + np.sum(z)
