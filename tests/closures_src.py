"""Nested functions, lambdas and closures (tests/test_closures.py)."""

import math

import numpy as np


def nested_reads_outer(x, y):
    c = x * 2.0

    def h(t):
        return math.sin(t) * c + y

    return h(x) + h(y * 0.5)


def late_binding(x, y):
    c = x * 2.0

    def h(t):
        return t * c            # c as it is when h is called

    a = h(y)
    c = y * 3.0
    return a + h(x)


def nested_in_loop(x, n):
    scale = x * 0.5

    def step(s, i):
        return s * scale + math.cos(x * i)

    s = 1.0
    for i in range(n):
        s = step(s, i)
    return s


def nested_calls_nested(x, y):
    w = y * y

    def inner(t):
        return t * w

    def outer(t):
        return inner(t) + math.exp(-t * x)

    return outer(x) * outer(y)


def nested_with_branch_and_loop(x, y):
    def clipped_sum(t, k):
        s = 0.0
        for i in range(k):
            if s < 2.0:
                s = s + t * y
            else:
                s = s - 0.1 * t
        return s

    return clipped_sum(x, 5) + clipped_sum(y, 3)


def lambdas(x, y):
    sq = lambda t: t * t + y                           # noqa: E731
    s = sum(map(sq, [x, y, x * y]))
    u = sum(map(lambda a, b: a * b, [x, y], [y, 2.0]))
    v = (lambda t: math.exp(-t))(x)
    return s + u + v + sq(x - y)


def calls_a_closure_user(x, y):
    """A helper position: the nested functions live in functions it calls."""
    return nested_reads_outer(x, y) * lambdas(y, x) + late_binding(y, x)


def kmeans_cost(points, centers):
    def all_pairs_norm(a, b):
        a_sqnorm = np.sum(a * a, axis=1)
        b_sqnorm = np.sum(b * b, axis=1)
        return a_sqnorm[:, None] + b_sqnorm[None, :] - 2.0 * (a @ b.T)

    dists = all_pairs_norm(points, centers)
    return np.sum(np.min(dists, axis=1))


def make_loss(data, k):
    def loss(w):
        return np.sum((data * w - k) ** 2)
    return loss


def make_scalar_loss(a, b):
    def loss(w, v):
        def bump(t):
            return math.exp(-t * t * a)
        return bump(w) * v + b * w * w
    return loss


scalar_loss = make_scalar_loss(1.5, 0.25)


def make_helper_closure(a):
    def bump(t):
        return math.exp(-t * t * a)

    def loss(w):
        return bump(w) * w
    return loss


helper_closure = make_helper_closure(1.5)


def make_counter():
    n = 0.0

    def f(x):
        return x * n
    n = 2.0
    return f


def recursive_nested(x):
    def fact(t, k):
        return 1.0 if k == 0 else t * fact(t, k - 1)
    return fact(x, 3)


def defined_in_branch(x):
    if x > 0.0:
        def h(t):
            return t
        return h(x)
    return x


def nested_used_as_value(x):
    def h(t):
        return t

    g = h
    return g(x)


def nested_nonlocal(x):
    c = 1.0

    def h(t):
        nonlocal c
        c = t
        return t

    return h(x) * c
