"""``axis=`` given an int known only when the code runs: a parameter, a
computed int (tests/test_runtime_axis.py)."""

import numpy as np
from scipy.special import logsumexp


def reduce_along(x, k):
    return np.sum(np.sum(x * x, axis=k) ** 2) + np.sum(np.mean(np.sin(x), axis=k))


def normalise(x, axis):
    return x - logsumexp(x, axis=axis, keepdims=True)


def in_a_helper(x, k):
    return np.sum(normalise(x, k) ** 2)


def outer(x, k):
    return in_a_helper(x, k) * np.max(x, axis=k - 1, keepdims=True).sum()


def helper_of_a_helper(x, k):
    return outer(x * 0.5, k) + np.sum(np.cumsum(x, axis=x.ndim - 1) ** 2)


def in_a_loop(x, n):
    total = 0.0
    for k in range(n):
        total = total + np.sum(np.cumprod(x, axis=k) * np.flip(x, axis=k))
    return total


def in_a_branch(x, k):
    out = 0.0
    if np.sum(x) > 0:
        out = np.sum(np.var(x, axis=k) + np.std(x, axis=k))
    else:
        out = np.sum(np.roll(x, 1, axis=k) * x)
    return out


def shapes_made_along(x, k):
    s = np.stack([x, x * x], axis=k)
    c = np.concatenate([x, np.tanh(x)], axis=k)
    e = np.expand_dims(x, k)
    return np.sum(s ** 3) + np.sum(c * np.arange(np.size(c)).reshape(np.shape(c))) \
        + np.sum(np.squeeze(e, axis=k) * e.sum(axis=k))


def last_axis(x):
    d = len(x.shape) - 1
    return np.sum(np.sort(x, axis=d) * np.arange(x.shape[d])) + np.prod(x, axis=d).sum()


def masked_along(x, k):
    big = np.any(x > 0.9, axis=k, keepdims=True)
    kept = (x > 0.4).all(k)
    return np.sum(np.where(big, x * x, np.sin(x))) + np.sum(np.sum(x ** 3, axis=k) * kept)


def masks_in_a_helper(x, k):
    return masked_along(x * 1.1, k) * np.sum(np.all(x < 1.0, axis=k, keepdims=True) * x)
