"""k-means: the sum over points of the squared distance to the nearest
center (GradBench's kmeans eval differentiates it with respect to the
centers, and takes a Newton step with the Hessian's diagonal)."""

import numpy as np


def kmeans_cost(points, centers):
    def all_pairs_sqdist(a, b):
        a_sq = np.sum(a ** 2, axis=1)[None, :]
        b_sq = np.sum(b ** 2, axis=1)[:, None]
        cross = (a @ b.T).T
        return a_sq + b_sq - 2 * cross

    dists = all_pairs_sqdist(points, centers)
    nearest = np.min(dists, axis=0)
    return nearest.sum()
