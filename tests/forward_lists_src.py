"""Lists of any length passed to helpers, differentiated in forward mode
(tests/test_forward_lists.py): list parameters passed on, lists grown by
`append` and made by `[c] * n` passed to helpers and helpers of helpers, a
list passed that carries no tangent, NumPy lists of arrays. Plain Python:
the tests compare s2s-ad's tangents with central differences of these."""

import math

import numpy as np


def _sumsq(xs):
    s = 0.0
    for v in xs:
        s = s + v * v
    return s


def _ends(xs, w):
    return _sumsq(xs) * w + xs[0] * xs[-1] + sum(xs)


def _horner(cs, x):
    s = 0.0
    for c in reversed(cs):
        s = s * x + c
    return s


def _through(cs, x):
    return _horner(cs, x) + _ends(cs, x)  # a list passed on to helpers of the helper


# f(cs, x): cs a list of floats of any length (at least one item)

def param_passed(cs, x):
    return _horner(cs, x) * x + _ends(cs, x)


def param_passed_on(cs, x):
    return _through(cs, x * 0.5) + math.sin(_sumsq(cs))


def param_read_and_passed(cs, x):
    s = 0.0
    for i, c in enumerate(cs):
        s = s + c * (i + 1.0) * x
    return s + _horner(cs, s) * 0.1


def param_in_loop_and_branch(cs, x):
    s = 0.0
    for k in range(3):
        if x * k > 0.5:
            s = s + _horner(cs, x + k * 0.1)
        else:
            s = s - _ends(cs, x)
    return s


# f(x, w, n): n an int, the number of items grown

def grown_passed(x, w, n):
    xs = [x]
    for i in range(n):
        xs.append(math.sin(xs[-1]) * w + 0.1 * xs[i])
    return _through(xs, w) + xs[-1]


def filled_passed(x, w, n):
    ys = [0.0] * (n + 1)
    for i in range(n + 1):
        ys[i] = math.cos(x * (i + 1.0)) * w
    return _ends(ys, x) + _horner(ys, w)


def inactive_passed(x, w, n):
    # the list carries no tangent: the helper's JVP gets a list of zeros
    ks = []
    for i in range(n + 1):
        ks.append(i * 0.5 + 1.0)
    return _ends(ks, x) * w + _horner(ks, x * w)


def grown_in_loop_passed(x, w, n):
    s = 0.0
    t = x
    xs = []
    for i in range(n + 1):
        t = math.sin(t * w) + x
        xs.append(t)
        s = s + _sumsq(xs) * 0.5
    return s


# f(hs, W): hs a list of NumPy arrays of any length

def _np_total(hs, W):
    s = 0.0
    for h in hs:
        s = s + np.sum(np.tanh(W @ h))
    return s


def _np_pairs(hs, W):
    s = 0.0
    for a, b in zip(hs, reversed(hs)):
        s = s + np.dot(W @ a, b)
    return s + _np_total(hs, W)


def np_param_passed(hs, W):
    return _np_pairs(hs, W) * 0.5 + np.sum(hs[0] * hs[-1])


def np_grown_passed(W, x, n):
    h = x
    hs = [x * 1.0]
    for t in range(n):
        h = np.tanh(W @ h)
        hs.append(h)
    return _np_pairs(hs, W) + _np_total(hs, W * 2.0)
