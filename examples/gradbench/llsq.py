"""Linear least squares: fit the coefficients x of a polynomial in t to
sign(t) at n points t evenly spaced on [-1, 1]."""

import numpy as np


def sample_point(i, n):
    return -1.0 + (i * 2.0) / (n - 1.0)


def llsq_objective(x, n):
    m = x.shape[0]

    def residual(i):
        ti = sample_point(i, n)
        powers = np.full(m, ti)
        powers[0] = 1.0
        muls = np.cumprod(powers)
        return (np.sign(ti) + np.sum(-x * muls)) ** 2

    total = 0.0
    for i in range(n):
        total += residual(i)
    return total / 2.0
