"""Functions calling a derivative s2s-ad made (tests/test_nested.py): the
charged particle of Pearlmutter and Siskind (GradBench's particle eval),
whose Euler steps read the force as the gradient of a potential, and a
NumPy energy whose gradient is summed again."""

import math

import numpy as np

import s2s_ad


def potential(x0, x1, w):
    return (1.0 / math.sqrt((x0 - 10.0) ** 2 + (x1 - 10.0 + w) ** 2)
            + 1.0 / math.sqrt((x0 - 10.0) ** 2 + x1 ** 2))


force = s2s_ad.grad(potential, wrt=(0, 1))


def naive_euler(w):
    x0, x1 = 0.0, 8.0
    v0, v1 = 0.75, 0.0
    dt = 0.1
    while True:
        g0, g1 = force(x0, x1, w)
        n0 = x0 + dt * v0
        n1 = x1 + dt * v1
        if n1 <= 0.0:
            break
        x0, x1 = n0, n1
        v0 = v0 - dt * g0
        v1 = v1 - dt * g1
    dtf = -x1 / v1
    xf = x0 + dtf * v0
    return xf * xf


def energy(x):
    return np.sum(np.tanh(x) * x)


energy_grad = s2s_ad.grad(energy)


def gradient_norm(x):
    g = energy_grad(x)
    return np.sum(g * g)


def other(x):
    return np.sum(np.sin(x) * x)


def lagrangian(x, lam):
    g0, g1 = force(x, 2.0, 0.0)
    return g0 * lam + g1


def kick(x0, x1, w):
    g0, g1 = force(x0, x1, w)
    return g0 * g0 + g1


def kicks(w):
    s = 0.0
    for i in range(3):
        s = s + kick(0.5 + i, 2.0, w)
    return s
