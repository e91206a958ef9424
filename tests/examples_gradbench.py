"""Arguments for the GradBench objectives of examples/gradbench (shared by
tests/test_gradbench.py and the benchmarks): random, at any size."""

import numpy as np


def gmm_args(rng, n, d, k):
    """alphas, means, icf (log-diagonal then lower triangle), x, gamma, m."""
    return [rng.normal(size=k), rng.normal(size=(k, d)),
            rng.normal(0, 0.3, (k, d + d * (d - 1) // 2)), rng.normal(size=(n, d)), 1.0, 0]


def kmeans_args(rng, n, k, d):
    return [rng.normal(size=(n, d)), rng.normal(size=(k, d))]


def llsq_args(rng, m, n):
    return [rng.normal(size=m), n]


def lse_args(rng, n):
    return [rng.normal(size=n)]


def det_args(rng, ell):
    """A, the flat row-major ℓ×ℓ matrix (well away from singular), and ℓ."""
    return [(rng.normal(size=(ell, ell)) + 2.0 * np.eye(ell)).ravel(), ell]


def ode_args(rng, n, s):
    return [rng.uniform(0.1, 1.0, n), s]


def lstm_args(rng, layers, b, c):
    """main_params (weights then biases per layer), extra_params, state, sequence."""
    return [rng.normal(0, 0.5, (2 * layers, 4 * b)), rng.normal(0, 0.5, (3, b)),
            rng.normal(0, 0.5, (2 * layers, b)), rng.normal(0, 0.5, (c, b))]


def ba_args(rng, n_cams, n_points, n_obs):
    """cams (rotation, center, focal, principal point, distortion), points,
    weights, observations (camera, point), features."""
    cams = np.concatenate([rng.normal(0, 0.3, (n_cams, 3)), rng.normal(0, 0.5, (n_cams, 3)),
                           rng.uniform(0.8, 1.2, (n_cams, 1)), rng.normal(0, 0.1, (n_cams, 2)),
                           rng.normal(0, 0.01, (n_cams, 2))], axis=1)
    X = rng.normal(0, 0.5, (n_points, 3)) + np.array([0.0, 0.0, 5.0])
    w = rng.uniform(0.5, 1.5, n_obs)
    obs = np.stack([np.arange(n_obs) % n_cams, rng.integers(0, n_points, n_obs)], axis=1)
    obs[:n_points, 1] = np.arange(min(n_points, n_obs))  # every point seen
    feats = rng.normal(0, 0.5, (n_obs, 2))
    return [cams, X, w, obs, feats]


def ht_args(rng, n_verts, n_points):
    """A synthetic hand of 22 bones (5 fingers of 4, a wrist and a palm):
    theta, parents, base_relatives, inverse_base_absolutes, base_positions
    (homogeneous), weights (each vertex's add up to 1), points,
    correspondences."""
    nbones = 22
    parents = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, nbones)])

    def transforms():
        t = np.tile(np.eye(4), (nbones, 1, 1))
        t[:, :3, :] += rng.normal(0, 0.2, (nbones, 3, 4))
        return t

    base_positions = np.concatenate([rng.normal(size=(n_verts, 3)), np.ones((n_verts, 1))],
                                    axis=1)
    weights = rng.uniform(0, 1, (n_verts, nbones)) ** 4
    weights /= weights.sum(axis=1, keepdims=True)
    theta = rng.normal(0, 0.5, 26)
    return [theta, parents, transforms(), transforms(), base_positions, weights,
            rng.normal(size=(n_points, 3)), rng.integers(0, n_verts, n_points)]
