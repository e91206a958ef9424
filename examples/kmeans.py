"""k-means as Newton's method: the cost sum_i min_j |p_i - c_j|^2 of centres C
(k×d) for points P (n×d), its gradient and its Hessian diagonal.

Each centre's cost is a sum of squares of the points nearest it, so the
Hessian is diagonal (2·n_j on each coordinate of centre j, n_j its points)
and one Hessian-vector product with a vector of ones gives the whole
diagonal: one pass of the gradient of the forward-mode module, never the
k·d × k·d matrix. The Newton direction -g / diag(H) moves each centre to
the mean of its points (Lloyd's update, which the tests use as the
reference); a centre with no points has a zero gradient and stays.

    s2s-ad grad examples/kmeans.py:kmeans_cost --wrt C
    s2s-ad hessian examples/kmeans.py:kmeans_cost --wrt C
"""

import numpy as np


def kmeans_cost(C, P):
    D = np.expand_dims(P, 1) - np.expand_dims(C, 0)   # n × k × d differences
    d2 = np.sum(D * D, axis=2)                         # n × k squared distances
    return np.sum(np.min(d2, axis=1))


def newton_direction(C, P):
    """The gradient of the cost with respect to C, its Hessian diagonal, and the
    Newton direction -g / diag(H) (zero where the diagonal is: a centre without points)."""
    import s2s_ad

    g = s2s_ad.grad(kmeans_cost, wrt="C")(C, P)
    diagonal = s2s_ad.hvp(kmeans_cost, wrt="C")(C, P, np.ones_like(C))
    safe = np.where(diagonal > 0.0, diagonal, 1.0)
    return g, diagonal, np.where(diagonal > 0.0, -g / safe, 0.0)


def kmeans(C, P, steps=10):
    """Newton steps C <- C + direction; stops when no centre moves (beyond rounding)."""
    for _ in range(steps):
        _, _, direction = newton_direction(C, P)
        if np.max(np.abs(direction)) <= 1e-12 * (1.0 + np.max(np.abs(C))):
            break
        C = C + direction
    return C


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    blobs = np.array([[0.0, 0.0], [3.0, 0.5], [1.0, 3.0]])
    P = np.concatenate([b + 0.4 * rng.normal(size=(30, 2)) for b in blobs])
    C0 = P[[0, 1, 2]] + 0.1
    print("cost before:", kmeans_cost(C0, P))
    C = kmeans(C0, P)
    print("cost after: ", kmeans_cost(C, P))
    print("centres:\n", np.round(C, 3))
