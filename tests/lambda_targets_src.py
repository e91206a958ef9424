"""Lambdas differentiated as targets, and called from functions."""

import math

import numpy as np

import s2s_ad

square, cube = (lambda x: x * x), (lambda x: x * x * x)
scaled = lambda x, a=2.0: a * math.sin(x)           # noqa: E731
both = lambda x: square(x) + cube(x)                # noqa: E731
mixed = lambda x, y: math.exp(x * y) + scaled(y)    # noqa: E731


def calls_lambdas(x):
    return square(x) * 2.0 + scaled(x)


def lambdas_in_a_loop(x, n):
    total = 0.0
    for i in range(n):
        total = total + both(x + 0.1 * i)
    return total


def in_a_branch(x):
    if x > 0.0:
        return cube(x)
    return square(x)


def cost(points, centers):
    d = np.sum((points[:, None, :] - centers[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(d, axis=1))


def cost_gradient(points, centers):
    # the JAX idiom: the gradient of a lambda closing over the data
    return s2s_ad.grad(lambda cs: cost(points, cs))(centers)


def series_gradient(x, coeffs):
    return s2s_ad.grad(lambda t: sum(c * t ** k for k, c in enumerate(coeffs)))(x)
