"""Gaussian mixture model: the negative log-likelihood of n points in d
dimensions under k Gaussians with a Wishart prior on their precisions.

Each precision matrix is parametrised by its Cholesky-like factor
Q = diag(exp(q)) + L: ``icf[j, :d]`` holds the log-diagonal q and
``icf[j, d:]`` the strictly lower triangle of L, column by column.
"""

import math

import numpy as np
from scipy.special import logsumexp, multigammaln


def lower_triangles(d, lower):
    """The k strictly lower triangular d x d matrices whose entries, column by
    column, are the rows of ``lower``."""
    k = lower.shape[0]
    Ls = np.zeros((k, d, d))
    j = 0
    for col in range(d - 1):
        for row in range(col + 1, d):
            Ls[:, row, col] = lower[:, j]
            j += 1
    return Ls


def log_wishart_prior(p, wishart_gamma, wishart_m, sum_qs, Qdiags, icf):
    k = icf.shape[0]
    n = p + wishart_m + 1
    frobenius = np.sum(Qdiags ** 2, axis=1) + np.sum(icf[:, p:] ** 2, axis=1)
    out = np.sum(0.5 * wishart_gamma * wishart_gamma * frobenius - wishart_m * sum_qs)
    C = n * p * (math.log(wishart_gamma) - 0.5 * math.log(2))
    return out - k * (C - multigammaln(0.5 * n, p))


def gmm_objective(alphas, means, icf, x, wishart_gamma, wishart_m):
    n, d = x.shape
    q = icf[:, :d]
    Qdiags = np.exp(q)
    sum_qs = np.sum(q, axis=1)
    Ls = lower_triangles(d, icf[:, d:])

    xcentered = x[:, None, :] - means[None, :, :]
    Lxcentered = Qdiags * xcentered + np.einsum("kij,nkj->nki", Ls, xcentered)
    sqsum_Lxcentered = np.sum(Lxcentered ** 2, axis=2)
    inner_term = alphas + sum_qs - 0.5 * sqsum_Lxcentered
    slse = np.sum(logsumexp(inner_term, axis=1))

    const = -n * d * 0.5 * math.log(2 * math.pi)
    return (const + slse - n * logsumexp(alphas)
            + log_wishart_prior(d, wishart_gamma, wishart_m, sum_qs, Qdiags, icf))
