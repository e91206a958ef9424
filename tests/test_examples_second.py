"""The second-order examples (examples/kmeans.py, saddle.py, spring_chain.py)
against references that use no s2s-ad: central differences, Lloyd's update
computed from the assignments, and a hand-written derivative."""

from __future__ import annotations

import math

import numpy as np

import s2s_ad
from examples import kmeans, saddle, spring_chain

RNG = np.random.default_rng(2024)


def _fd(fn, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of fn (a number or an array) in each element of x:
    shape fn(x).shape + x.shape."""
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape)
        columns.append((np.asarray(fn(x + e), dtype=float) - np.asarray(fn(x - e), dtype=float))
                       / (2 * h))
    out = np.stack(columns, axis=-1)
    return out.reshape(np.shape(fn(x)) + x.shape)


def _points():
    blobs = np.array([[0.0, 0.0], [3.0, 0.5], [1.0, 3.0]])
    P = np.concatenate([b + 0.4 * RNG.normal(size=(12, 2)) for b in blobs])
    C = blobs + RNG.normal(scale=0.3, size=blobs.shape)
    return C, P


def test_kmeans_gradient_and_hessian_diagonal():
    C, P = _points()
    g, diagonal, direction = kmeans.newton_direction(C, P)
    np.testing.assert_allclose(g, _fd(lambda c: kmeans.kmeans_cost(c, P), C), rtol=1e-6,
                               atol=1e-6)
    # the Hessian diagonal: 2·(points nearest centre j), counted directly
    nearest = np.argmin(((P[:, None, :] - C[None, :, :]) ** 2).sum(axis=2), axis=1)
    counts = np.bincount(nearest, minlength=len(C))
    np.testing.assert_allclose(diagonal, 2.0 * counts[:, None] * np.ones_like(C))
    # ... and central differences of the gradient, column by column
    H_fd = _fd(lambda c: s2s_ad.grad(kmeans.kmeans_cost, wrt="C")(c, P), C, h=1e-5)
    H_fd = H_fd.reshape(C.size, C.size)
    np.testing.assert_allclose(np.diag(H_fd), diagonal.ravel(), rtol=1e-6, atol=1e-6)
    # the whole Hessian is that diagonal (one hvp with ones is enough)
    H = s2s_ad.hessian(kmeans.kmeans_cost, wrt="C")(C, P).reshape(C.size, C.size)
    np.testing.assert_allclose(H, H_fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(H, np.diag(diagonal.ravel()), atol=1e-9)
    # the Newton direction is Lloyd's update: each centre to the mean of its points
    lloyd = np.array([P[nearest == j].mean(axis=0) if counts[j] else C[j]
                      for j in range(len(C))])
    np.testing.assert_allclose(C + direction, lloyd, rtol=1e-12, atol=1e-12)


def test_kmeans_iteration_lowers_the_cost():
    C, P = _points()
    C1 = kmeans.kmeans(C, P, steps=10)
    assert kmeans.kmeans_cost(C1, P) < kmeans.kmeans_cost(C, P)
    _, _, direction = kmeans.newton_direction(C1, P)
    assert np.max(np.abs(direction)) < 1e-12  # converged: a fixed point of Lloyd's update


def _dfdy(x1, x2, y1, y2):
    """∂f/∂(y1, y2) of examples/saddle.py's f, by hand."""
    return (-2.0 * y1 + x1 + 0.5, -2.0 * y2 - 0.5 * x2 + 0.3 * math.cos(x1 + y2))


def _g(x1, x2, y1, y2):
    """The outer objective: f after STEPS ascent steps in y, without s2s-ad."""
    for _ in range(saddle.STEPS):
        a, b = _dfdy(x1, x2, y1, y2)
        y1, y2 = y1 + saddle.RATE * a, y2 + saddle.RATE * b
    return saddle.f(x1, x2, y1, y2)


def test_saddle_outer_gradient_runs_through_the_inner_loop():
    point = (0.8, -0.6, 0.1, 0.2)
    value, (g1, g2), _ = saddle.outer_value_and_grad(*point)
    assert math.isclose(value, _g(*point), rel_tol=1e-12)
    h = 1e-6
    fd1 = (_g(point[0] + h, *point[1:]) - _g(point[0] - h, *point[1:])) / (2 * h)
    fd2 = (_g(point[0], point[1] + h, *point[2:]) - _g(point[0], point[1] - h, *point[2:])) / (2 * h)
    assert math.isclose(g1, fd1, rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(g2, fd2, rel_tol=1e-6, abs_tol=1e-8)


def test_saddle_point_has_zero_gradient_and_the_right_curvature():
    point = saddle.saddle()
    h = 1e-6
    for k in range(4):
        up, down = list(point), list(point)
        up[k] += h
        down[k] -= h
        assert abs((saddle.f(*up) - saddle.f(*down)) / (2 * h)) < 1e-6
    H = s2s_ad.hessian(saddle.f, wrt=("x1", "x2", "y1", "y2"))(*point)
    H = np.array([[float(H[i][j]) for j in range(4)] for i in range(4)])
    assert np.all(np.linalg.eigvalsh(H[:2, :2]) > 0) and np.all(np.linalg.eigvalsh(H[2:, 2:]) < 0)


def test_spring_chain_jacobian_and_implicit_step():
    y = np.concatenate((RNG.normal(scale=0.3, size=spring_chain.N),
                        RNG.normal(scale=0.5, size=spring_chain.N)))
    J = s2s_ad.jacobian(spring_chain.rhs)(y)
    np.testing.assert_allclose(J, _fd(spring_chain.rhs, y), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s2s_ad.jacrev(spring_chain.rhs)(y), J, rtol=1e-12, atol=1e-12)
    h = 0.05
    z = spring_chain.implicit_step(y, h)
    np.testing.assert_allclose(z - y - h * spring_chain.rhs(z), 0.0, atol=1e-10)
    states = spring_chain.simulate(y, h=h, steps=20)
    energies = [spring_chain.energy(s) for s in states]
    assert all(b <= a + 1e-12 for a, b in zip(energies, energies[1:]))
