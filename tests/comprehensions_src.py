"""Comprehensions over lists of any length (tests/test_comprehensions.py):
over list parameters, lists a closure captures, lists grown at run time and
lists a helper returned; with `if`, `enumerate`, `zip`, `reversed`; inside
loops, branches and helpers; in NumPy code over lists of arrays. Plain
Python: the tests compare s2s-ad's derivatives with central differences."""

import math

import numpy as np


# f(cs, x): cs a list of floats of any length (at least 2 items)

def poly(cs, x):
    return sum([c * x ** i for i, c in enumerate(cs)])


def filtered(cs, x):
    return sum(math.sin(c * x) for c in cs if c > 0.0) + sum([c for c in cs if c <= 0.0], x)


def zipped(cs, x):
    pairs = [a * b * x for a, b in zip(cs, reversed(cs))]
    return sum(pairs) * pairs[0] + len(pairs) * x


def _norm(vs):
    return math.sqrt(sum([v * v for v in vs]))


def _scaled(vs, s):
    return [v * s for v in vs]


def in_helper(cs, x):
    return _norm(cs) * x + _norm([c - x for c in cs])


def in_loop(cs, x):
    s = 0.0
    for k in range(3):
        ys = [c * (x + k) for c in cs]
        s = s + sum(ys) * ys[-1]
    return s


def in_branch(cs, x):
    if x > 0.0:
        r = sum([math.exp(c * x) for c in cs])
    else:
        r = sum([c * c * x for c in cs])
    return r


def of_a_returned_list(cs, x):
    ys = _scaled(cs, x)
    return sum([y ** 3 for y in ys]) + ys[0]


def of_a_grown_list(cs, x):
    hs = []
    h = x
    for c in cs:
        h = math.tanh(h * c + 0.5)
        hs.append(h)
    return sum([h * h for h in hs]) + hs[-1] * x


def nested(cs, x):
    # a comprehension over a comprehension's list, and one inside a comprehension's item
    ys = [c * x for c in cs]
    return sum([y * sum([z for z in ys]) for y in ys])


# a closure capturing a list of any length

def make_loss(data):
    def loss(w, b):
        errs = [(w * d + b - 1.0) ** 2 for d in data]
        return sum(errs) / len(errs) + errs[0] * 0.1
    return loss


# NumPy: hs a list of arrays of any length

def np_sum_of_squares(hs, W):
    return sum([np.sum(np.tanh(W @ h) ** 2) for h in hs])


def np_stacked(hs, W):
    zs = [W @ h for h in hs]
    return np.sum(zs[0] * zs[-1]) + sum([np.dot(z, z) for z in zs])


def np_grown(W, x, n):
    h = x
    hs = [x * 1.0]
    for t in range(n):
        h = np.tanh(W @ h)
        hs.append(h)
    zs = [W @ g for g in hs]
    return sum([np.sum(z * z) for z in zs]) + np.sum(zs[-1])


def max_of(cs, x):
    # max/min of a generator over a list of any length: the position found when it runs
    return max(c * x for c in cs) + min(c * c for c in cs)


def filtered_display(x, y):
    # `if` over a list known while lowering: the loop, unrolled; the list grows in its branches
    return max(v * v for v in [x, y, x * y]) + min(v for v in [x, y] if v > 0.0)
